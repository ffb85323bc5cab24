"""The causes ckptdiag names (each kind as the JSON's ``advice.causes[].kind`` says it) and the
record of one: the vocabulary the cause modules, the rules and the checks share."""

from __future__ import annotations

from dataclasses import dataclass

IO_THROTTLED = "io-throttled"
DISK_SATURATED = "disk-saturated"
JOURNAL_BEHIND = "journal-behind-checkpoint"
DIRTY_RAISED = "dirty-target-raised"
EVICTION_BEHIND = "eviction-behind"
CACHE_OVERSIZED = "cache-oversized"
CPU_BUSY = "cpu-busy"
HANDLES = "checkpoint-handles"  # gathering every table's and index's handle (WT-5479)
SCRUB = "checkpoint-scrub"  # waiting for dirty data to fall before it begins
PREPARE = "checkpoint-prepare"  # its prepare (the schema lock), beyond gathering the handles
HISTORY_PINNED = "history-pinned"  # old versions kept for a reader, written by checkpoints (WT-6681)
STUCK = "checkpoint-stuck"  # one checkpoint ran several intervals
OTHER_WRITER = "disk-shared"  # another process writes to the data disk


@dataclass(frozen=True)
class Cause:
    """One bottleneck the evidence shows, with the figures that show it."""

    kind: str
    title: str
    evidence: tuple[str, ...]
