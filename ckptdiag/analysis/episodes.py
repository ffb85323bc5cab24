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

from dataclasses import dataclass

import numpy as np
import pandas as pd

from ckptdiag.analysis.episode import Episode
from ckptdiag.analysis.episode_table import FLAG, FLOAT, LABEL, PAIR, Column, Episodes
from ckptdiag.analysis.stats import sums_before

# A disk write burst: above max(2x the median, median + 6 MAD, 1 MB/s)
BURST_MEDIAN_FACTOR = 2.0
BURST_MADS = 6.0
BURST_MIN_MB_S = 1.0
EVIDENCE = ("counters", "running-flag")  # what places a checkpoint found from the counters


def find_episodes(d: pd.DataFrame, since: int = 0) -> Episodes:
    """Every checkpoint in the derived frame ``d`` (see :func:`ckptdiag.analysis.series.derive`)
    from row ``since`` on, not judged yet. A row ``since`` after the first is one where none ran
    (a block's first, :mod:`~ckptdiag.analysis.window`): the interval before it is the rows
    before's, so what its start count and total time say of that interval is not read (its row
    numbers count from ``since``)."""
    if len(d) <= since:
        return Episodes.of(())
    starts = d["ckpt_starts"].to_numpy()[since:]
    running = d["ckpt_running"].to_numpy()[since:]
    if np.isnan(starts).all() and np.isnan(running).all():
        return Episodes.of(disk_bursts(d.iloc[since:] if since else d))
    return _from_counters(_Counters.of(d, since))


@dataclass(frozen=True)
class _Counters:
    """The checkpoint columns of a derived frame, as float64 arrays (times and durations in
    float64: a float32 duration added to epoch seconds would round the time to +-64 s)."""

    t: np.ndarray
    starts: np.ndarray  # checkpoints begun in each interval; NaN across a restart and on the first row
    unplaced: np.ndarray  # of them, begun and ended inside the interval, counted and not placed
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
    def of(cls, d: pd.DataFrame, since: int = 0) -> _Counters:
        """The columns of ``d`` from row ``since`` on (see :func:`find_episodes`)."""

        def col(name: str) -> np.ndarray:
            return np.asarray(d[name].to_numpy()[since:], dtype=np.float64)

        running = col("ckpt_running")
        written = col("ckpt_bytes")
        starts, total, unplaced = col("ckpt_starts"), col("ckpt_total_ms"), col("ckpt_unplaced")
        if since:  # the quiet row's own interval is the rows before's
            starts, total, unplaced = starts.copy(), total.copy(), unplaced.copy()  # (read in place)
            starts[0] = total[0] = unplaced[0] = 0.0
        return cls(
            t=col("t"),
            starts=starts,
            unplaced=unplaced,
            running=running,
            total_ms=total,
            recent_ms=col("ckpt_recent_ms"),
            written=written,
            has_flag=not bool(np.isnan(running).all()),  # once, not at every row still_running reads
            written_before=sums_before(np.nan_to_num(written)),
            written_seen=sums_before(np.isfinite(written)),
        )


@dataclass(frozen=True)
class _Events:
    """The counters at the rows where something can happen (:func:`_eventful`), an array each,
    indexed by position among those rows."""

    rows: np.ndarray
    t: np.ndarray
    t_before: np.ndarray  # the time of the row before (the row's own at row 0)
    begun: np.ndarray  # checkpoints begun in the interval before (int64, as int() truncates; 0: a stretch
    # begins; a count that went back, none), the unplaced among them included
    unplaced: np.ndarray  # of them, counted and not placed: the first begun after the one carried in
    stretch: np.ndarray  # a stretch begins here: the first sample, or after a restart (no start count)
    flag_up: np.ndarray  # the running flag or progress state says one runs
    running: np.ndarray  # one runs, by the flag (or without one, by total time in the row after)
    moved: np.ndarray  # total time moved: at least one ended in the interval before
    total_ms: np.ndarray
    recent_ms: np.ndarray
    written_before: np.ndarray  # bytes written before the row, and rows with the figure before it
    written_seen: np.ndarray
    written_through: np.ndarray  # the same before the row after
    seen_through: np.ndarray

    @classmethod
    def of(cls, c: _Counters) -> _Events:
        """The eventful rows of ``c``."""
        at = _eventful(c)
        n = c.t.size
        after = np.minimum(at + 1, n - 1)
        beyond = at + 1 >= n
        starts, flag = c.starts[at], c.running[at]
        stretch = ~np.isfinite(starts)
        unplaced = np.where(stretch, 0, np.nan_to_num(c.unplaced[at], nan=0.0)).astype(np.int64)
        with np.errstate(invalid="ignore"):
            if c.has_flag:  # a sample that lacks the flag (no wiredTiger section): unchanged, so still up
                running = np.where(np.isfinite(flag), flag == 1, True)
            else:  # without one, it runs on until total time moves in the next interval with nothing begun
                running = (c.total_ms[after] > 0) & ~(c.starts[after] > 0) & ~beyond
            return cls(
                rows=at,
                t=c.t[at],
                t_before=c.t[np.maximum(at - 1, 0)],
                begun=np.maximum(np.where(stretch, 0.0, starts).astype(np.int64), 0) + unplaced,
                unplaced=unplaced,
                stretch=stretch,
                flag_up=flag == 1,
                running=running,
                moved=c.total_ms[at] > 0,
                total_ms=c.total_ms[at],
                recent_ms=c.recent_ms[at],
                written_before=c.written_before[at],
                written_seen=c.written_seen[at],
                written_through=c.written_before[at + 1],
                seen_through=c.written_seen[at + 1],
            )


def _ended(e: _Events) -> tuple[np.ndarray, np.ndarray]:
    """How many checkpoints end at each eventful row (or, where a stretch begins, are cut off
    there), from whether one is still pending after it; and whether one was pending before it
    (carried in from an earlier row: the first to end there).

    WiredTiger runs one at a time, so at most one is pending after any row: total time moves only
    when one ends, so when it moved one at least ended, whatever the flag says (the server records
    the time before it clears the flag or progress state: real FTDC shows a 108 ms checkpoint begun
    and ended between two samples with the flag still up at the second; the lab's 8.0 engine the
    same for its progress state). Otherwise the flag says; without one, a checkpoint runs on only
    until total time moves in the next interval with nothing begun there. Whether one is pending
    after a row is set by the row (one begun there, or several, or none with time moved, or a
    stretch beginning) or is the flag's reading *and* the row before's (none begun and time not
    moved; or one begun with time moved): the last setting row's value, unless a row after it read
    down.
    """
    n = e.rows.size
    begun = e.begun
    sets = e.stretch | np.where(e.moved, begun != 1, begun >= 1)
    # time moved with none begun: none pending, whatever the flag says (one ended)
    value = np.where(e.stretch, e.flag_up, e.running & ~(e.moved & (begun == 0)))
    k = np.arange(n)
    last_set = np.maximum.accumulate(np.where(sets, k, -1))
    last_down = np.maximum.accumulate(np.where(~sets & ~value, k, -1))
    pending = (last_set >= 0) & value[np.maximum(last_set, 0)] & (last_down < last_set)
    before = np.concatenate(([False], pending[:-1]))
    ended = np.where(e.stretch, before, before.astype(np.int64) + begun - pending)
    return ended, before


def _from_counters(c: _Counters) -> Episodes:
    """Episodes from the server's checkpoint counters: the counters are the truth for what
    happened, the samples only place it in time.

    Contract: within each restart-free stretch of samples, one episode per checkpoint the start
    counter records (several in one interval are several episodes), whatever the spacing of the
    samples, plus one ``truncated`` episode for a checkpoint already running at the stretch's first
    sample; but none for those counted and not placed (``ckpt_unplaced``, analysis/event_counts.py:
    begun and ended inside an interval too long or too crowded to place each), which still take
    their share of the interval's total time. WiredTiger runs one checkpoint at a time, so they
    end in the order they began; the interval each ends in follows from the running flag and total
    time (:func:`_ended`), and the durations of those that end in one interval add up to its rise
    of total time (:func:`_durations`). Each episode's start is placed in the overlap of the interval it began in
    and (end interval - duration), with that overlap kept as its ``start_earliest``/
    ``start_latest``. A checkpoint still running when the window ends (or when the server
    restarted) has no end and no duration. ``rows`` are the first and last samples whose
    interval it touches.

    Every checkpoint's rows are found at once: they end in the order they began, so the k-th begun
    ends at the row where the count of those ended first passes k.
    """
    e = _Events.of(c)
    every, carried = _ended(e)
    # the unplaced are the first begun after the one carried in: they end where they began
    ended = every - e.unplaced
    made = np.where(e.stretch, e.flag_up, e.begun - e.unplaced)
    count = int(made.sum())
    if count == 0:
        return Episodes.of(())
    k = np.arange(count)
    first = np.searchsorted(np.cumsum(made), k, side="right")  # the eventful row each began at
    gone = np.cumsum(ended)
    last = np.searchsorted(gone, k, side="right")  # ... and ended at (past the last: still running)
    truncated = e.stretch[first]
    running = last == e.rows.size
    cut = running | e.stretch[np.minimum(last, e.rows.size - 1)]
    return _assembled(c, e, first, last, truncated, cut, running, (gone, ended, every, carried))


def _durations(e: _Events, last: np.ndarray, size: np.ndarray, place: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The durations (s; NaN: not known) of checkpoints seen ending in the interval before
    eventful row ``last``, ``size`` of them ending there (the unplaced included), each
    ``place``-th among them, and whether the server's counters pin each exactly.

    Their durations add up to the interval's rise of total time; the last one's is the server's
    "most recent time"; the others share the rest (exact when there is one other)."""
    total, recent = e.total_ms[last], e.recent_ms[last]
    with np.errstate(invalid="ignore", divide="ignore"):
        told = np.isfinite(recent) & (recent >= 0) & (recent <= total)
        final = np.where(told, recent, total / size)
        share = (total - final) / np.maximum(size - 1, 1)
        ms = np.where(size == 1, total, np.where(place < size - 1, share, final))
        exact = np.where(size == 1, True, np.where(place < size - 1, size == 2, np.isfinite(recent)))
    known = np.isfinite(total)
    return np.where(known, ms / 1000, np.nan), exact & known


def _assembled(
    c: _Counters,
    e: _Events,
    first: np.ndarray,
    last: np.ndarray,
    truncated: np.ndarray,
    cut: np.ndarray,
    running: np.ndarray,
    ends: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray],
) -> Episodes:
    """The episodes begun at eventful rows ``first`` and ended at ``last``; ``cut``: with no end,
    still running at the window's end (``running``) or when the server restarted. ``ends``: the
    placed ended before each eventful row and at it, every one ended at it (the unplaced too),
    and whether one carried in from before ended there (:func:`_from_counters`)."""
    gone, ended, every, carried = ends
    at = np.minimum(last, e.rows.size - 1)
    # each one's place among all that end at its row: the unplaced come after the one carried in
    place = np.arange(first.size) - (gone[at] - ended[at])
    place = place + np.where(place >= carried[at], e.unplaced[at], 0)
    size = every[at]
    d, exact = _durations(e, at, size, place)
    row = e.rows[first]
    t_i = e.t[first]
    a0 = np.where(truncated | (row == 0), t_i, e.t_before[first])
    lo, hi = _window(e, first, at, truncated, a0, d)
    lo, hi = np.where(cut, a0, lo), np.where(cut, t_i, hi)  # cut off: only the interval it began in
    start = (lo + hi) / 2
    known = ~np.isnan(d)
    untimed = np.maximum(np.where(e.rows[at] > 0, (e.t_before[at] + e.t[at]) / 2, e.t[at]), start)
    end = np.where(known, start + np.where(known, d, 0.0), untimed)
    shared = ~cut & (size > 1)
    written, no_bytes = _written(c, e, first, at, cut, running)
    final = np.where(running, c.t.size - 1, np.where(cut, np.maximum(e.rows[at] - 1, row), e.rows[at]))
    own = {
        "start": Column(FLOAT, start),
        "end": Column.optional(end, cut),
        "duration_s": Column.optional(np.where(known, d, end - start), cut),  # the server's, where it says
        "bytes_written": Column.optional(written, no_bytes | shared),
        "evidence": Column(LABEL, (truncated & ~cut).astype(np.int32), EVIDENCE),
        "exact_duration": Column(FLAG, exact & known & ~truncated & ~cut),
        "truncated": Column(FLAG, truncated),
        "shared": Column(FLAG, shared),
        "rows": Column(PAIR, np.stack([row, final], axis=1).astype(np.int64)),
        "start_earliest": Column.optional(lo, np.zeros(row.size, dtype=bool)),
        "start_latest": Column.optional(hi, np.zeros(row.size, dtype=bool)),
    }
    return Episodes.unjudged(own, row.size)


def _written(
    c: _Counters, e: _Events, first: np.ndarray, at: np.ndarray, cut: np.ndarray, running: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """The bytes checkpoints wrote from each episode's first row up to the row after its end (cut
    off: up to the restart's row, or past the window's last), and where they are not recorded."""
    n = c.t.size
    through = np.where(running, c.written_before[n], np.where(cut, e.written_before[at], e.written_through[at]))
    seen = np.where(running, c.written_seen[n], np.where(cut, e.written_seen[at], e.seen_through[at]))
    return through - e.written_before[first], seen == e.written_seen[first]


def _window(
    e: _Events, first: np.ndarray, at: np.ndarray, truncated: np.ndarray, a0: np.ndarray, d: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Earliest and latest start of each checkpoint begun in (a0, t[first]] that ended in the
    interval before eventful row ``at`` after ``d`` seconds (NaN: not known, then the interval it
    began in). One already running at a stretch's first sample began at it, or ``d`` before it
    when it ended at that very sample."""
    t_i = e.t[first]
    known = ~np.isnan(d)
    dd = np.where(known, d, 0.0)
    b0, b1 = e.t_before[at], e.t[at]
    lo, hi = np.maximum(a0, b0 - dd), np.minimum(t_i, b1 - dd)
    # the figures disagree by a rounding: keep the start inside its own interval
    wrong = lo > hi
    kept = np.minimum(np.maximum(b1 - dd, a0), t_i)
    lo, hi = np.where(wrong, kept, lo), np.where(wrong, kept, hi)
    lo, hi = np.where(known, lo, a0), np.where(known, hi, t_i)
    at_once = np.where(known & (e.rows[at] == e.rows[first]), t_i - dd, t_i)
    return np.where(truncated, at_once, lo), np.where(truncated, at_once, hi)


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
