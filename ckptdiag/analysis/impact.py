"""What each checkpoint cost, against the baseline of the load it interrupted.

Every figure is read for all of a block's episodes at once, a reduction a figure over their row
spans (a day has 1,440 episodes, a full FTDC directory ~70,000: a numpy call per episode per
figure cost most of the diagnosis); only the verdict itself is made episode by episode.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ckptdiag.analysis.baseline import local_baselines
from ckptdiag.analysis.columns import Columns
from ckptdiag.analysis.results import Baseline, Episode, Impact
from ckptdiag.analysis.stats import ratio, sums_before, time_weighted_mean
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


def assess_all(
    found: Sequence[Episode], cols: Columns, base_rows: np.ndarray, whole: Baseline, offset: int = 0
) -> tuple[Episode, ...]:
    """Each episode with its impact, read over the samples whose interval it touches plus one
    second (its ``rows`` are those samples, numbered from ``offset``).

    Contract: throughput and latency are compared with :func:`local_baselines`; throughput only
    where there was load to interrupt (the ``LOAD_BEFORE_S`` before it average, time-weighted,
    ``MIN_BASELINE_OPS`` or more: a checkpoint of an idle server, of one whose load has not begun
    or of one whose batch ended seconds before, costs no throughput, whatever the busy hours'
    baseline). The episode is a
    **stall** when its worst second keeps at most ``STALL_OPS_RATIO`` of the baseline's operations
    while write latency is ``STALL_LATENCY_RATIO`` times the baseline or more (or no write
    completed), on a server doing at least ``MIN_BASELINE_OPS`` operations a second, and the load
    comes back within ``RECOVERY_WINDOW_S`` (else the client went away: named, not a stall); or
    when application threads waited ``STALL_APP_WAIT_MS`` or more for the cache during it.
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
    reads = _Reads(cols, starts, ends, lo, hi)
    bases = local_baselines(cols, base_rows, whole, starts, ends)
    out = []
    for k, e in enumerate(found):
        base = bases[k]
        impact = _impact(e, k, reads, base, seen=e.end is not None and float(t[-1]) >= reads.recovered_by[k])
        rows = (int(lo[k]) + offset, int(hi[k]) + offset)
        out.append(
            Episode(
                e.start,
                e.end,
                e.duration_s,
                e.bytes_written,
                e.evidence,
                e.exact_duration,
                e.truncated,
                e.shared,
                rows,
                impact,
                e.start_earliest,
                e.start_latest,
            )
        )
    return tuple(out)


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
    "repl_lag_s",
)
LOWEST = ("ops_s", "wtickets_avail")
SUMMED = ("app_evict", "app_wait_ms", "throttle_ms")


class _Reads:
    """Every episode's figures, as lists indexed by episode (None where nothing was read): the
    peaks, lows and sums over its rows ``lo`` to ``hi``, the load before it, the most operations
    from its worst second to ``RECOVERY_WINDOW_S`` after it, the latency peaks after it."""

    def __init__(self, cols: Columns, starts: np.ndarray, ends: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> None:
        t = cols.t
        recovered_by = ends + IMPACT_GRACE_S + RECOVERY_WINDOW_S  # when the load must be back
        self.recovered_by = recovered_by.tolist()
        horizon = np.searchsorted(t, recovered_by, side="right")
        after = np.searchsorted(t, ends + IMPACT_GRACE_S, side="right")
        self.after = (after, horizon)
        self.span: dict[str, list[float | None]] = {}
        for names, reduce in ((HIGHEST, np.fmax), (LOWEST, np.fmin), (SUMMED, np.add)):
            for name in names:
                self.span[name] = _reduced(getattr(cols, name), lo, hi + 1, reduce)
        self.lag_before = _listed(cols.repl_lag_s[lo - 1])
        self.load = self._load(cols, starts, lo)
        self.came_back = self._came_back(cols, lo, hi, horizon)
        self.p99_after = _reduced(cols.write_p99_ms, after, horizon, np.fmax)
        self.mean_after = _reduced(cols.write_lat_ms, after, horizon, np.fmax)

    def _load(self, cols: Columns, starts: np.ndarray, lo: np.ndarray) -> list[float | None]:
        """The operations a second over the ``LOAD_BEFORE_S`` before each start (row ``lo`` holds
        it), weighted by each sample's interval: at least the one sample before it, however coarse;
        at the window's start (nothing before it), the load after it."""
        ops, dt = cols.ops_s, cols.dt
        ok = np.isfinite(ops) & np.isfinite(dt) & (dt > 0)
        done = sums_before(np.where(ok, ops * dt, 0.0))
        time = sums_before(np.where(ok, dt, 0.0))
        counted = sums_before(ok)
        first = np.maximum(np.minimum(np.searchsorted(cols.t, starts - LOAD_BEFORE_S, side="right"), lo - 1), 1)
        known = (first < lo) & (counted[lo] > counted[np.minimum(first, lo)])
        with np.errstate(invalid="ignore", divide="ignore"):
            load = np.where(known, (done[lo] - done[first]) / (time[lo] - time[first]), np.nan)
        out = _listed(load)
        for k in np.flatnonzero(~known).tolist():  # the window's first checkpoint: the load after it
            rows = slice(int(self.after[0][k]), int(self.after[1][k]))
            out[k] = time_weighted_mean(ops[rows], dt[rows])
        return out

    def _came_back(self, cols: Columns, lo: np.ndarray, hi: np.ndarray, horizon: np.ndarray) -> list[float | None]:
        """The most operations a second from each episode's worst second (its first lowest) to
        ``horizon``: did the load come back? Within the checkpoint counts (a burst that stalls for
        half a second of an 8 s checkpoint and runs on is not a client that went away)."""
        ops = cols.ops_s
        worst = np.asarray([np.nan if v is None else v for v in self.span["ops_s"]], dtype=np.float64)
        out: list[float | None] = [None] * lo.size
        has = np.flatnonzero(np.isfinite(worst))
        if not has.size:
            return out
        at = _first_lowest(ops, lo[has], hi[has], worst[has])
        peaks = _reduced(ops, at + 1, horizon[has], np.fmax)
        for j, k in enumerate(has.tolist()):
            out[k] = peaks[j]
        return out


SHORT_SPAN = 64  # rows: spans this long or shorter are searched together, longer ones one by one


def _first_lowest(values: np.ndarray, lo: np.ndarray, hi: np.ndarray, lowest: np.ndarray) -> np.ndarray:
    """The first row of each span ``lo`` to ``hi`` (inclusive) holding its ``lowest`` value."""
    at = np.empty(lo.size, dtype=np.int64)
    size = hi - lo + 1
    short = np.flatnonzero(size <= SHORT_SPAN)
    if short.size:
        width = int(size[short].max())
        rows = np.minimum(lo[short, None] + np.arange(width), values.size - 1)
        inside = np.arange(width) < size[short, None]
        hit = (values[rows] == lowest[short, None]) & inside
        at[short] = lo[short] + np.argmax(hit, axis=1)
    for k in np.flatnonzero(size > SHORT_SPAN).tolist():
        at[k] = lo[k] + int(np.argmax(values[lo[k] : hi[k] + 1] == lowest[k]))
    return at


def _reduced(values: np.ndarray, lo: np.ndarray, hi: np.ndarray, reduce: np.ufunc) -> list[float | None]:
    """``reduce`` over each ``[lo, hi)``, NaN passed over; None where a span has no finite value
    (or no row)."""
    if not lo.size:
        return []
    finite = np.append(np.where(np.isfinite(values), values, np.nan), np.nan)
    held = lo < hi
    bounds = np.empty(2 * lo.size, dtype=np.int64)
    # an empty span reads the NaN past the end (reduceat needs every start inside the array)
    bounds[0::2], bounds[1::2] = np.where(held, lo, values.size), np.where(held, hi, values.size)
    if reduce is np.add:
        counted = np.add.reduceat(np.isfinite(finite).astype(np.int64), bounds)[0::2]
        sums = np.add.reduceat(np.nan_to_num(finite), bounds)[0::2]
        return _listed(np.where(counted > 0, sums, np.nan))
    return _listed(reduce.reduceat(finite, bounds)[0::2])


def _listed(values: np.ndarray) -> list[float | None]:
    return [None if v != v else v for v in np.asarray(values, dtype=np.float64).tolist()]


def _impact(e: Episode, k: int, r: _Reads, base: Baseline, *, seen: bool) -> Impact:
    """Episode ``k``'s figures against ``base`` and its verdict; ``seen``: the window ran on
    until the load had to be back."""
    span = r.span
    load = r.load[k]
    idle = load is not None and load < MIN_BASELINE_OPS  # idle (or not yet busy): nothing to interrupt
    came_back = r.came_back[k]
    if not seen and (came_back is None or base.ops_s is None or came_back < RECOVERY_RATIO * base.ops_s):
        came_back = None  # the window ended before the load could be seen back: not a client that went away
    base_ops = base.ops_s
    worst_ops = span["ops_s"][k]
    p99, mean_peak = span["write_p99_ms"][k], span["write_lat_ms"][k]
    use_p99 = p99 is not None and bool(base.write_p99_ms)
    ops_ratio = None if idle or not base_ops or base_ops < MIN_BASELINE_OPS else ratio(worst_ops, base_ops)
    lat_ratio = ratio(p99, base.write_p99_ms) if use_p99 else ratio(mean_peak, base.write_lat_ms)
    base_lat = base.write_p99_ms if use_p99 else base.write_lat_ms
    after_peak = r.p99_after[k] if use_p99 else r.mean_after[k]
    still_waiting = bool(base_lat) and after_peak is not None and after_peak >= STALL_LATENCY_RATIO * (base_lat or 0)
    lag, before = span["repl_lag_s"][k], r.lag_before[k]
    app_wait = span["app_wait_ms"][k] or 0.0
    stall, reasons = _verdict(
        base_ops, came_back, worst_ops, lat_ratio, ops_ratio, app_wait, idle=idle, waiting=still_waiting
    )
    if e.end is None:  # cut off by the window's end: what came after it was never seen
        reasons = (*reasons, CUT_OFF)
    return Impact(
        ops_s_baseline=base_ops,
        ops_s_min=worst_ops,
        ops_ratio=ops_ratio,
        ops_s_after=came_back,
        write_latency_ratio=lat_ratio,
        write_latency_kind="p99" if use_p99 else "mean",
        write_p99_ms_peak=p99,
        write_latency_ms_peak=mean_peak,
        read_latency_ratio=ratio(span["read_lat_ms"][k], base.read_lat_ms),
        write_mb_s_peak=span["disk_wmb_s"][k],
        w_s_peak=span["disk_w_s"][k],
        util_pct_peak=span["disk_util_pct"][k],
        await_ms_peak=span["disk_w_await_ms"][k],
        aqu_sz_peak=span["disk_aqu_sz"][k],
        app_evicted_pages=span["app_evict"][k] or 0.0,
        app_wait_ms=app_wait,
        dirty_pct_peak=span["dirty_pct"][k],
        write_tickets_available_min=span["wtickets_avail"][k],
        queued_writers_max=span["queue_writers"][k],
        repl_lag_growth_s=lag - before if lag is not None and before is not None else None,
        throttled_ms=span["throttle_ms"][k],  # a sum, None where io_capacity's wait was not read
        stall=stall,
        reasons=reasons,
    )


def _verdict(
    base_ops: float | None,
    after: float | None,
    ops_min: float | None,
    lat_ratio: float | None,
    ops_ratio: float | None,
    app_wait_ms: float,
    *,
    idle: bool,
    waiting: bool,
) -> tuple[bool, tuple[str, ...]]:
    """The stall verdict on an episode's figures (see :func:`assess_all`); ``waiting``: the
    operations completing after it still show the wait (the stall goes on: back-to-back
    checkpoints), so low throughput after it is not a client that went away."""
    reasons: list[str] = [NO_LOAD] if idle else []
    stall = False
    # the load must come back after it: operations that stop with a checkpoint and stay stopped,
    # nothing waiting, are a client that went away, not a stall
    recovered = after is None or (base_ops is not None and after >= RECOVERY_RATIO * base_ops) or waiting
    no_writes = ops_min is not None and ops_min == 0
    slow = (lat_ratio is not None and lat_ratio >= STALL_LATENCY_RATIO) or no_writes
    if ops_ratio is not None and ops_ratio <= STALL_OPS_RATIO and slow:
        if recovered:
            stall = True
            reasons.append("throughput and latency")
        else:
            reasons.append(GONE)
    if app_wait_ms >= STALL_APP_WAIT_MS:
        stall = True
        reasons.append("application threads waited for cache")
    if not stall and not reasons:
        reasons += _why_not(ops_ratio, lat_ratio, slow)
    return stall, tuple(reasons)


def _why_not(ops_ratio: float | None, lat_ratio: float | None, slow: bool) -> list[str]:
    """Why an episode with load before it is not a stall, in the thresholds' own terms."""
    if ops_ratio is None:
        return [f"under {MIN_BASELINE_OPS:g} ops/s before it: too little load to judge"]
    out = []
    if ops_ratio > STALL_OPS_RATIO:
        out.append(f"throughput held at {ops_ratio:.0%} of the baseline (a stall: {STALL_OPS_RATIO:.0%} or less)")
    if not slow and lat_ratio is None:
        out.append("no write latency figure to set against the baseline")
    elif not slow:
        out.append(f"write latency {lat_ratio:.1f}x the baseline (a stall: {STALL_LATENCY_RATIO:g}x or more)")
    return out
