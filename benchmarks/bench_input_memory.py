"""Peak memory of `ckptdiag report` on one input, per input kind, against the bound documented for
that kind: real FTDC files, a day-long recording, mongod logs (a real log with a line stamped
1970; ~1 GB of slow-query lines in a small gzip), support archives (a zip bomb), and hostile
files built to make a reader allocate (a zlib bomb, a chunk that claims 2**31 samples, a
recording of one huge line, a gzip recording of one sample repeated).

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
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))

# the bounds this benchmark checks, by kind: extra memory <= fixed MB + multiple x the measure of
# the data. FTDC: x the file's size (its bytes, one chunk at its caps: 64 MiB inflated, its values,
# and one 100k-row piece); a recording: x the text it holds (inflated: a gzip recording inflates
# ~12x as ckptdiag writes it, far more when built to); a log: x its slow operations, in MB per
# million (~170 bytes each measured), whatever the log's size or span; an archive: x the archive's
# size (it is taken out within 40x its size, then read as FTDC).
BOUNDS = {"ftdc": (200.0, 12.0), "recording": (200.0, 5.0), "log": (200.0, 250.0), "archive": (200.0, 40.0 * 12)}


def kind(path: Path) -> str:
    if path.name.endswith((".zip", ".tar.gz")):
        return "archive"
    if ".log" in path.name:
        return "log"
    return "recording" if ".jsonl" in path.name else "ftdc"


def measure(path: Path) -> float:
    """What the kind's bound multiplies, in MB (or millions of slow operations for a log)."""
    if kind(path) == "recording" and path.name.endswith(".gz"):
        with gzip.open(path, "rb") as fh:
            return sum(len(b) for b in iter(lambda: fh.read(1 << 24), b"")) / 2**20
    if kind(path) == "log":
        proc = subprocess.run(
            [sys.executable, "-m", "ckptdiag", "report", str(path), "-f", "json", "--fail-on", "never"],
            capture_output=True, text=True, check=False,
        )  # fmt: skip
        return json.loads(proc.stdout)["log"]["slow_ops"] / 1e6 if proc.returncode == 0 else 0.0
    return path.stat().st_size / 2**20


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
    out += hostile_logs_and_archives(d)
    return out


def hostile_logs_and_archives(d: Path) -> list[Path]:
    """A gzip recording of one sample repeated (~230x), a zip of zeros (a bomb), a real log with a
    start-up line stamped 1970, ~1 GB of slow-query lines in a few MB of gzip."""
    import zipfile

    from synth import Server, write_recording

    out = []
    small = write_recording(Server(seconds=30).frame(), d / "one.jsonl").read_text().splitlines()
    repeated = d / "one-sample-repeated.jsonl.gz"
    repeated.write_bytes(gzip.compress(("\n".join([small[0], *[small[5]] * 600_000]) + "\n").encode(), 9))
    out.append(repeated)
    bomb = d / "zeros.zip"
    with zipfile.ZipFile(bomb, "w", zipfile.ZIP_DEFLATED) as z, z.open("h/diagnostic.data/metrics.x", "w") as m:
        for _ in range(1024):
            m.write(b"\0" * (1 << 20))  # 1 GiB of zeros in ~1 MB
    out.append(bomb)
    real = (
        REPO.parent / "shared" / "data" / "logs" / "mtools" / "mtools__test__logfiles__mongod_4.0.10_storagestats.log"
    )
    if real.exists():
        stamped = d / "real-plus-1970.log"
        boot = "1970-01-01T00:00:05.000+0000 I CONTROL  [initandlisten] MongoDB starting : pid=1 port=27017\n"
        stamped.write_text(boot + real.read_text())
        out.append(stamped)
    slow = d / "slow-queries-1gb.log.gz"
    line: dict[str, Any]
    line = {"t": {"$date": ""}, "s": "I", "c": "COMMAND", "id": 51803, "ctx": "conn1", "msg": "Slow query",
            "attr": {"type": "command", "ns": "shop.orders", "command": {"find": "orders", "filter": {"a": 1}},
                     "planSummary": "IXSCAN { a: 1 }", "durationMillis": 150,
                     "locks": {"Global": {"timeAcquiringMicros": {"r": 900}}}}}  # fmt: skip
    t0 = dt.datetime(2026, 11, 1, tzinfo=dt.timezone.utc)
    with gzip.open(slow, "wb", compresslevel=6) as fh:
        written, n = 0, 0
        while written < 1_000_000_000:
            batch = []
            for _ in range(10_000):
                line["t"]["$date"] = (t0 + dt.timedelta(milliseconds=10 * n)).isoformat(timespec="milliseconds")
                batch.append(json.dumps(line, separators=(",", ":")))
                n += 1
            data = ("\n".join(batch) + "\n").encode()
            fh.write(data)
            written += len(data)
    out.append(slow)
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
            amount = measure(path)
            peak = peak_mb(path)
            extra = max(peak - base, 0.0)
            fixed, multiple = BOUNDS[kind(path)]
            bound = fixed + multiple * amount
            rows.append((path.name, kind(path), size_mb, amount, peak, extra, bound, extra <= bound))
    print(f"baseline (a 30-sample recording): {base:.0f} MB; bounds (fixed MB, x measure): {BOUNDS}")
    print("measure: MB of the file (FTDC, archive), MB of text (recording), millions of slow operations (log)")
    print(f"{'file':<44} {'kind':<9} {'size MB':>8} {'measure':>8} {'peak MB':>8} {'extra MB':>9} {'bound MB':>9}  ok")
    for name, k, size, amount, peak, extra, bound, ok in rows:
        shown = f"{name[-44:]:<44} {k:<9} {size:8.1f} {amount:8.2f} {peak:8.0f} {extra:9.0f} {bound:9.0f}"
        print(f"{shown}  {'yes' if ok else 'NO'}")
    sys.exit(0 if all(r[-1] for r in rows) else 1)


if __name__ == "__main__":
    main()
