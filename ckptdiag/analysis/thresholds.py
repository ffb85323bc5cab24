"""The diagnosis' yardstick: every threshold, in one place (documented in docs/analysis.md).

* baseline: samples at least ``BASELINE_CLEAR_BEFORE_S`` before and ``BASELINE_CLEAR_AFTER_S``
  after every episode, within ``BASELINE_WINDOW_S`` before the episode (the load it interrupted:
  the server's load changes over a day), else around it, falling back to the whole window's when
  fewer than ``BASELINE_MIN_SAMPLES`` remain;
* the load an episode interrupts is the time-weighted operations of the ``LOAD_BEFORE_S`` before
  it (at least the one sample before it, however coarse): a batch that ended ten seconds before a
  checkpoint was not interrupted by it, and 0.1 s samples of a burst are weighed by their tenth;
* an episode's impact is read over the samples whose interval it touches, plus one (requests it
  delayed complete in the next second): worst throughput, worst latency, disk peaks, evictions;
* a **stall**: throughput in its worst second at most ``STALL_OPS_RATIO`` of the baseline while the
  write latency (p99 when histograms are recorded, else the mean) is at least
  ``STALL_LATENCY_RATIO`` times the baseline (or no write completed at all), on a server doing at
  least ``MIN_BASELINE_OPS`` operations a second; or writes froze: their latency in a second of it
  reached ``STALL_WAIT_MS`` and ``STALL_WAIT_RATIO`` times the baseline, whatever the throughput
  (a freeze of a second, sampled once a second, falls across two intervals and the operations
  queued behind it complete inside them: neither interval's throughput falls far, the latency
  shows it; where the freeze lies against the samples decides the throughput, never the wait); or
  application threads waited for cache space
  ``STALL_APP_WAIT_MS`` or more during it. The load must come back: if the median throughput of
  the ``RECOVERY_WINDOW_S`` after it stays under ``RECOVERY_RATIO`` of the baseline, the client
  went away (the workload ended), and that is not a stall;
* an episode **hurts** (short of a stall) when throughput falls to ``HURT_OPS_RATIO`` of the
  baseline; a latency rise of ``HURT_LATENCY_RATIO`` times or more is named in the summary but
  does not change the verdict on its own (p99 rises in most checkpoints of a healthy server);
* verdict ``critical``: at least ``CRITICAL_MIN_STALLS`` stalls that are at least
  ``CRITICAL_STALL_SHARE`` of the episodes (a single episode that stalls, when it is the only one);
  ``warn``: any stall, episodes that hurt in ``WARN_HURT_SHARE`` of them, dirty cache at or over the
  dirty trigger, or application threads evicting; else ``ok``.
"""

from __future__ import annotations

BASELINE_CLEAR_BEFORE_S = 2.0
BASELINE_CLEAR_AFTER_S = 3.0
BASELINE_WINDOW_S = 300.0
BASELINE_MIN_SAMPLES = 10
IMPACT_GRACE_S = 1.0
RECOVERY_WINDOW_S = 10.0
LOAD_BEFORE_S = 3.0  # the load a checkpoint interrupts: the operations of the seconds just before it
RECOVERY_RATIO = 0.5
MIN_BASELINE_OPS = 20.0
STALL_OPS_RATIO = 0.6
STALL_LATENCY_RATIO = 2.0
STALL_APP_WAIT_MS = 500.0
STALL_WAIT_MS = 500.0  # writes waited this long (p99, or the mean where no histogram is kept) ...
STALL_WAIT_RATIO = 10.0  # ... and this many times the baseline: they froze, whatever the throughput
HURT_OPS_RATIO = 0.8
HURT_LATENCY_RATIO = 1.5
CRITICAL_MIN_STALLS = 2
CRITICAL_STALL_SHARE = 0.25
WARN_HURT_SHARE = 0.25
UTIL_SATURATED_PCT = 90.0
SLOW_REPLY_MS = 1000.0
UPDATES_NEAR_TARGET = 0.95  # eviction starts at the target: the last sample before shows just under it

# from mongod's log alone, a checkpoint this long is a warning: no counter says what it cost (with
# FTDC or a recording its cost is measured instead, and the length alone decides nothing)
LOG_LONG_CHECKPOINT_S = 5.0

# the host's CPUs (all processes) this busy in a stall or a checkpoint that hurt: the server may
# have waited for a CPU, a confounder its own counters cannot show (analysis/evidence.py, stalls.py)
HOST_BUSY_PCT = 90.0
