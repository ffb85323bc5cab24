"""Recordings in a window, diagnosed a block at a time: the memory a report takes does not grow
with the recordings' length.

Each recording is read a block of text at a time (:mod:`ckptdiag.recording.stream`), in order of
its first sample as recordings are joined (each seam a gap and a new segment, so that no rate
is taken across two recordings); each block is cut to the window, derived after the row before
it and handed to the diagnosis, which judges a day at a time. A recording the stream cannot
read as its whole reading would (damage, a clock set back across blocks, an event naming a
sample far behind it) makes every recording of the report be read whole, as before.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from ckptdiag import recording
from ckptdiag.model.window import TimeWindow

if TYPE_CHECKING:
    from ckptdiag.analysis.results import Diagnosis
    from ckptdiag.errors import InputError
    from ckptdiag.model.facts import ServerFacts
    from ckptdiag.model.samples import SampleBlock
    from ckptdiag.recording.stream import RecordingStream
    from ckptdiag.report.document import ReportSource


def recordings_diagnosis(
    recordings: tuple[Path, ...], window: TimeWindow, events: Any
) -> tuple[Diagnosis, ReportSource]:
    """The diagnosis of recordings in a window (with the open config of mongod's log ``events``
    where given), and what they were."""
    from ckptdiag.recording.stream import Unstreamable

    try:
        return _streamed(recordings, window, events)
    except Unstreamable:
        return _whole(recordings, window, events)


def _streamed(recordings: tuple[Path, ...], window: TimeWindow, events: Any) -> tuple[Diagnosis, ReportSource]:
    """The recordings read and diagnosed a block at a time."""
    from ckptdiag.analysis.diagnosis import diagnosis
    from ckptdiag.analysis.pieces import derived_after
    from ckptdiag.analysis.series import reads
    from ckptdiag.analysis.window import WindowDiagnoser
    from ckptdiag.model.facts import ServerFacts
    from ckptdiag.recording.stream import RecordingStream
    from ckptdiag.report.document import ReportSource

    streams = [RecordingStream(path, reads) for path in recordings]
    diagnoser = WindowDiagnoser(ServerFacts())
    joined = _Joined()
    for stream in _in_order(streams):
        for block in joined.recording(stream.blocks(), stream.path):
            if not joined.given:  # the facts: the first recording named's (its header is read)
                diagnoser.facts = _facts(streams[0], events)
            piece = block if window.whole else block.take(window.keep_s(block.t))
            if len(piece):
                diagnoser.add(derived_after(joined.last, piece))
                joined.given_piece(piece)
    for stream in streams:  # a recording without samples, read for its damage
        if stream.recording is None:
            for _ in stream.blocks():
                pass
    if not joined.given:
        raise window.empty("samples", "recordings", *joined.held())
    diagnoser.facts = _facts(streams[0], events)
    damage = tuple(line for stream in streams if stream.recording for line in stream.recording.damage())
    source = ReportSource("recording", ", ".join(map(str, recordings)), damage)
    dx = diagnosis(diagnoser, gaps=joined.gaps, restarts=joined.restarts(), notes=source.damaged)
    return dx, source


def _in_order(streams: list[RecordingStream]) -> list[RecordingStream]:
    """The recordings in order of their first sample, as they are joined (the first block of
    each read twice where there are several)."""
    if len(streams) == 1:
        return streams
    firsts: list[tuple[float, int]] = []
    for k, stream in enumerate(streams):
        first = next(iter(stream.blocks()), None)
        if first is not None:  # a recording without samples adds none (its damage is still named)
            firsts.append((float(first.t[0]), k))
    return [streams[k] for _, k in sorted(firsts)]


def _facts(stream: RecordingStream, events: Any) -> ServerFacts:
    """The server's facts from a recording's header, with the open config of the log's events."""
    from ckptdiag.model.facts import from_header
    from ckptdiag.recording.stream import Unstreamable
    from ckptdiag.workflows import logs as mongod_logs

    if stream.header is None:
        next(iter(stream.blocks()), None)
    if stream.header is None:
        raise Unstreamable  # no line at all: the whole reading names the error
    facts = from_header(stream.header)
    return mongod_logs.with_open_config(facts, events) if events is not None else facts


class _Joined:
    """Recordings joined one after another as :func:`~ckptdiag.recording.blocks.join_blocks`
    joins them: each later recording's first sample a gap, its segments after the last one's;
    and what the window keeps of them: the row the next piece is derived after, the gaps and the
    restarts in it, and the times of every sample (for an empty window's error)."""

    def __init__(self) -> None:
        self.path: Path | None = None  # the recording before
        self.next_segment = 0
        self.any_rows = False  # a recording before had samples
        self.given = False  # a piece was given to the diagnosis
        self.last: SampleBlock | None = None
        self.gaps = 0
        self.segments = [np.inf, -np.inf]
        self.times = [np.inf, -np.inf]

    def recording(self, blocks: Iterator[SampleBlock], path: Path) -> Iterator[SampleBlock]:
        """One recording's blocks, marked as the join marks them (raises :func:`overlap` where it
        begins before the recordings before it end)."""
        offset, highest, first = self.next_segment, -1.0, True
        for block in blocks:
            if first and self.any_rows and float(block.t[0]) <= self.times[1]:
                assert self.path is not None
                raise overlap(path, float(block.t[0]), self.path, self.times[1])
            segment = block.values("segment") + offset
            gap = block.values("gap_before").copy()
            if first and self.any_rows:
                gap[0] = 1.0
            first = False
            highest = max(highest, float(segment.max()))
            t = block.t
            self.times = [min(self.times[0], float(t.min())), max(self.times[1], float(t.max()))]
            yield block.with_columns({"segment": segment, "gap_before": gap})
        if highest >= 0:
            self.any_rows, self.path = True, path
            self.next_segment = int(highest) + 1

    def given_piece(self, piece: SampleBlock) -> None:
        """A piece the window kept, given to the diagnosis."""
        gap = piece.values("gap_before")
        self.gaps += int(np.count_nonzero(gap[1:] if not self.given else gap))
        segment = piece.values("segment")
        self.segments = [min(self.segments[0], float(segment.min())), max(self.segments[1], float(segment.max()))]
        self.last = piece.take(slice(-1, None))
        self.given = True

    def restarts(self) -> int:
        """The restarts in the window: the segments its samples span, less one."""
        return int(self.segments[1] - self.segments[0]) if self.given else 0

    def held(self) -> tuple[float | None, float | None]:
        """The recordings' own time range (None, None: no sample)."""
        return (self.times[0], self.times[1]) if self.any_rows else (None, None)


def _whole(recordings: tuple[Path, ...], window: TimeWindow, events: Any) -> tuple[Diagnosis, ReportSource]:
    """The recordings read whole, joined into one derived window and diagnosed."""
    from ckptdiag.analysis.diagnosis import diagnose
    from ckptdiag.analysis.series import derive_block
    from ckptdiag.model.facts import from_header
    from ckptdiag.recording.blocks import join_blocks
    from ckptdiag.report.document import ReportSource
    from ckptdiag.workflows import logs as mongod_logs

    recs, skipped = _readable(recordings)
    # as arrays, never as a frame, and only what the derivation reads: a recording's every
    # metric in a DataFrame was the largest thing a long recording's report held
    blocks = [(r.to_block(), Path(r.path)) for r in recs]
    end, before = -np.inf, Path()
    for start, last, path in sorted((float(b.t[0]), float(b.t[-1]), path) for b, path in blocks if len(b)):
        if start <= end:
            raise overlap(path, start, before, end)
        if last > end:
            end, before = last, path
    samples = join_blocks([b for b, _ in blocks])
    t = samples.t
    held = (float(t.min()), float(t.max())) if len(samples) else (None, None)
    if not window.whole:
        samples = samples.take(window.keep_s(t))
    if not len(samples):
        raise window.empty("samples", "recordings", *held)
    facts = from_header(recs[0].header)
    if events is not None:
        facts = mongod_logs.with_open_config(facts, events)
    gaps = int(np.count_nonzero(samples.values("gap_before")[1:]))
    segment = samples.values("segment")
    restarts = int(segment.max() - segment.min())
    damage = tuple(skipped) + tuple(line for r in recs for line in r.damage())
    source = ReportSource("recording", ", ".join(map(str, recordings)), damage)
    return diagnose(derive_block(samples), facts, gaps=gaps, restarts=restarts, notes=source.damaged), source


def overlap(path: Path, start: float, before: Path, end: float) -> InputError:
    """The error for recordings whose times overlap: joined, time would run back at the seam."""
    from ckptdiag.errors import InputError
    from ckptdiag.model.window import when

    return InputError(
        f"the recordings overlap in time: {path} begins at {when(start)}, before {before} ends at {when(end)}",
        "report each recording on its own: two recorders of one server, or one recording given twice?",
    )


def _readable(paths: tuple[Path, ...]) -> tuple[list[recording.Recording], list[str]]:
    """The recordings that can be read, and a note for each that cannot: one bad file among
    several is skipped, not the end of the report (alone, its error is the report's)."""
    from ckptdiag.analysis.series import reads
    from ckptdiag.errors import InputError

    recs: list[recording.Recording] = []
    skipped: list[str] = []
    for path in paths:
        try:
            recs.append(recording.read_recording(path, columns=True, keep=reads))
        except InputError as exc:
            if len(paths) == 1:
                raise
            skipped.append(f"{path}: skipped: {exc.message}")
    if not recs:
        raise InputError(f"none of the {len(paths)} recordings could be read", skipped[0])
    return recs, skipped
