"""Run the loopback replay server (tests/wire.py) in its own process, so its CPU is not ours."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared" / "data" / "server-status"
DEFAULT_DOC = SHARED / "serverStatus_8.2.10__AdilEnaanai+iwa2026.json"

_CHILD = r"""
import sys, time
sys.path.insert(0, sys.argv[1])
from bson import json_util
from wire import ReplayServer, advancing
base = json_util.loads(open(sys.argv[2]).read())
def step(doc, n):
    doc["uptimeMillis"] = int(base["uptimeMillis"]) + 1000 * n
    doc["opcounters"]["insert"] = int(base["opcounters"]["insert"]) + 1000 * n
servers = [
    ReplayServer(base, status=advancing(step), honour_filter=sys.argv[3] == "filter").start()
    for _ in range(int(sys.argv[4]))
]
print(" ".join(s.uri for s in servers), flush=True)
sys.stdin.read()  # until the parent closes our stdin
for server in servers:
    server.stop()
"""


def start(doc: Path = DEFAULT_DOC, *, honour_filter: bool = True) -> tuple[subprocess.Popen[str], str]:
    """Start the server (``honour_filter=False``: it sends every section, as a server that ignores
    serverStatus's section filter does); returns the process and its URI. Close its stdin to stop it."""
    proc, uris = start_many(1, doc, honour_filter=honour_filter)
    return proc, uris[0]


def start_many(
    count: int, doc: Path = DEFAULT_DOC, *, honour_filter: bool = True
) -> tuple[subprocess.Popen[str], list[str]]:
    """``count`` servers in one process of their own; returns the process and their URIs."""
    if not doc.exists():
        sys.exit(f"benchmark needs the shared data: {doc.name} not found")
    mode = "filter" if honour_filter else "all"
    proc = subprocess.Popen(
        [sys.executable, "-c", _CHILD, str(REPO / "tests"), str(doc), mode, str(count)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None
    return proc, proc.stdout.readline().split()


def stop(proc: subprocess.Popen[str]) -> None:
    """Stop a server started by :func:`start`."""
    assert proc.stdin is not None
    proc.stdin.close()
    proc.wait(timeout=10)


def report(name: str, figures: dict[str, object]) -> None:
    """Print figures as one JSON line (the docs quote them)."""
    print(json.dumps({"benchmark": name, **figures}))
