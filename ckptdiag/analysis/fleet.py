"""A fleet's hosts side by side: each host's verdict (or why it has none), worst first."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from ckptdiag.analysis.cluster import SEVERITY_ORDER

# the index lists the hosts that stalled first, then those that could not be diagnosed (unknown
# is worse than a clean verdict), then the clean ones
_RANK = {"critical": 0, "warn": 1, None: 2, "ok": 3}


@dataclass(frozen=True, slots=True)
class HostVerdict:
    """One line of a fleet's index: a host (or a replica set) and what its diagnosis found."""

    line: int  # its line in the hosts file
    name: str  # host:port, or the set's hosts
    target: str  # its URI as it may be printed (no password)
    severity: str | None  # None: not diagnosed (unreachable, refused, too few samples)
    summary: str  # the verdict's one line, or the error
    kind: str = "server"  # server, replica set, sharded cluster
    members: int = 1
    report: str | None = None  # the file its full report was written to

    @property
    def diagnosed(self) -> bool:
        """Whether the host has a verdict."""
        return self.severity is not None


def worst_first(hosts: Iterable[HostVerdict]) -> tuple[HostVerdict, ...]:
    """Hosts in the index's order: critical, warn, not diagnosed, ok; then as the file lists them."""
    return tuple(sorted(hosts, key=lambda h: (_RANK.get(h.severity, 2), h.line)))


def fleet_severity(hosts: Iterable[HostVerdict]) -> str:
    """The fleet's verdict: its worst diagnosed host's (ok when none was)."""
    found = [h.severity for h in hosts if h.severity is not None]
    return max(found, key=lambda s: SEVERITY_ORDER.get(s, 0), default="ok")
