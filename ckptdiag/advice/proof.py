"""Which setting rules the lab has proven, and why the others are only things to check.

A rule is advised as a setting only where `ckptdiag demo --scenario S --verify` applied it on a
lab scenario that shows its cause, and 3 runs of 3 (`benchmarks/bench_verify.py`) showed the
cause gone or reduced, write p99 inside checkpoints or the throughput dip at least 2x better,
mean throughput no more than 10 % below before, and no worse seconds stalled or writes lost per
hour or p99 between checkpoints beyond the noise (docs/lab.md#proof). The others keep their evidence
and commands (and their lab overrides, for `bench_verify.py --only`), but as a check with the
reason they are not proven, outside the combined block and `demo --verify`: a DBA applying what
we print at 3 a.m. applies only what was shown to work.
"""

from __future__ import annotations

from dataclasses import replace

from ckptdiag.advice.recommendation import Recommendation

# rule id -> the lab scenario that proves it (docs/lab.md#proof)
# none: the yardstick asks that nothing the server lives with gets worse, and no rule has passed
# every run of it (issue #30; docs/lab.md#proof)
PROVEN: dict[str, str] = {}

# rule id -> why the lab has not proven it (yet)
NOT_PROVEN: dict[str, str] = {
    "checkpoint-interval": "on the lab's stall scenario (writes that wait for the journal behind the checkpoint's "
    "sync, on a 16 MB/s disk) 60 s to 10 s cut write p99 inside checkpoints 2.9x, but every 10 s checkpoint still "
    "stops writes for ~0.7 s: the seconds stalled per hour did not fall (73 to 73 on average of 3 runs one day, "
    "77 to 150 of 3 the next) and in 4 runs of 9 rose beyond what two runs of the same settings differ by",
    "io-capacity": "on the lab's io-throttled scenario (io_capacity 20 MB, 12k writes/s) the same settings gave "
    "checkpoints of 1 to 19 s and a run of 240 s with no stall to fix (WiredTiger lends one subsystem's unused "
    "share of the throttle to another); at 10 MB it held the whole workload, not the checkpoints",
    "eviction-dirty": "on the lab's dirty-buildup scenario (dirty 40/60 % back to 5/20 %, a disk that keeps up) "
    "3 runs of 3 passed at 150 s, but a 300 s run failed: checkpoints 3.7x shorter (2.7 to 0.73 s) while write "
    "p99 inside and between them got worse (57 to 82 ms, 1.0 to 4.1 ms) and a stall remained: eviction writing "
    "all the time costs latency everywhere",
    "cache-size": "the lab runs on a host with memory to spare: it cannot show a page cache squeezed by the cache",
    "eviction-target": "no lab scenario holds the cache at its eviction trigger with clean pages",
    "eviction-threads": "more eviction threads help only where idle cores can run them, and no lab run has "
    "shown by how much: watch this host's CPU in the stalls (top, pidstat) before and after",
    "eviction-updates": "no lab scenario holds the updates at their trigger with application threads evicting",
    "eviction-updates-target": "the lab's update-eviction pauses come between checkpoints as often as in them, "
    "so a checkpoint verify cannot show this change's effect",
}


def proven(rec: Recommendation) -> Recommendation:
    """``rec`` as given to the DBA: a setting the lab proved, or a check that says why not."""
    if rec.kind != "setting" or rec.id in PROVEN:
        return rec
    return as_check(rec, NOT_PROVEN.get(rec.id, "no lab scenario has proven it"))


def as_check(rec: Recommendation, why: str) -> Recommendation:
    """``rec`` as a check the lab has not proven, saying ``why``."""
    return replace(
        rec,
        kind="note",
        confidence="low",
        confidence_why=f"not proven in the lab: {why}; if you try it, record before and after and run "
        "'ckptdiag compare'",
    )
