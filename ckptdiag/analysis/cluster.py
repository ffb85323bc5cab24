"""Several members of one replica set (or several servers) in one picture: which stall, how often,
whether a secondary's stalls come with replication lag and with the primary's write latency, and
the cluster's verdict (the worst member's, named)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ckptdiag.analysis.results import Diagnosis

SEVERITY_ORDER = {"ok": 0, "warn": 1, "critical": 2}
PRIMARY_LATENCY_RATIO = 2.0  # the primary's write latency this many times its baseline: it waited


@dataclass(frozen=True, slots=True)
class MemberSummary:
    """One member's line in the cluster view."""

    name: str
    role: str | None
    severity: str
    checkpoints: int
    stalls: int
    summary: str
    repl_lag_growth_s: float | None  # the most its replication lag grew through a checkpoint (a secondary)
    primary_latency_ratio: (
        float | None
    )  # the primary's worst write latency during this secondary's stalls / its baseline


@dataclass(frozen=True, slots=True)
class ClusterDiagnosis:
    """The members side by side, and what follows from them together."""

    members: tuple[MemberSummary, ...]
    severity: str
    worst: str  # the member whose verdict is the cluster's
    summary: str
    findings: tuple[str, ...]


def diagnose_cluster(members: Sequence[tuple[str, Diagnosis]]) -> ClusterDiagnosis:
    """The cluster view of per-member diagnoses (given in the order the reports list them)."""
    primaries = [dx for _, dx in members if dx.role == "primary"]
    primary = primaries[0] if len(primaries) == 1 else None
    rows = tuple(_summary(name, dx, primary) for name, dx in members)
    worst = max(rows, key=lambda m: (SEVERITY_ORDER.get(m.severity, 0), m.stalls))
    stalling = [m for m in rows if m.stalls]
    findings = [_member_finding(m) for m in stalling]
    if primary is not None and not primary.stalls and any(m.role == "secondary" for m in stalling):
        findings.append("the primary did not stall: the stalls are the secondaries' own checkpoints")
    summary = f"{len(rows)} members; {len(stalling)} stalled in their checkpoints" + (
        f"; worst: {worst.name} ({worst.role or 'role unknown'}): {worst.summary}" if stalling else ""
    )
    return ClusterDiagnosis(rows, worst.severity, worst.name, summary, tuple(findings))


def _summary(name: str, dx: Diagnosis, primary: Diagnosis | None) -> MemberSummary:
    growth = [e.impact.repl_lag_growth_s for e in dx.episodes if e.impact.repl_lag_growth_s is not None]
    ratio = _primary_latency_during(dx, primary) if dx.role == "secondary" and primary is not None else None
    return MemberSummary(
        name,
        dx.role,
        dx.severity,
        len(dx.episodes),
        dx.stalls,
        dx.summary,
        max(growth) if growth else None,
        ratio,
    )


def _primary_latency_during(secondary: Diagnosis, primary: Diagnosis) -> float | None:
    """The primary's highest write latency in the timeline buckets the secondary's stalls touch,
    over the primary's baseline write latency (majority writes wait for a stalled secondary)."""
    tl, base = primary.timeline, primary.baseline.write_lat_ms
    if tl is None or tl.empty or not base:
        return None
    t = tl["t"].to_numpy(dtype="float64")
    step = float(np.median(np.diff(t))) if t.size > 1 else 1.0
    lat = tl["write_lat_ms"].to_numpy(dtype="float64")
    peaks = []
    for e in secondary.episodes:
        if not e.stall:
            continue
        end = e.end if e.end is not None else e.start
        hit = (t + step >= e.start) & (t <= end + 1.0)
        if hit.any() and np.isfinite(lat[hit]).any():
            peaks.append(float(np.nanmax(lat[hit])))
    return max(peaks) / base if peaks else None


def _member_finding(m: MemberSummary) -> str:
    text = f"{m.name} ({m.role or 'role unknown'}) stalled in {m.stalls} of {m.checkpoints} checkpoints"
    if m.repl_lag_growth_s is not None and m.repl_lag_growth_s > 0:
        text += f"; its replication lag grew by up to {m.repl_lag_growth_s:.1f} s through them"
    if m.primary_latency_ratio is not None:
        if m.primary_latency_ratio >= PRIMARY_LATENCY_RATIO:
            text += (
                f"; the primary's write latency rose {m.primary_latency_ratio:.1f}x during them "
                "(writes that wait for this secondary, such as majority writes, waited)"
            )
        else:
            text += "; the primary's write latency did not rise during them"
    return text
