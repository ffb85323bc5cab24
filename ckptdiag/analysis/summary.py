"""The one-sentence summary of a diagnosis, for a ticket."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from ckptdiag.analysis.results import Episode, Impact
from ckptdiag.analysis.thresholds import HURT_LATENCY_RATIO, HURT_OPS_RATIO
from ckptdiag.analysis.verdict import hurts


def fmt_bytes(value: float | None) -> str:
    """Bytes as KB, MB or GB for a sentence.

    >>> fmt_bytes(3 * 2**20), fmt_bytes(1536 * 2**20), fmt_bytes(None)
    ('3 MB', '1.5 GB', '?')
    """
    if value is None:
        return "?"
    mb = value / 2**20
    if mb >= 1024:
        return f"{mb / 1024:.1f} GB"
    return f"{mb:.0f} MB" if mb >= 1 else f"{value / 2**10:.0f} KB"


def _fmt_s(seconds: float) -> str:
    return f"{seconds:.1f} s" if seconds >= 0.1 else f"{seconds * 1000:.0f} ms"


def figures(episodes: Sequence[Episode], pick: Callable[[Impact], float | None]) -> list[float]:
    """One impact figure of each episode that has it."""
    return [float(v) for e in episodes if (v := pick(e.impact)) is not None and np.isfinite(v)]


def summary_sentence(
    episodes: Sequence[Episode],
    severity: str,
    findings: Sequence[str],
    checkpoint_period_s: float | None,
    disk: str | None,
) -> str:
    """One sentence: how often, how long, how much, what it cost."""
    done = [e for e in episodes if e.end is not None]
    if not done:
        return "no checkpoint finished in the window" + (
            "" if severity == "ok" else f"; {findings[-1]}" if findings else ""
        )
    # a server judged ok is described by its usual checkpoint, one that hurts by those that hurt
    focus = done if severity == "ok" else [e for e in done if e.stall] or [e for e in done if hurts(e)] or done
    durations = [float(e.duration_s) for e in focus if e.duration_s is not None]
    written = [float(e.bytes_written) for e in focus if e.bytes_written is not None]
    every = f"every {checkpoint_period_s:.0f} s " if checkpoint_period_s else ""
    what = "disk write burst" if focus[0].evidence == "disk-burst" else "checkpoint"
    first = f"{every}a {_fmt_s(float(np.median(durations)))} {what}" if durations else f"{every}a {what}"
    if written:
        first += f" writes {fmt_bytes(float(np.median(written)))}"
    parts = [first, *_cost(focus, severity, sum(e.stall for e in episodes), len(episodes))]
    util = figures(focus, lambda m: m.util_pct_peak)
    if disk and util:
        parts.append(f"disk {disk} at {float(np.median(util)):.0f} % util")
    return "; ".join(parts)


def _cost(focus: Sequence[Episode], severity: str, stalls: int, n: int) -> list[str]:
    """What the focus episodes cost, as phrases."""
    ops = figures(focus, lambda m: m.ops_ratio)
    lats = figures(focus, lambda m: m.write_latency_ratio)
    kind = focus[0].impact.write_latency_kind or "mean"
    lat_up = bool(lats) and float(np.median(lats)) >= HURT_LATENCY_RATIO
    parts = []
    if severity == "ok" or not any(hurts(e) for e in focus):
        if not ops:
            parts.append("no stall")
        else:
            worst = f"; {100 * min(ops):.0f} % in the worst" if min(ops) <= HURT_OPS_RATIO else ""
            parts.append(f"throughput holds ({100 * float(np.median(ops)):.0f} % of usual{worst})")
        if lat_up:
            parts.append(f"{kind} write latency peaks {float(np.median(lats)):.1f}x")
        return parts
    cost = []
    if ops:
        cost.append(f"operations drop {100 * (1 - float(np.median(ops))):.0f} %")
    if lat_up:
        cost.append(f"{'p99' if kind == 'p99' else 'mean'} write latency rises {float(np.median(lats)):.1f}x")
    if cost:
        parts.append(" and ".join(cost))
    if stalls:
        parts.append(f"{stalls} of {n} stalled")
    return parts
