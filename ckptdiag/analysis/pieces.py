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

from ckptdiag.analysis.series import derived_columns

_EXACT = ("t", "dt")  # kept in float64 when the figures are made small: epoch seconds need it


class PieceChain:
    """Pieces of one window derived in time order, each joined to the row before it.

    Each piece is joined to the ``last`` row of the pieces before it and marked with ``mark``,
    so that the rates across the seam are taken once, and restarts and gaps are counted once.
    ``last`` is the latest sample so far (a piece's rows at or before it are dropped: an interim
    file repeats the archive's end), held as :func:`seam_row` makes it: a chain started from a
    given ``last`` derives exactly what the chain that read up to that row would.
    """

    def __init__(self, mark: Callable[[pd.DataFrame], pd.DataFrame], last: pd.DataFrame | None = None) -> None:
        self.mark = mark
        self.last = last
        self.parts: list[pd.DataFrame] = []
        self.gaps = self.restarts = 0

    def add(self, piece: pd.DataFrame) -> None:
        """Derive one piece (in time order) after the rows before it."""
        last = self.last
        if last is not None:
            after = piece["t"].to_numpy() > float(last["t"].iloc[0])
            if not after.all():  # an interim file repeats the archive's end
                piece = piece[after]
            if piece.empty:
                return
        joined = self.mark(piece if last is None else joined_after(last, piece))
        own = joined.iloc[1:] if last is not None else joined
        self.gaps += int(own["gap_before"].astype(bool).sum())
        self.restarts += int(joined["segment"].max() - joined["segment"].min())
        self.parts.append(_compact(derived_columns(joined), joined.index, skip=0 if last is None else 1))
        self.last = seam_row(piece.iloc[[-1]])

    def result(self) -> tuple[pd.DataFrame, int, int]:
        """-> (the derived frame, gaps, restarts). The parts are let go of as they are copied into
        it: a long window's figures are held once, not twice (pd.concat held both, ~0.9 GB more
        for 47 days of FTDC)."""
        parts, self.parts = self.parts, []
        if not parts:
            raise ValueError("no samples in the window")
        return (parts[0] if len(parts) == 1 else _stacked(parts)), self.gaps, self.restarts


def joined_after(last: pd.DataFrame, piece: pd.DataFrame) -> pd.DataFrame:
    """``piece`` after the one row ``last``, every column float64 in one block (NaN where one of
    them lacks it). pd.concat made a block of each column one of them lacked: a frame too
    fragmented to add the continuity marks to, and twice as slow to build."""
    names = list(dict.fromkeys([*last.columns, *piece.columns]))
    at = {c: j for j, c in enumerate(names)}
    block = np.full((len(names), len(piece) + 1), np.nan)
    block[[at[c] for c in last.columns], 0] = last.to_numpy(dtype="float64", na_value=np.nan)[0]
    # the piece's columns at once (a column at a time cost pandas' checks a hundred times a piece)
    block[[at[c] for c in piece.columns], 1:] = piece.to_numpy(dtype="float64", na_value=np.nan).T
    joined: pd.DataFrame = pd.DataFrame(block.T, columns=names, copy=False)
    return joined


def _stacked(parts: list[pd.DataFrame]) -> pd.DataFrame:
    """Derived parts one after another in one frame (columns in order of first appearance, NaN in
    a part that lacks one), each part released once copied."""
    names = list(dict.fromkeys(c for part in parts for c in part.columns))
    exact = [c for c in names if c in _EXACT]
    small = [c for c in names if c not in exact]
    rows = sum(len(part) for part in parts)
    index = parts[0].index.append([part.index for part in parts[1:]])
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
    frame = pd.DataFrame(block.T, columns=small, index=index, copy=False)
    for c in exact:
        frame.insert(names.index(c), c, wide[c])
    stacked: pd.DataFrame = frame
    return stacked


MARKS = ("seq", "segment", "gap_before")  # the continuity marks: made anew on every join


def seam_row(row: pd.DataFrame) -> pd.DataFrame:
    """A one-row frame as a chain holds its last row: only the values it has (a column it lacks
    changes no figure of the next piece), every value as float64 (as :func:`derive` reads them), no
    continuity marks (the join makes them). The same sample read with other chunks about it, or
    in another piece, is then the same row."""
    names = [c for c in row.columns if c not in MARKS]
    values = row[names].to_numpy(dtype="float64", na_value=np.nan)[0]  # a flag as 1.0 or 0.0
    has = ~np.isnan(values)
    held = [c for c, h in zip(names, has.tolist(), strict=True) if h]
    seam: pd.DataFrame = pd.DataFrame(values[has][None, :], columns=held, index=row.index)
    return seam


def same_row(a: pd.DataFrame | None, b: pd.DataFrame | None) -> bool:
    """Whether two :func:`seam_row` rows are the same sample with the same values (column order aside)."""
    if a is None or b is None:
        return a is None and b is None
    if set(a.columns) != set(b.columns):
        return False
    columns = sorted(a.columns)
    return bool(a[columns].reset_index(drop=True).equals(b[columns].reset_index(drop=True)))


def _compact(columns: dict[str, np.ndarray], index: pd.Index, skip: int) -> pd.DataFrame:
    """Derived columns from row ``skip`` on as one frame, in float32 (a long window stays small),
    but time (epoch seconds need float64): each column copied once, into one block the frame
    wraps (building a float64 frame and casting it copied everything twice)."""
    exact = [c for c in columns if c in _EXACT]
    small = [c for c in columns if c not in _EXACT]
    block = np.empty((len(small), len(index) - skip), dtype=np.float32)
    for j, c in enumerate(small):
        block[j] = columns[c][skip:]
    frame = pd.DataFrame(block.T, columns=small, index=index[skip:], copy=False)
    for c in exact:
        frame.insert(list(columns).index(c), c, columns[c][skip:])
    compact: pd.DataFrame = frame
    return compact
