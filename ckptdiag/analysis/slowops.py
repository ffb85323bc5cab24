"""Slow operations from mongod's log against the checkpoints: which ran inside them, at what rate
against the rest of the window, how long they took and what they waited on.

An operation is logged when it ends, with its duration, so it ran over ``[t - duration, t]``; it
counts as inside a checkpoint when that span meets the checkpoint's window, which runs from the
checkpoint's start to :data:`AFTER_S` past its end (an operation held up by a checkpoint completes
just after it). Every slow operation is counted once, against the first window it meets.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np

from ckptdiag.analysis.episode import Episode
from ckptdiag.model.logevents import WAIT_KINDS, SlowOps

AFTER_S = 1.0
CLUSTER_RATE_RATIO = 2.0  # slow operations cluster in checkpoints: their rate there is 2x or more
CLUSTER_MIN_OPS = 5  # and at least this many ran inside
DOMINANT_WAIT_SHARE = 0.25  # a wait that took a quarter of their time or more is named
WRITE_COMMANDS = frozenset({"insert", "update", "delete", "remove", "findAndModify", "findandmodify", "bulkWrite"})
TOP = 5


@dataclass(frozen=True, slots=True)
class SlowOpGroup:
    """The slow operations inside the checkpoints, or outside them."""

    count: int
    minutes: float  # the time they had
    per_min: float | None
    p50_ms: float | None
    p99_ms: float | None
    waits_median_ms: tuple[tuple[str, float], ...]  # (wait, median ms over the operations that report it)
    top_commands: tuple[tuple[str, int], ...]
    top_namespaces: tuple[tuple[str, int], ...]


@dataclass(frozen=True, slots=True)
class SlowOpCorrelation:
    """The log's slow operations against the window's checkpoints."""

    inside: SlowOpGroup
    outside: SlowOpGroup
    writes_inside: int
    writes_total: int
    time_share: float  # the fraction of the window inside checkpoint windows
    per_checkpoint: tuple[tuple[int, float | None], ...]  # per episode, in order: (slow operations, longest ms)
    dominant_wait: str | None  # what the slow operations inside waited on most, when it is a large share
    dominant_wait_median_ms: float | None
    finding: str | None  # one sentence when they cluster in checkpoints


def correlate(ops: SlowOps, episodes: Sequence[Episode], start: float, end: float) -> SlowOpCorrelation:
    """Place every slow operation of the window ``[start, end]`` inside or outside the checkpoints."""
    keep = (ops.t >= start) & (ops.t <= end)
    t = ops.t[keep]
    begin = t - ops.duration_ms[keep].astype(np.float64) / 1000
    windows = [(e.start, (e.end if e.end is not None else end) + AFTER_S) for e in episodes]
    which = _window_of(begin, t, windows)
    inside = which >= 0
    span_min = max(end - start, 1e-9) / 60
    inside_min = _merged_minutes(windows, start, end)
    groups = [
        _group(ops, keep, mask, minutes) for mask, minutes in ((inside, inside_min), (~inside, span_min - inside_min))
    ]
    writes = np.isin(ops.command[keep], [i for i, n in enumerate(ops.names) if n in WRITE_COMMANDS])
    duration = ops.duration_ms[keep]
    counts = np.bincount(which[inside], minlength=len(windows))
    longest = np.zeros(len(windows), dtype=np.float64)
    np.maximum.at(longest, which[inside], duration[inside])  # one pass, not one per checkpoint
    per = tuple((int(n), float(m) if n else None) for n, m in zip(counts, longest, strict=True))
    dominant, median = _dominant_wait(ops.waits_ms[keep][inside], duration[inside])
    corr = SlowOpCorrelation(
        groups[0],
        groups[1],
        int((writes & inside).sum()),
        int(writes.sum()),
        inside_min / span_min,
        per,
        dominant,
        median,
        None,
    )
    return _with_finding(corr)


def _window_of(begin: np.ndarray, end: np.ndarray, windows: list[tuple[float, float]]) -> np.ndarray:
    """For each operation ``[begin, end]``, the index of the first window it meets, or -1.

    Checkpoints come in time order, so the windows' starts do not go back: then the first window
    an operation can meet is the first whose end (the running highest) reaches its begin, found
    by one binary search for every operation, and it meets it when that window starts before the
    operation ends (any later one starts later still). Otherwise, window by window."""
    out = np.full(begin.size, -1, dtype=np.int64)
    if not windows:
        return out
    lo_all = np.array([w[0] for w in windows], dtype=np.float64)
    hi_all = np.array([w[1] for w in windows], dtype=np.float64)
    if bool(np.all(np.diff(lo_all) >= 0)):
        reach = np.maximum.accumulate(hi_all)
        first = np.searchsorted(reach, begin, side="left")
        inside = first < len(windows)
        hit = inside.copy()
        hit[inside] = lo_all[first[inside]] <= end[inside]
        out[hit] = first[hit]
        return out
    for i, (lo, hi) in enumerate(windows):
        hit = (out < 0) & (end >= lo) & (begin <= hi)
        out[hit] = i
    return out


def _merged_minutes(windows: list[tuple[float, float]], start: float, end: float) -> float:
    """Minutes of ``[start, end]`` that some window covers (windows that overlap counted once)."""
    total, reach = 0.0, start
    for lo, hi in sorted(windows):
        lo, hi = max(lo, reach), min(hi, end)
        if hi > lo:
            total += hi - lo
            reach = hi
    return total / 60


def _group(ops: SlowOps, keep: np.ndarray, mask: np.ndarray, minutes: float) -> SlowOpGroup:
    duration = ops.duration_ms[keep][mask].astype(np.float64)
    waits = ops.waits_ms[keep][mask]
    medians = tuple(
        (kind, float(np.nanmedian(waits[:, j])))
        for j, kind in enumerate(WAIT_KINDS)
        if waits.size and np.isfinite(waits[:, j]).any()
    )

    def top(codes: np.ndarray) -> tuple[tuple[str, int], ...]:
        return tuple((ops.names[c], n) for c, n in Counter(codes[keep][mask].tolist()).most_common(TOP))

    count = int(mask.sum())
    return SlowOpGroup(
        count,
        minutes,
        count / minutes if minutes > 0 else None,
        float(np.percentile(duration, 50)) if count else None,
        float(np.percentile(duration, 99)) if count else None,
        medians,
        top(ops.command),
        top(ops.ns),
    )


def _dominant_wait(waits: np.ndarray, duration: np.ndarray) -> tuple[str | None, float | None]:
    """The wait that took the largest share of the operations' time, with its median, when that
    share is :data:`DOMINANT_WAIT_SHARE` or more."""
    total = float(duration.sum())
    if not waits.size or total <= 0:
        return None, None
    sums = np.nansum(waits.astype(np.float64), axis=0)
    j = int(np.argmax(sums))
    if sums[j] < DOMINANT_WAIT_SHARE * total:
        return None, None
    return WAIT_KINDS[j], float(np.nanmedian(waits[:, j]))


def _with_finding(c: SlowOpCorrelation) -> SlowOpCorrelation:
    """The one-sentence finding when slow operations cluster in the checkpoints."""
    inside, outside = c.inside, c.outside
    if inside.count < CLUSTER_MIN_OPS or inside.per_min is None:
        return c
    if outside.per_min and inside.per_min < CLUSTER_RATE_RATIO * outside.per_min:
        return c
    writes = c.writes_total >= CLUSTER_MIN_OPS
    n, total = (c.writes_inside, c.writes_total) if writes else (inside.count, inside.count + outside.count)
    what = "slow writes" if writes else "slow operations"
    text = (
        f"{100 * n / total:.0f} % of {what} ({n} of {total}) ran inside checkpoints, which took "
        f"{100 * c.time_share:.0f} % of the time"
    )
    if c.dominant_wait and c.dominant_wait_median_ms is not None:
        text += f"; their time went to waiting for {c.dominant_wait} (median {_ms(c.dominant_wait_median_ms)})"
    return replace(c, finding=text)


def _ms(value: float) -> str:
    return f"{value / 1000:.1f} s" if value >= 1000 else f"{value:.0f} ms"
