"""`ckptdiag demo --verify`, several times: do the recommended settings fix the lab's stall?

Each run: the scenario as it is, its diagnosis and recommendations, then the same scenario with
the recommended settings (their lab overrides; with --only, that rule's alone). Judged as
`demo --verify` judges (ckptdiag/report/verify.py): the cause named before gone or reduced,
write p99 inside checkpoints or the worst throughput dip at least 2x better, mean throughput
within 10 % of before, and the seconds stalled and writes lost per hour and p99 between
checkpoints no worse beyond the noise of the same settings run twice (--same measures it).
Prints one JSON line per run (with the advice's predictions beside what the after run measured)
and a last line with how many runs passed. ~5.5 minutes a run (~11 with --duration 300).

    python benchmarks/bench_verify.py [--runs 3] [--scenario stall] [--duration 150] [--only RULE]
                                      [--same] [--keep DIR]

--same runs the scenario's own settings on both sides: the run-to-run noise the yardstick's
"not worse" tolerances are set from (docs/lab.md#noise). --keep copies each run's recordings
and ground truths into DIR.
"""

from __future__ import annotations

import argparse
import json
import shutil
import tempfile
from pathlib import Path
from typing import Any

from ckptdiag.lab.run import run_scenario
from ckptdiag.report.document import Report
from ckptdiag.report.verify import judge
from ckptdiag.workflows.lab import lab_config
from ckptdiag.workflows.report import diagnose_window


def _round(values: tuple[float | None, ...]) -> list[float | None]:
    return [None if x is None else round(x, 2) for x in values]


def _measured(report: Report) -> dict[str, Any]:
    """What ckptdiag measured of the typical checkpoint (to hold the predictions against)."""
    done = [e for e in report.dx.episodes if e.end is not None and e.duration_s]
    durations = sorted(float(e.duration_s or 0) for e in done)
    written = sorted(float(e.bytes_written) for e in done if e.bytes_written)
    return {
        "checkpoints": len(done),
        "duration_s_p50": round(durations[len(durations) // 2], 2) if durations else None,
        "bytes_p50": written[len(written) // 2] if written else None,
        "period_s": report.dx.checkpoint_period_s,
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--scenario", default="stall")
    parser.add_argument("--duration", type=float, default=None)
    parser.add_argument("--only", default=None, help="apply only this recommendation (its id)")
    parser.add_argument("--same", action="store_true", help="the same settings on both sides (noise)")
    parser.add_argument("--keep", type=Path, default=None, help="copy recordings and truths here")
    args = parser.parse_args()
    passed = 0
    for i in range(args.runs):
        scenario, config = lab_config(args.scenario, {})
        duration = args.duration or scenario.duration_s
        with tempfile.TemporaryDirectory() as tmp:
            before = run_scenario(scenario, config, duration, Path(tmp) / "before.jsonl.gz")
            report = diagnose_window((before.recording,))
            recs = report.advice.recommendations if report.advice else ()
            # as demo --verify: the proven settings; with --only, that rule's change even if it is a check
            chosen = [r for r in recs if r.lab and (r.id == args.only if args.only else r.kind == "setting")]
            overrides = {k: v for r in chosen for k, v in r.lab.items()}
            if args.same:
                overrides = {"checkpoint_s": config.checkpoint_s}  # the scenario's own: a setting it already has
            if not overrides:
                print(json.dumps({"run": i + 1, "verdict": report.dx.severity, "recommended": None}), flush=True)
                continue
            _, after_config = lab_config(args.scenario, overrides)
            after = run_scenario(scenario, after_config, duration, Path(tmp) / "after.jsonl.gz")
            after_report = diagnose_window((after.recording,))
            if args.keep:
                args.keep.mkdir(parents=True, exist_ok=True)
                for side, run in (("before", before), ("after", after)):
                    shutil.copy(run.recording, args.keep / f"run{i + 1}-{side}.jsonl.gz")
                    shutil.copy(run.truth_path, args.keep / f"run{i + 1}-{side}.truth.json")
        outcome = judge(report, after_report, before.summary, after.summary)
        passed += outcome.passed
        print(
            json.dumps(
                {
                    "run": i + 1,
                    "verdict": [report.dx.severity, after_report.dx.severity],
                    "causes": [list(outcome.causes_before), list(outcome.causes_after)],
                    "cause_fixed": outcome.cause_fixed,
                    "recommended": overrides,
                    "predicted": {r.id: dict(r.predicted) for r in chosen},
                    "measured": [_measured(report), _measured(after_report)],
                    "p99_inside_ms": _round(outcome.p99_inside_ms),
                    "dip_worst_pct": _round(outcome.dip_worst_pct),
                    "mean_writes_s": _round(outcome.mean_writes_s),
                    "stalls": [outcome.before.stalls, outcome.after.stalls],
                    "stalled_s_per_h": _round((outcome.before.stalled_s_per_h, outcome.after.stalled_s_per_h)),
                    "lost_per_h": _round((outcome.before.lost_per_h, outcome.after.lost_per_h)),
                    "p99_between_ms": _round((outcome.before.p99_between_ms, outcome.after.p99_between_ms)),
                    "worse": list(outcome.worse),
                    "pass": outcome.passed,
                    "behind": list(outcome.behind),
                }
            ),
            flush=True,
        )
    print(json.dumps({"benchmark": "verify", "scenario": args.scenario, "runs": args.runs, "passed": passed}))


if __name__ == "__main__":
    main()
