"""Recordings: line-oriented JSON, written as samples arrive and readable while still growing.

Format (docs/recording-format.md): the first line is a header object (``"type": "header"``),
then one object per line, each a ``"sample"`` (raw cumulative counters; rates are derived at
analysis time) or an ``"event"`` (gap, reconnect, restart, coverage, end). A name ending in
``.gz`` is gzip, flushed with Z_SYNC_FLUSH so a reader sees every flushed line before the file
is closed. Readers tolerate a torn last line and a missing gzip trailer: whatever was flushed
before a crash is read back.

The package: :mod:`.writer`, :mod:`.reader`, :mod:`.header` (the first line, and what a
recording is) and :mod:`.columns` (samples as a frame).
"""

from __future__ import annotations

from ckptdiag.recording.columns import _leaves, join_frames, samples_frame
from ckptdiag.recording.header import is_recording, read_header
from ckptdiag.recording.reader import Recording, _jsonl, read_recording
from ckptdiag.recording.writer import FORMAT, FORMAT_VERSION, RecordingWriter, build_sample, header, utc_iso

__all__ = [
    "FORMAT",
    "FORMAT_VERSION",
    "Recording",
    "RecordingWriter",
    "_jsonl",
    "_leaves",
    "build_sample",
    "header",
    "is_recording",
    "join_frames",
    "read_header",
    "read_recording",
    "samples_frame",
    "utc_iso",
]
