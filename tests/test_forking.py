"""Work on the other core: a forked child's result, and what happens when it or its parent fails."""

from __future__ import annotations

import os
import signal
import threading
import time

import pytest

from ckptdiag import forking


def _sum_of(data: bytes, start: int) -> int:
    return sum(data[start:])


def test_a_child_returns_its_result_computed_on_what_it_inherited() -> None:
    data = bytes(range(256)) * 4096  # inherited through fork, not sent
    with forking.Child(_sum_of, data, 1000) as child:
        assert child.result() == sum(data[1000:])


def _arrays() -> dict[str, object]:
    import numpy as np

    column = np.arange(100_000, dtype=np.float64)
    return {"column": column, "every_other": column[::2], "flags": column > 5}


def test_arrays_come_back_whole_and_writable_contiguous_or_not() -> None:
    import numpy as np

    with forking.Child(_arrays) as child:
        got = child.result()
    assert got is not None
    column = np.arange(100_000, dtype=np.float64)
    assert np.array_equal(got["column"], column) and np.array_equal(got["every_other"], column[::2])
    assert np.array_equal(got["flags"], column > 5)
    got["column"][0] = -1.0  # a recording's columns are cleaned in place afterwards


def _fails() -> None:
    raise RuntimeError("boom")


def _killed() -> None:
    os.kill(os.getpid(), signal.SIGKILL)


def _unpicklable() -> object:
    return lambda: None


@pytest.mark.parametrize("fn", [_fails, _killed, _unpicklable])
def test_a_child_that_fails_gives_none_and_the_caller_does_the_work(fn: object) -> None:
    with forking.Child(fn) as child:  # type: ignore[arg-type]
        assert child.result() is None


def test_leaving_early_kills_the_child_and_reaps_it() -> None:
    started = time.monotonic()
    with pytest.raises(KeyboardInterrupt), forking.Child(time.sleep, 60) as child:
        pid = child._pid
        raise KeyboardInterrupt  # as Ctrl-C while the parent parses its half
    assert time.monotonic() - started < 10
    assert pid is not None
    with pytest.raises(ChildProcessError):  # reaped: no zombie left behind
        os.waitpid(pid, os.WNOHANG)


def test_no_fork_when_one_process_is_asked_for(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CKPTDIAG_JOBS", "1")
    assert not forking.may_fork()


def test_no_fork_while_another_thread_runs() -> None:
    assert forking.may_fork()
    stop = threading.Event()
    thread = threading.Thread(target=stop.wait)
    thread.start()
    try:
        assert not forking.may_fork()
    finally:
        stop.set()
        thread.join()
