"""The verdict: a severity and the findings behind it."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ckptdiag.analysis.episode import Episode
from ckptdiag.analysis.episode_table import Episodes
from ckptdiag.analysis.results import EvictionSummary, OtherStall
from ckptdiag.analysis.thresholds import (
    CRITICAL_MIN_STALLS,
    CRITICAL_STALL_SHARE,
    HURT_OPS_RATIO,
    LOAD_BEFORE_S,
    MIN_BASELINE_OPS,
    UTIL_SATURATED_PCT,
    WARN_HURT_SHARE,
)
from ckptdiag.model.engine_config import EvictionSettings

NO_LOAD = f"no load in the {LOAD_BEFORE_S:g} s before it (under {MIN_BASELINE_OPS:g} ops/s): nothing to interrupt"
GONE = "load stopped with it and did not come back"
CUT_OFF = "still running when the window ended: judged on the seconds seen, and never alone the verdict"


def hurts(e: Episode) -> bool:
    """Short of a stall, did this episode cost throughput? (A latency spike alone is reported,
    not judged: p99 rises in most checkpoints of a healthy server too; a load that stopped with
    it and stayed stopped is a client that went away, not a cost.)"""
    ops = e.impact.ops_ratio
    return e.stall or (ops is not None and ops <= HURT_OPS_RATIO and GONE not in e.reasons)


def hurting(episodes: Episodes) -> np.ndarray:
    """:func:`hurts` of every episode, as a bool array (read from the columns)."""
    ops = episodes.floats("impact.ops_ratio")
    gone = episodes.matching("impact.reasons", lambda reasons: GONE in reasons)
    with np.errstate(invalid="ignore"):
        out: np.ndarray = episodes.flags("impact.stall") | ((ops <= HURT_OPS_RATIO) & ~gone)
    return out


def disk_bursts(episodes: Episodes) -> np.ndarray:
    """Which episodes are disk write bursts (found without checkpoint statistics), not checkpoints."""
    return episodes.matching("evidence", lambda evidence: evidence == "disk-burst")


def hurting_checkpoints(episodes: Episodes) -> np.ndarray:
    """:func:`hurting`, of the checkpoints (not the disk write bursts found without statistics)."""
    out: np.ndarray = hurting(episodes) & ~disk_bursts(episodes)
    return out


def _severity(episodes: Episodes) -> str:
    # a checkpoint cut off by the window's end was judged on part of it: it never alone makes the
    # verdict critical (a live run's duration can end in the middle of any checkpoint)
    finished = episodes.known("end")
    stall = episodes.flags("impact.stall")
    n = int(finished.sum())
    stalls = int((stall & finished).sum())
    hurt = int((hurting(episodes) & finished).sum())
    if n and stalls and (stalls >= max(CRITICAL_MIN_STALLS, CRITICAL_STALL_SHARE * n) or (n == 1 and stalls == 1)):
        return "critical"
    if stall.any() or (n and hurt >= WARN_HURT_SHARE * n and hurt >= 2):
        return "warn"
    return "ok"


def verdict(
    episodes: Episodes, eviction: EvictionSummary, settings: EvictionSettings, others: Sequence[OtherStall]
) -> tuple[str, tuple[str, ...]]:
    """The severity and the findings behind it: the episodes' cost, eviction pressure, then stalls
    while no checkpoint ran (at most a warning: they are not the checkpoints')."""
    findings: list[str] = []
    n = len(episodes)
    severity = _severity(episodes)
    if n:
        stalls = int(episodes.flags("impact.stall").sum())
        hurt = int(hurting(episodes).sum())
        findings.append(f"{stalls:,} of {n:,} checkpoints stalled the server; {hurt:,} cost throughput")
    saturated = int((np.nan_to_num(episodes.floats("impact.util_pct_peak")) >= UTIL_SATURATED_PCT).sum())
    if saturated:
        findings.append(f"the data disk was {UTIL_SATURATED_PCT:.0f} %+ busy in {saturated:,} of {n:,} checkpoints")
    if eviction.seconds_over_dirty_trigger:
        made = (
            "application threads are made to evict"
            if eviction.app_evicted_pages or eviction.app_wait_s
            else "yet application threads evicted nothing and waited for nothing"
        )
        findings.append(
            f"dirty cache at or over the dirty trigger ({settings.dirty_trigger.number:g} %) for "
            f"{eviction.seconds_over_dirty_trigger:.0f} s: {made}"
        )
    if eviction.app_evicted_pages:
        findings.append(f"application threads evicted {eviction.app_evicted_pages:,.0f} pages")
    if severity == "ok" and (eviction.seconds_over_dirty_trigger or eviction.app_evicted_pages):
        severity = "warn"
    if others:
        at_updates = sum(o.updates_at_target for o in others)
        findings.append(
            f"writes stalled {len(others)} time{'s' if len(others) != 1 else ''} while no checkpoint ran"
            + (f"; {at_updates} with the updates in cache at their eviction target" if at_updates else "")
        )
        if severity == "ok":
            severity = "warn"
    return severity, tuple(findings)


def cost_key(e: Episode) -> tuple[int, float, float, float]:
    """Sort key, worst first: a stall, then the lowest throughput ratio, the highest latency
    ratio, the longest."""
    m = e.impact
    return (
        0 if e.stall else 1,
        m.ops_ratio if m.ops_ratio is not None else 2.0,
        -(m.write_latency_ratio or 0.0),
        -(e.duration_s or 0.0),
    )


def listed_count(top: int | None, default: int, total: int) -> int:
    """How many episodes a format lists: ``default`` unless ``--top`` says (0: every one).

    >>> listed_count(None, 25, 100), listed_count(5, 25, 100), listed_count(0, 25, 100)
    (25, 5, 100)
    """
    return default if top is None else top or total


def worst_episodes(episodes: Episodes, limit: int) -> tuple[Episode, ...]:
    """The ``limit`` worst episodes (stalls first, then the costliest: :func:`cost_key`, ties in
    time order), in time order; every one when there are no more than that. The tables and the
    JSON list these, never just the latest."""
    if len(episodes) <= limit:
        return tuple(episodes)
    return tuple(episodes.take(worst_rows(episodes, limit)))


def worst_rows(episodes: Episodes, limit: int) -> np.ndarray:
    """Where the ``limit`` worst episodes are (by :func:`cost_key`, ties in time order), in time order."""
    ops = episodes.floats("impact.ops_ratio")
    keys = (  # cost_key's, least significant first
        -np.nan_to_num(episodes.floats("duration_s")),
        -np.nan_to_num(episodes.floats("impact.write_latency_ratio")),
        np.where(episodes.known("impact.ops_ratio"), ops, 2.0),
        ~episodes.flags("impact.stall"),
    )
    chosen: np.ndarray = np.sort(np.lexsort(keys)[:limit])  # lexsort is stable: ties keep time order
    return chosen
