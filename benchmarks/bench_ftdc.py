"""FTDC decoding speed and memory, on the real files in ../shared/data/ftdc.

1. Every real file, decoded into the sample frame with the catalogue's metrics and the disks
   (selected metrics, as `report` does): MB of FTDC input per second, single core.
2. A 250 MB diagnostic.data directory (copies of the largest real files, renamed as mongod
   names them), reported in one process (CKPTDIAG_JOBS=1) and with the default worker processes:
   wall time and the process tree's peak memory (summed PSS; summed RSS as an upper bound).
   Targets: >= 25 MB/s; <= 4 s with both cores; peak memory < 500 MB across the processes.

    python benchmarks/bench_ftdc.py [--dir-mb 250]
"""

from __future__ import annotations

import argparse
import contextlib
import os
import shutil
import struct
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))
from _measure import run_tree
from _server import REPO, report

from ckptdiag.sources.ftdc import FileReport, FtdcError, read_file, read_ftdc
from ckptdiag.workflows.workers import workers_for

FTDC = REPO.parent / "shared" / "data" / "ftdc"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--dir-mb", type=int, default=250)
    parser.add_argument(
        "--consecutive",
        action="store_true",
        help="one server's directory in time order: each copy moved in time to follow the one before "
        "(the default copies overlap in time, and all but the first few files' samples are dropped)",
    )
    parser.add_argument("--skip-files", action="store_true", help="only the directory")
    args = parser.parse_args()
    if not FTDC.is_dir():
        sys.exit("benchmark needs ../shared/data/ftdc")
    files = sorted(p for p in FTDC.rglob("*") if p.is_file() and not p.name.endswith((".json", ".tsv")))
    largest = sorted(files, key=lambda p: p.stat().st_size)[-6:]

    if not args.skip_files:
        files_benchmark(largest)
    directory_benchmark(largest, args.dir_mb, args.consecutive)


def files_benchmark(largest: list[Path]) -> None:
    """The largest real files, selected metrics, one at a time; warm (imports done), best of 3."""
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


def directory_benchmark(largest: list[Path], dir_mb: int, consecutive: bool) -> None:
    """A full-size diagnostic.data directory, reported as `ckptdiag report` does, in a child
    process so that its peak memory is its own."""
    with tempfile.TemporaryDirectory() as tmp:
        d = Path(tmp) / "diagnostic.data"
        d.mkdir()
        total, n = 0, 0
        at_ms: int | None = None
        while total < dir_mb * 1e6:
            src = largest[n % len(largest)]
            dst = d / f"metrics.2026-01-01T00-{n // 60:02d}-{n % 60:02d}Z-00000"
            if consecutive:
                at_ms = moved_copy(src, dst, at_ms)
            else:
                shutil.copyfile(src, dst)
            total += dst.stat().st_size
            n += 1
        # one process, then the workers (the default): interleaved, timed alone (best of 3), then
        # once more each with the memory polled
        runs: dict[str, list[dict[str, float]]] = {"1": [], "default": []}
        memory: dict[str, dict[str, float]] = {}
        cmd = [sys.executable, "-m", "ckptdiag", "report", str(d), "-f", "json", "-o", str(Path(tmp) / "r.json")]
        for k in range(4):
            for jobs in runs:
                env = {k: v for k, v in os.environ.items() if k != "CKPTDIAG_JOBS"}
                if jobs != "default":
                    env["CKPTDIAG_JOBS"] = jobs
                if k < 3:
                    runs[jobs].append(run_tree(cmd, env, every=None))
                else:
                    memory[jobs] = run_tree(cmd, env)
    for jobs, measured in runs.items():
        best = min(measured, key=lambda m: m["seconds"])
        report(
            "ftdc_directory_report",
            {
                "directory": "consecutive" if consecutive else "overlapping copies",
                # by default the parent judges on a core of its own, workers derive on the others
                "jobs": jobs if jobs == "1" else f"{workers_for(n + 1)} processes (default)",
                "mb": round(total / 1e6, 1),
                "files": n,
                "seconds": best["seconds"],
                "seconds_all": [m["seconds"] for m in measured],
                "mb_per_s": round(total / 1e6 / best["seconds"], 2),
                "peak_pss_mb": memory[jobs]["peak_pss_mb"],
                "peak_rss_sum_mb": memory[jobs]["peak_rss_sum_mb"],
            },
        )


def moved_copy(src: Path, dst: Path, at_ms: int | None) -> int:
    """``src`` written to ``dst`` moved in time to begin at ``at_ms`` (None: where it is): every
    document's _id and each chunk's reference ``start``/``end`` (the samples' times are deltas
    from them). Returns the time just after its last sample."""
    import zlib

    import bson
    from bson.codec_options import CodecOptions, DatetimeConversion
    from bson.datetime_ms import DatetimeMS

    options: CodecOptions[dict[str, Any]] = CodecOptions(datetime_conversion=DatetimeConversion.DATETIME_MS)
    docs = list(bson.decode_all(src.read_bytes(), options))
    # the first *sample* begins the copy: a file's first document need not be its earliest (one of
    # the largest real files opens with a metadata document 16 days after its first chunk)
    chunks = [int(doc["_id"]) for doc in docs if doc.get("type") == 1]
    first = min(chunks) if chunks else int(docs[0]["_id"])
    shift = 0 if at_ms is None else at_ms - first
    out = bytearray()
    end = first + shift
    for doc in docs:
        doc["_id"] = DatetimeMS(int(doc["_id"]) + shift)
        if doc.get("type") == 1:
            data = bytes(doc["data"])
            raw = bytearray(zlib.decompress(data[4:]))
            for key, find in ((b"\x09start\x00", raw.find), (b"\x09end\x00", raw.rfind)):
                at = find(key) + len(key)
                (value,) = struct.unpack_from("<q", raw, at)
                struct.pack_into("<q", raw, at, value + shift)
            doc["data"] = bson.Binary(data[:4] + zlib.compress(bytes(raw)))
            samples = struct.unpack_from("<I", raw, int.from_bytes(raw[:4], "little") + 4)[0] + 1
            end = max(end, int(doc["_id"]) + samples * 1000)
        out += bson.encode(doc, codec_options=options)
    dst.write_bytes(bytes(out))
    return end + 1000


if __name__ == "__main__":
    main()
