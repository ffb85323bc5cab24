"""A window's samples derived a piece at a time, in time order, each piece joined to the row
before it so that a rate across the seam is taken once: the parts are the same as one piece
would give (tests; every shared input and 47 days of FTDC read alike in pieces of 4k to 100k
rows), and a long window is never held as raw samples. Two things a seam can still change: rows
of a later piece at or before the seam's time are dropped where one piece would sort them in (a
clock set back inside a file), and a piece of a few hundred rows judges a gap by its own usual
spacing."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pandas as pd

from ckptdiag.analysis.series import derived_columns, time_index
from ckptdiag.model.samples import SampleBlock

_EXACT = ("t", "dt")  # kept in float64 when the figures are made small: epoch seconds need it


class PieceChain:
    """Pieces of one window derived in time order, each joined to the row before it.

    Each piece is joined to the ``last`` row of the pieces before it and marked with ``mark``,
    so that the rates across the seam are taken once, and restarts and gaps are counted once.
    ``last`` is the latest sample so far (a piece's rows at or before it are dropped: an interim
    file repeats the archive's end), held as :meth:`SampleBlock.seam` makes it: a chain started from a
    given ``last`` derives exactly what the chain that read up to that row would.
    """

    def __init__(self, mark: Callable[[SampleBlock], SampleBlock], last: SampleBlock | None = None) -> None:
        self.mark = mark
        self.last = last
        self.parts: list[pd.DataFrame] = []
        self.gaps = self.restarts = 0

    def add(self, piece: SampleBlock) -> None:
        """Derive one piece (in time order) after the rows before it."""
        last = self.last
        if last is not None:
            after = piece.t > float(last.t[0])
            if not after.all():  # an interim file repeats the archive's end
                piece = piece.take(after)
            if not len(piece):
                return
        joined = self.mark(piece if last is None else piece.after(last))
        skip = 0 if last is None else 1
        self.gaps += int(np.count_nonzero(joined.values("gap_before")[skip:]))
        segment = joined.values("segment")
        self.restarts += int(segment.max() - segment.min())
        self.parts.append(_compact(derived_columns(joined), skip))
        self.last = piece.seam()

    def result(self) -> tuple[pd.DataFrame, int, int]:
        """-> (the derived frame, gaps, restarts). The parts are let go of as they are copied into
        it: a long window's figures are held once, not twice (pd.concat held both, ~0.9 GB more
        for 47 days of FTDC)."""
        parts, self.parts = self.parts, []
        if not parts:
            raise ValueError("no samples in the window")
        frame = parts[0] if len(parts) == 1 else _stacked(parts)
        # indexed once, over the whole: a piece's own index would be let go of where the parts go
        # to a sink (the window's diagnosis reads their times as numbers), after costing a tenth
        # of deriving them
        frame.index = time_index(frame["t"].to_numpy())
        return frame, self.gaps, self.restarts


def _stacked(parts: list[pd.DataFrame]) -> pd.DataFrame:
    """Derived parts one after another in one frame (columns in order of first appearance, NaN in
    a part that lacks one), each part released once copied."""
    names = list(dict.fromkeys(c for part in parts for c in part.columns))
    exact = [c for c in names if c in _EXACT]
    small = [c for c in names if c not in exact]
    rows = sum(len(part) for part in parts)
    block = np.empty((len(small), rows), dtype=np.float32)  # its pages are taken as it is filled
    wide = {c: np.empty(rows, dtype=np.float64) for c in exact}
    at = 0
    for k in range(len(parts)):
        part = parts[k]
        n = len(part)
        for j, c in enumerate(small):
            block[j, at : at + n] = part[c].to_numpy() if c in part else np.nan
        for c in exact:
            wide[c][at : at + n] = part[c].to_numpy() if c in part else np.nan
        parts[k] = part = pd.DataFrame()  # let it go
        at += n
    frame = pd.DataFrame(block.T, columns=small, copy=False)
    for c in exact:
        frame.insert(names.index(c), c, wide[c])
    stacked: pd.DataFrame = frame
    return stacked


def same_row(a: SampleBlock | None, b: SampleBlock | None) -> bool:
    """Whether two :meth:`~SampleBlock.seam` rows are the same sample with the same values."""
    if a is None or b is None:
        return a is None and b is None
    return a.same(b)


def _compact(columns: dict[str, np.ndarray], skip: int) -> pd.DataFrame:
    """Derived columns from row ``skip`` on as one frame (rows numbered, not yet indexed by
    time), in float32 (a long window stays small), but time (epoch seconds need float64): each
    column copied once, into one block the frame wraps (building a float64 frame and casting it
    copied everything twice)."""
    exact = [c for c in columns if c in _EXACT]
    small = [c for c in columns if c not in _EXACT]
    t = columns["t"][skip:]
    block = np.empty((len(small), t.size), dtype=np.float32)
    for j, c in enumerate(small):
        block[j] = columns[c][skip:]
    frame = pd.DataFrame(block.T, columns=small, copy=False)
    for c in exact:  # a copy: the samples' arrays are let go of
        frame.insert(list(columns).index(c), c, columns[c][skip:].copy())
    compact: pd.DataFrame = frame
    return compact
