"""The per-sample figures the diagnosis reads, as named float64 arrays (one data disk's among them)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd


@dataclass(frozen=True)
class Columns:
    """One array per figure of the derived frame (see :func:`ckptdiag.analysis.series.derive`), all
    of the same length; the disk's figures are the chosen data disk's (NaN without one)."""

    t: np.ndarray
    dt: np.ndarray
    ops_s: np.ndarray
    writes_s: np.ndarray
    write_lat_ms: np.ndarray
    write_p99_ms: np.ndarray
    read_lat_ms: np.ndarray
    read_p99_ms: np.ndarray
    dirty_pct: np.ndarray
    used_pct: np.ndarray
    updates_pct: np.ndarray
    app_evict: np.ndarray
    app_wait_ms: np.ndarray
    wtickets_avail: np.ndarray
    queue_writers: np.ndarray
    disk_wmb_s: np.ndarray
    disk_w_s: np.ndarray
    disk_util_pct: np.ndarray
    disk_w_await_ms: np.ndarray
    disk_aqu_sz: np.ndarray
    repl_lag_s: np.ndarray
    throttle_ms: np.ndarray
    host_cpu_pct: np.ndarray
    ckpt_starts: np.ndarray  # checkpoints begun in the interval (NaN: not counted)
    cache_max_bytes: np.ndarray
    seam: np.ndarray  # 1: a gap or restart before the row (no rate across it)

    @classmethod
    def of(cls, d: pd.DataFrame, disk: str | None) -> Columns:
        """The columns of the derived frame ``d``, with ``disk``'s figures."""
        nan = np.full(len(d), np.nan)

        def col(name: str) -> np.ndarray:
            return d[name].to_numpy(dtype="float64") if name in d else nan

        def disk_col(figure: str) -> np.ndarray:
            return col(f"disk.{disk}.{figure}") if disk else nan

        return cls(
            t=col("t"),
            dt=col("dt"),
            ops_s=col("ops_s"),
            writes_s=col("writes_s"),
            write_lat_ms=col("write_lat_ms"),
            write_p99_ms=col("write_p99_ms"),
            read_lat_ms=col("read_lat_ms"),
            read_p99_ms=col("read_p99_ms"),
            dirty_pct=col("dirty_pct"),
            used_pct=col("used_pct"),
            updates_pct=col("updates_pct"),
            app_evict=col("app_evict"),
            app_wait_ms=col("app_wait_ms"),
            wtickets_avail=col("wtickets_avail"),
            queue_writers=col("queue_writers"),
            disk_wmb_s=disk_col("wmb_s"),
            disk_w_s=disk_col("w_s"),
            disk_util_pct=disk_col("util_pct"),
            disk_w_await_ms=disk_col("w_await_ms"),
            disk_aqu_sz=disk_col("aqu_sz"),
            repl_lag_s=col("repl_lag_s"),
            throttle_ms=col("throttle_ms"),
            host_cpu_pct=col("host_cpu_pct"),
            ckpt_starts=col("ckpt_starts"),
            cache_max_bytes=col("cache_max_bytes"),
            seam=col("seam"),
        )
