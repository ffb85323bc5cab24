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

import math
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ckptdiag.analysis.episode import Episode
from ckptdiag.analysis.episode_table import Episodes
from ckptdiag.analysis.stats import sums_before

# A disk write burst: above max(2x the median, median + 6 MAD, 1 MB/s)
BURST_MEDIAN_FACTOR = 2.0
BURST_MADS = 6.0
BURST_MIN_MB_S = 1.0


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
    starts: np.ndarray  # checkpoints begun in each interval; NaN across a restart and on the first row
    running: np.ndarray  # 1/0 flag or progress state, NaN where not recorded
    total_ms: np.ndarray  # ms of checkpoints finished in each interval
    recent_ms: np.ndarray  # the server's "most recent time" at each sample
    written: np.ndarray  # bytes written by checkpoints in each interval
    has_flag: bool  # the running flag (or progress state) is recorded at all
    # bytes written before each row (NaN as 0), and how many rows before it had the figure: an
    # episode's bytes are a difference of two (whole bytes: exact in float64), not a sum each
    written_before: np.ndarray
    written_seen: np.ndarray

    @classmethod
    def of(cls, d: pd.DataFrame) -> _Counters:
        """The columns of ``d``."""

        def col(name: str) -> np.ndarray:
            return d[name].to_numpy(dtype="float64")

        running = col("ckpt_running")
        written = col("ckpt_bytes")
        return cls(
            t=col("t"),
            starts=col("ckpt_starts"),
            running=running,
            total_ms=col("ckpt_total_ms"),
            recent_ms=col("ckpt_recent_ms"),
            written=written,
            has_flag=not bool(np.isnan(running).all()),  # once, not at every row still_running reads
            written_before=sums_before(np.nan_to_num(written)),
            written_seen=sums_before(np.isfinite(written)),
        )


@dataclass(frozen=True)
class _Events:
    """The counters at the rows where something can happen (:func:`_eventful`), as Python lists
    indexed by position among those rows: the episode finder reads each row a few times, and a
    numpy scalar read and compared costs several times a list's (68,176 checkpoints of 47 days
    spent a second there)."""

    rows: list[int]
    t: list[float]
    t_before: list[float]  # the time of the row before (the row's own at row 0)
    starts: list[float]
    running: list[float]
    total_ms: list[float]
    recent_ms: list[float]
    next_total_ms: list[float]  # the row after's (NaN at the last row)
    next_starts: list[float]
    written_before: list[float]  # bytes written before the row, and rows with the figure before it
    written_seen: list[float]
    written_through: list[float]  # the same before the row after
    seen_through: list[float]

    @classmethod
    def of(cls, c: _Counters) -> _Events:
        """The eventful rows of ``c``."""
        at = _eventful(c)
        n = c.t.size
        after = np.minimum(at + 1, n - 1)
        beyond = at + 1 >= n

        def later(values: np.ndarray) -> list[float]:
            picked = values[after]
            picked[beyond] = np.nan
            result: list[float] = picked.tolist()
            return result

        return cls(
            rows=at.tolist(),
            t=c.t[at].tolist(),
            t_before=c.t[np.maximum(at - 1, 0)].tolist(),
            starts=c.starts[at].tolist(),
            running=c.running[at].tolist(),
            total_ms=c.total_ms[at].tolist(),
            recent_ms=c.recent_ms[at].tolist(),
            next_total_ms=later(c.total_ms),
            next_starts=later(c.starts),
            written_before=c.written_before[at].tolist(),
            written_seen=c.written_seen[at].tolist(),
            written_through=c.written_before[at + 1].tolist(),
            seen_through=c.written_seen[at + 1].tolist(),
        )


def _still_running(c: _Counters, e: _Events, j: int, begun: int, pending: int) -> int:
    """How many of the ``pending`` checkpoints still run at eventful row ``j`` (0 or 1:
    WiredTiger runs one at a time), ``begun`` of them begun in the interval before it.

    Total time moves only when one ends, so when it moved one at least ended, whatever the
    flag says: the server records the time before it clears the flag or progress state (real
    FTDC shows a 108 ms checkpoint begun and ended between two samples with the flag still up
    at the second; the lab's 8.0 engine the same for its progress state). Otherwise the flag
    says; without one, a checkpoint runs on only until total time moves in the next interval
    with nothing begun there.
    """
    moved = e.total_ms[j] > 0
    flag = e.running[j]
    if math.isfinite(flag):
        running = int(flag == 1)
    elif c.has_flag:  # this sample lacks it (no wiredTiger section): unchanged unless time moved
        running = 1
    else:
        running = int(e.next_total_ms[j] > 0 and not e.next_starts[j] > 0)
    if moved:
        running = 0 if begun == 0 else running
        return max(min(running, pending - 1), 0)
    return min(running, pending)


def _durations(e: _Events, j: int, ended: int) -> Sequence[tuple[float | None, bool]]:
    """The durations of the ``ended`` checkpoints seen ending in the interval before eventful
    row ``j``, in order, each with whether the server's counters pin it exactly.

    Their durations add up to the interval's rise of total time; the last one's is the
    server's "most recent time"; the others share the rest (exact when there is one other).
    """
    total = e.total_ms[j]
    if not math.isfinite(total):
        return [(None, False)] * ended
    if ended == 1:
        return [(total / 1000, True)]
    recent = e.recent_ms[j]
    last = recent if math.isfinite(recent) and 0 <= recent <= total else total / ended
    share = (total - last) / (ended - 1)
    return [(share / 1000, ended == 2)] * (ended - 1) + [(last / 1000, math.isfinite(recent))]


@dataclass
class _Begun:
    """A checkpoint seen beginning (in the interval before sample ``row``), not yet seen ending,
    with what its episode reads of that row: its time, the time before it, the bytes before it."""

    row: int
    truncated: bool  # already running at the first sample of the window or of a segment
    t: float
    t_before: float
    written_before: float
    written_seen: float

    @classmethod
    def at(cls, e: _Events, j: int, truncated: bool) -> _Begun:
        """The checkpoint begun in the interval before eventful row ``j``."""
        row = e.rows[j]
        return cls(row, truncated, e.t[j], e.t_before[j], e.written_before[j], e.written_seen[j])


def _from_counters(c: _Counters) -> list[Episode]:
    """Episodes from the server's checkpoint counters: the counters are the truth for what
    happened, the samples only place it in time.

    Contract: within each restart-free stretch of samples, one episode per checkpoint the start
    counter records (several in one interval are several episodes), whatever the spacing of the
    samples, plus one ``truncated`` episode for a checkpoint already running at the stretch's first
    sample. WiredTiger runs one checkpoint at a time, so they end in the order they began; the
    interval each ends in follows from the running flag and total time (:func:`_still_running`),
    and the durations of those that end in one interval add up to its rise of total time
    (:func:`_durations`). Each episode's start is placed in the overlap of the interval it began in
    and (end interval - duration), with that overlap kept as its ``start_earliest``/
    ``start_latest``. A checkpoint still running when the window ends (or when the server
    restarted) has no end and no duration. ``rows`` are the first and last samples whose
    interval it touches.
    """
    e = _Events.of(c)
    episodes: list[Episode] = []
    pending: deque[_Begun] = deque()
    for j, k in enumerate(e.rows):
        if not math.isfinite(e.starts[j]):  # the first sample, or after a restart
            episodes.extend(_unfinished(pending, k - 1, e.written_before[j], e.written_seen[j]))
            pending.clear()
            if e.running[j] == 1:
                pending.append(_Begun.at(e, j, truncated=True))
            continue
        begun = int(e.starts[j])
        pending.extend(_Begun.at(e, j, truncated=False) for _ in range(begun))
        ended = len(pending) - _still_running(c, e, j, begun, len(pending))
        durations = _durations(e, j, ended) if ended else []
        for duration, exact in durations:
            episodes.append(_finished(e, pending.popleft(), j, duration, exact, shared=ended > 1))
    n = c.t.size
    episodes.extend(_unfinished(pending, n - 1, float(c.written_before[n]), float(c.written_seen[n])))
    return episodes


def _eventful(c: _Counters) -> np.ndarray:
    """The rows at which something can happen (linear in the samples, whatever the counters say):
    a stretch begins, a checkpoint begins or total time moves, or the flag comes down or is
    missing. A checkpoint pending at any other row is still running there (the flag is up), and
    with none pending nothing happens."""
    starts, total, flag = c.starts, c.total_ms, c.running
    with np.errstate(invalid="ignore"):
        rows = ~np.isfinite(starts) | (starts > 0) | (total > 0)
        if c.has_flag:
            before = np.concatenate(([np.nan], flag[:-1]))
            rows |= np.isnan(flag) | ((before == 1) & (flag != 1))
        else:
            rows |= np.concatenate(((total[1:] > 0), [False]))  # the lookahead of still_running
    result: np.ndarray = np.flatnonzero(rows)
    return result


def _window(b: _Begun, e: _Events, j: int, d: float | None) -> tuple[float, float]:
    """Earliest and latest start of a checkpoint begun in (t[i-1], t[i]] that ended in
    (t[k-1], t[k]] (``k`` the eventful row ``j``) after ``d`` seconds (unknown: the interval it
    began in)."""
    t_i = b.t
    a0 = t_i if b.truncated or b.row == 0 else b.t_before
    if b.truncated:
        return (t_i - d, t_i - d) if d is not None and e.rows[j] == b.row else (min(a0, t_i), t_i)
    if d is None:
        return a0, t_i
    b0, b1 = e.t_before[j], e.t[j]
    lo, hi = max(a0, b0 - d), min(t_i, b1 - d)
    if lo > hi:  # the figures disagree by a rounding: keep the start inside its own interval
        lo = hi = min(max(b1 - d, a0), t_i)
    return lo, hi


def _finished(e: _Events, b: _Begun, j: int, d: float | None, exact: bool, shared: bool) -> Episode:
    """The checkpoint ``b``, seen ending in the interval before eventful row ``j``, lasting ``d`` s."""
    lo, hi = _window(b, e, j, d)
    start = (lo + hi) / 2
    k = e.rows[j]
    if d is None:
        end = (e.t_before[j] + e.t[j]) / 2 if k > 0 else e.t[j]
        end = max(end, start)
    else:
        end = start + d
    return Episode(
        start,
        end,
        d if d is not None else end - start,  # the server's figure, not a difference of epoch times
        None if shared else _bytes(b, e.written_through[j], e.seen_through[j]),
        "counters" if not b.truncated else "running-flag",
        exact_duration=exact and d is not None and not b.truncated,
        truncated=b.truncated,
        shared=shared,
        rows=(b.row, k),
        start_earliest=lo,
        start_latest=hi,
    )


def _unfinished(pending: deque[_Begun], last: int, written_before: float, written_seen: float) -> list[Episode]:
    """Checkpoints still running at sample ``last`` (the window's end, or the sample before a
    restart), with the bytes written before the sample after it."""
    out = []
    for b in pending:
        t_i = b.t
        a0 = t_i if b.truncated or b.row == 0 else b.t_before
        start = t_i if b.truncated else (a0 + t_i) / 2
        out.append(
            Episode(
                start,
                None,
                None,
                _bytes(b, written_before, written_seen),
                "counters",
                truncated=b.truncated,
                rows=(b.row, max(last, b.row)),
                start_earliest=a0,
                start_latest=t_i,
            )
        )
    return out


def _bytes(b: _Begun, written_before: float, written_seen: float) -> float | None:
    """The bytes checkpoints wrote from ``b``'s row up to a row whose written bytes and rows
    with the figure before it are given (None: not recorded there)."""
    if written_seen == b.written_seen:
        return None
    return written_before - b.written_before


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


def period(episodes: Episodes, seams: np.ndarray | None = None) -> tuple[float | None, float | None]:
    """The typical interval between episode starts (median, s) and its regularity (the
    coefficient of variation of the intervals: 0 is a metronome), over the intervals that cross no
    seam (``seams``: the times of the samples after a gap or a restart): a host that slept twice
    between exact 60 s checkpoints is still a metronome."""
    starts = np.sort(episodes.floats("start")[~episodes.flags("truncated")])
    if starts.size < 2:
        return None, None
    gaps = np.diff(starts)
    if seams is not None and seams.size:
        # a seam sample at or after one start and before the next: the interval crosses it
        crossed = np.searchsorted(seams, starts[:-1], side="left") != np.searchsorted(seams, starts[1:], side="left")
        gaps = gaps[~crossed]
    gaps = gaps[gaps > 0]
    if gaps.size == 0:
        return None, None
    med = float(np.median(gaps))
    cv = float(np.std(gaps) / np.mean(gaps)) if gaps.size > 1 else 0.0
    return med, cv
