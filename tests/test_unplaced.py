"""Checkpoints the server's start counter counts inside intervals the samples cannot place them in
(a gap of hours, or more in one interval than a second could hold): counted and named, never an
episode each. Memory follows the samples, never the time between them: three samples 20,000 s
apart whose counter rose by 2,000,000 once made as many episodes (3 GB, 85 s)."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from conftest import run_cli
from ftdc_writer import SimServer, write_ftdc
from synth import Server, write_recording

from ckptdiag.workflows.report import diagnose_window

PAUSE_S = 20_000.0


def report_json(path: Path) -> dict[str, Any]:
    proc = run_cli("report", str(path), "-f", "json", "--fail-on", "never", timeout=120)
    assert proc.returncode == 0, proc.stderr
    doc: dict[str, Any] = json.loads(proc.stdout)
    return doc


def test_hours_of_checkpoints_inside_an_ftdc_gap_are_counted_not_listed(tmp_path: Path) -> None:
    # checkpoints every 60 s for 5.7 hours; FTDC off from 199 s to 20,200 s: the 334 checkpoints
    # that ran in that gap all began and ended inside it
    every = [(30.0 + 60 * k, 32.0 + 60 * k) for k in range(340)]
    times = [float(i) for i in range(200)] + [20_200.0 + i for i in range(200)]
    write_ftdc(tmp_path / "metrics.gap", SimServer(checkpoints=every), times)
    doc = report_json(tmp_path / "metrics.gap")
    listed = doc["checkpoints"]
    # 3 before, the gap's last (it may still run at the sample after it, so it is placed), 3 after
    assert listed["count"] == 7 and listed["unplaced"] == 333
    assert listed["count"] + listed["unplaced"] == len(every)  # the server's counter, all of it
    note = next(e for e in doc["verdict"]["evidence"] if "began and ended between two samples" in e)
    assert note.startswith("333 checkpoints") and "(the most, 333, from 2023-11-14T22:16:39.000Z to " in note
    assert listed["period_s"] == 60.0  # the period of those placed, not of a gap's pile
    wide = {**os.environ, "COLUMNS": "200"}
    for fmt, line in (("md", "- checkpoints: 7, "), ("table", "checkpoints: 7 (and 333 not placed: see the")):
        proc = run_cli("report", str(tmp_path / "metrics.gap"), "-f", fmt, timeout=120, env=wide)
        assert line in proc.stdout and "333 not placed" in proc.stdout, proc.stdout


@pytest.fixture
def lines(tmp_path: Path) -> list[dict[str, Any]]:
    path = tmp_path / "good.jsonl"
    write_recording(Server(seconds=300).frame(), path)  # checkpoints at 30.3 + 60k s, 2 s each
    return [json.loads(line) for line in path.read_text().splitlines()]


def _write(path: Path, objs: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(o, separators=(",", ":")) + "\n" for o in objs))
    return path


def test_a_paused_recording_whose_counter_rose_by_millions_costs_no_episode_each(
    tmp_path: Path, lines: list[dict[str, Any]]
) -> None:
    # the recorder paused (no gap event) for 20,000 s between samples 160 and 161, and the start
    # counter says 2,000,000 checkpoints ran: under the 100 a second a server can begin over that
    # time, so counted, but none of them can be placed
    for o in lines[162:]:  # the header is line 0: samples 161 on
        o["t"] += PAUSE_S
        o["mono"] += PAUSE_S
        o["m"]["ckpt.count"] += 2_000_000
    report = diagnose_window((_write(tmp_path / "paused.jsonl", lines),))
    dx = report.dx
    assert len(dx.episodes) == 6 and dx.unplaced_checkpoints == 1_999_999
    # no rate is read across the pause: the one placed in it is no stall from a rate of 0.05 ops/s
    placed = [e for e in dx.episodes if e.rows[0] == 161]
    assert len(placed) == 1 and placed[0].impact is not None and not placed[0].impact.stall
    assert dx.stalls == 5  # the five the server had (Server stalls in every checkpoint)


def test_an_interval_with_more_checkpoints_than_a_second_holds_places_a_second_of_them(
    tmp_path: Path, lines: list[dict[str, Any]]
) -> None:
    # 150 checkpoints begun in one 1 s interval (under the 200 a second's bound allows; more is a
    # jump): 100 of those that ended inside it are placed, the last begun too, 49 counted
    for o in lines[101:]:
        o["m"]["ckpt.count"] += 150
    report = diagnose_window((_write(tmp_path / "crowded.jsonl", lines),))
    assert len(report.dx.episodes) == 5 + 101 and report.dx.unplaced_checkpoints == 49
    assert any(e.startswith("49 checkpoints began and ended") for e in report.dx.evidence)
