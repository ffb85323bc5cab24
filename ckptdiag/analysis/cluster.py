"""Several members of one replica set (or several servers) in one picture: which stall, how often,
whether a secondary's stalls come with replication lag and with the primary's write latency, and
the cluster's verdict (the worst member's, named)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ckptdiag.analysis.results import Diagnosis

SEVERITY_ORDER = {"ok": 0, "warn": 1, "critical": 2}
PRIMARY_LATENCY_RATIO = 2.0  # the primary's write latency this many times its baseline: it waited
WC_WAIT_MIN_MS = 5.0  # a write-concern wait below this is replication's usual round trip, not a stall


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
    # the primary's write-concern wait (ms a waiting write waited: w "majority", w > 1) outside
    # this secondary's stalls (median) and during them (highest); None where nothing waited
    primary_wc_wait_ms: tuple[float, float] | None = None


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
    growth = dx.episodes.present("impact.repl_lag_growth_s").tolist()
    behind = primary if dx.role == "secondary" else None  # the primary this secondary serves
    return MemberSummary(
        name,
        dx.role,
        dx.severity,
        len(dx.episodes),
        dx.stalls,
        dx.summary,
        max(growth) if growth else None,
        _primary_latency_during(dx, behind) if behind is not None else None,
        _primary_wc_wait_during(dx, behind) if behind is not None else None,
    )


def _stall_buckets(secondary: Diagnosis, tl: pd.DataFrame) -> list[np.ndarray]:
    """For each of the secondary's stalls, the primary's timeline buckets it touches."""
    t = tl["t"].to_numpy(dtype="float64")
    step = float(np.median(np.diff(t))) if t.size > 1 else 1.0
    out = []
    for e in secondary.episodes.take(secondary.episodes.flags("impact.stall")):
        if e.stall:
            end = e.end if e.end is not None else e.start
            out.append((t + step >= e.start) & (t <= end + 1.0))
    return out


def _primary_latency_during(secondary: Diagnosis, primary: Diagnosis) -> float | None:
    """The primary's highest write latency in the timeline buckets the secondary's stalls touch,
    over the primary's baseline write latency (majority writes wait for a stalled secondary)."""
    tl, base = primary.timeline, primary.baseline.write_lat_ms
    if tl is None or tl.empty or not base:
        return None
    lat = tl["write_lat_ms"].to_numpy(dtype="float64")
    peaks = [float(np.nanmax(lat[hit])) for hit in _stall_buckets(secondary, tl) if np.isfinite(lat[hit]).any()]
    return max(peaks) / base if peaks else None


def _primary_wc_wait_during(secondary: Diagnosis, primary: Diagnosis) -> tuple[float, float] | None:
    """The primary's write-concern wait outside the secondary's stalls (median of the buckets)
    and during them (highest): what writes waiting for the secondaries (w "majority") paid."""
    tl = primary.timeline
    if tl is None or tl.empty or "wc_wait_ms" not in tl:
        return None
    wait = tl["wc_wait_ms"].to_numpy(dtype="float64")
    hits = _stall_buckets(secondary, tl)
    if not hits:
        return None
    during = np.logical_or.reduce(hits)
    inside, outside = wait[during & np.isfinite(wait)], wait[~during & np.isfinite(wait)]
    if not inside.size:
        return None
    return (float(np.median(outside)) if outside.size else float("nan")), float(inside.max())


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
    if m.primary_wc_wait_ms is not None:
        base, peak = m.primary_wc_wait_ms
        if peak >= WC_WAIT_MIN_MS and not (np.isfinite(base) and peak < PRIMARY_LATENCY_RATIO * base):
            before = f" ({base:,.0f} ms outside them)" if np.isfinite(base) else ""
            text += (
                f"; writes on the primary waiting for their write concern (w: majority) waited up to {peak:,.0f} ms "
                f"during them{before}: they waited for this secondary"
            )
        else:
            text += "; the primary's write-concern waits did not rise during them"
    return text
