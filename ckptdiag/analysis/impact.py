"""What each checkpoint cost, against the baseline of the load it interrupted.

Every figure is read for all of a block's episodes at once, a reduction a figure over their row
spans (a day has 1,440 episodes, a full FTDC directory ~70,000: a numpy call per episode per
figure cost most of the diagnosis), and so is the verdict (arrays of its parts); each episode is
then only given its reasons, in words. The arrays are the columns of the block's
:class:`~ckptdiag.analysis.episode_table.Episodes`: no :class:`Impact` object is built.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

import numpy as np

from ckptdiag.analysis.baseline import LocalFigures, local_figures
from ckptdiag.analysis.columns import Columns
from ckptdiag.analysis.episode_table import Episodes, PhaseArrays
from ckptdiag.analysis.results import Baseline
from ckptdiag.analysis.stats import ratios, sums_before, time_weighted_mean
from ckptdiag.analysis.thresholds import (
    IMPACT_GRACE_S,
    LOAD_BEFORE_S,
    MIN_BASELINE_OPS,
    RECOVERY_RATIO,
    RECOVERY_WINDOW_S,
    STALL_APP_WAIT_MS,
    STALL_LATENCY_RATIO,
    STALL_OPS_RATIO,
    STALL_WAIT_MS,
    STALL_WAIT_RATIO,
)
from ckptdiag.analysis.verdict import CUT_OFF, GONE, NO_LOAD

# the found episodes and the row of each one's last sample -> each one's phases (None: not timed)
PhaseReader = Callable[[Episodes, np.ndarray], PhaseArrays]


def assess_all(
    found: Episodes,
    cols: Columns,
    base_rows: np.ndarray,
    whole: Baseline,
    offset: int = 0,
    phases: PhaseReader | None = None,
) -> Episodes:
    """Each episode with its impact, read over the samples whose interval it touches plus one
    second (its ``rows`` are those samples, numbered from ``offset``), and with ``phases`` read
    at the last of them (built once: a long window has 70,000).

    Contract: throughput and latency are compared with
    :func:`~ckptdiag.analysis.baseline.local_figures`; throughput only where there was load to
    interrupt (the ``LOAD_BEFORE_S`` before it average, time-weighted, ``MIN_BASELINE_OPS`` or
    more: a checkpoint of an idle server, of one whose load has not begun or of one whose batch
    ended seconds before, costs no throughput, whatever the busy hours' baseline). The episode is a
    **stall** by :mod:`~ckptdiag.analysis.thresholds`' rule: its worst second's throughput and write
    latency, or its writes frozen (a one-second freeze sampled once a second falls across two
    intervals, and neither interval's throughput shows it), with the load back after it; or
    application threads waited for the cache.
    """
    if not found:
        return Episodes.of(())
    t = cols.t
    last = t.size - 1
    starts = found.floats("start")
    cut_off = ~found.known("end")
    ends = np.where(cut_off, float(t[-1]), found.floats("end"))
    lo = np.maximum(np.searchsorted(t, starts, side="right"), 1)
    hi = np.minimum(np.searchsorted(t, ends + IMPACT_GRACE_S, side="left"), last)
    empty = hi < lo
    lo = np.where(empty, np.minimum(lo, last), lo)
    hi = np.where(empty, lo, hi)
    reads = _Reads(cols, starts, ends, lo, hi)
    local = local_figures(cols, base_rows, whole, starts, ends)
    impacts = _impacts(reads, local, seen=~cut_off & (float(t[-1]) >= reads.recovered_by), cut_off=cut_off)
    timed = phases(found, hi) if phases is not None else PhaseArrays(np.zeros(len(found), dtype=bool), {})
    return Episodes.judged(found, np.stack([lo + offset, hi + offset], axis=1), impacts, timed)


DISK_PEAKS = {  # an Impact's disk peaks, and the figures they are the highest of
    "write_mb_s_peak": "disk_wmb_s",
    "w_s_peak": "disk_w_s",
    "util_pct_peak": "disk_util_pct",
    "await_ms_peak": "disk_w_await_ms",
    "aqu_sz_peak": "disk_aqu_sz",
}
HIGHEST = (
    "write_p99_ms",
    "write_lat_ms",
    "read_lat_ms",
    *DISK_PEAKS.values(),
    "dirty_pct",
    "queue_writers",
    "repl_lag_s",
)
LOWEST = ("ops_s", "wtickets_avail")
SUMMED = ("app_evict", "app_wait_ms", "throttle_ms")


class _Reads:
    """Every episode's figures, an array each indexed by episode (NaN where nothing was read):
    the peaks, lows and sums over its rows ``lo`` to ``hi``, the load before it, the most
    operations from its worst second to ``RECOVERY_WINDOW_S`` after it, the latency peaks after it."""

    def __init__(self, cols: Columns, starts: np.ndarray, ends: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> None:
        t = cols.t
        self.recovered_by = ends + IMPACT_GRACE_S + RECOVERY_WINDOW_S  # when the load must be back
        horizon = np.searchsorted(t, self.recovered_by, side="right")
        after = np.searchsorted(t, ends + IMPACT_GRACE_S, side="right")
        self.after = (after, horizon)
        self.span: dict[str, np.ndarray] = {}
        for names, reduce in ((HIGHEST, np.fmax), (LOWEST, np.fmin), (SUMMED, np.add)):
            for name in names:
                self.span[name] = _reduced(getattr(cols, name), lo, hi + 1, reduce)
        self.lag_before = cols.repl_lag_s[lo - 1].astype(np.float64)
        self.load = self._load(cols, starts, lo)
        self.came_back = self._came_back(cols, lo, hi, horizon)
        self.p99_after = _reduced(cols.write_p99_ms, after, horizon, np.fmax)
        self.mean_after = _reduced(cols.write_lat_ms, after, horizon, np.fmax)

    def _load(self, cols: Columns, starts: np.ndarray, lo: np.ndarray) -> np.ndarray:
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
            load: np.ndarray = np.where(known, (done[lo] - done[first]) / (time[lo] - time[first]), np.nan)
        for k in np.flatnonzero(~known).tolist():  # the window's first checkpoint: the load after it
            rows = slice(int(self.after[0][k]), int(self.after[1][k]))
            mean = time_weighted_mean(ops[rows], dt[rows])
            load[k] = np.nan if mean is None else mean
        return load

    def _came_back(self, cols: Columns, lo: np.ndarray, hi: np.ndarray, horizon: np.ndarray) -> np.ndarray:
        """The most operations a second from each episode's worst second (its first lowest) to
        ``horizon``: did the load come back? Within the checkpoint counts (a burst that stalls for
        half a second of an 8 s checkpoint and runs on is not a client that went away)."""
        worst = self.span["ops_s"]
        out = np.full(lo.size, np.nan)
        has = np.flatnonzero(np.isfinite(worst))
        if has.size:
            at = _first_lowest(cols.ops_s, lo[has], hi[has], worst[has])
            out[has] = _reduced(cols.ops_s, at + 1, horizon[has], np.fmax)
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


def _reduced(values: np.ndarray, lo: np.ndarray, hi: np.ndarray, reduce: np.ufunc) -> np.ndarray:
    """``reduce`` over each ``[lo, hi)``, NaN passed over; NaN where a span has no finite value
    (or no row)."""
    if not lo.size:
        return np.empty(0)
    finite = np.append(np.where(np.isfinite(values), values, np.nan), np.nan)
    held = lo < hi
    bounds = np.empty(2 * lo.size, dtype=np.int64)
    # an empty span reads the NaN past the end (reduceat needs every start inside the array)
    bounds[0::2], bounds[1::2] = np.where(held, lo, values.size), np.where(held, hi, values.size)
    if reduce is np.add:
        counted = np.add.reduceat(np.isfinite(finite).astype(np.int64), bounds)[0::2]
        sums = np.add.reduceat(np.nan_to_num(finite), bounds)[0::2]
        summed: np.ndarray = np.where(counted > 0, sums, np.nan)
        return summed
    reduced: np.ndarray = reduce.reduceat(finite, bounds)[0::2].astype(np.float64)
    return reduced


def _listed(values: np.ndarray) -> list[float | None]:
    """The values as Python floats, NaN as None (as an Impact holds them)."""
    return [None if v != v else v for v in np.asarray(values, dtype=np.float64).tolist()]


@dataclass(frozen=True)
class _Judged:
    """The verdict's parts for every episode, as arrays (see :func:`assess_all`)."""

    ops_ratio: np.ndarray
    came_back: np.ndarray  # NaN where the window ended before the load could be seen back
    lat_ratio: np.ndarray
    use_p99: np.ndarray
    peak_ms: np.ndarray  # the write latency judged: p99 where recorded, else the mean
    idle: np.ndarray
    recovered: np.ndarray
    slow: np.ndarray
    dip: np.ndarray  # throughput and latency, or writes frozen
    frozen: np.ndarray  # frozen while the throughput held: the reason gives the wait

    @classmethod
    def of(cls, r: _Reads, base: LocalFigures, seen: np.ndarray) -> _Judged:
        """The parts of ``r``'s episodes against ``base``."""
        span = r.span
        worst, p99, mean_peak = span["ops_s"], span["write_p99_ms"], span["write_lat_ms"]
        base_ops, base_p99 = base.ops_s, base.write_p99_ms
        with np.errstate(invalid="ignore"):
            idle = r.load < MIN_BASELINE_OPS  # idle (or not yet busy): nothing to interrupt
            # the window ended before the load could be seen back: not a client that went away
            unseen = ~seen & ~(r.came_back >= RECOVERY_RATIO * base_ops)
            came_back = np.where(unseen, np.nan, r.came_back)
            ops_ratio = np.where(idle | ~(base_ops >= MIN_BASELINE_OPS), np.nan, ratios(worst, base_ops))
            use_p99 = np.isfinite(p99) & np.isfinite(base_p99) & (base_p99 != 0)
            lat_ratio = np.where(use_p99, ratios(p99, base_p99), ratios(mean_peak, base.write_lat_ms))
            base_lat = np.where(use_p99, base_p99, base.write_lat_ms)
            after_peak = np.where(use_p99, r.p99_after, r.mean_after)
            # the operations completing after it still show the wait (back-to-back checkpoints)
            waiting = (base_lat != 0) & (after_peak >= STALL_LATENCY_RATIO * base_lat)
            # the load must come back after it: operations that stop with a checkpoint and stay
            # stopped, nothing waiting, are a client that went away, not a stall
            recovered = np.isnan(came_back) | (came_back >= RECOVERY_RATIO * base_ops) | waiting
            slow = (lat_ratio >= STALL_LATENCY_RATIO) | (worst == 0)  # or no write completed
            peak = np.where(use_p99, p99, mean_peak)
            froze = np.isfinite(ops_ratio) & (peak >= STALL_WAIT_MS) & (lat_ratio >= STALL_WAIT_RATIO)
            dipped = (ops_ratio <= STALL_OPS_RATIO) & slow
        return cls(
            ops_ratio, came_back, lat_ratio, use_p99, peak, idle, recovered, slow, dipped | froze, froze & ~dipped
        )


def _impacts(r: _Reads, base: LocalFigures, *, seen: np.ndarray, cut_off: np.ndarray) -> dict[str, Any]:
    """Every episode's figures against its baseline, and its verdict (see :func:`assess_all`),
    judged all at once, by :class:`Impact` field: float arrays (NaN where there is none), the
    stall as a bool array, the kind and reasons as lists; ``seen``: the window ran on until the
    load had to be back; ``cut_off``: it was still running when the window ended."""
    span = r.span
    j = _Judged.of(r, base, seen)
    app_wait = np.where(np.isnan(span["app_wait_ms"]), 0.0, span["app_wait_ms"])
    waited = app_wait >= STALL_APP_WAIT_MS
    stall = (j.dip & j.recovered) | waited
    kinds = ["p99" if u else "mean" for u in j.use_p99.tolist()]
    columns: dict[str, Any] = {
        "ops_s_baseline": base.ops_s,
        "ops_s_min": span["ops_s"],
        "ops_ratio": j.ops_ratio,
        "ops_s_after": j.came_back,
        "write_latency_ratio": j.lat_ratio,
        "write_latency_kind": kinds,
        "write_p99_ms_peak": span["write_p99_ms"],
        "write_latency_ms_peak": span["write_lat_ms"],
        "read_latency_ratio": ratios(span["read_lat_ms"], base.read_lat_ms),
        **{field: span[name] for field, name in DISK_PEAKS.items()},
        "app_evicted_pages": np.where(np.isnan(span["app_evict"]), 0.0, span["app_evict"]),
        "app_wait_ms": app_wait,
        "dirty_pct_peak": span["dirty_pct"],
        "write_tickets_available_min": span["wtickets_avail"],
        "queued_writers_max": span["queue_writers"],
        "repl_lag_growth_s": span["repl_lag_s"] - r.lag_before,
        "throttled_ms": span["throttle_ms"],  # a sum, NaN where io_capacity's wait was not read
        "stall": stall,
    }
    frozen = zip(kinds, j.peak_ms.tolist(), j.frozen.tolist(), strict=True)
    waits = [f"{k} {ms:,.0f} ms" if f else "" for k, ms, f in frozen]
    parts = (j.idle, j.dip, j.recovered, waited, j.slow, cut_off)
    flags = zip(*(a.tolist() for a in parts), waits, strict=True)
    columns["reasons"] = _all_reasons(_listed(j.ops_ratio), _listed(j.lat_ratio), flags)
    return columns


def _all_reasons(ops: list[Any], latency: list[Any], flags: Iterable[tuple[Any, ...]]) -> list[tuple[str, ...]]:
    """Every episode's reasons; the same reasons one object (as the figures are, :func:`_listed`)."""
    said: dict[tuple[str, ...], tuple[str, ...]] = {}
    return [
        said.setdefault(reasons, reasons)
        for reasons in (_reasons(o, lat, *flag) for o, lat, flag in zip(ops, latency, flags, strict=True))
    ]


def _reasons(
    ops_ratio: float | None,
    lat_ratio: float | None,
    idle: bool,
    dip: bool,
    recovered: bool,
    waited: bool,
    slow: bool,
    cut_off: bool,
    froze: str = "",
) -> tuple[str, ...]:
    """Why an episode stalled, or why not, from its verdict's parts (see :func:`_impacts`;
    ``froze``: the write latency that made it a stall where the throughput did not, else "")."""
    reasons: list[str] = [NO_LOAD] if idle else []
    if dip and froze and recovered:
        reasons.append(
            f"writes froze: {froze} write latency, {lat_ratio:.0f}x the baseline (a stall: "
            f"{STALL_WAIT_MS:g} ms and {STALL_WAIT_RATIO:g}x or more, whatever the throughput)"
        )
    elif dip:
        reasons.append("throughput and latency" if recovered else GONE)
    if waited:
        reasons.append("application threads waited for cache")
    if not (dip and recovered) and not waited and not reasons:
        reasons += _why_not(ops_ratio, lat_ratio, slow)
    if cut_off:  # cut off by the window's end: what came after it was never seen
        reasons.append(CUT_OFF)
    return tuple(reasons)


def _why_not(ops_ratio: float | None, lat_ratio: float | None, slow: bool) -> list[str]:
    """Why an episode with load before it is not a stall, in the thresholds' own terms."""
    if ops_ratio is None:
        return [f"under {MIN_BASELINE_OPS:g} ops/s before it: too little load to judge"]
    out = []
    if ops_ratio > STALL_OPS_RATIO:
        out.append(
            f"throughput held at {100 * ops_ratio:.0f} % of the baseline "
            f"(a stall: {100 * STALL_OPS_RATIO:.0f} % or less, "
            f"or writes waiting {STALL_WAIT_MS:g} ms and {STALL_WAIT_RATIO:g}x the baseline)"
        )
    if not slow and lat_ratio is None:
        out.append("no write latency figure to set against the baseline")
    elif not slow:
        out.append(f"write latency {lat_ratio:.1f}x the baseline (a stall: {STALL_LATENCY_RATIO:g}x or more)")
    return out
