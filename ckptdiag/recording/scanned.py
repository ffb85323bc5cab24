"""A recording's lines read by the compiled scanner (``_jsonl.c``) into columns, a block of text
at a time: each block's numbers are named once per line shape and placed in that block's
columns, its events and damaged lines kept in file order, and the blocks' columns joined once
at the end. A long recording's inflated text is never held whole (a day of it is ~130 MB, and
its scan as much again)."""

from __future__ import annotations

import itertools
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ckptdiag.recording.columns import _Columns, joined_columns, kept
from ckptdiag.recording.header import header_of, not_a_recording

if TYPE_CHECKING:
    import numpy as np

try:  # the compiled scanner (setup.py); without it every line is parsed (same results, slower)
    from ckptdiag import _jsonl as _jsonl
except ImportError:  # pragma: no cover - depends on the build
    _jsonl = None  # type: ignore[assignment]

NAMED_DAMAGE = 10  # damaged lines named by number in the evidence (the rest are counted)

try:  # a day of samples is 86,400 lines: orjson parses them ~4x faster than json
    from orjson import loads as loads
except ImportError:  # pragma: no cover - orjson is a dependency; json is the same, slower
    loads = json.loads  # type: ignore[assignment]


def parse_line(line: bytes) -> Any:
    """One line as JSON. A number beyond a double's range (1e400: damage, never written) makes
    orjson refuse the whole line; the standard library reads it as infinite instead, a value
    rejected and counted later, not a sample lost (the scanner reads it so too). NaN and
    Infinity, which are not JSON, stay refused."""
    try:
        return loads(line)
    except ValueError:
        return json.loads(line, parse_constant=_not_json)


def _not_json(constant: str) -> float:
    raise ValueError(f"{constant} is not JSON")


@dataclass
class Scanned:
    """What the lines of a recording said: its header, the samples as columns, the events and
    the damaged lines (counted; the first :data:`NAMED_DAMAGE` named by number)."""

    header: dict[str, Any]
    header_damage: str
    columns: dict[str, np.ndarray] = field(default_factory=dict)
    events: list[dict[str, Any]] = field(default_factory=list)
    damaged_lines: int = 0
    damaged_at: list[int] = field(default_factory=list)
    unread_rejected: int = 0  # damaged values in the columns not kept


def _line_number(text: bytes, offset: int) -> int:
    """The number of the line that starts at ``offset`` (counted: only for the lines named)."""
    return text.count(b"\n", 0, offset) + 1


SCAN_SPLIT = 8 << 20  # a text this long is scanned in two halves at once (the scanner lets go of the GIL)


def _scanned(text: bytes, end: int) -> tuple[Any, Any]:
    """The compiled scanner's numbers and lines of ``text[:end]`` (see ``_jsonl.c``), a long
    text in two halves on two threads (split at a line's start): -> (float64 values, int64 rows
    of [start, end, hash, count, first value])."""
    middle = text.find(b"\n", end // 2, end) + 1 if end >= SCAN_SPLIT else 0
    if middle <= 0:
        return _joined_scans([_jsonl.scan(text, end)])
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(max_workers=2) as pool:
        later = pool.submit(_jsonl.scan, text, end, middle)
        return _joined_scans([_jsonl.scan(text, middle), later.result()])


def _joined_scans(parts: list[tuple[bytes, bytes]]) -> tuple[Any, Any]:
    """Scans of consecutive stretches of one text as one: each part's first-value indexes moved
    past the values of the parts before it."""
    import numpy as np

    values = [np.frombuffer(v, dtype=np.float64) for v, _ in parts]
    lines = [np.frombuffer(rows, dtype=np.int64).reshape(-1, 5) for _, rows in parts]
    if len(parts) == 1:
        return values[0], lines[0]
    offset = 0
    for k, part in enumerate(lines):
        if offset:
            lines[k] = part = part.copy()
            part[:, 4] += offset
        offset += values[k].size
    return np.concatenate(values), np.concatenate(lines)


MAX_RUNS = 64  # more runs of one shape than this (shapes interleaved line by line): one gather instead


def _place_runs(cols: _Columns, obj: dict[str, Any], rows: Any, firsts: Any, values: Any, count: int) -> bool:
    """Place a shape's samples where their numbers lie one line after another in ``values`` (no
    other line's numbers between): each such run is a view of ``values`` and a slice of rows,
    placed without gathering the numbers into a new block (a day's block and its index were 200
    MB of fresh pages). False when they lie in too many runs, or do not line up (the caller
    places them another way)."""
    import numpy as np

    breaks = np.flatnonzero((np.diff(firsts) != count) | (np.diff(rows) != 1)) + 1
    if breaks.size >= MAX_RUNS:
        return False
    bounds = [0, *breaks.tolist(), len(firsts)]
    for a, b in itertools.pairwise(bounds):
        first, row = int(firsts[a]), int(rows[a])
        block = values[first : first + (b - a) * count].reshape(b - a, count)
        if not cols.place(slice(row, row + b - a), obj, block):
            return False
    return True


def _groups(keys: Any) -> list[Any]:
    """The rows of each distinct key, in order of each key's first row (rows in order within a
    group): one sort instead of a dict of lists built a row at a time."""
    import numpy as np

    if not len(keys):
        return []
    _, first, inverse = np.unique(keys, return_index=True, return_inverse=True)
    rank = np.empty(first.size, dtype=np.int64)
    rank[np.argsort(first)] = np.arange(first.size)
    group = rank[inverse.reshape(-1)]
    rows = np.argsort(group, kind="stable")
    bounds = np.searchsorted(group[rows], np.arange(first.size + 1))
    return [rows[bounds[j] : bounds[j + 1]] for j in range(first.size)]


class ColumnBlocks:
    """A recording read a block of whole lines at a time (:meth:`feed`, in file order): the
    header is the first line of the text that is not blank; the samples' columns, the events
    and the damage :meth:`result` gives are those of the text read whole."""

    def __init__(self, path: Path, keep: Callable[[str], bool] | None = None) -> None:
        self.path = path
        self.keep = keep  # the columns kept (None: all): each block is let go of the others
        self.scanned: Scanned | None = None
        self.number = 1  # the line number of the next block's first line

    def feed(self, text: bytes, end: int) -> dict[str, np.ndarray] | None:
        """The lines of ``text[:end]`` (``end`` just past a newline, or the text's end): their
        samples as columns (None: no line yet after the header); their events and damage go to
        :attr:`scanned`."""
        values, lines = _scanned(text, end)
        number, self.number = self.number, self.number + text.count(b"\n", 0, end)
        if self.scanned is None:
            if not len(lines):
                return None
            self.scanned = Scanned(*header_of(self.path, text[lines[0, 0] : lines[0, 1]]))
            lines = lines[1:]
        return self._lines(self.scanned, text, values, lines, number)

    def _lines(self, into: Scanned, text: bytes, values: Any, lines: Any, number: int) -> dict[str, np.ndarray]:
        """One block's lines (``number``: its first line's): samples, events, damage."""
        import numpy as np

        # one representative line per shape (hash, count); lines the scanner could not read
        # (count -1) are shapes of their own
        keys = np.zeros(len(lines), dtype=[("hash", "i8"), ("count", "i8"), ("alone", "i8")])
        keys["hash"], keys["count"] = lines[:, 2], lines[:, 3]
        keys["alone"] = np.where(lines[:, 3] < 0, -1 - np.arange(len(lines)), 0)
        kinds = np.zeros(len(lines), dtype=np.int8)  # 1: sample
        sample_shapes: list[tuple[np.ndarray, dict[str, Any]]] = []
        events: list[tuple[int, dict[str, Any]]] = []
        damaged: list[np.ndarray] = []  # where the lines that are not JSON start, a shape at a time
        for members in _groups(keys):
            start, stop = lines[members[0], 0], lines[members[0], 1]
            try:
                obj = parse_line(text[start:stop])
            except (ValueError, RecursionError):
                damaged.append(lines[members, 0])  # same shape, same fate: none of them is JSON
                continue
            if not isinstance(obj, dict):
                continue
            if obj.get("type") == "sample":
                kinds[members] = 1
                sample_shapes.append((members, obj))
            elif obj.get("type") == "event":
                events += [(i, parse_line(text[lines[i, 0] : lines[i, 1]])) for i in members]  # few: each
        block, rejected = kept(_placed(text, values, lines, kinds, sample_shapes), self.keep)
        into.unread_rejected += rejected
        if damaged:  # counted, and the first in the file named (shapes come in no order of lines)
            starts = np.sort(np.concatenate(damaged))
            into.damaged_lines += int(starts.size)
            named = starts[: max(NAMED_DAMAGE - len(into.damaged_at), 0)]
            into.damaged_at += [number - 1 + _line_number(text, int(at)) for at in named]
        into.events += [event for _, event in sorted(events, key=lambda item: item[0])]  # file order
        return block

    def result(self, blocks: list[dict[str, np.ndarray]]) -> Scanned:
        """What the lines said, the samples the columns of every block :meth:`feed` gave (raises
        :func:`not_a_recording` when there was no line at all)."""
        if self.scanned is None:
            raise not_a_recording(self.path)
        self.scanned.columns = joined_columns(blocks)
        return self.scanned


def _placed(
    text: bytes, values: Any, lines: Any, kinds: Any, sample_shapes: list[tuple[Any, dict[str, Any]]]
) -> dict[str, np.ndarray]:
    """A block's samples as columns: each shape's numbers placed at its lines' rows."""
    import numpy as np

    rows_of = np.cumsum(kinds) - 1
    cols = _Columns(int(kinds.sum()))
    for members, obj in sample_shapes:
        idx = np.asarray(members)
        rows = rows_of[idx]
        count = int(lines[members[0], 3])
        if count >= 0 and _place_runs(cols, obj, rows, lines[idx, 4], values, count):
            continue
        block = None
        if count >= 0:
            block = values[lines[idx, 4][:, None] + np.arange(count)]
        if block is None or not cols.place(rows, obj, block):
            for i, row in zip(members, rows.tolist(), strict=True):  # parse them one by one
                cols.place(np.asarray([row]), parse_line(text[lines[i, 0] : lines[i, 1]]), None)
    return cols.data
