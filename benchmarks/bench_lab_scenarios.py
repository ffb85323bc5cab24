"""Lab scenarios against their own ground truth: does `stall` stall and `healthy` not?

Runs each scenario through `ckptdiag demo`'s pipeline (engine in its own process, recorded over
the wire) for its default duration and prints, per run, the baseline and every checkpoint's
worst second: writes/s against the baseline, p99 against the baseline, and whether it counts as a
stall (writes/s <= 60 % and p99 >= 10x); then ckptdiag's verdict on the recording and how its
episodes line up with the truth. `--busy` runs a busy loop on one core beside the lab (a host
whose other work competes for the CPU). About 2.5 minutes a run.

    python benchmarks/bench_lab_scenarios.py [--scenarios healthy,stall] [--runs 1] [--busy]
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import tempfile
from pathlib import Path

from ckptdiag.lab.run import run_scenario
from ckptdiag.lab.scenarios import get_scenario
from ckptdiag.lab.truth import match
from ckptdiag.workflows.report import diagnose_window


def _spin() -> None:
    while True:
        pass


def _run(name: str, duration: float | None, busy: bool) -> dict[str, object]:
    scenario = get_scenario(name)
    spinner = multiprocessing.Process(target=_spin, daemon=True) if busy else None
    if spinner:
        spinner.start()
    try:
        with tempfile.TemporaryDirectory() as tmp:
            run = run_scenario(
                scenario, scenario.config, duration or scenario.duration_s, Path(tmp) / f"{name}.jsonl.gz"
            )
            report = diagnose_window((run.recording,))
    finally:
        if spinner:
            spinner.terminate()
    s = run.summary
    m = match(s, [(e.start, e.stall) for e in report.dx.episodes])
    return {
        "benchmark": "lab_scenario",
        "scenario": name,
        "busy_core": busy,
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
        "ckptdiag": {
            "verdict": report.dx.severity,
            "summary": report.dx.summary,
            "found": m.found,
            "flagged": m.stalls_flagged,
            "false_stalls": m.false_stalls,
            "other_stalls": [list(o.seen) for o in report.dx.other_stalls],
            "evidence": [n for n in report.dx.evidence if "host's CPUs" in n],
        },
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--scenarios", default="healthy,stall")
    parser.add_argument("--duration", type=float, default=None)
    parser.add_argument("--runs", type=int, default=1)
    parser.add_argument("--busy", action="store_true", help="a busy loop on one core beside the lab")
    args = parser.parse_args()
    for name in args.scenarios.split(","):
        for _ in range(args.runs):
            print(json.dumps(_run(name, args.duration, args.busy)), flush=True)


if __name__ == "__main__":
    main()
