"""The lab's ground truth, and what each checkpoint cost by the workload's own measure."""

from __future__ import annotations

import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

# A checkpoint stalls writes when, in some second it touches, throughput falls to 60 % of the
# baseline or less and p99 write latency rises to 10x the baseline or more (issue #4's yardstick).
STALL_OPS_RATIO = 0.6
STALL_P99_RATIO = 10.0
# A collapse is a stall whatever the latency says: on a busy host the baseline's own p99 can be a
# queue's (324 ms once), and a second with 0.5 % of the writes was "no stall" by the 10x rule.
COLLAPSE_OPS_RATIO = 0.1
# Writes that froze are a stall whatever the throughput: a paced client's writes queue behind the
# freeze and complete inside the same second (p99 500 ms and 10x the baseline or more). A 0.6 s
# freeze then stalls whatever its phase against the seconds (across a boundary each keeps 70 %;
# ending on one, the second keeps 40 %; inside one, 100 %). The analysis judges a checkpoint by the
# same rule (analysis/thresholds.STALL_WAIT_MS).
FREEZE_P99_MS = 500.0
# the rule above in words, as the lab's report prints it beside its counts
STALL_RULE = (
    f"writes/s <= {STALL_OPS_RATIO * 100:.0f} % and p99 >= {STALL_P99_RATIO:g}x the baseline, writes frozen: "
    f"p99 >= {FREEZE_P99_MS:g} ms and {STALL_P99_RATIO:g}x, "
    f"or writes/s <= {COLLAPSE_OPS_RATIO * 100:.0f} % whatever the p99"
)
# The workload kept its paced rate when the baseline seconds reach 90 % of it. Below that the lab
# fell behind (other processes held the host's CPUs, lab/slices.py, or the disk could not serve the
# journal waits of that pace): its requests queue from
# second to second, the baseline's p99 is the queue's, and a checkpoint's stall cannot be told
# from the host's load by the 10x rule above.
PACED_RATIO = 0.9
# Writes lost: a second's shortfall against the baseline counts where the second kept 90 % or
# less of it; above that it is the pacing's own jitter (a paced client's second is 600 +- a few).
LOST_BELOW_RATIO = 0.9
HOUR_S = 3600.0


def stalled(ops_ratio: float | None, p99_ratio: float | None, p99_ms: float | None = None) -> bool:
    """Throughput at 60 % of the baseline or less with p99 at 10x or more, a collapse to 10 %, or
    writes frozen (p99 ``FREEZE_P99_MS`` and 10x or more): the one rule for a checkpoint (its worst
    second) and for any second of a run."""
    if ops_ratio is None:
        return False
    if ops_ratio <= COLLAPSE_OPS_RATIO:
        return True
    slow = p99_ratio is not None and p99_ratio >= STALL_P99_RATIO
    return slow and (ops_ratio <= STALL_OPS_RATIO or (p99_ms is not None and p99_ms >= FREEZE_P99_MS))


@dataclass(frozen=True)
class CheckpointImpact:
    """One ground-truth checkpoint against the baseline seconds."""

    start: float
    duration_s: float | None
    ops_ratio: float | None  # worst second's throughput / baseline median
    p99_ratio: float | None  # worst second's p99 / baseline median p99
    max_ms: float | None
    p99_ms: float | None = None  # worst second's p99

    @property
    def stall(self) -> bool:
        """Its worst second stalled by :func:`stalled`."""
        return stalled(self.ops_ratio, self.p99_ratio, self.p99_ms)


@dataclass(frozen=True)
class TruthSummary:
    """Baseline and per-checkpoint impact of a lab run."""

    baseline_ops: float | None
    baseline_p99_ms: float | None
    mean_ops: float | None
    checkpoints: tuple[CheckpointImpact, ...]
    paced_ops: float | None = None  # the rate the workload was paced at (inserts/s)
    seconds: int = 0  # seconds after the warm-up: what the per-hour figures are of
    stalled_s: int = 0  # seconds that stalled by :func:`stalled`, in a checkpoint or not
    lost_writes: float = 0.0  # the seconds' shortfall against the baseline (LOST_BELOW_RATIO)

    @property
    def stalls(self) -> int:
        return sum(c.stall for c in self.checkpoints)

    @property
    def stalled_s_per_h(self) -> float | None:
        """Seconds that stalled, per hour of the run: many short stalls against a few long ones."""
        return self.stalled_s * HOUR_S / self.seconds if self.seconds else None

    @property
    def lost_per_h(self) -> float | None:
        """Writes lost against the baseline, per hour of the run."""
        return self.lost_writes * HOUR_S / self.seconds if self.seconds else None

    @property
    def behind(self) -> bool:
        """The workload fell behind its paced rate between checkpoints: the ground truth is of an
        overloaded run, not a measure of its checkpoints. Below 90 % of the pace, or with the
        baseline seconds' p99 at the freeze level (``FREEZE_P99_MS``): a paced client's writes
        waiting half a second in a typical second are waiting in a queue that grows, whatever
        share of the pace it still serves (a run at 90.3 % of 12,000 writes/s had a baseline p99
        of 8.2 s)."""
        return bool(self.behind_why())

    def behind_why(self) -> str:
        """Which of its own figures put the run behind its pace (empty when it kept it, or without
        a paced rate): the rate between checkpoints, or the writes' wait there, or both."""
        paced, base, p99 = self.paced_ops, self.baseline_ops, self.baseline_p99_ms
        if not paced or base is None:
            return ""
        why = []
        if base < PACED_RATIO * paced:
            why.append(f"{base:,.0f} of its paced {paced:,.0f} writes/s between checkpoints")
        if p99 is not None and p99 >= FREEZE_P99_MS:
            why.append(f"its writes waited {p99:,.0f} ms (p99) between checkpoints, at {base:,.0f} of {paced:,.0f}/s")
        return "; ".join(why)

    def behind_line(self) -> str:
        """What a reader needs to know about a run that fell behind (empty when it did not)."""
        why = self.behind_why()
        if not why:
            return ""
        return (
            f"the lab could not keep its pace ({why}): the host could not serve it (its CPUs busy "
            "with other processes, or a disk too slow for the writes' journal waits), so its requests queued from "
            "second to second and its ground truth cannot tell a checkpoint's stall from the host's load; run it "
            "again on an idle host (or at a lower --write-rate) to score ckptdiag against it"
        )


@dataclass(frozen=True)
class TruthFigures:
    """A run's figures by the workload's own measure, as ``demo --verify`` sets them side by side."""

    checkpoints: int
    duration_s: float | None  # median checkpoint
    p99_inside_ms: float | None  # median over checkpoints of their worst second's p99
    p99_inside_max_ms: float | None
    p99_between_ms: float | None  # the baseline seconds' median p99
    dip_p50_pct: float | None  # throughput lost in a checkpoint's worst second, median
    dip_max_pct: float | None
    mean_writes_s: float | None
    stalls: int
    stalled_s_per_h: float | None
    lost_per_h: float | None
    seconds: int = 0  # the run's length after its warm-up: what the per-hour figures are of


def figures(s: TruthSummary) -> TruthFigures:
    """What :class:`TruthFigures` says of the run ``s`` summarises."""
    p99 = [c.p99_ratio * s.baseline_p99_ms for c in s.checkpoints if c.p99_ratio is not None and s.baseline_p99_ms]
    dips = [max(0.0, 100 * (1 - c.ops_ratio)) for c in s.checkpoints if c.ops_ratio is not None]
    durations = [c.duration_s for c in s.checkpoints if c.duration_s is not None]
    return TruthFigures(
        checkpoints=len(s.checkpoints),
        duration_s=_median(durations),
        p99_inside_ms=_median(p99),
        p99_inside_max_ms=max(p99, default=None),
        p99_between_ms=s.baseline_p99_ms,
        dip_p50_pct=_median(dips),
        dip_max_pct=max(dips, default=None),
        mean_writes_s=s.mean_ops,
        stalls=s.stalls,
        stalled_s_per_h=s.stalled_s_per_h,
        lost_per_h=s.lost_per_h,
        seconds=s.seconds,
    )


def _median(values: list[float]) -> float | None:
    return statistics.median(values) if values else None


def _touches(t: float, windows: Sequence[tuple[float, float]], margin: float) -> bool:
    return any(start - margin <= t + 1 and t <= end + margin for start, end in windows)


def summarize(truth: Mapping[str, Any], warmup_s: float = 5.0) -> TruthSummary:
    """Baseline = seconds at least 2 s away from any checkpoint (after a warm-up); then, for each
    checkpoint, the worst second among those it overlaps (and the one after, where the delayed
    requests complete)."""
    seconds = [s for s in truth["seconds"] if s["t"] >= truth["start"] + warmup_s]
    windows = [(c["start"], c["end"] if c["end"] is not None else c["start"]) for c in truth["checkpoints"]]
    base = [s for s in seconds if not _touches(s["t"], windows, 2.0)]
    base_ops = statistics.median(s["ops"] for s in base) if base else None
    p99s = [s["p99_ms"] for s in base if s["p99_ms"] is not None]
    base_p99 = statistics.median(p99s) if p99s else None
    impacts = []
    for start, end in windows:
        inside = [s for s in seconds if start <= s["t"] + 1 and s["t"] <= end + 1.0]
        if not inside:
            continue
        ops_ratio = min(s["ops"] for s in inside) / base_ops if base_ops else None
        worst_p99 = max((s["p99_ms"] for s in inside if s["p99_ms"] is not None), default=None)
        p99_ratio = worst_p99 / base_p99 if worst_p99 is not None and base_p99 else None
        max_ms = max((s["max_ms"] for s in inside if s["max_ms"] is not None), default=None)
        duration = end - start if end > start else None
        impacts.append(CheckpointImpact(start, duration, ops_ratio, p99_ratio, max_ms, worst_p99))
    mean_ops = statistics.fmean(s["ops"] for s in seconds) if seconds else None
    paced = (truth.get("config") or {}).get("write_rate")
    stalled_s = lost = 0.0
    if base_ops:
        for s in seconds:
            ratio = s["ops"] / base_ops
            p99_ratio = s["p99_ms"] / base_p99 if s["p99_ms"] is not None and base_p99 else None
            # a second that served more than the baseline serves a freeze's backlog: the freeze
            # was in the seconds before it, counted there
            stalled_s += stalled(ratio, p99_ratio, s["p99_ms"] if ratio <= 1.0 else None)
            lost += base_ops - s["ops"] if ratio <= LOST_BELOW_RATIO else 0.0
    return TruthSummary(
        base_ops,
        base_p99,
        mean_ops,
        tuple(impacts),
        float(paced) if paced else None,
        len(seconds),
        int(stalled_s),
        lost,
    )


@dataclass(frozen=True)
class Detection:
    """How a diagnosis's episodes line up with the lab's own checkpoints and stalls."""

    checkpoints: int
    found: int  # ground-truth checkpoints with a detected episode starting within the tolerance
    stalls: int
    stalls_flagged: int  # ground-truth stalls whose matching episode is flagged a stall
    false_stalls: int  # episodes flagged a stall where the ground truth saw none
    # per ground-truth checkpoint: None not found, else whether ckptdiag flagged it a stall
    verdicts: tuple[bool | None, ...] = ()

    @property
    def stall_recall(self) -> float | None:
        return self.stalls_flagged / self.stalls if self.stalls else None


def match(summary: TruthSummary, episodes: Sequence[tuple[float, bool]], tolerance_s: float = 1.0) -> Detection:
    """Match detected episodes (start, stall) to ground-truth checkpoints by start time."""
    found = flagged = false_stalls = 0
    used: set[int] = set()
    verdicts: list[bool | None] = []
    for truth in summary.checkpoints:
        best = min(
            (i for i in range(len(episodes)) if i not in used and abs(episodes[i][0] - truth.start) <= tolerance_s),
            key=lambda i: abs(episodes[i][0] - truth.start),
            default=None,
        )
        verdicts.append(None if best is None else episodes[best][1])
        if best is None:
            continue
        used.add(best)
        found += 1
        if truth.stall and episodes[best][1]:
            flagged += 1
        if episodes[best][1] and not truth.stall:
            false_stalls += 1
    return Detection(len(summary.checkpoints), found, summary.stalls, flagged, false_stalls, tuple(verdicts))
