"""A recording's text from its bytes: gzip members inflated one after another, a stream cut
short or damaged inside kept up to the damage, a wrong trailer noted but costing no line."""

from __future__ import annotations

import struct

from ckptdiag import inflate


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
    else:
        text = raw
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
        return _salvage(memoryview(data)[at:]), b"", True, False
    rest = inflater.unused_data
    if not inflater.eof or len(rest) < 8:
        return text, b"", True, False  # still being written, or the trailer was cut off
    crc, size = struct.unpack("<II", rest[:8])
    ok = crc == inflate.crc32(text) and size == len(text) & 0xFFFFFFFF
    return text, rest[8:], ok, True


def _salvage(deflated: memoryview) -> bytes:
    """The text of a deflate stream damaged inside, up to the damage: inflated a block at a time,
    every block before the one that fails is kept."""
    inflater = inflate.decompressobj(wbits=-15)
    pieces: list[bytes] = []
    block = 1 << 16
    try:
        for i in range(0, len(deflated), block):
            pieces.append(inflater.decompress(deflated[i : i + block]))
    except inflate.ERRORS:
        pass  # the damage: everything before it is in pieces
    return b"".join(pieces)


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
