"""What each checkpoint cost: the baseline it is measured against, and its impact."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import fields, replace

import numpy as np

from ckptdiag.analysis.columns import Columns
from ckptdiag.analysis.results import Baseline, Episode, Impact
from ckptdiag.analysis.stats import nanmax, nanmedian, nanmin, ratio
from ckptdiag.analysis.thresholds import (
    BASELINE_MIN_SAMPLES,
    BASELINE_WINDOW_S,
    IMPACT_GRACE_S,
    MIN_BASELINE_OPS,
    RECOVERY_RATIO,
    RECOVERY_WINDOW_S,
    STALL_APP_WAIT_MS,
    STALL_LATENCY_RATIO,
    STALL_OPS_RATIO,
)


def near_episodes(t: np.ndarray, episodes: Sequence[Episode], before: float, after: float) -> np.ndarray:
    """Samples whose interval comes within ``before``/``after`` seconds of an episode."""
    mark = np.zeros(t.size + 1, dtype=np.int64)
    for e in episodes:
        end = e.end if e.end is not None else t[-1]
        lo = int(np.searchsorted(t, e.start - before, side="right"))
        hi = int(np.searchsorted(t, end + after, side="left"))
        mark[lo] += 1
        mark[min(hi + 1, t.size)] -= 1
    return np.cumsum(mark[:-1]) > 0


def baseline(cols: Columns, rows: np.ndarray) -> Baseline:
    """The median second over ``rows`` (a boolean mask or row numbers)."""
    return Baseline(
        samples=int(cols.t[rows].size),
        ops_s=nanmedian(cols.ops_s[rows]),
        writes_s=nanmedian(cols.writes_s[rows]),
        write_lat_ms=nanmedian(cols.write_lat_ms[rows]),
        write_p99_ms=nanmedian(cols.write_p99_ms[rows]),
        read_lat_ms=nanmedian(cols.read_lat_ms[rows]),
        disk_write_mb_s=nanmedian(cols.disk_wmb_s[rows]),
        disk_util_pct=nanmedian(cols.disk_util_pct[rows]),
    )


def local_baseline(cols: Columns, base_rows: np.ndarray, whole: Baseline, start: float, end: float) -> Baseline:
    """The load an episode interrupted: the baseline samples of the ``BASELINE_WINDOW_S`` before it,
    else of the window around it; a figure those samples do not give is the whole window's."""
    t = cols.t
    a = int(np.searchsorted(t, start - BASELINE_WINDOW_S))
    b = int(np.searchsorted(t, start))
    if int(base_rows[a:b].sum()) < BASELINE_MIN_SAMPLES:
        b = int(np.searchsorted(t, end + BASELINE_WINDOW_S))
    # only the slice is touched: a day has 1,440 episodes and 86,400 samples
    rows = np.flatnonzero(base_rows[a:b]) + a
    if rows.size < BASELINE_MIN_SAMPLES:
        return whole
    local = baseline(cols, rows)
    return replace(
        local,
        **{f.name: getattr(whole, f.name) for f in fields(Baseline) if getattr(local, f.name) is None},
    )


def assess(e: Episode, cols: Columns, base_rows: np.ndarray, whole: Baseline) -> Episode:
    """``e`` with its impact, read over the samples whose interval it touches plus one second.

    Contract: throughput and latency are compared with :func:`local_baseline`; the episode is a
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
    after_lo = int(np.searchsorted(t, end + IMPACT_GRACE_S, side="right"))
    after_hi = int(np.searchsorted(t, end + IMPACT_GRACE_S + RECOVERY_WINDOW_S, side="right"))
    after = nanmedian(cols.ops_s[after_lo:after_hi])
    return replace(e, rows=(lo, hi), impact=_judge(replace(impact, ops_s_after=after)))


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
        app_evicted_pages=float(np.nansum(cols.app_evict[rows])),
        app_wait_ms=float(np.nansum(cols.app_wait_ms[rows])),
        dirty_pct_peak=nanmax(cols.dirty_pct[rows]),
        write_tickets_available_min=nanmin(cols.wtickets_avail[rows]),
        queued_writers_max=nanmax(cols.queue_writers[rows]),
    )


def _judge(m: Impact) -> Impact:
    """The stall verdict on an episode's figures (see :func:`assess`)."""
    reasons: list[str] = []
    stall = False
    base_ops = m.ops_s_baseline
    # the load must come back after it: operations that stop with a checkpoint and stay stopped
    # are a client that went away, not a stall
    recovered = m.ops_s_after is None or (base_ops is not None and m.ops_s_after >= RECOVERY_RATIO * base_ops)
    no_writes = m.ops_s_min is not None and m.ops_s_min == 0
    slow = (m.write_latency_ratio is not None and m.write_latency_ratio >= STALL_LATENCY_RATIO) or no_writes
    if m.ops_ratio is not None and m.ops_ratio <= STALL_OPS_RATIO and slow:
        if recovered:
            stall = True
            reasons.append("throughput and latency")
        else:
            reasons.append("load stopped with it and did not come back")
    if (m.app_wait_ms or 0) >= STALL_APP_WAIT_MS:
        stall = True
        reasons.append("application threads waited for cache")
    return replace(m, stall=stall, reasons=tuple(reasons))
