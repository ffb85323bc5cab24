"""The lab's ground truth: what a checkpoint cost by the workload's own per-second measure (no engine)."""

from __future__ import annotations

from typing import Any

from ckptdiag.lab.truth import STALL_OPS_RATIO, STALL_P99_RATIO, summarize

RATE = 1000  # writes per second outside checkpoints


def _truth(stall_from: float, stall_to: float, cp: tuple[float, float]) -> dict[str, Any]:
    """60 s of a paced 1000 writes/s workload whose writes stop in [stall_from, stall_to) and all
    complete right after it (the clients were waiting), with one checkpoint spanning ``cp``."""
    tenths = [RATE // 10] * 600
    first, last = round(stall_from * 10), round(stall_to * 10)
    delayed = sum(tenths[first:last])
    tenths[first:last] = [0] * (last - first)
    tenths[last] += delayed
    seconds = []
    for s in range(60):
        stalled = first < s * 10 + 10 and s * 10 < last
        pause_ms = (stall_to - stall_from) * 1000 if stalled else 0
        p99 = max(2.0, pause_ms)
        seconds.append(
            {"t": 1000.0 + s, "ops": sum(tenths[s * 10 : s * 10 + 10]), "p50_ms": 1.0, "p99_ms": p99, "max_ms": p99}
        )
    return {
        "start": 1000.0,
        "checkpoints": [{"start": 1000.0 + cp[0], "end": 1000.0 + cp[1], "duration_s": cp[1] - cp[0]}],
        "seconds": seconds,
    }


def test_a_checkpoint_that_stops_writes_for_a_whole_second_stalls() -> None:
    s = summarize(_truth(30.0, 31.5, (29.9, 31.5)))
    assert s.baseline_ops == RATE and s.baseline_p99_ms == 2.0
    impact = s.checkpoints[0]
    assert impact.ops_ratio is not None and impact.ops_ratio <= STALL_OPS_RATIO
    assert impact.p99_ratio is not None and impact.p99_ratio >= STALL_P99_RATIO
    assert impact.stall and s.stalls == 1


def test_an_undisturbed_checkpoint_keeps_its_throughput() -> None:
    impact = summarize(_truth(0, 0, (30.4, 32.4))).checkpoints[0]
    assert impact.ops_ratio == 1.0 and impact.p99_ratio == 1.0 and not impact.stall


def test_a_short_pause_stalls_whatever_its_phase_against_the_seconds() -> None:
    # 0.6 s without writes cut in two by a second boundary leaves 70 % of each second's writes
    # (the client catches up): by throughput alone no stall, inside one second (40 %) a stall. The
    # writes froze for 0.6 s either way (p99 600 ms, 300x): a stall both ways, as the analysis
    # judges a 1 Hz sample that a freeze falls across
    across = summarize(_truth(30.7, 31.3, (30.4, 31.3))).checkpoints[0]
    assert across.ops_ratio is not None and across.ops_ratio > STALL_OPS_RATIO
    assert across.p99_ratio is not None and across.p99_ratio >= STALL_P99_RATIO
    ending = summarize(_truth(30.4, 31.0, (30.1, 31.0))).checkpoints[0]
    assert ending.ops_ratio is not None and ending.ops_ratio <= STALL_OPS_RATIO
    inside = summarize(_truth(30.2, 30.8, (30.1, 30.8))).checkpoints[0]
    assert inside.ops_ratio == 1.0  # the backlog served inside the same second
    assert across.stall and ending.stall and inside.stall
    # a pause of 0.3 s (p99 300 ms) across a boundary is a p99 rise, not a stall
    assert not summarize(_truth(30.85, 31.15, (30.4, 31.3))).checkpoints[0].stall


def test_a_workload_that_kept_its_paced_rate_is_not_behind() -> None:
    truth = {**_truth(30.0, 31.5, (29.9, 31.5)), "config": {"write_rate": RATE}}
    s = summarize(truth)
    assert s.paced_ops == RATE and not s.behind and s.behind_line() == ""


def test_a_workload_below_its_paced_rate_between_checkpoints_is_behind_and_says_so() -> None:
    # paced at 1,000/s, served 540/s between checkpoints (other processes held the CPUs): the
    # baseline's p99 is the queue's, so the 10x rule cannot score a checkpoint's stall
    s = summarize({**_truth(0, 0, (30.4, 32.4)), "config": {"write_rate": RATE / 0.54}})
    assert s.baseline_ops == RATE and s.behind
    line = s.behind_line()
    assert "could not keep its pace (1,000 of its paced 1,852 writes/s between checkpoints)" in line
    assert "CPUs busy" in line and "idle host" in line
    # just inside the 90 % the paced rate is kept; without a paced rate nothing is claimed
    assert not summarize({**_truth(0, 0, (30.4, 32.4)), "config": {"write_rate": RATE / 0.9}}).behind
    assert not summarize(_truth(0, 0, (30.4, 32.4))).behind


def test_a_workload_whose_writes_queue_between_checkpoints_is_behind_at_90_percent_of_its_pace() -> None:
    """At 90 % or more of its pace, a run whose typical second's p99 is half a second is queueing:
    behind, and the line says the p99."""
    truth = _truth(0, 0, (30.4, 32.4))
    for second in truth["seconds"]:
        second["p99_ms"] = second["max_ms"] = 8_000.0
    s = summarize({**truth, "config": {"write_rate": RATE / 0.95}})
    assert s.baseline_ops == RATE and s.behind
    # its rate kept: the line says the wait, not a rate it did not fall below
    assert "(its writes waited 8,000 ms (p99) between checkpoints, at 1,000 of 1,053/s)" in s.behind_line()
    for second in truth["seconds"]:
        second["p99_ms"] = second["max_ms"] = 499.0
    assert not summarize({**truth, "config": {"write_rate": RATE / 0.95}}).behind
    assert not summarize(truth).behind  # without a paced rate nothing is claimed


def test_a_throughput_collapse_is_a_stall_whatever_the_baselines_own_p99() -> None:
    # a busy host raised the baseline's own p99 to 324 ms: a second with 0.5 % of the writes and a
    # p99 of "only" 3x is still a stall; half the writes at 3x is not
    from ckptdiag.lab.truth import COLLAPSE_OPS_RATIO, CheckpointImpact

    assert CheckpointImpact(0.0, 2.0, ops_ratio=0.005, p99_ratio=3.0, max_ms=1000.0).stall
    assert CheckpointImpact(0.0, 2.0, ops_ratio=COLLAPSE_OPS_RATIO, p99_ratio=None, max_ms=None).stall
    assert not CheckpointImpact(0.0, 2.0, ops_ratio=0.5, p99_ratio=3.0, max_ms=1000.0).stall
    assert not CheckpointImpact(0.0, 2.0, ops_ratio=None, p99_ratio=50.0, max_ms=1000.0).stall
    truth = _truth(30.0, 31.5, (29.9, 31.5))
    for second in truth["seconds"]:
        second["p99_ms"] = max(second["p99_ms"], 324.0)  # the queue of a busy host, everywhere
    s = summarize(truth)
    assert s.baseline_p99_ms == 324.0 and s.checkpoints[0].ops_ratio == 0.0
    assert s.checkpoints[0].p99_ratio is not None and s.checkpoints[0].p99_ratio < STALL_P99_RATIO
    assert s.stalls == 1


def test_writes_that_froze_are_a_stall_whatever_the_seconds_throughput() -> None:
    # a paced client's writes queue behind a freeze and complete in the same second: 85 % of the
    # writes (or all of them), p99 600 ms (200x) is a stall; 85 % at 400 ms is not, nor 600 ms at 6x
    # (the baseline's own 100 ms): the analysis judges a checkpoint by the same rule
    from ckptdiag.analysis.thresholds import STALL_WAIT_MS, STALL_WAIT_RATIO
    from ckptdiag.lab.truth import FREEZE_P99_MS, CheckpointImpact

    assert (FREEZE_P99_MS, STALL_P99_RATIO) == (STALL_WAIT_MS, STALL_WAIT_RATIO)
    assert CheckpointImpact(0.0, 1.0, ops_ratio=0.85, p99_ratio=200.0, max_ms=900.0, p99_ms=600.0).stall
    assert not CheckpointImpact(0.0, 1.0, ops_ratio=0.85, p99_ratio=200.0, max_ms=900.0, p99_ms=400.0).stall
    assert not CheckpointImpact(0.0, 1.0, ops_ratio=0.85, p99_ratio=6.0, max_ms=900.0, p99_ms=600.0).stall
    truth = _truth(0, 0, (30.4, 31.4))
    for second in truth["seconds"]:
        if second["t"] == 1031.0:
            second["p99_ms"] = 600.0  # its writes held for 0.6 s, the throughput whole
    s = summarize(truth)
    assert s.checkpoints[0].ops_ratio == 1.0 and s.stalls == 1 and s.stalled_s == 1
    # the second after a freeze serves its backlog (160 %) with the same p99: the freeze is counted
    # once, in the second it was in
    six = summarize(paused_truth([(s + 0.4, s + 1.0) for s in range(10, 120, 10)]))
    assert six.stalls == six.stalled_s == 11


def paused_truth(pauses: list[tuple[float, float]], length: int = 125) -> dict[str, Any]:
    """``length`` s of the paced workload whose writes stop in each pause (a checkpoint spanning
    it) and complete right after it, as the lab's clients do."""
    tenths = [RATE // 10] * (length * 10)
    slow: dict[int, float] = {}
    for start, end in pauses:
        first, last = round(start * 10), round(end * 10)
        delayed = sum(tenths[first:last])
        tenths[first:last] = [0] * (last - first)
        tenths[last] += delayed
        for s in range(int(start), int(end) + 1):
            slow[s] = (end - start) * 1000
    seconds = [
        {
            "t": 1000.0 + s,
            "ops": sum(tenths[s * 10 : s * 10 + 10]),
            "p50_ms": 1.0,
            "p99_ms": max(2.0, slow.get(s, 0.0)),
            "max_ms": max(2.0, slow.get(s, 0.0)),
        }
        for s in range(length)
    ]
    cps = [{"start": 1000.0 + a - 0.1, "end": 1000.0 + b, "duration_s": b - a + 0.1} for a, b in pauses]
    return {"start": 1000.0, "checkpoints": cps, "seconds": seconds}


def test_the_seconds_stalled_and_the_writes_lost_count_every_stall_per_hour() -> None:
    two_long = summarize(paused_truth([(30.0, 32.0), (90.0, 92.0)]))  # 60 s checkpoints, 2 s each
    assert two_long.seconds == 120 and two_long.stalls == 2
    assert two_long.stalled_s == 4  # two whole seconds each
    assert two_long.lost_writes == 4 * RATE  # caught up after, but lost while they stopped
    assert two_long.stalled_s_per_h == 4 * 3600 / 120 and two_long.lost_per_h == 4 * RATE * 30
    # the same workload with 10 s checkpoints, each stopping writes for 0.6 s: p99 inside 3x lower,
    # but more seconds stalled and more writes lost
    six_short = summarize(paused_truth([(s + 0.4, s + 1.0) for s in range(10, 120, 10)]))
    assert six_short.stalls == six_short.stalled_s == 11
    assert six_short.lost_writes == 11 * 600
    stalled_s, lost = six_short.stalled_s_per_h, six_short.lost_per_h
    assert stalled_s is not None and lost is not None and stalled_s > 2 * (two_long.stalled_s_per_h or 0)
    # a run without a pause loses nothing, whatever its pacing's jitter (a second at 95 %)
    calm = paused_truth([])
    calm["seconds"][50]["ops"] = RATE * 0.95
    quiet = summarize(calm)
    assert quiet.stalled_s == 0 and quiet.lost_writes == 0 and quiet.lost_per_h == 0


def test_the_lab_tables_title_names_the_workloads_writes() -> None:
    """An update workload's run is titled with updates a second, not inserts."""
    from pathlib import Path

    from rich.console import Console

    from ckptdiag.lab.config import LabConfig
    from ckptdiag.lab.run import LabRun
    from ckptdiag.recording.recorder import RecordResult
    from ckptdiag.report.lab import render_lab_run

    truth: dict[str, Any] = {"scenario": "pinned-history", "start": 0.0, "seconds": [], "checkpoints": []}
    for updates, word in ((True, "1000 updates/s"), (False, "1000 inserts/s")):
        config = LabConfig(cache_mb=512, checkpoint_s=60, write_rate=1000, updates=updates, preload_docs=100)
        run = LabRun(Path("r.jsonl.gz"), Path("r.truth.json"), truth, summarize(truth), RecordResult(), config)
        console = Console(width=200, record=True)
        console.print(render_lab_run(run))
        assert word in " ".join(console.export_text().split())  # the title wraps to the table's width
