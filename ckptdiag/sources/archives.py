"""Support and Atlas downloads as they come: a ``.tar.gz``, ``.tgz``, ``.tar`` or ``.zip`` of a
folder per host. Only FTDC files and recordings are taken out, each under its own folders inside
a scratch directory (never outside it: no absolute paths, no ``..``, no links), within limits
checked while copying (an archive's own sizes are not trusted): at most :data:`RATIO` times the
archive's own size, and never more than :data:`MAX_TOTAL_BYTES`, is written to the scratch
directory. Damage costs only what it touches: an archive cut short is read up to the cut, a
member that cannot be read (damaged, encrypted, an unknown method) is skipped, a name given twice
is read once; each is a note."""

from __future__ import annotations

import io
import struct
import tarfile
import zipfile
import zlib
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import IO

from ckptdiag.errors import InputError
from ckptdiag.guard.inflate import inflate_prefix

SUFFIXES = (".tar.gz", ".tgz", ".tar", ".zip")
MAX_FILE_BYTES = 1 << 30  # one file taken out (mongod's FTDC files are 10 MB by default)
MAX_TOTAL_BYTES = 8 << 30  # everything taken out of one archive
RATIO = 40  # FTDC and recordings are compressed already: a download inflates ~1-3x, never 40x
FLOOR_BYTES = 64 << 20  # what any archive may inflate to, however small
_MEMBER_ERRORS = (
    tarfile.TarError,
    zipfile.BadZipFile,
    EOFError,
    OSError,
    zlib.error,
    RuntimeError,
    NotImplementedError,
    ValueError,
)


@dataclass
class Unpacked:
    """What was taken out of an archive: the folder, how many files, and what was met."""

    root: Path
    taken: int = 0
    notes: list[str] = field(default_factory=list)


def is_archive(path: Path) -> bool:
    """Whether ``path`` is an archive file ckptdiag opens (by its name)."""
    return path.is_file() and path.name.lower().endswith(SUFFIXES)


def _wanted(name: str) -> bool:
    base = PurePosixPath(name).name
    return base.startswith("metrics.") or base.endswith((".jsonl", ".jsonl.gz"))


def _safe(name: str) -> PurePosixPath | None:
    """The member's path made relative and free of ``..`` (None: nothing left)."""
    parts = [p for p in PurePosixPath(name.replace("\\", "/")).parts if p not in ("/", "..", ".", "")]
    return PurePosixPath(*parts) if parts else None


def _budget(path: Path) -> int:
    """What an archive may write to the scratch folder: RATIO times its size, FLOOR_BYTES at least."""
    return min(MAX_TOTAL_BYTES, max(FLOOR_BYTES, RATIO * path.stat().st_size))


def unpack(path: Path, into: Path) -> Unpacked:
    """The FTDC files and recordings of the archive at ``path``, copied under ``into/<archive
    name>/`` with their folders."""
    out = Unpacked(into / path.name)
    out.root.mkdir(parents=True, exist_ok=True)
    budget = _budget(path)
    total = 0
    seen: set[PurePosixPath] = set()
    members = _members(path)
    while True:
        try:
            name, size, stream = next(members)
        except StopIteration:
            break
        except _MEMBER_ERRORS as exc:  # the archive itself ends or is damaged here
            if not out.taken:
                raise InputError(
                    f"cannot read the archive {path}: {exc}", "check that the download is complete"
                ) from None
            out.notes.append(
                f"{path}: the archive is cut short or damaged after {out.taken} files ({exc}): read up to there"
            )
            break
        if "\0" in name:  # no file system takes it: a damaged header, not a file to read
            out.notes.append(f"{path}: a member's name holds a NUL byte (a damaged header): skipped")
            continue
        rel = _safe(name)
        if rel is None or not _wanted(name):
            continue
        if rel in seen:
            out.notes.append(f"{path}: {name} appears more than once: the first copy was read")
            continue
        seen.add(rel)
        if size > MAX_FILE_BYTES or total + size > budget:
            raise InputError(
                f"{path}: {name} claims {size:,} bytes, over the limit of {budget:,} for this archive "
                f"({RATIO}x its size)",
                "unpack the archive yourself and give its folders",
            )
        target = out.root / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        try:
            with stream() as src, open(target, "wb") as dst:
                total += _copy(src, dst, min(MAX_FILE_BYTES, budget - total), path, name)
        except _MEMBER_ERRORS as exc:
            # what was copied before the damage stays (an FTDC file or recording cut short is read
            # up to its cut); a member that gave nothing is dropped
            if target.exists() and target.stat().st_size > 0:
                out.taken += 1
            else:
                target.unlink(missing_ok=True)
            out.notes.append(f"{path}: {name} cannot be read whole ({type(exc).__name__}: {exc}): skipped past it")
            continue
        out.taken += 1
    return out


def _copy(src: IO[bytes], dst: IO[bytes], limit: int, path: Path, name: str) -> int:
    """Copy at most ``limit`` bytes (a member that inflates past it is refused, whatever its
    header claimed)."""
    copied = 0
    while chunk := src.read(1 << 20):
        copied += len(chunk)
        if copied > limit:
            raise InputError(
                f"{path}: {name} inflates past the limit of {limit:,} bytes", "unpack the archive yourself and check it"
            )
        dst.write(chunk)
    return copied


Opener = Callable[[], AbstractContextManager[IO[bytes]]]


def _members(path: Path) -> Iterator[tuple[str, int, Opener]]:
    """(name, claimed size, opener) of every regular file in the archive."""
    if path.name.lower().endswith(".zip"):
        try:
            zipped = zipfile.ZipFile(path)
        except zipfile.BadZipFile:  # cut short: its directory, at the end, is gone
            yield from _local_members(path)
            return
        with zipped:
            for info in zipped.infolist():
                if not info.is_dir():
                    yield info.filename, info.file_size, _zip_opener(zipped, info)
        return
    with tarfile.open(path, "r:*") as archive:
        for member in archive:
            if member.isreg():  # never links, devices or FIFOs
                yield member.name, member.size, _tar_opener(archive, member)


_LOCAL = struct.Struct("<4sHHHHHIIIHH")  # a zip member's local header (APPNOTE 4.3.7)


def _local_members(path: Path) -> Iterator[tuple[str, int, Opener]]:
    """The members of a zip whose central directory is lost (a download cut short), walked from
    their local headers: stored or deflated ones, up to the cut (the last, cut, is read as far
    as it goes). A zip that does not even begin with a member is refused as before."""
    data = path.read_bytes()
    limit = min(MAX_FILE_BYTES, _budget(path)) + 1  # one byte past the bound: the copy refuses it
    if not data.startswith(b"PK\x03\x04"):
        raise zipfile.BadZipFile("not a zip file (no central directory, no member at its start)")
    at = 0
    while data.startswith(b"PK\x03\x04", at) and at + _LOCAL.size <= len(data):
        _sig, _version, flags, method, _t, _d, _crc, packed, size, name_len, extra_len = _LOCAL.unpack_from(data, at)
        name = data[at + _LOCAL.size : at + _LOCAL.size + name_len].decode("utf-8", "replace")
        start = at + _LOCAL.size + name_len + extra_len
        if flags & 1 or method not in (0, 8):
            raise NotImplementedError(f"{name}: encrypted or compressed by method {method}")
        if flags & 8 or packed == 0xFFFFFFFF:  # sizes after the data, or zip64: not walked
            raise zipfile.BadZipFile(f"{name}: its size is not in its local header")
        body = data[start : start + packed]
        yield name, size, _local_opener(body, method, limit)
        at = start + packed


def _local_opener(body: bytes, method: int, limit: int) -> Opener:
    """A member found by its local header: stored as it is, or deflated a block at a time (the
    last member of a cut download inflates up to the cut), never past ``limit`` bytes."""

    @contextmanager
    def opened() -> Iterator[IO[bytes]]:
        if method == 0:
            yield io.BytesIO(body)
            return
        yield io.BytesIO(inflate_prefix(zlib.decompressobj(-15), body, limit=limit)[0])

    return opened


def _zip_opener(archive: zipfile.ZipFile, info: zipfile.ZipInfo) -> Opener:
    return lambda: archive.open(info)


def _tar_opener(archive: tarfile.TarFile, member: tarfile.TarInfo) -> Opener:
    @contextmanager
    def opened() -> Iterator[IO[bytes]]:
        stream = archive.extractfile(member)
        if stream is None:
            raise OSError(f"{member.name} cannot be read")
        with stream:
            yield stream

    return opened
