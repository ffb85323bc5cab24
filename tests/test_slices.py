"""The lab's short scheduler slices (ckptdiag/lab/slices.py): asked for, inherited, and put back."""

from __future__ import annotations

import os
import threading

import pytest

from ckptdiag.lab.slices import SLICE_US, current_slice_ns, short_slices


def _in_thread() -> int | None:
    seen: list[int | None] = []
    thread = threading.Thread(target=lambda: seen.append(current_slice_ns()))
    thread.start()
    thread.join()
    return seen[0]


def test_short_slices_reach_every_thread_started_after_and_are_put_back() -> None:
    before = current_slice_ns()
    if before is None:
        pytest.skip("this kernel does not report a thread's slice")
    result: list[tuple[int | None, int | None, int]] = []

    def body() -> None:  # in a thread of its own: the test runner's thread keeps its slice whatever happens
        restore = short_slices()
        if restore is None:
            return
        result.append((current_slice_ns(), _in_thread(), os.nice(0)))
        restore()
        result.append((current_slice_ns(), None, os.nice(0)))

    thread = threading.Thread(target=body)
    thread.start()
    thread.join()
    if not result:
        pytest.skip("this kernel does not let a normal thread ask for its slice (Linux 6.12+)")
    (asked, child, nice), (after, _, nice_after) = result
    assert asked == SLICE_US * 1000 and child == SLICE_US * 1000  # threads started afterwards inherit it
    assert after == before and nice_after == nice  # put back; the nice value never changed


def test_short_slices_keep_a_nice_value() -> None:
    # `nice ckptdiag demo`: asking for a slice writes back the thread's nice value as it was
    result: list[tuple[int, int]] = []

    def body() -> None:  # a thread's nice value is its own on Linux: raised here, for this thread only
        niced = os.nice(3)
        restore = short_slices()
        result.append((niced, os.nice(0)))
        if restore is not None:
            restore()

    thread = threading.Thread(target=body)
    thread.start()
    thread.join()
    assert result[0][0] == result[0][1] and result[0][0] >= 3
