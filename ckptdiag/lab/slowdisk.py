"""A disk that cannot absorb a checkpoint's burst: an ext4 file system on a loop device whose
writes the kernel throttles (cgroup v1 blkio) to a set rate, like a cloud volume's throughput cap.

Why a real throttled device and not WiredTiger's own ``io_capacity``: on a saturated disk the
checkpoint's sync queues ahead of everything else the server writes, and the journal and the
file system's own commits wait behind it. That queue is what stalls a production server, and
it only exists below the engine. The throttle applies to every write that reaches the device
(the engine's threads and the kernel's flusher alike), so the engine sees exactly a slow disk.

It needs root (loop devices, mount, the blkio throttle) and the blkio controller mounted as
cgroup v1; :func:`unavailable` says what is missing. Everything is undone on exit: the throttle
rule, the mount, the loop device and the image file.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from ckptdiag.errors import CkptdiagError

_SBIN = "/usr/sbin:/sbin:/usr/bin:/bin"
_TOOLS = ("losetup", "mkfs.ext4", "mount", "umount")
PREFIX = "ckptdiag-slowdisk-"


@dataclass(frozen=True)
class SlowDisk:
    """A mounted, throttled file system: where the lab's data directory goes."""

    mountpoint: Path
    device: str  # /dev/loopN
    dev_id: str  # "major:minor", the key of the throttle rule


def _tool(name: str) -> str | None:
    return shutil.which(name, path=f"{os.environ.get('PATH', '')}:{_SBIN}")


def blkio_dir() -> Path | None:
    """Where the cgroup v1 blkio hierarchy is mounted, if it is."""
    try:
        mounts = Path("/proc/self/mounts").read_text().splitlines()
    except OSError:
        return None
    for line in mounts:
        fields = line.split()
        if len(fields) >= 4 and fields[2] == "cgroup" and "blkio" in fields[3].split(","):
            return Path(fields[1])
    return None


def unavailable() -> str | None:
    """Why a slow disk cannot be made here, or None when it can."""
    if os.geteuid() != 0:
        return "it needs root (a loop device, a mount and the kernel's blkio throttle)"
    missing = [t for t in _TOOLS if _tool(t) is None]
    if missing:
        return f"{', '.join(missing)} not found"
    if not Path("/dev/loop-control").exists():
        return "no loop devices (/dev/loop-control)"
    blkio = blkio_dir()
    if blkio is None or not (blkio / "blkio.throttle.write_bps_device").exists():
        return "no cgroup v1 blkio throttle (blkio.throttle.write_bps_device)"
    return None


def _run(*args: str) -> str:
    tool = _tool(args[0]) or args[0]
    done = subprocess.run([tool, *args[1:]], capture_output=True, text=True, check=False)
    if done.returncode != 0:
        detail = (done.stderr or done.stdout).strip().splitlines()
        raise CkptdiagError(
            f"could not make the lab's slow disk: {args[0]} failed: {detail[-1] if detail else done.returncode}",
            "run the lab without a disk limit, or as root on a host with loop devices",
        )
    return done.stdout.strip()


def _throttle(dev_id: str, bytes_per_s: int) -> None:
    blkio = blkio_dir()
    assert blkio is not None
    # The root group's rule covers every writer, the kernel's flusher threads included (their
    # writes are charged to the root group under cgroup v1). 0 removes the rule.
    (blkio / "blkio.throttle.write_bps_device").write_text(f"{dev_id} {bytes_per_s}\n")


def _remove(work: Path, device: str, dev_id: str, mounted: bool) -> None:
    if dev_id:
        with contextlib.suppress(OSError):
            _throttle(dev_id, 0)
    if mounted:
        try:
            _run("umount", str(work / "mnt"))
        except CkptdiagError:
            with contextlib.suppress(CkptdiagError):
                _run("umount", "-l", str(work / "mnt"))  # still busy: detach it now, free it when let go
    if device:
        with contextlib.suppress(CkptdiagError):
            _run("losetup", "-d", device)
    shutil.rmtree(work, ignore_errors=True)


def sweep() -> list[Path]:
    """Remove the slow disks of lab processes that died without cleaning up (SIGKILL, power
    loss of the container): their mount, loop device and throttle rule. Returns what went."""
    swept: list[Path] = []
    for line in Path("/proc/self/mounts").read_text().splitlines():
        device, mountpoint = line.split()[:2]
        work = Path(mountpoint).parent
        match = re.fullmatch(rf"{PREFIX}(\d+)-\w+", work.name)
        if Path(mountpoint).name != "mnt" or match is None or Path(f"/proc/{match.group(1)}").exists():
            continue
        dev = Path(f"/sys/block/{Path(device).name}/dev")
        _remove(work, device, dev.read_text().strip() if dev.exists() else "", True)
        swept.append(work)
    return swept


@contextlib.contextmanager
def slow_disk(base_dir: Path, write_mb_s: int, size_bytes: int) -> Iterator[SlowDisk]:
    """Make, mount and throttle a file system of ``size_bytes`` (a sparse image in ``base_dir``);
    remove it all on exit, whatever happens."""
    reason = unavailable()
    if reason is not None:
        raise CkptdiagError(f"cannot make a slow disk here: {reason}", "run the lab without a disk limit")
    sweep()
    work = Path(tempfile.mkdtemp(prefix=f"{PREFIX}{os.getpid()}-", dir=base_dir))
    image, mountpoint = work / "disk.img", work / "mnt"
    device = dev_id = ""
    mounted = False
    try:
        with image.open("wb") as f:
            f.truncate(size_bytes)  # sparse: the host holds only what the lab writes
        device = _run("losetup", "--find", "--show", str(image))
        _run("mkfs.ext4", "-q", "-F", "-E", "lazy_journal_init=1", device)
        mountpoint.mkdir()
        # noinit_itable: no background inode-table zeroing competing with the lab for the limit
        _run("mount", "-o", "noinit_itable", device, str(mountpoint))
        mounted = True
        dev_id = Path(f"/sys/block/{Path(device).name}/dev").read_text().strip()
        _throttle(dev_id, write_mb_s * 2**20)
        yield SlowDisk(mountpoint, device, dev_id)
    finally:
        _remove(work, device, dev_id, mounted)
