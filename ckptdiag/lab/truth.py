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
# The workload kept its paced rate when the baseline seconds reach 90 % of it. Below that the lab
# fell behind (other processes held the host's CPUs: lab/slices.py): its requests queue from
# second to second, the baseline's p99 is the queue's, and a checkpoint's stall cannot be told
# from the host's load by the 10x rule above.
PACED_RATIO = 0.9


@dataclass(frozen=True)
class CheckpointImpact:
    """One ground-truth checkpoint against the baseline seconds."""

    start: float
    duration_s: float | None
    ops_ratio: float | None  # worst second's throughput / baseline median
    p99_ratio: float | None  # worst second's p99 / baseline median p99
    max_ms: float | None

    @property
    def stall(self) -> bool:
        """Throughput at 60 % of the baseline or less with p99 at 10x or more, or a collapse to 10 %."""
        if self.ops_ratio is None:
            return False
        if self.ops_ratio <= COLLAPSE_OPS_RATIO:
            return True
        return self.ops_ratio <= STALL_OPS_RATIO and self.p99_ratio is not None and self.p99_ratio >= STALL_P99_RATIO


@dataclass(frozen=True)
class TruthSummary:
    """Baseline and per-checkpoint impact of a lab run."""

    baseline_ops: float | None
    baseline_p99_ms: float | None
    mean_ops: float | None
    checkpoints: tuple[CheckpointImpact, ...]
    paced_ops: float | None = None  # the rate the workload was paced at (inserts/s)

    @property
    def stalls(self) -> int:
        return sum(c.stall for c in self.checkpoints)

    @property
    def behind(self) -> bool:
        """The workload fell behind its paced rate between checkpoints: the ground truth is of an
        overloaded run, not a measure of its checkpoints."""
        paced, base = self.paced_ops, self.baseline_ops
        return bool(paced and base is not None and base < PACED_RATIO * paced)

    def behind_line(self) -> str:
        """What a reader needs to know about a run that fell behind (empty when it did not)."""
        if not self.behind:
            return ""
        return (
            f"the lab fell behind its paced {self.paced_ops:,.0f} writes/s ({self.baseline_ops:,.0f}/s between "
            "checkpoints): other processes kept this host's CPUs busy, so its requests queued from second to "
            "second and its ground truth cannot tell a checkpoint's stall from the host's load; run it again "
            "on an idle host to score ckptdiag against it"
        )


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
        impacts.append(CheckpointImpact(start, end - start if end > start else None, ops_ratio, p99_ratio, max_ms))
    mean_ops = statistics.fmean(s["ops"] for s in seconds) if seconds else None
    paced = (truth.get("config") or {}).get("write_rate")
    return TruthSummary(base_ops, base_p99, mean_ops, tuple(impacts), float(paced) if paced else None)


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
