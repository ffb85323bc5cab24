"""Where ckptdiag may write, and writing there without destroying anything: the one guarded writer.

Every file ckptdiag writes (reports, recordings, a fleet's folder, the lab's truth files) goes
through here. A target is checked before any work starts (:func:`check_target`):

- ``-o -``, and any name for this process's own stdout or stderr (``/dev/stdout``,
  ``/dev/fd/1``, the terminal's device), is written as that stream: never renamed over;
- a new name in an existing directory, or an existing regular file (replaced), is written;
- anything else is refused: a device (``/dev/null``), a FIFO, a socket, a directory, a
  symbolic link (whose target could be any file on the host when run as root);
- and so is any target that is an input, lies anywhere under an input directory, or is the same
  file as an input under another name (symlinks and hard links followed).

Then the new content is written to a temporary file beside the target and renamed over it only
once it is whole (:func:`write_text`, :class:`StagedFile`): a reader never sees half a file, and
an existing file is never truncated or deleted before its replacement is complete. Text passes
:func:`ckptdiag.guard.redact.redact_text` on its way out.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
import sys
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from ckptdiag.errors import OutputError
from ckptdiag.guard.inputs import kind_of
from ckptdiag.guard.redact import REDACTED, redact_text

_HARD_LINK_SCAN_MAX = 100_000  # directory entries walked to find another name of a hard-linked target


@dataclass(frozen=True)
class Target:
    """A checked place to write: a file (``path``) or one of this process's streams."""

    path: Path | None  # None: the stream
    stream: str = "stdout"  # "stdout" or "stderr", when path is None
    exists: bool = False  # an existing regular file, to be replaced

    @property
    def is_stream(self) -> bool:
        """Whether this target is written as a stream, not a file."""
        return self.path is None


STDOUT = Target(None)


def check_target(
    path: Path | None,
    inputs: Iterable[Path] = (),
    *,
    replace: bool = True,
    what: str = "the report",
) -> Target:
    """``path`` as a :class:`Target`, or an :class:`OutputError` saying why ckptdiag will not
    write there. ``replace``: an existing regular file may be replaced (else it is refused:
    recordings without ``--overwrite``). Nothing is written but a probe of the directory."""
    if path is None or str(path) == "-":
        return STDOUT
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        st = None
    except OSError as exc:
        raise OutputError(f"cannot write {path}: {exc.strerror}", "check the path and its permissions") from None
    if st is not None and (stream := _own_stream(path)) is not None:
        return Target(None, stream)
    _refuse_inputs(path, st, tuple(inputs))  # first: the most useful thing to say
    if st is not None:
        if stat.S_ISLNK(st.st_mode):
            raise OutputError(
                f"{path} is a symbolic link: ckptdiag never writes through one",
                f"give the file's own path ({os.path.realpath(path)}) or a new name",
            )
        if not stat.S_ISREG(st.st_mode):
            hint = (
                f"give {what} a file name inside it"
                if stat.S_ISDIR(st.st_mode)
                else "leave out -o (or give -o -) to write to stdout, and redirect it where you want"
            )
            raise OutputError(f"{path} is {kind_of(st.st_mode)}: ckptdiag writes only regular files", hint)
        if not replace:
            raise OutputError(
                f"{path} already exists; ckptdiag never overwrites a recording",
                "choose another -o name, or pass --overwrite",
            )
    _probe_directory(path)
    return Target(path, exists=st is not None)


def _own_stream(path: Path) -> str | None:
    """ "stdout" or "stderr" when ``path`` names this process's own stream (``/dev/stdout``, the
    terminal it writes to), else None."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    for name, stream in (("stdout", sys.__stdout__), ("stderr", sys.__stderr__)):
        try:
            fd = stream.fileno() if stream is not None else -1
            own = os.fstat(fd) if fd >= 0 else None
        except (OSError, ValueError):
            own = None
        if own is not None and (own.st_dev, own.st_ino) == (st.st_dev, st.st_ino) and not stat.S_ISDIR(st.st_mode):
            if stat.S_ISREG(st.st_mode) and not stat.S_ISLNK(os.lstat(path).st_mode):
                continue  # a file that stdout is also redirected to: still a file to replace
            return name
    return None


def _refuse_inputs(path: Path, st: os.stat_result | None, inputs: tuple[Path, ...]) -> None:
    """Refuse a target that is an input, under an input directory, or another name of one."""
    target = Path(os.path.realpath(path))
    for given in inputs:
        real = Path(os.path.realpath(given))
        if target == real:
            raise OutputError(f"{path} is one of the inputs", "write to another file")
        if real.is_dir() and _under(target, real):
            if st is not None:  # a file the directory's reading may take in
                raise OutputError(f"{path} is one of the inputs (inside {given})", "write to another file")
            raise OutputError(
                f"{path} lies inside the input directory {given}", "write outside the data ckptdiag reads"
            )
    if st is None or st.st_nlink < 2:
        return
    # a hard link: the same file may be an input, or inside an input directory, under another name
    me = (st.st_dev, st.st_ino)
    for given in inputs:
        if any(me == other for other in _file_ids(given)):
            raise OutputError(f"{path} is one of the inputs (another name of it)", "write to another file")


def _under(path: Path, directory: Path) -> bool:
    try:
        return os.path.commonpath([path, directory]) == str(directory)
    except ValueError:
        return False


def _file_ids(given: Path) -> Iterable[tuple[int, int]]:
    """(device, inode) of ``given`` and, for a directory, of the files under it (bounded)."""
    try:
        st = os.stat(given)
    except OSError:
        return
    yield (st.st_dev, st.st_ino)
    if not stat.S_ISDIR(st.st_mode):
        return
    seen = 0
    for root, _dirs, files in os.walk(given):
        for name in files:
            seen += 1
            if seen > _HARD_LINK_SCAN_MAX:
                return
            with contextlib.suppress(OSError):
                sub = os.stat(os.path.join(root, name))
                yield (sub.st_dev, sub.st_ino)


def _temporary(path: Path) -> Path:
    return path.with_name(f".{path.name}.tmp-{os.getpid()}")


def _open_temporary(path: Path) -> tuple[Path, int]:
    """A new temporary file beside ``path`` (never an existing one, never through a link)."""
    tmp = _temporary(path)
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        with contextlib.suppress(FileNotFoundError):
            if stat.S_ISREG(os.lstat(tmp).st_mode):
                os.unlink(tmp)  # left by an earlier run of this pid that was killed
        return tmp, os.open(tmp, flags, 0o666)
    except OSError as exc:
        raise OutputError(
            f"cannot write {path}: {exc.strerror or exc}", "check the directory exists and is writable"
        ) from None


def _probe_directory(path: Path) -> None:
    """Create and remove the temporary file: a read-only filesystem, a missing directory or a
    place like /proc fails now, before minutes of recording, not after."""
    tmp, fd = _open_temporary(path)
    os.close(fd)
    with contextlib.suppress(OSError):
        os.unlink(tmp)


def write_text(target: Target, text: str, *, marker: str = REDACTED) -> None:
    """``text``, redacted, to ``target``: the stream, or a temporary file beside the target
    renamed over it once whole. ``marker`` replaces secrets (HTML's escaped marker in a page)."""
    text = redact_text(text, marker)
    if target.path is None:
        stream = sys.stdout if target.stream == "stdout" else sys.stderr
        stream.write(text)
        stream.flush()
        return
    staged = StagedFile(target)
    try:
        staged.file.write(text.encode())
        staged.publish(replace=True)
    finally:
        staged.abandon()


class StagedFile:
    """A new file written beside its target, published under the target's name only when the
    caller says it is whole enough (:meth:`publish`): a report once written, a recording once it
    holds its first sample. Until then the target (an old recording, last night's report) is
    untouched; :meth:`abandon` removes what was never published."""

    def __init__(self, target: Target) -> None:
        """Open the temporary file for ``target`` (a file target, checked by :func:`check_target`)."""
        if target.path is None:
            raise ValueError("a stream is not staged")
        self.target = target
        self.path: Path = target.path
        self.tmp, fd = _open_temporary(self.path)
        self.file: IO[bytes] = os.fdopen(fd, "wb")
        self.published = False

    def publish(self, *, replace: bool) -> None:
        """Flush, sync and give the file its name: over an existing regular file (``replace``),
        or only where nothing is (``replace=False``: a name taken meanwhile is refused)."""
        if self.published:
            return
        try:
            self.file.flush()
            os.fsync(self.file.fileno())
            self._recheck()
            if replace:
                self._keep_mode()
                os.replace(self.tmp, self.path)
            else:
                self._link_new()
        except OSError as exc:
            raise OutputError(
                f"cannot write {self.path}: {exc.strerror or exc}", "check the directory and its permissions"
            ) from None
        self.published = True

    def abandon(self) -> None:
        """Close; remove the temporary file unless it was published (idempotent)."""
        with contextlib.suppress(OSError):
            self.file.close()
        if not self.published:
            with contextlib.suppress(OSError):
                os.unlink(self.tmp)

    def _recheck(self) -> None:
        """The target may have changed since it was checked (minutes of recording): still never
        a device, a link or a directory."""
        try:
            st = os.lstat(self.path)
        except FileNotFoundError:
            return
        if not stat.S_ISREG(st.st_mode):
            raise OutputError(
                f"{self.path} is no longer a regular file: nothing was written over it",
                "give -o a new name",
            )

    def _keep_mode(self) -> None:
        """A replaced file keeps its permissions (a report a web server reads stays readable)."""
        with contextlib.suppress(OSError):
            os.chmod(self.tmp, stat.S_IMODE(os.stat(self.path).st_mode))

    def _link_new(self) -> None:
        """Give the name only if nothing has it: a hard link fails on an existing name."""
        try:
            os.link(self.tmp, self.path)
        except FileExistsError:
            raise OutputError(
                f"{self.path} already exists; ckptdiag never overwrites a recording",
                "choose another -o name, or pass --overwrite",
            ) from None
        except OSError as exc:
            if exc.errno not in (errno.EPERM, errno.EOPNOTSUPP, errno.ENOTSUP, errno.EXDEV, errno.EMLINK):
                raise
            # a filesystem without hard links (vfat, some FUSE): the name was free when checked
            if os.path.lexists(self.path):
                raise OutputError(
                    f"{self.path} already exists; ckptdiag never overwrites a recording",
                    "choose another -o name, or pass --overwrite",
                ) from None
            os.replace(self.tmp, self.path)
            return
        os.unlink(self.tmp)
