"""Lab scenarios against their own ground truth: does `stall` stall and `healthy` not?

Runs each scenario through `ckptdiag demo`'s pipeline (engine in its own process, recorded over
the wire) for its default duration and prints, per scenario, the baseline and every checkpoint's
worst second: writes/s against the baseline, p99 against the baseline, and whether it counts as a
stall (writes/s <= 60 % and p99 >= 10x). Takes about 5 minutes.

    python benchmarks/bench_lab_scenarios.py [--scenarios healthy,stall]
"""

from __future__ import annotations

import argparse
import json
import tempfile
from pathlib import Path

from ckptdiag.lab.run import run_scenario
from ckptdiag.lab.scenarios import get_scenario


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--scenarios", default="healthy,stall")
    parser.add_argument("--duration", type=float, default=None)
    args = parser.parse_args()
    for name in args.scenarios.split(","):
        scenario = get_scenario(name)
        with tempfile.TemporaryDirectory() as tmp:
            run = run_scenario(
                scenario, scenario.config, args.duration or scenario.duration_s, Path(tmp) / f"{name}.jsonl.gz"
            )
        s = run.summary
        print(
            json.dumps(
                {
                    "benchmark": "lab_scenario",
                    "scenario": name,
                    "baseline_writes_s": s.baseline_ops,
                    "baseline_p99_ms": s.baseline_p99_ms,
                    "mean_writes_s": s.mean_ops,
                    "stalls": s.stalls,
                    "checkpoints": [
                        {
                            "duration_s": c.duration_s and round(c.duration_s, 2),
                            "writes_ratio": c.ops_ratio and round(c.ops_ratio, 2),
                            "p99_ratio": c.p99_ratio and round(c.p99_ratio, 1),
                            "max_ms": c.max_ms and round(c.max_ms),
                            "stall": c.stall,
                        }
                        for c in s.checkpoints
                    ],
                }
            )
        )


if __name__ == "__main__":
    main()
