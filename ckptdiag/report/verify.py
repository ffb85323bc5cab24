"""`demo --verify`'s yardstick: did the recommended settings fix the lab's stall?

One judgement for `demo --verify` and `benchmarks/bench_verify.py`, on the lab's own ground
truth and on ckptdiag's diagnoses of both runs (docs/lab.md#proof):

- the cause named before is gone after (not among the after run's causes), or reduced (the
  typical checkpoint that hurts at least 2x shorter);
- write p99 inside checkpoints (the median over checkpoints of their worst second) or the
  throughput dip (the worst checkpoint's worst second against the baseline) at least 2x better;
- mean throughput no more than 10 % below before (a fix that costs throughput is not a fix; one
  that lifts a cap the workload was held to may raise it);
- nothing the server lives with got worse: the seconds stalled per hour, the writes lost per
  hour and write p99 between checkpoints, each within the noise of two runs of the same
  settings (``NOT_WORSE``). Without these a shorter interval that turns two long stalls into six
  short ones passed on p99 inside checkpoints alone.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from ckptdiag.advice.model import median
from ckptdiag.analysis.verdict import hurts
from ckptdiag.lab.truth import TruthFigures, TruthSummary, figures
from ckptdiag.report.document import Report

BETTER_RATIO = 0.5  # after / before at most this: 2x better
MEAN_TOLERANCE = 0.10


@dataclass(frozen=True)
class Tolerance:
    """How much higher a figure may read after and still be "not worse": the larger of an
    absolute and a relative margin, what runs of the same settings differed by (the 90th
    percentile of their pairs, docs/lab.md#noise). Not narrowed for longer runs: runs of 300 s
    differed by as much as runs of 150 s (the noise is the run's, not its checkpoints')."""

    absolute: float
    relative: float

    def margin(self, before: float) -> float:
        """How much higher than ``before`` may read as noise."""
        return max(self.absolute, self.relative * before)

    def worse(self, before: float | None, after: float | None) -> bool:
        """``after`` above ``before`` by more than the noise (unknown on either side: not judged)."""
        if before is None or after is None:
            return False
        return after > before + self.margin(before)


@dataclass(frozen=True)
class NotWorse:
    """A figure the server lives with, which a change may not make worse beyond its noise."""

    what: str
    unit: str
    digits: str
    get: Callable[[TruthFigures], float | None]
    noise: Tolerance

    def change(self, before: TruthFigures, after: TruthFigures) -> str | None:
        """ "what before → after unit (noise ±N)" where it got worse, else None."""
        a, b = self.get(before), self.get(after)
        if a is None or not self.noise.worse(a, b):
            return None
        unit = f" {self.unit}" if self.unit else ""
        noise = format(self.noise.margin(a), self.digits)
        return f"{self.what} {_pair((a, b), self.digits)}{unit} (noise ±{noise})"


# what two runs of the same settings differed by: the 90th percentile of the 42 pairs of 14 runs
# of the lab's stall scenario, 7 of 150 s and 7 of 300 s (docs/lab.md#noise), as absolute and
# relative margins; p99 between checkpoints sat at 1-4 ms in every run, too low to measure a
# relative part: a quarter
NOT_WORSE = (
    NotWorse("seconds stalled per hour", "s", ",.0f", lambda f: f.stalled_s_per_h, Tolerance(24.7, 0.40)),
    NotWorse("writes lost per hour", "", ",.0f", lambda f: f.lost_per_h, Tolerance(27_500.0, 0.49)),
    NotWorse("write p99 between checkpoints", "ms", ",.2f", lambda f: f.p99_between_ms, Tolerance(3.1, 0.25)),
)


@dataclass(frozen=True)
class VerifyOutcome:
    """Before and after, by the lab's truth and by ckptdiag, and whether the change passed."""

    causes_before: tuple[str, ...]
    causes_after: tuple[str, ...]
    hurting_s_before: float | None  # the typical checkpoint that hurts, by ckptdiag
    hurting_s_after: float | None
    before: TruthFigures  # the lab's truth of each run
    after: TruthFigures
    # why each run could not keep its paced rate, "" where it did (lab/truth.TruthSummary.behind_why)
    behind: tuple[str, str] = ("", "")

    @property
    def p99_inside_ms(self) -> tuple[float | None, float | None]:
        return self.before.p99_inside_ms, self.after.p99_inside_ms

    @property
    def dip_worst_pct(self) -> tuple[float | None, float | None]:
        return self.before.dip_max_pct, self.after.dip_max_pct

    @property
    def mean_writes_s(self) -> tuple[float | None, float | None]:
        return self.before.mean_writes_s, self.after.mean_writes_s

    @property
    def worse(self) -> tuple[str, ...]:
        """What the server lives with that got worse beyond the noise, as "what before → after"."""
        changes = (figure.change(self.before, self.after) for figure in NOT_WORSE)
        return tuple(change for change in changes if change)

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
        return (
            not self.inconclusive
            and self.cause_fixed is not None
            and self.better
            and self.throughput_kept
            and not self.worse
        )

    def line(self) -> str:
        """One line for the terminal."""
        if self.inconclusive:
            named = zip(("before", "after"), self.behind, strict=True)
            runs = "; ".join(f"{name}: {why}" for name, why in named if why)
            return (
                f"verify: INCONCLUSIVE: the lab could not keep its pace ({runs}): the host could not serve it "
                "(its CPUs busy with other processes, or a disk too slow for the journal waits), so the figures are "
                "the host's load as much as the settings'; run it again on an idle host "
                f"(p99 inside {_pair(self.p99_inside_ms, ',.1f')} ms; "
                f"mean {_pair(self.mean_writes_s, ',.0f')} writes/s)"
            )
        cause = self.causes_before[0] if self.causes_before else "no named cause"
        fixed = self.cause_fixed or "still there"
        worse = f"; worse: {', '.join(self.worse)}" if self.worse else ""
        # never "PASS: x" or "pass: x": the redactor every line crosses takes a word after a
        # password-like name and a colon for a secret (it printed "verify: PASS: <redacted> gone")
        return (
            f"verify: {'PASS' if self.passed else 'FAIL'} ({cause}: {fixed}); "
            f"p99 inside {_pair(self.p99_inside_ms, ',.1f')} ms; worst dip {_pair(self.dip_worst_pct, '.0f')} %; "
            f"mean {_pair(self.mean_writes_s, ',.0f')} writes/s{worse} "
            "(it passes with the cause gone or reduced, p99 or the dip >= 2x better, mean at most 10 % lower, and "
            "the seconds stalled and writes lost per hour and p99 between checkpoints no worse)"
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
    return VerifyOutcome(
        causes_before=_causes(before),
        causes_after=_causes(after),
        hurting_s_before=_hurting_s(before),
        hurting_s_after=_hurting_s(after),
        before=figures(truth_before),
        after=figures(truth_after),
        behind=(truth_before.behind_why(), truth_after.behind_why()),
    )
