"""The inflate every reader uses (FTDC chunks, gzip recordings): ISA-L's (``isal``) where it is
installed, 2.3x the standard library's on real FTDC chunks and byte for byte the same
(benchmarks/bench_inflate.py, tests/test_ftdc.py); the standard ``zlib`` where isal has no wheel."""

from __future__ import annotations

import zlib
from typing import Any


def _module() -> Any:
    try:
        from isal import isal_zlib
    except ImportError:  # pragma: no cover - depends on the platform
        return zlib
    return isal_zlib


zlib_like = _module()
# what a damaged stream raises, whichever library inflates it
ERRORS: tuple[type[Exception], ...] = (zlib.error, zlib_like.error)


def decompressobj(wbits: int = zlib.MAX_WBITS) -> Any:
    """A decompress object, as :func:`zlib.decompressobj` (``unused_data``, ``eof`` and the
    ``max_length`` argument included)."""
    return zlib_like.decompressobj(wbits)


def crc32(data: Any, value: int = 0) -> int:
    """CRC-32, as :func:`zlib.crc32`."""
    return int(zlib_like.crc32(data, value))


def inflate_prefix(
    inflater: Any, data: bytes | memoryview, start: int = 0, *, block: int = 1 << 16, limit: int | None = None
) -> tuple[bytes, int | None]:
    """``data[start:]`` inflated a block at a time, so that damage keeps everything before it ->
    (the text up to the damage, the end of the stream or ``limit`` bytes; where the block that
    failed starts, relative to ``start``, or None when none failed). ``inflater`` is a decompress
    object of this module's or of :mod:`zlib` (one with a preset dictionary)."""
    pieces: list[bytes] = []
    got = 0
    for at in range(start, len(data), block):
        try:
            piece = inflater.decompress(data[at : at + block], 0 if limit is None else limit - got)
        except ERRORS:
            return b"".join(pieces), at - start
        pieces.append(piece)
        got += len(piece)
        if inflater.eof or (limit is not None and got >= limit):
            break
    return b"".join(pieces), None
