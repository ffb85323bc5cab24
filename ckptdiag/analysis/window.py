"""The diagnosis of a window read a piece at a time, in memory that does not grow with the window.

The derived samples come in time order (a file's pieces, one file after another) and are held
only until the block they belong to is judged: a block is a day of samples (or ``BLOCK_ROWS``),
cut at the first *quiet* sample from each whole day after the window's first sample (its day
mark, never shifted by where the block before ended). A quiet sample is one at which the server's
running flag says no checkpoint runs, so that no checkpoint spans two blocks and the checkpoint
counters read the same from there as from the window's start. Each block is judged with the
context around it (``LOOKBACK_S`` before, for the baselines of its first checkpoints;
``LOOKAHEAD_S`` after, for the recovery of its last), and only what the report shows is kept:
the episodes, the other stalls, running tallies (eviction, evidence, spacings, the timeline's
buckets) and the distributions of the baseline's figures.

A window of one block (a day or less) is judged exactly as a whole frame always was. In a longer
one, each block is one day of it: a checkpoint without enough baseline samples around it, and a
stall away from the checkpoints, are measured against *its day's* usual second (the server's load
at 3 a.m. is not its load at noon); the settings in force are read as each day saw them; the data
disk is the one that wrote the most in the first day (or the recorder's mapping).
"""

from __future__ import annotations

import gc
import math
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from functools import partial

import numpy as np
import pandas as pd

from ckptdiag.analysis.baseline import BaselineTally, near_episodes, whole_baseline
from ckptdiag.analysis.closeups import CloseUpTally
from ckptdiag.analysis.columns import Columns
from ckptdiag.analysis.dirty_curve import DirtyCurveTally
from ckptdiag.analysis.distribution import Distribution
from ckptdiag.analysis.episode_table import Episodes
from ckptdiag.analysis.episodes import find_episodes
from ckptdiag.analysis.eviction import EvictionTally, levels
from ckptdiag.analysis.evidence import EvidenceTally
from ckptdiag.analysis.history import HOUR_S
from ckptdiag.analysis.impact import assess_all
from ckptdiag.analysis.overdue import OverdueTracker
from ckptdiag.analysis.phases import phases_of
from ckptdiag.analysis.pinning import PinningTally
from ckptdiag.analysis.results import OtherStall
from ckptdiag.analysis.stalls import other_stalls
from ckptdiag.analysis.stats import SpacingTally, sums_before
from ckptdiag.analysis.thresholds import (
    BASELINE_CLEAR_AFTER_S,
    BASELINE_CLEAR_BEFORE_S,
    BASELINE_WINDOW_S,
    IMPACT_GRACE_S,
    LOAD_BEFORE_S,
    RECOVERY_WINDOW_S,
)
from ckptdiag.analysis.timeline import TimelineTally
from ckptdiag.model import engine_config
from ckptdiag.model.facts import ServerFacts

BLOCK_S = 86_400.0  # a block of a long window: a day of samples
BLOCK_ROWS = 1 << 18  # or this many (samples 0.1 s apart)
# the samples a block's checkpoints are judged with, beyond its own: the baseline window before
# the first (clear of the checkpoint before it), and after the last its recovery and the baseline
# window around it (clear of the one after it); a margin for the samples' own spacing
LOOKBACK_S = BASELINE_WINDOW_S + BASELINE_CLEAR_AFTER_S + LOAD_BEFORE_S + 30.0
LOOKAHEAD_S = BASELINE_WINDOW_S + BASELINE_CLEAR_BEFORE_S + IMPACT_GRACE_S + RECOVERY_WINDOW_S + 30.0


@contextmanager
def full_collections_deferred() -> Iterator[None]:
    """Python's full (oldest-generation) collections put off while a window is judged: each one
    walks every long-lived object again, though judging leaves no reference cycle to collect
    (measured: none found after 47 days). When the judged episodes were objects (two for each of
    68,000 checkpoints in 47 days) seven of them cost a 47-day report 0.4 s of CPU; the episodes
    are columns now (analysis/episode_table.py): what putting them off saves was not measured again.
    Young objects are still collected as usual."""
    young, middle, old = gc.get_threshold()
    gc.set_threshold(young, middle, 1 << 30)
    try:
        yield
    finally:
        gc.set_threshold(young, middle, old)


class WindowDiagnoser:
    """A window's figures fed in time order (:meth:`add`), judged a block at a time; ``facts``
    (what the server said of itself) may be set until the first block is judged."""

    def __init__(self, facts: ServerFacts) -> None:
        self.facts = facts
        self._parts: list[pd.DataFrame] = []  # rows not yet judged, with the context before them
        self._marks: list[_Marks] = []  # each part's times and quiet rows
        self._rows = 0  # rows held
        self._offset = 0  # the window's row number of the first row held
        self._first = 0  # the row held that begins the block being filled
        self._origin: float | None = None  # the window's first sample: the day marks count from it
        self._mark = 0.0  # the day mark the block being filled ends at (its first quiet row from there)
        self._judged = False  # a block was judged (the next begins after a quiet row)
        self.cache_bytes: float | None = None  # the largest cache size the server reported
        self.disk: str | None = None
        self.disk_written: dict[str, float] = {}  # MB each disk wrote in the window
        self.blocks: list[Episodes] = []  # each judged block's episodes, in columns
        self.others: list[OtherStall] = []
        self.t0: float | None = None
        self.t1: float | None = None
        self.samples = 0
        self.sampled_hours: set[int] = set()  # hours since the epoch that hold samples (the history's rows)
        self.seams: list[np.ndarray] = []
        self.baseline = BaselineTally()
        self.eviction = EvictionTally()
        self.evidence = EvidenceTally()
        self.spacings = SpacingTally()
        self.timeline = TimelineTally()
        self.closeups = CloseUpTally()
        self.dirty_curve = DirtyCurveTally()
        self.pinning = PinningTally()
        self.dt = Distribution()
        self.host_cpu = Distribution()
        self.other_cpu = Distribution()  # the host's CPUs busy with other processes than mongod
        self.journal_syncs = Distribution()
        self.journal_seen = False
        self.weighted = np.zeros((2, 2))  # (ops, writes) x (rate x dt, dt), where each is known
        self.other_writes = np.zeros(2)  # (data-file bytes written besides checkpoints' own, over seconds)
        self.own_writes = np.zeros(3)  # (the data disk's bytes written, mongod's data files' and journal's, seconds)
        self.secondary = np.zeros(2)  # samples as a secondary, samples with a role
        self.peak = _Peak()
        self.overdue: OverdueTracker | None = None

    def add(self, part: pd.DataFrame) -> None:
        """The next derived rows of the window (time after every row before)."""
        if part.empty:
            return
        self._parts.append(part)
        self._marks.append(_Marks.of(part))
        # the rows are in time order: an hour's samples are a run, so its first row names it
        hours = np.floor_divide(part["t"].to_numpy(dtype="float64"), HOUR_S)
        hours = hours[np.isfinite(hours)]
        firsts = hours[np.concatenate(([True], hours[1:] != hours[:-1]))] if hours.size else hours
        self.sampled_hours.update(firsts.astype(np.int64).tolist())
        self._rows += len(part)
        if self._origin is None:
            self._origin = float(part["t"].iloc[0])
            self._mark = self._origin + BLOCK_S
        last = float(part["t"].iloc[-1])
        if last >= self._mark + LOOKAHEAD_S or self._rows - self._first >= BLOCK_ROWS:
            self._cut()

    def _cut_row(self) -> int | None:
        """Where the block being filled can end: the first quiet row held (see :class:`_Marks`)
        from its day mark (or its ``BLOCK_ROWS``th row) on, with ``LOOKAHEAD_S`` of rows after
        it; None: none yet (never, for a source with counters but no running flag: it is judged
        whole). Read from the parts' times alone: the rows are joined only to cut them (joining a
        growing window at every part would be quadratic)."""
        t = np.concatenate([m.t for m in self._marks])
        at = min(max(int(np.searchsorted(t, self._mark)), self._first + 1), self._first + BLOCK_ROWS)
        if at >= t.size:
            return None
        counted = any(m.counted for m in self._marks)
        quiet = np.concatenate([m.quiet for m in self._marks]) if counted else t  # no statistic: any row
        fit = quiet[(quiet >= t[at]) & (quiet <= t[-1] - LOOKAHEAD_S)]
        return int(np.searchsorted(t, fit[0])) if fit.size else None

    def _held(self) -> pd.DataFrame:
        """The rows held, as one frame."""
        if len(self._parts) > 1:
            self._parts = [pd.concat(self._parts, ignore_index=True)]
        held: pd.DataFrame = self._parts[0].reset_index(drop=True)
        return held

    def _cut(self) -> None:
        """Judge every block the rows held complete (each ends at a quiet row with its lookahead)."""
        while (cut := self._cut_row()) is not None:
            d = self._held()
            t = d["t"].to_numpy(dtype="float64")
            self._judge(d, self._first, cut, final=False)
            keep = min(int(np.searchsorted(t, t[cut] - LOOKBACK_S)), cut)
            self._parts = [d.iloc[keep:].reset_index(drop=True)]
            self._marks = [_Marks.of(self._parts[0])]
            self._rows = len(d) - keep
            self._offset += keep
            self._first = cut + 1 - keep
            self._mark = self._next_mark(float(t[cut]))

    def _next_mark(self, cut: float) -> float:
        """The day mark the next block ends at, given the time of the row this one ended at: the
        same mark (a block cut at ``BLOCK_ROWS`` before it), or the first after that row. Marks are
        whole days from the window's first sample, whatever the blocks before did: where a day's
        block ends depends only on that day's rows, so any day can be judged without the others."""
        assert self._origin is not None
        if cut < self._mark:
            return self._mark
        return self._origin + (math.floor((cut - self._origin) / BLOCK_S) + 1) * BLOCK_S

    def _judge(self, d: pd.DataFrame, first: int, last: int, final: bool) -> None:
        """The block of rows ``first`` to ``last`` of ``d`` (the rows held; the others are context)."""
        stop = int(np.searchsorted(d["t"].to_numpy(dtype="float64"), float(d["t"].iloc[last]) + LOOKAHEAD_S, "right"))
        frame = d.iloc[: max(stop, last + 1)]
        own = slice(first, last + 1)
        if not self._judged:  # the data disk, once: from the window's first block
            self.disk = pick_disk(frame, self.facts.devices, own)
        cols = Columns.of(frame, self.disk)
        cache = cols.cache_max_bytes[own]
        if np.isfinite(cache).any():
            peak = float(np.nanmax(cache))
            self.cache_bytes = peak if self.cache_bytes is None else max(self.cache_bytes, peak)
        settings = engine_config.resolve(self.facts, self.cache_bytes)
        found, at = self._episodes(frame, first)
        begins = found.rows()[:, 0] + at
        mine = found.take(((first <= begins) & (begins <= last)) | (final & (begins >= first)))
        nearby = Episodes.join([self._reaching(float(cols.t[0])), found])
        clear = ~near_episodes(cols.t, nearby, BASELINE_CLEAR_BEFORE_S, BASELINE_CLEAR_AFTER_S)
        base_rows, whole = whole_baseline(cols, clear, len(nearby) > 0, own, self.baseline.loaded)
        self.baseline.block(cols, clear, own)
        judged = assess_all(mine, cols, base_rows, whole, self._offset, partial(phases_of, frame))
        at_levels = levels(cols, settings.eviction)
        if self.overdue is None:
            self.overdue = OverdueTracker(settings.interval.number, settings.eviction.dirty_target.number)
        self.overdue.block(cols, at_levels, own, judged, final)
        states = frame["eviction_state"].to_numpy(dtype="float64")
        self.eviction.block(cols, at_levels, states, settings.version, own)
        in_episode = near_episodes(cols.t, nearby, 0.0, IMPACT_GRACE_S)  # the judged are of those found
        self.others += other_stalls(cols, in_episode, whole, settings.eviction, own)
        self.evidence.block(frame, own, judged, self._offset)
        self._tally(frame, cols, own)
        self.closeups.block(cols, judged)
        dirty = cols.dirty_pct[own] * cache / 100
        self.dirty_curve.block(cols.t[own], dirty, cols.seam[own], judged)
        self.blocks.append(judged)
        self._judged = True

    def _reaching(self, since: float) -> Episodes:
        """The episodes of the blocks before whose clearance reaches ``since`` (the context's
        first sample): their checkpoints keep the context's samples out of the baselines.
        WiredTiger runs one checkpoint at a time, so they are the last ones (at a 10 s interval,
        thirty of them)."""
        out: list[Episodes] = []
        for block in reversed(self.blocks):
            reach = block.floats("end") + BASELINE_CLEAR_AFTER_S
            before = np.flatnonzero(reach < since)  # NaN (still running) reaches on
            out.insert(0, block[int(before[-1]) + 1 if before.size else 0 :])
            if before.size:
                break
        return Episodes.join(out)

    def _episodes(self, frame: pd.DataFrame, first: int) -> tuple[Episodes, int]:
        """The checkpoints from the block's first row on, found from the quiet row before it (none
        pending there: the counters read as from the window's start), with the frame's row number
        of their row 0."""
        if not self._judged:
            return find_episodes(frame), 0
        return find_episodes(frame, first - 1), first - 1

    def _tally(self, frame: pd.DataFrame, cols: Columns, own: slice) -> None:
        """The window-wide figures of a block's own rows."""
        t = cols.t[own]
        self.t0 = float(t[0]) if self.t0 is None else self.t0
        self.t1 = float(t[-1])
        self.samples += t.size
        if "seam" in frame:
            self.seams.append(t[cols.seam[own].astype(bool)])
        dt = cols.dt[own]
        self.spacings.add(dt)
        self.dt.add(dt)
        self.host_cpu.add(cols.host_cpu_pct[own])
        if "mongod_cpu_pct" in frame:
            self.other_cpu.add(cols.host_cpu_pct[own] - frame["mongod_cpu_pct"].to_numpy(dtype="float64")[own])
        if "journal_syncs_s" in frame:
            self.journal_seen = True
            self.journal_syncs.add(frame["journal_syncs_s"].to_numpy(dtype="float64")[own])
        if "block_bytes" in frame:  # every data-file write: the checkpoints' and eviction's
            block = frame["block_bytes"].to_numpy(dtype="float64")[own]
            if "ckpt_bytes" in frame:
                ckpt = frame["ckpt_bytes"].to_numpy(dtype="float64")[own]
                ok = np.isfinite(block) & np.isfinite(ckpt) & np.isfinite(dt)
                self.other_writes += (float(np.sum(np.maximum(block[ok] - ckpt[ok], 0.0))), float(np.sum(dt[ok])))
            if "journal_bytes" in frame:
                journal = frame["journal_bytes"].to_numpy(dtype="float64")[own]
                self.own_writes += _own_writes(cols.disk_wmb_s[own], block + journal, dt)
        for j, rate in enumerate((cols.ops_s[own], cols.writes_s[own])):
            ok = np.isfinite(rate) & np.isfinite(dt) & (dt > 0)
            self.weighted[j] += (float(np.sum(rate[ok] * dt[ok])), float(np.sum(dt[ok])))
        if "secondary" in frame:
            role = frame["secondary"].to_numpy(dtype="float64")[own]
            known = role[np.isfinite(role)]
            self.secondary += (float(known.sum()), float(known.size))
        self.timeline.add(frame, self.disk, own)
        self.pinning.add(frame, own)
        for dev, written in disk_writes(frame, own).items():
            self.disk_written[dev] = self.disk_written.get(dev, 0.0) + written
        self.peak.block(cols.disk_wmb_s, cols.dt, own)

    def finish(self) -> None:
        """Judge the last block (the rest of the rows held)."""
        if not self._parts:
            raise ValueError("no samples in the window")
        d = self._held()
        self._judge(d, self._first, len(d) - 1, final=True)
        self._parts = []


def disk_note(w: WindowDiagnoser) -> list[str]:
    """A note when the data disk, taken in the window's first day as the one that wrote the most,
    is not the one that wrote the most over the whole window."""
    if w.disk is None or w.disk in w.facts.devices or not w.disk_written:
        return []
    most = max(w.disk_written, key=lambda dev: w.disk_written[dev])
    if most == w.disk or w.disk_written[most] <= w.disk_written.get(w.disk, 0.0):
        return []
    return [
        f"the data disk was taken to be {w.disk}, the one that wrote the most in the window's first day; over "
        f"the whole window {most} wrote more ({w.disk_written[most] / 1024:,.1f} GB against "
        f"{w.disk_written.get(w.disk, 0.0) / 1024:,.1f} GB): report a shorter window to judge it by {most}"
    ]


@dataclass(frozen=True)
class _Marks:
    """A part's sample times, the times of its quiet rows, and whether it has any checkpoint
    statistic. A row is quiet when no checkpoint runs there (the running flag down, the start
    counter read): none is pending, so the counters read from it on as from the window's start."""

    t: np.ndarray
    quiet: np.ndarray
    counted: bool

    @classmethod
    def of(cls, part: pd.DataFrame) -> _Marks:
        t = part["t"].to_numpy(dtype="float64")
        starts = part["ckpt_starts"].to_numpy(dtype="float64")
        flag = part["ckpt_running"].to_numpy(dtype="float64")
        counted = not (np.isnan(starts).all() and np.isnan(flag).all())
        return cls(t, t[(flag == 0) & np.isfinite(starts)], counted)


def _own_writes(disk_mb_s: np.ndarray, mongod_b: np.ndarray, dt: np.ndarray) -> np.ndarray:
    """The data disk's bytes written, mongod's own (data files and journal, ``mongod_b``) and the
    seconds, over the rows where all are known: a disk that writes far more than mongod has another
    writer (no data disk: its figures are NaN, and nothing is counted)."""
    disk_b = disk_mb_s * dt * MIB
    ok = np.isfinite(disk_b) & np.isfinite(mongod_b) & np.isfinite(dt)
    return np.array([float(np.sum(disk_b[ok])), float(np.sum(mongod_b[ok])), float(np.sum(dt[ok]))])


MIB = float(1 << 20)  # iostat's MB (as -m counts them)


def disk_writes(d: pd.DataFrame, rows: slice = slice(None)) -> dict[str, float]:
    """The MB each disk of the frame wrote in its ``rows``."""
    dt = d["dt"].to_numpy(dtype="float64")[rows]
    return {
        c[len("disk.") : -len(".wmb_s")]: float(np.nansum(d[c].to_numpy(dtype="float64")[rows] * dt))
        for c in d.columns
        if c.startswith("disk.") and c.endswith(".wmb_s")
    }


def pick_disk(d: pd.DataFrame, devices: Sequence[str], rows: slice = slice(None)) -> str | None:
    """The data disk: the recorder's own mapping of dbPath to disks, else the disk that wrote the
    most in the frame's ``rows`` (FTDC keeps every physical disk of the host)."""
    written = disk_writes(d, rows)
    for dev in devices:
        if dev in written:
            return dev
    return max(written, key=lambda dev: written[dev]) if written else None


SUSTAINED_S = 1.0  # a disk's demonstrated rate: the most it wrote over this many seconds


class _Peak:
    """The data disk's highest write rate held over ``SUSTAINED_S`` (consecutive samples'
    time-weighted mean: what the disk has shown it can write, not what a throttled or CPU-bound
    checkpoint happened to average), a block at a time."""

    def __init__(self) -> None:
        self.peak: float | None = None
        self.amount = 0.0
        self.span = 0.0

    def block(self, rate: np.ndarray, dt: np.ndarray, own: slice) -> None:
        """Windows that begin at the block's ``own`` rows (they may end in the rows after)."""
        lo = own.start or 0
        ok = np.isfinite(rate[lo:]) & np.isfinite(dt[lo:]) & (dt[lo:] > 0)
        amount = sums_before(np.where(ok, rate[lo:] * dt[lo:], 0.0))
        span = sums_before(np.where(ok, dt[lo:], 0.0))
        mine = own.stop - lo
        self.amount += float(amount[mine])
        self.span += float(span[mine])
        ends = np.searchsorted(span, span[:mine] + SUSTAINED_S, side="left")
        valid = ends < span.size
        if not valid.any():
            return
        starts = np.flatnonzero(valid)
        best = float(((amount[ends[valid]] - amount[starts]) / (span[ends[valid]] - span[starts])).max())
        self.peak = best if self.peak is None else max(self.peak, best)

    def result(self) -> float | None:
        """The peak, or over a window shorter than ``SUSTAINED_S`` its mean (None: no rate)."""
        if self.peak is not None:
            return self.peak
        return self.amount / self.span if self.span > 0 else None
