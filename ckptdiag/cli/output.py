"""How the command line speaks to its user: stdout and stderr, each behind the redactor.

:func:`guard_streams` replaces ``sys.stdout`` and ``sys.stderr`` for the whole run, so that every
string printed (a report, a click usage error quoting an option's value, a driver's message, a
live status line) passes :func:`ckptdiag.guard.redact.redact_text` before it leaves the process.
"""

from __future__ import annotations

import contextlib
import re
import sys
import threading
from typing import IO, Any

import click

from ckptdiag.guard.redact import redact_text

# C0 controls (but tab) and DEL: an input's name or a hosts file's line printed in a message
# must not move the cursor, clear the screen or set the terminal's title
_CONTROL = re.compile(r"[\x00-\x08\x0a-\x1f\x7f]")


def err(message: str) -> None:
    """One line on stderr, prefixed ``ckptdiag:`` (control characters shown as ``\\xNN``)."""
    one_line = _CONTROL.sub(lambda m: f"\\x{ord(m.group(0)):02x}", message)
    click.echo(f"ckptdiag: {one_line}", err=True)


class RedactingStream:
    """A text stream that redacts what it is given, a whole line at a time (``print`` writes a
    line in pieces: a secret split across two writes is still found), before the stream under it
    gets it. ``flush`` passes on a partial line (a prompt, a live status line); it has no
    ``buffer``, so no library can write around it in bytes."""

    def __init__(self, stream: IO[str]) -> None:
        self._stream = stream
        self._pending = ""
        self._lock = threading.Lock()  # a cluster's samplers stream from several threads

    def write(self, text: str) -> int:
        """Take ``text``; pass on every whole line it completes, redacted."""
        if not isinstance(text, str):
            raise TypeError(f"write() argument must be str, not {type(text).__name__}")
        with self._lock:
            self._pending += text
            cut = max(self._pending.rfind("\n"), self._pending.rfind("\r"))
            if cut >= 0:
                ready, self._pending = self._pending[: cut + 1], self._pending[cut + 1 :]
                self._stream.write(redact_text(ready))
        return len(text)

    def flush(self) -> None:
        """Pass on what is pending (redacted), then flush the stream under it."""
        with self._lock:
            if self._pending:
                ready, self._pending = self._pending, ""
                self._stream.write(redact_text(ready))
        self._stream.flush()

    def isatty(self) -> bool:
        """Whether the stream under it is a terminal (rich and click ask)."""
        return self._stream.isatty()

    def fileno(self) -> int:
        """The descriptor under it (terminal size, the output guard's check of ``-o /dev/stdout``)."""
        return self._stream.fileno()

    def writable(self) -> bool:
        """Always: a stream to write to."""
        return True

    @property
    def encoding(self) -> str:
        """The encoding of the stream under it."""
        return str(getattr(self._stream, "encoding", "utf-8") or "utf-8")

    @property
    def errors(self) -> str | None:
        """The error handler of the stream under it."""
        return getattr(self._stream, "errors", None)

    @property
    def closed(self) -> bool:
        """Whether the stream under it is closed."""
        return bool(getattr(self._stream, "closed", False))

    def __getattr__(self, name: str) -> Any:
        if name == "buffer":  # bytes would bypass the redactor
            raise AttributeError(name)
        return getattr(self._stream, name)


def guard_streams() -> tuple[Any, Any]:
    """Put stdout and stderr behind the redactor; the previous pair (to put back)."""
    previous = (sys.stdout, sys.stderr)
    if not isinstance(sys.stdout, RedactingStream) and sys.stdout is not None:
        sys.stdout = RedactingStream(sys.stdout)
    if not isinstance(sys.stderr, RedactingStream) and sys.stderr is not None:
        sys.stderr = RedactingStream(sys.stderr)
    return previous


def restore_streams(previous: tuple[Any, Any]) -> None:
    """Flush the guarded streams and put ``previous`` back."""
    for stream in (sys.stdout, sys.stderr):
        if isinstance(stream, RedactingStream):
            with contextlib.suppress(OSError, ValueError):  # a reader gone (| head): nothing more to say
                stream.flush()
    sys.stdout, sys.stderr = previous
