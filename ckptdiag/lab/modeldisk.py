"""The lab's slow disk for everyone: a modelled device of N MB/s with one queue, no root needed.

``lab/_slowdisk.c``, preloaded (``LD_PRELOAD``) into the ``lab serve`` process, models the data
directory's device: writes land in the page cache at once, every sync sends its file's dirty
bytes to one queue written at N MB/s and returns once they are written, so the journal's sync
waits behind the checkpoint's burst as it does on a saturated disk (docs/lab.md#slow-disk). This
module finds the built shim, re-executes ``lab serve`` with it, and reads the model device's
counters as the /proc/diskstats counters of a device called ``labdisk``, so the recorder, iostat
and the report see it like any data disk.
"""

from __future__ import annotations

import importlib.machinery
import os
import struct
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import NoReturn

from ckptdiag.model.disk import DiskCounters

DEVICE = "labdisk"
PREFIX = "ckptdiag-modeldisk-"
ENV_DIR = "CKPTDIAG_SLOWDISK_DIR"
ENV_MB_S = "CKPTDIAG_SLOWDISK_MB_S"
ENV_STATE = "CKPTDIAG_SLOWDISK_STATE"
_MAGIC = 0x6B73696477736C73
# magic, seq, rate_bps, busy_until_ns, reserved_ns, bytes, requests, wait_ns, in_flight (_slowdisk.c)
_STATE = struct.Struct("<9q")
SECTOR = 512


def shim_path() -> Path | None:
    """The built shim beside this module, or None where it was not built (no C compiler)."""
    for suffix in importlib.machinery.EXTENSION_SUFFIXES:
        path = Path(__file__).with_name("_slowdisk" + suffix)
        if path.exists():
            return path
    return None


@dataclass(frozen=True)
class ModelDisk:
    """The model disk this process was started on: its directory and counters file."""

    directory: Path
    state: Path
    loaded: bool  # the shim is in this process (the loader skips one it cannot load, with a warning)


def active() -> ModelDisk | None:
    """The model disk this process was started on (its environment says so), if any."""
    directory, mb_s, state = (os.environ.get(k) for k in (ENV_DIR, ENV_MB_S, ENV_STATE))
    if not (directory and mb_s and state and "_slowdisk" in os.environ.get("LD_PRELOAD", "")):
        return None
    try:
        loaded = "_slowdisk" in Path("/proc/self/maps").read_text()
    except OSError:
        loaded = False
    return ModelDisk(Path(directory), Path(state), loaded)


def make_directory(base: Path) -> Path:
    """A fresh directory for the model disk under ``base``, named by this process (which keeps its
    pid across the re-exec), after removing those of labs that died without cleaning up."""
    import shutil
    import tempfile

    for old in base.glob(PREFIX + "*-*"):
        pid = old.name[len(PREFIX) :].split("-", 1)[0]
        if pid.isdigit() and not _alive(int(pid)):
            shutil.rmtree(old, ignore_errors=True)
    return Path(tempfile.mkdtemp(prefix=f"{PREFIX}{os.getpid()}-", dir=base))


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # another user's process
    return True


def reexec_on(directory: Path, mb_s: float, state: Path, shim: Path) -> NoReturn:
    """Run this same command again with the shim preloaded on ``directory`` (the preload has to be
    there when the process starts: the engine's calls are bound then)."""
    env = dict(os.environ)
    env["LD_PRELOAD"] = " ".join(filter(None, (str(shim), env.get("LD_PRELOAD", ""))))
    env.update({ENV_DIR: str(directory), ENV_MB_S: f"{mb_s:g}", ENV_STATE: str(state)})
    sys.stdout.flush()
    sys.stderr.flush()
    os.execve(sys.executable, list(sys.orig_argv), env)


_WAITED_MS: dict[Path, int] = {}  # the highest wait each device's counters have given this process


def read_counters(state: Path) -> dict[str, tuple[DiskCounters, int]]:
    """The model device's counters as of now, as /proc/diskstats's (empty before the shim set up).

    Bytes and busy time count as written only once the device has written them: the queue drains
    at the device's rate, so what is still queued is ``(busy_until - now) * rate``.
    """
    try:
        raw = state.read_bytes()
    except OSError:
        return {}
    for _ in range(100):  # a seqlock: an odd or changed sequence is a torn read
        if len(raw) < _STATE.size:
            return {}
        magic, seq, rate, busy_until, reserved_ns, written, requests, wait_ns, in_flight = _STATE.unpack_from(raw)
        again = state.read_bytes()
        if magic == _MAGIC and seq % 2 == 0 and again[: _STATE.size] == raw[: _STATE.size]:
            break
        raw = again
    else:
        return {}
    left_ns = max(0, busy_until - time.monotonic_ns())
    done_bytes = max(0, written - left_ns * rate // 1_000_000_000)
    waited_ms = max(0, wait_ns - in_flight * left_ns) // 1_000_000  # one queue: in queue = writing
    # what is still queued is an estimate that can shrink as requests come and go; the kernel's
    # tick counters never go back (a read that went back looked like a 32-bit wrap: hours of await)
    waited_ms = _WAITED_MS[state] = max(waited_ms, _WAITED_MS.get(state, 0))
    counters = DiskCounters(
        wr_ios=requests,
        wr_sectors=done_bytes // SECTOR,
        wr_ticks=waited_ms,
        ios_pgr=in_flight,
        tot_ticks=max(0, reserved_ns - left_ns) // 1_000_000,
        rq_ticks=waited_ms,
    )
    return {DEVICE: (counters, 17)}
