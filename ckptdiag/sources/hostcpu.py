"""The host's CPU time from /proc/stat, kept as FTDC keeps it (``systemMetrics.cpu.<field>_ms``):
was the server's host itself busy when writes stalled?

Recorded once a sample when the server runs on this host (the same rule as its disks), as
metrics ``host.cpu.<field>_ms`` beside the catalogue's; FTDC files carry the same fields.
"""

from __future__ import annotations

import os
from pathlib import Path

from ckptdiag.model.hostcpu import FIELDS, PREFIX


def parse_proc_stat(text: str, ticks_per_s: float = 100.0) -> dict[str, float]:
    """The aggregate ``cpu`` line of /proc/stat as ``host.cpu.<field>_ms`` (empty if absent).

    >>> parse_proc_stat("cpu  100 0 50 800 50 0 0 0 0 0\\ncpu0 1 2 3 4")["host.cpu.idle_ms"]
    8000.0
    """
    for line in text.splitlines():
        parts = line.split()
        if parts and parts[0] == "cpu":
            values = [float(v) for v in parts[1 : 1 + len(FIELDS)]]
            return {PREFIX + name: v * 1000.0 / ticks_per_s for name, v in zip(FIELDS, values, strict=False)}
    return {}


def read_host_cpu(path: Path = Path("/proc/stat")) -> dict[str, float]:
    """This host's CPU time so far (empty where /proc/stat cannot be read)."""
    try:
        text = path.read_text()
    except OSError:
        return {}
    return parse_proc_stat(text, float(os.sysconf("SC_CLK_TCK")))
