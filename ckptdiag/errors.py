"""Errors that reach the user as one line: ``ckptdiag: error: <what>`` plus a hint."""

from __future__ import annotations

from ckptdiag.status import ExitStatus


class CkptdiagError(Exception):
    """A failure the user can act on; ``cli.main`` prints it and exits with ``status``."""

    status: ExitStatus = ExitStatus.ERROR

    def __init__(self, message: str, hint: str = "") -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint

    def one_line(self) -> str:
        """The message and its hint on one line, as printed after ``ckptdiag: error:``."""
        return f"{self.message} (hint: {self.hint})" if self.hint else self.message


class UsageError(CkptdiagError):
    """Options that contradict each other or name something impossible."""

    status = ExitStatus.USAGE


class ConnectError(CkptdiagError):
    """The server could not be reached, or refused us (auth, privileges, wrong kind of server).

    ``retryable`` errors (unreachable) are worth another try while recording; the others
    (authentication, privileges, mongos, MMAPv1) will fail the same way every time.
    """

    def __init__(self, message: str, hint: str = "", *, retryable: bool = False) -> None:
        super().__init__(message, hint)
        self.retryable = retryable


class OutputError(CkptdiagError):
    """The recording or report cannot be written."""


class InputError(CkptdiagError):
    """A file given to ckptdiag cannot be read or is not what it should be."""


class Terminated(BaseException):
    """SIGTERM outside the sampling loop (which stops cleanly on it instead): raised from the
    handler so that every ``finally`` and cleanup runs on the way out (no half-made file)."""
