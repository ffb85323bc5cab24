"""A cluster report with members decoded in worker processes against one process.

    python benchmarks/bench_cluster.py [--members 4] [--hours 6] [--runs 3] [--real]

Writes ``--members`` synthetic members (a folder per host, each with ``--hours`` of 1 Hz FTDC in
files of an hour, as a support download has them; with ``--real``, the largest real mongod FTDC
files under ../shared/data instead, a folder each, each its own server), then times ``ckptdiag report DIR -f json``
with CKPTDIAG_JOBS=1 and with the default (one worker per core), interleaved, and prints the
median wall time of each and the speed-up as one JSON line. The reports must be equal.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))


def build(root: Path, members: int, hours: int) -> None:
    from ftdc_writer import SimServer, write_ftdc

    for m in range(members):
        d = root / f"db{m}.example.net_27017" / "diagnostic.data"
        d.mkdir(parents=True)
        for h in range(hours):
            t0 = 1_700_000_000.0 + 3600 * h
            checkpoints = [(60.0 * k + 30, 60.0 * k + 32 + m) for k in range(60)]
            server = SimServer(
                checkpoints, stall_ops=100.0 if m % 2 else 1000.0, t0=t0, uptime0_ms=5_000_000 + 3_600_000 * h
            )
            name = f"metrics.{time.strftime('%Y-%m-%dT%H-%M-%SZ', time.gmtime(t0))}-00000"
            write_ftdc(d / name, server, [float(i) for i in range(3600)], host=f"db{m}.example.net", port=27017)


def build_real(root: Path, members: int) -> None:
    from ckptdiag.workflows.members import member_name

    shared = REPO.parent / "shared" / "data"
    files = [
        p
        for p in shared.rglob("*")
        if p.is_file() and "metrics." in p.name and "not-mongod" not in p.name and p.suffix not in (".json", ".csv")
    ]
    taken: set[str] = set()
    for p in sorted(files, key=lambda p: -p.stat().st_size):
        name = member_name(p)
        if name is None or name in taken:
            continue
        taken.add(name)
        d = root / name.replace(":", "_") / "diagnostic.data"
        d.mkdir(parents=True)
        (d / "metrics.2020-01-01T00-00-00Z-00000").write_bytes(p.read_bytes())
        if len(taken) == members:
            return


def run(root: Path, jobs: str | None) -> tuple[float, dict[str, object]]:
    env = dict(os.environ)
    env.pop("CKPTDIAG_JOBS", None)
    if jobs:
        env["CKPTDIAG_JOBS"] = jobs
    start = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-m", "ckptdiag", "report", str(root), "-f", "json", "--fail-on", "never"],
        capture_output=True, text=True, check=True, env=env,
    )  # fmt: skip
    seconds = time.perf_counter() - start
    doc = json.loads(proc.stdout)
    for part in (doc, *(m["report"] for m in doc["members"])):
        part.pop("generated")
    return seconds, doc


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--members", type=int, default=4)
    parser.add_argument("--hours", type=int, default=6)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--real", action="store_true", help="members from the real FTDC files in ../shared/data")
    args = parser.parse_args()
    from ckptdiag.workflows.workers import workers_for

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        if args.real:
            build_real(root, args.members)
        else:
            build(root, args.members, args.hours)
        size = sum(p.stat().st_size for p in root.rglob("metrics.*")) / 2**20
        one, many = [], []
        for _ in range(args.runs):
            s1, d1 = run(root, "1")
            s2, d2 = run(root, None)
            assert d1 == d2, "worker processes changed the report"
            one.append(s1)
            many.append(s2)
    print(
        json.dumps(
            {
                "members": args.members,
                "hours_each": args.hours,
                "ftdc_mb": round(size, 1),
                "workers": workers_for(args.members),
                "one_process_s": round(statistics.median(one), 2),
                "workers_s": round(statistics.median(many), 2),
                "speed_up": round(statistics.median(one) / statistics.median(many), 2),
            }
        )
    )


if __name__ == "__main__":
    main()
