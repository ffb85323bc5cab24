"""Figures between two consecutive samples, for the live status line (no pandas on the hot path)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from ckptdiag.analysis.stats import p99_bound_ms
from ckptdiag.model.catalogue import checkpoint_running
from ckptdiag.model.disk import DiskCounters, disk_rates

OPS = ("ops.insert", "ops.query", "ops.update", "ops.delete", "ops.getmore")


@dataclass(frozen=True, slots=True)
class Instant:
    """What the live status shows for the latest interval; ``None`` where it cannot be known."""

    checkpoint_running: bool | None
    dirty_pct: float | None
    used_pct: float | None
    ops_s: float | None
    disk_write_mb_s: float | None
    disk_util_pct: float | None
    app_evictions_s: float | None
    write_p99_ms: float | None = None  # from the interval's latency histogram (lower bucket bound)
    checkpoints: float | None = None  # checkpoints the server has begun since it started


def _rate(prev: Mapping[str, Any], curr: Mapping[str, Any], key: str, dt: float) -> float | None:
    a, b = prev.get(key), curr.get(key)
    if a is None or b is None or b < a:
        return None  # missing, or reset by a restart
    return float(b - a) / dt


def instant(prev: Mapping[str, Any] | None, curr: Mapping[str, Any]) -> Instant:
    """Live figures from two recording samples (``prev`` may be None for the first one)."""
    m = curr.get("m", {})
    max_bytes = m.get("cache.max_bytes")
    dirty = m.get("cache.dirty_bytes")
    used = m.get("cache.bytes")
    running = checkpoint_running(m)
    ops_s = write_mb = util = app = p99 = None
    if prev is not None:
        p99 = _interval_p99_ms(prev.get("hist") or {}, curr.get("hist") or {})
        pm = prev.get("m", {})
        dt = max(float(curr["mono"]) - float(prev["mono"]), 1e-3)
        if running is None and "ckpt.generation" in m and "ckpt.generation" in pm:
            running = m["ckpt.generation"] != pm["ckpt.generation"]
        rates = [_rate(pm, m, k, dt) for k in OPS]
        ops_s = sum(r for r in rates if r is not None) if any(r is not None for r in rates) else None
        app = _rate(pm, m, "cache.app_evicted_pages", dt)
        pd, cd = prev.get("disk") or {}, curr.get("disk") or {}
        figures = [disk_rates(DiskCounters.from_list(pd[d]), DiskCounters.from_list(cd[d]), dt) for d in cd if d in pd]
        if figures:
            write_mb = sum(f.wmb_s for f in figures)
            util = max(f.util_pct for f in figures)
    return Instant(
        checkpoint_running=running,
        dirty_pct=100.0 * dirty / max_bytes if dirty is not None and max_bytes else None,
        used_pct=100.0 * used / max_bytes if used is not None and max_bytes else None,
        ops_s=ops_s,
        disk_write_mb_s=write_mb,
        disk_util_pct=util,
        app_evictions_s=app,
        write_p99_ms=p99,
        checkpoints=m.get("ckpt.count", m.get("ckpt.generation")),
    )


def _interval_p99_ms(prev: Mapping[str, Any], curr: Mapping[str, Any]) -> float | None:
    """p99 write latency of the interval, by the report's rule (:func:`p99_bound_ms`); None without
    writes, or where the cumulative counts went back (a restart)."""
    before = {int(b): int(c) for b, c in prev.get("writes") or []}
    now = {int(b): int(c) for b, c in curr.get("writes") or []}
    bounds = sorted(before.keys() | now.keys())
    delta = np.array([[now.get(b, 0) - before.get(b, 0) for b in bounds]], dtype="float64")
    if not bounds or (delta < 0).any():
        return None
    p99 = float(p99_bound_ms(np.array(bounds, dtype="float64"), delta)[0])
    return None if np.isnan(p99) else p99
