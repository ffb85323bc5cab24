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

from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from ckptdiag import recording
from ckptdiag.model.window import TimeWindow

if TYPE_CHECKING:
    import pandas as pd

    from ckptdiag.analysis.results import Diagnosis
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
    from ckptdiag.analysis.series import reads
    from ckptdiag.analysis.window import WindowDiagnoser
    from ckptdiag.model.facts import ServerFacts
    from ckptdiag.recording.blocks import Joiner
    from ckptdiag.recording.stream import RecordingStream
    from ckptdiag.report.document import ReportSource

    streams = [RecordingStream(path, reads) for path in recordings]
    diagnoser = WindowDiagnoser(ServerFacts())
    joiner, given = Joiner(), _Given()
    facts: ServerFacts | None = None
    for stream in _in_order(streams):
        for block in joiner.recording(stream.blocks(), stream.path):
            if facts is None:  # before the first piece is judged: the first recording named's header
                facts = diagnoser.facts = _facts(streams[0], events)
            piece = block if window.whole else block.take(window.keep_s(block.t))
            if len(piece):
                diagnoser.add(given.piece(piece))
    for stream in streams:  # a recording without samples, read for its damage
        if stream.recording is None:
            for _ in stream.blocks():
                pass
    damage = tuple(line for stream in streams if stream.recording for line in stream.recording.damage())
    if not given.pieces:
        raise window.empty("samples", "recordings", *joiner.held(), damage=damage)
    source = ReportSource("recording", ", ".join(map(str, recordings)), damage)
    dx = diagnosis(diagnoser, gaps=given.gaps, restarts=given.restarts(), notes=source.damaged)
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


class _Given:
    """What the window keeps of the joined recordings, a piece at a time: each piece derived
    after the row before it, and the gaps and restarts in the window."""

    def __init__(self) -> None:
        self.pieces = 0
        self.last: SampleBlock | None = None
        self.gaps = 0
        self.segments = [np.inf, -np.inf]

    def piece(self, piece: SampleBlock) -> pd.DataFrame:
        """The next piece the window keeps -> its figures, derived after the row before it (so
        that the rates across the seam are taken once)."""
        from ckptdiag.analysis.series import derive_block

        gap = piece.values("gap_before")
        self.gaps += int(np.count_nonzero(gap[1:] if not self.pieces else gap))  # none before the first
        segment = piece.values("segment")
        self.segments = [min(self.segments[0], float(segment.min())), max(self.segments[1], float(segment.max()))]
        derived = derive_block(piece) if self.last is None else derive_block(piece.after(self.last)).iloc[1:]
        self.last = piece.take(slice(-1, None))
        self.pieces += 1
        return derived

    def restarts(self) -> int:
        """The restarts in the window: the segments its samples span, less one."""
        return int(self.segments[1] - self.segments[0]) if self.pieces else 0


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
    samples = join_blocks([(r.to_block(), Path(r.path)) for r in recs])
    t = samples.t
    first, last = (float(t.min()), float(t.max())) if len(samples) else (None, None)
    if not window.whole:
        samples = samples.take(window.keep_s(t))
    damage = tuple(skipped) + tuple(line for r in recs for line in r.damage())
    if not len(samples):
        raise window.empty("samples", "recordings", first, last, damage=damage)
    facts = from_header(recs[0].header)
    if events is not None:
        facts = mongod_logs.with_open_config(facts, events)
    gaps = int(np.count_nonzero(samples.values("gap_before")[1:]))
    segment = samples.values("segment")
    restarts = int(segment.max() - segment.min())
    source = ReportSource("recording", ", ".join(map(str, recordings)), damage)
    return diagnose(derive_block(samples), facts, gaps=gaps, restarts=restarts, notes=source.damaged), source


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
