"""A recording's text from its bytes: gzip members inflated one after another, a stream cut
short or damaged inside kept up to the damage and taken up again after it, a wrong trailer noted
but costing no line.

ckptdiag's writer flushes the deflate stream every two seconds, and in full (its window
forgotten) every minute: each flush ends in an empty stored block, ``00 00 ff ff``, after which
a new block starts on a byte. So a stream whose start is lost (a crash zeroed the first blocks of
the file) or that is damaged inside is inflated again from the first such point after which the
text reads as lines (a full flush's: nothing after it refers back to the lost part), and every
later line is read."""

from __future__ import annotations

import io
import itertools
import struct
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import BinaryIO

from ckptdiag.guard import inflate
from ckptdiag.recording.lines import bounded, line_blocks


class Damaged(Exception):
    """The stream is damaged inside or lost its start: only :func:`text_of` reads it (whole)."""


@dataclass
class TextState:
    """What :func:`text_blocks` found, once every block is read: as :func:`text_of` says it."""

    truncated: bool = False
    bad_trailer: bool = False


CHUNK = 32 << 10  # compressed bytes read and inflated at a time (at most ~1,000 times that out)


def text_blocks(source: bytes | BinaryIO, size: int, state: TextState) -> Iterator[bytes]:
    """A recording's text (gzip or plain; its bytes, or a file open on them) in blocks of whole
    lines of about ``size`` bytes each, read and inflated a piece at a time: the text
    :func:`text_of` gives up to its last complete line, never held whole, nor the file's bytes.
    ``state`` says, once the last block is read, whether the text was cut short and whether a
    trailer was wrong. Raises :class:`Damaged` (perhaps after some blocks) where only
    :func:`text_of` can read the stream."""
    read = io.BytesIO(source).read if isinstance(source, bytes) else source.read
    head = read(_ZEROED)
    if head[:2] == b"\x1f\x8b":
        pieces = _members(head, read, state)
    elif head.strip(b"\x00") == b"":  # a gzip recording whose start was zeroed, or nothing
        raise Damaged
    else:
        pieces = itertools.chain([head], iter(lambda: read(size), b""))
    for block in line_blocks(pieces, size):
        cut = block.rfind(b"\n") + 1  # only the last block may end in a torn line
        if cut:
            yield block if cut == len(block) else block[:cut]
        if block[cut:].strip():
            state.truncated = True  # a torn final line: the writer stopped mid-line


def _members(data: bytes, read: Callable[[int], bytes], state: TextState) -> Iterator[bytes]:
    """The text of each gzip member in turn (``data``: the bytes read so far, ``read`` the rest),
    inflated :data:`CHUNK` bytes at a time, each trailer checked as :func:`_gzip_member` checks it."""
    while data or (data := read(CHUNK)):
        at = _gzip_header_end(data)
        while at is None and data[:3] == b"\x1f\x8b\x08"[: len(data)] and (more := read(CHUNK)):
            data += more  # a header longer than what was read (a long name or comment)
            at = _gzip_header_end(data)
        if at is None:  # not a gzip header: trailing garbage
            state.truncated = True
            return
        inflater = inflate.decompressobj(wbits=-15)
        crc = length = 0
        tail = data[at:]
        while not inflater.eof:
            if not tail and not (tail := read(CHUNK)):
                break  # the input ends before the stream does
            try:
                # all of the input at once: with a limit on the output, the end of the stream
                # is not always seen until a byte after it is given (and that byte is lost)
                text = inflater.decompress(tail)
            except inflate.ERRORS:
                raise Damaged from None
            tail = b""
            if text:
                crc, length = inflate.crc32(text, crc), length + len(text)
                yield text
        rest = inflater.unused_data
        while inflater.eof and len(rest) < 8 and (more := read(CHUNK)):
            rest += more
        if not inflater.eof or len(rest) < 8:
            state.truncated = True  # still being written, or the trailer was cut off
            return
        expected_crc, expected_size = struct.unpack("<II", rest[:8])
        state.bad_trailer |= not (expected_crc == crc and expected_size == length & 0xFFFFFFFF)
        data = rest[8:]


def text_of(raw: bytes) -> tuple[bytes, int, bool, bool]:
    """A recording's bytes (gzip or plain) -> the text, where its last complete line ends,
    whether it was cut short (or damaged inside), and whether a gzip trailer (CRC, length) was
    wrong. Members are inflated raw and their trailers checked here, so a bad trailer costs no
    line (zcat keeps them all too)."""
    truncated = bad_trailer = False
    if raw[:2] == b"\x1f\x8b":
        pieces: list[bytes] = []
        data = raw
        while data:
            member = _gzip_member(data)
            if member is None:  # not a gzip header: trailing garbage
                truncated = True
                break
            text, data, trailer_ok, complete = member
            pieces.append(text)
            bad_trailer |= not trailer_ok
            if not complete:
                truncated = True  # still being written, or the writer died: keep what inflated
                break
        # one member (the usual case) is used as it is: a day inflates to ~150 MB, not worth a copy
        text = pieces[0] if len(pieces) == 1 else b"".join(pieces)
    elif raw[:_ZEROED].strip(b"\x00") == b"" and SYNC in raw:  # a gzip recording whose start was zeroed
        text, truncated = _resync(raw, raw.find(SYNC)), True
    else:
        text = raw
    text = bounded(text)
    end = text.rfind(b"\n") + 1
    if text[end:].strip():
        truncated = True  # a torn final line: the writer stopped mid-line
    return text, end, truncated, bad_trailer


def _gzip_member(data: bytes) -> tuple[bytes, bytes, bool, bool] | None:
    """One gzip member at the start of ``data`` -> (its text, what follows it, trailer matches,
    member complete), or None when the header is not gzip's. The deflate data is inflated raw in
    one call; where it is damaged inside, again a block at a time to keep what came before."""
    at = _gzip_header_end(data)
    if at is None:
        return None
    inflater = inflate.decompressobj(wbits=-15)
    try:
        text = inflater.decompress(memoryview(data)[at:])
    except inflate.ERRORS:
        # damaged inside: everything before the damage, then the stream taken up again after it
        before, failed_at = inflate.inflate_prefix(inflate.decompressobj(wbits=-15), memoryview(data), at)
        after = _resync(data, data.find(SYNC, at + (failed_at or 0)))
        return before + (b"\n" + after if after else b""), b"", True, False
    rest = inflater.unused_data
    if not inflater.eof or len(rest) < 8:
        return text, b"", True, False  # still being written, or the trailer was cut off
    crc, size = struct.unpack("<II", rest[:8])
    ok = crc == inflate.crc32(text) and size == len(text) & 0xFFFFFFFF
    return text, rest[8:], ok, True


SYNC = b"\x00\x00\xff\xff"  # the end of an empty stored block: a sync flush
_ZEROED = 512  # a file whose first bytes are all NUL lost its start (a crash's zeroed blocks)
_WINDOW = b"\x00" * 32768  # stands in for the lost text that later blocks refer back to
_PROBES = 4096  # sync points tried (a day's recording has ~43,000, one a minute a full flush)


def _resync(data: bytes, at: int) -> bytes:
    """The text inflated from the first sync point at or after ``at`` after which the text reads
    as lines (damage further on handled the same way again), or b"" when none does."""
    out: list[bytes] = []
    probes = 0
    while 0 <= at < len(data) and probes < _PROBES:
        start = at + len(SYNC)
        probes += 1
        if not _reads_as_lines(data, start):
            at = data.find(SYNC, start)
            continue
        piece, failed = inflate.inflate_prefix(zlib.decompressobj(wbits=-15, zdict=_WINDOW), data, start)
        out.append(piece)
        if failed is None:
            break  # to its end (a trailer, or the file's end)
        at = data.find(SYNC, start + max(failed, 1))
    return b"\n".join(out)


def _reads_as_lines(data: bytes, start: int) -> bool:
    """Whether the stream inflated from ``start`` begins with recording lines, not with text
    that refers back to what was lost (NULs): its first 64 KiB only."""
    try:
        head = zlib.decompressobj(wbits=-15, zdict=_WINDOW).decompress(data[start : start + (1 << 16)], 1 << 16)
    except zlib.error:
        return False
    line = head.find(b'\n{"type":')
    return (head.startswith(b'{"type":') or line >= 0) and b"\x00" not in head[: max(line, 0) + 200]


def _gzip_header_end(data: bytes) -> int | None:
    """Where a gzip member's deflate data starts (RFC 1952: 10 fixed bytes, then the optional
    extra field, name, comment and header CRC its flags announce), or None if it is not gzip."""
    if len(data) < 10 or data[:3] != b"\x1f\x8b\x08":
        return None
    flags, at = data[3], 10
    if flags & 4:  # FEXTRA
        if len(data) < at + 2:
            return None
        at += 2 + int.from_bytes(data[at : at + 2], "little")
    for bit in (8, 16):  # FNAME, FCOMMENT: NUL-terminated
        if flags & bit:
            nul = data.find(b"\x00", at)
            if nul < 0:
                return None
            at = nul + 1
    if flags & 2:  # FHCRC
        at += 2
    return at if at <= len(data) else None
