"""ckptdiag's FTDC reader beside another FTDC reader a DBA can install, on the same real files.

The peer is PyPI's ``pymongoftdc`` (module ``pyftdc``: "a typed reader for MongoDB FTDC metric
archives"), installed in its own virtual environment (it would shadow nothing here, but its
dependencies are its own):

    python3 -m venv peers && peers/bin/pip install pymongoftdc==0.1.1
    python benchmarks/bench_peers.py --peer-python peers/bin/python

Both read the same metrics of each of the six largest real files in ../shared/data/ftdc (the
ones ckptdiag's report needs, as FTDC names them), each in a child process of its own, one core
(the peer with ``workers=1``; also with its default worker processes): wall time and the
child's peak RSS. Then what each read is compared on the checkpoint counter (samples and
values). The Go readers (simagix's mongo-ftdc and keyhole) and mongostat could not be built
here: their modules are not served by the module proxy this machine reaches.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from _server import REPO, report

FTDC = REPO.parent / "shared" / "data" / "ftdc"
COUNTER = "serverStatus.wiredTiger.transaction.transaction checkpoints"

OURS = r"""
import json, sys
from pathlib import Path
from ckptdiag.sources.ftdc import read_ftdc
frame = read_ftdc([Path(sys.argv[1])]).frame
column = frame["ckpt.count"] if "ckpt.count" in frame else None
counter = None if column is None else [int(v) for v in column.tolist()]
print(json.dumps({"samples": len(frame), "columns": frame.shape[1],
                  "counter": None if counter is None else [len(counter), hash(tuple(counter))]}))
"""

PEER = r"""
import json, sys
from pyftdc import FTDCReader
reader = FTDCReader(sys.argv[1])
names = set(json.loads(sys.argv[2])) & set(reader.list_metrics(all_chunks=True))
workers = None if sys.argv[3] == "default" else int(sys.argv[3])
points = reader.get_metric(names, workers=workers, sort_by_timestamp=True)
counter = points.get(sys.argv[4])
counter = None if counter is None else [int(p.value) for p in counter]
print(json.dumps({"samples": max((len(v) for v in points.values()), default=0), "columns": len(points),
                  "counter": None if counter is None else [len(counter), hash(tuple(counter))]}))
"""


def wanted_names() -> list[str]:
    """The FTDC paths ckptdiag's report reads (the catalogue's every spelling), as FTDC names them."""
    from ckptdiag.model import catalogue

    return sorted("serverStatus." + ".".join(path) for path in catalogue.metric_paths())


def timed(cmd: list[str]) -> tuple[float, int, dict[str, object]]:
    """Run a child -> (seconds, its own peak RSS in MB, its JSON line: a few bytes, so that the
    pipe never fills before it is read)."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True, env={**os.environ, "PYTHONHASHSEED": "0"})
    _, status, usage = os.wait4(proc.pid, 0)
    seconds = time.perf_counter() - t0
    out = proc.stdout.read() if proc.stdout else ""
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit(f"failed: {cmd[:3]}")
    return seconds, usage.ru_maxrss // 1024, json.loads(out.splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--peer-python", required=True, help="the interpreter pymongoftdc is installed in")
    args = parser.parse_args()
    files = sorted(p for p in FTDC.rglob("*metrics.*") if p.is_file() and "interim" not in p.name)
    largest = sorted(files, key=lambda p: p.stat().st_size)[-6:]
    names = json.dumps(wanted_names())
    totals: dict[str, float] = {"ckptdiag": 0.0, "pymongoftdc, 1 worker": 0.0, "pymongoftdc, default workers": 0.0}
    peaks: dict[str, int] = dict.fromkeys(totals, 0)
    agree = 0
    for f in largest:
        ours_s, ours_mb, ours = timed([sys.executable, "-c", OURS, str(f)])
        totals["ckptdiag"] += ours_s
        peaks["ckptdiag"] = max(peaks["ckptdiag"], ours_mb)
        for label, workers in (("pymongoftdc, 1 worker", "1"), ("pymongoftdc, default workers", "default")):
            peer_s, peer_mb, peer = timed([args.peer_python, "-c", PEER, str(f), names, workers, COUNTER])
            totals[label] += peer_s
            peaks[label] = max(peaks[label], peer_mb)
        same = ours["counter"] == peer["counter"]
        agree += same
        report(
            "peer_file",
            {
                "file": f.name[:40],
                "mb": round(f.stat().st_size / 1e6, 2),
                "ckptdiag_s": round(ours_s, 2),
                "ckptdiag_samples": ours["samples"],
                "pymongoftdc_s": round(peer_s, 2),
                "pymongoftdc_samples": peer["samples"],
                "pymongoftdc_metrics": peer["columns"],
                "checkpoint_counter_same": same,
            },
        )
    mb = sum(f.stat().st_size for f in largest) / 1e6
    report(
        "peers",
        {
            "files": len(largest),
            "mb": round(mb, 1),
            **{f"{k}_s": round(v, 2) for k, v in totals.items()},
            **{f"{k}_peak_mb": v for k, v in peaks.items()},
            "checkpoint_counter_same_in_files": agree,
        },
    )


if __name__ == "__main__":
    main()
