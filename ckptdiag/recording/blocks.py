"""A recording's samples as a block of float64 arrays: what a report derives its figures from,
without a DataFrame of every metric built only to be read back as arrays."""

from __future__ import annotations

from typing import Any

import numpy as np

from ckptdiag.model.samples import SampleBlock
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


def join_blocks(blocks: list[SampleBlock]) -> SampleBlock:
    """Several recordings' blocks as one, as :func:`~ckptdiag.recording.columns.join_frames`
    joins their frames (in order of their first samples, each seam a gap and a new segment)."""
    if len(blocks) == 1:
        return blocks[0]
    parts: list[SampleBlock] = []
    next_segment = 0
    for block in sorted((b for b in blocks if len(b)), key=lambda b: float(b.t[0])):
        segment = block.values("segment") + next_segment
        gap = block.values("gap_before").copy()
        if parts:
            gap[0] = 1.0
        next_segment = int(segment.max()) + 1
        parts.append(block.with_columns({"segment": segment, "gap_before": gap}))
    if not parts:
        return SampleBlock({"t": np.zeros(0)})
    names = list(dict.fromkeys(name for part in parts for name in part.names))
    return SampleBlock(
        {
            name: np.concatenate([p.values(name) if name in p else np.full(len(p), np.nan) for p in parts])
            for name in names
        }
    )
