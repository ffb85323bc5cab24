"""Reading mongod logs: MB/s of log text and peak memory, for JSON (4.4+) and legacy text.

    python benchmarks/bench_log.py [--mb 200]

Builds a log of about ``--mb`` MB by repeating a real one from ../shared/data/logs (the hatchet
sample, JSON, mostly slow queries; the keyhole 4.0.3 log, legacy text) and reads it end to end
(lines parsed, events extracted). Prints one JSON line per format.
"""

from __future__ import annotations

import argparse
import gzip
import json
import resource
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
LOGS = REPO.parent / "shared" / "data" / "logs"


def main() -> None:
    from ckptdiag.model.logevents import LogReport
    from ckptdiag.sources.logevents import scan_logs

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=float, default=200.0, help="MB of log per format")
    args = parser.parse_args()
    if not LOGS.is_dir():
        sys.exit("needs ../shared/data/logs")
    replica = LOGS / "public" / "mew-sathita+Assignment2_ReplSet"
    sources = {
        # the common case: a replica-set member's log, mostly connections, elections, checkpoints
        "json (replica-set member, 0.7 % slow queries)": b"".join(p.read_bytes() for p in sorted(replica.iterdir())),
        # the worst case: a log that is nearly all slow queries (each parsed in full)
        "json (98 % slow queries)": gzip.decompress((LOGS / "hatchet" / "logs__sample-mongod.log.gz").read_bytes()),
        "legacy text (4.0, 84 % slow operations)": (LOGS / "keyhole-mongod-4.0.3.log").read_bytes(),
    }
    with tempfile.TemporaryDirectory() as tmp:
        for name, text in sources.items():
            path = Path(tmp) / "bench.log"
            with open(path, "wb") as fh:
                for _ in range(max(1, int(args.mb * 2**20 / len(text)))):
                    fh.write(text)
            size = path.stat().st_size / 2**20
            report = LogReport()
            start = time.perf_counter()
            events = scan_logs([path], report)
            seconds = time.perf_counter() - start
            print(json.dumps({
                "format": name, "mb": round(size, 1), "seconds": round(seconds, 2), "mb_s": round(size / seconds, 1),
                "lines": report.lines, "slow_ops": len(events.slow_ops),
                "max_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
            }))  # fmt: skip
            path.unlink()


if __name__ == "__main__":
    main()
