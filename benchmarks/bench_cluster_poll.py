"""Many members polled from one process at 1 Hz: client CPU per member-sample and tick lateness.

Starts ``--members`` loopback wire servers (mockupdb, in worker processes of their own so their CPU
is not ours) replaying a real 8.2 serverStatus, then records all of them with the cluster recorder
(one sampler thread per member, one shared tick grid) for ``--duration`` seconds. Members are
treated as remote (no /proc/diskstats read per member: a fleet's members are on other hosts), so
the figure is the polling itself: request, decode, catalogue, JSON line, gzip write.

Prints, as one JSON line: CPU of this process per member-sample (time.process_time over the
sampling, after the connects), and each sample's lateness against its absolute deadline on the
shared grid (p50, p99, max over every member's samples; the worst member's p99), skipped ticks.

    python benchmarks/bench_cluster_poll.py --members 10 [--duration 60] [--server-procs 2]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from _server import report, start_many


def start_servers(members: int, procs: int) -> tuple[list[subprocess.Popen[str]], list[str]]:
    """``members`` replay servers spread over ``procs`` processes; their host:port."""
    children, hosts = [], []
    for k in range(procs):
        count = members // procs + (1 if k < members % procs else 0)
        if count:
            child, uris = start_many(count)
            hosts += [uri.removeprefix("mongodb://") for uri in uris]
            children.append(child)
    return children, hosts


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(int(q * (len(ordered) - 1) + 0.5), len(ordered) - 1)]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--members", type=int, default=10)
    parser.add_argument("--duration", type=float, default=60.0)
    parser.add_argument("--server-procs", type=int, default=2)
    args = parser.parse_args()

    from ckptdiag.clock import SystemClock
    from ckptdiag.recording import read_recording
    from ckptdiag.recording.cluster import ClusterRecorder
    from ckptdiag.sources.connection import ConnectOptions
    from ckptdiag.sources.devices import DiskPlan
    from ckptdiag.sources.discovery import MemberAddress, Topology
    from ckptdiag.sources.mongo import MongoSource

    children, hosts = start_servers(args.members, args.server_procs)
    topology = Topology("replica set", tuple(MemberAddress(h, "bench") for h in hosts))
    cpu_at_grid: list[float] = []  # this process's CPU when the grid starts (the connects done)
    try:
        with tempfile.TemporaryDirectory() as tmp:
            recorder = ClusterRecorder(
                discover=lambda known: topology,
                source_for=lambda a: MongoSource(ConnectOptions(uri=f"mongodb://{a.host}").for_member(a.host)),
                plan_for=lambda kind, info: DiskPlan((), False),
                header_source=lambda a: {"kind": "serverStatus"},
                out_dir=Path(tmp),
                clock=SystemClock(),
                warn=lambda line: None,
                duration=args.duration,
            )

            def note_grid() -> None:
                recorder.grid_ready.wait()
                cpu_at_grid.append(time.process_time())

            threading.Thread(target=note_grid, daemon=True).start()
            result = recorder.run()
            cpu = time.process_time() - cpu_at_grid[0]
            lateness: list[float] = []
            worst_p99 = drift = 0.0
            skipped = 0
            for member in result.members:
                assert member.path is not None
                rec = read_recording(member.path)
                late, ticks_skipped = [], 0
                for s in rec.samples:
                    ticks_skipped += s.get("skipped", 0)
                    tick = s["seq"] + ticks_skipped
                    late.append((s["mono"] - recorder.grid_start - tick) * 1000)
                skipped += ticks_skipped
                lateness += late
                worst_p99 = max(worst_p99, percentile(late, 0.99))
                drift = max(drift, late[-1])  # the last tick as late as the first ones: no drift
    finally:
        for child in children:
            assert child.stdin is not None
            child.stdin.close()
            child.wait(timeout=60)
    samples = result.samples
    report(
        "cluster_poll",
        {
            "members": args.members,
            "duration_s": args.duration,
            "member_samples": samples,
            "expected_member_samples": args.members * (int(args.duration) + 1),
            "skipped_ticks": skipped,
            "cpu_ms_per_member_sample": round(cpu * 1000 / samples, 3),
            "cpu_pct_of_one_core": round(100 * cpu / args.duration, 1),
            "lateness_ms_p50": round(statistics.median(lateness), 2),
            "lateness_ms_p99": round(percentile(lateness, 0.99), 2),
            "lateness_ms_max": round(max(lateness), 2),
            "worst_member_lateness_ms_p99": round(worst_p99, 2),
            "last_sample_lateness_ms_max": round(drift, 2),
        },
    )


if __name__ == "__main__":
    main()
