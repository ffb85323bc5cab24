"""Short scheduler time slices for the lab's threads, so that a busy host cannot halve its paced rate.

Since Linux 6.6 (the EEVDF scheduler) a thread that wakes on a core another process's thread is
using waits, as a rule, for that thread's time slice to end (1.4 ms here, up to 3 ms). The lab's clients
wake for every journal sync and every paced write: with both cores of a 2-core host kept busy by
other processes, the stall scenario's three clients fell from 600 journaled writes/s to ~320, the
in-process engine's 3,000 writes/s to ~1,500-2,400, and the ground truth described the host's load
rather than the checkpoints'. A mongod with hundreds of connection threads gets its share of the
cores by numbers; the lab's few clients instead ask for 0.1 ms slices (``sched_setattr``'s
``sched_runtime`` on a normal thread: Linux 6.12+, no privilege needed), which every thread started
afterwards inherits, the engine's own threads included: 600 and ~2,980 writes/s with both cores busy.

Where the kernel cannot (older kernels, other systems), nothing changes, and the lab's ground truth
says when the workload fell behind its paced rate (:attr:`ckptdiag.lab.truth.TruthSummary.behind`).
"""

from __future__ import annotations

import ctypes
import platform
import struct
import sys
import threading
from collections.abc import Callable

SLICE_US = 100  # the shortest slice the kernel grants

# sched_setattr and sched_getattr system call numbers
_SYSCALLS = {"x86_64": (314, 315), "aarch64": (274, 275)}
# struct sched_attr as of Linux 4.13 (SCHED_ATTR_SIZE_VER1): size, policy, flags, nice, priority,
# runtime, deadline, period, util_min, util_max
_ATTR = struct.Struct("=IIQiIQQQII")
_NORMAL_POLICIES = (0, 3)  # SCHED_OTHER, SCHED_BATCH: the policies whose slice sched_runtime sets


def short_slices(us: int = SLICE_US) -> Callable[[], None] | None:
    """Ask for ``us`` µs time slices for the calling thread and every thread it starts from now on;
    return what puts the calling thread's old setting back, or None where the kernel refused.

    Only the slice changes: the thread's policy and nice value are read first and written back as
    they were (``nice ckptdiag demo`` stays nice)."""
    numbers = _SYSCALLS.get(platform.machine())
    if not sys.platform.startswith("linux") or numbers is None:
        return None
    try:
        libc = ctypes.CDLL(None, use_errno=True)
    except OSError:
        return None
    set_nr, get_nr = numbers
    tid = threading.get_native_id()  # restored on this thread, whichever thread restores it
    buffer = ctypes.create_string_buffer(_ATTR.size)
    if libc.syscall(get_nr, 0, buffer, _ATTR.size, 0) != 0:
        return None
    old = _ATTR.unpack(buffer.raw)
    if old[1] not in _NORMAL_POLICIES:
        return None  # a real-time or idle thread: its slice is not ours to change
    wanted = list(old)
    wanted[0] = _ATTR.size
    wanted[5] = us * 1000

    def put(values: list[int] | tuple[int, ...]) -> bool:
        data = ctypes.create_string_buffer(_ATTR.pack(*values), _ATTR.size)
        return bool(libc.syscall(set_nr, tid, data, 0) == 0)

    if not put(wanted):
        return None  # before Linux 6.12 a normal thread's sched_runtime is refused or ignored

    def restore() -> None:
        put((_ATTR.size, *old[1:]))

    return restore


def current_slice_ns(tid: int | None = None) -> int | None:
    """A thread's time slice (this process's thread ``tid``, by default the calling one) as the
    kernel reports it (``/proc``), if it does."""
    tid = threading.get_native_id() if tid is None else tid
    try:
        with open(f"/proc/self/task/{tid}/sched", encoding="ascii") as f:
            for line in f:
                if line.startswith("se.slice"):
                    return int(line.split(":")[1])
    except (OSError, ValueError):
        return None
    return None
