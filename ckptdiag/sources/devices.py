"""Which disks hold a dbPath: dbPath -> mount -> block device -> physical disks.

A partition maps to its disk; a device-mapper (LVM, dm-crypt) or md (RAID) device maps to its
member disks through ``/sys/class/block/<dev>/slaves``, recursively. Both roots are parameters
so tests can hand in a recorded mountinfo and a fake sysfs tree.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from ckptdiag.errors import UsageError


@dataclass(frozen=True, slots=True)
class Mount:
    """One line of /proc/self/mountinfo."""

    mount_point: str
    major: int
    minor: int
    fstype: str
    source: str


@dataclass(frozen=True, slots=True)
class DeviceMap:
    """The answer for one path: its mount, the device chain and the disks to watch."""

    path: str
    mount: Mount | None
    chain: tuple[str, ...] = ()  # e.g. ("dm-0", "vda2", "vda")
    disks: tuple[str, ...] = ()
    notes: tuple[str, ...] = field(default=())


def _unescape(text: str) -> str:
    # mountinfo escapes space, tab, newline and backslash as \ooo
    return re.sub(r"\\([0-7]{3})", lambda m: chr(int(m.group(1), 8)), text)


def parse_mountinfo(text: str) -> list[Mount]:
    """Parse /proc/self/mountinfo lines (optional fields end at the lone ``-``)."""
    mounts: list[Mount] = []
    for line in text.splitlines():
        parts = line.split()
        if "-" not in parts or len(parts) < 7:
            continue
        sep = parts.index("-")
        try:
            major, minor = (int(x) for x in parts[2].split(":"))
        except ValueError:
            continue
        fstype = parts[sep + 1] if len(parts) > sep + 1 else ""
        source = parts[sep + 2] if len(parts) > sep + 2 else ""
        mounts.append(Mount(_unescape(parts[4]), major, minor, fstype, _unescape(source)))
    return mounts


def mount_of(path: str, mounts: list[Mount]) -> Mount | None:
    """The mount whose mount point is the longest prefix of ``path`` (the last one wins on ties)."""
    best: Mount | None = None
    for m in mounts:
        mp = m.mount_point.rstrip("/") or "/"
        inside = path == mp or path.startswith(mp.rstrip("/") + "/") or mp == "/"
        if inside and (best is None or len(mp) >= len(best.mount_point.rstrip("/") or "/")):
            best = m
    return best


class SysBlock:
    """Read-only view of /sys for block devices."""

    def __init__(self, root: Path = Path("/sys")) -> None:
        self.root = root

    def name_of(self, major: int, minor: int) -> str | None:
        """Kernel name of the block device ``major:minor`` (``None`` when it is not one)."""
        link = self.root / "dev" / "block" / f"{major}:{minor}"
        try:
            return Path(os.path.realpath(link)).name if link.exists() else None
        except OSError:
            return None

    def _dev(self, name: str) -> Path:
        return self.root / "class" / "block" / name

    def parent_disk(self, name: str) -> str | None:
        """The whole disk of a partition, ``None`` when ``name`` is not a partition."""
        if not (self._dev(name) / "partition").exists():
            return None
        return Path(os.path.realpath(self._dev(name))).parent.name

    def slaves(self, name: str) -> list[str]:
        """The devices a dm or md device is built on."""
        try:
            return sorted(p.name for p in (self._dev(name) / "slaves").iterdir())
        except OSError:
            return []


def _physical(name: str, sysfs: SysBlock, chain: list[str], depth: int = 0) -> list[str]:
    chain.append(name)
    if depth > 8:  # a loop in a broken sysfs must not hang us
        return [name]
    members = sysfs.slaves(name)
    if members:
        disks: list[str] = []
        for member in members:
            disks.extend(d for d in _physical(member, sysfs, chain, depth + 1) if d not in disks)
        return disks
    parent = sysfs.parent_disk(name)
    if parent:
        chain.append(parent)
        return [parent]
    return [name]


def map_path(path: str, mountinfo: str, sysfs: SysBlock) -> DeviceMap:
    """Map a data directory to the physical disks under it."""
    mount = mount_of(path, parse_mountinfo(mountinfo))
    if mount is None:
        return DeviceMap(path, None, notes=(f"no mount found for {path}",))
    name = sysfs.name_of(mount.major, mount.minor)
    if name is None and mount.source.startswith("/dev/"):
        # btrfs and some overlays report an anonymous 0:N device; the source path still names it
        try:
            st = os.stat(mount.source)
            name = sysfs.name_of(os.major(st.st_rdev), os.minor(st.st_rdev))
        except OSError:
            name = None
    if name is None:
        return DeviceMap(
            path, mount, notes=(f"{mount.mount_point} ({mount.fstype}, {mount.source}) is not on a block device",)
        )
    chain: list[str] = []
    disks = _physical(name, sysfs, chain)
    notes: list[str] = []
    if name.startswith(("dm-", "md")):
        notes.append(f"{name} is a device-mapper/md device: watching its member disks {', '.join(disks)}")
    return DeviceMap(path, mount, tuple(chain), tuple(disks), tuple(notes))


def map_local_path(path: str) -> DeviceMap:
    """:func:`map_path` on this host's /proc and /sys."""
    try:
        mountinfo = Path("/proc/self/mountinfo").read_text()
    except OSError:
        mountinfo = ""
    return map_path(os.path.realpath(path), mountinfo, SysBlock())


@dataclass(frozen=True, slots=True)
class DiskPlan:
    """Which /proc/diskstats devices a recording watches, and what to tell the user about it."""

    devices: tuple[str, ...]
    local: bool  # the disks are the server's own (same host)
    chain: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()
    filesystem: str | None = None  # dbPath's file system type (ext4, xfs, ...) when local
    source: str = "/proc/diskstats"  # where the counters come from

    def to_json(self) -> dict[str, object]:
        """The header form."""
        return {
            "devices": list(self.devices),
            "local_to_server": self.local,
            "chain": list(self.chain),
            "notes": list(self.notes),
            "filesystem": self.filesystem,
            "source": self.source,
        }


def plan_disks(
    dbpath: str,
    server_is_local: bool,
    override: tuple[str, ...],
    available: set[str],
    mapper: Callable[[str], DeviceMap] = map_local_path,
) -> DiskPlan:
    """Decide which disks to watch: ``--device`` wins; else the disks under dbPath when local."""
    if override:
        unknown = [d for d in override if d not in available]
        if unknown:
            raise UsageError(
                f"no device {', '.join(unknown)} in /proc/diskstats",
                f"choose from: {', '.join(sorted(available)) or 'none'}",
            )
        notes = (
            ()
            if server_is_local
            else ("the server is on another host: these disk figures are this host's, not the server's",)
        )
        return DiskPlan(override, server_is_local, notes=notes)
    if not server_is_local:
        return DiskPlan(
            (),
            False,
            notes=(
                "the server is on another host: its disks cannot be read here, so none are recorded "
                "(read the server's FTDC diagnostic.data, or run ckptdiag on the server host)",
            ),
        )
    mapping = mapper(dbpath)
    devices = tuple(d for d in mapping.disks if d in available)
    found_notes = list(mapping.notes)
    if not devices:
        found_notes.append(f"no disk found for dbPath {dbpath}; pass --device NAME to choose one")
    fstype = mapping.mount.fstype if mapping.mount else None
    return DiskPlan(devices, True, mapping.chain, tuple(found_notes), fstype)
