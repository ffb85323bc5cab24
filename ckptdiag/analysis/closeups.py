"""Every sample around the window's worst checkpoints, kept as the window streams.

The timeline puts a long window in a few hundred buckets (a day: 144 s each), too coarse to see
one checkpoint. So that a report can zoom from the whole window down to the seconds of the
checkpoints that matter, the samples from ``PAD_S`` before the worst ones to ``PAD_S`` after are
kept beside it: at most ``LIMIT`` checkpoints (the worst by the tables' own order: stalls first,
then the costliest), at most ``MAX_SAMPLES`` samples each, whatever the window's length.
"""

from __future__ import annotations

import bisect

import numpy as np

from ckptdiag.analysis.columns import Columns
from ckptdiag.analysis.episode import Episode
from ckptdiag.analysis.episode_table import Episodes
from ckptdiag.analysis.results import CloseUp
from ckptdiag.analysis.verdict import cost_key, worst_rows

LIMIT = 8
PAD_S = 30.0  # the samples before and after a checkpoint its close-up shows: what it does to the load
MAX_SAMPLES = 1_800  # a close-up's samples at most: a checkpoint stuck for hours shows its first half hour


class CloseUpTally:
    """The ``limit`` worst checkpoints seen so far, each with its samples (:meth:`block` is given
    each judged block in time order)."""

    def __init__(self, limit: int = LIMIT) -> None:
        self.limit = limit
        self._kept: list[tuple[tuple[float, ...], float, CloseUp]] = []  # (cost, start, close-up), worst first

    def block(self, cols: Columns, judged: Episodes) -> None:
        """A block's judged checkpoints, with the block's columns (its context included)."""
        for e in judged.take(worst_rows(judged, self.limit)):  # only the block's worst can be kept
            key = cost_key(e)
            if len(self._kept) >= self.limit and key >= self._kept[-1][0]:
                continue  # no worse than the last kept: its samples are never read
            bisect.insort(self._kept, (key, e.start, _close_up(cols, e)), key=lambda k: k[:2])
            del self._kept[self.limit :]

    def result(self) -> tuple[CloseUp, ...]:
        """The close-ups kept, in time order."""
        return tuple(sorted((c for _, _, c in self._kept), key=lambda c: c.start))


def _close_up(cols: Columns, e: Episode) -> CloseUp:
    end = e.end if e.end is not None else e.start
    lo = int(np.searchsorted(cols.t, e.start - PAD_S))
    hi = min(int(np.searchsorted(cols.t, end + PAD_S, "right")), lo + MAX_SAMPLES)
    rows = slice(lo, hi)
    # copies: a slice would keep the whole block's arrays alive
    return CloseUp(
        start=e.start,
        end=end,
        stall=e.stall,
        ops_ratio=e.impact.ops_ratio,
        t=cols.t[rows].copy(),
        ops_s=cols.ops_s[rows].copy(),
        dirty_pct=cols.dirty_pct[rows].copy(),
        disk_mb_s=cols.disk_wmb_s[rows].copy(),
    )
