"""A report with mongod's log beside its samples: slow operations placed inside checkpoints are
found there, with exact figures, in every format; the log's open config feeds the settings."""

from __future__ import annotations

import datetime as dt
import json
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import mongod_line, run_cli
from ftdc_writer import SimServer, write_ftdc
from hypothesis import given, settings
from hypothesis import strategies as st

from ckptdiag.model.window import WHOLE
from ckptdiag.workflows.report import diagnose_window

T0 = 1_700_000_000.0
CHECKPOINTS = [(30.0, 32.0), (90.0, 93.0), (150.0, 152.0)]


def _iso(t: float) -> str:
    return dt.datetime.fromtimestamp(T0 + t, dt.timezone.utc).isoformat(timespec="milliseconds")


def _slow(t: float, ms: int, command: str, lock_ms: float) -> str:
    attr = {
        "type": "command",
        "ns": "shop.orders" if command != "find" else "shop.items",
        "command": {command: "orders", "documents": [{"email": "alice@example.com"}]},
        "durationMillis": ms,
        "locks": {"Global": {"timeAcquiringMicros": {"w": int(lock_ms * 1000)}}},
    }
    return mongod_line(_iso(t), "COMMAND", 51803, "conn9", "Slow query", attr)


@pytest.fixture(scope="module")
def pair(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    d = tmp_path_factory.mktemp("pair")
    ftdc = d / "metrics.2023-11-14T22-13-20Z-00000"
    server = SimServer(checkpoints=CHECKPOINTS, stall_ops=50.0, t0=T0)
    write_ftdc(ftdc, server, [float(i) for i in range(200)])
    opened = {
        "t": {"$date": _iso(-100)},
        "s": "I",
        "c": "STORAGE",
        "id": 22315,
        "ctx": "initandlisten",
        "msg": "Opening WiredTiger",
        "attr": {"config": "create,cache_size=1024M,eviction=(threads_min=4,threads_max=4),eviction_dirty_target=3"},
    }
    lines = [json.dumps(opened)]
    # 40 slow writes that end inside the checkpoints (held 400 ms on locks), 10 outside them (20 ms), 5 reads outside
    for s, e in CHECKPOINTS:
        for k in range(13 if s != 90 else 14):
            lines.append(_slow(s + 0.1 + k * (e - s - 0.2) / 14, 600, "insert", 400.0))
    for k in range(10):
        lines.append(_slow(5.0 + k * 2.0, 150, "update", 20.0))
    for k in range(5):
        lines.append(_slow(60.0 + k * 3.0, 120, "find", 0.0))
    lines.sort(key=lambda line: json.loads(line)["t"]["$date"])
    log = d / "mongod.log"
    log.write_text("\n".join(lines) + "\n")
    return ftdc, log


def test_slow_writes_inside_checkpoints_are_found_with_exact_figures(pair: tuple[Path, Path]) -> None:
    ftdc, log = pair
    report = diagnose_window((ftdc, log))
    assert report.log is not None and report.log.slow_ops == 55
    c = report.log.correlation
    assert c is not None
    assert (c.inside.count, c.outside.count, c.writes_inside, c.writes_total) == (40, 15, 40, 50)
    assert [n for n, _ in c.per_checkpoint] == [13, 14, 13]
    assert c.dominant_wait == "locks" and c.dominant_wait_median_ms == pytest.approx(400.0)
    windows = sum((e.end or 0) + 1.0 - e.start for e in report.dx.episodes)
    share = windows / (report.dx.end - report.dx.start)
    assert c.time_share == pytest.approx(share)
    expected = (
        f"80 % of slow writes (40 of 50) ran inside checkpoints, which took {100 * share:.0f} % of the time; "
        "their time went to waiting for locks (median 400 ms)"
    )
    assert c.finding == expected and report.dx.evidence[0] == expected
    assert c.inside.per_min is not None and c.outside.per_min is not None
    assert c.inside.per_min > 10 * c.outside.per_min
    assert c.inside.top_commands[0] == ("insert", 40) and c.outside.top_namespaces[0] == ("shop.orders", 10)


def test_the_logs_open_config_feeds_the_settings_with_its_source(pair: tuple[Path, Path]) -> None:
    ftdc, log = pair
    settings = diagnose_window((ftdc, log)).dx.settings
    assert settings.eviction.dirty_target.value == pytest.approx(3.0)
    assert settings.eviction.dirty_target.source.startswith("log, 2023-11-14T22:11:40")
    plain = diagnose_window((ftdc,)).dx.settings
    assert plain.eviction.dirty_target.value == pytest.approx(5.0)  # the version default without the log


def test_every_format_shows_the_log_and_no_value_from_it(pair: tuple[Path, Path], tmp_path: Path) -> None:
    ftdc, log = pair
    for fmt in ("json", "md", "table", "html"):
        proc = subprocess.run(
            [sys.executable, "-m", "ckptdiag", "report", str(ftdc), str(log.parent / "mongod.log"), "-f", fmt,
             "--fail-on", "never"],
            capture_output=True, text=True, timeout=120, check=False,
        )  # fmt: skip
        assert proc.returncode == 0, proc.stderr
        assert "alice" not in proc.stdout
        if fmt == "json":
            import jsonschema

            schema = json.loads((Path(__file__).parents[1] / "docs" / "report-schema.json").read_text())
            jsonschema.validate(json.loads(proc.stdout), schema)
            doc = json.loads(proc.stdout)["log"]
            assert doc["slow_ops"] == 55 and doc["slow_ops_vs_checkpoints"]["inside"]["count"] == 40
            assert doc["slow_ops_vs_checkpoints"]["finding"].startswith("80 % of slow writes (40 of 50)")
        else:
            assert "80 % of slow writes (40 of 50) ran inside checkpoints" in proc.stdout, fmt
            assert "inside checkpoints: 40 (" in proc.stdout and "outside: 15 (" in proc.stdout, fmt
        if fmt == "html":
            try:
                import matplotlib  # noqa: F401  (the html extra)
            except ImportError:
                continue
            assert "slow ops (ms)" in proc.stdout  # on the same timeline as the checkpoints


def _wt(t: float, text: str) -> str:
    message = {"category": "WT_VERB_CHECKPOINT_PROGRESS", "msg": text}  # 7.x+'s structured form
    return mongod_line(_iso(t), "WTCHKPT", 22430, "Checkpointer", "WiredTiger message", {"message": message})


def test_a_log_alone_gives_checkpoints_from_its_messages_as_weaker_evidence(tmp_path: Path) -> None:
    lines = []
    for k in range(10):  # a checkpoint a minute, the 4th runs 45 s (two progress messages)
        s = 60.0 * k
        lines.append(_wt(s, "saving checkpoint snapshot min: 1, snapshot max: 1 snapshot count: 0"))
        if k == 3:
            lines += [
                _wt(s + 20, "Checkpoint has been running for 20 seconds and wrote: 1000 pages (50 MB)"),
                _wt(s + 40, "Checkpoint has been running for 40 seconds and wrote: 2000 pages (100 MB)"),
            ]
            lines += [_slow(s + 1 + 0.1 * i, 3000, "update", 2500.0) for i in range(30)]  # a burst, inside it
    lines += [_slow(50.0 + 60 * k, 150, "update", 10.0) for k in range(10)]  # one a minute, outside them
    lines.sort(key=lambda line: json.loads(line)["t"]["$date"])
    log = tmp_path / "mongod.log"
    log.write_text("\n".join(lines) + "\n")
    proc = subprocess.run(
        [sys.executable, "-m", "ckptdiag", "report", str(log), "-f", "json", "--fail-on", "warn"],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert proc.returncode == 3, proc.stderr  # warn at most: the log alone cannot show a stall
    doc = json.loads(proc.stdout)
    assert doc["source"]["kind"] == "log" and doc["verdict"]["severity"] == "warn"
    assert doc["verdict"]["summary"].startswith("from mongod's log alone (weaker evidence than FTDC")
    episodes = doc["checkpoints"]["episodes"]
    assert len(episodes) == 10 and doc["checkpoints"]["period_s"] == pytest.approx(60.0)
    assert episodes[3]["duration_s"] == pytest.approx(40.0) and episodes[3]["slow_ops"] == 30
    assert [e["duration_s"] for i, e in enumerate(episodes) if i != 3] == [None] * 9
    assert [b["slow_ops"] for b in doc["slow_op_bursts"]] == [30]
    assert doc["slow_op_bursts"][0]["start"] == _iso(180.0)[:-6] + "Z"  # the 10 s bin it fell in
    long_one, slow_inside = doc["verdict"]["findings"]  # what made it warn; the evidence holds the rest
    assert long_one.startswith("1 of 10 checkpoints ran 5 s or more (the longest 40 s")
    assert slow_inside.startswith("75 % of slow writes (30 of 40) ran inside checkpoints")
    assert "waiting for locks (median 2.5 s)" in slow_inside
    assert doc["verdict"]["evidence"] == [
        "1 burst(s) of slow operations (5x the usual 10 s or more), 1 of them meeting a checkpoint"
    ]


def test_a_real_replica_set_log_alone(tmp_path: Path) -> None:
    from conftest import shared_path

    d = shared_path("logs", "public", "mew-sathita+Assignment2_ReplSet")
    proc = subprocess.run(
        [sys.executable, "-m", "ckptdiag", "report", str(d), "-f", "json", "--fail-on", "never"],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    assert doc["checkpoints"]["count"] == 439 and doc["log"]["slow_ops"] == 11
    assert doc["log"]["checkpoint_messages"] == {"saving": 439}


def test_a_damaged_log_beside_ftdc_is_a_note_and_the_report_goes_on(pair: tuple[Path, Path], tmp_path: Path) -> None:
    import gzip

    ftdc, log = pair
    cut = tmp_path / "mongod.log.gz"
    blob = gzip.compress(log.read_bytes() + b"\x00\x01 binary\n" * 3)
    cut.write_bytes(blob[: int(len(blob) * 0.9)])
    proc = subprocess.run(
        [sys.executable, "-m", "ckptdiag", "report", str(ftdc), str(cut), "-f", "json", "--fail-on", "never"],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    assert doc["checkpoints"]["count"] == 3 and doc["log"]["slow_ops"] > 0
    assert any("read up to there" in d for d in doc["log"]["damaged"])
    assert "ckptdiag: note: log: " in proc.stderr and "read up to there" in proc.stderr


def test_startup_options_from_the_log_stand_in_for_getcmdlineopts(tmp_path: Path) -> None:
    from synth import Server, write_recording

    recording = write_recording(Server(seconds=120).frame(), tmp_path / "r.jsonl")  # its header has no cmdline
    options = {"storage": {"syncPeriodSecs": 30, "dbPath": "/data"}}
    log = tmp_path / "mongod.log"
    log.write_text(
        mongod_line(_iso(-3600), "CONTROL", 21951, "initandlisten", "Options set by command line", {"options": options})
        + "\n"
    )
    interval = diagnose_window((recording, log)).dx.settings.interval
    assert interval.value == 30 and interval.source.startswith("log options, ") and "syncPeriodSecs" in interval.source


def test_without_checkpoint_messages_bursts_of_slow_operations_stand_in_and_say_so(tmp_path: Path) -> None:
    from ckptdiag.workflows.logs import log_only_report

    lines = [_slow(60.0 * k + 0.1 * i, 900, "insert", 700.0) for k in range(8) for i in range(20)]  # 20 in 2 s a minute
    lines += [_slow(30.0 + 60.0 * k, 120, "find", 0.0) for k in range(8)]
    lines.sort(key=lambda line: json.loads(line)["t"]["$date"])
    log = tmp_path / "mongod.log"
    log.write_text("\n".join(lines) + "\n")
    report = log_only_report((log,), WHOLE)
    dx = report.dx
    assert [e.evidence for e in dx.episodes] == ["slow-op-burst"] * 8
    assert dx.period_s == pytest.approx(60.0) and dx.severity == "ok"  # a guess is never a warning
    assert "slow-operation bursts (no checkpoint message in the log)" in dx.summary
    assert any("stand in for checkpoints" in e for e in dx.evidence)
    # every format draws them, each with its own slow operations (it failed: one count per
    # checkpoint message was read for each burst)
    from ckptdiag.report.formats import render

    doc = json.loads(render(report, "json"))
    assert [e["slow_ops"] for e in doc["checkpoints"]["episodes"]] == [20] * 8
    for fmt in ("md", "html", "table"):
        assert "slow-operation bursts" in render(report, fmt)


def test_placing_slow_operations_by_binary_search_matches_window_by_window() -> None:
    import numpy as np

    from ckptdiag.analysis.slowops import _window_of

    rng = np.random.default_rng(1)
    for _ in range(500):
        starts = np.sort(rng.uniform(0, 100, int(rng.integers(0, 8))))
        windows = [(float(s), float(s + rng.choice([0.0, rng.uniform(0, 30), rng.uniform(0, 3)]))) for s in starts]
        end = rng.uniform(0, 120, 50)
        begin = end - rng.choice([0, 1, 5, 20], 50) * rng.random(50)
        expected = np.full(50, -1)
        for i, (lo, hi) in enumerate(windows):  # the definition: the first window each one meets
            expected[(expected < 0) & (end >= lo) & (begin <= hi)] = i
        assert np.array_equal(_window_of(begin, end, windows), expected)


PLANTED = ("4111111111111111", "alice.planted@example.com", "tok_9f8e7d6c5b4a")


def _planted_json(t: float, where: str) -> str:
    """A slow operation with the planted values in field ``where`` (and in its command's values)."""
    value = " ".join(PLANTED)
    attr: dict[str, object] = {
        "type": "command",
        "ns": "shop.orders",
        "command": {"insert": "orders", "documents": [{"card": PLANTED[0], "note": f"command: {PLANTED[0]}"}]},
        "planSummary": "IXSCAN { card: 1 }",
        "durationMillis": 150,
    }
    if where == "command-name":
        attr["command"] = {value: 1}
    elif where == "ns":
        attr["ns"] = f"shop.{value}"
    elif where == "plan":
        attr["planSummary"] = f'IXSCAN {{ card: "{value}" }}'
    elif where == "type":
        attr["type"] = value
    else:
        attr[where] = value
    return mongod_line(_iso(t), "COMMAND", 51803, "conn9", "Slow query", attr)


def _planted_legacy(t: float, where: str) -> str:
    stamp = dt.datetime.fromtimestamp(T0 + t, dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.000+0000")
    card, email, token = PLANTED
    bodies = {
        "filter": f'command shop.orders command: find {{ find: "orders", filter: {{ note: "card command: {card} '
        f'planSummary: COLLSCAN {{ {email}: 1 }}", t: "{token}" }} }} planSummary: IXSCAN {{ a: 1 }} 150ms',
        "remove": f'remove shop.orders command: {{ q: {{ note: "card command: {card}", e: "{email}" }}, '
        f'limit: 0 }} planSummary: COLLSCAN keysExamined:0 t: "{token}" 150ms',
        "update": f'update shop.orders query: {{ card: {card} }} update: {{ $set: {{ e: "{email}", '
        f'command: "{token}" }} }} planSummary: IXSCAN {{ card: 1 }} 150ms',
        "unclosed": f'command shop.orders command: insert {{ insert: "orders", documents: [ {{ card: {card}, '
        f'e: "{email}", t: "{token}" 150ms',
    }
    return f"{stamp} I COMMAND  [conn1] {bodies[where]}\n"


def test_planted_values_in_every_field_of_either_format_never_reach_a_report(tmp_path: Path) -> None:
    """Card numbers, emails and tokens in every field of JSON and legacy slow-operation lines:
    only shapes leave a line, so no report format holds any of them."""
    json_fields = ("command-name", "ns", "plan", "type", "appName", "client", "comment", "errMsg")
    json_log = tmp_path / "json" / "mongod.log"
    json_log.parent.mkdir()
    json_log.write_text("".join(_planted_json(10.0 + i, f) + "\n" for i, f in enumerate(json_fields * 3)))
    legacy_log = tmp_path / "legacy" / "mongod.log"
    legacy_log.parent.mkdir()
    legacy_log.write_text(
        "".join(_planted_legacy(10.0 + i, w) for i, w in enumerate(("filter", "remove", "update", "unclosed") * 5))
    )
    for log in (json_log, legacy_log):
        for fmt in ("json", "md", "html", "table"):
            proc = run_cli("report", str(log), "-f", fmt, "--fail-on", "never")
            assert proc.returncode == 0, proc.stderr
            for value in (*PLANTED, "card command"):
                assert value not in proc.stdout + proc.stderr, (log.parent.name, fmt, value)
    # the legacy shapes kept are the operation's own: a find, a remove, an update, an insert
    from ckptdiag.sources.logevents import extract
    from ckptdiag.sources.mongodlog import parse_line

    events = extract([parse_line(line.encode()) for line in legacy_log.read_text().splitlines(keepends=True)])  # type: ignore[misc]
    ops = events.slow_ops
    assert {ops[i].command for i in range(len(ops))} == {"find", "remove", "update", "insert"}
    assert {ops[i].plan for i in range(len(ops))} <= {"IXSCAN { a: 1 }", "COLLSCAN", "IXSCAN { card: 1 }", None}


def test_a_line_stamped_1970_is_a_note_not_decades_of_bins(tmp_path: Path) -> None:
    """A start-up line stamped before the clock was set (1970), and lines stamped in year 1 and
    9999: the window is the other lines', and memory is the lines', not the span's."""
    lines = [
        mongod_line("1970-01-01T00:00:05.000+00:00", "CONTROL", 4615611, "initandlisten", "MongoDB starting", {}),
        *(_slow(10.0 + 7 * i, 150, "insert", 1.0) for i in range(40)),
        mongod_line("9999-12-31T00:00:00.000+00:00", "CONTROL", 4615611, "initandlisten", "MongoDB starting", {}),
    ]
    log = tmp_path / "mongod.log"
    log.write_text("\n".join(lines) + "\n")
    proc = subprocess.run(
        [sys.executable, "-c", _PEAK, "report", str(log), "-f", "json", "--fail-on", "never"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    assert doc["window"]["start"].startswith(_iso(10.0)[:10]) and doc["window"]["end"].startswith(_iso(10.0)[:4])
    assert "2 lines stamped outside 2009 to a year from now (1970-01-01)" in proc.stderr
    peak_mb = int(proc.stderr.rsplit("peak_kb=", 1)[1]) / 1024
    assert peak_mb < 400, peak_mb  # the 56 years of 10 s bins alone would be 1.4 GB


# ckptdiag in this process, then its peak RSS on stderr: VmHWM, this program's own (getrusage's
# maxrss keeps the forking test runner's across exec: ~700 MB in a full run)
_PEAK = (
    "import re, sys\n"
    "from ckptdiag.cli import main\n"
    "try:\n    main(sys.argv[1:])\n"
    "finally:\n"
    "    hwm = re.search(r'VmHWM:\\s+(\\d+)', open('/proc/self/status').read()).group(1)\n"
    "    sys.stderr.write(f'peak_kb={hwm}')\n"
)


def test_json_log_dates_as_numberlong_and_a_first_line_past_the_peek_are_read(tmp_path: Path) -> None:
    lines = []
    for i in range(30):
        line = json.loads(_slow(10.0 + 5 * i, 150, "insert", 1.0))
        line["t"] = {"$date": {"$numberLong": str(int((T0 + 10.0 + 5 * i) * 1000))}}
        lines.append(json.dumps(line))
    first = json.loads(_slow(5.0, 150, "insert", 1.0))
    first["attr"]["pad"] = "x" * (2 << 20)  # longer than the first MiB read to tell a log
    log = tmp_path / "mongod.log"
    log.write_text("\n".join([json.dumps(first), *lines]) + "\n")
    proc = run_cli("report", str(log), "-f", "json", "--fail-on", "never")
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["log"]["slow_ops"] == 31


@settings(max_examples=200, deadline=None, database=None)
@given(
    times=st.lists(st.floats(0, 5_000, allow_nan=False), min_size=1, max_size=300),
    burst=st.lists(st.floats(0, 20, allow_nan=False), max_size=80),
    at=st.floats(0, 5_000),
    pad=st.tuples(st.floats(0, 100), st.floats(0, 100)),
)
def test_sparse_bins_find_the_bursts_dense_bins_find(
    times: list[float], burst: list[float], at: float, pad: tuple[float, float]
) -> None:
    """Property: bursts from the bins that hold an operation equal those of every bin of the window."""
    import numpy as np

    from ckptdiag.analysis.logonly import BURST_BIN_S, BURST_FACTOR, BURST_MIN_OPS, slow_bursts

    class Ops:
        def __init__(self, t: np.ndarray) -> None:
            self.t = t

        def __len__(self) -> int:
            return int(self.t.size)

    t = np.sort(np.array(times + [at + b for b in burst]))
    start, end = float(t.min()) - pad[0], float(t.max()) + pad[1]
    if end <= start:  # one instant: no window, no burst
        assert slow_bursts(Ops(t), start, end) == ()  # type: ignore[arg-type]
        return
    edges = np.arange(start, end + BURST_BIN_S, BURST_BIN_S)
    sparse = slow_bursts(Ops(t), start, end)  # type: ignore[arg-type]
    if edges.size < 2:  # a window shorter than float steps: every bin of it is none (numpy's median warns)
        return
    counts, _ = np.histogram(t, bins=edges)
    usual = float(np.median(counts))
    hot = (counts >= BURST_MIN_OPS) & (counts >= BURST_FACTOR * max(usual, 1.0))
    dense: list[tuple[float, float, int]] = []
    for i in np.flatnonzero(hot).tolist():
        if dense and dense[-1][1] == float(edges[i]):
            dense[-1] = (dense[-1][0], float(edges[i + 1]), dense[-1][2] + int(counts[i]))
        else:
            dense.append((float(edges[i]), float(edges[i + 1]), int(counts[i])))

    assert [n for *_, n in sparse] == [n for *_, n in dense]
    assert np.allclose([b[:2] for b in sparse], [b[:2] for b in dense]) if dense else not sparse


def test_a_checkpoint_logged_at_the_windows_first_line_is_the_windows(tmp_path: Path) -> None:
    """'Checkpoint took 10 seconds' as the log's first line began before it: still one of the
    window's checkpoints, and the report never says the log has none beside counting it."""
    stamp = "2019-06-18T11:58:58.391+0100"
    legacy = [f"{stamp} I STORAGE  [WTCheckpointThread] Checkpoint took {n} seconds to complete" for n in (10, 7)]
    legacy += [
        f'2019-06-18T12:0{m}:{s:02d}.000+0100 I COMMAND  [conn1] command a.b command: insert {{ insert: "b" }} 150ms'
        for m in range(3)
        for s in range(0, 60, 20)
    ]
    log = tmp_path / "mongod.log"
    log.write_text("\n".join(legacy) + "\n")
    proc = run_cli("report", str(log), "-f", "md", "--fail-on", "never")
    assert proc.returncode == 0, proc.stderr
    assert "2 checkpoints" in proc.stdout and "no checkpoint message" not in proc.stdout
    assert "| 10 s |" in proc.stdout


def test_a_log_alones_long_checkpoints_are_never_ok(tmp_path: Path) -> None:
    """'Checkpoint took 10 seconds' (3.x-4.2): the log cannot weigh a long checkpoint's cost, so
    it is a finding and the verdict warns (exit 3 with --fail-on warn); the summary names the
    longest, and the same wording runs through the findings and the log's section (#28)."""
    lines = [
        f"2019-06-18T12:0{i}:30.000+0100 I STORAGE  [WTCheckpointThread] Checkpoint took {n} seconds to complete"
        for i, n in enumerate((10, 7, 3, 12))
    ]
    lines += [
        f'2019-06-18T12:0{m}:{s:02d}.000+0100 I COMMAND  [conn1] command a.b command: insert {{ insert: "b" }} 150ms'
        for m in range(4)
        for s in range(0, 60, 20)
    ]
    log = tmp_path / "mongod.log"
    log.write_text("\n".join(sorted(lines)) + "\n")
    proc = run_cli("report", str(log), "-f", "json", "--fail-on", "warn")
    assert proc.returncode == 3, proc.stderr
    verdict = json.loads(proc.stdout)["verdict"]
    assert verdict["severity"] == "warn" and verdict["summary"].endswith("4 checkpoints, one every 63 s; "
        "12 slow operations, 2 inside checkpoints; the longest checkpoint 12 s")  # fmt: skip
    assert verdict["findings"] == [
        "3 of 4 checkpoints ran 5 s or more (the longest 12 s, from 11:03:18 UTC): the log cannot say what "
        "they cost; the server's FTDC (diagnostic.data) or a recording measures it"
    ]
    short = log.read_text().replace("took 10", "took 2").replace("took 7", "took 1").replace("took 12", "took 4")
    log.write_text(short)
    proc = run_cli("report", str(log), "-f", "json", "--fail-on", "warn")
    assert proc.returncode == 0 and json.loads(proc.stdout)["verdict"]["findings"] == []
