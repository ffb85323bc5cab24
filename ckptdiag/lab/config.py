"""The lab's configuration (mongod's knobs and the workload), the binding it needs, and the disk
space a run takes."""

from __future__ import annotations

import shutil
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from ckptdiag.errors import CkptdiagError

LAB_VERSION = "8.0.0"  # WiredTiger 11.3.x is the MongoDB 8.0 line: statistic names are 8.0's
INSTALL_HINT = "install the lab: make demo (or: pip install 'swig==4.1.1' && pip install 'ckptdiag[lab]')"


class LabUnavailable(CkptdiagError):
    """The WiredTiger binding is not installed."""


def import_wiredtiger() -> Any:
    """The ``wiredtiger`` module, or a :class:`LabUnavailable` that says how to install it."""
    try:
        import wiredtiger
    except ImportError as exc:
        raise LabUnavailable(f"the WiredTiger Python binding is not installed ({exc})", INSTALL_HINT) from None
    return wiredtiger


# How long a paced client's request waits before it gives up. Requests that come due while the
# server is stalled queue up and are served (and timed from when they were due) once it moves
# again, as an application's requests would; with a 1 s limit a stall of over a second dropped
# them instead, and hid most of its latency from the ground truth.
CLIENT_TIMEOUT_S = 10.0


@dataclass(frozen=True)
class LabConfig:
    """One lab run: the server's settings (mongod's names) and the workload."""

    cache_mb: int = 3072
    checkpoint_s: float = 60.0  # syncdelay / storage.syncPeriodSecs
    checkpoint_mode: str = "mongod"  # "mongod": a checkpoint thread (3.6+); "wiredtiger": checkpoint=(wait=N) (3.4)
    eviction_target: int = 80
    eviction_trigger: int = 95
    eviction_dirty_target: int = 5
    eviction_dirty_trigger: int = 20
    eviction_updates_target: int = 0  # 0: WiredTiger derives half the dirty values
    eviction_updates_trigger: int = 0
    eviction_threads_min: int = 4
    eviction_threads_max: int = 4
    journal_commit_ms: int = 100
    write_rate: int = 12000  # inserts per second, all threads together
    threads: int = 3
    value_bytes: int = 340
    journaled: bool = False  # writes wait for the journal (j:true; w:majority on a replica set since 5.0)
    disk_mb_s: int = 0  # >0: the data disk writes at most this many MB/s, made as ``slow_disk`` says
    # "model": a modelled device in the lab's own process, for anyone (lab/modeldisk.py);
    # "loop": a loop device the kernel throttles, root only (lab/slowdisk.py)
    slow_disk: str = "model"
    preload_docs: int = 0  # documents loaded before the run: an established collection to write into
    io_capacity_mb: int = 0  # >0: io_capacity=(total=N MB), WiredTiger's own write throttle (4.2+)
    updates: bool = False  # writes update the preloaded documents (each leaves an old version) instead of inserting
    # >0: from this second of the run a reader holds one snapshot open to the end (a long-running
    # transaction or cursor): every version written since is kept for it, in the cache and the history store
    snapshot_after_s: float = 0.0
    collections: int = 0  # more collections created before the run: a data handle each, which every checkpoint walks
    # the share of writes that go to a collection they create first (an insert into a collection that
    # does not exist): a create waits for the schema lock, which a checkpoint holds while it gathers handles
    new_collection_share: float = 0.0

    def engine_config(self) -> str:
        """The eviction part of the WiredTiger configuration (what configString would carry)."""
        parts = [
            f"eviction_target={self.eviction_target}",
            f"eviction_trigger={self.eviction_trigger}",
            f"eviction_dirty_target={self.eviction_dirty_target}",
            f"eviction_dirty_trigger={self.eviction_dirty_trigger}",
            f"eviction=(threads_min={self.eviction_threads_min},threads_max={self.eviction_threads_max})",
        ]
        if self.eviction_updates_target:
            parts.append(f"eviction_updates_target={self.eviction_updates_target}")
        if self.eviction_updates_trigger:
            parts.append(f"eviction_updates_trigger={self.eviction_updates_trigger}")
        if self.io_capacity_mb:
            parts.append(f"io_capacity=(total={self.io_capacity_mb}MB)")
        return ",".join(parts)

    def open_config(self) -> str:
        """The wiredtiger_open string, as mongod builds it (no compressors: the binding has none)."""
        cfg = [
            "create",
            f"cache_size={self.cache_mb}M",
            "session_max=256",
            "statistics=(fast)",
            "log=(enabled=true,file_max=1GB,remove=true)",
            "file_manager=(close_idle_time=600)",
            self.engine_config(),
        ]
        if self.checkpoint_mode == "wiredtiger":
            cfg.append(f"checkpoint=(wait={int(self.checkpoint_s)})")
        return ",".join(cfg)

    def with_overrides(self, **changes: Any) -> LabConfig:
        """A copy with some settings changed (None values are ignored)."""
        return replace(self, **{k: v for k, v in changes.items() if v is not None})


def free_bytes(path: Path) -> int:
    """Free space where the lab will write."""
    return shutil.disk_usage(path).free


def estimated_bytes(config: LabConfig, duration_s: float) -> int:
    """Disk space a run needs: data, index, journal and checkpoint copies, with margin."""
    per_op = config.value_bytes + 12 + 8 + 120  # record, index key and value, page and log overhead
    return int(config.write_rate * duration_s * per_op * 3) + 256 * 2**20


FILES_PER_RUN = 1024  # open files beyond its collections a run may need: the journal, libraries, sockets


NEW_COLLECTIONS_MAX = 100_000  # collections a run's writes may create where open files are unlimited


def open_files_for(config: LabConfig) -> int:
    """Raise this process's open-file limit as far as the host allows for the run's collections (a
    table keeps its file open, as mongod's do: MongoDB's production notes ask for ulimit -n 64000),
    or say why it cannot hold those made before the run -> how many its writes may create."""
    if not config.collections and not config.new_collection_share:
        return 0
    import resource

    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    need = config.collections + FILES_PER_RUN
    if hard == resource.RLIM_INFINITY:
        return NEW_COLLECTIONS_MAX
    if hard < need:
        raise CkptdiagError(
            f"the lab's {config.collections:,} collections need {need:,} open files; this host allows {hard:,}",
            "raise the hard limit (ulimit -Hn, /etc/security/limits.conf) or use a scenario with fewer collections",
        )
    if soft != resource.RLIM_INFINITY and soft < hard:
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    return hard - need


def check_space(path: Path, need: int) -> None:
    """A clear error before starting when ``path`` has less than ``need`` bytes free."""
    free = free_bytes(path)
    if free < need:
        raise CkptdiagError(
            f"not enough disk space in {path}: the lab needs about {need / 2**30:.1f} GiB, {free / 2**30:.1f} GiB free",
            "free some space or point --lab-dir at a bigger file system",
        )
