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
