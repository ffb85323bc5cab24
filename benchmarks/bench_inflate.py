"""zlib against its drop-in alternatives on real FTDC chunks: speed and byte-identical output.

Collects every metric chunk's zlib stream from the real FTDC files under ../shared/data, then
inflates them all with each library available (the standard library's zlib; ``isal``'s
``isal_zlib``; ``zlib-ng``'s ``zlib_ng``), the way ckptdiag does (a decompress object, capped at
the size the chunk's header gives). Prints, per library, MB of compressed input and of inflated
output per second (best of ``--runs``) and whether every chunk inflated to the same bytes as the
standard library's.

    python benchmarks/bench_inflate.py [--runs 5]
"""

from __future__ import annotations

import argparse
import importlib
import struct
import sys
import time
import zlib
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))
from _server import REPO, report

FTDC = REPO.parent / "shared" / "data" / "ftdc"
LIBRARIES = {"zlib": "zlib", "isal": "isal.isal_zlib", "zlib-ng": "zlib_ng.zlib_ng"}


def chunks() -> list[bytes]:
    """Every metric chunk's payload (uint32 size + zlib stream) in the real files."""
    import bson

    out = []
    for path in sorted(p for p in FTDC.rglob("*") if p.is_file() and not p.name.endswith((".json", ".tsv", ".md"))):
        buf = path.read_bytes()
        pos = 0
        while pos + 4 <= len(buf):
            (size,) = struct.unpack_from("<i", buf, pos)
            if size < 5 or pos + size > len(buf):
                break
            try:
                doc = bson.decode(buf[pos : pos + size])
            except Exception:  # noqa: BLE001 - a damaged document ends the file, as in ckptdiag
                break
            if doc.get("type") == 1 and isinstance(doc.get("data"), bytes):
                out.append(bytes(doc["data"]))
            pos += size
    return out


def inflate_all(module: Any, payloads: list[bytes]) -> list[bytes]:
    out = []
    for data in payloads:
        (expected,) = struct.unpack_from("<I", data, 0)
        out.append(module.decompressobj().decompress(memoryview(data)[4:], expected + 1))
    return out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    if not FTDC.is_dir():
        sys.exit("benchmark needs ../shared/data/ftdc")
    payloads = chunks()
    compressed = sum(len(p) for p in payloads)
    truth = inflate_all(zlib, payloads)
    inflated = sum(len(r) for r in truth)
    figures: dict[str, object] = {"chunks": len(payloads), "compressed_mb": round(compressed / 1e6, 2)}
    for name, module_name in LIBRARIES.items():
        try:
            module = importlib.import_module(module_name)
        except ImportError:
            figures[name] = "not installed"
            continue
        best = float("inf")
        for _ in range(args.runs):
            t0 = time.perf_counter()
            got = inflate_all(module, payloads)
            best = min(best, time.perf_counter() - t0)
        figures[name] = {
            "in_mb_s": round(compressed / 1e6 / best, 1),
            "out_mb_s": round(inflated / 1e6 / best, 1),
            "identical": got == truth,
        }
    report("inflate", figures)


if __name__ == "__main__":
    main()
