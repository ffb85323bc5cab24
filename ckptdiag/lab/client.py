"""The lab's clients: a paced request schedule, and each client's tally of its writes (their
count, latency and mongod's opLatencies histogram buckets)."""

from __future__ import annotations

import bisect
import time
from dataclasses import dataclass, field

from ckptdiag.lab.config import CLIENT_TIMEOUT_S

# mongod's opLatencies histogram lower bounds (micros): powers of two to 1024, then 2, 3, 4, 6 ... steps
HIST_BOUNDS = [0, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024]
_b = 1024
while _b < 2**40:
    HIST_BOUNDS += [_b * 2, _b * 3] if _b * 3 < 2**40 else [_b * 2]
    _b *= 2
HIST_BOUNDS = sorted(set(HIST_BOUNDS))


@dataclass
class Worker:
    """One client's writes since the truth was last read."""

    latencies: list[int] = field(default_factory=list)  # microseconds, swapped out every second
    ops: int = 0
    latency_us_total: int = 0
    hist: list[int] = field(default_factory=lambda: [0] * len(HIST_BOUNDS))


def paced(due: float, interval: float) -> tuple[int, float]:
    """Wait for a request due at ``due`` (monotonic s) -> (when it was due, as perf_counter ns; when
    the next is due). Behind schedule, the request has been waiting since it was due, as a client's
    would while the server is stalled (no coordinated omission)."""
    now = time.monotonic()
    if now < due:
        time.sleep(due - now)
        return time.perf_counter_ns(), due + interval  # on time: from the real start, not the nap's end
    if now - due > CLIENT_TIMEOUT_S:
        due = now  # those clients timed out: their requests are not served
    return time.perf_counter_ns() - int((now - due) * 1e9), due + interval


def bucket(us: int) -> int:
    """The histogram bucket of a latency of ``us`` microseconds."""
    return bisect.bisect_right(HIST_BOUNDS, us) - 1  # the last bound <= us
