"""A recording's header line: what it says, and whether a file is a recording at all. A damaged
header costs only itself (the facts it carries: version, options), never the samples after it."""

from __future__ import annotations

import json
import re
import zlib
from pathlib import Path
from typing import Any

from ckptdiag.errors import InputError
from ckptdiag.guard.inputs import head, open_maybe_gzip
from ckptdiag.recording.writer import FORMAT, FORMAT_VERSION


def read_header(path: Path) -> dict[str, Any]:
    """The header of a recording (its first line, read alone: a day's file is not inflated for it)."""
    try:
        with open_maybe_gzip(path) as fh:
            line = fh.readline(1 << 20)
    except (OSError, EOFError, zlib.error):
        line = b""
    return header_of(path, line)[0]


# a recording's line, however it is spaced: its header, or a sample or event (its header damaged)
_RECORDING_LINE = re.compile(
    rb'(?:^|\n)\s*\{\s*"type"\s*:\s*"(?:header|sample|event)"|"format"\s*:\s*"ckptdiag-recording"'
)


def is_recording(path: Path) -> bool:
    """Whether ``path`` starts like a ckptdiag recording: a recording line in its first 64 KiB
    (a header, or, when the header is damaged, a sample or an event), however it is spaced."""
    first = head(path, 64 << 10)
    if first is None:
        return False
    if first[:_ZEROED_PEEK].strip(b"\x00") == b"":  # its start zeroed by a crash: a gzip one is read past it
        from ckptdiag.recording.gzipped import text_of

        try:
            with open(path, "rb") as fh:
                first = text_of(fh.read(_ZEROED_READ))[0][: 64 << 10]
        except OSError:
            return False
    return _RECORDING_LINE.search(first) is not None


_ZEROED_PEEK = 512
_ZEROED_READ = 8 << 20  # read to find where a zeroed gzip recording can be taken up again


def header_of(path: Path, line: bytes | None) -> tuple[dict[str, Any], str]:
    """The header from the first line, and what was wrong with it ("" when nothing): a damaged
    header costs only itself (its facts: version, options), never the samples after it. Only a
    newer format, which this ckptdiag cannot read, is refused."""
    try:
        head = json.loads(line) if line else None
    except (ValueError, RecursionError):  # RecursionError: nested deeper than json's stack
        head = None
    if not isinstance(head, dict) or head.get("format") != FORMAT:
        return {}, "the first line is not a recording header (damaged): the samples were read without it"
    version = head.get("format_version", 0)
    if isinstance(version, bool) or not isinstance(version, int):  # 1.5, "1", Infinity: damage
        head = {k: v for k, v in head.items() if k != "format_version"}
        return (
            head,
            f"the header's format_version is {str(version)[:40]!r}, not a whole number (read as {FORMAT_VERSION})",
        )
    if version > FORMAT_VERSION:
        raise InputError(
            f"{path} uses recording format {head['format_version']}, newer than this ckptdiag",
            "upgrade ckptdiag: pip install -U ckptdiag",
        )
    damage = [name for name in ("server", "source", "options", "disks") if not isinstance(head.get(name, {}), dict)]
    if damage:
        head = {k: v for k, v in head.items() if k not in damage}
        return head, f"the header's {', '.join(damage)} {'is' if len(damage) == 1 else 'are'} not an object (left out)"
    return head, ""


def not_a_recording(path: Path) -> InputError:
    """The error for a file that holds no recording line at all."""
    return InputError(
        f"{path} is not a ckptdiag recording", "give a file written by 'ckptdiag record -o', or an FTDC metrics file"
    )
