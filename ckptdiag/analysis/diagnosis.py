"""The diagnosis: every checkpoint episode's cost against the baseline, eviction pressure, and a
verdict a DBA can paste into a ticket. The thresholds are in :mod:`ckptdiag.analysis.thresholds`."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from ckptdiag.analysis.episode_table import Episodes
from ckptdiag.analysis.episodes import period
from ckptdiag.analysis.evidence import evidence
from ckptdiag.analysis.history import growth_findings, history
from ckptdiag.analysis.overdue import overdue_findings
from ckptdiag.analysis.phases import longest_finding
from ckptdiag.analysis.replication import lag_finding
from ckptdiag.analysis.results import Diagnosis, History, Overdue
from ckptdiag.analysis.summary import summary_sentence
from ckptdiag.analysis.verdict import hurts, verdict
from ckptdiag.analysis.window import WindowDiagnoser, disk_note
from ckptdiag.model import engine_config
from ckptdiag.model.facts import ServerFacts

__all__ = ["Diagnosis", "diagnose", "hurts"]


def diagnose(
    d: pd.DataFrame, facts: ServerFacts, *, gaps: int = 0, restarts: int = 0, notes: Sequence[str] = ()
) -> Diagnosis:
    """Diagnose a derived frame (see :func:`ckptdiag.analysis.series.derive`); ``gaps`` and
    ``restarts`` are the source's own count (the frame's ``gap_before`` and ``segment``), ``notes``
    what the source itself found (damaged lines or files), kept in the evidence."""
    if d.empty:
        raise ValueError("no samples in the window")
    window = WindowDiagnoser(facts)
    window.add(d)
    return diagnosis(window, gaps=gaps, restarts=restarts, notes=notes)


def diagnosis(w: WindowDiagnoser, *, gaps: int = 0, restarts: int = 0, notes: Sequence[str] = ()) -> Diagnosis:
    """The diagnosis of a window fed to ``w`` (see :func:`diagnose`), its last block judged here."""
    w.finish()
    assert w.t0 is not None and w.t1 is not None
    settings = engine_config.resolve(w.facts, w.cache_bytes)
    episodes = Episodes.join(w.blocks)
    late = tuple(w.overdue.found) if w.overdue is not None else ()
    eviction = w.eviction.summary(w.overdue.stale_levels if w.overdue is not None else np.zeros(4))
    whole, base_notes = w.baseline.baseline(bool(episodes))
    others = tuple(w.others)
    told = history(episodes, w.t0, w.t1, settings.interval.value, w.sampled_hours)
    severity, findings = _with_time(verdict(episodes, eviction, settings.eviction, others), episodes, late, told)
    role, role_notes = member_role(*w.secondary)
    seams = np.concatenate(w.seams) if w.seams else None
    ckpt_period, cv = period(episodes, seams)
    samples_period = w.dt.median()
    sampled = w.spacings.named()
    found = evidence(w.evidence, episodes, others, gaps, restarts, samples_period, sampled)
    (ops_done, ops_time), (writes_done, writes_time) = w.weighted
    return Diagnosis(
        facts=w.facts,
        settings=settings,
        start=w.t0,
        end=w.t1,
        samples=w.samples,
        period_s=samples_period,
        gaps=gaps,
        restarts=restarts,
        samples_without_wiredtiger=w.evidence.missing,
        episodes=episodes,
        checkpoint_period_s=ckpt_period,
        checkpoint_period_cv=cv,
        baseline=whole,
        disk=w.disk,
        eviction=eviction,
        severity=severity,
        summary=("secondary: " if role == "secondary" else "")
        + summary_sentence(episodes, severity, findings, ckpt_period, w.disk),
        findings=findings,
        evidence=(*notes, *role_notes, *base_notes, *found, *disk_note(w)),
        ops_s_mean=float(ops_done / ops_time) if ops_time > 0 else None,
        spacings=sampled,
        history=told,
        writes_s_mean=float(writes_done / writes_time) if writes_time > 0 else None,
        host_cpu_pct_p50=w.host_cpu.median(),
        other_cpu_pct_p50=w.other_cpu.median(),
        timeline=w.timeline.timeline(w.t0, w.t1, episodes),
        closeups=w.closeups.result(),
        pinning=w.pinning.result(),
        overdue=late,
        other_stalls=others,
        role=role,
        disk_peak_mb_s=w.peak.result(),
        journal_syncs_s=w.journal_syncs.median() if w.journal_seen else None,
        other_writes_b_s=float(w.other_writes[0] / w.other_writes[1]) if w.other_writes[1] > 0 else None,
        disk_writes_b_s=_disk_writes(w),
        unplaced_checkpoints=w.evidence.unplaced,
        dirty_curve=w.dirty_curve.result(),
    )


def _disk_writes(w: WindowDiagnoser) -> tuple[float, float] | None:
    """(the data disk's, mongod's own data files' and journal's) bytes written a second."""
    disk, own, seconds = w.own_writes
    return (float(disk / seconds), float(own / seconds)) if seconds > 0 else None


def _with_time(
    judged: tuple[str, tuple[str, ...]], episodes: Episodes, late: Sequence[Overdue], told: History | None
) -> tuple[str, tuple[str, ...]]:
    """The verdict with what time shows beyond each episode: overdue checkpoints (never ok: dirty
    data waited intervals on end), replication lag growing through them, figures growing over days."""
    severity, findings = judged
    lag = lag_finding(episodes)
    findings = (
        *findings,
        *overdue_findings(late),
        *([lag] if lag else []),
        *growth_findings(told),
        *longest_finding(episodes),
    )
    return ("warn" if late and severity == "ok" else severity), findings


def member_role(secondary: float, known: float) -> tuple[str | None, list[str]]:
    """The replica-set role the window shows (``secondary`` of the ``known`` samples with a role
    were a secondary's; none known: a standalone server, or not recorded), and the notes that say
    what follows from it."""
    if not known:
        return None, []
    share = secondary / known
    role = "secondary" if share > 0.5 else "primary"
    notes = []
    if role == "secondary":
        notes.append(
            "the member was a secondary: the throughput a checkpoint interrupts is oplog entries applied plus "
            "reads, and write latency is the mean time to apply a batch"
        )
    if 0 < share < 1:
        notes.append(f"the member's role changed in the window (secondary in {100 * share:.0f} % of the samples)")
    return role, notes
