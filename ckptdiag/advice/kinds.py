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
    """One bottleneck the evidence shows, with the figures that show it, and how much of the
    stall its own counters explain: ``share`` (0-1) of what ``share_of`` says (the typical
    checkpoint's time that hurt, the checkpoints that hurt, the disk's writes); None where no
    counter measures it (a count of handles, a cache's size, the host's CPUs)."""

    kind: str
    title: str
    evidence: tuple[str, ...]
    share: float | None = None
    share_of: str = ""

    def explains(self) -> str | None:
        """ "explains ~72 % (of …)" for the reader, None where unmeasured."""
        if self.share is None:
            return None
        return f"explains ~{100 * self.share:.0f} % ({self.share_of})"


def ranked(causes: list[Cause | None]) -> tuple[Cause, ...]:
    """The causes found, by how much of the stall each explains; those no counter measures after
    them, each list in the order given (most specific first, which also breaks ties)."""
    found = [c for c in causes if c is not None]
    return tuple(sorted(found, key=lambda c: (c.share is None, -round(c.share or 0.0, 2))))
