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

from ckptdiag.analysis.episode import Episode
from ckptdiag.analysis.slowops import SlowOpCorrelation, correlate
from ckptdiag.analysis.thresholds import LOG_LONG_CHECKPOINT_S
from ckptdiag.model.logevents import CheckpointMessage, LogEvents, SlowOps
from ckptdiag.recording import utc_iso

BURST_BIN_S = 10.0  # slow operations are counted in 10 s bins
BURST_FACTOR = 5.0  # a bin with 5x the median bin's slow operations, or more
BURST_MIN_OPS = 10  # and at least this many


@dataclass(frozen=True, slots=True)
class LogOnlyDiagnosis:
    """What a log alone shows about checkpoints."""

    start: float
    end: float
    episodes: tuple[Episode, ...]
    period_s: float | None  # median time between checkpoint starts
    correlation: SlowOpCorrelation
    bursts: tuple[tuple[float, float, int], ...]  # (start, end, slow operations) far above the usual rate
    bursts_in_checkpoints: int  # of those, how many meet a checkpoint
    per_episode: tuple[tuple[int, float | None], ...]  # per episode: (slow operations, longest ms)
    severity: str  # ok or warn
    summary: str
    evidence: tuple[str, ...]
    findings: tuple[str, ...] = ()  # what made the verdict warn: long checkpoints, slow operations in them


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


def slow_bursts(ops: SlowOps, start: float, end: float) -> tuple[tuple[float, float, int], ...]:
    """Bursts of slow operations -> (start, end, operations): runs of 10 s bins each with
    :data:`BURST_FACTOR` times the median bin's slow operations or more (and :data:`BURST_MIN_OPS`)."""
    if not len(ops) or end <= start:
        return ()
    # sparse bins: only those that hold an operation exist (memory by the lines, never by the
    # span: a log whose first line is stamped 1970 spans 56 years of 10 s bins)
    total = max(int(np.ceil((end + BURST_BIN_S - start) / BURST_BIN_S)) - 1, 1)  # bins from start past end
    inside = ops.t[(ops.t >= start) & (ops.t <= start + total * BURST_BIN_S)]
    index = np.minimum(np.floor((inside - start) / BURST_BIN_S).astype(np.int64), total - 1)  # the last bin is closed
    bins, counts = np.unique(index, return_counts=True)
    usual = _median_with_zeros(counts, total)
    hot = (counts >= BURST_MIN_OPS) & (counts >= BURST_FACTOR * max(usual, 1.0))
    out: list[tuple[float, float, int]] = []
    last = None
    for i in np.flatnonzero(hot).tolist():
        b0 = start + int(bins[i]) * BURST_BIN_S
        if out and last is not None and int(bins[i]) == last + 1:  # the next bin of the same burst
            out[-1] = (out[-1][0], b0 + BURST_BIN_S, out[-1][2] + int(counts[i]))
        else:
            out.append((b0, b0 + BURST_BIN_S, int(counts[i])))
        last = int(bins[i])
    return tuple(out)


def _median_with_zeros(counts: np.ndarray, total: int) -> float:
    """The median of ``total`` bins of which those not in ``counts`` hold nothing (never built)."""
    ordered = np.sort(counts)
    zeros = max(total - ordered.size, 0)
    n = zeros + ordered.size

    def at(k: int) -> float:
        return 0.0 if k < zeros else float(ordered[k - zeros])

    return at(n // 2) if n % 2 else (at(n // 2 - 1) + at(n // 2)) / 2


def diagnose_log(events: LogEvents, start: float, end: float) -> LogOnlyDiagnosis:
    """The diagnosis of a window of mongod's log, from its messages and slow operations alone."""
    bursts = slow_bursts(events.slow_ops, start, end)
    # a checkpoint belongs to the window when it overlaps it: a "took N seconds" message at the
    # window's first line began N seconds before it, and is still the window's checkpoint
    episodes = tuple(e for e in log_checkpoints(events.checkpoints) if e.start <= end and (e.end or e.start) >= start)
    guessed = not episodes and bool(bursts)
    if guessed:  # no checkpoint message: the bursts stand in, the weakest evidence of all
        episodes = tuple(Episode(b0, b1, None, None, "slow-op-burst") for b0, b1, _ in bursts)
    starts = np.array([e.start for e in episodes])
    period = float(np.median(np.diff(starts))) if starts.size > 2 else None
    # the bursts are not set against themselves: slow operations are placed only against messages
    correlation = correlate(events.slow_ops, () if guessed else episodes, start, end)
    met = 0 if guessed else sum(_meets(episodes, b0, b1) for b0, b1, _ in bursts)
    # a burst standing in for a checkpoint holds its own slow operations (their longest: not kept)
    per = tuple((n, None) for _, _, n in bursts) if guessed else correlation.per_checkpoint
    findings = tuple(f for f in (_long_checkpoints(episodes), correlation.finding) if f)
    severity = "warn" if findings else "ok"
    period_text = f", one every {period:.0f} s" if period else ""
    what = "slow-operation bursts (no checkpoint message in the log)" if guessed else "checkpoints"
    summary = (
        f"from mongod's log alone (weaker evidence than FTDC: no throughput, latency, cache or disk counters): "
        f"{len(episodes)} {what}{period_text}; {correlation.inside.count + correlation.outside.count:,} slow "
        f"operations, {correlation.inside.count:,} inside checkpoints"
    )
    longest = max((e.duration_s for e in episodes if e.duration_s is not None), default=None)
    if longest is not None and not guessed:
        summary += f"; the longest checkpoint {longest:.0f} s"
    return LogOnlyDiagnosis(
        start, end, episodes, period, correlation, bursts, met, per, severity, summary,
        _evidence(bursts, met, guessed, bool(episodes)), findings,
    )  # fmt: skip


def _long_checkpoints(episodes: Sequence[Episode]) -> str | None:
    """The finding for checkpoints the log shows running ``LOG_LONG_CHECKPOINT_S`` or more: a log
    cannot weigh their cost, so they are never ok."""
    long = [e for e in episodes if e.duration_s is not None and e.duration_s >= LOG_LONG_CHECKPOINT_S]
    if not long:
        return None
    worst = max(long, key=lambda e: e.duration_s or 0.0)
    return (
        f"{len(long)} of {len(episodes)} checkpoints ran {LOG_LONG_CHECKPOINT_S:g} s or more (the longest "
        f"{worst.duration_s:.0f} s, from {utc_iso(worst.start)[11:19]} UTC): the log cannot say what they cost; "
        "the server's FTDC (diagnostic.data) or a recording measures it"
    )


def _meets(episodes: Sequence[Episode], b0: float, b1: float) -> bool:
    return any(e.start <= b1 and (e.end or e.start) + 1 >= b0 for e in episodes)


def _evidence(bursts: Sequence[tuple[float, float, int]], met: int, guessed: bool, any_: bool) -> tuple[str, ...]:
    out = []
    if guessed:
        out.append(
            f"{len(bursts)} burst(s) of slow operations stand in for checkpoints: a regular period between them "
            "points at checkpoints, but the log does not say so (its verbosity leaves the messages out)"
        )
    elif bursts:
        out.append(
            f"{len(bursts)} burst(s) of slow operations ({BURST_FACTOR:g}x the usual 10 s or more), "
            f"{met} of them meeting a checkpoint"
        )
    elif not any_:
        out.append("no checkpoint message and no burst of slow operations in the window")
    return tuple(out)
