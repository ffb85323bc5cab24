"""The lab's ground truth: what a checkpoint cost by the workload's own measure (no engine needed)."""

from __future__ import annotations

from typing import Any

from ckptdiag.lab.truth import summarize

RATE = 1000  # writes per second outside checkpoints


def _truth(stall_from: float, stall_to: float, cp: tuple[float, float]) -> dict[str, Any]:
    """60 s of a paced 1000 writes/s workload whose writes stop in [stall_from, stall_to) and complete
    right after it (the clients were waiting), with one checkpoint spanning ``cp``."""
    tenths = [RATE // 10] * 600
    first, last = int(stall_from * 10), int(stall_to * 10)
    delayed = sum(tenths[first:last])
    for i in range(first, last):
        tenths[i] = 0
    tenths[last] += delayed  # the backlog completes at once
    seconds = [
        {"t": 1000.0 + s, "ops": sum(tenths[s * 10 : s * 10 + 10]), "p50_ms": 1.0, "p99_ms": 2.0, "max_ms": 3.0}
        for s in range(60)
    ]
    for s in seconds:
        if first <= (s["t"] - 1000) * 10 + 9 and (s["t"] - 1000) * 10 < last:
            s["p99_ms"] = s["max_ms"] = (stall_to - stall_from) * 1000
    return {
        "start": 1000.0,
        "checkpoints": [{"start": 1000.0 + cp[0], "end": 1000.0 + cp[1], "duration_s": cp[1] - cp[0]}],
        "seconds": seconds,
        "tenths": tenths,
    }


def test_a_stall_straddling_two_seconds_is_measured_inside_the_checkpoint() -> None:
    # 0.6 s without a completed write at the end of a 0.9 s checkpoint, cut by a second boundary:
    # each whole second keeps over 60 % of its writes, yet the checkpoint itself ran at a third of
    # the baseline.
    truth = _truth(30.7, 31.3, (30.4, 31.3))
    impact = summarize(truth).checkpoints[0]
    assert impact.ops_ratio is not None and impact.p99_ratio is not None
    worst_second = min(s["ops"] for s in truth["seconds"][29:33]) / RATE
    assert worst_second > 0.6
    assert impact.ops_ratio < 0.4
    assert impact.p99_ratio >= 10
    assert impact.stall


def test_an_undisturbed_checkpoint_keeps_its_throughput() -> None:
    truth = _truth(0, 0, (30.4, 32.4))
    impact = summarize(truth).checkpoints[0]
    assert impact.ops_ratio is not None and 0.95 <= impact.ops_ratio <= 1.05
    assert not impact.stall


def test_a_checkpoint_too_short_for_tenths_falls_back_to_whole_seconds() -> None:
    truth = _truth(30.5, 30.7, (30.5, 30.7))  # 0.2 s: fewer than three whole tenths
    impact = summarize(truth).checkpoints[0]
    assert impact.ops_ratio == min(s["ops"] for s in truth["seconds"][29:32]) / RATE


def test_truth_files_without_tenths_still_summarize() -> None:
    truth = _truth(30.7, 31.3, (30.4, 31.3))
    del truth["tenths"]
    impact = summarize(truth).checkpoints[0]
    assert impact.ops_ratio is not None and impact.ops_ratio > 0.6
