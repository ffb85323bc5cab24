"""A first look at a window of samples: checkpoints as the counters record them, cache and disks.

Pure functions over the sample frame that recordings and FTDC both produce. Rates come from
cumulative counters over the real time between samples, never across a gap or a restart
(``segment``), and never negative: a counter that went back gives no rate.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from ckptdiag.sources.diskstats import SECTOR_BYTES, TICKS_WRAP


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


def counter_delta(frame: pd.DataFrame, column: str, wrap: int | None = None) -> pd.Series:
    """Per-interval increase of a cumulative counter; NaN across gaps, restarts and decreases.

    With ``wrap``, a decrease inside a segment is a counter that wrapped at that modulus (the
    kernel's 32-bit I/O tick counters, as iostat and ``disk_rates`` read them), not a reset.
    """
    values = frame[column].astype("float64")
    delta = values.diff()
    seam = frame["segment"].diff().fillna(0).ne(0) | frame["gap_before"].astype(bool)
    if wrap is not None:
        return (delta % wrap).mask(seam)
    return delta.mask(seam | delta.lt(0))


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


def summarize(frame: pd.DataFrame, carried: bool = False) -> Summary:
    """Summarize a sample frame (a recording's or FTDC's).

    ``carried``: the first row is the last row of the previous piece, there only so that rates
    and checkpoints across the seam are seen; it is not counted again.
    """
    if frame.empty:
        raise ValueError("no samples in the window")
    dt = interval_s(frame)
    own = frame.iloc[1:] if carried else frame
    summary = Summary(
        start=_iso(own.index[0]),
        end=_iso(own.index[-1]),
        samples=len(own),
        period_s=None if len(frame) < 2 else float(dt.median()),
        gaps=int(own["gap_before"].astype(bool).sum()),
        restarts=int(frame["segment"].max() - frame["segment"].min()),
        samples_without_wiredtiger=int(own["wt_missing"].astype(bool).sum()) if "wt_missing" in own else 0,
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
            await_ = counter_delta(frame, col + "wr_ticks", wrap=TICKS_WRAP) / ios.where(ios > 0)
        summary.disks[dev] = DiskPeak(
            None if write_mb is None else _max(write_mb),
            None if util is None else _max(util),
            None if await_ is None else _max(await_),
        )
    return summary


def summarize_pieces(pieces: Iterable[pd.DataFrame], mark: Callable[[pd.DataFrame], pd.DataFrame]) -> Summary:
    """Summarize a window that arrives a piece at a time (memory bounded by a piece).

    Each piece is joined to the last row of the one before and re-marked with ``mark`` (segments,
    gaps), so that rates, restarts and checkpoints across the seam count exactly once.
    """
    total: Summary | None = None
    last: pd.DataFrame | None = None
    for piece in pieces:
        if last is not None:
            piece = piece[piece["t"] > float(last["t"].iloc[0])]  # an interim file repeats the archive's end
            if piece.empty:
                continue
        joined = piece if last is None else mark(pd.concat([last, piece]))
        part = summarize(joined, carried=last is not None)
        total = part if total is None else _merge(total, part)
        last = piece.iloc[[-1]]
    if total is None:
        raise ValueError("no samples in the window")
    ends = [pd.Timestamp(c.end).timestamp() for c in total.checkpoints]
    total.checkpoint_interval_s = float(np.median(np.diff(ends))) if len(ends) > 1 else None
    return total


def _merge(a: Summary, b: Summary) -> Summary:
    def top(x: float | None, y: float | None) -> float | None:
        return y if x is None else x if y is None else max(x, y)

    def add(x: float | None, y: float | None) -> float | None:
        return y if x is None else x if y is None else x + y

    disks = dict(a.disks)
    for dev, peak in b.disks.items():
        old = disks.get(dev)
        disks[dev] = (
            peak
            if old is None
            else DiskPeak(
                top(old.write_mb_s_peak, peak.write_mb_s_peak),
                top(old.util_pct_peak, peak.util_pct_peak),
                top(old.w_await_ms_peak, peak.w_await_ms_peak),
            )
        )
    return Summary(
        start=a.start,
        end=b.end,
        samples=a.samples + b.samples,
        period_s=a.period_s if a.period_s is not None else b.period_s,
        gaps=a.gaps + b.gaps,
        restarts=a.restarts + b.restarts,
        samples_without_wiredtiger=a.samples_without_wiredtiger + b.samples_without_wiredtiger,
        checkpoints=a.checkpoints + b.checkpoints,
        checkpoint_duration_ms_max=top(a.checkpoint_duration_ms_max, b.checkpoint_duration_ms_max),
        dirty_pct_max=top(a.dirty_pct_max, b.dirty_pct_max),
        used_pct_max=top(a.used_pct_max, b.used_pct_max),
        app_evicted_pages=add(a.app_evicted_pages, b.app_evicted_pages),
        app_cache_wait_s=add(a.app_cache_wait_s, b.app_cache_wait_s),
        disks=disks,
    )
