"""The episode finder as it was before it was vectorised: one eventful row at a time, a queue of
the checkpoints begun and not yet ended. Kept here as the reference the vectorised finder is held
equal to (tests/test_episode_finder.py)."""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ckptdiag.analysis.episode import Episode
from ckptdiag.analysis.episodes import _Counters, _eventful


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
    unplaced: list[float]
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
            unplaced=c.unplaced[at].tolist(),
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
    unplaced: bool = False  # counted, not listed

    @classmethod
    def at(cls, e: _Events, j: int, truncated: bool, unplaced: bool = False) -> _Begun:
        """The checkpoint begun in the interval before eventful row ``j``."""
        row = e.rows[j]
        return cls(row, truncated, e.t[j], e.t_before[j], e.written_before[j], e.written_seen[j], unplaced)


def _from_counters(c: _Counters) -> list[Episode]:
    """The episodes :func:`ckptdiag.analysis.episodes._from_counters` finds (its contract), found
    one eventful row at a time with a queue of the checkpoints begun and not yet ended."""
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
        # the unplaced are begun first, after the one carried in, and end in the same interval
        unplaced = int(e.unplaced[j]) if math.isfinite(e.unplaced[j]) else 0
        pending.extend(_Begun.at(e, j, truncated=False, unplaced=True) for _ in range(unplaced))
        begun = int(e.starts[j]) + unplaced
        pending.extend(_Begun.at(e, j, truncated=False) for _ in range(begun - unplaced))
        ended = len(pending) - _still_running(c, e, j, begun, len(pending))
        durations = _durations(e, j, ended) if ended else []
        for duration, exact in durations:
            b = pending.popleft()
            if not b.unplaced:
                episodes.append(_finished(e, b, j, duration, exact, shared=ended > 1))
    n = c.t.size
    episodes.extend(_unfinished(pending, n - 1, float(c.written_before[n]), float(c.written_seen[n])))
    return episodes


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
