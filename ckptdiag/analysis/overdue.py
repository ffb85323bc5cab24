"""Checkpoints that did not come when the interval says: one that ran far past it, or none begun
for intervals on end while the server answered (a checkpoint stuck, or an engine whose counters
froze). WiredTiger begins the next checkpoint an interval after the last one ended: a stretch of
several intervals without one is the checkpoint thread held, and the dirty data of that whole
stretch waits for the next."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ckptdiag.analysis.columns import Columns
from ckptdiag.analysis.results import Episode
from ckptdiag.recording import utc_iso

OVERDUE_INTERVALS = 2.0  # a checkpoint this many intervals late (or long) is a finding
SAMPLING_SLACK_S = 5.0  # where a start lies within its interval: never a finding by a sample's width
GAP_S = 60.0  # a sample this far from the one before: a gap, over which nothing is concluded
MIN_WRITES_S = 1.0  # writes a second that give a checkpoint work (an idle server's few do not)


@dataclass(frozen=True)
class Overdue:
    """A stretch of ``seconds`` from ``start`` without a checkpoint beginning (``running``: one
    ran through it; else none ran); ``frozen_from``: where the engine's figures stopped moving
    altogether, to the stretch's end (None: they moved)."""

    start: float
    seconds: float
    running: bool
    interval_s: float  # the checkpoint interval in force
    frozen_from: float | None = None


def overdue(
    cols: Columns, episodes: Sequence[Episode], interval_s: float | None, dirty_target_pct: float
) -> tuple[Overdue, ...]:
    """Every checkpoint that ran ``OVERDUE_INTERVALS`` intervals or more, and every stretch that
    long after one ended in which none began while the server answered (no gap, its samples'
    rates and checkpoint counters taken) and there was work for one: ``MIN_WRITES_S`` writes a
    second, or dirty data at the dirty target (``dirty_target_pct``). An idle server's WiredTiger
    may skip the checkpoints of a clean database, its counters standing still: never a finding;
    nor the stretch before the first checkpoint seen (when the one before it ended is not known)."""
    if interval_s is None or not np.isfinite(interval_s) or interval_s <= 0 or cols.t.size < 2:
        return ()
    late = OVERDUE_INTERVALS * interval_s
    t = cols.t
    out: list[Overdue] = []
    edge: float | None = None  # where the last checkpoint seen ended
    last = episodes[-1] if episodes else None
    for e in (*episodes, None):
        start = float(t[-1]) if e is None else e.start
        if edge is not None and start - edge >= late + SAMPLING_SLACK_S:
            lo, hi = _rows(t, edge, start)
            if _answered(cols, lo, hi) and _to_write(cols, lo, hi, dirty_target_pct):
                frozen = _frozen(cols, lo, hi, late)
                out.append(Overdue(edge, start - edge, running=False, interval_s=interval_s, frozen_from=frozen))
        if e is None:
            break
        # an end not seen is the window's end only for the last checkpoint, seen running to it
        # (one cut off by a gap or a restart ran for as long as nobody knows)
        end = e.end
        if end is None and e is last and _answered(cols, *_rows(t, e.start, float(t[-1]))):
            end = float(t[-1])
        if end is None:
            edge = float(t[-1])
            continue
        if end - e.start >= late:
            out.append(Overdue(e.start, end - e.start, running=True, interval_s=interval_s))
        edge = end if edge is None else max(edge, end)
    return tuple(out)


def _rows(t: np.ndarray, start: float, end: float) -> tuple[int, int]:
    """The rows whose interval lies in ``[start, end]``: ``lo`` to ``hi`` - 1."""
    return int(np.searchsorted(t, start, side="right")), int(np.searchsorted(t, end, side="right"))


def _answered(cols: Columns, lo: int, hi: int) -> bool:
    """Did samples come all through rows ``lo`` to ``hi`` - 1, none a gap, their rates taken?"""
    if hi - lo < 2:
        return False
    dt = cols.dt[lo:hi]
    counted = np.isfinite(cols.ops_s[lo:hi]).all() and np.isfinite(cols.ckpt_starts[lo:hi]).all()
    return bool(np.all(np.isfinite(dt)) and np.all(dt < GAP_S) and counted)


def _to_write(cols: Columns, lo: int, hi: int, dirty_target_pct: float) -> bool:
    """Work for a checkpoint in rows ``lo`` to ``hi`` - 1: ``MIN_WRITES_S`` writes a second, or
    dirty data at the dirty target."""
    seconds = float(np.nansum(cols.dt[lo:hi]))
    writes = float(np.nansum(cols.writes_s[lo:hi] * cols.dt[lo:hi]))
    dirty = cols.dirty_pct[max(lo - 1, 0) : hi]
    at_target = bool(np.isfinite(dirty).any() and np.nanmax(dirty) >= dirty_target_pct)
    return writes >= MIN_WRITES_S * seconds or at_target


def _frozen(cols: Columns, lo: int, hi: int, late: float) -> float | None:
    """Where the engine's figures stopped moving in rows ``lo`` to ``hi`` - 1 (the cache's fill and
    dirt to the byte, no operation), when they stood still ``late`` seconds or more to the end:
    the server answered, its storage engine did not move. None when they moved."""
    used, dirty, ops = cols.used_pct[lo:hi], cols.dirty_pct[lo:hi], cols.ops_s[lo:hi]
    if hi - lo < 2 or not (np.isfinite(used).all() and np.isfinite(dirty).all()):
        return None
    moved = np.flatnonzero((ops > 0)[1:] | (np.diff(used) != 0) | (np.diff(dirty) != 0))
    still = lo + (int(moved[-1]) + 1 if moved.size else 0)  # the last row where anything moved
    since = float(cols.t[still])
    return since if float(cols.t[hi - 1]) - since >= late else None


def overdue_findings(found: Sequence[Overdue]) -> list[str]:
    """One finding for the longest checkpoint past its interval, one for the longest stretch
    without one, each with how many there were."""
    out = []
    for running in (True, False):
        some = [o for o in found if o.running == running]
        if not some:
            continue
        worst = max(some, key=lambda o: o.seconds)
        interval_s = worst.interval_s
        at = f"from {utc_iso(worst.start)[11:19]} UTC"
        times = f"{worst.seconds / interval_s:.1f}x the {interval_s:g} s interval"
        more = f" ({len(some)} such)" if len(some) > 1 else ""
        if running:
            out.append(
                f"a checkpoint ran {worst.seconds:.0f} s, {times} ({at}){more}: no other begins while it runs, "
                "so the dirty data of all that time waits for the next"
            )
            continue
        text = f"no checkpoint began for {worst.seconds:.0f} s, {times} ({at}){more}, while the server answered"
        if worst.frozen_from is not None:
            text += (
                f": from {utc_iso(worst.frozen_from)[11:19]} UTC the storage engine's figures did not move at all "
                "(cache fill and dirty bytes to the byte, no operation): the engine was stuck, or its statistics "
                "were no longer refreshed; the cache figures of those seconds are its last values, never counted "
                "as time at a level"
            )
        else:
            text += ": WiredTiger begins one an interval after the last ended, so something held its checkpoint thread"
        out.append(text)
    return out


def stale(t: np.ndarray, found: Sequence[Overdue]) -> np.ndarray:
    """The samples of the frozen stretches: their cache figures are the last values read, never
    time spent at a level."""
    mask = np.zeros(t.size, dtype=bool)
    for o in found:
        if o.frozen_from is not None:
            lo, hi = _rows(t, o.frozen_from, o.start + o.seconds)
            mask[lo:hi] = True
    return mask
