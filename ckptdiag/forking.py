"""Work done on the other core by a forked child: whether this process may fork, and one
function's result from a child that inherits its arguments (a day's text is not copied to it)."""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import pickle
import signal
import sys
from collections.abc import Callable
from types import TracebackType
from typing import Generic, TypeVar

T = TypeVar("T")


def may_fork() -> bool:
    """Whether this process may fork workers: not a worker itself (a cluster's members are
    diagnosed in workers already), where fork is offered, and running no other thread (a lock
    one of them holds would be held forever in the child)."""
    import threading

    return (
        multiprocessing.parent_process() is None
        and "fork" in multiprocessing.get_all_start_methods()
        and threading.active_count() == 1
    )


class Child(Generic[T]):
    """``fn(*args)`` run in a forked child, its result sent back pickled through a pipe. The
    child writes nothing else and runs no exit handler; whatever goes wrong in it (an error,
    a signal, a result that cannot be pickled) makes :meth:`result` None, and the caller does
    the work itself. Used as a context manager: on leaving, a child still running is killed
    and every child is reaped."""

    def __init__(self, fn: Callable[..., T], *args: object) -> None:
        sys.stdout.flush()  # a buffered line would otherwise be written by both processes
        sys.stderr.flush()
        read_end, write_end = os.pipe()
        self._pid: int | None = os.fork()
        if self._pid == 0:  # the child: never returns
            os.close(read_end)
            _run_child(write_end, fn, args)
        os.close(write_end)
        self._pipe = os.fdopen(read_end, "rb")

    def result(self) -> T | None:
        """The child's result, once it has finished; None when it failed."""
        data = self._pipe.read()  # interrupted: __exit__ kills the child rather than wait for it
        status = self._reap()
        if status != 0 or not data:
            return None
        try:
            value: T = pickle.loads(data)
        except Exception:  # noqa: BLE001 - a torn result is a failed child: the caller does the work
            return None
        return value

    def _reap(self) -> int | None:
        """Wait for the child (once) -> its exit code."""
        self._pipe.close()
        pid, self._pid = self._pid, None
        if pid is None:
            return None
        _, status = os.waitpid(pid, 0)
        return os.waitstatus_to_exitcode(status)

    def __enter__(self) -> Child[T]:
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        if self._pid is not None:  # the caller stopped early (an error, Ctrl-C): no orphan left
            with contextlib.suppress(ProcessLookupError):
                os.kill(self._pid, signal.SIGKILL)
            self._reap()


def _run_child(write_end: int, fn: Callable[..., object], args: tuple[object, ...]) -> None:
    """In the child: run ``fn``, write its pickled result, and leave at once (exit code 0 only
    when the whole result was written)."""
    code = 1
    try:
        data = pickle.dumps(fn(*args), protocol=pickle.HIGHEST_PROTOCOL)
        with os.fdopen(write_end, "wb") as pipe:
            pipe.write(data)
        code = 0
    except BaseException:  # noqa: BLE001 - any failure: the parent sees a failed child and does the work
        pass
    finally:
        os._exit(code)
