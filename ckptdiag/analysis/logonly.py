"""A diagnosis from mongod's log alone: the weaker evidence, said so. Checkpoints come from the
log's own messages, their cost from the slow operations around them; there is no throughput,
latency, cache or disk counter to weigh them with, so the verdict is at most ``warn``.

Checkpoint messages, by version: 4.4+ logs "saving checkpoint snapshot ..." as each checkpoint
starts (WiredTiger's checkpoint-progress verbosity, on by default), and "Checkpoint has been
running for N seconds" while a long one runs; 3.x-4.2 logs "Checkpoint took N seconds" after a
slow one ends. A start without a progress message has no known duration.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ckptdiag.analysis.results import Episode
from ckptdiag.analysis.slowops import SlowOpCorrelation, correlate
from ckptdiag.sources.logevents import CheckpointMessage, LogEvents, SlowOps

BURST_FACTOR = 5.0  # a minute with 5x the median minute's slow operations, or more
BURST_MIN_OPS = 10  # and at least this many


@dataclass(frozen=True, slots=True)
class LogOnlyDiagnosis:
    """What a log alone shows about checkpoints."""

    start: float
    end: float
    episodes: tuple[Episode, ...]
    period_s: float | None  # median time between checkpoint starts
    correlation: SlowOpCorrelation
    bursts: tuple[tuple[float, int], ...]  # (minute start, slow operations) of minutes far above the usual
    bursts_in_checkpoints: int  # of those, how many meet a checkpoint
    severity: str  # ok or warn
    summary: str
    evidence: tuple[str, ...]


def log_checkpoints(messages: Sequence[CheckpointMessage]) -> tuple[Episode, ...]:
    """Episodes from checkpoint messages: a start each ("saving", or a progress/took message with
    no start before it), the longest duration its progress messages give (or "took"'s own)."""
    out: list[Episode] = []
    current: Episode | None = None
    for m in sorted(messages, key=lambda m: m.t):
        if m.kind == "saving":
            if current is not None:
                out.append(current)
            current = Episode(m.t, m.t, None, None, "log")
        elif m.kind == "progress" and m.seconds is not None:
            if current is None or m.t - m.seconds > (current.end or current.start) + 60:
                if current is not None:
                    out.append(current)
                current = Episode(m.t - m.seconds, m.t, m.seconds, None, "log")
            else:
                current = Episode(current.start, m.t, m.t - current.start, None, "log")
        elif m.kind == "took" and m.seconds is not None:
            if current is not None:
                out.append(current)
                current = None
            out.append(Episode(m.t - m.seconds, m.t, m.seconds, None, "log", exact_duration=True))
    if current is not None:
        out.append(current)
    return tuple(out)


def slow_bursts(ops: SlowOps, start: float, end: float) -> tuple[tuple[float, int], ...]:
    """Minutes whose slow operations are :data:`BURST_FACTOR` times the median minute's or more."""
    if not len(ops) or end <= start:
        return ()
    edges = np.arange(start, end + 60, 60.0)
    counts, _ = np.histogram(ops.t, bins=edges)
    usual = float(np.median(counts)) if counts.size else 0.0
    hot = np.flatnonzero((counts >= BURST_MIN_OPS) & (counts >= BURST_FACTOR * max(usual, 1.0)))
    return tuple((float(edges[i]), int(counts[i])) for i in hot)


def diagnose_log(events: LogEvents, start: float, end: float) -> LogOnlyDiagnosis:
    """The diagnosis of a window of mongod's log, from its messages and slow operations alone."""
    episodes = tuple(e for e in log_checkpoints(events.checkpoints) if start <= e.start <= end)
    starts = np.array([e.start for e in episodes])
    period = float(np.median(np.diff(starts))) if starts.size > 2 else None
    correlation = correlate(events.slow_ops, episodes, start, end)
    bursts = slow_bursts(events.slow_ops, start, end)
    in_ckpt = sum(any(e.start <= b + 60 and (e.end or e.start) + 1 >= b for e in episodes) for b, _ in bursts)
    severity = "warn" if correlation.finding else "ok"
    period_text = f", one every {period:.0f} s" if period else ""
    summary = (
        f"from mongod's log alone (weaker evidence than FTDC: no throughput, latency, cache or disk counters): "
        f"{len(episodes)} checkpoints{period_text}; {correlation.inside.count + correlation.outside.count:,} slow "
        f"operations, {correlation.inside.count:,} inside checkpoints"
    )
    evidence = [correlation.finding] if correlation.finding else []
    if bursts:
        evidence.append(
            f"{len(bursts)} minute(s) with {BURST_FACTOR:g}x the usual slow operations or more, "
            f"{in_ckpt} of them meeting a checkpoint"
        )
    if not episodes:
        evidence.append("no checkpoint message in the window: the log's verbosity may leave them out")
    return LogOnlyDiagnosis(
        start, end, episodes, period, correlation, bursts, in_ckpt, severity, summary, tuple(evidence)
    )
