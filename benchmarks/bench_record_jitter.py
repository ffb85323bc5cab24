"""Tick jitter and drift of `ckptdiag record` over a long run (default 10 minutes).

Runs the real CLI against the loopback replay server and reads the recording back: each sample's
monotonic time against its absolute deadline (start + seq * interval) gives the lateness; the last
sample's lateness is the drift. Target: p99 lateness <= 20 ms, no drift.

    python benchmarks/bench_record_jitter.py [--duration 600]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from _server import report, start, stop

from ckptdiag.recording import read_recording


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--duration", type=int, default=600)
    args = parser.parse_args()
    proc, uri = start()
    try:
        with tempfile.TemporaryDirectory() as tmp:
            out = Path(tmp) / "jitter.jsonl.gz"
            subprocess.run(
                [sys.executable, "-m", "ckptdiag", "record", "--uri", uri, "-d", str(args.duration), "-o", str(out)],
                check=True,
                stdin=subprocess.DEVNULL,
            )
            rec = read_recording(out)
    finally:
        stop(proc)
    start_mono = rec.samples[0]["mono"]
    # seq counts samples; with skipped ticks the tick index is seq + skipped so far
    ticks, skipped_so_far = [], 0
    for s in rec.samples:
        skipped_so_far += s.get("skipped", 0)
        ticks.append(s["seq"] + skipped_so_far)
    late_ms = [(s["mono"] - start_mono - tick) * 1000 for s, tick in zip(rec.samples, ticks, strict=True)]
    late_sorted = sorted(late_ms)
    rtts = sorted(s["rtt_ms"] for s in rec.samples)
    report(
        "record_jitter",
        {
            "duration_s": args.duration,
            "samples": len(rec.samples),
            "skipped_ticks": skipped_so_far,
            "lateness_ms_p50": round(statistics.median(late_ms), 3),
            "lateness_ms_p99": round(late_sorted[int(0.99 * (len(late_sorted) - 1))], 3),
            "lateness_ms_max": round(late_sorted[-1], 3),
            "drift_ms_last_sample": round(late_ms[-1], 3),
            "rtt_ms_p50": rtts[len(rtts) // 2],
            "rtt_ms_p99": rtts[int(0.99 * (len(rtts) - 1))],
        },
    )


if __name__ == "__main__":
    main()
