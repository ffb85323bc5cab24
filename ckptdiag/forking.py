"""Work done on the other core by a forked child: whether this process may fork, one function's
result from a child that inherits its arguments (a day's text is not copied to it), and memory
shared with forked workers to hand their results back through."""

from __future__ import annotations

import contextlib
import io
import os
import pickle
import signal
import struct
from collections.abc import Callable
from dataclasses import dataclass
from types import TracebackType
from typing import Any, Generic, TypeVar

T = TypeVar("T")


def jobs_asked() -> int | None:
    """How many processes $CKPTDIAG_JOBS asks for (a whole number above 0), or None when unset."""
    limit = os.environ.get("CKPTDIAG_JOBS", "")
    return int(limit) if limit.isdigit() and int(limit) > 0 else None


def may_fork() -> bool:
    """Whether this process may fork workers: not when $CKPTDIAG_JOBS is 1 (one process asked
    for), not a worker itself (a cluster's members are diagnosed in workers already), where
    fork is offered, and running no other thread (a lock one of them holds would be held
    forever in the child)."""
    import multiprocessing  # here: a report that never forks does not pay for its import
    import threading

    return (
        jobs_asked() != 1
        and multiprocessing.parent_process() is None
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
        self._pid: int | None = None
        self._pipe: io.BufferedReader | None = None
        read_end, write_end = os.pipe()
        _widen(write_end)
        try:
            self._pid = os.fork()
        except OSError:  # no process to be had (memory, a limit on processes): no child
            os.close(read_end)
            os.close(write_end)
            return
        if self._pid == 0:  # the child: never returns
            os.close(read_end)
            _run_child(write_end, fn, args)
        os.close(write_end)
        self._pipe = os.fdopen(read_end, "rb")

    def result(self) -> T | None:
        """The child's result, once it has finished; None when it failed (or none was forked)."""
        if self._pipe is None:
            return None
        try:  # interrupted: __exit__ kills the child rather than wait for it
            head, buffers = _read_parts(self._pipe)
        except (EOFError, struct.error, MemoryError):
            head, buffers = None, []
        status = self._reap()
        if status != 0 or head is None:
            return None
        try:
            value: T = pickle.loads(head, buffers=buffers)
        except Exception:  # noqa: BLE001 - a torn result is a failed child: the caller does the work
            return None
        return value

    def _reap(self) -> int | None:
        """Wait for the child (once) -> its exit code."""
        if self._pipe is not None:
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


def _read_parts(pipe: io.BufferedReader) -> tuple[bytearray, list[bytearray]]:
    """A child's pickle and its out-of-band buffers (an array's data read straight into the
    memory the array is rebuilt on: no copy of a day's columns held twice)."""
    (count,) = struct.unpack("<Q", _read(pipe, 8))
    sizes = struct.unpack(f"<{count + 1}Q", _read(pipe, 8 * (count + 1)))
    return _read(pipe, sizes[0]), [_read(pipe, size) for size in sizes[1:]]


def _read(pipe: io.BufferedReader, size: int) -> bytearray:
    """Exactly ``size`` bytes from ``pipe`` (EOFError when the child wrote fewer)."""
    buffer = bytearray(size)
    view, got = memoryview(buffer), 0
    while got < size:
        n = pipe.readinto(view[got:])
        if not n:
            raise EOFError
        got += n
    return buffer


def _widen(pipe: int) -> None:
    """A pipe of 1 MB where the OS allows it (Linux): a day's columns cross in ~30 writes
    instead of ~500 of 64 KB, each a switch between the two processes (~50 ms saved)."""
    try:
        import fcntl

        fcntl.fcntl(pipe, fcntl.F_SETPIPE_SZ, 1 << 20)
    except (ImportError, AttributeError, OSError):  # another OS, or a lower limit: the default pipe
        pass


def _run_child(write_end: int, fn: Callable[..., object], args: tuple[object, ...]) -> None:
    """In the child: run ``fn``, write its pickled result (arrays' data out of band, not
    copied into the pickle), and leave at once (exit code 0 only when all of it was written)."""
    code = 1
    try:
        value = fn(*args)
        buffers: list[pickle.PickleBuffer] = []
        try:
            head = pickle.dumps(value, protocol=5, buffer_callback=buffers.append)
            parts = [memoryview(head), *(buffer.raw() for buffer in buffers)]
        except BufferError:  # a buffer that is not contiguous: in the pickle after all
            parts = [memoryview(pickle.dumps(value, protocol=5))]
        sizes = [len(part) for part in parts]  # raw() views are bytes: lengths in bytes
        with os.fdopen(write_end, "wb") as pipe:
            pipe.write(struct.pack(f"<Q{len(parts)}Q", len(parts) - 1, *sizes))
            for part in parts:
                pipe.write(part)
        code = 0
    except BaseException:  # noqa: BLE001 - any failure: the parent sees a failed child and does the work
        pass
    finally:
        os._exit(code)  # no exit handler runs, and the parent's buffered output it inherited is never written


class Slots:
    """Memory shared with forked workers, in which a worker hands back a result's arrays: the
    result is pickled with its arrays' data out of band, the data written into the task's slot
    and only the small pickle sent back; the parent copies the data out once, with no pipe in
    between (through a pool's pipe, a result's bytes were held in the worker, read 64 KB at a
    time and joined in the parent, then unpickled: a 47-day report's tree took ~60 MB more).

    Made before the workers are forked (they inherit the mapping). A slot is written by one
    task at a time: the caller gives task ``k`` slot ``k % count`` and has at most ``count``
    tasks whose results it has not copied out. Pages are taken only as they are written."""

    def __init__(self, count: int, size: int) -> None:
        import mmap

        self.size = size
        try:
            self._maps = [mmap.mmap(-1, size) for _ in range(count)]  # anonymous: MAP_SHARED on Unix
        except (OSError, ValueError):  # no address space to be had (a ulimit -v): results go whole
            self._maps = []

    def put(self, k: int, value: object) -> Handed:
        """In a worker: ``value`` for slot ``k``; kept whole in the pickle (a
        :class:`Handed` with no buffers) when its data does not fit the slot."""
        buffers: list[pickle.PickleBuffer] = []
        head = pickle.dumps(value, protocol=5, buffer_callback=buffers.append)
        try:
            views = [buffer.raw() for buffer in buffers]
        except BufferError:  # a buffer that is not contiguous
            views = []
        fits = self._maps and len(views) == len(buffers) and sum(len(v) for v in views) <= self.size
        if not buffers or not fits:
            return Handed(pickle.dumps(value, protocol=5), ())
        memory, at, sizes = self._maps[k % len(self._maps)], 0, []
        for view in views:
            memory[at : at + len(view)] = view
            at += len(view)
            sizes.append(len(view))
        return Handed(head, tuple(sizes))

    def take(self, k: int, handed: Handed) -> Any:
        """In the parent: the value a worker put in slot ``k``, its data copied out of the slot
        (the slot may then be written again)."""
        if not handed.sizes:
            return pickle.loads(handed.head)
        at, buffers = 0, []
        with memoryview(self._maps[k % len(self._maps)]) as memory:
            for size in handed.sizes:
                buffer = bytearray(size)
                buffer[:] = memory[at : at + size]  # one copy, straight into the array's memory
                buffers.append(buffer)
                at += size
        return pickle.loads(handed.head, buffers=buffers)

    def close(self) -> None:
        """Let go of the shared memory (in the parent, once every result is taken)."""
        for memory in self._maps:
            memory.close()


@dataclass(frozen=True)
class Handed:
    """What a worker sends back for a slot: the pickle, and the sizes of the buffers it wrote
    there in order (none: the pickle holds everything)."""

    head: bytes
    sizes: tuple[int, ...]
