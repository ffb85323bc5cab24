"""Checkpoint episodes: when each checkpoint ran, for how long, and what it wrote.

The evidence differs by version and is read in this order:

* the start counter (``ckpt_starts``: "transaction checkpoints" up to 7.0, "number of checkpoints
  started" from 7.1; the generation where neither exists) moves in the interval in which a
  checkpoint *begins* (verified on real 4.2 FTDC: it moves while the running flag is up);
* the running flag (up to 7.0) or the progress state (7.1+) says it is still running at a sample;
* "total time (msecs)" moves, and "most recent time" changes, in the interval in which it *ends*,
  and give its exact duration, so that a checkpoint shorter than one sample is still found and
  placed: it began in (t[i-1], t[i]] and ended in (t[k-1], t[k]], and lasted d, which pins its
  start to the overlap of (t[i-1], t[i]] and (t[k-1] - d, t[k] - d].

Without any checkpoint statistic (MMAPv1, a source that lacks them), write bursts of the busiest
disk stand in: runs of seconds far above its usual write rate.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

# A disk write burst: above max(2x the median, median + 6 MAD, 1 MB/s)
BURST_MEDIAN_FACTOR = 2.0
BURST_MADS = 6.0
BURST_MIN_MB_S = 1.0


@dataclass
class Episode:
    """One checkpoint (or, without checkpoint statistics, one disk write burst)."""

    start: float  # epoch seconds
    end: float | None  # None: still running when the window ends
    duration_s: float | None
    bytes_written: float | None
    evidence: str  # "counters", "running-flag" or "disk-burst"
    exact_duration: bool = False  # the server's own "most recent time", not sample spacing
    truncated: bool = False  # began before the window (or a gap) did
    rows: tuple[int, int] = (0, 0)  # first and last sample whose interval it touches
    impact: dict[str, float | None] = field(default_factory=dict)
    stall: bool = False
    reasons: list[str] = field(default_factory=list)


def _place(a0: float, a1: float, b0: float, b1: float, d: float | None) -> tuple[float, float]:
    """Start and end of a checkpoint begun in (a0, a1] and ended in (b0, b1], lasting d."""
    if d is None:
        start = (a0 + a1) / 2 if np.isfinite(a0) else a1
        return start, max(start, (b0 + b1) / 2 if np.isfinite(b0) else b1)
    lo, hi = max(a0, b0 - d), min(a1, b1 - d)
    if not np.isfinite(lo):
        lo = hi
    start = (lo + hi) / 2 if lo <= hi else float(np.clip(b1 - d, a0 if np.isfinite(a0) else a1, a1))
    return start, start + d


def find_episodes(d: pd.DataFrame) -> list[Episode]:
    """Every checkpoint in the derived frame ``d`` (see :func:`ckptdiag.analysis.series.derive`)."""
    if d.empty:
        return []
    starts = d["ckpt_starts"].to_numpy()
    running = d["ckpt_running"].to_numpy()
    if np.isnan(starts).all() and np.isnan(running).all():
        return disk_bursts(d)
    return _from_counters(d)


def _from_counters(d: pd.DataFrame) -> list[Episode]:
    t = d["t"].to_numpy()
    n = t.size
    starts = np.nan_to_num(d["ckpt_starts"].to_numpy(), nan=0.0)
    running = d["ckpt_running"].to_numpy()
    total = d["ckpt_total_ms"].to_numpy()
    recent = d["ckpt_recent_ms"].to_numpy()
    written = d["ckpt_bytes"].to_numpy()
    valid = ~np.isnan(d["dt"].to_numpy()) & ~np.isnan(d["ckpt_starts"].to_numpy())
    has_flag = not np.isnan(running).all()
    prev_t = np.concatenate(([-np.inf], t[:-1]))
    up = running == 1
    # a run of the flag that no start explains (it began before the window or inside a gap)
    first_up = up & ~np.concatenate(([False], up[:-1]))
    orphan = first_up & ((starts == 0) | ~valid)
    events = np.flatnonzero((starts > 0) | orphan)
    episodes: list[Episode] = []
    for pos, event in enumerate(events):
        i = int(event)
        nxt = int(events[pos + 1]) if pos + 1 < events.size else n
        count = max(int(starts[i]), 1)
        truncated = bool(orphan[i] and starts[i] == 0)
        # where it ended: the first sample (from i on) at which the flag is down or, after i,
        # total time moved, whichever comes first (the server records the time before it clears
        # its progress state: the lab's 8.0 engine showed the state still set in the sample whose
        # total had moved); never past the next start. Total time moving at i itself may be an
        # earlier checkpoint's end, so it counts only there with the flag down.
        k: int | None = None
        moved = np.flatnonzero(np.nan_to_num(total[i:nxt], nan=0.0) > 0)
        if has_flag:
            down = np.flatnonzero(running[i:nxt] == 0)
            ends = [i + int(down[0])] if down.size else []
            ends += [i + int(m) for m in moved[moved > 0][:1]]
            if ends:
                k = min(ends)
            elif nxt < n:
                k = nxt
        else:
            k = i + int(moved[0]) if moved.size else (i if nxt < n or i < n - 1 else None)
        if k is None:  # still running at the end of the window
            a0 = t[i] if truncated else prev_t[i]
            start = t[i] if truncated else (a0 + t[i]) / 2 if np.isfinite(a0) else t[i]
            episodes.append(
                Episode(start, None, None, _bytes(written, i, n - 1), "counters", truncated=truncated, rows=(i, n - 1))
            )
            continue
        finished_ms = total[k] if np.isfinite(total[k]) else np.nan
        if np.isfinite(finished_ms) and finished_ms > 0 and np.isfinite(recent[k]):
            duration: float | None = recent[k] / 1000
        elif np.isfinite(finished_ms):
            duration = finished_ms / 1000  # 0: it took under a millisecond (or had nothing to write)
        else:
            duration = None
        a0, a1 = (t[i], t[i]) if truncated else (prev_t[i], t[i])
        # more than one start in one interval: the earlier ones were short; share the time
        share = None
        if count > 1 and np.isfinite(finished_ms) and duration is not None:
            share = max(finished_ms / 1000 - duration, 0.0) / (count - 1)
        for _ in range(count - 1):
            s, e = _place(a0, a1, a0, a1, share)
            episodes.append(
                Episode(s, e, None if share is None else e - s, None, "counters", rows=(i, i), reasons=["shared"])
            )
        start, end = _place(a0, a1, prev_t[k], t[k], duration)
        if truncated:
            start = min(start, t[i])
        episodes.append(
            Episode(
                start,
                end,
                end - start,
                _bytes(written, i, k),
                "counters" if starts[i] > 0 else "running-flag",
                exact_duration=duration is not None and not truncated,
                truncated=truncated,
                rows=(i, k),
            )
        )
    return episodes


def _bytes(written: np.ndarray, first: int, last: int) -> float | None:
    part = written[first : last + 1]
    return None if np.isnan(part).all() else float(np.nansum(part))


def disk_bursts(d: pd.DataFrame) -> list[Episode]:
    """Runs of seconds in which the busiest disk wrote far above its usual rate."""
    disks = [c for c in d.columns if c.startswith("disk.") and c.endswith(".wmb_s")]
    if not disks:
        return []
    w = d[disks[0]].to_numpy()
    t = d["t"].to_numpy()
    finite = w[np.isfinite(w)]
    if finite.size < 10:
        return []
    med = float(np.median(finite))
    mad = float(np.median(np.abs(finite - med)))
    threshold = max(BURST_MEDIAN_FACTOR * med, med + BURST_MADS * 1.4826 * mad, BURST_MIN_MB_S)
    hot = np.nan_to_num(w, nan=0.0) > threshold
    edges = np.diff(np.concatenate(([0], hot.astype(np.int8), [0])))
    out = []
    for first, stop in zip(np.flatnonzero(edges == 1), np.flatnonzero(edges == -1), strict=True):
        last = int(stop) - 1
        start = t[first - 1] if first > 0 else t[first]
        dt = d["dt"].to_numpy()[first : last + 1]
        mb = float(np.nansum(w[first : last + 1] * dt))
        out.append(
            Episode(
                float(start), float(t[last]), float(t[last] - start), mb * 2**20, "disk-burst", rows=(int(first), last)
            )
        )
    return out


def period(episodes: list[Episode]) -> tuple[float | None, float | None]:
    """The typical interval between episode starts (median, s) and its regularity (the
    coefficient of variation of the intervals: 0 is a metronome)."""
    starts = np.array([e.start for e in episodes if not e.truncated], dtype="float64")
    if starts.size < 2:
        return None, None
    gaps = np.diff(np.sort(starts))
    gaps = gaps[gaps > 0]
    if gaps.size == 0:
        return None, None
    med = float(np.median(gaps))
    cv = float(np.std(gaps) / np.mean(gaps)) if gaps.size > 1 else 0.0
    return med, cv
