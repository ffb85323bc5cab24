"""Stalls while no checkpoint ran: the episodes' yardstick applied to the rest of the window."""

from __future__ import annotations

import numpy as np

from ckptdiag.analysis.columns import Columns
from ckptdiag.analysis.results import Baseline, OtherStall
from ckptdiag.analysis.stats import nanmax, nanmean, nanmedian, nanmin, ratio
from ckptdiag.analysis.thresholds import (
    HOST_BUSY_PCT,
    MIN_BASELINE_OPS,
    RECOVERY_RATIO,
    RECOVERY_WINDOW_S,
    STALL_LATENCY_RATIO,
    STALL_OPS_RATIO,
    STALL_WAIT_MS,
    STALL_WAIT_RATIO,
    UPDATES_NEAR_TARGET,
)
from ckptdiag.model.engine_config import EvictionSettings

# the operations held up by a stall complete in the seconds after it: their latency shows the wait
LATENCY_SAMPLES_AFTER = 2


def other_stalls(
    cols: Columns, in_episode: np.ndarray, whole: Baseline, settings: EvictionSettings, own: slice = slice(None)
) -> tuple[OtherStall, ...]:
    """Runs of samples away from every checkpoint (``in_episode`` False) that stall by the
    episodes' own yardstick, against the whole window's baseline: writes at most STALL_OPS_RATIO
    of it with latency up STALL_LATENCY_RATIO or nothing completing, or writes frozen (latency
    STALL_WAIT_MS and STALL_WAIT_RATIO times the baseline or more); the load there before and
    back within RECOVERY_WINDOW_S; and, where latency is measured, operations that waited (latency
    up STALL_LATENCY_RATIO in the run or as it ends): a client that pauses is not a stall. Only
    runs in the ``own`` rows (a block's) are read; the others are context for before and after."""
    t, ops = cols.t, cols.ops_s
    base_ops = whole.ops_s
    if base_ops is None or base_ops < MIN_BASELINE_OPS or t.size < 3:
        return ()
    use_p99 = whole.write_p99_ms is not None and bool(np.isfinite(cols.write_p99_ms).any())
    lat, base_lat = (cols.write_p99_ms, whole.write_p99_ms) if use_p99 else (cols.write_lat_ms, whole.write_lat_ms)
    with np.errstate(invalid="ignore"):
        low = ops <= STALL_OPS_RATIO * base_ops
        none = np.zeros(t.size, dtype=bool)
        slow = (ops == 0) | (lat >= STALL_LATENCY_RATIO * base_lat if base_lat else none)
        # writes froze (the episodes' rule, analysis/impact.py), in a second that served no more
        # than the baseline: the one after a freeze serves its backlog, the freeze was before it
        no_backlog = ops <= base_ops
        froze = no_backlog & (lat >= STALL_WAIT_MS) & (lat >= STALL_WAIT_RATIO * base_lat) if base_lat else none
    measured = bool(np.isfinite(lat).any())
    flagged = np.zeros(t.size, dtype=bool)
    flagged[own] = (((low & slow) | froze) & ~in_episode)[own]
    flagged[0] = False  # the first sample has no interval
    edges = np.flatnonzero(np.diff(np.concatenate(([0], flagged.astype(np.int8), [0]))))
    out: list[OtherStall] = []
    for lo, hi in zip(edges[::2], edges[1::2], strict=True):  # rows lo..hi-1
        after = nanmedian(ops[hi : int(np.searchsorted(t, t[hi - 1] + RECOVERY_WINDOW_S, side="right"))])
        if after is None or after < RECOVERY_RATIO * base_ops:
            continue  # the load went away (or the window ends before it is seen back): not a stall
        before = nanmean(ops[int(np.searchsorted(t, t[lo - 1] - RECOVERY_WINDOW_S, side="left")) : lo - 1])
        if before is None or before < RECOVERY_RATIO * base_ops:
            continue  # the load had not begun: an idle stretch, not a stall
        waited = nanmax(lat[lo : hi + LATENCY_SAMPLES_AFTER])
        if measured and base_lat and (waited is None or waited < STALL_LATENCY_RATIO * base_lat):
            continue  # nothing waited: the operations that came after were as quick as usual (a client pause)
        out.append(_stall(cols, int(lo), int(hi), lat, base_lat, "p99" if use_p99 else "mean", whole, settings))
    return tuple(out)


def _stall(
    cols: Columns,
    lo: int,
    hi: int,
    lat: np.ndarray,
    base_lat: float | None,
    kind: str,
    whole: Baseline,
    settings: EvictionSettings,
) -> OtherStall:
    """The stall over rows lo..hi-1, with what the server's own counters showed during it."""
    rows = slice(lo, hi)
    # the sample before too: at 1 Hz the eviction that froze writes began in the interval before
    updates_peak = nanmax(cols.updates_pct[max(lo - 2, 0) : hi])
    dirty_peak = nanmax(cols.dirty_pct[rows])
    app_evicted = float(np.nansum(cols.app_evict[rows]))
    app_wait = float(np.nansum(cols.app_wait_ms[rows]))
    queued = nanmax(cols.queue_writers[rows])
    updates_target = settings.updates_target.number
    dirty_trigger = settings.dirty_trigger.number
    at_updates = updates_peak is not None and updates_peak >= UPDATES_NEAR_TARGET * updates_target
    seen = []  # evidence, not proof of cause
    if at_updates:
        seen.append(f"updates in cache at the eviction updates target ({updates_target:g} %)")
    if dirty_peak is not None and dirty_peak >= dirty_trigger:
        seen.append(f"dirty cache at the dirty trigger ({dirty_trigger:g} %)")
    if app_evicted > 0 or app_wait > 0:
        seen.append("application threads evicting or waiting for cache")
    if queued:
        seen.append("writers queued for tickets")
    cpu = nanmax(cols.host_cpu_pct[rows])
    if cpu is not None and cpu >= HOST_BUSY_PCT:
        seen.append(f"the host's CPUs {cpu:.0f} % busy (all processes): the server may have waited for a CPU")
    t = cols.t
    return OtherStall(
        start=float(t[lo - 1]),
        end=float(t[hi - 1]),
        duration_s=float(t[hi - 1] - t[lo - 1]),
        ops_ratio=ratio(nanmin(cols.ops_s[rows]), whole.ops_s),
        write_latency_ratio=ratio(nanmax(lat[rows]), base_lat),
        write_latency_kind=kind,
        app_evicted_pages=app_evicted,
        app_wait_ms=app_wait,
        dirty_pct_peak=dirty_peak,
        updates_pct_peak=updates_peak,
        updates_at_target=at_updates,
        queued_writers_max=queued,
        seen=tuple(seen),
    )
