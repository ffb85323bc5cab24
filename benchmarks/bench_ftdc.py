"""FTDC decoding speed and memory, on the real files in ../shared/data/ftdc.

1. Every real file, decoded into the sample frame with the catalogue's metrics and the disks
   (selected metrics, as `report` does): MB of FTDC input per second, single core.
2. A 250 MB diagnostic.data directory (copies of the largest real files, renamed as mongod
   names them): wall time and peak RSS. Targets: >= 25 MB/s; peak memory < 500 MB.

    python benchmarks/bench_ftdc.py [--dir-mb 250]
"""

from __future__ import annotations

import argparse
import contextlib
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from _server import REPO, report

from ckptdiag.sources.ftdc import FileReport, FtdcError, read_file, read_ftdc

FTDC = REPO.parent / "shared" / "data" / "ftdc"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--dir-mb", type=int, default=250)
    args = parser.parse_args()
    if not FTDC.is_dir():
        sys.exit("benchmark needs ../shared/data/ftdc")
    files = sorted(p for p in FTDC.rglob("*") if p.is_file() and not p.name.endswith((".json", ".tsv")))
    largest = sorted(files, key=lambda p: p.stat().st_size)[-6:]

    # 1. the largest real files, selected metrics, one at a time; warm (imports done), best of 3
    size = sum(p.stat().st_size for p in largest)
    rows = 0
    dt = 0.0
    per_file = {}
    with contextlib.suppress(FtdcError):
        read_ftdc([largest[-1]])
    for f in largest:
        best = float("inf")
        for _ in range(3):
            t0 = time.perf_counter()
            with contextlib.suppress(FtdcError):  # a file another producer wrote: not counted
                n = len(read_ftdc([f]).frame)
            best = min(best, time.perf_counter() - t0)
        rows += n
        dt += best
        per_file[f.name[:24]] = round(f.stat().st_size / 1e6 / best, 1)
    # all metrics (every slot summed), for comparison
    t1 = time.perf_counter()
    for f in largest:
        for _ in read_file(f, FileReport(str(f))):
            pass
    dt_all = time.perf_counter() - t1
    report(
        "ftdc_files",
        {
            "files": len(largest),
            "mb": round(size / 1e6, 1),
            "samples": rows,
            "mb_per_s_selected": round(size / 1e6 / dt, 2),
            "mb_per_s_per_file": per_file,
            "mb_per_s_all_metrics": round(size / 1e6 / dt_all, 2),
        },
    )

    # 2. a full-size diagnostic.data directory, reported as `ckptdiag report` does (a piece at a
    #    time), in a child process so that its peak memory is its own
    with tempfile.TemporaryDirectory() as tmp:
        d = Path(tmp) / "diagnostic.data"
        d.mkdir()
        total, n = 0, 0
        while total < args.dir_mb * 1e6:
            src = largest[n % len(largest)]
            dst = d / f"metrics.2026-01-01T00-{n // 60:02d}-{n % 60:02d}Z-00000"
            shutil.copyfile(src, dst)
            total += dst.stat().st_size
            n += 1
        t2 = time.perf_counter()
        subprocess.run(
            [sys.executable, "-m", "ckptdiag", "report", str(d), "-f", "json", "-o", str(Path(tmp) / "r.json")],
            check=True,
            stdin=subprocess.DEVNULL,
        )
        dt_dir = time.perf_counter() - t2
    peak_mb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    report(
        "ftdc_directory_report",
        {
            "mb": round(total / 1e6, 1),
            "files": n,
            "seconds": round(dt_dir, 1),
            "mb_per_s": round(total / 1e6 / dt_dir, 2),
            "peak_rss_mb": round(peak_mb),
        },
    )


if __name__ == "__main__":
    main()
