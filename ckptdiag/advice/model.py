"""The checkpoint model behind the advice: what a checkpoint costs at another interval or dirty target.

Between two checkpoints dirty data builds up, so the bytes a checkpoint writes at another
interval are what the server's own cache held that long after a checkpoint ended (the share
the caller reads from :mod:`ckptdiag.analysis.dirty_curve`), else in proportion to the interval.
Its sync sends them to the disk together with what eviction wrote in the 30 s before it, which
Linux still holds (``KERNEL_EXPIRE_S``); the disk flushes both at the rate this server's
checkpoints achieved, so the duration follows their sum; and the extra write latency inside a
checkpoint (over the latency between checkpoints) scales with its duration. In proportion to the
interval, a published table of one server at 30/60/120/300 s follows it within 12 % for the 30
and 120 s rows from its 60 s row alone; at 300 s the model is pessimistic by 30 %
(tests/test_advice.py); at a much shorter interval pages touched by scattered writes make those
bytes a floor. Read from the curve, the lab's 60 -> 10 s came within 25 % in duration and write
p99, its bytes high by about half (docs/advice.md#predictions).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

import numpy as np

from ckptdiag.analysis.episode import Episode
from ckptdiag.analysis.episode_table import Episodes
from ckptdiag.analysis.results import Diagnosis
from ckptdiag.analysis.summary import figure
from ckptdiag.analysis.verdict import disk_bursts, hurting
from ckptdiag.model.engine_config import DEFAULT_INTERVAL_S

# Linux writes back what a process wrote (and did not sync) once it has been dirty this long
# (vm.dirty_expire_centisecs, 3000 by default): what eviction wrote in the 30 s before a
# checkpoint can still be in the page cache when the checkpoint's sync comes, and goes with it.
# It is the bound: the kernel keeps the age per file (its oldest dirty page), so it holds between
# none and 30 s of them; the lab's loop device held ~20 s, its model disk 30 (docs/lab.md#kernel-hold).
KERNEL_EXPIRE_S = 30.0


def held_bytes(other_b_s: float, period_s: float) -> float:
    """Eviction's writes (``other_b_s`` a second) the kernel can still hold when a checkpoint
    ``period_s`` after the last one syncs: they go with it."""
    return other_b_s * min(KERNEL_EXPIRE_S, period_s)


@dataclass(frozen=True)
class CheckpointShape:
    """A typical checkpoint of a server: how often, how much, how long, and what it cost."""

    interval_s: float
    bytes_written: float | None  # its own (the server's "bytes written for checkpoint")
    duration_s: float | None
    p99_inside_ms: float | None = None  # write p99 at its worst inside a checkpoint
    p99_between_ms: float | None = None  # write p99 between checkpoints
    ops_dip: float | None = None  # 1 - (worst second's throughput / usual): 0 no dip, 1 stopped
    other_b_s: float = 0.0  # what eviction writes besides, bytes a second
    # of its duration, what no dirty data makes and no interval shortens: its prepare (gathering
    # every table's and index's handle under the schema lock), where the server times it
    fixed_s: float = 0.0

    @property
    def prepare_bound(self) -> bool:
        """Whether its fixed part (its prepare) is half its duration or more (see :func:`prepare_bound`)."""
        return _mostly_prepare(self.fixed_s, self.duration_s)

    @property
    def held_bytes(self) -> float:
        """Eviction's writes the kernel still holds when the checkpoint syncs: they go with it."""
        return held_bytes(self.other_b_s, self.interval_s)

    @property
    def disk_rate(self) -> float | None:
        """Bytes per second its sync sent to the disk (this server's own disk, as it behaved), over
        the part of its duration that wrote."""
        if self.bytes_written and self.duration_s and self.duration_s > self.fixed_s:
            return (self.bytes_written + self.held_bytes) / (self.duration_s - self.fixed_s)
        return None


def at_interval(now: CheckpointShape, interval_s: float, share: float | None = None) -> CheckpointShape:
    """The predicted checkpoint at ``interval_s``, from the measured one ``now``: its own bytes
    are ``share`` of today's (the dirty data this server's cache held that long after a
    checkpoint, :mod:`~ckptdiag.analysis.dirty_curve`; without it, in proportion to the
    interval, a floor where writes are scattered), eviction's held writes scale with the
    kernel's hold (at most 30 s of them), its duration with both (at the rate the disk flushed
    them now) beyond its fixed part, and the latency it adds with its duration."""
    f = share if share is not None else interval_s / now.interval_s
    written = now.bytes_written * f if now.bytes_written is not None else None
    after = replace(now, interval_s=interval_s, bytes_written=written)
    rate = now.disk_rate
    duration = None
    if rate and written is not None:
        duration = now.fixed_s + (written + after.held_bytes) / rate
    elif now.duration_s is not None:
        duration = now.fixed_s + (now.duration_s - now.fixed_s) * f
    p99 = None
    if now.p99_inside_ms is not None and duration is not None and now.duration_s:
        between = now.p99_between_ms or 0.0
        p99 = between + max(now.p99_inside_ms - between, 0.0) * duration / now.duration_s
    dip = None
    if now.ops_dip is not None and now.duration_s:
        # seen a second at a time: a dip of d seconds costs min(d, 1) of the worst second
        dip = min(1.0, now.ops_dip * min(duration or 0.0, 1.0) / min(now.duration_s, 1.0))
    return replace(after, duration_s=duration, p99_inside_ms=p99, ops_dip=dip)


def sync_bytes(bytes_now: float, share: float, period_s: float, other_b_s: float = 0.0) -> float:
    """What a checkpoint's sync sends to the disk once a dirty target leaves it ``share`` of the
    dirty data it writes now (``bytes_now``, built up evenly over ``period_s``): that share; what
    eviction already writes (``other_b_s``) in the kernel's last ``KERNEL_EXPIRE_S`` before it; and
    what eviction would write of the rest from when dirty data reaches the target, in that time too.

    >>> sync_bytes(60.0, 1.0, 60.0, other_b_s=0.5)  # its own 60, and 30 s of eviction's 0.5 a second
    75.0
    >>> sync_bytes(60.0, 0.1, 60.0)  # 6 of its own; eviction writes the other 54 at 1 a second
    36.0
    """
    share = min(share, 1.0)
    evicting_s = (1 - share) * period_s  # eviction runs once dirty data reaches the target
    return bytes_now * share + held_bytes(other_b_s, period_s) + held_bytes(bytes_now / period_s, evicting_s)


# a lower dirty target that would cut what a checkpoint writes (or its sync flushes) by less than
# this is neither a cause nor a change worth making: on a disk the checkpoint's sync saturates,
# the kernel's hold of eviction's writes (up to 30 s) can take back half of it at 60 s checkpoints
MIN_GAIN = 0.2


def cuts_enough(flush: tuple[float, float]) -> bool:
    """Whether (what a checkpoint writes now, what it would write) is a cut of ``MIN_GAIN`` or more."""
    now, after = flush
    return after <= (1 - MIN_GAIN) * now


def flush_at_target(dx: Diagnosis, target_pct: float, held: bool) -> tuple[float, float] | None:
    """(what a typical checkpoint that hurt writes now, what it would write with a dirty target of
    ``target_pct`` % of the cache), bytes; with ``held`` (the disk saturates) both are what its
    sync sends to the disk, eviction's writes the kernel still holds included (:func:`sync_bytes`).
    None where the window has no checkpoint bytes or dirty level to scale."""
    found = dx.eviction.dirty_pct_max
    period = dx.checkpoint_period_s or dx.settings.interval.value or DEFAULT_INTERVAL_S
    now = checkpoint_shape(dx, period)
    if not found or now is None or not now.bytes_written:
        return None
    share = min(target_pct / found, 1.0)  # of the dirty data checkpoints find now, what the target leaves
    bytes_now = now.bytes_written
    if not held:
        return bytes_now, bytes_now * share
    other = dx.other_writes_b_s or 0.0
    return sync_bytes(bytes_now, 1.0, period, other), sync_bytes(bytes_now, share, period, other)


def finished(dx: Diagnosis, *, focus: bool = True) -> Episodes:
    """The checkpoints that finished in the window: those that hurt when any did (``focus``), else all."""
    done = dx.episodes.known("end")
    hurt = done & hurting(dx.episodes)
    return dx.episodes.take(hurt if focus and hurt.any() else done)


def median(values: Sequence[float]) -> float | None:
    """The median, or None of nothing."""
    return float(np.median(values)) if values else None


def typical_share(episodes: Sequence[Episode], part: Callable[[Episode], float | None]) -> float | None:
    """The median over ``episodes`` of ``part`` (seconds of each one's time) as a share of its
    duration, at most 1; None where none has both."""
    shares = [p / e.duration_s for e in episodes if e.duration_s and (p := part(e)) is not None]
    typical = median(shares)
    return None if typical is None else min(1.0, typical)


def checkpoint_shape(dx: Diagnosis, interval_s: float) -> CheckpointShape | None:
    """The measured typical checkpoint (the ones that hurt, else all) at ``interval_s``."""
    done = dx.episodes.known("end") & ~disk_bursts(dx.episodes)
    hurt = done & hurting(dx.episodes)
    focus = dx.episodes.take(hurt if hurt.any() else done)
    durations = [x for x in focus.present("duration_s").tolist() if x]
    written = [x for x in focus.present("bytes_written").tolist() if x]
    if not durations:
        return None
    ratios = figure(finished(dx), "impact.ops_ratio")
    return CheckpointShape(
        interval_s=interval_s,
        bytes_written=median(written),
        duration_s=median(durations),
        p99_inside_ms=median(figure(finished(dx), "impact.write_p99_ms_peak")),
        p99_between_ms=dx.baseline.write_p99_ms,
        ops_dip=1 - float(np.median(ratios)) if ratios else None,
        other_b_s=dx.other_writes_b_s or 0.0,
        fixed_s=min(_prepared_s(focus), median(durations) or 0.0),
    )


def _prepared_s(focus: Episodes) -> float:
    """The typical prepare of these checkpoints (:func:`prepare_s`, read from the columns), where
    the server times it (7.1+), else 0."""
    prepared, handles = focus.known("phases.prepare_s"), focus.known("phases.handles_s")
    seconds = np.where(prepared, focus.floats("phases.prepare_s"), focus.floats("phases.handles_s"))
    return median(seconds[focus.flags("phases") & (prepared | handles)].tolist()) or 0.0


def prepare_s(e: Episode) -> float | None:
    """The seconds checkpoint ``e`` spent preparing (gathering its handles included), where the
    server times it."""
    p = e.phases
    if p is None:
        return None
    return p.prepare_s if p.prepare_s is not None else p.handles_s


# a checkpoint whose prepare took this share of it or more spent its time under the schema lock,
# not writing: an interval does not shorten it, and what waited for it waited for the lock, not
# for the disk
PREPARE_BOUND_SHARE = 0.5


def prepare_bound(e: Episode) -> bool:
    """Whether checkpoint ``e`` spent half its time or more preparing (by the server's timing)."""
    return _mostly_prepare(prepare_s(e), e.duration_s)


def _mostly_prepare(prepare: float | None, duration: float | None) -> bool:
    return prepare is not None and bool(duration) and prepare >= PREPARE_BOUND_SHARE * float(duration or 0)
