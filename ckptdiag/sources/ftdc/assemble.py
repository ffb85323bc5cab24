"""Decoded chunks assembled into samples in time order: a sample frame, or a block of arrays.

A chunk gives its kept metrics as one 2-D block (a row per column name, a column per sample) and
its samples' times. Each chunk's block is copied once, straight to its place in one 2-D array:
joining runs, stacking a dict of columns and reordering the result each copied everything again,
and for files of many small chunks those copies cost as much as decoding did.

A whole window becomes a DataFrame (:func:`frame_of`, counters kept as int64); a long window's
pieces become :class:`~ckptdiag.model.samples.SampleBlock`\\ s (:func:`block_of`, float64 arrays as
the derivation reads them), which skip building a frame only to read it back as arrays.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ckptdiag.model.samples import SampleBlock, gap_intervals

Piece = tuple[list[str], np.ndarray, np.ndarray]  # a chunk's column names, its block, its times (s)
Plan = tuple[list[int] | None, list[tuple[int, int]]]


@dataclass(frozen=True)
class _Placed:
    """Chunk blocks placed in time order: the columns every chunk has (``whole``), those only
    some have (``holes``, NaN where a chunk lacks one), each row after ``room`` unused slots,
    and where a sample lacks the cache size."""

    times: np.ndarray
    everywhere: list[str]
    whole: np.ndarray
    partial: list[str]
    holes: np.ndarray
    missing: np.ndarray


def _placed(pieces: list[Piece], dtype: type[np.generic], room: int = 0) -> _Placed:
    """The pieces' samples in time order (the last one read wins a repeated time), ``whole``
    in ``dtype``, each column after ``room`` unused slots; ``pieces`` is emptied as it is read."""
    times, dest = _destinations(np.concatenate([t for _, _, t in pieces]))
    shapes = list({id(names): names for names, _, _ in pieces}.values())
    everywhere, partial, plans = _shape_plans(shapes)
    whole_rows = np.empty((len(everywhere), room + times.size), dtype=dtype)
    holes_rows = np.full((len(partial), room + times.size), np.nan)
    whole, holes = whole_rows[:, room:], holes_rows[:, room:]
    missing = np.empty(times.size, dtype=bool)
    start = 0
    for names, block, _ in pieces:
        width = block.shape[1]
        d = dest[start : start + width]
        start += width
        feed, extra = plans[id(names)]
        src = block if feed is None else block[feed]
        where: slice | np.ndarray
        cols: slice | np.ndarray
        if d[0] >= 0 and d[-1] - d[0] == width - 1 and (width < 3 or bool(np.all(d[1:] > d[:-1]))):
            where, cols = slice(int(d[0]), int(d[-1]) + 1), slice(None)  # in place: one slice copy
        else:
            cols = np.flatnonzero(d >= 0)
            where = d[cols]
        whole[:, where] = src[:, cols]
        for k, row in extra:
            holes[k, where] = block[row, cols]
        missing[where] = "cache.max_bytes" not in names
    pieces.clear()
    return _Placed(times, everywhere, whole_rows, partial, holes_rows, missing)


def frame_of(pieces: list[Piece]) -> Any:
    """One frame from chunk blocks, in time order (the last row read wins a repeated time); a
    column some chunks lack is NaN there (and float), the others int64 as FTDC stores them.
    The frame wraps the placed arrays without copying them."""
    import pandas as pd

    placed = _placed(pieces, np.int64)
    frames = [
        pd.DataFrame(big.T, columns=names, copy=False)
        for names, big in ((placed.everywhere, placed.whole), (placed.partial, placed.holes))
        if names
    ]
    frame = frames[0] if len(frames) == 1 else pd.concat(frames, axis=1)
    frame.insert(0, "t", placed.times)
    frame["wt_missing"] = placed.missing
    return frame


def block_of(pieces: list[Piece]) -> SampleBlock:
    """The samples :func:`frame_of` gives, as float64 arrays (a flag as 1.0 or 0.0), each with a
    spare slot before it for the row the block is joined to (:meth:`SampleBlock.after`)."""
    placed = _placed(pieces, np.float64, room=1)
    n = placed.times.size
    spare = {"t": np.empty(n + 1)}
    spare["t"][1:] = placed.times
    spare.update(zip(placed.everywhere, placed.whole, strict=True))
    spare.update(zip(placed.partial, placed.holes, strict=True))
    spare["wt_missing"] = np.empty(n + 1)
    spare["wt_missing"][1:] = placed.missing
    return SampleBlock({name: row[1:] for name, row in spare.items()}, spare)


def _destinations(times: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each sample's row in time order (-1: a repeated time, the last one read wins), and the
    times of the rows: -> (times, destination of each sample)."""
    n = times.size
    if n < 2 or bool(np.all(times[1:] > times[:-1])):
        return times, np.arange(n)
    # a clock stepped back, or interim after archives
    sorted_at = np.argsort(times, kind="stable")
    ts = times[sorted_at]
    rows = sorted_at[np.append(ts[1:] != ts[:-1], True)]
    dest = np.full(n, -1)
    dest[rows] = np.arange(rows.size)
    return times[rows], dest


def _shape_plans(shapes: list[list[str]]) -> tuple[list[str], list[str], dict[int, Plan]]:
    """The columns every shape has, those only some have, and per shape (by id) its rows feeding
    the first (None: all, in order) and its (column of the second, row) pairs."""
    order = list(dict.fromkeys(name for names in shapes for name in names))
    everywhere = [name for name in order if all(name in names for names in shapes)]
    partial = [name for name in order if name not in set(everywhere)]
    plans: dict[int, Plan] = {}
    for names in shapes:
        at = {name: i for i, name in enumerate(names)}
        feed = None if names == everywhere else [at[name] for name in everywhere]
        plans[id(names)] = (feed, [(k, at[name]) for k, name in enumerate(partial) if name in at])
    return everywhere, partial, plans


def mark_continuity(frame: Any) -> Any:
    """Index by UTC time; ``seq``; ``segment`` (+1 at each restart: uptime went back);
    ``gap_before``: a sample more than ``GAP_S`` and ``GAP_PERIODS`` typical periods after the
    one before (the collector was off). A collector that samples every 0.1 s, every 10 s, or
    falls behind on a busy server leaves no gap: rates are taken over the real time between
    samples, whatever it is."""
    import pandas as pd

    frame = frame.reset_index(drop=True)
    frame.index = pd.to_datetime(frame["t"], unit="s", utc=True)
    frame.index.name = "time"
    frame["seq"] = np.arange(len(frame))
    uptime = frame.get("uptime_ms")
    restarts = (uptime.diff() < 0) if uptime is not None else pd.Series(False, index=frame.index)
    frame["segment"] = restarts.cumsum().astype(int)
    frame["gap_before"] = gap_intervals(frame["t"].diff().to_numpy(dtype="float64"))
    return frame


MARK_READS = ("uptime_ms",)  # the metrics marking reads (a restart: uptime went back)


def mark_block(block: SampleBlock) -> SampleBlock:
    """The marks :func:`mark_continuity` gives a frame (``seq``, ``segment``, ``gap_before``, as
    float64), given to a block; its times are its index."""
    n = len(block)
    restarts = np.zeros(n, dtype=bool)
    if "uptime_ms" in block:
        uptime = block.values("uptime_ms")
        with np.errstate(invalid="ignore"):
            restarts[1:] = uptime[1:] < uptime[:-1]  # a missing uptime is no restart
    gap = np.zeros(n)
    gap[1:] = gap_intervals(np.diff(block.t))
    segment = np.cumsum(restarts).astype(np.float64)
    return block.with_columns({"seq": np.arange(n, dtype=np.float64), "segment": segment, "gap_before": gap})
