"""History pinned for a reader, a history store that grows, very many data handles, a checkpoint
stuck for intervals (#31): each named as a cause from its own counters, per version family, with
the statistics named as each version names them (../shared/data/wiredtiger-stats), written here
independently of the catalogue; a server without them gets none of these causes."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from ftdc_writer import SimServer, write_ftdc

from ckptdiag.advice.kinds import HANDLES, HISTORY_PINNED, STUCK
from ckptdiag.report.document import Report, to_document
from ckptdiag.workflows.report import diagnose_window

GB = 2**30
CACHE, TXN, DH = "cache", "transaction", "data-handle"
PINNED_TS = (TXN, "transaction range of timestamps currently pinned")
PINNED_IDS = (TXN, "transaction range of IDs currently pinned")
HANDLES_OPEN = (DH, "connection data handles currently active")
LOOKASIDE = (CACHE, "cache overflow table on-disk size")  # 3.6-4.2
HISTORY_STORE = (CACHE, "history store table on-disk size")  # 4.4+
CHECKPOINTS = tuple((30.0 + 60 * k, 33.0 + 60 * k) for k in range(10))


def _ts(seconds: float) -> float:
    return seconds * 2**32  # a timestamp range: seconds in the high 32 bits


def _report(
    tmp_path: Path,
    version: str,
    gauges: dict[tuple[str, str], tuple[float, float]],
    checkpoints: tuple[tuple[float, float], ...] = CHECKPOINTS,
    seconds: float = 620.0,
    phases: list[dict[tuple[str, str], float]] | None = None,
) -> Report:
    server = SimServer(
        checkpoints=checkpoints,
        stall_ops=40.0,
        stall_latency_ms=80.0,
        version=version,
        gauges=gauges,
        phases=phases or (),
    )
    path = tmp_path / "metrics.2026-11-27T00-00-00Z-00000"
    write_ftdc(path, server, list(np.arange(0.0, seconds, 1.0)))
    return diagnose_window((path,))


def _causes(report: Report) -> dict[str, tuple[str, ...]]:
    assert report.advice is not None
    return {c.kind: c.evidence for c in report.advice.causes}


def _check(report: Report, id_: str) -> str:
    assert report.advice is not None
    return next(r.predicted_text for r in report.advice.recommendations if r.id == id_)


def test_a_42_server_whose_lookaside_grows_behind_a_pinned_reader_gets_the_history_cause(tmp_path: Path) -> None:
    report = _report(tmp_path, "4.2.8", {LOOKASIDE: (1 * GB, 4 * GB), PINNED_TS: (_ts(60), _ts(3_600))})
    pinning = report.dx.pinning
    assert pinning is not None and pinning.hs_first_bytes == 1 * GB and pinning.hs_last_bytes == 4 * GB
    assert pinning.pinned_s_max == pytest.approx(3_600, abs=1)
    evidence = _causes(report)[HISTORY_PINNED]
    assert evidence[0].startswith("history was pinned up to 60 min back")
    assert "by design" not in evidence[0]  # before 5.0 nothing is kept on purpose
    assert "grew from 1.0 GB to 4.0 GB (on disk and in the cache) in 10 min" in evidence[1]
    said = _check(report, "history")
    assert "enableMajorityReadConcern: false (3.6.1 to 4.4" in said and "minSnapshotHistoryWindowInSeconds" not in said
    assert "{$currentOp: {allUsers: true, idleSessions: true}}" in said and "transaction.timeOpenMicros" in said


def test_a_70_server_pinned_far_past_its_snapshot_window_gets_it_with_the_50_facts(tmp_path: Path) -> None:
    report = _report(tmp_path, "7.0.2", {HISTORY_STORE: (2 * GB, 2 * GB), PINNED_TS: (_ts(900), _ts(1_500))})
    evidence = _causes(report)[HISTORY_PINNED]
    assert len(evidence) == 1  # the store did not grow: pinned alone
    assert (
        "up to 25 min back" in evidence[0]
        and "keeps 300 s by design (minSnapshotHistoryWindowInSeconds)" in evidence[0]
    )
    said = _check(report, "history")
    assert "votes: 0" in said and "minSnapshotHistoryWindowInSeconds keeps that many seconds" in said
    assert "enableMajorityReadConcern" not in said


def test_an_80_server_says_what_its_checkpoints_spent_on_the_history_store(tmp_path: Path) -> None:
    hs_file: dict[tuple[str, str], float] = {
        (TXN, "transaction checkpoint history store file duration (usecs)"): 1_800_000
    }
    report = _report(
        tmp_path,
        "8.0.4",
        {HISTORY_STORE: (GB, 3 * GB), PINNED_TS: (_ts(300), _ts(320))},
        phases=[hs_file] * len(CHECKPOINTS),
    )
    evidence = _causes(report)[HISTORY_PINNED]
    assert "grew from 1.0 GB to 3.0 GB" in evidence[0]  # grew; pinned only as long as by design
    assert evidence[1] == "the typical checkpoint that hurts spent 1.8 s of 3.0 s on the history store file"
    assert to_document(report)["checkpoints"]["episodes"][0]["phases"]["history_store_s"] == 1.8


@pytest.mark.parametrize("version", ["4.2.8", "7.0.2", "8.0.4"])
def test_a_server_that_keeps_only_what_it_should_gets_none_of_these_causes(tmp_path: Path, version: str) -> None:
    store = LOOKASIDE if version.startswith("4.") else HISTORY_STORE
    gauges = {store: (GB, 1.2 * GB), PINNED_TS: (_ts(290), _ts(310)), HANDLES_OPEN: (900, 900)}
    report = _report(tmp_path, version, gauges)
    assert report.dx.severity != "ok"  # its checkpoints stall: the causes are classified
    assert not {HISTORY_PINNED, HANDLES, STUCK} & set(_causes(report))
    ids = {r.id for r in report.advice.recommendations} if report.advice else set()
    assert not {"history", "handles", "stuck-checkpoint"} & ids


def test_a_standalone_server_with_no_oldest_timestamp_is_not_pinned_for_the_whole_epoch(tmp_path: Path) -> None:
    # nothing sets the oldest timestamp on a standalone server: the range reads as the current time
    report = _report(tmp_path, "7.0.2", {PINNED_TS: (_ts(1.7e9), _ts(1.7e9 + 620))})
    assert report.dx.pinning is None  # not a figure: as if not recorded
    assert HISTORY_PINNED not in _causes(report)


def test_very_many_handles_are_a_cause_where_the_version_does_not_time_their_walk(tmp_path: Path) -> None:
    report = _report(tmp_path, "4.2.8", {HANDLES_OPEN: (52_000, 52_400), PINNED_IDS: (10, 12)})
    evidence = _causes(report)[HANDLES]
    assert evidence[0].startswith("52,400 data handles open at most; this version does not time")
    assert "connection data handles currently active" in _check(report, "handles")
    # where it times the walk and the walk is quick, the count alone is not the cause
    quick: dict[tuple[str, str], float] = {
        (TXN, "transaction checkpoint most recent duration for gathering all handles (usecs)"): 2_000
    }
    timed = _report(tmp_path, "4.2.12", {HANDLES_OPEN: (52_000, 52_400)}, phases=[quick] * len(CHECKPOINTS))
    assert HANDLES not in _causes(timed)


def test_a_checkpoint_that_runs_ten_intervals_is_named_stuck(tmp_path: Path) -> None:
    long_one = ((30.0, 33.0), (90.0, 93.0), (150.0, 750.0), (810.0, 813.0))
    report = _report(tmp_path, "7.0.2", {}, checkpoints=long_one, seconds=900.0)
    evidence = _causes(report)[STUCK]
    assert evidence[0].startswith("a checkpoint ran 10 min, 10.0x the 60 s interval")
    said = _check(report, "stuck-checkpoint")
    assert "Checkpoint has been running for N seconds" in said


def test_every_cause_kind_is_in_the_json_schema_and_a_report_with_the_new_ones_validates(tmp_path: Path) -> None:
    """The schema listed six kinds while the code named nine: a script validating a report with a
    busy CPU or slow handles would have rejected it."""
    import json

    import jsonschema
    from conftest import REPO

    from ckptdiag.advice import kinds

    schema = json.loads((REPO / "docs" / "report-schema.json").read_text())
    text = json.dumps(schema)
    kinds = {v for k, v in vars(kinds).items() if k.isupper() and isinstance(v, str) and "-" in v}
    enums = [json.loads(e + "]") for e in (part.split("]", 1)[0] for part in text.split('"kind": {"enum": ')[1:])]
    listed = set(next(e for e in enums if "io-throttled" in e))
    assert kinds == listed
    report = _report(tmp_path, "4.2.8", {LOOKASIDE: (GB, 4 * GB), HANDLES_OPEN: (52_000, 52_000)})
    doc = to_document(report)
    assert {c["kind"] for c in doc["advice"]["causes"]} >= {HISTORY_PINNED, HANDLES}
    jsonschema.validate(doc, schema)


@pytest.mark.parametrize(("grown_mb", "named"), [(300, True), (200, False)])
def test_a_history_store_that_grows_by_a_quarter_of_a_small_cache_is_named(
    tmp_path: Path, grown_mb: int, named: bool
) -> None:
    """Under 4 GB of cache, a quarter of it (here 256 MB of 1 GB) is growth enough: the lab's
    512 MB cache fills with far less than a GB of history."""
    mb = 2**20
    report = _report(tmp_path, "7.0.2", {HISTORY_STORE: (100 * mb, (100 + grown_mb) * mb)})
    assert (HISTORY_PINNED in _causes(report)) is named


@pytest.mark.parametrize(("grown_mb", "named"), [(100, True), (10, False)])
def test_a_reader_open_for_minutes_while_the_history_store_grows_is_named(
    tmp_path: Path, grown_mb: int, named: bool
) -> None:
    """Without timestamps (a standalone server, the lab) the transaction IDs pinned say how long
    the oldest reader has been open, in seconds of the server's own writes (~1,000 a second here):
    120,000 IDs is two minutes. With the history store growing by 64 MB or more meanwhile, that
    is the cause; with it flat, a long reader alone is not."""
    mb = 2**20
    gauges = {PINNED_IDS: (20, 120_000), HISTORY_STORE: (4096, 4096 + grown_mb * mb)}
    report = _report(tmp_path, "7.0.2", gauges)
    causes = _causes(report)
    assert (HISTORY_PINNED in causes) is named
    if named:
        assert causes[HISTORY_PINNED][0].startswith("a transaction or snapshot stayed open about 2.")
        assert "120,000 transaction IDs pinned at the ~" in causes[HISTORY_PINNED][0]


def test_the_ids_a_running_checkpoint_pins_are_not_a_reader(tmp_path: Path) -> None:
    """A checkpoint pins its own snapshot while it runs (and evicting during it writes history):
    in the lab's control run without a reader, a 10 s checkpoint pinned 64,000 IDs and the history
    store grew 61 MB. IDs pinned by the checkpoint are not a long reader's."""
    mb = 2**20
    by_checkpoint = (TXN, "transaction range of IDs currently pinned by a checkpoint")
    gauges = {PINNED_IDS: (20, 120_000), by_checkpoint: (0, 119_990), HISTORY_STORE: (4096, 100 * mb)}
    report = _report(tmp_path, "7.0.2", gauges)
    assert report.dx.pinning is not None and report.dx.pinning.pinned_ids_max == pytest.approx(20, abs=15)
    assert HISTORY_PINNED not in _causes(report)


def test_causes_are_ranked_by_the_share_of_the_stall_they_explain() -> None:
    """Measured shares first, largest first; equal ones and the unmeasured (a count of handles, a
    cache's size) keep the order given, most specific first."""
    from ckptdiag.advice.kinds import Cause, ranked

    def cause(kind: str, share: float | None) -> Cause:
        return Cause(kind, kind, (), share, "of something" if share is not None else "")

    given = [cause("a", None), cause("b", 0.3), None, cause("c", 1.0), cause("d", 0.9), cause("e", 1.0)]
    given.append(cause("f", None))
    assert [c.kind for c in ranked(given)] == ["c", "e", "d", "b", "a", "f"]
    assert cause("d", 0.9).explains() == "explains ~90 % (of something)"
    assert cause("a", None).explains() is None


@pytest.mark.parametrize(("hs_s", "share"), [(0.6, 0.2), (2.7, 0.9)])
def test_the_history_cause_says_how_much_of_the_checkpoints_time_it_explains(
    tmp_path: Path, hs_s: float, share: float
) -> None:
    """An 8.0 server whose checkpoints of 3 s spend ``hs_s`` on the history store file: the cause
    carries that share, ranks where it falls among the others, and the JSON gives every cause its
    share (null where unmeasured) in one shape."""
    from ckptdiag.report.markdown import render_markdown

    hs_file = {(TXN, "transaction checkpoint history store file duration (usecs)"): round(hs_s * 1e6)}
    report = _report(
        tmp_path,
        "8.0.4",
        {HISTORY_STORE: (GB, 3 * GB), PINNED_TS: (_ts(300), _ts(320))},
        phases=[hs_file] * len(CHECKPOINTS),
    )
    assert report.advice is not None
    causes = report.advice.causes
    history = next(c for c in causes if c.kind == HISTORY_PINNED)
    assert history.share == pytest.approx(share)
    assert history.share_of == "of the typical checkpoint's time that hurt: on the history store file"
    measured = [c.share for c in causes if c.share is not None]
    assert measured == sorted(measured, reverse=True) and all(0 <= s <= 1 for s in measured)
    doc = to_document(report)["advice"]["causes"]
    assert all(set(c) == {"kind", "title", "evidence", "share", "share_of"} for c in doc)
    assert next(c for c in doc if c["kind"] == HISTORY_PINNED)["share"] == share
    assert f"_explains ~{100 * share:.0f} % ({history.share_of})_" in render_markdown(report)
