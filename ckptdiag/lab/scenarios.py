"""Named lab scenarios: mongod configurations and workloads that do (or do not) stall."""

from __future__ import annotations

from dataclasses import dataclass

from ckptdiag.errors import UsageError
from ckptdiag.lab.config import LabConfig


@dataclass(frozen=True)
class Scenario:
    """A lab configuration, how long it runs by default, and what it shows."""

    name: str
    summary: str
    config: LabConfig
    duration_s: float


SCENARIOS: dict[str, Scenario] = {
    s.name: s
    for s in (
        Scenario(
            "healthy",
            "mongod defaults (dirty 5/20 %, 4 eviction threads, 60 s checkpoints), 3 GB cache, 12k inserts/s: "
            "checkpoint I/O bursts, no stall",
            LabConfig(cache_mb=3072, checkpoint_s=60, write_rate=12000),
            150,
        ),
        Scenario(
            "stall",
            "mongod defaults (dirty 5/20 %, 60 s checkpoints), 2 GB cache, writes that wait for the journal "
            "(j:true, as w:majority on a replica set) from 3 clients at 600/s, on a disk that writes 16 MB/s: "
            "each checkpoint's sync queues ahead of the journal's and writes stop until it drains",
            LabConfig(
                cache_mb=2048,
                checkpoint_s=60,
                write_rate=600,
                threads=3,
                value_bytes=1024,
                journaled=True,
                disk_mb_s=16,  # the workload's own ~1 MB/s of journal and data fits; a checkpoint's burst does not
            ),
            150,
        ),
        Scenario(
            "dirty-buildup",
            "dirty data allowed to build up (dirty 40/60 %) in a 4 GB cache at 12k inserts/s of ~1 KB, 45 s "
            "checkpoints, unjournaled writes on the lab dir's own disk: each checkpoint writes ~0.5-1 GB at once "
            "(p99 10x and more); updates pile up to the updates target (half the dirty one) and are evicted in "
            "bursts that pause writes up to a second, between checkpoints as often as in them",
            LabConfig(
                cache_mb=4096,
                checkpoint_s=45,
                eviction_dirty_target=40,
                eviction_dirty_trigger=60,
                write_rate=12000,
                threads=1,  # one client thread: a quiet baseline (p99 ~0.5 ms, not the GIL's ~10 ms)
                value_bytes=1024,
            ),
            150,
        ),
        Scenario(
            "io-throttled",
            "WiredTiger's own write throttle in the config (io_capacity=(total=20MB)), mongod's other defaults "
            "(dirty 5/20 %, 60 s checkpoints), 2 GB cache, 12k inserts/s of ~340 B from one client on the lab dir's "
            "own disk: checkpoints wait for the throttle (1-19 s at the same settings, as WiredTiger lends one "
            "subsystem's unused share to another) and writes with them, in some runs to a stall",
            LabConfig(cache_mb=2048, checkpoint_s=60, write_rate=12000, threads=1, io_capacity_mb=20),
            150,
        ),
        Scenario(
            "pinned-history",
            "a reader holds one snapshot open from 20 s on (a long-running transaction) while 3 clients update "
            "20,000 established documents of ~1 KB, 1,000 a second, each write waiting for the journal (j:true): "
            "every old version is kept for the reader, so eviction moves them to the history store and each "
            "checkpoint's sync flushes them; mongod defaults, 512 MB cache, 60 s checkpoints, a disk that writes "
            "48 MB/s",
            LabConfig(
                cache_mb=512,
                checkpoint_s=60,
                write_rate=1000,
                threads=3,
                value_bytes=1024,
                journaled=True,
                preload_docs=20_000,
                updates=True,
                snapshot_after_s=20,
                disk_mb_s=48,
            ),
            150,
        ),
        Scenario(
            "many-collections",
            "15,000 collections (a data handle each, as on a multi-tenant server) and 4 clients writing 2,000 "
            "documents a second, one in a hundred into a collection it creates (an insert into a collection that "
            "does not exist): every checkpoint gathers all the handles under the schema lock, and each create "
            "waits for it, so the clients stop one after another; mongod defaults, 1 GB cache, 60 s checkpoints, "
            "the lab dir's own disk",
            LabConfig(
                cache_mb=1024,
                checkpoint_s=60,
                write_rate=2000,
                threads=4,
                collections=15_000,
                new_collection_share=0.01,
            ),
            150,
        ),
        Scenario(
            "wt-checkpoint",
            "MongoDB 3.4 style: WiredTiger's own checkpoint=(wait=30) instead of mongod's checkpoint thread",
            LabConfig(cache_mb=2048, checkpoint_s=30, checkpoint_mode="wiredtiger", write_rate=12000),
            100,
        ),
    )
}


def get_scenario(name: str) -> Scenario:
    """The scenario called ``name``, or a usage error listing them."""
    try:
        return SCENARIOS[name]
    except KeyError:
        raise UsageError(f"no lab scenario {name!r}", f"choose from: {', '.join(SCENARIOS)}") from None
