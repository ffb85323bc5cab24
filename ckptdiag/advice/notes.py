"""Things to check that are not a knob of this server: its collections and indexes, the disk, its file
system, the journal."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ckptdiag.advice.cause import journal_evidence, slowed_while_writing
from ckptdiag.advice.cause_gauges import SNAPSHOT_WINDOW_SINCE
from ckptdiag.advice.changes import ParameterChange
from ckptdiag.advice.kinds import HANDLES, HISTORY_PINNED, OTHER_WRITER, STUCK, Cause
from ckptdiag.advice.model import prepare_bound
from ckptdiag.advice.recommendation import Recommendation
from ckptdiag.analysis.results import Diagnosis
from ckptdiag.analysis.verdict import hurting
from ckptdiag.model.engine_config import DEFAULT_COMMIT_MS

SATURATED_UTIL_PCT = 90.0


def _note(
    id_: str,
    setting: str,
    title: str,
    evidence: tuple[str, ...],
    text: str,
    why: str = "from this run's disk and latency figures",
) -> Recommendation:
    return Recommendation(
        id=id_,
        kind="note",
        setting=setting,
        title=title,
        current=None,
        current_source="",
        recommended=None,
        evidence=evidence,
        predicted={},
        predicted_text=text,
        tradeoffs=(),
        confidence="medium",
        confidence_why=why,
    )


def _disk(dx: Diagnosis) -> Recommendation | None:
    hurt = dx.episodes.take(hurting(dx.episodes))
    saturated = hurt.take(np.nan_to_num(hurt.floats("impact.util_pct_peak")) >= SATURATED_UTIL_PCT)
    if not (len(hurt) and dx.disk and len(saturated) * 2 >= len(hurt)):
        return None
    peak = float(np.nan_to_num(saturated.floats("impact.write_mb_s_peak")).max())
    return _note(
        "disk",
        "disk",
        f"Disk {dx.disk} cannot absorb the checkpoint burst",
        (
            f"{dx.disk} {SATURATED_UTIL_PCT:.0f} %+ busy in {len(saturated)} of {len(hurt)} checkpoints that "
            f"hurt; peak {peak:.0f} MB/s",
        ),
        "smaller bursts (above) spread the same writes; otherwise a disk with more write throughput",
    )


def _filesystem(dx: Diagnosis, hurting: int) -> Recommendation | None:
    fs = dx.facts.filesystem
    if not (fs and fs.lower() == "ext4" and hurting):
        return None
    return _note(
        "filesystem",
        "file system",
        "dbPath is on ext4: MongoDB recommends XFS for WiredTiger",
        ("dbPath's file system is ext4", f"{hurting} of {len(dx.episodes)} checkpoints cost throughput"),
        "on ext4 a data file's fdatasync can hold up the journal's writes (SERVER-18314); XFS avoids it",
    )


def _journal_commit(dx: Diagnosis) -> Recommendation:
    commit = dx.settings.commit_ms
    value = commit.number
    return Recommendation(
        id="journal-commit",
        kind="note",
        setting="storage.journal.commitIntervalMs",
        title=f"Journal commit interval {value:g} ms: back to {DEFAULT_COMMIT_MS:g} ms",
        current=commit.value,
        current_source=commit.source,
        recommended=DEFAULT_COMMIT_MS,
        evidence=(f"the journal is synced every {value:g} ms, competing with each checkpoint's writes",),
        predicted={},
        predicted_text="fewer journal syncs queued behind the checkpoint's data-file sync",
        tradeoffs=("up to 100 ms of unacknowledged (w:1, j:false) writes can be lost in a crash",),
        confidence="low",
        confidence_why="helps only if the journal shares the checkpoint's disk",
        change=ParameterChange(
            "journalCommitInterval", ("storage", "journal", "commitIntervalMs"), DEFAULT_COMMIT_MS, value
        ),
    )


def _history(dx: Diagnosis, causes: Sequence[Cause]) -> Recommendation | None:
    cause = next((c for c in causes if c.kind == HISTORY_PINNED), None)
    if cause is None:
        return None
    version = dx.settings.version
    since_50 = version is None or version >= SNAPSHOT_WINDOW_SINCE
    steps = [
        "the oldest reader: db.getSiblingDB('admin').aggregate([{$currentOp: {allUsers: true, idleSessions: true}}, "
        "{$match: {$or: [{secs_running: {$gt: 60}}, {'transaction.timeOpenMicros': {$gt: 60000000}}]}}]) lists "
        "operations running over a minute and transactions open over a minute, idle ones too (from 4.0 a "
        "transaction older than transactionLifetimeLimitSeconds, 60 s by default, is aborted: "
        "db.adminCommand({getParameter: 1, transactionLifetimeLimitSeconds: 1}))",
        "rs.status(): a member down or far behind holds the majority commit point back; for a "
        "primary-secondary-arbiter set with its secondary down, MongoDB's documentation says "
        + (
            "to give the unavailable member votes: 0 (and priority: 0) with rs.reconfig() until it is back"
            if since_50
            else "enableMajorityReadConcern: false (3.6.1 to 4.4; from 5.0 it cannot be set)"
        ),
    ]
    if since_50:
        steps.append(
            "minSnapshotHistoryWindowInSeconds keeps that many seconds on purpose (300 by default): "
            "db.adminCommand({getParameter: 1, minSnapshotHistoryWindowInSeconds: 1})"
        )
    return _note(
        "history",
        "what pins history",
        "Find what holds history back",
        cause.evidence,
        "; ".join(steps),
        why="from the server's own gauges of the history it pins",
    )


# the check a cause calls for, where it is the same whatever the version: (id, what it is about,
# title, what to do, where its figures come from)
_CAUSE_CHECKS = {
    HANDLES: (
        "handles",
        "collections and indexes",
        "Count the collections and indexes each checkpoint walks",
        "in mongosh, the data handles open now: "
        'db.serverStatus().wiredTiger["data-handle"]["connection data handles currently active"]; every '
        "collection and index is one: dropping unused ones (and unused indexes) shortens every checkpoint's walk",
        "from the server's own counters of its data handles and its checkpoints' phases",
    ),
    STUCK: (
        "stuck-checkpoint",
        "the long checkpoint",
        "See what the long checkpoint was doing",
        'mongod\'s log: from 4.4 WiredTiger writes "Checkpoint has been running for N seconds" while one runs '
        "long (give the log to `ckptdiag report` beside the FTDC); db.currentOp() for operations holding "
        "locks; a checkpoint that never ends is a bug to report with the version and that log",
        "from the server's checkpoint counters",
    ),
    OTHER_WRITER: (
        "other-writer",
        "the data disk's other writers",
        "Find what else writes to the data disk",
        "on the host: pidstat -d 1 (sysstat) or iotop -o lists the processes writing; backups, log "
        "shipping, another mongod or the OS on the same disk take the bandwidth each checkpoint needs: "
        "move them, or move dbPath to a disk of its own",
        "from the disk's counters against mongod's own write counters",
    ),
}


def _cause_checks(causes: Sequence[Cause]) -> list[Recommendation]:
    """The check each cause of :data:`_CAUSE_CHECKS` calls for, with its evidence."""
    out = []
    for c in causes:
        if c.kind in _CAUSE_CHECKS:
            id_, setting, title, text, why = _CAUSE_CHECKS[c.kind]
            out.append(_note(id_, setting, title, c.evidence, text, why=why))
    return out


def notes(dx: Diagnosis, causes: Sequence[Cause]) -> list[Recommendation]:
    """The checks this run's figures, and the ``causes`` classified from them, point to."""
    hurt = list(dx.episodes.take(hurting(dx.episodes)))
    # ext4's fdatasync can hold the journal up behind a checkpoint's syncs, not behind its prepare
    syncing = sum(not prepare_bound(e) for e in hurt)
    checks = (_history(dx, causes), _disk(dx), _filesystem(dx, syncing))
    out = [*_cause_checks(causes), *(n for n in checks if n is not None)]
    commit = dx.settings.commit_ms.value
    if commit is not None and commit < DEFAULT_COMMIT_MS and hurt:
        out.append(_journal_commit(dx))
    app = dx.eviction.app_evicted_pages + dx.eviction.app_wait_s
    slow_writes = slowed_while_writing(hurt)
    journaled = journal_evidence(dx)
    if slow_writes and not app and journaled is not None:  # unjournaled writes do not wait for it
        out.append(
            _note(
                "journal-disk",
                "journal",
                "Writes wait for the journal behind the checkpoint's sync",
                (
                    f"write latency rose in {len(slow_writes)} of {len(dx.episodes)} checkpoints with no "
                    "application-thread eviction and no cache wait: the writes wait for I/O, not for the cache",
                    journaled,
                ),
                "a journal on its own disk (dbPath/journal as a symlink or mount) keeps commits off the "
                "checkpoint's queue",
            )
        )
    return out
