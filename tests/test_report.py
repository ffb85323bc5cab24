"""`ckptdiag report` over FTDC and recordings, and the window summary behind it."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
from conftest import shared_path
from fakes import status_doc

from ckptdiag.analysis.summary import counter_delta, summarize
from ckptdiag.recording import RecordingWriter, build_sample, header

F42 = "mongodb-4.2.12__b1ron__metrics.2021-03-15T02-21-47Z-00000"


def ckptdiag(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "ckptdiag", *args], capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL
    )


def test_counter_deltas_never_cross_gaps_restarts_or_decreases() -> None:
    frame = pd.DataFrame(
        {
            "t": [0.0, 1, 2, 3, 4, 5],
            "c": [10, 20, 5, 15, 25, 30],
            "segment": [0, 0, 1, 1, 1, 1],
            "gap_before": [False, False, False, False, True, False],
        }
    )
    got = counter_delta(frame, "c").tolist()
    assert np.isnan(got[0]) and got[1] == 10 and np.isnan(got[2]) and got[3] == 10
    assert np.isnan(got[4]) and got[5] == 5


def test_write_await_reads_tick_counters_across_their_32_bit_wrap() -> None:
    # the same figure disk_rates gives: 400 ms of write ticks over 100 writes
    frame = pd.DataFrame(
        {
            "t": [0.0, 1.0],
            "segment": [0, 0],
            "gap_before": [False, False],
            "disk.vda.wr_ios": [1000, 1100],
            "disk.vda.wr_ticks": [2**32 - 100, 300],
        },
        index=pd.to_datetime([0, 1], unit="s", utc=True),
    )
    assert summarize(frame).disks["vda"].w_await_ms_peak == 4.0


def test_report_on_the_checkpoint_rich_ftdc_file_as_json() -> None:
    proc = ckptdiag("report", str(shared_path("ftdc", F42)), "-f", "json")
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    assert doc["schema_version"] == 1 and doc["server"]["version"] == "4.2.12"
    assert doc["samples"] == 849 and doc["start"] == "2021-03-15T02:21:48.000Z"
    assert len(doc["checkpoints"]) == 13
    assert [c["duration_ms"] for c in doc["checkpoints"]][-4:] == [2079, 1592, 2529, 2442]
    assert 59 <= doc["checkpoint_interval_s"] <= 63 and doc["checkpoint_duration_ms_max"] == 2529
    assert doc["disks"]["nvme1n1"]["util_pct_peak"] == 100.0


def test_report_window_and_table(tmp_path: Path) -> None:
    path = str(shared_path("ftdc", F42))
    proc = ckptdiag("report", path, "--since", "2021-03-15T02:30:00Z", "--until", "2021-03-15T02:34:00Z", "-f", "json")
    doc = json.loads(proc.stdout)
    assert doc["samples"] == 241 and len(doc["checkpoints"]) == 4
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
    assert doc["samples"] == 130 and doc["source"]["kind"] == "recording"
    assert len(doc["checkpoints"]) == 2 and doc["checkpoint_interval_s"] == 60.0  # generation moves every 60 s


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
    assert doc["samples"] == 60 and doc["gaps"] == 1 and doc["checkpoints"] == []


def test_report_errors_are_one_line_with_codes(tmp_path: Path) -> None:
    proc = ckptdiag("report", str(tmp_path / "missing"))
    assert proc.returncode == 1 and proc.stderr.startswith("ckptdiag: error: ") and "does not exist" in proc.stderr
    junk = tmp_path / "junk"
    junk.write_text("hello, not FTDC and not a recording, long enough to be judged as such\n" * 3)
    proc = ckptdiag("report", str(junk))
    assert proc.returncode == 1 and "not an FTDC file" in proc.stderr
    proc = ckptdiag("report", str(junk), "--since", "yesterday")
    assert proc.returncode == 2 and "is not a time" in proc.stderr


def test_summary_of_a_frame_without_checkpoint_counters() -> None:
    frame = pd.DataFrame(
        {"t": [0.0, 1.0], "segment": [0, 0], "gap_before": [False, False]},
        index=pd.to_datetime([0, 1], unit="s", utc=True),
    )
    s = summarize(frame)
    assert s.samples == 2 and s.checkpoints == [] and s.disks == {}


def test_summary_in_pieces_equals_the_summary_in_one_go() -> None:
    from ckptdiag.analysis.summary import summarize_pieces
    from ckptdiag.sources.ftdc import iter_ftdc, mark_continuity, read_ftdc

    path = shared_path("ftdc", F42)
    whole = summarize(read_ftdc([path]).frame).to_json()
    for rows in (50, 299, 301):  # seams inside chunks' worth of rows and exactly on them
        parts = summarize_pieces(iter_ftdc([path], rows=rows), mark_continuity).to_json()
        parts_period, whole_period = parts.pop("period_s"), whole["period_s"]
        assert parts == {k: v for k, v in whole.items() if k != "period_s"}, rows
        assert parts_period == whole_period
