"""`ckptdiag report` over FTDC and recordings, and the window summary behind it."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from conftest import shared_path
from fakes import status_doc

from ckptdiag.recording import RecordingWriter, build_sample, header
from ckptdiag.report.document import iso

F42 = "mongodb-4.2.12__b1ron__metrics.2021-03-15T02-21-47Z-00000"


def ckptdiag(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "ckptdiag", *args], capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL
    )


def test_report_on_the_checkpoint_rich_ftdc_file_as_json() -> None:
    proc = ckptdiag("report", str(shared_path("ftdc", F42)), "-f", "json")
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    assert doc["schema_version"] == 3 and doc["server"]["version"] == "4.2.12"
    assert doc["tool"]["name"] == "ckptdiag" and doc["server"]["cores"] and doc["server"]["ram_bytes"]
    assert doc["window"]["samples"] == 849 and doc["window"]["start"] == "2021-03-15T02:21:48.000Z"
    ckpt = doc["checkpoints"]
    assert ckpt["count"] == 13 and len(ckpt["episodes"]) == 13
    assert [e["duration_s"] for e in ckpt["episodes"]][-5:] == [2.079, 1.592, 2.529, 2.442, 1.783]
    assert 59 <= ckpt["period_s"] <= 63 and ckpt["duration_s"]["max"] == 2.529 and ckpt["disk"] == "nvme1n1"
    assert max(e["disk"]["util_pct_peak"] for e in ckpt["episodes"]) == 100.0
    assert doc["verdict"]["severity"] == "ok"  # 2 of 13 cost throughput, none stalled: documented
    assert doc["verdict"]["summary"].startswith("every 60 s a ")
    assert doc["recommendations"] == [] and "eviction" in doc


def test_report_window_and_table(tmp_path: Path) -> None:
    path = str(shared_path("ftdc", F42))
    proc = ckptdiag("report", path, "--since", "2021-03-15T02:30:00Z", "--until", "2021-03-15T02:34:00Z", "-f", "json")
    doc = json.loads(proc.stdout)
    assert doc["window"]["samples"] == 241 and doc["checkpoints"]["count"] == 4
    out = tmp_path / "r.txt"
    proc = ckptdiag("report", path, "-f", "table", "-o", str(out))
    assert proc.returncode == 0 and "checkpoints: 13" in out.read_text()


def test_report_on_a_recording(tmp_path: Path) -> None:
    rec = tmp_path / "r.jsonl"
    w = RecordingWriter(rec)
    w.write(
        header(
            source={"kind": "serverStatus"},
            server={"version": "7.0.21", "host": "h"},
            options={},
            disks={},
            created=0.0,
        ),
        0.0,
    )
    for i in range(130):
        w.write(build_sample(status_doc(i), seq=i, wall=1_700_000_000.0 + i, mono=float(i), rtt_ms=1.0), float(i))
    w.close()
    proc = ckptdiag("report", str(rec))  # not a terminal: JSON
    doc = json.loads(proc.stdout)
    assert doc["window"]["samples"] == 130 and doc["source"]["kind"] == "recording"
    ckpt = doc["checkpoints"]  # generation moves every 60 s, the flag is up for 2 samples
    # the first was already running when the recording began: kept, marked truncated
    assert ckpt["count"] == 3 and ckpt["period_s"] == 60.0
    assert [e["truncated"] for e in ckpt["episodes"]] == [True, False, False]
    t0 = 1_700_000_000
    assert [e["start"] for e in ckpt["episodes"][1:]] == [iso(t0 + 59.5), iso(t0 + 119.5)]


def test_two_recordings_are_joined_without_a_rate_across_the_seam(tmp_path: Path) -> None:
    paths = []
    for k, t0 in enumerate((1_700_000_000.0, 1_700_090_000.0)):  # 25 hours apart
        rec = tmp_path / f"r{k}.jsonl"
        w = RecordingWriter(rec)
        w.write(
            header(source={"kind": "serverStatus"}, server={"version": "7.0.21"}, options={}, disks={}, created=t0), 0.0
        )
        for i in range(30):  # status_doc's generation stays 0 below 60: no checkpoint inside either
            doc = status_doc(i + 90 * k)  # ...but it is 1 in the second: a seam delta would fake one
            w.write(build_sample(doc, seq=i, wall=t0 + i, mono=float(i), rtt_ms=1.0), float(i))
        w.close()
        paths.append(str(rec))
    doc = json.loads(ckptdiag("report", *reversed(paths)).stdout)
    assert doc["window"]["samples"] == 60 and doc["window"]["gaps"] == 1
    # only the checkpoint already running when the first recording began (its flag is up at
    # samples 0-1); nothing at the seam
    episodes = doc["checkpoints"]["episodes"]
    assert [(e["truncated"], e["start"]) for e in episodes] == [(True, iso(1_700_000_000))]


def test_report_errors_are_one_line_with_codes(tmp_path: Path) -> None:
    proc = ckptdiag("report", str(tmp_path / "missing"))
    assert proc.returncode == 1 and proc.stderr.startswith("ckptdiag: error: ") and "does not exist" in proc.stderr
    junk = tmp_path / "junk"
    junk.write_text("hello, not FTDC and not a recording, long enough to be judged as such\n" * 3)
    proc = ckptdiag("report", str(junk))
    assert proc.returncode == 1 and "not an FTDC file" in proc.stderr
    proc = ckptdiag("report", str(junk), "--since", "yesterday")
    assert proc.returncode == 2 and "is not a time" in proc.stderr


def test_formats_follow_the_output_extension_and_exit_codes_follow_the_verdict(tmp_path: Path) -> None:
    from synth import Server, write_recording

    # a recording of a server whose every checkpoint stalls: critical
    rec = write_recording(Server(seconds=300).frame(), tmp_path / "stall.jsonl")
    for name, marker in (
        ("r.json", '"schema_version": 3'),
        ("r.md", "# ckptdiag: CRITICAL"),
        ("r.html", "<!doctype html>"),
    ):
        out = tmp_path / name
        proc = ckptdiag("report", str(rec), "-o", str(out))
        assert proc.returncode == 4, proc.stderr  # critical fails by default
        assert marker in out.read_text()
    html_text = (tmp_path / "r.html").read_text()
    try:
        import matplotlib  # noqa: F401  (the html extra)

        assert "<svg" in html_text and "pip install" not in html_text  # the charts
    except ImportError:
        assert "<svg" not in html_text and "pip install 'ckptdiag[html]'" in html_text  # how to get them
    assert ckptdiag("report", str(rec), "--fail-on", "never", "-f", "md").returncode == 0
    assert ckptdiag("report", str(rec), "--fail-on", "warn", "-f", "json").returncode == 4
    doc = json.loads(ckptdiag("report", str(rec), "--fail-on", "never").stdout)
    assert doc["verdict"]["severity"] == "critical" and doc["checkpoints"]["stalls"] == 5
    ep = doc["checkpoints"]["episodes"][0]
    assert ep["stall"] and ep["ops_ratio"] < 0.6 and ep["disk"]["device"] == "vda" and ep["end"].endswith("Z")
    # the report never replaces its own input
    proc = ckptdiag("report", str(rec), "-o", str(rec))
    assert proc.returncode == 1 and "is one of the inputs" in proc.stderr
    assert rec.read_text().startswith('{"type": "header"') or rec.read_text().startswith('{"type":"header"')


def test_healthy_idle_server_exits_0_even_with_fail_on_warn() -> None:
    proc = ckptdiag(
        "report",
        str(shared_path("ftdc", "mongodb-7.0.0-rc6__b1ron__metrics.2024-04-16T11-34-42Z-00000")),
        "--fail-on",
        "warn",
        "-f",
        "json",
    )
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["verdict"]["severity"] == "ok"


def test_relative_and_day_times_and_an_empty_window_names_the_inputs_times(tmp_path: Path) -> None:
    """--since -2h and --since 2023-11-14 are times too; a window with no sample says when the
    inputs' samples are (FTDC and recordings alike), so the DBA can give one that has them."""
    import sys

    sys.path.insert(0, str(Path(__file__).parent))
    from ftdc_writer import SimServer, write_ftdc
    from synth import Server, write_recording

    from ckptdiag.cli.options import parse_time

    assert parse_time("-2h", now=1_700_000_000.0) == (1_700_000_000 - 7200) * 1000
    assert parse_time("2023-11-14") == 1_699_920_000_000
    ftdc = tmp_path / "metrics.2023-11-14T22-13-20Z-00000"
    write_ftdc(ftdc, SimServer([(30, 32)]), [float(i) for i in range(100)])
    proc = ckptdiag("report", str(ftdc), "--since", "-2h")  # the file is from 2023: nothing in the last 2 h
    assert proc.returncode == 1
    assert "the files hold 2023-11-14T22:13:20Z to 2023-11-14T22:14:59Z" in proc.stderr
    proc = ckptdiag("report", str(ftdc), "--since", "2023-11-14", "--until", "now", "-f", "json")
    assert proc.returncode == 0 and json.loads(proc.stdout)["window"]["samples"] == 100
    rec = write_recording(Server(seconds=120).frame(), tmp_path / "r.jsonl")
    proc = ckptdiag("report", str(rec), "--until", "2001-01-01")
    assert proc.returncode == 1 and "the recordings hold " in proc.stderr
