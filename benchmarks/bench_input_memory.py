"""Peak memory of `ckptdiag report` on one input file, against the file's size: real FTDC files,
a day-long recording, and hostile files built to make a reader allocate (a zlib bomb, a chunk that
claims 2**31 samples, a recording of one huge line).

    python benchmarks/bench_input_memory.py

Prints, per file: its size, the peak RSS of the report process, the peak less the same process
on a tiny file (the interpreter, pandas and numpy), and that extra as a multiple of the size.
The documented bound (docs/benchmarks.md) is checked at the end.
"""

from __future__ import annotations

import datetime as dt
import gzip
import json
import struct
import subprocess
import sys
import tempfile
import zlib
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))

# the bounds this benchmark checks, by kind: extra memory <= fixed MB + multiple x the file's size.
# FTDC: the file's bytes, one chunk at its caps (64 MiB inflated, its values) and one 100k-row
# piece; a recording: its text and the window's frame (a gzip recording inflates ~12x).
BOUNDS = {"ftdc": (200.0, 12.0), "recording": (200.0, 5.0), "recording.gz": (200.0, 60.0)}


def kind(path: Path) -> str:
    if ".jsonl" not in path.name:
        return "ftdc"
    return "recording.gz" if path.name.endswith(".gz") else "recording"


def peak_mb(path: Path) -> float:
    """Peak RSS in MB of ``ckptdiag report PATH -f json`` (the report itself thrown away)."""
    proc = subprocess.run(
        ["/usr/bin/time", "-f", "%M", sys.executable, "-m", "ckptdiag", "report", str(path), "-f", "json",
         "--fail-on", "never"],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    return int(proc.stderr.strip().splitlines()[-1]) / 1024


def hostile(d: Path) -> list[Path]:
    import bson

    t0 = dt.datetime(2026, 11, 1, tzinfo=dt.timezone.utc)
    ref = bson.encode({"start": t0, "serverStatus": {"a": 1}})
    meta = bson.encode({"_id": t0, "type": 0, "doc": {}})
    body = ref + struct.pack("<II", 2, 1) + b"\x00" * (400 << 20)
    bomb = struct.pack("<I", len(ref) + 10) + zlib.compress(body, 9)  # 400 MB of zeros behind a small header
    many = struct.pack("<I", len(ref) + 10) + zlib.compress(ref + struct.pack("<II", 2, 2**31) + b"\x00\x7f")
    out = []
    for name, data in (("metrics.zlib-bomb", bomb), ("metrics.2e31-samples", many)):
        path = d / name
        path.write_bytes(meta + bson.encode({"_id": t0, "type": 1, "data": bson.Binary(data)}))
        out.append(path)
    line = d / "one-huge-line.jsonl"
    header = {"type": "header", "format": "ckptdiag-recording", "format_version": 1}
    line.write_text(json.dumps(header) + "\n" + '{"type":"sample","t":1,"m":{"x":' + "1" * (50 << 20) + "}}\n")
    out.append(line)
    return out


def main() -> None:
    from ftdc_writer import SimServer, write_ftdc
    from synth import Server, write_recording

    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        d = Path(tmp)
        tiny = d / "tiny.jsonl"
        write_recording(Server(seconds=30).frame(), tiny)
        base = peak_mb(tiny)
        day = d / "day.jsonl.gz"
        plain = d / "day.jsonl"
        write_recording(Server(seconds=86_400).frame(), plain)
        day.write_bytes(gzip.compress(plain.read_bytes()))
        synthetic = d / "metrics.synthetic-6h"
        write_ftdc(
            synthetic,
            SimServer(checkpoints=[(60.0 * k, 60.0 * k + 2) for k in range(360)]),
            [float(i) for i in range(21_600)],
        )
        files = [day, plain, synthetic, *hostile(d)]
        shared = REPO.parent / "shared" / "data" / "ftdc"
        if shared.is_dir():
            real = [
                p
                for p in shared.rglob("*")
                if p.is_file() and "metrics." in p.name and "not-mongod" not in p.name and p.suffix != ".json"
            ]
            largest = sorted(real, key=lambda p: p.stat().st_size)[-3:]
            joined = d / "metrics.three-real-files-joined"  # an FTDC file is its documents in a row
            joined.write_bytes(b"".join(p.read_bytes() for p in largest))
            files += [*largest, joined]
        for path in files:
            size_mb = path.stat().st_size / 2**20
            peak = peak_mb(path)
            extra = max(peak - base, 0.0)
            fixed, multiple = BOUNDS[kind(path)]
            rows.append(
                (
                    path.name,
                    size_mb,
                    peak,
                    extra,
                    extra / size_mb if size_mb else 0.0,
                    extra <= fixed + multiple * size_mb,
                )
            )
    print(f"baseline (a 30-sample recording): {base:.0f} MB; bounds (fixed MB, x size): {BOUNDS}")
    print(f"{'file':<60} {'size MB':>8} {'peak MB':>8} {'extra MB':>9} {'x size':>7}  within its bound")
    for name, size, peak, extra, multiple, ok in rows:
        print(f"{name[-60:]:<60} {size:8.1f} {peak:8.0f} {extra:9.0f} {multiple:7.1f}  {'yes' if ok else 'NO'}")
    sys.exit(0 if all(r[-1] for r in rows) else 1)


if __name__ == "__main__":
    main()
