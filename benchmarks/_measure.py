"""Wall time and the memory of a command's whole process tree (a parent and its workers)."""

from __future__ import annotations

import subprocess
import time
from collections.abc import Mapping

import psutil


def run_tree(cmd: list[str], env: Mapping[str, str] | None = None, every: float | None = 0.02) -> dict[str, float]:
    """Run ``cmd`` to its end, polling its process tree every ``every`` s -> seconds, and the peak
    over time of the tree's summed PSS (each shared page counted once, split between the
    processes sharing it: what the tree really holds) and summed RSS (shared pages counted in
    every process: an upper bound), in MB. Polling takes CPU from the command (on two cores it
    shows): ``every=None`` times it alone."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, env=dict(env) if env is not None else None, stdin=subprocess.DEVNULL)
    root = psutil.Process(proc.pid)
    peak_pss = peak_rss = 0.0
    if every is None:
        proc.wait()
    while proc.poll() is None:
        pss = rss = 0.0
        try:
            tree = [root, *root.children(recursive=True)]
        except psutil.Error:
            break
        for p in tree:
            try:
                info = p.memory_full_info()
            except psutil.Error:
                continue
            pss += info.pss
            rss += info.rss
        peak_pss, peak_rss = max(peak_pss, pss), max(peak_rss, rss)
        time.sleep(every or 0.02)
    seconds = time.perf_counter() - t0
    if proc.returncode != 0:
        raise subprocess.CalledProcessError(proc.returncode, cmd)
    return {
        "seconds": round(seconds, 2),
        "peak_pss_mb": round(peak_pss / 1e6),
        "peak_rss_sum_mb": round(peak_rss / 1e6),
    }
