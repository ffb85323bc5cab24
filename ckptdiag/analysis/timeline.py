"""The window in a few hundred equal time buckets, for the reports' sparklines and charts."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from ckptdiag.analysis.results import Episode
from ckptdiag.analysis.thresholds import MIN_BASELINE_OPS

TIMELINE_POINTS = 600


def timeline(d: pd.DataFrame, episodes: Sequence[Episode], disk: str | None, points: int) -> pd.DataFrame:
    """The window in at most ``points`` equal time buckets: lowest, time-weighted mean and highest
    ops/s (dips must show), highest dirty %, disk MB/s, write latency and write-concern wait, and
    whether a checkpoint or a stall touched the bucket."""
    t = d["t"].to_numpy()
    span = max(float(t[-1] - t[0]), 1e-9)
    n = int(min(points, max(t.size, 1)))
    bucket = np.minimum(((t - t[0]) / span * n).astype(np.int64), n - 1)
    ops = d["ops_s"].to_numpy(dtype="float64")
    dt = d["dt"].to_numpy(dtype="float64") if "dt" in d else np.full(t.size, np.nan)
    weight = np.where(np.isfinite(ops) & np.isfinite(dt) & (dt > 0), dt, 0.0)
    frame = pd.DataFrame(
        {
            "bucket": bucket,
            "ops_s": ops,
            "ops_done": np.where(weight > 0, ops, 0.0) * weight,
            "ops_time": weight,
            "dirty_pct": d["dirty_pct"].to_numpy(),
            "disk_mb_s": d[f"disk.{disk}.wmb_s"].to_numpy() if disk else np.nan,
            "write_lat_ms": d["write_lat_ms"].to_numpy(),
            "wc_wait_ms": d["wc_wait_ms"].to_numpy() if "wc_wait_ms" in d else np.nan,
        }
    )
    out = frame.groupby("bucket").agg(
        ops_s=("ops_s", "min"),
        ops_s_max=("ops_s", "max"),
        ops_done=("ops_done", "sum"),
        ops_time=("ops_time", "sum"),
        dirty_pct=("dirty_pct", "max"),
        disk_mb_s=("disk_mb_s", "max"),
        write_lat_ms=("write_lat_ms", "max"),
        wc_wait_ms=("wc_wait_ms", "max"),
    )
    with np.errstate(invalid="ignore", divide="ignore"):
        out["ops_s_mean"] = np.where(out["ops_time"] > 0, out["ops_done"] / out["ops_time"], np.nan)
    out = out.drop(columns=["ops_done", "ops_time"]).reindex(range(n))
    out["t"] = t[0] + np.arange(n) * span / n
    ckpt = np.zeros(n, dtype=bool)
    stall = np.zeros(n, dtype=bool)
    for e in episodes:
        end = e.end if e.end is not None else float(t[-1])
        lo = int(min((e.start - t[0]) / span * n, n - 1))
        hi = int(min((end - t[0]) / span * n, n - 1))
        ckpt[max(lo, 0) : hi + 1] = True
        if e.stall:
            stall[max(lo, 0) : hi + 1] = True
    out["checkpoint"] = ckpt
    out["stall"] = stall
    result: pd.DataFrame = out.reset_index(drop=True)
    return result


def ops_line(tl: pd.DataFrame) -> tuple[str, str]:
    """Which ops/s to draw, and its label: the lowest in each bucket (a checkpoint's dip shows),
    unless the load is intermittent (most buckets with load also hold idle seconds, as between
    a batch job's bursts: their lowest is 0 throughout), then the time-weighted mean."""
    with np.errstate(invalid="ignore"):
        busy = tl["ops_s_max"].to_numpy(dtype="float64") >= MIN_BASELINE_OPS
        idle_too = busy & (tl["ops_s"].to_numpy(dtype="float64") < MIN_BASELINE_OPS)
    if busy.any() and 2 * int(idle_too.sum()) > int(busy.sum()):
        return "ops/s (mean)", "ops_s_mean"
    return "ops/s (min)", "ops_s"
