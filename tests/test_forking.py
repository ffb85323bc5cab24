"""Work on the other core: a forked child's result, and what happens when it or its parent fails."""

from __future__ import annotations

import os
import signal
import threading
import time
from pathlib import Path

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


def test_no_process_to_be_had_is_no_child_and_the_caller_does_the_work(monkeypatch: pytest.MonkeyPatch) -> None:
    def refused() -> int:
        raise BlockingIOError("fork: Resource temporarily unavailable")

    monkeypatch.setattr(os, "fork", refused)
    open_before = len(os.listdir("/proc/self/fd")) if os.path.isdir("/proc/self/fd") else None
    with forking.Child(_sum_of, b"abc", 0) as child:
        assert child.result() is None
    if open_before is not None:  # the pipe made for it is closed again
        assert len(os.listdir("/proc/self/fd")) == open_before


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


# `ckptdiag report` as a machine without the compiled scanner runs it, every recording read in
# two halves, the child's half slowed down: a signal always finds the child at work
_SLOW_CHILD = """
import os, sys, time, runpy
sys.modules["ckptdiag._jsonl"] = None
from ckptdiag.recording import reader
reader.PARSE_SPLIT = 0
parent, parse, pid_file = os.getpid(), reader._parse_lines, sys.argv.pop(1)
def slow(*args):
    if os.getpid() != parent:
        print(os.getpid(), file=open(pid_file, "w"), flush=True)
        time.sleep(60)
    return parse(*args)
reader._parse_lines = slow
runpy.run_module("ckptdiag", run_name="__main__")
"""


@pytest.mark.parametrize("how", ["SIGTERM", "Ctrl-C"])
def test_a_report_stopped_while_its_child_parses_leaves_no_child(tmp_path: Path, how: str) -> None:
    import subprocess
    import sys

    from fakes import status_doc

    from ckptdiag.recording import RecordingWriter, build_sample, header

    rec = tmp_path / "r.jsonl"
    writer = RecordingWriter(rec)
    writer.write(header(source={"kind": "serverStatus"}, server={}, options={}, disks={}, created=1.8e9), 0.0)
    for i in range(50):
        writer.write(build_sample(status_doc(i), seq=i, wall=1.8e9 + i, mono=i, rtt_ms=1.0), float(i))
    writer.close()
    pid_file = tmp_path / "child.pid"
    proc = subprocess.Popen(
        [sys.executable, "-c", _SLOW_CHILD, str(pid_file), "report", str(rec), "-o", str(tmp_path / "r.json")],
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,  # its own process group: Ctrl-C reaches the parent and the child
    )
    deadline = time.monotonic() + 60
    while not (pid_file.exists() and pid_file.read_text().strip()) and time.monotonic() < deadline:
        time.sleep(0.05)
    child = int(pid_file.read_text())
    if how == "SIGTERM":
        proc.send_signal(signal.SIGTERM)  # the parent only, as a service manager stops it
    else:
        os.killpg(proc.pid, signal.SIGINT)  # the whole foreground group, as a terminal does
    _, stderr = proc.communicate(timeout=30)
    assert proc.returncode == (143 if how == "SIGTERM" else 130), stderr
    said = [line for line in stderr.splitlines() if line.strip() and "note: compiled kernels" not in line]
    assert len(said) == 1, stderr  # one line, no trace from either process
    assert said[0].startswith("ckptdiag: stopped by SIGTERM" if how == "SIGTERM" else "ckptdiag: interrupted")
    with pytest.raises(ProcessLookupError):  # killed and reaped by the parent, not orphaned
        os.kill(child, 0)
    assert not (tmp_path / "r.json").exists()


def test_output_buffered_before_the_fork_is_written_once() -> None:
    import subprocess
    import sys

    code = (
        "import sys; from ckptdiag import forking\n"
        "sys.stdout.write('once;')\n"  # buffered (a pipe), not yet written when the child is forked
        "with forking.Child(int, '7') as c: print(c.result())"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60)
    assert out.stdout == "once;7\n"


_SLOTS: forking.Slots | None = None  # inherited by the pool's worker, as the FTDC workers inherit theirs


def _put(k: int, value: object) -> forking.Handed:
    assert _SLOTS is not None
    return _SLOTS.put(k, value)


def test_results_handed_back_through_shared_slots_are_whole_and_the_slot_free_again() -> None:
    # a worker forked after the slots were made writes a result's arrays into its slot; the
    # parent gets the same value (a frame too), its data its own: the slot may be written again
    import multiprocessing

    import numpy as np
    import pandas as pd

    global _SLOTS
    _SLOTS = slots = forking.Slots(2, 1 << 20)
    frame = pd.DataFrame({"a": np.arange(1000, dtype=np.float32), "t": np.linspace(0, 1, 1000)})
    values = [{"frame": frame, "k": k, "arrays": [np.full(5000, k, dtype=np.int64)]} for k in range(5)]
    context = multiprocessing.get_context("fork")
    try:
        with context.Pool(1) as pool:
            for k, value in enumerate(values):
                handed = pool.apply(_put, (k, value))
                assert len(handed.sizes) >= 2 and len(handed.head) < 4096  # the data went by the slot
                got = slots.take(k, handed)
                pd.testing.assert_frame_equal(got["frame"], frame)
                assert got["k"] == k and np.array_equal(got["arrays"][0], values[k]["arrays"][0])
                got["arrays"][0][:] = -1  # writable, and its own memory
            # more than a slot holds goes whole in the pickle
            big = {"x": np.zeros(1 << 18)}
            handed = pool.apply(_put, (0, big))
            assert handed.sizes == () and np.array_equal(slots.take(0, handed)["x"], big["x"])
    finally:
        _SLOTS = None
        slots.close()


def test_no_shared_memory_to_be_had_hands_results_back_whole(monkeypatch: pytest.MonkeyPatch) -> None:
    import mmap

    import numpy as np

    def refused(*args: object) -> None:
        raise OSError(12, "Cannot allocate memory")

    monkeypatch.setattr(mmap, "mmap", refused)
    slots = forking.Slots(2, 1 << 20)
    handed = slots.put(1, {"x": np.arange(10)})
    assert handed.sizes == () and np.array_equal(slots.take(1, handed)["x"], np.arange(10))
