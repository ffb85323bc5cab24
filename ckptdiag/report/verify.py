"""`demo --verify`'s yardstick: did the recommended settings fix the lab's stall?

One judgement for `demo --verify` and `benchmarks/bench_verify.py`, on the lab's own ground
truth and on ckptdiag's diagnoses of both runs (docs/lab.md#proof):

- the cause named before is gone after (not among the after run's causes), or reduced (the
  typical checkpoint that hurts at least 2x shorter);
- write p99 inside checkpoints (the median over checkpoints of their worst second) or the
  throughput dip (the worst checkpoint's worst second against the baseline) at least 2x better;
- mean throughput no more than 10 % below before (a fix that costs throughput is not a fix; one
  that lifts a cap the workload was held to may raise it).
"""

from __future__ import annotations

from dataclasses import dataclass

from ckptdiag.advice.model import median
from ckptdiag.analysis.verdict import hurts
from ckptdiag.lab.truth import TruthSummary
from ckptdiag.report.document import Report
from ckptdiag.report.lab import truth_rows

BETTER_RATIO = 0.5  # after / before at most this: 2x better
MEAN_TOLERANCE = 0.10


@dataclass(frozen=True)
class VerifyOutcome:
    """Before and after, by the lab's truth and by ckptdiag, and whether the change passed."""

    causes_before: tuple[str, ...]
    causes_after: tuple[str, ...]
    hurting_s_before: float | None  # the typical checkpoint that hurts, by ckptdiag
    hurting_s_after: float | None
    p99_inside_ms: tuple[float | None, float | None]
    dip_worst_pct: tuple[float | None, float | None]
    mean_writes_s: tuple[float | None, float | None]
    stalls: tuple[float | None, float | None]
    behind: tuple[bool, bool] = (False, False)  # a run fell behind its paced rate (lab/truth.py)

    @property
    def cause_fixed(self) -> str | None:
        """ "gone", "reduced", or None; "gone" too when nothing was named and nothing is after."""
        if self.causes_before and not set(self.causes_before[:1]) & set(self.causes_after):
            return "gone"
        before, after = self.hurting_s_before, self.hurting_s_after
        if after is None and before is not None:
            return "gone"  # no checkpoint hurts any more
        if before and after is not None and after <= before * BETTER_RATIO:
            return "reduced"
        return None

    @property
    def better(self) -> bool:
        """p99 inside checkpoints or the worst dip at least 2x better."""
        return _halved(*self.p99_inside_ms) or _halved(*self.dip_worst_pct)

    @property
    def throughput_kept(self) -> bool:
        """Mean throughput no more than 10 % below before."""
        before, after = self.mean_writes_s
        return bool(before and after is not None and after >= before * (1 - MEAN_TOLERANCE))

    @property
    def inconclusive(self) -> bool:
        """A run fell behind its paced rate: the host's load, not the settings, set its figures."""
        return any(self.behind)

    @property
    def passed(self) -> bool:
        """Every point of the yardstick holds, on two runs that kept their paced rate."""
        return not self.inconclusive and self.cause_fixed is not None and self.better and self.throughput_kept

    def line(self) -> str:
        """One line for the terminal."""
        if self.inconclusive:
            runs = " and ".join(name for name, late in zip(("before", "after"), self.behind, strict=True) if late)
            return (
                f"verify: INCONCLUSIVE: the lab fell behind its paced rate ({runs}): other processes kept this "
                "host's CPUs busy, so the figures are the host's load as much as the settings'; run it again on "
                f"an idle host (p99 inside {_pair(self.p99_inside_ms, ',.1f')} ms; "
                f"mean {_pair(self.mean_writes_s, ',.0f')} writes/s)"
            )
        cause = self.causes_before[0] if self.causes_before else "no named cause"
        fixed = self.cause_fixed or "still there"
        return (
            f"verify: {'PASS' if self.passed else 'FAIL'}: {cause}: {fixed}; "
            f"p99 inside {_pair(self.p99_inside_ms, ',.1f')} ms; worst dip {_pair(self.dip_worst_pct, '.0f')} %; "
            f"mean {_pair(self.mean_writes_s, ',.0f')} writes/s "
            "(pass: the cause gone or reduced, p99 or the dip >= 2x better, mean at most 10 % lower)"
        )


def _halved(before: float | None, after: float | None) -> bool:
    return before is not None and after is not None and before > 0 and after <= before * BETTER_RATIO


def _pair(values: tuple[float | None, float | None], digits: str) -> str:
    return " → ".join("-" if v is None else format(v, digits) for v in values)


def _hurting_s(report: Report) -> float | None:
    return median([float(e.duration_s) for e in report.dx.episodes if e.duration_s and hurts(e)])


def _causes(report: Report) -> tuple[str, ...]:
    return tuple(c.kind for c in report.advice.causes) if report.advice else ()


def judge(before: Report, after: Report, truth_before: TruthSummary, truth_after: TruthSummary) -> VerifyOutcome:
    """The verify yardstick over both runs' diagnoses and ground truths."""
    rows = {r.name: r for r in truth_rows(truth_before, truth_after)}

    def pair(name: str) -> tuple[float | None, float | None]:
        return rows[name].before, rows[name].after

    return VerifyOutcome(
        causes_before=_causes(before),
        causes_after=_causes(after),
        hurting_s_before=_hurting_s(before),
        hurting_s_after=_hurting_s(after),
        p99_inside_ms=pair("write p99 inside checkpoints (p50 of their worst second)"),
        dip_worst_pct=pair("throughput dip (worst checkpoint)"),
        mean_writes_s=pair("mean throughput"),
        stalls=pair("stalled checkpoints"),
        behind=(truth_before.behind, truth_after.behind),
    )
