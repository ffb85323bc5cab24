"""The lab's slow disks: the throttled loop device (root) that really writes at its limit and goes away,
and where either slow disk cannot be made."""

from __future__ import annotations

import os
import time
from contextlib import ExitStack
from pathlib import Path

import pytest

from ckptdiag.errors import CkptdiagError
from ckptdiag.lab import slowdisk
from ckptdiag.lab.config import LabConfig
from ckptdiag.workflows.lab import ServeRequest, lab_disk

needs_slow_disk = pytest.mark.skipif(
    slowdisk.unavailable() is not None, reason=f"no slow disk here: {slowdisk.unavailable()}"
)


def _gone(disk: slowdisk.SlowDisk) -> None:
    mounts = Path("/proc/self/mounts").read_text()
    assert str(disk.mountpoint) not in mounts
    name = Path(disk.device).name
    assert not Path(f"/sys/block/{name}/loop/backing_file").exists()  # the loop device is detached
    blkio = slowdisk.blkio_dir()
    assert blkio is not None
    rules = (blkio / "blkio.throttle.write_bps_device").read_text().split()
    assert disk.dev_id not in rules  # the throttle rule is removed


@needs_slow_disk
def test_a_slow_disk_writes_at_its_limit_and_leaves_nothing_behind(tmp_path: Path) -> None:
    with slowdisk.slow_disk(tmp_path, 20, 2**30) as disk:
        assert disk.mountpoint.is_dir()
        assert Path(f"/sys/block/{Path(disk.device).name}").exists()  # a block device ckptdiag can sample
        started = time.monotonic()
        with (disk.mountpoint / "burst").open("wb") as f:
            f.write(os.urandom(30 * 2**20))
            f.flush()
            os.fsync(f.fileno())
        elapsed = time.monotonic() - started
    # 30 MB at 20 MB/s: 1.5 s at the least (noise only makes it slower; the host disk alone
    # takes a small fraction of that)
    assert elapsed >= 1.2
    _gone(disk)
    assert list(tmp_path.iterdir()) == []


@needs_slow_disk
def test_a_failure_inside_still_removes_the_disk(tmp_path: Path) -> None:
    seen: list[slowdisk.SlowDisk] = []
    with pytest.raises(RuntimeError), slowdisk.slow_disk(tmp_path, 50, 2**30) as disk:
        seen.append(disk)
        (disk.mountpoint / "data").write_bytes(b"x" * 4096)
        raise RuntimeError("the lab died")
    _gone(seen[0])
    assert list(tmp_path.iterdir()) == []


def test_without_root_it_says_why(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(os, "geteuid", lambda: 1000)
    reason = slowdisk.unavailable()
    assert reason is not None and "root" in reason
    with (
        pytest.raises(CkptdiagError, match="cannot make a slow disk here: it needs root"),
        slowdisk.slow_disk(tmp_path, 40, 2**30),
    ):
        pass
    assert list(tmp_path.iterdir()) == []


def test_where_each_slow_disk_cannot_be_made_it_says_so(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from ckptdiag.lab import modeldisk
    from ckptdiag.workflows.lab import Restart

    warnings: list[str] = []
    request = ServeRequest("stall", 0, 10, tmp_path, {})
    asked = ServeRequest("stall", 0, 10, tmp_path, {"disk_mb_s": 40})
    # the loop device without root: an error that points to the model disk
    monkeypatch.setattr(slowdisk, "unavailable", lambda: "it needs root")
    loop = LabConfig(disk_mb_s=40, slow_disk="loop")
    with ExitStack() as stack, pytest.raises(CkptdiagError, match="cannot make a 40 MB/s loop device here"):
        lab_disk(stack, loop, request, 10, warnings.append)
    # the model disk (the default) is a restart of `lab serve` with its shim, never of the caller
    config = LabConfig(disk_mb_s=40)
    if modeldisk.shim_path() is not None:
        with ExitStack() as stack:
            restart = lab_disk(stack, config, request, 10, warnings.append)
        assert isinstance(restart, Restart) and restart.mb_s == 40 and restart.directory.parent == tmp_path
        assert restart.directory.name.startswith(f"{modeldisk.PREFIX}{os.getpid()}-") and not warnings
    # without its shim: the scenario's own limit falls back with a warning, an asked one fails
    monkeypatch.setattr(modeldisk, "shim_path", lambda: None)
    with ExitStack() as stack:
        assert lab_disk(stack, config, request, 10, warnings.append) is None
    assert len(warnings) == 1 and "limited to 40 MB/s" in warnings[0] and "shim was not built" in warnings[0]
    with ExitStack() as stack, pytest.raises(CkptdiagError, match="cannot make a 40 MB/s disk here"):
        lab_disk(stack, config, asked, 10, warnings.append)
    with ExitStack() as stack:  # no limit asked: the lab dir's own disk, nothing said
        assert lab_disk(stack, LabConfig(), request, 10, warnings.append) is None
    assert len(warnings) == 1


@needs_slow_disk
def test_a_dead_labs_disk_is_swept(tmp_path: Path) -> None:
    # a lab killed outright (SIGKILL) leaves its mount, loop device and throttle rule behind;
    # the next slow disk removes them. A finished child's pid stands in for the dead lab.
    import subprocess

    child = subprocess.Popen(["true"])
    child.wait()
    with slowdisk.slow_disk(tmp_path, 30, 2**30) as disk:
        renamed = disk.mountpoint.parent.with_name(f"{slowdisk.PREFIX}{child.pid}-dead")
        # re-mount it under a dead pid's name, as a killed lab would have left it
        subprocess.run(["umount", str(disk.mountpoint)], check=True)
        disk.mountpoint.parent.rename(renamed)
        subprocess.run(["mount", disk.device, str(renamed / "mnt")], check=True)
        leftover = slowdisk.SlowDisk(renamed / "mnt", disk.device, disk.dev_id)
        assert slowdisk.sweep() == [renamed]
    _gone(leftover)
    assert list(tmp_path.iterdir()) == []


def test_the_lab_childs_warnings_reach_the_user(capfd: pytest.CaptureFixture[str]) -> None:
    # demo runs the lab in a child process: its fallback warning must not stay in the pipe
    import sys

    from ckptdiag.lab.run import LabProcess

    script = (
        "import sys, time\n"
        "print('ckptdiag: warning: cannot make one here', file=sys.stderr, flush=True)\n"
        "print('ckptdiag: lab stall serving on mongodb://127.0.0.1:9', file=sys.stderr, flush=True)\n"
        "time.sleep(30)\n"
    )
    child = LabProcess([sys.executable, "-c", script])
    try:
        assert child.start(timeout_s=30) == "mongodb://127.0.0.1:9"
    finally:
        child.stop()
    err = capfd.readouterr().err
    assert "ckptdiag: warning: cannot make one here" in err
    assert "serving on" not in err  # only warnings are passed on
