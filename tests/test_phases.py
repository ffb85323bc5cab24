"""Where each checkpoint's time went (#31): the server's own timing of its phases, per version
family, read from synthetic FTDC whose phase statistics carry the names each version gives them
(../shared/reference/wt-connection-stats-by-branch.tsv), written here independently of the catalogue."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from ftdc_writer import SimServer, write_ftdc

from ckptdiag.advice.kinds import HANDLES
from ckptdiag.analysis.phases import breakdown
from ckptdiag.report.document import Report, to_document
from ckptdiag.report.markdown import render_markdown
from ckptdiag.workflows.report import diagnose_window

MB = 2**20
TXN, CKPT = "transaction", "checkpoint"

# 8.0: every phase timed (7.1+ moved them to "checkpoint"; 7.3+ times the per-tree work)
V80: dict[tuple[str, str], float] = {
    (CKPT, "scrub most recent time (msecs)"): 0,
    (CKPT, "prepare most recent time (msecs)"): 250,
    (CKPT, "most recent duration for gathering all handles (usecs)"): 200_000,
    (CKPT, "most recent handles walked"): 45_000,
    (CKPT, "time spent on per-tree checkpoint work (usecs)"): 6_500_000,
    (TXN, "transaction checkpoint history store file duration (usecs)"): 30_000,
    (CKPT, "fsync duration after allocating the transaction ID (usecs)"): 1_200_000,
}
# 4.4-7.0: scrub, prepare, handles and the history store; the writes and syncs untimed
V70: dict[tuple[str, str], float] = {
    (TXN, "transaction checkpoint scrub time (msecs)"): 0,
    (TXN, "transaction checkpoint prepare most recent time (msecs)"): 120,
    (TXN, "transaction checkpoint most recent duration for gathering all handles (usecs)"): 100_000,
    (TXN, "transaction checkpoint most recent handles walked"): 20_000,
    (TXN, "transaction checkpoint history store file duration (usecs)"): 10_000,
}
# 4.2.12+: the scrub and the handles only
V42: dict[tuple[str, str], float] = {
    (TXN, "transaction checkpoint scrub time (msecs)"): 0,
    (TXN, "transaction checkpoint most recent duration for gathering all handles (usecs)"): 300,
    (TXN, "transaction checkpoint most recent handles walked"): 27,
}


def _report(
    tmp_path: Path,
    version: str,
    phases: list[dict[tuple[str, str], float]],
    checkpoints: tuple[tuple[float, float], ...] = ((30.3, 38.4), (90.3, 98.4)),
) -> Report:
    server = SimServer(checkpoints=checkpoints, version=version, phases=phases, written=[58 * MB] * len(checkpoints))
    path = tmp_path / "metrics.2026-11-27T00-00-00Z-00000"
    write_ftdc(path, server, list(np.arange(0.0, 150.0, 1.0)))
    return diagnose_window((path,))


def test_an_80_checkpoint_says_where_all_its_time_went(tmp_path: Path) -> None:
    report = _report(tmp_path, "8.0.4", [V80, V80])
    e = report.dx.episodes[0]
    assert e.duration_s == pytest.approx(8.1) and e.phases is not None
    p = e.phases
    assert (p.prepare_s, p.handles_s, p.handles, p.trees_s, p.sync_s) == pytest.approx((0.25, 0.2, 45_000, 6.5, 1.2))
    assert p.history_store_s == pytest.approx(0.03) and p.scrub_s == 0
    said = breakdown(e)
    assert said is not None and said.startswith("8.1 s: ")
    assert "gathering 45,000 handles" in said and "6.5 s writing its tables and indexes (58 MB)" in said
    assert "1.2 s syncing its files" in said and "does not time" not in said
    # the headline's finding, the JSON and the Markdown table say the same
    assert any(f.startswith("where the longest checkpoint's time went") and said in f for f in report.dx.findings)
    doc = to_document(report)["checkpoints"]["episodes"][0]["phases"]
    assert doc["sync_s"] == 1.2 and doc["trees_s"] == 6.5 and doc["untimed_s"] == pytest.approx(0.12, abs=0.001)
    assert said.partition(": ")[2] in render_markdown(report)


def test_a_70_checkpoint_says_what_its_counters_allow(tmp_path: Path) -> None:
    e = _report(tmp_path, "7.0.0", [V70, V70]).dx.episodes[0]
    assert e.phases is not None and e.phases.trees_s is None and e.phases.sync_s is None
    said = breakdown(e)
    untimed = "8.0 s in phases this version does not time"
    assert said == f"8.1 s: 0.1 s preparing (0.1 s gathering 20,000 handles of it), {untimed}"


def test_a_42_checkpoint_has_its_handles_and_says_the_rest_is_untimed(tmp_path: Path) -> None:
    e = _report(tmp_path, "4.2.12", [V42, V42]).dx.episodes[0]
    assert breakdown(e) == "8.1 s: 0.3 ms gathering 27 handles, 8.1 s in phases this version does not time"


def test_a_server_without_phase_statistics_gets_no_breakdown(tmp_path: Path) -> None:
    report = _report(tmp_path, "7.0.0", [])
    assert all(e.phases is None for e in report.dx.episodes)
    assert not any("time went" in f for f in report.dx.findings)
    assert all(e["phases"] is None for e in to_document(report)["checkpoints"]["episodes"])


def test_phases_that_are_not_the_checkpoints_own_are_not_told(tmp_path: Path) -> None:
    # two checkpoints end between two samples: the sample's "most recent" figures are the second's
    quick = {**V80, (CKPT, "time spent on per-tree checkpoint work (usecs)"): 100_000}
    quick = {k: v for k, v in quick.items() if "fsync" not in k[1] and "prepare" not in k[1] and "handles" not in k[1]}
    report = _report(tmp_path, "8.0.4", [quick, quick], checkpoints=((30.1, 30.3), (30.5, 30.9)))
    first, second = report.dx.episodes[:2]
    assert first.phases is None and second.phases is not None
    # phases that add up to more than the checkpoint took: counters that disagree, no breakdown
    wrong = {**V80, (CKPT, "time spent on per-tree checkpoint work (usecs)"): 9_000_000}
    assert all(e.phases is None for e in _report(tmp_path, "8.0.4", [wrong, wrong]).dx.episodes)


def test_checkpoints_that_spend_their_time_on_handles_are_told_so(tmp_path: Path) -> None:
    # 8.1 s checkpoints that stop writes, 5 s of each gathering 209,848 handles (WT-5479's server)
    slow = {
        **V80,
        (CKPT, "prepare most recent time (msecs)"): 5_100,
        (CKPT, "most recent duration for gathering all handles (usecs)"): 5_000_000,
        (CKPT, "most recent handles walked"): 209_848,
        (CKPT, "time spent on per-tree checkpoint work (usecs)"): 1_700_000,
    }
    report = diagnose_window((_written(tmp_path / "h", [slow, slow], stall_ops=5),))
    assert report.advice is not None and report.dx.stalls == 2
    causes = {c.kind: c for c in report.advice.causes}
    assert (
        "the typical checkpoint that hurts spent 5.0 s of 8.1 s gathering 209,848 handles"
        in (causes[HANDLES].evidence[0])
    )
    note = next(r for r in report.advice.recommendations if r.id == "handles")
    assert note.kind == "note" and "connection data handles currently active" in note.predicted_text
    # most of each checkpoint is its prepare, the same at any interval: a shorter interval would
    # repeat the walk more often, and is not offered
    assert "checkpoint-interval" not in {r.id for r in report.advice.recommendations}
    # the same server with quick handles: no such cause, no such check, and the interval is offered
    quick = diagnose_window((_written(tmp_path / "q", [V80, V80], stall_ops=5),))
    assert quick.advice is not None and HANDLES not in {c.kind for c in quick.advice.causes}
    ids = {r.id for r in quick.advice.recommendations}
    assert "handles" not in ids and "checkpoint-interval" in ids
    # the lab's many-collections run: 1.4 s checkpoints, 1.1 s of each gathering 32,000 handles.
    # The model alone would offer 10 s (a 1.15 s checkpoint six times as often): not offered
    walk = {
        **V80,
        (CKPT, "prepare most recent time (msecs)"): 1_100,
        (CKPT, "most recent duration for gathering all handles (usecs)"): 1_050_000,
        (CKPT, "most recent handles walked"): 32_000,
        (CKPT, "time spent on per-tree checkpoint work (usecs)"): 100_000,
        (CKPT, "fsync duration after allocating the transaction ID (usecs)"): 150_000,
    }
    lab = diagnose_window((_written(tmp_path / "w", [walk, walk], 5, ((30.3, 31.7), (90.3, 91.7))),))
    assert lab.advice is not None and HANDLES in {c.kind for c in lab.advice.causes}
    assert "checkpoint-interval" not in {r.id for r in lab.advice.recommendations}


def test_a_checkpoints_prepare_is_the_same_at_any_interval() -> None:
    # 3 s writing 60 MB, 1 s of it preparing: the 2 s that wrote did so at 30 MB/s; at 30 s the
    # checkpoint writes 30 MB in 1 s, after the same 1 s of prepare
    from ckptdiag.advice.model import CheckpointShape, at_interval

    now = CheckpointShape(60.0, 60 * MB, 3.0, fixed_s=1.0)
    assert now.disk_rate == 30 * MB
    assert at_interval(now, 30.0).duration_s == pytest.approx(2.0)
    assert at_interval(CheckpointShape(60.0, 60 * MB, 3.0), 30.0).duration_s == pytest.approx(1.5)


def _written(
    folder: Path,
    phases: list[dict[tuple[str, str], float]],
    stall_ops: float,
    checkpoints: tuple[tuple[float, float], ...] = ((30.3, 38.4), (90.3, 98.4)),
) -> Path:
    folder.mkdir()
    server = SimServer(checkpoints=checkpoints, version="8.0.4", phases=phases, stall_ops=stall_ops, dirty_builds=True)
    path = folder / "metrics.2026-11-27T00-00-00Z-00000"
    write_ftdc(path, server, list(np.arange(0.0, 150.0, 1.0)))
    return path
