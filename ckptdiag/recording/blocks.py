"""A recording's samples as a block of float64 arrays: what a report derives its figures from,
without a DataFrame of every metric built only to be read back as arrays; and recordings
joined one after another as :func:`~ckptdiag.recording.columns.join_frames` joins their frames."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np

from ckptdiag.errors import InputError
from ckptdiag.model.samples import SampleBlock
from ckptdiag.model.window import when
from ckptdiag.recording.columns import marks


def samples_block(columns: dict[str, np.ndarray], events: list[dict[str, Any]] | None) -> SampleBlock:
    """The samples :func:`~ckptdiag.recording.columns.samples_frame` makes a frame of, as a block
    of float64 arrays with the same marks."""
    if not columns or not len(columns["t"]):
        return SampleBlock({"t": np.zeros(0)})
    gap_before, segment = marks(columns["seq"], events)
    out = {name: values.astype(np.float64, copy=False) for name, values in columns.items()}
    out["gap_before"], out["segment"] = gap_before.astype(np.float64), segment.astype(np.float64)
    return SampleBlock(out)


class Joiner:
    """Recordings joined one after another, in order of their first samples (:meth:`recording`
    for each, its blocks in time order): each later recording's first sample a gap and its
    segments after the last one's, so that no rate is taken across two recordings; a recording
    that begins before the ones before it end is an error (time would run back at the seam)."""

    def __init__(self) -> None:
        self.before: Path | None = None  # the last recording with samples
        self.next_segment = 0
        self.times = [np.inf, -np.inf]  # of every sample joined

    def recording(self, blocks: Iterator[SampleBlock], path: Path) -> Iterator[SampleBlock]:
        """One recording's blocks, marked as the join marks them."""
        offset, highest, first = self.next_segment, -1.0, True
        for block in blocks:
            if first and self.before is not None:
                if float(block.t[0]) <= self.times[1]:
                    raise overlap(path, float(block.t[0]), self.before, self.times[1])
                gap = block.values("gap_before").copy()
                gap[0] = 1.0
                block = block.with_columns({"gap_before": gap})
            first = False
            segment = block.values("segment") + offset
            highest = max(highest, float(segment.max()))
            self.times = [min(self.times[0], float(block.t.min())), max(self.times[1], float(block.t.max()))]
            yield block.with_columns({"segment": segment})
        if highest >= 0:
            self.before = path
            self.next_segment = int(highest) + 1

    def held(self) -> tuple[float | None, float | None]:
        """The recordings' own time range (None, None: no sample)."""
        return (self.times[0], self.times[1]) if self.before is not None else (None, None)


def join_blocks(blocks: list[tuple[SampleBlock, Path]]) -> SampleBlock:
    """Several recordings' blocks (each with its file) as one, as :class:`Joiner` joins them."""
    if len(blocks) == 1:
        return blocks[0][0]
    joiner = Joiner()
    ordered = sorted(((b, path) for b, path in blocks if len(b)), key=lambda item: float(item[0].t[0]))
    parts = [part for block, path in ordered for part in joiner.recording(iter([block]), path)]
    if not parts:
        return SampleBlock({"t": np.zeros(0)})
    names = list(dict.fromkeys(name for part in parts for name in part.names))
    return SampleBlock({name: np.concatenate([_values(p, name) for p in parts]) for name in names})


def _values(block: SampleBlock, name: str) -> np.ndarray:
    """A block's values of ``name``, NaN throughout where it has none."""
    return block.values(name) if name in block else np.full(len(block), np.nan)


def overlap(path: Path, start: float, before: Path, end: float) -> InputError:
    """The error for recordings whose times overlap: joined, time would run back at the seam."""
    return InputError(
        f"the recordings overlap in time: {path} begins at {when(start)}, before {before} ends at {when(end)}",
        "report each recording on its own: two recorders of one server, or one recording given twice?",
    )
