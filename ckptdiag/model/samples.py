"""Samples as the derivation reads them: a value per sample for each metric, by name.

Two kinds hold them. A :class:`SampleBlock` is what FTDC decodes into, a piece at a time: one
float64 array per metric (NaN where a sample lacks it), no DataFrame. Building a frame of each
piece, converting it back to float64 arrays to join it to the row before it, and reading its
columns one by one through pandas cost more than deriving the figures did. :class:`FrameSamples`
reads a sample frame (a recording, a whole FTDC window) the same way, so that one derivation
serves both.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Protocol

import numpy as np
import pandas as pd

MARKS = ("seq", "segment", "gap_before")  # the continuity marks: made anew on every join
# A gap: a sample more than GAP_S and GAP_PERIODS typical periods after the one before (the
# collector was off). FTDC samples every second by default: a minute without one is a gap; one
# that samples every 10 s, or falls behind on a busy server, leaves none.
GAP_S = 60.0
GAP_PERIODS = 3.0


def gap_intervals(dt: np.ndarray) -> np.ndarray:
    """Which intervals between samples (``dt``, s; NaN: none, the first) are gaps, against their
    typical (median) one."""
    finite = dt[np.isfinite(dt)]
    period = float(np.median(finite)) if finite.size else 1.0
    with np.errstate(invalid="ignore"):
        gap: np.ndarray = dt > max(GAP_PERIODS * period, GAP_S)
    return gap


class Samples(Protocol):
    """Named per-sample values, every one as long as the samples."""

    def __len__(self) -> int: ...

    def __contains__(self, name: object) -> bool: ...

    @property
    def names(self) -> list[str]:
        """Every metric held, in order."""
        ...

    def values(self, name: str) -> np.ndarray:
        """One metric's values as float64 (NaN: not in that sample; a flag as 1.0 or 0.0). The
        array may be the holder's own: never written to."""
        ...


class FrameSamples:
    """A sample frame read as :class:`Samples`: each column converted when asked for."""

    def __init__(self, frame: pd.DataFrame) -> None:
        self.frame = frame

    def __len__(self) -> int:
        return len(self.frame)

    def __contains__(self, name: object) -> bool:
        return name in self.frame

    @property
    def names(self) -> list[str]:
        """The frame's columns."""
        return [str(c) for c in self.frame.columns]

    def values(self, name: str) -> np.ndarray:
        """The column as float64, NaN for a missing value."""
        values: np.ndarray = self.frame[name].to_numpy(dtype="float64", na_value=np.nan)
        return values


class SampleBlock:
    """Samples in time order as one float64 array per metric (``t``: epoch seconds)."""

    __slots__ = ("columns", "rows", "spare")

    def __init__(self, columns: Mapping[str, np.ndarray], spare: Mapping[str, np.ndarray] | None = None) -> None:
        self.columns = dict(columns)
        self.rows = int(self.columns["t"].size) if "t" in self.columns else 0
        # each array of ``columns`` as the tail of one a slot longer, where given: joining the
        # block to the row before it writes that row into the slot instead of copying the block
        self.spare = dict(spare) if spare is not None else {}

    def __len__(self) -> int:
        return self.rows

    def __contains__(self, name: object) -> bool:
        return name in self.columns

    @property
    def names(self) -> list[str]:
        """Every metric held, in order."""
        return list(self.columns)

    def values(self, name: str) -> np.ndarray:
        """One metric's values (the block's own array)."""
        return self.columns[name]

    @property
    def t(self) -> np.ndarray:
        """Each sample's time (epoch seconds)."""
        return self.columns["t"]

    def after(self, last: SampleBlock) -> SampleBlock:
        """These samples after the one sample ``last``, NaN where one of them lacks a metric the
        other has; each array written into its spare slot where it has one (no copy)."""
        out: dict[str, np.ndarray] = {}
        for name in dict.fromkeys([*last.columns, *self.columns]):
            joined = self.spare.get(name)
            if joined is None:
                joined = np.empty(self.rows + 1)
                joined[1:] = self.columns.get(name, np.nan)
            joined[0] = last.columns[name][0] if name in last.columns else np.nan
            out[name] = joined
        return SampleBlock(out)

    def take(self, rows: np.ndarray | slice) -> SampleBlock:
        """The samples at ``rows`` (a mask, positions or a slice), in that order."""
        return SampleBlock({name: values[rows] for name, values in self.columns.items()})

    def with_columns(self, more: Mapping[str, np.ndarray]) -> SampleBlock:
        """These samples with ``more`` metrics (replacing any of the same name)."""
        return SampleBlock({**self.columns, **more})

    def seam(self) -> SampleBlock:
        """The last sample as a chain of pieces holds it to join the next piece to: only the
        values it has (a metric it lacks changes no figure of the next piece), no continuity
        marks (the join makes them). The same sample read with other chunks about it, or in
        another piece, is then the same row (:meth:`same`)."""
        return SampleBlock(
            {
                name: values[-1:].copy()
                for name, values in self.columns.items()
                if name not in MARKS and not np.isnan(values[-1])
            }
        )

    def same(self, other: SampleBlock) -> bool:
        """Whether two blocks hold the same metrics with the same values (order aside)."""
        if set(self.columns) != set(other.columns) or self.rows != other.rows:
            return False
        return all(np.array_equal(values, other.columns[name]) for name, values in self.columns.items())

    @classmethod
    def of_frame(cls, frame: pd.DataFrame) -> SampleBlock:
        """A sample frame's columns as a block."""
        return cls({str(name): frame[name].to_numpy(dtype="float64", na_value=np.nan) for name in frame.columns})
