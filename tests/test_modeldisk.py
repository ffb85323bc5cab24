"""The model disk (lab/_slowdisk.c): one queue at N MB/s, a sync waits for what is queued before it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from ckptdiag.lab import modeldisk

SHIM = modeldisk.shim_path()
pytestmark = pytest.mark.skipif(SHIM is None, reason="the model disk's shim was not built (no C compiler)")

# a checkpoint's burst and the journal's small sync, as the engine makes them
PROGRAM = textwrap.dedent(
    """
    import json, os, sys, threading, time
    d, outside = sys.argv[1], sys.argv[2]
    data = os.open(d + "/collection.wt", os.O_WRONLY | os.O_CREAT, 0o600)
    log = os.open(d + "/WiredTigerLog.0000000001", os.O_WRONLY | os.O_CREAT, 0o600)
    other = os.open(outside, os.O_WRONLY | os.O_CREAT, 0o600)
    os.write(data, b"x" * (8 << 20))
    t0 = time.monotonic()
    out = {}
    def checkpoint():
        os.fdatasync(data)
        out["checkpoint_s"] = time.monotonic() - t0
    th = threading.Thread(target=checkpoint)
    th.start()
    time.sleep(0.1)
    os.write(log, b"j" * 1024)
    t1 = time.monotonic()
    os.fdatasync(log)
    out["journal_behind_s"] = time.monotonic() - t1
    os.write(other, b"o" * (8 << 20))
    t2 = time.monotonic()
    os.fsync(other)
    out["outside_s"] = time.monotonic() - t2
    th.join()
    os.write(log, b"j" * 1024)
    t3 = time.monotonic()
    os.fdatasync(log)
    out["journal_idle_s"] = time.monotonic() - t3
    print(json.dumps(out))
    """
)


def _run(tmp_path: Path, mb_s: float) -> tuple[dict[str, float], Path]:
    directory, state = tmp_path / "data", tmp_path / "device.state"
    directory.mkdir()
    env = {
        **os.environ,
        "LD_PRELOAD": str(SHIM),
        modeldisk.ENV_DIR: str(directory),
        modeldisk.ENV_MB_S: str(mb_s),
        modeldisk.ENV_STATE: str(state),
    }
    proc = subprocess.run(
        [sys.executable, "-c", PROGRAM, str(directory), str(tmp_path / "outside")],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    return json.loads(proc.stdout), state


def test_the_journal_sync_waits_behind_the_checkpoints_burst(tmp_path: Path) -> None:
    out, state = _run(tmp_path, 8.0)
    assert 0.95 <= out["checkpoint_s"] <= 1.6  # 8 MB at 8 MB/s
    assert out["journal_behind_s"] >= 0.8  # queued behind the burst's remaining ~0.9 s
    assert out["journal_idle_s"] < 0.2  # an idle device takes it at once
    assert out["outside_s"] < 0.5  # files outside the modelled directory are not slowed
    (counters, _n) = modeldisk.read_counters(state)[modeldisk.DEVICE]
    # everything queued has been written: the burst, two journal pages, nothing of the outside file
    assert counters.wr_sectors == (8 * 2**20 + 2 * 1024) // 512
    assert counters.wr_ios == 3 and counters.ios_pgr == 0
    assert 990 <= counters.tot_ticks <= 1100  # busy for the burst's second and the pages' moments


def test_counters_count_only_what_the_device_has_written(tmp_path: Path) -> None:
    # half-way through a burst, half of it is written and the device has been busy half the time
    import struct
    import time

    state = tmp_path / "device.state"
    now = time.monotonic_ns()
    rate = 16 * 2**20
    fields = (0x6B73696477736C73, 2, rate, now + 500_000_000, 1_000_000_000, rate, 1, 1_000_000_000, 1)
    state.write_bytes(struct.pack("<9q", *fields))
    (counters, _n) = modeldisk.read_counters(state)[modeldisk.DEVICE]
    assert counters.wr_sectors * 512 == pytest.approx(rate / 2, rel=0.02)
    assert counters.tot_ticks == pytest.approx(500, abs=10)
    assert counters.ios_pgr == 1
    # a torn (odd-sequence) state is never read as counters
    state.write_bytes(struct.pack("<9q", *(fields[0], 3, *fields[2:])))
    assert modeldisk.read_counters(state) == {}
    assert modeldisk.read_counters(tmp_path / "missing") == {}


def test_a_dead_labs_model_directory_is_swept(tmp_path: Path) -> None:
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    stale = tmp_path / f"{modeldisk.PREFIX}{dead.stdout.strip()}-abc"
    live = tmp_path / f"{modeldisk.PREFIX}{os.getpid()}-def"
    for d in (stale, live):
        (d / "ckptdiag-lab-x").mkdir(parents=True)
    fresh = modeldisk.make_directory(tmp_path)
    assert not stale.exists() and live.exists() and fresh.is_dir()
    assert fresh.name.startswith(f"{modeldisk.PREFIX}{os.getpid()}-")


def test_bytes_left_dirty_past_the_expiry_are_written_in_the_background(tmp_path: Path) -> None:
    # the kernel's flusher writes pages dirty for 30 s (here 0.5 s) on its own: a later sync finds
    # only what was written since, and the device was busy with them when they expired
    directory, state = tmp_path / "data", tmp_path / "device.state"
    directory.mkdir()
    program = textwrap.dedent(
        """
        import json, os, sys, time
        f = os.open(sys.argv[1] + "/collection.wt", os.O_WRONLY | os.O_CREAT, 0o600)
        os.write(f, b"x" * (4 << 20))
        time.sleep(1.8)
        t = time.monotonic()
        os.fdatasync(f)
        expired = time.monotonic() - t
        os.write(f, b"x" * (4 << 20))
        t = time.monotonic()
        os.fdatasync(f)
        print(json.dumps({"expired_s": expired, "fresh_s": time.monotonic() - t}))
        """
    )
    env = {
        **os.environ,
        "LD_PRELOAD": str(SHIM),
        modeldisk.ENV_DIR: str(directory),
        modeldisk.ENV_MB_S: "8",
        modeldisk.ENV_STATE: str(state),
        "CKPTDIAG_SLOWDISK_EXPIRE_S": "0.5",
    }
    proc = subprocess.run(
        [sys.executable, "-c", program, str(directory)], env=env, capture_output=True, text=True, timeout=60, check=True
    )
    out = json.loads(proc.stdout)
    assert out["expired_s"] < 0.2  # written by the flusher at 0.5-1 s
    assert 0.45 <= out["fresh_s"] <= 0.9  # 4 MB at 8 MB/s
    (counters, _n) = modeldisk.read_counters(state)[modeldisk.DEVICE]
    assert counters.wr_sectors == 8 * 2**20 // 512 and counters.tot_ticks == 1000  # 8 MB at 8 MB/s in all
