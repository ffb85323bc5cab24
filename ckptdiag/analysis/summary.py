"""A first look at a window of samples: checkpoints as the counters record them, cache and disks.

Pure functions over the sample frame that recordings and FTDC both produce. Rates come from
cumulative counters over the real time between samples, never across a gap or a restart
(``segment``), and never negative: a counter that went back gives no rate.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from ckptdiag.sources.diskstats import SECTOR_BYTES


@dataclass
class CheckpointSeen:
    """A checkpoint that completed between two samples (its counter moved)."""

    end: str  # ISO 8601 UTC of the first sample that shows it done
    duration_ms: float | None  # the server's "most recent time" after it
    bytes_written: float | None  # bytes written for checkpoint while it ran


@dataclass
class DiskPeak:
    """The busiest second of one disk in the window."""

    write_mb_s_peak: float | None
    util_pct_peak: float | None
    w_await_ms_peak: float | None


@dataclass
class Summary:
    """What a window of samples says, before any judgement (that is the analysis to come)."""

    start: str
    end: str
    samples: int
    period_s: float | None
    gaps: int
    restarts: int
    samples_without_wiredtiger: int
    checkpoints: list[CheckpointSeen] = field(default_factory=list)
    checkpoint_interval_s: float | None = None
    checkpoint_duration_ms_max: float | None = None
    dirty_pct_max: float | None = None
    used_pct_max: float | None = None
    app_evicted_pages: float | None = None
    app_cache_wait_s: float | None = None
    disks: dict[str, DiskPeak] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        """JSON-ready form."""
        return asdict(self)


def _iso(ts: pd.Timestamp) -> str:
    return ts.strftime("%Y-%m-%dT%H:%M:%S.") + f"{ts.microsecond // 1000:03d}Z"


def counter_delta(frame: pd.DataFrame, column: str) -> pd.Series:
    """Per-interval increase of a cumulative counter; NaN across gaps, restarts and decreases."""
    values = frame[column].astype("float64")
    delta = values.diff()
    broken = frame["segment"].diff().fillna(0).ne(0) | frame["gap_before"].astype(bool) | delta.lt(0)
    return delta.mask(broken)


def interval_s(frame: pd.DataFrame) -> pd.Series:
    """Seconds between each sample and the one before (the real time, not the nominal period)."""
    return frame["t"].astype("float64").diff()


def rate(frame: pd.DataFrame, column: str) -> pd.Series:
    """Per-second rate of a counter over the real intervals."""
    dt = interval_s(frame)
    out: pd.Series = counter_delta(frame, column) / dt.where(dt > 0)
    return out


def _max(series: pd.Series) -> float | None:
    value = series.max()
    return None if pd.isna(value) else float(value)


def summarize(frame: pd.DataFrame) -> Summary:
    """Summarize a sample frame (a recording's or FTDC's)."""
    if frame.empty:
        raise ValueError("no samples in the window")
    dt = interval_s(frame)
    summary = Summary(
        start=_iso(frame.index[0]),
        end=_iso(frame.index[-1]),
        samples=len(frame),
        period_s=None if len(frame) < 2 else float(dt.median()),
        gaps=int(frame["gap_before"].astype(bool).sum()),
        restarts=int(frame["segment"].max()),
        samples_without_wiredtiger=int(frame["wt_missing"].astype(bool).sum()) if "wt_missing" in frame else 0,
    )
    # checkpoints started/completed; the generation counter is the fallback (in real 4.2 data it
    # once moved by 2 in one second while the count moved by 1 twice: the count is finer)
    counter = "ckpt.count" if "ckpt.count" in frame else "ckpt.generation" if "ckpt.generation" in frame else None
    if counter is not None:
        done = counter_delta(frame, counter).fillna(0) > 0
        running = (
            frame["ckpt.running"].fillna(0).astype(bool)
            if "ckpt.running" in frame
            else (frame["ckpt.progress_state"].fillna(0).ne(0) if "ckpt.progress_state" in frame else done)
        )
        written = counter_delta(frame, "ckpt.bytes_written") if "ckpt.bytes_written" in frame else None
        ends = np.flatnonzero(done.to_numpy())
        run = running.to_numpy()
        for i in (int(x) for x in ends):
            first = i  # walk back over the samples that saw it running: its bytes are theirs too
            while first > 0 and run[first - 1] and not done.iloc[first - 1]:
                first -= 1
            bytes_ = None if written is None else float(np.nansum(written.iloc[first : i + 1].to_numpy()))
            recent = frame["ckpt.recent_ms"].iloc[i] if "ckpt.recent_ms" in frame else np.nan
            summary.checkpoints.append(
                CheckpointSeen(_iso(frame.index[i]), None if pd.isna(recent) else float(recent), bytes_)
            )
        if len(ends) > 1:
            summary.checkpoint_interval_s = float(np.median(np.diff(frame["t"].to_numpy()[ends])))
        durations = [c.duration_ms for c in summary.checkpoints if c.duration_ms is not None]
        summary.checkpoint_duration_ms_max = max(durations) if durations else None
    if "cache.max_bytes" in frame:
        cap = frame["cache.max_bytes"].where(frame["cache.max_bytes"] > 0)
        if "cache.dirty_bytes" in frame:
            summary.dirty_pct_max = _max(100 * frame["cache.dirty_bytes"] / cap)
        if "cache.bytes" in frame:
            summary.used_pct_max = _max(100 * frame["cache.bytes"] / cap)
    if "cache.app_evicted_pages" in frame:
        summary.app_evicted_pages = float(np.nansum(counter_delta(frame, "cache.app_evicted_pages")))
    if "cache.app_wait_time_us" in frame:
        summary.app_cache_wait_s = float(np.nansum(counter_delta(frame, "cache.app_wait_time_us"))) / 1e6
    devices = sorted({c.split(".")[1] for c in frame.columns if c.startswith("disk.")})
    for dev in devices:
        col = f"disk.{dev}."
        write_mb = rate(frame, col + "wr_sectors") * SECTOR_BYTES / 2**20 if col + "wr_sectors" in frame else None
        util = (rate(frame, col + "tot_ticks") / 10).clip(upper=100) if col + "tot_ticks" in frame else None
        await_ = None
        if col + "wr_ticks" in frame and col + "wr_ios" in frame:
            ios = counter_delta(frame, col + "wr_ios")
            await_ = counter_delta(frame, col + "wr_ticks") / ios.where(ios > 0)
        summary.disks[dev] = DiskPeak(
            None if write_mb is None else _max(write_mb),
            None if util is None else _max(util),
            None if await_ is None else _max(await_),
        )
    return summary
