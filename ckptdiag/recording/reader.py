"""Reading recordings back: the header, samples and events; a torn tail and damaged lines
are counted and skipped, never fatal."""

from __future__ import annotations

import gc
import itertools
import json
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ckptdiag import forking
from ckptdiag.errors import InputError
from ckptdiag.guard.inputs import check_readable

if TYPE_CHECKING:
    import numpy as np
    import pandas as pd
from ckptdiag.recording.columns import _Columns, _columns, _frame, checked, joined_columns, seq_of
from ckptdiag.recording.gzipped import text_of
from ckptdiag.recording.header import header_of, not_a_recording


@dataclass
class Recording:
    """A recording read back: header, samples and events, in file order."""

    path: str
    header: dict[str, Any]
    samples: list[dict[str, Any]] = field(default_factory=list)
    events: list[dict[str, Any]] = field(default_factory=list)
    truncated: bool = False  # the file ended inside a line or without its gzip trailer
    damaged_lines: int = 0  # lines that were not JSON (skipped)
    damaged_at: list[int] = field(default_factory=list)  # their line numbers (the first few)
    bad_trailer: bool = False  # gzip: the CRC or length at the end did not match (every line kept)
    header_damage: str = ""  # what was wrong with the header line (the samples are read all the same)
    columns: dict[str, np.ndarray] | None = None  # read with columns=True: the samples, as columns
    # set by to_frame: values rejected as damage (not numbers, infinite, beyond 64 bits), samples
    # dropped for an impossible time, samples out of time order (sorted), events without next_seq
    rejected_values: int = 0
    bad_times: int = 0
    unordered: int = 0
    ignored_events: int = 0

    @property
    def sample_count(self) -> int:
        """How many samples were read (as dicts or as columns)."""
        if self.columns is not None:
            return len(self.columns["t"])
        return len(self.samples)

    def to_frame(self) -> pd.DataFrame:
        """The samples as a DataFrame (see :func:`samples_frame`), in time order, with damaged
        values, impossible times and events that name no sample left out and counted here."""
        columns = self.columns if self.columns is not None else (_columns(self.samples) if self.samples else {})
        columns, counts = checked(columns)
        self.rejected_values, self.bad_times, self.unordered = counts
        events = [e for e in self.events if e.get("kind") not in ("gap", "restart") or seq_of(e) is not None]
        self.ignored_events = len(self.events) - len(events)
        return _frame(columns, events)

    def damage(self) -> list[str]:
        """What was wrong with the file, one line each (complete after :meth:`to_frame`)."""
        out = []
        if self.header_damage:
            out.append(f"{self.path}: {self.header_damage}")
        if self.bad_trailer:
            out.append(f"{self.path}: gzip trailer does not match (CRC or length): every line before it was read")
        if self.truncated:
            out.append(f"{self.path}: ended inside a line or damaged inside (read up to there)")
        if self.damaged_lines:
            s = "s" if self.damaged_lines != 1 else ""
            where = ", ".join(map(str, self.damaged_at))
            more = ", ..." if self.damaged_lines > len(self.damaged_at) else ""
            out.append(f"{self.path}: {self.damaged_lines} damaged line{s} skipped (not JSON: line {where}{more})")
        for count, what in (
            (self.rejected_values, "value{s} rejected (not a number, infinite, or beyond 64 bits)"),
            (self.bad_times, "sample{s} dropped: time outside 1970-2255"),
            (self.unordered, "sample{s} out of time order (sorted)"),
            (self.ignored_events, "gap/restart event{s} without a valid next_seq ignored"),
        ):
            if count:
                out.append(f"{self.path}: {count} " + what.format(s="s" if count != 1 else ""))
        return out


try:  # a day of samples is 86,400 lines: orjson parses them ~4x faster than json
    from orjson import loads as _loads
except ImportError:  # pragma: no cover - orjson is a dependency; json is the same, slower
    _loads = json.loads  # type: ignore[assignment]


def _parse_line(line: bytes) -> Any:
    """One line as JSON. A number beyond a double's range (1e400: damage, never written) makes
    orjson refuse the whole line; the standard library reads it as infinite instead, a value
    rejected and counted later, not a sample lost (the scanner reads it so too). NaN and
    Infinity, which are not JSON, stay refused."""
    try:
        return _loads(line)
    except ValueError:
        return json.loads(line, parse_constant=_not_json)


def _not_json(constant: str) -> float:
    raise ValueError(f"{constant} is not JSON")


try:  # the compiled scanner (setup.py); without it every line is parsed (same results, slower)
    from ckptdiag import _jsonl as _jsonl
except ImportError:  # pragma: no cover - depends on the build
    _jsonl = None  # type: ignore[assignment]


def read_recording(path: Path | str, *, columns: bool = False) -> Recording:
    """Load a recording, complete or still being written.

    ``columns=True`` reads the samples straight into float columns (``Recording.columns``, what
    :meth:`Recording.to_frame` needs) instead of a dict per sample: several times faster on long
    recordings when the compiled scanner is there.
    """
    path = Path(path)
    check_readable(path)
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise InputError(f"cannot read {path}: {exc.strerror}", "check the path and its permissions") from None
    if not raw:
        raise InputError(
            f"{path} is empty", "a recording starts with a header line; was it written by 'ckptdiag record'?"
        )
    text, end, truncated, bad_trailer = text_of(raw)
    if columns and _jsonl is not None:
        rec = _read_columns(path, text, end, truncated)
    else:
        rec = _read_parsed(path, text, end, truncated, columns)
    rec.bad_trailer = bad_trailer
    return rec


BLOCK_BYTES = 512 << 10  # text parsed at a time without the scanner (~250 lines: their objects stay in cache)


def _read_parsed(path: Path, text: bytes, end: int, truncated: bool, columns: bool) -> Recording:
    """Every line parsed (no compiled scanner, or a dict per sample asked for). With
    ``columns``, a long text is parsed in two halves at once, the second by a forked child."""
    at, number = 0, 1
    while at < end:  # the header is the first line that is not blank
        stop = text.find(b"\n", at, end)
        line = text[at:stop]
        at, number = stop + 1, number + 1
        if line.strip():
            break
    else:
        line = b""
    head, damage = header_of(path, line or None)
    rec = Recording(str(path), head, truncated=truncated, header_damage=damage)
    with _collector_paused():
        parts = _parsed_halves(text, at, end, number) if columns else [_parse_lines(text, at, end, number, False)]
    blocks: list[dict[str, np.ndarray]] = []
    for part, part_blocks in parts:
        rec.samples += part.samples
        rec.events += part.events
        rec.damaged_lines += part.damaged_lines
        rec.damaged_at = (rec.damaged_at + part.damaged_at)[:NAMED_DAMAGE]
        blocks += part_blocks
    if columns:  # one join of every block: each column copied once
        rec.columns = joined_columns(blocks)
    check_is_recording(path, rec)
    return rec


PARSE_SPLIT = 32 << 20  # text this long is parsed in two halves at once (a forked child: ~20 ms)

_Parsed = tuple[Recording, list[dict[str, "np.ndarray"]]]  # samples, events, damage; columns a block


def _parsed_halves(text: bytes, at: int, end: int, number: int) -> list[_Parsed]:
    """The lines of ``text[at:end]`` as columns, in two halves on both cores when the text is
    long and this process may fork (else in one piece here). A child that fails costs only time:
    its half is parsed here."""
    middle = text.find(b"\n", (at + end) // 2, end) + 1
    if end - at < PARSE_SPLIT or not at < middle < end or not forking.may_fork():
        return [_parse_lines(text, at, end, number, True)]
    later_number = number + text.count(b"\n", at, middle)
    with forking.Child(_parsed_joined, text, middle, end, later_number) as child:
        first = _parse_lines(text, at, middle, number, True)
        second = child.result() or _parse_lines(text, middle, end, later_number, True)
    return [first, second]


def _parsed_joined(text: bytes, at: int, end: int, number: int) -> _Parsed:
    """As :func:`_parse_lines` with columns, the blocks' columns joined into one: what a child
    sends back (a few large arrays, not thousands of small ones)."""
    part, blocks = _parse_lines(text, at, end, number, True)
    return part, [joined_columns(blocks)]


def _parse_lines(text: bytes, at: int, end: int, number: int, columns: bool) -> _Parsed:
    """The lines of ``text[at:end]`` (``at`` a line's start, ``end`` just past a newline, the
    first line number ``number``), a block of lines at a time: their samples as dicts (unless
    ``columns``), events and damage in a :class:`Recording` without a header, and with
    ``columns`` each block's samples as columns, made before the next block is parsed (a day
    of samples held as dicts at once took 2.3x the memory)."""
    part = Recording("", {})
    blocks: list[dict[str, np.ndarray]] = []
    while at < end:
        stop = text.find(b"\n", min(at + BLOCK_BYTES, end - 1), end)  # end - 1 is a newline
        lines = text[at:stop].split(b"\n")
        objs = _parse_block(lines, part, number)
        part.events += [obj for obj in objs if obj.get("type") == "event"]
        samples = [obj for obj in objs if obj.get("type") == "sample"]
        if columns:
            blocks.append(_columns(samples))
        else:
            part.samples += samples
        at, number = stop + 1, number + len(lines)
    return part, blocks


@contextmanager
def _collector_paused() -> Iterator[None]:
    """Python's cycle collector paused while lines are parsed: parsed JSON holds no reference
    cycles, so it would free nothing, but it walks every sample of the block again and again
    as they are made (a quarter of a second on a day's recording)."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def _parse_block(lines: list[bytes], rec: Recording, number: int) -> list[dict[str, Any]]:
    """The objects of ``lines`` (the first is line ``number``): all parsed in one call when each
    is JSON, else line by line, blank lines skipped and damaged ones counted."""
    try:
        parsed = list(map(_loads, lines))
    except (ValueError, RecursionError):  # orjson.JSONDecodeError is a ValueError too
        parsed = []
        for n, line in enumerate(lines, number):
            if not line.strip():
                continue
            try:
                parsed.append(_parse_line(line))
            except (ValueError, RecursionError):
                _damaged(rec, n)
    return [obj for obj in parsed if type(obj) is dict]


NAMED_DAMAGE = 10  # damaged lines named by number in the evidence (the rest are counted)


def _damaged(rec: Recording, number: int) -> None:
    """Count a damaged line (skip it: every other line is still good) and, among the first
    :data:`NAMED_DAMAGE`, name it by its ``number``."""
    rec.damaged_lines += 1
    if len(rec.damaged_at) < NAMED_DAMAGE:
        rec.damaged_at.append(number)


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


def _read_columns(path: Path, text: bytes, end: int, truncated: bool) -> Recording:
    """The fast reader: the compiled scanner's numbers, named once per line shape."""
    import numpy as np

    values, lines = _scanned(text, end)
    if not len(lines):
        raise not_a_recording(path)
    head, damage = header_of(path, text[lines[0, 0] : lines[0, 1]])
    rec = Recording(str(path), head, truncated=truncated, header_damage=damage)
    lines = lines[1:]
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
            obj = _parse_line(text[start:stop])
        except (ValueError, RecursionError):
            damaged.append(lines[members, 0])  # same shape, same fate: none of them is JSON
            continue
        if not isinstance(obj, dict):
            continue
        if obj.get("type") == "sample":
            kinds[members] = 1
            sample_shapes.append((members, obj))
        elif obj.get("type") == "event":
            events += [(i, _parse_line(text[lines[i, 0] : lines[i, 1]])) for i in members]  # few: each
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
                cols.place(np.asarray([row]), _parse_line(text[lines[i, 0] : lines[i, 1]]), None)
    rec.columns = cols.data
    if damaged:  # counted, and the first in the file named (shapes come in no order of lines)
        starts = np.sort(np.concatenate(damaged))
        rec.damaged_lines = int(starts.size)
        rec.damaged_at = [_line_number(text, int(at)) for at in starts[:NAMED_DAMAGE]]
    rec.events = [event for _, event in sorted(events, key=lambda item: item[0])]  # file order
    check_is_recording(path, rec)
    return rec


def check_is_recording(path: Path, rec: Recording) -> None:
    """A file whose first line is no header and that holds no sample or event is not a recording."""
    if rec.header_damage and not rec.sample_count and not rec.events:
        raise not_a_recording(path)
