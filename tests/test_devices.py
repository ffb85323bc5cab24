"""dbPath -> mount -> block device -> physical disks, on a fake /sys and a recorded mountinfo."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from ckptdiag.errors import UsageError
from ckptdiag.sources.devices import DeviceMap, SysBlock, map_path, mount_of, parse_mountinfo, plan_disks

MOUNTINFO = r"""22 1 253:1 / / rw,relatime shared:1 - ext4 /dev/vda1 rw
30 22 254:0 / /data rw,noatime shared:5 - xfs /dev/mapper/vg-data rw,attr2
31 22 9:0 / /raid rw,noatime - xfs /dev/md0 rw
32 22 0:45 / /mnt/my\040disk rw - tmpfs tmpfs rw
33 30 254:0 /mongo /data/mongo/db rw,noatime - xfs /dev/mapper/vg-data rw
"""


def _fake_sys(root: Path) -> SysBlock:
    devices = root / "devices" / "virtual" / "block"
    tree = {
        "vda": [],
        "vda/vda1": ["partition"],
        "vda/vda2": ["partition"],
        "vdb": [],
        "sda": [],
        "sda/sda1": ["partition"],
        "sdb": [],
        "sdb/sdb1": ["partition"],
        "dm-0": [],
        "md0": [],
    }
    for rel, files in tree.items():
        (devices / rel).mkdir(parents=True, exist_ok=True)
        for f in files:
            (devices / rel / f).write_text("1\n")
    (root / "class" / "block").mkdir(parents=True)
    (root / "dev" / "block").mkdir(parents=True)
    numbers = {"vda1": "253:1", "vda2": "253:2", "dm-0": "254:0", "md0": "9:0", "vda": "253:0"}
    for rel in tree:
        name = rel.split("/")[-1]
        os.symlink(devices / rel, root / "class" / "block" / name)
        if name in numbers:
            os.symlink(devices / rel, root / "dev" / "block" / numbers[name])
    for holder, members in {"dm-0": ["vda2", "vdb"], "md0": ["sda1", "sdb1"]}.items():
        (devices / holder / "slaves").mkdir()
        for m in members:
            os.symlink(root / "class" / "block" / m, devices / holder / "slaves" / m)
    return SysBlock(root)


def test_parse_mountinfo_unescapes_and_reads_source() -> None:
    mounts = parse_mountinfo(MOUNTINFO)
    assert mounts[3].mount_point == "/mnt/my disk"
    data = mounts[1]
    assert (data.major, data.minor, data.fstype, data.source) == (254, 0, "xfs", "/dev/mapper/vg-data")


def test_longest_mount_prefix_wins() -> None:
    mounts = parse_mountinfo(MOUNTINFO)
    assert mount_of("/data/mongo/db/x", mounts).mount_point == "/data/mongo/db"  # type: ignore[union-attr]
    assert mount_of("/data/other", mounts).mount_point == "/data"  # type: ignore[union-attr]
    assert mount_of("/database", mounts).mount_point == "/"  # type: ignore[union-attr]


def test_partition_maps_to_its_disk(tmp_path: Path) -> None:
    m = map_path("/var/lib/mongodb", MOUNTINFO, _fake_sys(tmp_path))
    assert m.disks == ("vda",) and m.chain == ("vda1", "vda")


def test_lvm_maps_to_member_disks_through_partitions(tmp_path: Path) -> None:
    m = map_path("/data/db", MOUNTINFO, _fake_sys(tmp_path))
    assert m.disks == ("vda", "vdb")
    assert m.chain[0] == "dm-0"
    assert any("device-mapper" in n for n in m.notes)


def test_md_raid_maps_to_member_disks(tmp_path: Path) -> None:
    assert map_path("/raid/mongo", MOUNTINFO, _fake_sys(tmp_path)).disks == ("sda", "sdb")


def test_tmpfs_has_no_disk(tmp_path: Path) -> None:
    m = map_path("/mnt/my disk/db", MOUNTINFO, _fake_sys(tmp_path))
    assert m.disks == () and "not on a block device" in m.notes[0]


def _mapper(disks: tuple[str, ...]):  # type: ignore[no-untyped-def]
    return lambda path: DeviceMap(path, None, disks=disks)


def test_plan_uses_dbpath_disks_for_a_local_server() -> None:
    plan = plan_disks("/data/db", True, (), {"vda", "vdb"}, mapper=_mapper(("vda",)))
    assert plan.devices == ("vda",) and plan.local


def test_plan_for_a_remote_server_records_no_disk_and_says_why() -> None:
    plan = plan_disks("/data/db", False, (), {"vda"}, mapper=_mapper(("vda",)))
    assert plan.devices == () and "another host" in plan.notes[0]


def test_device_override_on_a_remote_server_is_labelled_as_local_figures() -> None:
    plan = plan_disks("/data/db", False, ("vda",), {"vda"}, mapper=_mapper(()))
    assert plan.devices == ("vda",) and not plan.local
    assert "not the server's" in plan.notes[0]


def test_unknown_override_device_is_a_usage_error() -> None:
    with pytest.raises(UsageError, match="no device nvme9n1"):
        plan_disks("/data/db", True, ("nvme9n1",), {"vda"}, mapper=_mapper(()))


def test_this_hosts_root_maps_to_a_real_disk() -> None:
    from ckptdiag.sources.devices import map_local_path
    from ckptdiag.sources.diskstats import read_diskstats

    if not Path("/proc/self/mountinfo").exists():
        pytest.skip("no /proc here")
    m = map_local_path("/")
    available = read_diskstats()
    if m.disks:
        assert all(d in available for d in m.disks)
