"""The diagnosis: every checkpoint episode's cost against the baseline, eviction pressure, and a
verdict a DBA can paste into a ticket. The thresholds are in :mod:`ckptdiag.analysis.thresholds`."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from ckptdiag import engine_config
from ckptdiag.analysis.baseline import near_episodes, whole_baseline
from ckptdiag.analysis.columns import Columns
from ckptdiag.analysis.episodes import find_episodes, period
from ckptdiag.analysis.eviction import eviction_summary
from ckptdiag.analysis.evidence import evidence
from ckptdiag.analysis.history import growth_findings, history
from ckptdiag.analysis.impact import assess_all
from ckptdiag.analysis.overdue import Overdue, overdue, overdue_findings, stale
from ckptdiag.analysis.replication import lag_finding
from ckptdiag.analysis.results import Diagnosis, Episode, History
from ckptdiag.analysis.stalls import other_stalls
from ckptdiag.analysis.stats import nanmax, nanmedian, spacings, time_weighted_mean
from ckptdiag.analysis.summary import summary_sentence
from ckptdiag.analysis.thresholds import IMPACT_GRACE_S
from ckptdiag.analysis.timeline import TIMELINE_POINTS, timeline
from ckptdiag.analysis.verdict import hurts, verdict
from ckptdiag.facts import ServerFacts

__all__ = ["Diagnosis", "diagnose", "hurts"]


def diagnose(
    d: pd.DataFrame, facts: ServerFacts, *, gaps: int = 0, restarts: int = 0, notes: Sequence[str] = ()
) -> Diagnosis:
    """Diagnose a derived frame (see :func:`ckptdiag.analysis.series.derive`); ``gaps`` and
    ``restarts`` are the source's own count (the frame's ``gap_before`` and ``segment``), ``notes``
    what the source itself found (damaged lines or files), kept in the evidence."""
    if d.empty:
        raise ValueError("no samples in the window")
    # the settings in force, once: what the server reports as its cache wins over its configuration
    settings = engine_config.resolve(facts, nanmax(d["cache_max_bytes"].to_numpy(dtype="float64")))
    disk = pick_disk(d, facts.devices)
    cols = Columns.of(d, disk)
    t = cols.t
    found = find_episodes(d)
    base_rows, whole, base_notes = whole_baseline(cols, found)
    episodes = assess_all(found, cols, base_rows, whole)
    late = overdue(cols, episodes, settings.interval.number, settings.eviction.dirty_target.number)
    states = d["eviction_state"].to_numpy(dtype="float64")
    eviction = eviction_summary(cols, states, settings.eviction, settings.version, stale(t, late))
    others = other_stalls(cols, near_episodes(t, episodes, 0.0, IMPACT_GRACE_S), whole, settings.eviction)
    told = history(episodes, float(t[0]), float(t[-1]), settings.interval.value)
    severity, findings = _with_time(verdict(episodes, eviction, settings.eviction, others), episodes, late, told)
    role, role_notes = member_role(d["secondary"].to_numpy(dtype="float64") if "secondary" in d else np.array([]))
    ckpt_period, cv = period(episodes, t[d["seam"].to_numpy(dtype=bool)] if "seam" in d else None)
    samples_period = nanmedian(cols.dt)
    sampled = spacings(cols.dt)  # one sort of the window's spacings: the header's and the evidence's
    noted = (*notes, *role_notes, *base_notes, *evidence(d, episodes, others, gaps, restarts, samples_period, sampled))
    return Diagnosis(
        facts=facts,
        settings=settings,
        start=float(t[0]),
        end=float(t[-1]),
        samples=int(t.size),
        period_s=samples_period,
        gaps=gaps,
        restarts=restarts,
        samples_without_wiredtiger=int(np.nansum(d["wt_missing"].to_numpy())),
        episodes=episodes,
        checkpoint_period_s=ckpt_period,
        checkpoint_period_cv=cv,
        baseline=whole,
        disk=disk,
        eviction=eviction,
        severity=severity,
        summary=("secondary: " if role == "secondary" else "")
        + summary_sentence(episodes, severity, findings, ckpt_period, disk),
        findings=findings,
        evidence=noted,
        ops_s_mean=time_weighted_mean(cols.ops_s, cols.dt),
        spacings=sampled,
        history=told,
        writes_s_mean=time_weighted_mean(cols.writes_s, cols.dt),
        host_cpu_pct_p50=nanmedian(cols.host_cpu_pct),
        timeline=timeline(d, episodes, disk, TIMELINE_POINTS),
        other_stalls=others,
        role=role,
        disk_peak_mb_s=sustained_peak(cols.disk_wmb_s, cols.dt),
        journal_syncs_s=nanmedian(d["journal_syncs_s"].to_numpy(dtype="float64")) if "journal_syncs_s" in d else None,
    )


def _with_time(
    judged: tuple[str, tuple[str, ...]], episodes: Sequence[Episode], late: Sequence[Overdue], told: History | None
) -> tuple[str, tuple[str, ...]]:
    """The verdict with what time shows beyond each episode: overdue checkpoints (never ok: dirty
    data waited intervals on end), replication lag growing through them, figures growing over days."""
    severity, findings = judged
    lag = lag_finding(episodes)
    findings = (*findings, *overdue_findings(late), *([lag] if lag else []), *growth_findings(told))
    return ("warn" if late and severity == "ok" else severity), findings


SUSTAINED_S = 1.0  # a disk's demonstrated rate: the most it wrote over this many seconds


def sustained_peak(rate: np.ndarray, dt: np.ndarray) -> float | None:
    """The highest rate held over ``SUSTAINED_S`` (consecutive samples' time-weighted mean): what the
    disk has shown it can write, not what a throttled or CPU-bound checkpoint happened to average."""
    ok = np.isfinite(rate) & np.isfinite(dt) & (dt > 0)
    if not ok.any():
        return None
    amount = np.concatenate(([0.0], np.cumsum(np.where(ok, rate * dt, 0.0))))
    span = np.concatenate(([0.0], np.cumsum(np.where(ok, dt, 0.0))))
    ends = np.searchsorted(span, span[:-1] + SUSTAINED_S, side="left")
    valid = ends < span.size
    if not valid.any():
        return float((amount[-1] - amount[0]) / span[-1]) if span[-1] > 0 else None
    starts = np.flatnonzero(valid)
    means = (amount[ends[valid]] - amount[starts]) / (span[ends[valid]] - span[starts])
    return float(means.max())


def member_role(secondary: np.ndarray) -> tuple[str | None, list[str]]:
    """The replica-set role the window shows (None: a standalone server, or not recorded), and
    the notes that say what follows from it."""
    known = secondary[np.isfinite(secondary)]
    if known.size == 0:
        return None, []
    share = float(known.mean())
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


def pick_disk(d: pd.DataFrame, devices: Sequence[str]) -> str | None:
    """The data disk: the recorder's own mapping of dbPath to disks, else the disk that wrote the
    most (FTDC keeps every physical disk of the host)."""
    disks = [c[len("disk.") : -len(".wmb_s")] for c in d.columns if c.startswith("disk.") and c.endswith(".wmb_s")]
    for dev in devices:
        if dev in disks:
            return dev
    if not disks:
        return None
    dt = d["dt"].to_numpy(dtype="float64")
    return max(disks, key=lambda dev: float(np.nansum(d[f"disk.{dev}.wmb_s"].to_numpy(dtype="float64") * dt)))
