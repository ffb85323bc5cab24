"""demo --verify's yardstick (ckptdiag/report/verify.py): the cause, the latency or the dip, the throughput."""

from __future__ import annotations

from dataclasses import replace

from test_truth import paused_truth

from ckptdiag.guard.redact import redact_text
from ckptdiag.lab.truth import TruthFigures, TruthSummary, figures, summarize
from ckptdiag.report.verify import NOT_WORSE, VerifyOutcome

_BEFORE = TruthFigures(
    checkpoints=2,
    duration_s=16.0,
    p99_inside_ms=1000.0,
    p99_inside_max_ms=1200.0,
    p99_between_ms=2.0,
    dip_p50_pct=80.0,
    dip_max_pct=85.0,
    mean_writes_s=8000.0,
    stalls=1,
    stalled_s_per_h=60.0,
    lost_per_h=240_000.0,
)
# a fix: p99 inside 10x lower, the dip gone, nothing stalled or lost
_CHANGED = {"p99_inside_ms": 100.0, "dip_max_pct": 20.0, "mean_writes_s": 8100.0, "stalls": 0}
_AFTER = replace(_BEFORE, **_CHANGED, stalled_s_per_h=0.0, lost_per_h=0.0)  # type: ignore[arg-type]
_PAIRS = {"p99_inside_ms": "p99_inside_ms", "dip_worst_pct": "dip_max_pct", "mean_writes_s": "mean_writes_s"}


def _outcome(**changes: object) -> VerifyOutcome:
    """A passing outcome with ``changes``: a field, or a (before, after) pair of a truth figure."""
    before, after, fields = _BEFORE, _AFTER, {}
    for name, value in changes.items():
        if name in _PAIRS and isinstance(value, tuple):
            before = replace(before, **{_PAIRS[name]: value[0]})
            after = replace(after, **{_PAIRS[name]: value[1]})
        else:
            fields[name] = value
    base: dict[str, object] = {
        "causes_before": ("io-throttled",),
        "causes_after": (),
        "hurting_s_before": 16.0,
        "hurting_s_after": None,
        "before": before,
        "after": after,
    }
    base.update(fields)
    return VerifyOutcome(**base)  # type: ignore[arg-type]


def test_a_fix_that_removes_the_cause_and_the_stall_passes() -> None:
    outcome = _outcome()
    assert outcome.cause_fixed == "gone" and outcome.better and outcome.throughput_kept and outcome.passed
    assert outcome.line().startswith("verify: PASS (io-throttled: gone);")
    # the line crosses the redactor as it is (it once printed "verify: PASS: <redacted> gone")
    assert redact_text(outcome.line()) == outcome.line()


def test_the_named_cause_must_go_or_shrink() -> None:
    still = _outcome(causes_after=("io-throttled",), hurting_s_after=12.0)
    assert still.cause_fixed is None and not still.passed
    assert "FAIL" in still.line() and "still there" in still.line()
    shorter = _outcome(causes_after=("journal-behind-checkpoint",), causes_before=("journal-behind-checkpoint",))
    assert _outcome(**{**shorter.__dict__, "hurting_s_after": 8.0}).cause_fixed == "reduced"
    # a later cause does not count against the fix of the first one
    assert _outcome(causes_after=("cache-oversized",), hurting_s_after=12.0).cause_fixed == "gone"


def test_either_latency_or_the_dip_must_halve() -> None:
    assert _outcome(dip_worst_pct=(85.0, 80.0)).better  # p99 10x better
    assert _outcome(p99_inside_ms=(1000.0, 900.0)).better  # the dip 4x smaller
    assert not _outcome(p99_inside_ms=(1000.0, 900.0), dip_worst_pct=(85.0, 80.0)).passed
    assert not _outcome(p99_inside_ms=(None, 100.0), dip_worst_pct=(0.0, 0.0)).better


def test_a_fix_that_costs_throughput_fails_and_one_that_lifts_a_cap_passes() -> None:
    assert not _outcome(mean_writes_s=(8000.0, 7100.0)).passed  # 11 % lower
    assert _outcome(mean_writes_s=(8000.0, 7300.0)).passed  # 9 % lower
    assert _outcome(mean_writes_s=(8000.0, 12000.0)).passed  # the throttle held it down
    assert not _outcome(mean_writes_s=(None, 12000.0)).passed


def test_a_run_that_fell_behind_its_paced_rate_makes_the_verdict_inconclusive() -> None:
    # the same figures that pass on an idle host cannot pass when a run was the host's load's; the
    # line names each run that could not keep its pace and the figure that says so
    slow, queued = "540 of its paced 600 writes/s between checkpoints", "its writes waited 612 ms (p99)"
    for behind, runs in (
        ((slow, ""), f"before: {slow}"),
        (("", queued), f"after: {queued}"),
        ((slow, queued), f"before: {slow}; after: {queued}"),
    ):
        outcome = _outcome(behind=behind)
        assert outcome.cause_fixed == "gone" and outcome.better and outcome.throughput_kept
        assert outcome.inconclusive and not outcome.passed
        line = outcome.line()
        assert line.startswith(f"verify: INCONCLUSIVE: the lab could not keep its pace ({runs})"), line
        assert "PASS" not in line and "idle host" in line
    assert not _outcome().inconclusive


def test_a_change_that_makes_what_the_server_lives_with_worse_fails() -> None:
    # two long stalls turned into many short ones: p99 inside 3x lower, but more seconds stalled
    # and more writes lost per hour (the lab's truth of both runs, tests/test_truth.py)
    long, short = (
        summarize(paused_truth([(30.0, 32.0), (90.0, 92.0)])),
        summarize(paused_truth([(s + 0.4, s + 1.0) for s in range(10, 120, 10)])),
    )
    outcome = judge_truth(long, short)
    assert outcome.better and outcome.throughput_kept and outcome.cause_fixed == "gone"
    assert not outcome.passed
    assert [w.split(" (noise ±")[0] for w in outcome.worse] == [
        "seconds stalled per hour 120 → 330 s",
        "writes lost per hour 120,000 → 198,000",
    ]
    line = outcome.line()
    assert line.startswith("verify: FAIL"), line
    assert redact_text(line) == line
    noise = NOT_WORSE[0].noise.margin(120.0)
    assert f"worse: seconds stalled per hour 120 → 330 s (noise ±{noise:,.0f}), writes" in line, line
    # the same pair the other way round passes on these figures (fewer seconds stalled)
    assert not judge_truth(short, long).worse


def test_each_figure_the_server_lives_with_may_not_get_worse_beyond_its_noise() -> None:
    names = ("stalled_s_per_h", "lost_per_h", "p99_between_ms")
    for figure, name in zip(NOT_WORSE, names, strict=True):
        what, level = figure.what, figure.get(_BEFORE) or 0.0
        margin = max(figure.noise.absolute, figure.noise.relative * level)
        within = _outcome(after=replace(_AFTER, **{name: level + margin * 0.9}))
        beyond = _outcome(after=replace(_AFTER, **{name: level + margin * 1.1}))
        assert within.passed and not within.worse, what
        assert not beyond.passed and beyond.worse[0].startswith(what), what
        # unknown on a side is not judged (a run without a baseline p99 between checkpoints)
        assert not _outcome(after=replace(_AFTER, **{name: None})).worse


def judge_truth(before: TruthSummary, after: TruthSummary) -> VerifyOutcome:
    """The yardstick on two ground truths alone (no diagnosis: the cause counts as gone)."""
    return VerifyOutcome(("journal-behind-checkpoint",), (), 2.0, None, figures(before), figures(after))
