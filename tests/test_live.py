"""The live status line shown while recording on a terminal."""

from __future__ import annotations

import io

from fakes import status_doc
from rich.console import Console

from ckptdiag.analysis.instant import instant
from ckptdiag.model.disk import DiskCounters
from ckptdiag.recording import build_sample
from ckptdiag.report.live import LiveStatus


def _samples() -> tuple[dict, dict]:
    a = build_sample(
        status_doc(0),
        seq=0,
        wall=1.0,
        mono=10.0,
        rtt_ms=1.0,
        disks={"vda": (DiskCounters(wr_ios=0, wr_sectors=0, tot_ticks=0), 17)},
    )
    b = build_sample(
        status_doc(1),
        seq=1,
        wall=2.0,
        mono=11.0,
        rtt_ms=1.0,
        disks={"vda": (DiskCounters(wr_ios=100, wr_sectors=20480, tot_ticks=250), 17)},
    )
    return a, b


def test_instant_figures_between_two_samples() -> None:
    a, b = _samples()
    f = instant(a, b)
    assert f.checkpoint_running is True  # status_doc(1) has the running flag set
    assert f.dirty_pct == 100 * (1 << 20) / (1 << 30)
    assert f.ops_s == 110.0  # 100 inserts + 10 queries in one second
    assert f.disk_write_mb_s == 10.0 and f.disk_util_pct == 25.0
    assert instant(None, a).ops_s is None


def test_live_status_renders_the_figures_and_events() -> None:
    out = io.StringIO()
    console = Console(file=out, width=160, force_terminal=False, color_system=None)
    a, b = _samples()
    with LiveStatus(console, "mongodb://h", "x.jsonl.gz") as live:
        live.on_sample(a)
        live.on_event({"kind": "gap", "time": "2026-11-22T14:00:00.000Z", "reason": "connection closed"})
        live.on_sample(b)
    text = out.getvalue()
    assert "RUNNING" in text and "0.1" in text and "10.0" in text and "110" in text
    assert "gap connection closed" in text


def test_the_live_line_counts_checkpoints_and_shows_the_intervals_write_p99() -> None:
    a, b = _samples()
    a = {**a, "hist": {"writes": [[256, 100], [1024, 0]]}, "m": {**a["m"], "ckpt.count": 7}}
    # this interval: 98 writes under 0.5 ms, 2 of 1-2 ms: p99 in the 1,024 us bucket
    b = {**b, "hist": {"writes": [[256, 198], [1024, 2]]}, "m": {**b["m"], "ckpt.count": 9}}
    f = instant(a, b)
    assert f.write_p99_ms == 1.024 and f.checkpoints == 9
    assert instant(a, {**b, "hist": a["hist"]}).write_p99_ms is None  # no writes in the interval
    out = io.StringIO()
    console = Console(file=out, width=160, force_terminal=False, color_system=None)
    with LiveStatus(console, "lab:stall", "x.jsonl.gz") as live:
        live.on_sample(a)
        live.on_sample(b)
    row = next(line for line in out.getvalue().splitlines()[::-1] if "RUNNING" in line)
    assert row.split("│")[3].strip() == "2"  # checkpoints begun since the recording started
    assert "1.0" in row.split("│")[8]


def test_the_cluster_table_has_a_row_per_member_with_its_role_and_lag() -> None:
    from ckptdiag.report.live import ClusterStatus

    out = io.StringIO()
    console = Console(file=out, width=160, force_terminal=False, color_system=None)
    a, b = _samples()
    lagging = {**b, "m": {**b["m"], "repl.lag_ms": 7000}}
    with ClusterStatus(console, "mongodb://db1,db2/?replicaSet=rs0", "rs0/") as live:
        live.on_event("db1:27017", {"kind": "role", "role": "primary"})
        live.on_event("db2:27017", {"kind": "role", "role": "secondary"})
        for member, second in (("db1:27017", b), ("db2:27017", lagging)):
            live.on_sample(member, a)
            live.on_sample(member, second)
        live.note("db2:27017 is now primary (was secondary)")
    text = out.getvalue()
    rows = {line.split("│")[1].strip(): line for line in text.splitlines() if "db" in line and "│" in line}
    assert "primary" in rows["db1:27017"] and "RUNNING" in rows["db1:27017"] and "110" in rows["db1:27017"]
    assert "secondary" in rows["db2:27017"] and rows["db2:27017"].rstrip(" │").endswith("7")
    assert "db2:27017 is now primary (was secondary)" in text


def test_the_status_shows_progress_against_the_duration_and_why_a_column_is_empty() -> None:
    """#32: elapsed of -d with the time left; and every '-' says why (w p99 stayed '-' with
    --source diagnostic and no reason)."""
    a, b = _samples()
    out = io.StringIO()
    console = Console(file=out, width=160, force_terminal=False, color_system=None)
    with LiveStatus(console, "mongodb://h", "x.jsonl.gz", duration=120, source="diagnostic") as live:
        live.on_sample(a)
        live.on_sample(b)
    text = out.getvalue()
    last = " ".join(text[text.rindex("ckptdiag record") :].split())  # the caption wraps at the table width
    assert "1/120s" in last and "119 s left; Ctrl-C stops" in last
    assert "- w p99: no latency histograms in getDiagnosticData's serverStatus (--source serverStatus has them)" in last
    assert "rates" not in last  # said only while a single sample is in


def test_unknown_reasons_name_each_empty_column() -> None:
    from ckptdiag.report.live import unknown_reasons

    a, b = _samples()
    assert unknown_reasons(None, a, instant(None, a), "serverStatus") == [
        "rates (ops/s, wMB/s, util%, w p99, app-ev/s) from the second sample"
    ]
    remote = {**b, "disk": {}}
    reasons = unknown_reasons(a, remote, instant(a, remote), "serverStatus")
    assert any(r.startswith("wMB/s, util%: no data disk sampled") for r in reasons)
    with_hist = {**b, "hist": {"writes": [[256, 0]]}}
    first = {**a, "hist": {"writes": [[256, 0]]}}
    assert "w p99: no writes in the interval" in unknown_reasons(first, with_hist, instant(first, with_hist), "x")
    full = {**b, "hist": {"writes": [[256, 10]]}}
    assert not [r for r in unknown_reasons(first, full, instant(first, full), "x") if r.startswith(("w p99", "wMB"))]


def test_rows_scroll_a_line_per_sample_with_the_header_again_every_20() -> None:
    from ckptdiag.report.live import RowsStatus

    a, b = _samples()
    out = io.StringIO()
    console = Console(file=out, width=160, force_terminal=False, color_system=None)
    rows = RowsStatus(console, duration=60)
    samples = [a] + [{**b, "mono": 10.0 + k, "seq": k} for k in range(1, 25)]
    with rows:
        for i, s in enumerate(samples):
            rows.on_sample(s)
            if i == 3:
                rows.on_event({"kind": "gap", "time": "2026-11-22T14:00:00.000Z", "reason": "connection closed"})
    lines = out.getvalue().splitlines()
    headers = [i for i, line in enumerate(lines) if line.split()[:2] == ["elapsed", "ckpt"]]
    assert len(headers) == 2  # 25 samples: the header at the first and the 21st
    data = [line for line in lines if line.split()[0].endswith("/60s")]
    assert len(data) == 25 and data[0].split()[0] == "0/60s" and data[-1].split()[0] == "24/60s"
    assert "RUN" in data[1] and "110" in data[1]
    assert "2026-11-22T14:00:00.000Z gap connection closed" in lines
    # the reason for the first sample's '-' is said once, before it, not on every line
    assert sum("from the second sample" in line for line in lines) == 1
