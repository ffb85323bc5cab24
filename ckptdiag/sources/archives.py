"""Support and Atlas downloads as they come: a ``.tar.gz``, ``.tgz``, ``.tar`` or ``.zip`` of a
folder per host. Only FTDC files and recordings are taken out, each under its own folders inside
a scratch directory (never outside it: no absolute paths, no ``..``, no links), within fixed
limits checked while copying (an archive's own sizes are not trusted)."""

from __future__ import annotations

import tarfile
import zipfile
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path, PurePosixPath
from typing import IO

from ckptdiag.errors import InputError

SUFFIXES = (".tar.gz", ".tgz", ".tar", ".zip")
MAX_FILE_BYTES = 1 << 30  # one file taken out (mongod's FTDC files are 10 MB by default)
MAX_TOTAL_BYTES = 8 << 30  # everything taken out of one archive


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


def unpack(path: Path, into: Path) -> tuple[Path, int]:
    """The FTDC files and recordings of the archive at ``path``, copied under ``into/<archive
    name>/`` with their folders -> (that folder, files taken out)."""
    root = into / path.name
    root.mkdir(parents=True, exist_ok=True)
    taken = total = 0
    try:
        for name, size, stream in _members(path):
            rel = _safe(name)
            if rel is None or not _wanted(name):
                continue
            if size > MAX_FILE_BYTES or total + size > MAX_TOTAL_BYTES:
                raise InputError(
                    f"{path}: {name} claims {size:,} bytes, over the limit of {MAX_FILE_BYTES:,} a file "
                    f"and {MAX_TOTAL_BYTES:,} an archive",
                    "unpack the archive yourself and give its folders",
                )
            target = root / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            with stream() as src, open(target, "wb") as dst:
                total += _copy(src, dst, min(MAX_FILE_BYTES, MAX_TOTAL_BYTES - total), path, name)
            taken += 1
    except (tarfile.TarError, zipfile.BadZipFile, EOFError, OSError) as exc:
        raise InputError(f"cannot read the archive {path}: {exc}", "check that the download is complete") from None
    return root, taken


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
        with zipfile.ZipFile(path) as archive:
            for info in archive.infolist():
                if not info.is_dir():
                    yield info.filename, info.file_size, _zip_opener(archive, info)
        return
    with tarfile.open(path, "r:*") as archive:
        for member in archive:
            if member.isreg():  # never links, devices or FIFOs
                yield member.name, member.size, _tar_opener(archive, member)


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
