"""The host's CPU time as ckptdiag records it and FTDC keeps it (``systemMetrics.cpu.<field>_ms``):
the metric names the sampler writes and the analysis reads."""

from __future__ import annotations

PREFIX = "host.cpu."
FIELDS = ("user_ms", "nice_ms", "system_ms", "idle_ms", "iowait_ms", "irq_ms", "softirq_ms", "steal_ms")
IDLE = ("idle_ms", "iowait_ms")  # a CPU waiting for I/O could run something else
