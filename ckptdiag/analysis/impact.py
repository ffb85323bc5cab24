"""What each checkpoint cost, against the baseline of the load it interrupted."""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from ckptdiag.analysis.baseline import local_baseline
from ckptdiag.analysis.columns import Columns
from ckptdiag.analysis.results import Baseline, Episode, Impact
from ckptdiag.analysis.stats import nanmax, nanmean, nanmedian, nanmin, nansum, ratio
from ckptdiag.analysis.thresholds import (
    IMPACT_GRACE_S,
    MIN_BASELINE_OPS,
    RECOVERY_RATIO,
    RECOVERY_WINDOW_S,
    STALL_APP_WAIT_MS,
    STALL_LATENCY_RATIO,
    STALL_OPS_RATIO,
)
from ckptdiag.analysis.verdict import GONE


def assess(e: Episode, cols: Columns, base_rows: np.ndarray, whole: Baseline) -> Episode:
    """``e`` with its impact, read over the samples whose interval it touches plus one second.

    Contract: throughput and latency are compared with :func:`local_baseline`; throughput only
    where there was load to interrupt (the ``RECOVERY_WINDOW_S`` before it averages
    ``MIN_BASELINE_OPS`` or more: a checkpoint of an idle server, or of one whose load has not
    begun, costs no throughput, whatever the busy hours' baseline). The episode is a
    **stall** when its worst second keeps at most ``STALL_OPS_RATIO`` of the baseline's operations
    while write latency is ``STALL_LATENCY_RATIO`` times the baseline or more (or no write
    completed), on a server doing at least ``MIN_BASELINE_OPS`` operations a second, and the load
    comes back within ``RECOVERY_WINDOW_S`` (else the client went away: named, not a stall); or
    when application threads waited ``STALL_APP_WAIT_MS`` or more for the cache during it.
    """
    t = cols.t
    end = e.end if e.end is not None else float(t[-1])
    lo = max(int(np.searchsorted(t, e.start, side="right")), 1)
    hi = min(int(np.searchsorted(t, end + IMPACT_GRACE_S, side="left")), t.size - 1)
    if hi < lo:
        hi = lo = min(lo, t.size - 1)
    rows = slice(lo, hi + 1)
    base = local_baseline(cols, base_rows, whole, e.start, end)
    impact = _figures(cols, rows, base)
    after_rows = slice(
        int(np.searchsorted(t, end + IMPACT_GRACE_S, side="right")),
        int(np.searchsorted(t, end + IMPACT_GRACE_S + RECOVERY_WINDOW_S, side="right")),
    )
    after = cols.ops_s[after_rows]
    before = nanmean(cols.ops_s[int(np.searchsorted(t, e.start - RECOVERY_WINDOW_S, side="right")) : lo])
    # the load it interrupted is the load before it (the window's start: the load after it)
    load = before if before is not None else nanmean(after)
    if load is not None and load < MIN_BASELINE_OPS:  # idle (or not yet busy): nothing to interrupt
        impact = replace(impact, ops_ratio=None, reasons=("no load to interrupt",))
    still_waiting = _waiting(cols, after_rows, base, impact.write_latency_kind)
    lag = cols.repl_lag_s
    if np.isfinite(lag[lo - 1]) and np.isfinite(lag[rows]).any():
        impact = replace(impact, repl_lag_growth_s=float(np.nanmax(lag[rows]) - lag[lo - 1]))
    return replace(e, rows=(lo, hi), impact=_judge(replace(impact, ops_s_after=nanmedian(after)), still_waiting))


def _waiting(cols: Columns, rows: slice, base: Baseline, kind: str | None) -> bool:
    """Do the operations completing in ``rows`` show a wait (latency STALL_LATENCY_RATIO x the baseline)?"""
    lat, base_lat = (cols.write_p99_ms, base.write_p99_ms) if kind == "p99" else (cols.write_lat_ms, base.write_lat_ms)
    peak = nanmax(lat[rows])
    return bool(base_lat) and peak is not None and peak >= STALL_LATENCY_RATIO * (base_lat or 0)


def _figures(cols: Columns, rows: slice, base: Baseline) -> Impact:
    """The episode's figures over ``rows`` against ``base``."""
    base_ops = base.ops_s
    worst_ops = nanmin(cols.ops_s[rows])
    p99 = nanmax(cols.write_p99_ms[rows])
    mean_peak = nanmax(cols.write_lat_ms[rows])
    use_p99 = p99 is not None and bool(base.write_p99_ms)
    return Impact(
        ops_s_baseline=base_ops,
        ops_s_min=worst_ops,
        ops_ratio=ratio(worst_ops, base_ops) if base_ops and base_ops >= MIN_BASELINE_OPS else None,
        write_latency_ratio=ratio(p99, base.write_p99_ms) if use_p99 else ratio(mean_peak, base.write_lat_ms),
        write_latency_kind="p99" if use_p99 else "mean",
        write_p99_ms_peak=p99,
        write_latency_ms_peak=mean_peak,
        read_latency_ratio=ratio(nanmax(cols.read_lat_ms[rows]), base.read_lat_ms),
        write_mb_s_peak=nanmax(cols.disk_wmb_s[rows]),
        w_s_peak=nanmax(cols.disk_w_s[rows]),
        util_pct_peak=nanmax(cols.disk_util_pct[rows]),
        await_ms_peak=nanmax(cols.disk_w_await_ms[rows]),
        aqu_sz_peak=nanmax(cols.disk_aqu_sz[rows]),
        app_evicted_pages=nansum(cols.app_evict[rows]),
        app_wait_ms=nansum(cols.app_wait_ms[rows]),
        dirty_pct_peak=nanmax(cols.dirty_pct[rows]),
        write_tickets_available_min=nanmin(cols.wtickets_avail[rows]),
        queued_writers_max=nanmax(cols.queue_writers[rows]),
        throttled_ms=nansum(cols.throttle_ms[rows]) if np.isfinite(cols.throttle_ms[rows]).any() else None,
    )


def _judge(m: Impact, still_waiting: bool) -> Impact:
    """The stall verdict on an episode's figures (see :func:`assess`); ``still_waiting``: the
    operations completing after it still show the wait (the stall goes on: back-to-back
    checkpoints), so low throughput after it is not a client that went away."""
    reasons: list[str] = list(m.reasons)
    stall = False
    base_ops = m.ops_s_baseline
    # the load must come back after it: operations that stop with a checkpoint and stay stopped,
    # nothing waiting, are a client that went away, not a stall
    recovered = (
        m.ops_s_after is None or (base_ops is not None and m.ops_s_after >= RECOVERY_RATIO * base_ops) or still_waiting
    )
    no_writes = m.ops_s_min is not None and m.ops_s_min == 0
    slow = (m.write_latency_ratio is not None and m.write_latency_ratio >= STALL_LATENCY_RATIO) or no_writes
    if m.ops_ratio is not None and m.ops_ratio <= STALL_OPS_RATIO and slow:
        if recovered:
            stall = True
            reasons.append("throughput and latency")
        else:
            reasons.append(GONE)
    if (m.app_wait_ms or 0) >= STALL_APP_WAIT_MS:
        stall = True
        reasons.append("application threads waited for cache")
    return replace(m, stall=stall, reasons=tuple(reasons))
