"""How many worker processes a job gets: the cores, the memory, and $CKPTDIAG_JOBS."""

from __future__ import annotations

import os

from ckptdiag.forking import jobs_asked

# what one member's report, or one FTDC file, may take (bench_input_memory.py: at most ~330 MB)
WORKER_MEMORY = 600 << 20


def workers_for(jobs: int) -> int:
    """How many worker processes ``jobs`` tasks (members, files) get: one each, bounded by the cores, by the
    memory available (:data:`WORKER_MEMORY` each), and by $CKPTDIAG_JOBS when set (1: none)."""
    import psutil

    try:  # the cores this process may run on (a container's or taskset's share), where the OS says
        cores = len(psutil.Process().cpu_affinity() or []) or (os.cpu_count() or 1)
    except (AttributeError, psutil.Error):  # macOS has no affinity
        cores = os.cpu_count() or 1
    by_memory = max(int(psutil.virtual_memory().available // WORKER_MEMORY), 1)
    cap = jobs_asked() or cores
    return max(min(jobs, cores, by_memory, cap), 1)
