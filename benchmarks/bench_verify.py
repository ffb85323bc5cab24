"""`ckptdiag demo --verify`, several times: do the recommended settings fix the lab's stall?

Each run: the scenario as it is, its diagnosis and recommendations, then the same scenario with
the recommended settings (their lab overrides). Judged on the lab's own ground truth (the
workload's per-second writes and latency): p99 write latency inside checkpoints (the median
over checkpoints of their worst second) cut >= 2x, the throughput dip (the worst checkpoint's
worst second against the baseline) cut >= 2x, mean throughput within 10 % of before. Prints
one JSON line per run and a last line with how many runs passed. ~5.5 minutes a run.

    python benchmarks/bench_verify.py [--runs 3] [--scenario stall] [--duration 150]
"""

from __future__ import annotations

import argparse
import json
import tempfile
from pathlib import Path

from ckptdiag.lab.run import run_scenario
from ckptdiag.report.lab import truth_rows
from ckptdiag.workflows.lab import lab_config
from ckptdiag.workflows.report import diagnose_window


def _pair(a: float | None, b: float | None) -> list[float | None]:
    return [None if x is None else round(x, 2) for x in (a, b)]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--scenario", default="stall")
    parser.add_argument("--duration", type=float, default=None)
    args = parser.parse_args()
    passed = 0
    for i in range(args.runs):
        scenario, config = lab_config(args.scenario, {})
        duration = args.duration or scenario.duration_s
        with tempfile.TemporaryDirectory() as tmp:
            before = run_scenario(scenario, config, duration, Path(tmp) / "before.jsonl.gz")
            report = diagnose_window((before.recording,), None, None)
            overrides = report.advice.lab_overrides if report.advice else {}
            if not overrides:
                print(json.dumps({"run": i + 1, "verdict": report.dx.severity, "recommended": None}), flush=True)
                continue
            _, after_config = lab_config(args.scenario, overrides)
            after = run_scenario(scenario, after_config, duration, Path(tmp) / "after.jsonl.gz")
        rows = {r.name: r for r in truth_rows(before.summary, after.summary)}
        p99 = rows["write p99 inside checkpoints (p50 of their worst second)"]
        dip = rows["throughput dip (worst checkpoint)"]
        mean = rows["mean throughput"]
        ok = (
            p99.ratio is not None
            and p99.ratio <= 0.5
            and dip.before is not None
            and dip.after is not None
            and dip.before > 0
            and dip.after <= dip.before / 2
            and mean.ratio is not None
            and abs(mean.ratio - 1) <= 0.10
        )
        passed += ok
        print(
            json.dumps(
                {
                    "run": i + 1,
                    "verdict": report.dx.severity,
                    "recommended": overrides,
                    "p99_inside_ms": _pair(p99.before, p99.after),
                    "dip_worst_pct": _pair(dip.before, dip.after),
                    "mean_writes_s": _pair(mean.before, mean.after),
                    "stalls": _pair(rows["stalled checkpoints"].before, rows["stalled checkpoints"].after),
                    "pass": ok,
                }
            ),
            flush=True,
        )
    print(json.dumps({"benchmark": "verify", "runs": args.runs, "passed": passed}))


if __name__ == "__main__":
    main()
