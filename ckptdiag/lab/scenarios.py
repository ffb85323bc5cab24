"""Named lab scenarios: mongod configurations and workloads that do (or do not) stall."""

from __future__ import annotations

from dataclasses import dataclass

from ckptdiag.errors import UsageError
from ckptdiag.lab.engine import LabConfig


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
            "dirty data allowed to build up (dirty 40/60 %) in a 4 GB cache at 12k inserts/s of ~1 KB, 45 s "
            "checkpoints: each writes ~0.5-1 GB at once (p99 10x and more); updates pile up to the updates "
            "target (half the dirty one) and are evicted in bursts that pause writes up to a second",
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
            "slow-disk",
            "mongod defaults on a disk that writes 40 MB/s (WiredTiger io_capacity): long checkpoints",
            LabConfig(cache_mb=2048, checkpoint_s=30, write_rate=12000, io_capacity_mb=40),
            120,
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
