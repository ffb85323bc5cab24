"""`ckptdiag report` on long recordings: 1, 6 and 24 hours of 1 Hz samples -> full JSON report.

Each recording is a server checkpointing every 60 s (tests/synth.py: the counters move as
mongod's do, every checkpoint stalls), written as `record` writes it (gzip): every metric of the
catalogue in each sample (those the synthetic server does not model are constant) and the disk's
counters, ~1.4 KB a line as a real recording's (no latency histogram: the synthetic server has
none, and made-up buckets would change the verdict). The report runs in
a child process, as a user runs it; wall time and peak RSS are the child's own. Target for 24 h
(86,400 samples): <= 2 s and <= 1 GB.

    python benchmarks/bench_report.py [--hours 1,6,24] [--without-kernels]

``--without-kernels`` runs the report as a machine without the compiled kernels would (the
numpy FTDC decoder, a JSON parse of every recording line, the second half of a long recording
parsed by a forked child): the fallback's figures. Peak RSS is the largest process's (the
child's pages it shares with its parent are counted in both); ``--tree`` runs the report once
more, polled, for the peak summed PSS of the report and its child (each page counted once).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from _measure import run_tree
from synth import Server

from ckptdiag.model import catalogue
from ckptdiag.model.disk import FIELD_NAMES
from ckptdiag.recording import RecordingWriter, header

METRICS_PREFIXES = ("ops.", "lat.", "cache.", "ckpt.")


def write_recording(path: Path, hours: float) -> int:
    """A gzip recording of ``hours`` of a stalling server; returns the sample count."""
    frame = Server(seconds=hours * 3600).frame()
    metrics = [c for c in frame.columns if c.startswith(METRICS_PREFIXES)]
    disk_cols = [f"disk.vda.{name}" for name in FIELD_NAMES[:11]]
    values = frame[metrics].to_numpy()
    # the rest of the catalogue, as record writes it: a value for every metric the server has
    padding = {m.name: 1000.0 + i for i, m in enumerate(catalogue.METRICS) if m.name not in metrics}
    disks = frame.reindex(columns=disk_cols).fillna(0).astype("int64").to_numpy()
    t = frame["t"].to_numpy()
    writer = RecordingWriter(path)
    server = {"version": "7.0.21", "host": "bench", "host_info": {"mem_size_mb": 65536, "num_cores": 16}}
    writer.write(
        header(source={"kind": "serverStatus"}, server=server, options={}, disks={"devices": ["vda"]}, created=t[0]), 0
    )
    for i in range(t.size):
        line = {
            "type": "sample",
            "seq": i,
            "t": float(t[i]),
            "mono": float(i),
            "rtt_ms": 1.0,
            "m": {**dict(zip(metrics, values[i].tolist(), strict=True)), **padding},
            "disk": {"vda": disks[i].tolist()},
        }
        writer.write(line, float(i))
    writer.close()
    return int(t.size)


WITHOUT_KERNELS = (
    "import runpy, sys; sys.modules['ckptdiag._ftdc_kernel'] = sys.modules['ckptdiag._jsonl'] = None; "
    "runpy.run_module('ckptdiag', run_name='__main__')"
)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--hours", default="1,6,24")
    parser.add_argument("--write", nargs=2, metavar=("PATH", "HOURS"), help=argparse.SUPPRESS)
    parser.add_argument("--without-kernels", action="store_true")
    parser.add_argument("--tree", action="store_true", help="also the peak summed PSS of the report's processes")
    args = parser.parse_args()
    # the kernels made unimportable in the child: every caller takes its Python path
    run = [sys.executable, "-c", WITHOUT_KERNELS] if args.without_kernels else [sys.executable, "-m", "ckptdiag"]
    if args.write:  # in a child: a big parent would lend its pages to the measured child's RSS
        print(write_recording(Path(args.write[0]), float(args.write[1])))
        return
    with tempfile.TemporaryDirectory() as tmp:
        for hours in (float(h) for h in args.hours.split(",")):
            rec = Path(tmp) / f"r{hours:g}h.jsonl.gz"
            made = subprocess.run(
                [sys.executable, __file__, "--write", str(rec), str(hours)], capture_output=True, text=True, check=True
            )
            samples = int(made.stdout)
            out = Path(tmp) / f"r{hours:g}h.json"
            t0 = time.perf_counter()
            proc = subprocess.Popen(
                [*run, "report", str(rec), "-o", str(out), "--fail-on", "never"],
                stderr=subprocess.PIPE,
                text=True,
            )
            _, status, usage = os.wait4(proc.pid, 0)  # this child's own peak RSS and CPU
            wall = time.perf_counter() - t0
            if os.waitstatus_to_exitcode(status) != 0:
                sys.exit(proc.stderr.read() if proc.stderr else "report failed")
            doc = json.loads(out.read_text())
            tree = {}
            if args.tree:
                out.unlink()
                figures = run_tree([*run, "report", str(rec), "-o", str(out), "--fail-on", "never"])
                tree = {"peak_pss_tree_mb": figures["peak_pss_mb"]}
            print(
                json.dumps(
                    {
                        "benchmark": "report_json",
                        "kernels": not args.without_kernels,
                        "hours": hours,
                        "samples": samples,
                        "recording_mb": round(rec.stat().st_size / 1e6, 1),
                        "seconds": round(wall, 2),
                        "cpu_s": round(usage.ru_utime + usage.ru_stime, 2),
                        "peak_rss_mb": round(usage.ru_maxrss / 1024),
                        **tree,
                        "checkpoints": doc["checkpoints"]["count"],
                        "severity": doc["verdict"]["severity"],
                    }
                )
            )


if __name__ == "__main__":
    main()
