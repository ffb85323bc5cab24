"""Input paths: what kind of file each is, and their first bytes (``ckptdiag.guard.outputs`` keeps
every output off them)."""

from __future__ import annotations

import gzip
import os
import stat
import zlib
from pathlib import Path
from typing import IO, cast

from ckptdiag.errors import InputError
from ckptdiag.guard.inflate import inflate_prefix

_KINDS = (
    (stat.S_ISFIFO, "a FIFO"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
    (stat.S_ISDIR, "a directory"),
)


def kind_of(mode: int) -> str:
    """What a file that is not a regular one is, for a message ("a FIFO", "a directory", ...)."""
    return next((name for test, name in _KINDS if test(mode)), "not a regular file")


def check_readable(path: Path, error: type[InputError] = InputError) -> os.stat_result:
    """The ``stat`` of an input that is a regular file or a directory; anything else is refused
    (as ``error``) before it is opened: a FIFO would block forever, ``/dev/zero`` never ends."""
    try:
        st = path.stat()
    except FileNotFoundError:
        raise error(f"{path} does not exist", "check the path") from None
    except OSError as exc:
        raise error(f"cannot read {path}: {exc.strerror}", permission_hint(exc)) from None
    if stat.S_ISREG(st.st_mode) or stat.S_ISDIR(st.st_mode):
        return st
    kind = kind_of(st.st_mode)
    raise error(
        f"{path} is {kind}, not a file ckptdiag can read to its end",
        "copy the data into a regular file first, then give that file",
    )


def permission_hint(exc: OSError) -> str:
    """What to do about a file that cannot be read: as another user, when that is the reason."""
    if isinstance(exc, PermissionError):
        return "run ckptdiag as the user mongod runs as (e.g. 'sudo -u mongodb ckptdiag ...'), or give a copy"
    return "check the path and its permissions"


GZIP_MAGIC = b"\x1f\x8b"
HEAD_INFLATED_MAX = 1 << 20  # what the first bytes of a gzip file may inflate to when peeked at


def open_maybe_gzip(path: Path) -> IO[bytes]:
    """``path`` opened for reading, through gzip when its first bytes say it is gzip."""
    with open(path, "rb") as probe:
        gz = probe.read(2) == GZIP_MAGIC
    return cast("IO[bytes]", gzip.open(path, "rb")) if gz else open(path, "rb")


def head(path: Path, size: int) -> bytes | None:
    """The first ``size`` bytes of ``path``, inflated when it is gzip (a file still being written,
    without its trailer, inflates as far as it goes), or None when it cannot be read."""
    try:
        with open(path, "rb") as fh:
            first = fh.read(size)
    except OSError:
        return None
    if first[:2] != GZIP_MAGIC:
        return first
    # inflated a piece at a time: damage (a bad trailer, a flipped byte) keeps what came before it
    text, failed = inflate_prefix(zlib.decompressobj(wbits=31), first, block=4096, limit=HEAD_INFLATED_MAX)
    return None if failed == 0 else text  # nothing inflates: not gzip after all
