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

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ckptdiag.analysis.results import Episode

# A disk write burst: above max(2x the median, median + 6 MAD, 1 MB/s)
BURST_MEDIAN_FACTOR = 2.0
BURST_MADS = 6.0
BURST_MIN_MB_S = 1.0


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
    return _from_counters(_Counters.of(d))


@dataclass(frozen=True)
class _Counters:
    """The checkpoint columns of a derived frame, as float64 arrays (times and durations in
    float64: a float32 duration added to epoch seconds would round the time to +-64 s)."""

    t: np.ndarray
    prev_t: np.ndarray  # the sample before each (-inf for the first)
    starts: np.ndarray  # checkpoints begun in each interval (0 where unknown)
    running: np.ndarray  # 1/0 flag or progress state, NaN where not recorded
    total_ms: np.ndarray  # ms of checkpoints finished in each interval
    recent_ms: np.ndarray  # the server's "most recent time" at each sample
    written: np.ndarray  # bytes written by checkpoints in each interval
    valid: np.ndarray  # an interval with a start count (not across a gap or restart)

    @classmethod
    def of(cls, d: pd.DataFrame) -> _Counters:
        """The columns of ``d``."""

        def col(name: str) -> np.ndarray:
            return d[name].to_numpy(dtype="float64")

        t = col("t")
        raw_starts = col("ckpt_starts")
        return cls(
            t=t,
            prev_t=np.concatenate(([-np.inf], t[:-1])),
            starts=np.nan_to_num(raw_starts, nan=0.0),
            running=col("ckpt_running"),
            total_ms=col("ckpt_total_ms"),
            recent_ms=col("ckpt_recent_ms"),
            written=col("ckpt_bytes"),
            valid=~np.isnan(col("dt")) & ~np.isnan(raw_starts),
        )

    @property
    def has_flag(self) -> bool:
        """Is the running flag (or progress state) recorded at all?"""
        return not bool(np.isnan(self.running).all())

    def events(self) -> tuple[np.ndarray, np.ndarray]:
        """Rows where a checkpoint begins: the start counter moved, or the flag went up with no
        start to explain it (it began before the window or inside a gap) -> (rows, orphan mask)."""
        up = self.running == 1
        first_up = up & ~np.concatenate(([False], up[:-1]))
        orphan = first_up & ((self.starts == 0) | ~self.valid)
        return np.flatnonzero((self.starts > 0) | orphan), orphan

    def end_row(self, i: int, nxt: int) -> int | None:
        """The sample at which the checkpoint begun at row ``i`` is seen finished, or None if it
        still runs when the window ends.

        The first sample (from i on) at which the flag is down or, after i, total time moved,
        whichever comes first (the server records the time before it clears its progress state:
        the lab's 8.0 engine showed the state still set in the sample whose total had moved);
        never past the next start ``nxt``. Total time moving at i itself may be an earlier
        checkpoint's end, so it counts only there with the flag down.
        """
        n = self.t.size
        moved = np.flatnonzero(np.nan_to_num(self.total_ms[i:nxt], nan=0.0) > 0)
        if not self.has_flag:
            return i + int(moved[0]) if moved.size else (i if nxt < n or i < n - 1 else None)
        down = np.flatnonzero(self.running[i:nxt] == 0)
        ends = [i + int(down[0])] if down.size else []
        ends += [i + int(m) for m in moved[moved > 0][:1]]
        if ends:
            return min(ends)
        return nxt if nxt < n else None

    def duration(self, k: int) -> tuple[float | None, float]:
        """The server's own duration of the checkpoint seen ending at row ``k`` -> (seconds or
        None, ms of all checkpoints that ended in that interval, NaN if unknown)."""
        finished_ms = float(self.total_ms[k])
        recent = float(self.recent_ms[k])
        if np.isfinite(finished_ms) and finished_ms > 0 and np.isfinite(recent):
            return recent / 1000, finished_ms
        if np.isfinite(finished_ms):
            return finished_ms / 1000, finished_ms  # 0: under a millisecond (or nothing to write)
        return None, finished_ms


def _from_counters(c: _Counters) -> list[Episode]:
    """Episodes from the server's checkpoint counters.

    Contract: one episode per checkpoint start the counter records (several in one interval are
    several episodes), plus one per run of the running flag that no start explains (marked
    ``truncated``: it began before the window or a gap). A finished episode's duration is the
    server's "most recent time" where total time moved in the interval it ended in (``exact``);
    the earlier starts of one interval share the rest of that interval's total time (``shared``).
    Its start is placed inside the interval it began in, consistent with its end's interval and
    its duration (:func:`_place`). An episode still running at the window's end has no end and no
    duration. ``rows`` are the first and last samples whose interval it touches.
    """
    events, orphan = c.events()
    n = c.t.size
    episodes: list[Episode] = []
    for pos, event in enumerate(events):
        i = int(event)
        nxt = int(events[pos + 1]) if pos + 1 < events.size else n
        truncated = bool(orphan[i] and c.starts[i] == 0)
        k = c.end_row(i, nxt)
        if k is None:
            episodes.append(_still_running(c, i, truncated))
        else:
            episodes.extend(_finished(c, i, k, truncated))
    return episodes


def _still_running(c: _Counters, i: int, truncated: bool) -> Episode:
    """A checkpoint begun at row ``i`` that has not finished when the window ends."""
    t_i, a0 = float(c.t[i]), float(c.prev_t[i])
    start = t_i if truncated or not np.isfinite(a0) else (a0 + t_i) / 2
    last = c.t.size - 1
    return Episode(start, None, None, _bytes(c.written, i, last), "counters", truncated=truncated, rows=(i, last))


def _finished(c: _Counters, i: int, k: int, truncated: bool) -> list[Episode]:
    """The checkpoints begun at row ``i`` and seen finished at row ``k``: the earlier starts of the
    interval (when the counter moved by more than one) and the one whose end was seen."""
    count = max(int(c.starts[i]), 1)
    duration, finished_ms = c.duration(k)
    t_i = float(c.t[i])
    a0, a1 = (t_i, t_i) if truncated else (float(c.prev_t[i]), t_i)
    out: list[Episode] = []
    if count > 1:
        # more than one start in one interval: the earlier ones were short; share the time
        share = None
        if np.isfinite(finished_ms) and duration is not None:
            share = max(finished_ms / 1000 - duration, 0.0) / (count - 1)
        s, e = _place(a0, a1, a0, a1, share)
        shared = Episode(s, e, None if share is None else e - s, None, "counters", shared=True, rows=(i, i))
        out.extend([shared] * (count - 1))
    start, end = _place(a0, a1, float(c.prev_t[k]), float(c.t[k]), duration)
    if truncated:
        start = min(start, t_i)
    out.append(
        Episode(
            start,
            end,
            end - start,
            _bytes(c.written, i, k),
            "counters" if c.starts[i] > 0 else "running-flag",
            exact_duration=duration is not None and not truncated,
            truncated=truncated,
            rows=(i, k),
        )
    )
    return out


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


def period(episodes: Sequence[Episode]) -> tuple[float | None, float | None]:
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
