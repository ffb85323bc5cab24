"""What each checkpoint cost, against the baseline of the load it interrupted."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

import numpy as np

from ckptdiag.analysis.baseline import local_baseline
from ckptdiag.analysis.columns import Columns
from ckptdiag.analysis.results import Baseline, Episode, Impact
from ckptdiag.analysis.stats import nanmax, nansum, ratio, time_weighted_mean
from ckptdiag.analysis.thresholds import (
    IMPACT_GRACE_S,
    LOAD_BEFORE_S,
    MIN_BASELINE_OPS,
    RECOVERY_RATIO,
    RECOVERY_WINDOW_S,
    STALL_APP_WAIT_MS,
    STALL_LATENCY_RATIO,
    STALL_OPS_RATIO,
)
from ckptdiag.analysis.verdict import CUT_OFF, GONE, NO_LOAD


def assess_all(found: Sequence[Episode], cols: Columns, base_rows: np.ndarray, whole: Baseline) -> tuple[Episode, ...]:
    """Each episode with its impact, read over the samples whose interval it touches plus one second.

    Contract: throughput and latency are compared with :func:`local_baseline`; throughput only
    where there was load to interrupt (the ``LOAD_BEFORE_S`` before it average, time-weighted,
    ``MIN_BASELINE_OPS`` or more: a checkpoint of an idle server, of one whose load has not begun
    or of one whose batch ended seconds before, costs no throughput, whatever the busy hours'
    baseline). The episode is a
    **stall** when its worst second keeps at most ``STALL_OPS_RATIO`` of the baseline's operations
    while write latency is ``STALL_LATENCY_RATIO`` times the baseline or more (or no write
    completed), on a server doing at least ``MIN_BASELINE_OPS`` operations a second, and the load
    comes back within ``RECOVERY_WINDOW_S`` (else the client went away: named, not a stall); or
    when application threads waited ``STALL_APP_WAIT_MS`` or more for the cache during it.

    The peaks and lows over every episode's samples are read in one pass a figure (a day has
    1,440 episodes, a full FTDC directory ~70,000: one reduction each per figure cost most of the
    diagnosis).
    """
    if not found:
        return ()
    t = cols.t
    last = t.size - 1
    starts = np.array([e.start for e in found], dtype=np.float64)
    ends = np.array([e.end if e.end is not None else float(t[-1]) for e in found], dtype=np.float64)
    lo = np.maximum(np.searchsorted(t, starts, side="right"), 1)
    hi = np.minimum(np.searchsorted(t, ends + IMPACT_GRACE_S, side="left"), last)
    empty = hi < lo
    lo = np.where(empty, np.minimum(lo, last), lo)
    hi = np.where(empty, lo, hi)
    spans = _Spans(cols, lo, hi + 1)
    return tuple(
        _assess(e, k, int(lo[k]), int(hi[k]), float(ends[k]), spans, cols, base_rows, whole)
        for k, e in enumerate(found)
    )


class _Spans:
    """The highest and lowest finite value of each figure over each episode's samples
    (``[lo, hi)``), for every episode at once; NaN where a span has none."""

    HIGHEST = (
        "write_p99_ms",
        "write_lat_ms",
        "read_lat_ms",
        "disk_wmb_s",
        "disk_w_s",
        "disk_util_pct",
        "disk_w_await_ms",
        "disk_aqu_sz",
        "dirty_pct",
        "queue_writers",
    )
    LOWEST = ("ops_s", "wtickets_avail")

    def __init__(self, cols: Columns, lo: np.ndarray, hi: np.ndarray) -> None:
        bounds = np.empty(2 * lo.size, dtype=np.int64)
        bounds[0::2], bounds[1::2] = lo, hi  # every span is one sample or more: lo < hi
        self.values: dict[str, np.ndarray] = {}
        for names, reduce in ((self.HIGHEST, np.fmax), (self.LOWEST, np.fmin)):
            for name in names:
                column = getattr(cols, name)
                finite = np.append(np.where(np.isfinite(column), column, np.nan), np.nan)
                self.values[name] = reduce.reduceat(finite, bounds)[0::2]  # fmax/fmin pass NaN over

    def get(self, name: str, k: int) -> float | None:
        """The figure over episode ``k``'s span, or None where it has no finite value."""
        value = float(self.values[name][k])
        return None if np.isnan(value) else value


def _assess(
    e: Episode,
    k: int,
    lo: int,
    hi: int,
    end: float,
    spans: _Spans,
    cols: Columns,
    base_rows: np.ndarray,
    whole: Baseline,
) -> Episode:
    """Episode ``k`` (over rows ``lo`` to ``hi``) with its impact: see :func:`assess_all`."""
    t = cols.t
    rows = slice(lo, hi + 1)
    base = local_baseline(cols, base_rows, whole, e.start, end)
    recovered_by = end + IMPACT_GRACE_S + RECOVERY_WINDOW_S  # when the load must be back
    horizon = int(np.searchsorted(t, recovered_by, side="right"))
    after_rows = slice(int(np.searchsorted(t, end + IMPACT_GRACE_S, side="right")), horizon)
    # the load it interrupted is the load just before it (the window's start: the load after it)
    load = _load_before(cols, e.start, lo)
    if load is None:
        load = time_weighted_mean(cols.ops_s[after_rows], cols.dt[after_rows])
    idle = load is not None and load < MIN_BASELINE_OPS  # idle (or not yet busy): nothing to interrupt
    lag = cols.repl_lag_s
    growth = None
    if np.isfinite(lag[lo - 1]) and np.isfinite(lag[rows]).any():
        growth = float(np.nanmax(lag[rows]) - lag[lo - 1])
    came_back = _came_back(cols, rows, horizon)
    seen = e.end is not None and float(t[-1]) >= recovered_by
    if not seen and (came_back is None or base.ops_s is None or came_back < RECOVERY_RATIO * base.ops_s):
        came_back = None  # the window ended before the load could be seen back: not a client that went away
    impact = _figures(cols, rows, base, spans, k, idle=idle, growth=growth, ops_s_after=came_back)
    still_waiting = _waiting(cols, after_rows, base, impact.write_latency_kind)
    judged = _judge(impact, still_waiting)
    if e.end is None:  # cut off by the window's end: what came after it was never seen
        judged = replace(judged, reasons=(*judged.reasons, CUT_OFF))
    return replace(e, rows=(lo, hi), impact=judged)


def _came_back(cols: Columns, rows: slice, horizon: int) -> float | None:
    """The most operations a second from its worst second to ``horizon`` (``RECOVERY_WINDOW_S``
    after it): did the load come back? Within the checkpoint counts (a burst that stalls for half a
    second of an 8 s checkpoint and runs on is not a client that went away); None when the window
    ends first."""
    ops = cols.ops_s[rows]
    if not np.isfinite(ops).any():
        return None
    worst = rows.start + int(np.nanargmin(ops))
    return nanmax(cols.ops_s[worst + 1 : horizon]) if worst + 1 < horizon else None


def _load_before(cols: Columns, start: float, lo: int) -> float | None:
    """The operations a second over the ``LOAD_BEFORE_S`` before ``start`` (row ``lo`` holds it),
    weighted by each sample's interval: at least the one sample before it, however coarse."""
    first = min(int(np.searchsorted(cols.t, start - LOAD_BEFORE_S, side="right")), lo - 1)
    first = max(first, 1)  # row 0 has no interval
    if first >= lo:
        return None
    return time_weighted_mean(cols.ops_s[first:lo], cols.dt[first:lo])


def _waiting(cols: Columns, rows: slice, base: Baseline, kind: str | None) -> bool:
    """Do the operations completing in ``rows`` show a wait (latency STALL_LATENCY_RATIO x the baseline)?"""
    lat, base_lat = (cols.write_p99_ms, base.write_p99_ms) if kind == "p99" else (cols.write_lat_ms, base.write_lat_ms)
    peak = nanmax(lat[rows])
    return bool(base_lat) and peak is not None and peak >= STALL_LATENCY_RATIO * (base_lat or 0)


def _figures(
    cols: Columns,
    rows: slice,
    base: Baseline,
    spans: _Spans,
    k: int,
    *,
    idle: bool,
    growth: float | None,
    ops_s_after: float | None,
) -> Impact:
    """Episode ``k``'s figures over ``rows`` against ``base`` (``idle``: no load to interrupt,
    so no throughput ratio)."""
    base_ops = base.ops_s
    worst_ops = spans.get("ops_s", k)
    p99 = spans.get("write_p99_ms", k)
    mean_peak = spans.get("write_lat_ms", k)
    use_p99 = p99 is not None and bool(base.write_p99_ms)
    ops_ratio = ratio(worst_ops, base_ops) if base_ops and base_ops >= MIN_BASELINE_OPS else None
    return Impact(
        ops_s_baseline=base_ops,
        ops_s_min=worst_ops,
        ops_ratio=None if idle else ops_ratio,
        ops_s_after=ops_s_after,
        write_latency_ratio=ratio(p99, base.write_p99_ms) if use_p99 else ratio(mean_peak, base.write_lat_ms),
        write_latency_kind="p99" if use_p99 else "mean",
        write_p99_ms_peak=p99,
        write_latency_ms_peak=mean_peak,
        read_latency_ratio=ratio(spans.get("read_lat_ms", k), base.read_lat_ms),
        write_mb_s_peak=spans.get("disk_wmb_s", k),
        w_s_peak=spans.get("disk_w_s", k),
        util_pct_peak=spans.get("disk_util_pct", k),
        await_ms_peak=spans.get("disk_w_await_ms", k),
        aqu_sz_peak=spans.get("disk_aqu_sz", k),
        app_evicted_pages=nansum(cols.app_evict[rows]),
        app_wait_ms=nansum(cols.app_wait_ms[rows]),
        dirty_pct_peak=spans.get("dirty_pct", k),
        write_tickets_available_min=spans.get("wtickets_avail", k),
        queued_writers_max=spans.get("queue_writers", k),
        repl_lag_growth_s=growth,
        throttled_ms=nansum(cols.throttle_ms[rows]) if np.isfinite(cols.throttle_ms[rows]).any() else None,
        reasons=(NO_LOAD,) if idle else (),
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
    if not stall and not reasons:
        reasons += _why_not(m, slow)
    return replace(m, stall=stall, reasons=tuple(reasons))


def _why_not(m: Impact, slow: bool) -> list[str]:
    """Why an episode with load before it is not a stall, in the thresholds' own terms."""
    if m.ops_ratio is None:
        return [f"under {MIN_BASELINE_OPS:g} ops/s before it: too little load to judge"]
    out = []
    if m.ops_ratio > STALL_OPS_RATIO:
        out.append(f"throughput held at {m.ops_ratio:.0%} of the baseline (a stall: {STALL_OPS_RATIO:.0%} or less)")
    if not slow and m.write_latency_ratio is None:
        out.append("no write latency figure to set against the baseline")
    elif not slow:
        shown = f"{m.write_latency_ratio:.1f}x the baseline"
        out.append(f"write latency {shown} (a stall: {STALL_LATENCY_RATIO:g}x or more)")
    return out
