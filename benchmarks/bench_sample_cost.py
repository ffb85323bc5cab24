"""Client CPU per sample and bytes per sample, against a full serverStatus.

Connects to the loopback replay server (its own process) serving a real 8.2 serverStatus and
runs the sampler's per-tick work N times: serverStatus request and decode, /proc/diskstats read,
catalogue extraction, JSON line, gzip write. CPU is this process's (time.process_time), so the
server's work is not counted. Targets: <= 2 ms CPU per sample; recording bytes per sample <= 25 %
of a full serverStatus.

    python benchmarks/bench_sample_cost.py [--samples 2000]
"""

from __future__ import annotations

import argparse
import gzip
import json
import sys
import tempfile
import time
from pathlib import Path

import bson
from bson import json_util

sys.path.insert(0, str(Path(__file__).parent))
from _server import DEFAULT_DOC, report, start, stop

from ckptdiag.recording import RecordingWriter, build_sample
from ckptdiag.sources.connection import ConnectOptions
from ckptdiag.sources.diskstats import read_diskstats
from ckptdiag.sources.mongo import MongoSource


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--samples", type=int, default=2000)
    parser.add_argument(
        "--unfiltered", action="store_true", help="the server sends every section (it ignores the filter)"
    )
    parser.add_argument(
        "--without-reader", action="store_true", help="replies read as lazy documents (no compiled reader)"
    )
    args = parser.parse_args()
    if args.without_reader:
        from ckptdiag.sources import mongo

        mongo._bsonpick = None
    full = json_util.loads(DEFAULT_DOC.read_text())
    proc, uri = start(honour_filter=not args.unfiltered)
    try:
        source = MongoSource(ConnectOptions(uri=uri))
        source.connect()
        with tempfile.TemporaryDirectory() as tmp:
            out = Path(tmp) / "cost.jsonl.gz"
            writer = RecordingWriter(out)
            for _ in range(50):  # warm up the connection pool and caches
                source.sample()
            cpu0, wall0 = time.process_time(), time.perf_counter()
            for seq in range(args.samples):
                disks = {k: v for k, v in read_diskstats().items() if not k.startswith(("loop", "ram"))}
                doc = source.sample()
                writer.write(
                    build_sample(doc, seq=seq, wall=time.time(), mono=time.monotonic(), rtt_ms=1.0, disks=disks),
                    time.monotonic(),
                )
            cpu = time.process_time() - cpu0
            wall = time.perf_counter() - wall0
            writer.close()
            gz_bytes = out.stat().st_size
            lines = gzip.decompress(out.read_bytes()).splitlines()
        source.close()
    finally:
        stop(proc)
    line_bytes = sum(len(x) + 1 for x in lines) / len(lines)
    full_bson = len(bson.encode(full))
    full_json = len(json.dumps(json.loads(json_util.dumps(full)), separators=(",", ":")))
    report(
        "sample_cost",
        {
            "samples": args.samples,
            "server_honours_filter": not args.unfiltered,
            "reply_reader": "lazy documents" if args.without_reader else "compiled",
            "server_version": full["version"],
            "cpu_ms_per_sample": round(cpu * 1000 / args.samples, 3),
            "wall_ms_per_sample": round(wall * 1000 / args.samples, 3),
            "full_serverstatus_bson_bytes": full_bson,
            "full_serverstatus_json_bytes": full_json,
            "recording_line_bytes": round(line_bytes),
            "recording_gz_bytes_per_sample": round(gz_bytes / args.samples),
            "line_vs_full_bson_pct": round(100 * line_bytes / full_bson, 2),
            "gz_vs_full_bson_pct": round(100 * gz_bytes / args.samples / full_bson, 2),
        },
    )


if __name__ == "__main__":
    main()
