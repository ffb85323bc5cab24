"""Reading recordings back: the header, samples and events; a torn tail and damaged lines
are counted and skipped, never fatal."""

from __future__ import annotations

import gc
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from io import BufferedReader
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ckptdiag import forking
from ckptdiag.errors import InputError
from ckptdiag.guard.inputs import check_readable

if TYPE_CHECKING:
    import numpy as np
    import pandas as pd

    from ckptdiag.model.samples import SampleBlock
from ckptdiag.recording.blocks import samples_block
from ckptdiag.recording.columns import _columns, _frame, checked, joined_columns, kept, seq_of
from ckptdiag.recording.gzipped import Damaged, TextState, text_blocks, text_of
from ckptdiag.recording.header import header_of, not_a_recording
from ckptdiag.recording.scanned import NAMED_DAMAGE, ColumnBlocks, Scanned, loads, parse_line
from ckptdiag.recording.scanned import _jsonl as _jsonl


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
    unread_rejected: int = 0  # damaged values in columns the reader was told not to keep

    @property
    def sample_count(self) -> int:
        """How many samples were read (as dicts or as columns)."""
        if self.columns is not None:
            return len(self.columns["t"])
        return len(self.samples)

    def to_frame(self) -> pd.DataFrame:
        """The samples as a DataFrame (see :func:`samples_frame`), in time order, with damaged
        values, impossible times and events that name no sample left out and counted here."""
        return _frame(*self._checked())

    def to_block(self, keep: Callable[[str], bool] | None = None) -> SampleBlock:
        """The samples :meth:`to_frame` gives, as a block of float64 arrays (``gap_before`` and
        ``segment`` as 1.0/0.0 and numbers), only the columns ``keep`` names where given (the
        damage is counted over all of them); the columns read are let go of."""
        columns, events = self._checked()
        self.columns = None
        if keep is not None:
            columns = {name: values for name, values in columns.items() if name in ("t", "seq") or keep(name)}
        return samples_block(columns, events)

    def _checked(self) -> tuple[dict[str, np.ndarray], list[dict[str, Any]]]:
        """The samples' columns with damage taken out, and the events that mark them."""
        columns = self.columns if self.columns is not None else (_columns(self.samples) if self.samples else {})
        columns, (rejected, self.bad_times, self.unordered) = checked(columns)
        self.rejected_values = rejected + self.unread_rejected
        events = [e for e in self.events if e.get("kind") not in ("gap", "restart") or seq_of(e) is not None]
        self.ignored_events = len(self.events) - len(events)
        return columns, events

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


def read_recording(path: Path | str, *, columns: bool = False, keep: Callable[[str], bool] | None = None) -> Recording:
    """Load a recording, complete or still being written.

    ``columns=True`` reads the samples straight into float columns (``Recording.columns``, what
    :meth:`Recording.to_frame` needs) instead of a dict per sample: several times faster on long
    recordings when the compiled scanner is there. ``keep`` (with ``columns``) names the columns
    held (``t`` and ``seq`` always are): each block of lines is let go of the others as it is
    read, their damage counted all the same.
    """
    path = Path(path)
    raw = raw_bytes(path)
    if columns and _jsonl is not None:
        try:
            return _read_streamed(path, raw, keep)
        except Damaged:  # damage inside the gzip stream, or its start lost: read it whole
            pass
    text, end, truncated, bad_trailer = text_of(raw)
    if columns and _jsonl is not None:
        rec = _recording(path, _scanned_whole(path, text, end, keep), truncated)
    else:
        rec = _read_parsed(path, text, end, truncated, columns, keep if columns else None)
    rec.bad_trailer = bad_trailer
    return rec


def raw_bytes(path: Path) -> bytes:
    """A recording file's bytes (one-line errors for a file that cannot be read, or is empty)."""
    with open_recording(path) as f:
        try:
            return f.read()
        except OSError as exc:
            raise _unreadable(path, exc) from None


def open_recording(path: Path) -> BufferedReader:
    """A recording file open for reading (one-line errors for a file that cannot be read, or is
    empty)."""
    check_readable(path)
    try:
        f = path.open("rb")
        empty = not f.peek(1)
    except OSError as exc:
        raise _unreadable(path, exc) from None
    if empty:
        f.close()
        raise InputError(
            f"{path} is empty", "a recording starts with a header line; was it written by 'ckptdiag record'?"
        )
    return f


def _unreadable(path: Path, exc: OSError) -> InputError:
    return InputError(f"cannot read {path}: {exc.strerror}", "check the path and its permissions")


TEXT_BLOCK = 8 << 20  # text inflated and scanned at a time (two scanner threads from 8 MB: SCAN_SPLIT)


def _read_streamed(path: Path, raw: bytes, keep: Callable[[str], bool] | None) -> Recording:
    """The fast reader on a text inflated a block at a time (raises :class:`Damaged` where the
    stream cannot be read so: the whole text is then read by :func:`text_of`)."""
    state = TextState()
    scan = ColumnBlocks(path, keep)
    blocks = [
        columns for text in text_blocks(raw, TEXT_BLOCK, state) if (columns := scan.feed(text, len(text))) is not None
    ]
    rec = _recording(path, scan.result(blocks), state.truncated)
    rec.bad_trailer = state.bad_trailer
    return rec


def _scanned_whole(path: Path, text: bytes, end: int, keep: Callable[[str], bool] | None) -> Scanned:
    """The fast reader on a text held whole (one whose stream was damaged)."""
    scan = ColumnBlocks(path, keep)
    columns = scan.feed(text, end)
    return scan.result([columns] if columns else [])


def _recording(path: Path, scanned: Scanned, truncated: bool) -> Recording:
    """A recording from what its lines said."""
    rec = Recording(str(path), scanned.header, truncated=truncated, header_damage=scanned.header_damage)
    rec.columns, rec.events = scanned.columns, scanned.events
    rec.damaged_lines, rec.damaged_at = scanned.damaged_lines, scanned.damaged_at
    rec.unread_rejected = scanned.unread_rejected
    check_is_recording(path, rec)
    return rec


BLOCK_BYTES = 512 << 10  # text parsed at a time without the scanner (~250 lines: their objects stay in cache)


def _read_parsed(
    path: Path, text: bytes, end: int, truncated: bool, columns: bool, keep: Callable[[str], bool] | None = None
) -> Recording:
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
        parts = _parsed_halves(text, at, end, number, keep) if columns else [_parse_lines(text, at, end, number)]
    blocks: list[dict[str, np.ndarray]] = []
    for part, part_blocks in parts:
        rec.samples += part.samples
        rec.events += part.events
        rec.damaged_lines += part.damaged_lines
        rec.damaged_at = (rec.damaged_at + part.damaged_at)[:NAMED_DAMAGE]
        rec.unread_rejected += part.unread_rejected
        blocks += part_blocks
    if columns:  # one join of every block: each column copied once
        rec.columns = joined_columns(blocks)
    check_is_recording(path, rec)
    return rec


PARSE_SPLIT = 32 << 20  # text this long is parsed in two halves at once (a forked child: ~20 ms)

_Parsed = tuple[Recording, list[dict[str, "np.ndarray"]]]  # samples, events, damage; columns a block


def _parsed_halves(text: bytes, at: int, end: int, number: int, keep: Callable[[str], bool] | None) -> list[_Parsed]:
    """The lines of ``text[at:end]`` as columns, in two halves on both cores when the text is
    long and this process may fork (else in one piece here). A child that fails costs only time:
    its half is parsed here."""
    middle = text.find(b"\n", (at + end) // 2, end) + 1
    if end - at < PARSE_SPLIT or not at < middle < end or not forking.may_fork():
        return [_parse_lines(text, at, end, number, True, keep)]
    later_number = number + text.count(b"\n", at, middle)
    with forking.Child(_parsed_joined, text, middle, end, later_number, keep) as child:
        first = _parse_lines(text, at, middle, number, True, keep)
        second = child.result() or _parse_lines(text, middle, end, later_number, True, keep)
    return [first, second]


def _parsed_joined(text: bytes, at: int, end: int, number: int, keep: Callable[[str], bool] | None) -> _Parsed:
    """As :func:`_parse_lines` with columns, the blocks' columns joined into one: what a child
    sends back (a few large arrays, not thousands of small ones)."""
    part, blocks = _parse_lines(text, at, end, number, True, keep)
    return part, [joined_columns(blocks)]


def _parse_lines(
    text: bytes, at: int, end: int, number: int, columns: bool = False, keep: Callable[[str], bool] | None = None
) -> _Parsed:
    """The lines of ``text[at:end]`` (``at`` a line's start, ``end`` just past a newline, the
    first line number ``number``), a block of lines at a time: their samples as dicts (unless
    ``columns``), events and damage in a :class:`Recording` without a header, and with
    ``columns`` each block's samples as columns, made before the next block is parsed (a day
    of samples held as dicts at once took 2.3x the memory), only those ``keep`` names."""
    part = Recording("", {})
    blocks: list[dict[str, np.ndarray]] = []
    while at < end:
        stop = text.find(b"\n", min(at + BLOCK_BYTES, end - 1), end)  # end - 1 is a newline
        lines = text[at:stop].split(b"\n")
        objs = _parse_block(lines, part, number)
        part.events += [obj for obj in objs if obj.get("type") == "event"]
        samples = [obj for obj in objs if obj.get("type") == "sample"]
        if columns:
            block, rejected = kept(_columns(samples), keep)
            blocks.append(block)
            part.unread_rejected += rejected
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
        parsed = list(map(loads, lines))
    except (ValueError, RecursionError):  # orjson.JSONDecodeError is a ValueError too
        parsed = []
        for n, line in enumerate(lines, number):
            if not line.strip():
                continue
            try:
                parsed.append(parse_line(line))
            except (ValueError, RecursionError):
                _damaged(rec, n)
    return [obj for obj in parsed if type(obj) is dict]


def _damaged(rec: Recording, number: int) -> None:
    """Count a damaged line (skip it: every other line is still good) and, among the first
    :data:`NAMED_DAMAGE`, name it by its ``number``."""
    rec.damaged_lines += 1
    if len(rec.damaged_at) < NAMED_DAMAGE:
        rec.damaged_at.append(number)


def check_is_recording(path: Path, rec: Recording) -> None:
    """A file whose first line is no header and that holds no sample or event is not a recording."""
    if rec.header_damage and not rec.sample_count and not rec.events:
        raise not_a_recording(path)
