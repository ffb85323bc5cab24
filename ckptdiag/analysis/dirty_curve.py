"""How the dirty data a checkpoint finds builds up after the one before it: the server's own curve.

A checkpoint writes the dirty data it finds, and mongod starts the next one an interval after the
last one *ended*. What a checkpoint would find at a shorter interval is read here from this
server's own cache between its checkpoints: the dirty bytes ``s`` seconds after a checkpoint
ended, as a share of what the next checkpoint found. The share holds what a straight line through
zero (bytes in proportion to the interval) misses: the dirty data a checkpoint leaves behind
(pages dirtied again while it ran, updates newer than its snapshot), a cache whose dirty data sits
at the eviction target (the same at any interval), and a build-up that is not even. In the lab
(60 s to 10 s) the straight line predicted half of what each checkpoint wrote (docs/advice.md).

Kept per whole second after a checkpoint's end, up to :data:`MAX_OFFSET_S`: the cycles seen, the
sum of their shares and of their squares (a window of any length holds 3 x 901 numbers).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ckptdiag.analysis.episode_table import Episodes

MAX_OFFSET_S = 900  # the longest interval read from the curve (beyond it: in proportion to the interval)
MIN_CYCLES = 1  # a share is read where a cycle had a sample at that time (the range needs more)
POOL_S = 15  # read over at most this many seconds either side: samples as far apart as 30 s
MAX_SHARE = 4.0  # a share above this is a sample far off the cycle's own (a cache emptied by a restart)


@dataclass(frozen=True)
class Share:
    """The dirty data a checkpoint would find at an interval, as a share of what it found: the
    cycles' mean, and one standard deviation either side (the range said with a prediction)."""

    low: float
    mid: float
    high: float
    cycles: int


@dataclass(frozen=True, eq=False)  # arrays: compared as what they are, not by ==
class DirtyCurve:
    """The dirty data a whole second ``s`` after a checkpoint ended (``s`` to ``s + 1`` s), as a
    share of what the next one found, for ``s`` from 0 to :data:`MAX_OFFSET_S`: the cycles with
    a sample in that second, the sum of their shares and of the squares (read-only arrays)."""

    count: np.ndarray
    total: np.ndarray
    squares: np.ndarray

    def share(self, offset_s: float) -> Share | None:
        """What a checkpoint ``offset_s`` seconds after the last one ended would find, as a share
        of what they found; None where no cycle reached that time. Read from the seconds either
        side of it, as many as it takes to find samples both before and after it (one each at
        1 s samples, five at 10 s: a second's samples lie half a second past its start on
        average, so the two sides centre the read on ``offset_s``)."""
        at = int(offset_s)
        for half in range(1, POOL_S + 1):
            lo, hi = at - half, at + half
            if lo < 0 or hi > MAX_OFFSET_S + 1:
                return None
            if self.count[lo:at].sum() >= MIN_CYCLES and self.count[at:hi].sum() >= MIN_CYCLES:
                count = float(self.count[lo:hi].sum())
                mid = float(self.total[lo:hi].sum()) / count
                cycles = int(self.count[lo:hi].max())
                # the range is the spread across cycles: one cycle has none to tell
                variance = float(self.squares[lo:hi].sum()) / count - mid * mid
                spread = math.sqrt(max(variance, 0.0)) if cycles > 1 else 0.0
                return Share(max(mid - spread, 0.0), mid, mid + spread, cycles)
        return None


class DirtyCurveTally:
    """The curve, a block of a window at a time, each sample read once: a cycle runs from one
    checkpoint's end to the next one's start, whichever blocks they fall in (the samples since
    the last end are carried to the next block, at most :data:`MAX_OFFSET_S` of them)."""

    def __init__(self) -> None:
        self._sums = np.zeros((3, MAX_OFFSET_S + 1))  # cycles, sum of shares, sum of squares
        self._end: float | None = None  # the latest checkpoint's end
        self._held = np.empty((3, 0))  # the samples since it (time, dirty bytes, gap before)

    def block(self, t: np.ndarray, dirty: np.ndarray, seam: np.ndarray, mine: Episodes) -> None:
        """A block's own rows (``t``, ``dirty`` bytes, ``seam``: a gap or restart before the row)
        and its own checkpoints ``mine``, in time order after every block before."""
        rows = np.hstack([self._held, np.vstack([t, dirty, np.nan_to_num(seam)])])
        starts, ends = mine.floats("start"), mine.floats("end")
        previous = np.concatenate(([np.nan if self._end is None else self._end], ends[:-1]))
        ok = np.isfinite(previous) & np.isfinite(starts) & (previous < starts)
        first = np.searchsorted(rows[0], previous[ok], "right")  # the cycle's samples: after the end ...
        last = np.searchsorted(rows[0], starts[ok], "right")  # ... up to the start, the one found at it
        self._cycles(first, last, previous[ok], rows)
        if len(mine):  # the next cycle starts at the last one's end (none while it runs on)
            self._end = float(ends[-1]) if np.isfinite(ends[-1]) else None
        if self._end is None or not rows.shape[1]:
            self._held = np.empty((3, 0))
            return
        after = rows[0] > self._end
        kept = after & (rows[0] <= self._end + MAX_OFFSET_S + 1)
        kept[-1] = after[-1]  # and the latest sample: the level the next checkpoint may find
        held = rows[:, kept]
        if held.shape[1] and np.any(rows[2][after & ~kept] > 0):
            held[2, -1] = 1.0  # a gap among the samples let go of still cuts the cycle
        self._held = held

    def _cycles(self, first: np.ndarray, last: np.ndarray, end: np.ndarray, rows: np.ndarray) -> None:
        """Add the cycles of samples ``first`` to ``last`` (exclusive) after checkpoints ended at ``end``."""
        t, dirty, seams = rows[0], rows[1], np.cumsum(rows[2] > 0)
        found_at = np.maximum(last - 1, 0)
        before = np.where(first > 0, seams[np.maximum(first - 1, 0)], 0)
        whole = (last > first) & (seams[found_at] == before)  # no gap from the end to the start
        found = np.where(whole, dirty[found_at], np.nan)
        whole &= np.isfinite(found) & (found > 0)
        first, last, end, found = first[whole], last[whole], end[whole], found[whole]
        if not first.size:
            return
        sizes = last - first
        cycle = np.repeat(np.arange(first.size), sizes)
        at = np.arange(int(sizes.sum())) - np.repeat(np.cumsum(sizes) - sizes, sizes) + np.repeat(first, sizes)
        share = dirty[at] / found[cycle]
        second = np.floor(t[at] - end[cycle])
        keep = np.isfinite(share) & (share >= 0) & (share <= MAX_SHARE) & (second >= 0) & (second <= MAX_OFFSET_S)
        bins, share = second[keep].astype(np.int64), share[keep]
        size = MAX_OFFSET_S + 1
        self._sums += np.vstack(
            [np.bincount(bins, minlength=size), np.bincount(bins, share, size), np.bincount(bins, share * share, size)]
        )

    def result(self) -> DirtyCurve | None:
        """The curve, or None where no cycle was seen."""
        count, total, squares = self._sums.copy()
        if not count.any():
            return None
        for a in (count, total, squares):
            a.flags.writeable = False
        return DirtyCurve(count, total, squares)
