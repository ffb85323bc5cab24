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
from ckptdiag.analysis.episode_table import Episodes
from ckptdiag.analysis.results import Overdue
from ckptdiag.model.samples import GAP_S
from ckptdiag.recording import utc_iso

OVERDUE_INTERVALS = 2.0  # a checkpoint this many intervals late (or long) is a finding
SAMPLING_SLACK_S = 5.0  # where a start lies within its interval: never a finding by a sample's width
LEVELS = 4  # the cache levels time is counted at (see :mod:`.eviction`)
MIN_WRITES_S = 1.0  # writes a second that give a checkpoint work (an idle server's few do not)


@dataclass(frozen=True)
class _Stretch:
    """What the rows of a stretch read so far show (a stretch may run through several blocks of a
    long window): the checks of :class:`OverdueTracker` over all of them, merged part by part."""

    rows: int
    answered: bool  # every interval a sample, none a gap, rates and checkpoint counters taken
    seconds: float
    writes: float
    dirty_max: float  # NaN: none
    finite: bool  # the cache's fill and dirt read at every row
    first_t: float
    last_t: float
    moved_t: float | None  # the last row where anything moved (None: none did)
    tail: np.ndarray  # time at each cache level over the rows after it (or after the first row)

    def then(self, later: _Stretch) -> _Stretch:
        """This stretch followed by the rows of ``later``."""
        return _Stretch(
            self.rows + later.rows,
            self.answered and later.answered,
            self.seconds + later.seconds,
            self.writes + later.writes,
            float(np.fmax(self.dirty_max, later.dirty_max)),
            self.finite and later.finite,
            self.first_t,
            later.last_t,
            later.moved_t if later.moved_t is not None else self.moved_t,
            later.tail if later.moved_t is not None else self.tail + later.tail,
        )


def _rows(t: np.ndarray, start: float, end: float) -> tuple[int, int]:
    """The rows whose interval lies in ``[start, end]``: ``lo`` to ``hi`` - 1."""
    return int(np.searchsorted(t, start, side="right")), int(np.searchsorted(t, end, side="right"))


def _came(cols: Columns, lo: int, hi: int) -> bool:
    """Did every sample of rows ``lo`` to ``hi`` - 1 come after the one before, none a gap, its
    rates and checkpoint counters taken?"""
    dt = cols.dt[lo:hi]
    counted = np.isfinite(cols.ops_s[lo:hi]).all() and np.isfinite(cols.ckpt_starts[lo:hi]).all()
    return bool(np.all(np.isfinite(dt)) and np.all(dt < GAP_S) and counted)


def _answered(cols: Columns, lo: int, hi: int) -> bool:
    """Did samples come all through rows ``lo`` to ``hi`` - 1 (two or more)?"""
    return hi - lo >= 2 and _came(cols, lo, hi)


def _part(cols: Columns, levels: np.ndarray, lo: int, hi: int, continued: bool) -> _Stretch | None:
    """Rows ``lo`` to ``hi`` - 1 of a stretch (``continued``: rows of it came before ``lo``, so the
    first of these is compared with the one before it)."""
    if hi <= lo:
        return None
    dt = cols.dt[lo:hi]
    used, dirty, ops = cols.used_pct, cols.dirty_pct, cols.ops_s
    first = lo if continued else lo + 1  # the rows checked for movement (the stretch's first is not)
    with np.errstate(invalid="ignore"):
        changed = (used[first:hi] != used[first - 1 : hi - 1]) | (dirty[first:hi] != dirty[first - 1 : hi - 1])
        moved = (ops[first:hi] > 0) | changed
    at = np.flatnonzero(moved)
    still = first + int(at[-1]) if at.size else None
    around = dirty[max(lo - 1, 0) : hi]
    # the rows the engine may have stood still over: after the last that moved; where none did,
    # after the stretch's first row (or, a part of one begun before, all of them)
    still_from = still if still is not None else lo - 1 if continued else lo
    return _Stretch(
        rows=hi - lo,
        answered=_came(cols, lo, hi),
        seconds=float(np.nansum(dt)),
        writes=float(np.nansum(cols.writes_s[lo:hi] * dt)),
        dirty_max=float(np.nanmax(around)) if np.isfinite(around).any() else float("nan"),
        finite=bool(np.isfinite(used[lo:hi]).all() and np.isfinite(dirty[lo:hi]).all()),
        first_t=float(cols.t[lo]),
        last_t=float(cols.t[hi - 1]),
        moved_t=float(cols.t[still]) if still is not None else None,
        tail=levels[still_from + 1 : hi].sum(axis=0),
    )


class OverdueTracker:
    """Every checkpoint that ran ``OVERDUE_INTERVALS`` intervals or more, and every stretch that
    long after one ended in which none began while the server answered (no gap, its samples'
    rates and checkpoint counters taken) and there was work for one: ``MIN_WRITES_S`` writes a
    second, or dirty data at the dirty target. An idle server's WiredTiger may skip the
    checkpoints of a clean database, its counters standing still: never a finding; nor the
    stretch before the first checkpoint seen. Read a block at a time: a stretch still open when
    a block ends is carried into the next."""

    def __init__(self, interval_s: float | None, dirty_target_pct: float) -> None:
        self.interval_s = interval_s if interval_s is not None and np.isfinite(interval_s) and interval_s > 0 else None
        self.dirty_target_pct = dirty_target_pct
        self.found: list[Overdue] = []
        self.stale_levels = np.zeros(LEVELS)  # time at each cache level of frozen rows, to take back
        self._edge: float | None = None  # where the last checkpoint seen ended (inf: not known again)
        self._open: _Stretch | None = None  # the rows since it, in the blocks before

    def block(self, cols: Columns, levels: np.ndarray, own: slice, episodes: Episodes, final: bool) -> None:
        """The episodes of one block (its ``own`` rows; ``levels``: each row's time at each cache
        level), and, when ``final``, the window's end."""
        if self.interval_s is None:
            return
        t, late = cols.t, OVERDUE_INTERVALS * self.interval_s
        first = own.start or 0
        n = len(episodes)
        starts = episodes.floats("start").tolist()
        ends: list[float | None] = episodes.values("end")
        for k in range(n + 1 if final else n):  # the window's end after its episodes
            start = float(t[-1]) if k == n else starts[k]
            if self._edge is not None and start - self._edge >= late + SAMPLING_SLACK_S:
                self._judge(self._rows(cols, levels, first, start), start, late)
            self._open = None
            if k == n:
                break
            end = ends[k]
            if end is None and final and k == n - 1 and _answered(cols, *_rows(t, start, float(t[-1]))):
                end = float(t[-1])
            if end is None:  # cut off by a gap or a restart: where it ended nobody knows
                self._edge = float("inf")
                continue
            if end - start >= late:
                self.found.append(Overdue(start, end - start, running=True, interval_s=self.interval_s))
            self._edge = end if self._edge is None else max(self._edge, end)
        if not final and self._edge is not None and np.isfinite(self._edge):
            self._open = self._rows(cols, levels, first, float(t[own.stop - 1]))

    def _rows(self, cols: Columns, levels: np.ndarray, first: int, until: float) -> _Stretch | None:
        """The stretch from the last edge to ``until``: the blocks' before, then this one's."""
        assert self._edge is not None
        lo, hi = _rows(cols.t, self._edge, until)
        if self._open is None:
            return _part(cols, levels, lo, hi, continued=False)
        part = _part(cols, levels, max(lo, first), hi, continued=True)
        return self._open if part is None else self._open.then(part)

    def _judge(self, s: _Stretch | None, start: float, late: float) -> None:
        """A stretch of ``late`` or more without a checkpoint: a finding where the server answered
        and had work for one."""
        if s is None or s.rows < 2 or not s.answered:
            return
        if not (s.writes >= MIN_WRITES_S * s.seconds or s.dirty_max >= self.dirty_target_pct):
            return
        assert self._edge is not None and self.interval_s is not None
        since = s.moved_t if s.moved_t is not None else s.first_t
        frozen = since if s.finite and s.last_t - since >= late else None
        if frozen is not None:
            self.stale_levels += s.tail
        edge = self._edge
        self.found.append(Overdue(edge, start - edge, running=False, interval_s=self.interval_s, frozen_from=frozen))


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
