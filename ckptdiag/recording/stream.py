"""A recording's samples a block at a time, checked and marked as the whole recording would be:
what a report of a long recording reads, in memory that does not grow with the recording.

Reading a recording whole checks its samples (damaged values out, impossible times dropped, the
rest put in time order) and marks them from the recorder's events (a gap before a sample, a
restart from a sample on) over all of it at once. A block at a time gives the same samples and
marks when the blocks follow each other in time and no event names a sample of a block already
given: the recorder writes them so (a sample after the ones before, an event just before the
sample it names). Where a recording is not so (a clock set back across blocks, an event far
from its sample, a damaged stream or header, no compiled scanner), :class:`Unstreamable` says
so and the caller reads it whole, as before.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np

from ckptdiag.errors import InputError
from ckptdiag.model.samples import SampleBlock
from ckptdiag.recording import reader
from ckptdiag.recording.blocks import samples_block
from ckptdiag.recording.columns import checked, seq_of
from ckptdiag.recording.gzipped import Damaged, TextState, text_blocks
from ckptdiag.recording.scanned import ColumnBlocks


class Unstreamable(Exception):
    """This recording is read whole (see the module's docstring)."""


class RecordingStream:
    """One recording's samples a block at a time (:meth:`blocks`), each block only the columns
    ``keep`` names; once every block is read, :attr:`recording` holds its header and damage (no
    samples), as :func:`~ckptdiag.recording.reader.read_recording` and
    :meth:`~ckptdiag.recording.reader.Recording.to_block` would have found them."""

    def __init__(self, path: Path, keep: Callable[[str], bool] | None) -> None:
        self.path = path
        self.keep = keep
        self.header: dict[str, Any] | None = None  # once the first block is read
        self.recording: reader.Recording | None = None

    def blocks(self) -> Iterator[SampleBlock]:
        """The samples in time order, checked and marked, a block of text's worth at a time."""
        if reader._jsonl is None:
            raise Unstreamable
        try:
            yield from self._blocks()
        except InputError:  # the file cannot be read, or is not a recording: the whole reading says so
            raise Unstreamable from None

    def _blocks(self) -> Iterator[SampleBlock]:
        state = TextState()
        scan = ColumnBlocks(self.path, self.keep)
        marks = _Marks()
        counts = np.zeros(3, dtype=np.int64)  # values rejected, impossible times, out of order
        try:
            with reader.open_recording(self.path) as f:
                for text in text_blocks(f, reader.TEXT_BLOCK, state):
                    columns = scan.feed(text, len(text))
                    if scan.scanned is None or columns is None:
                        continue
                    if scan.scanned.header_damage:
                        raise Unstreamable
                    self.header = scan.scanned.header
                    marks.events(scan.scanned.events)
                    columns, found = checked(columns)
                    counts += found
                    if len(columns["t"]):
                        marks.samples(columns)
                        yield samples_block(columns, marks.valid)
        except Damaged:
            raise Unstreamable from None
        except OSError as exc:  # read after it was opened: the whole reading says what
            raise Unstreamable from exc
        if scan.scanned is None:
            raise Unstreamable  # no line at all: the whole reading names the error
        got = scan.scanned
        rec = reader.Recording(str(self.path), got.header, truncated=state.truncated, bad_trailer=state.bad_trailer)
        rec.events, rec.damaged_lines, rec.damaged_at = got.events, got.damaged_lines, got.damaged_at
        rec.rejected_values = int(counts[0]) + got.unread_rejected
        rec.bad_times, rec.unordered, rec.ignored_events = int(counts[1]), int(counts[2]), marks.ignored
        self.recording = rec


class _Marks:
    """The events read so far that mark samples, and the latest sample time and number given:
    a block is given only when the whole recording would mark and order it alike."""

    def __init__(self) -> None:
        self.valid: list[dict[str, Any]] = []  # gap and restart events naming a sample
        self.ignored = 0  # gap and restart events naming none
        self.read = 0  # events looked at
        self.last_t = -math.inf
        self.last_seq = -math.inf

    def events(self, events: list[dict[str, Any]]) -> None:
        """The events read up to the end of the block being given."""
        for event in events[self.read :]:
            if event.get("kind") not in ("gap", "restart"):
                continue
            seq = seq_of(event)
            if seq is None:
                self.ignored += 1
            elif seq <= self.last_seq:
                raise Unstreamable  # it names a sample already given: its marks would change
            else:
                self.valid.append(event)
        self.read = len(events)

    def samples(self, columns: dict[str, np.ndarray]) -> None:
        """A block's samples (in time order within it), given after the ones before."""
        t = columns["t"]
        if t[0] < self.last_t:
            raise Unstreamable  # before a sample already given: the whole reading sorts it in
        self.last_t = float(t[-1])
        seq = columns["seq"][np.isfinite(columns["seq"])]
        if seq.size:
            self.last_seq = max(self.last_seq, float(seq.max()))
