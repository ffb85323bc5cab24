"""The window in a few hundred equal time buckets, for the reports' sparklines and charts."""

from __future__ import annotations

import numpy as np
import pandas as pd

from ckptdiag.analysis.episode_table import Episodes
from ckptdiag.analysis.thresholds import MIN_BASELINE_OPS

TIMELINE_POINTS = 600
FINE = 8  # fine buckets a final one, at most, as the window streams
_FIGURES = ("ops_s", "ops_s_max", "ops_done", "ops_time", "dirty_pct", "disk_mb_s", "write_lat_ms", "wc_wait_ms")
_LOWEST = {"ops_s"}
_SUMMED = {"ops_done", "ops_time"}


class TimelineTally:
    """The window in fine buckets of 2**k seconds as it streams (k grows as the window does, so
    that at most ``FINE`` x ``points`` exist), each with its lowest, highest and summed figures and
    its earliest sample's time; :meth:`timeline` puts them in ``points`` equal buckets. Where a
    fine bucket holds one sample (windows of up to ``FINE`` x ``points`` samples) the result is
    exactly the equal buckets of the samples themselves."""

    def __init__(self, points: int = TIMELINE_POINTS) -> None:
        self.points = points
        self.k = -10  # 2**-10 s to begin with
        self.base: int | None = None
        self.first: np.ndarray = np.empty(0)
        self.values: dict[str, np.ndarray] = {}
        self.samples = 0

    def add(self, d: pd.DataFrame, disk: str | None, own: slice) -> None:
        """The ``own`` rows of a derived frame."""

        def col(name: str) -> np.ndarray:  # the column's own rows (not d.iloc: a frame made each block)
            return d[name].to_numpy(dtype="float64")[own]

        t = col("t")
        if not t.size:
            return
        self.samples += t.size
        ops = col("ops_s")
        dt = col("dt") if "dt" in d else np.full(t.size, np.nan)
        weight = np.where(np.isfinite(ops) & np.isfinite(dt) & (dt > 0), dt, 0.0)
        nan = np.full(t.size, np.nan)
        disk_column = f"disk.{disk}.wmb_s"
        figures = {
            "ops_s": ops,
            "ops_s_max": ops,
            "ops_done": np.where(weight > 0, ops, 0.0) * weight,
            "ops_time": weight,
            "dirty_pct": col("dirty_pct"),
            "disk_mb_s": col(disk_column) if disk and disk_column in d else nan,
            "write_lat_ms": col("write_lat_ms"),
            "wc_wait_ms": col("wc_wait_ms") if "wc_wait_ms" in d else nan,
        }
        if self.base is None:
            self.base = int(np.floor(t[0] / 2.0**self.k))
            self._resize(1)
        while int(np.floor(t[-1] / 2.0**self.k)) - self.base >= FINE * self.points:
            self._coarsen()
        keys = np.floor(t / 2.0**self.k).astype(np.int64) - self.base
        if int(keys[-1]) >= self.first.size:
            self._resize(int(keys[-1]) + 1)
        step = np.diff(keys, prepend=keys[0] - 1)
        # keys rise with time: each run of one key is one bucket's (else every sample on its own)
        runs = np.flatnonzero(step) if bool((step >= 0).all()) else None
        _merge(np.fmin, self.first, keys, runs, t)
        for name, values in figures.items():
            _merge(_reduce(name), self.values[name], keys, runs, values)

    def _resize(self, n: int) -> None:
        grown = n - self.first.size
        self.first = np.concatenate((self.first, np.full(grown, np.nan)))
        for name in _FIGURES:
            self.values[name] = np.concatenate((self.values.get(name, np.empty(0)), _blank(name, grown)))

    def _coarsen(self) -> None:
        """Buckets twice as wide: each pair merged (their edges are the wider ones' edges)."""
        assert self.base is not None
        keys = (self.base + np.arange(self.first.size)) // 2
        base = int(keys[0])
        keys = keys - base
        n = int(keys[-1]) + 1
        first = np.full(n, np.nan)
        np.fmin.at(first, keys, self.first)
        for name in _FIGURES:
            merged = _blank(name, n)
            _reduce(name).at(merged, keys, self.values[name])
            self.values[name] = merged
        self.first, self.base, self.k = first, base, self.k + 1

    def timeline(self, start: float, end: float, episodes: Episodes) -> pd.DataFrame:
        """The window from ``start`` to ``end`` in at most ``points`` equal time buckets: lowest,
        time-weighted mean and highest ops/s (dips must show), highest dirty %, disk MB/s, write
        latency and write-concern wait, and whether a checkpoint or a stall touched the bucket."""
        span = max(end - start, 1e-9)
        n = int(min(self.points, max(self.samples, 1)))
        held = np.isfinite(self.first)
        bucket = np.minimum(((self.first[held] - start) / span * n).astype(np.int64), n - 1)
        out = pd.DataFrame(index=range(n))
        for name in _FIGURES:
            merged = _blank(name, n)
            _reduce(name).at(merged, bucket, self.values[name][held])
            out[name] = merged
        seen = np.zeros(n, dtype=bool)
        seen[bucket] = True
        with np.errstate(invalid="ignore", divide="ignore"):
            mean = np.where(out["ops_time"] > 0, out["ops_done"] / out["ops_time"], np.nan)
        out = out.drop(columns=["ops_done", "ops_time"])
        out["ops_s_mean"] = mean
        out.loc[~seen, :] = np.nan
        out["t"] = start + np.arange(n) * span / n
        stop = np.where(episodes.known("end"), episodes.floats("end"), end)
        first = np.minimum((episodes.floats("start") - start) / span * n, n - 1).astype(np.int64)  # toward 0
        last = np.minimum((stop - start) / span * n, n - 1).astype(np.int64)
        out["checkpoint"] = _touched(first, last, n, np.ones(len(episodes), dtype=bool))
        out["stall"] = _touched(first, last, n, episodes.flags("impact.stall"))
        result: pd.DataFrame = out
        return result


def _touched(first: np.ndarray, last: np.ndarray, n: int, which: np.ndarray) -> np.ndarray:
    """The buckets ``which`` episodes touch, each from bucket ``first`` to ``last`` (as the
    slice ``[max(first, 0) : last + 1]`` of ``n`` buckets: a ``last`` before the first bucket
    counts from the end, as a slice does), counted all at once (a window holds ~70,000)."""
    lo = np.maximum(first, 0)
    hi = last + 1
    hi = np.where(hi < 0, np.maximum(hi + n, 0), np.minimum(hi, n))
    held = which & (lo < hi)
    steps = np.zeros(n + 1, dtype=np.int64)
    np.add.at(steps, lo[held], 1)
    np.add.at(steps, hi[held], -1)
    touched: np.ndarray = np.cumsum(steps[:-1]) > 0
    return touched


def _merge(reduce: np.ufunc, into: np.ndarray, keys: np.ndarray, runs: np.ndarray | None, values: np.ndarray) -> None:
    """``reduce`` each sample's value into its bucket ``keys`` (``runs``: where each bucket's
    samples begin when the keys rise): the lowest and highest a run at once (``ufunc.at`` took a
    call per sample), a sum sample by sample (in the order the buckets always added them)."""
    if reduce is np.add or runs is None:
        reduce.at(into, keys, values)
        return
    at = keys[runs]
    into[at] = reduce(into[at], reduce.reduceat(values, runs))


def _blank(name: str, n: int) -> np.ndarray:
    """``n`` buckets holding no sample of a figure: no time summed, no value seen."""
    return np.full(n, 0.0 if name in _SUMMED else np.nan)


def _reduce(name: str) -> np.ufunc:
    """How a figure's samples make a bucket's: the lowest, the sum, or the highest (NaN passed over)."""
    return np.fmin if name in _LOWEST else np.add if name in _SUMMED else np.fmax


def timeline(d: pd.DataFrame, episodes: Episodes, disk: str | None, points: int) -> pd.DataFrame:
    """:class:`TimelineTally` of one frame."""
    tally = TimelineTally(points)
    tally.add(d, disk, slice(None))
    t = d["t"].to_numpy(dtype="float64")
    return tally.timeline(float(t[0]), float(t[-1]), episodes)


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
