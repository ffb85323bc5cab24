"""demo --verify's yardstick (ckptdiag/report/verify.py): the cause, the latency or the dip, the throughput."""

from __future__ import annotations

from ckptdiag.report.verify import VerifyOutcome


def _outcome(**changes: object) -> VerifyOutcome:
    base: dict[str, object] = {
        "causes_before": ("io-throttled",),
        "causes_after": (),
        "hurting_s_before": 16.0,
        "hurting_s_after": None,
        "p99_inside_ms": (1000.0, 100.0),
        "dip_worst_pct": (85.0, 20.0),
        "mean_writes_s": (8000.0, 8100.0),
        "stalls": (1.0, 0.0),
    }
    base.update(changes)
    return VerifyOutcome(**base)  # type: ignore[arg-type]


def test_a_fix_that_removes_the_cause_and_the_stall_passes() -> None:
    outcome = _outcome()
    assert outcome.cause_fixed == "gone" and outcome.better and outcome.throughput_kept and outcome.passed
    assert outcome.line().startswith("verify: PASS: io-throttled: gone;")


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
    # the same figures that pass on an idle host cannot pass when a run was the host's load's
    for behind, runs in (((True, False), "before"), ((False, True), "after"), ((True, True), "before and after")):
        outcome = _outcome(behind=behind)
        assert outcome.cause_fixed == "gone" and outcome.better and outcome.throughput_kept
        assert outcome.inconclusive and not outcome.passed
        line = outcome.line()
        assert line.startswith(f"verify: INCONCLUSIVE: the lab fell behind its paced rate ({runs})"), line
        assert "PASS" not in line and "idle host" in line
    assert not _outcome().inconclusive
