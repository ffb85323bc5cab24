"""The notes under a diagnosis: what the samples could and could not show."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from ckptdiag.analysis.episode_table import Episodes
from ckptdiag.analysis.results import OtherStall
from ckptdiag.analysis.stats import nanmax, sampling_text, sums_before
from ckptdiag.analysis.thresholds import (
    HOST_BUSY_PCT,
    SLOW_REPLY_MS,
    STALL_LATENCY_RATIO,
    STALL_OPS_RATIO,
    STALL_WAIT_MS,
    STALL_WAIT_RATIO,
)
from ckptdiag.analysis.verdict import disk_bursts, hurting
from ckptdiag.recording import utc_iso


class EvidenceTally:
    """What the samples could and could not show, counted a block at a time."""

    def __init__(self) -> None:
        self.missing = 0  # replies without the wiredTiger section
        self.skipped = 0.0
        self.ops_seen = False
        self.jumps = 0
        self.first_jump: tuple[float, float] | None = None  # (when, by how much)
        self.unplaced = 0  # checkpoints counted and not placed (analysis/event_counts.checkpoints_begun)
        self.most_unplaced: tuple[float, float, int] | None = None  # (from, to, how many) of the interval with most
        self.slow = 0
        self.slowest_ms = 0.0
        self.slow_during = 0  # checkpoints with a slow reply
        self.busy_cpu: list[float] = []  # the host's CPU peak in each hurting checkpoint it saturated
        self.hurting = 0
        self.spaced = 0  # samples with a spacing

    def block(self, d: pd.DataFrame, own: slice, episodes: Episodes, offset: int = 0) -> None:
        """The ``own`` rows of a derived frame, and the block's episodes (their rows numbered from
        ``offset``, the frame's first)."""
        part = d.iloc[own]
        self.missing += int(np.nansum(part["wt_missing"].to_numpy()))
        self.skipped += float(np.nansum(part["skipped"].to_numpy()))
        self.ops_seen |= bool(part["ops_s"].notna().any())
        dt = part["dt"].to_numpy(dtype="float64")
        self.spaced += int((np.isfinite(dt) & (dt > 0)).sum())
        if "ckpt_jump" in part:
            jumps = part["ckpt_jump"].to_numpy(dtype="float64")
            rows = np.flatnonzero(np.isfinite(jumps))
            if rows.size and self.first_jump is None:
                self.first_jump = (float(part["t"].iloc[int(rows[0])]), float(jumps[int(rows[0])]))
            self.jumps += int(rows.size)
        if "ckpt_unplaced" in part:
            self._unplaced(part["t"].to_numpy(dtype="float64"), dt, part["ckpt_unplaced"].to_numpy(dtype="float64"))
        rtt = d["rtt_ms"].to_numpy(dtype="float64")
        slow = np.nan_to_num(rtt, nan=0.0) >= SLOW_REPLY_MS
        if slow[own].any():
            self.slow += int(slow[own].sum())
            self.slowest_ms = max(self.slowest_ms, float(np.nanmax(rtt[own])))
        # checkpoints with a slow reply in or just before them: a difference of running counts each
        spans = episodes.rows()[~disk_bursts(episodes)] - offset + np.array([-1, 1])
        counted = sums_before(slow)
        lo, hi = np.clip(spans[:, 0], 0, slow.size), np.clip(spans[:, 1], 0, slow.size)
        self.slow_during += int((counted[np.maximum(hi, lo)] > counted[lo]).sum())
        self._busy_host(d, episodes, offset)

    def _unplaced(self, t: np.ndarray, dt: np.ndarray, unplaced: np.ndarray) -> None:
        """Checkpoints begun and ended inside an interval that were counted, not placed."""
        counted = np.nan_to_num(unplaced, nan=0.0)
        self.unplaced += int(counted.sum())
        if not counted.any():
            return
        most = int(np.argmax(counted))
        if self.most_unplaced is None or counted[most] > self.most_unplaced[2]:
            self.most_unplaced = (float(t[most] - dt[most]), float(t[most]), int(counted[most]))

    def _busy_host(self, d: pd.DataFrame, episodes: Episodes, offset: int) -> None:
        """Checkpoints that hurt while the host's CPUs (all processes) were saturated: a confounder
        the checkpoint's own counters cannot show."""
        hurt = hurting(episodes)
        self.hurting += int(hurt.sum())
        if "host_cpu_pct" not in d:
            return
        cpu = d["host_cpu_pct"].to_numpy(dtype="float64")
        for first, last in (episodes.rows()[hurt] - offset).tolist():
            # the samples whose interval the checkpoint touches
            peak = nanmax(cpu[first : last + 1])
            if peak is not None and peak >= HOST_BUSY_PCT:
                self.busy_cpu.append(peak)


def evidence(
    tally: EvidenceTally,
    episodes: Episodes,
    others: Sequence[OtherStall],
    gaps: int,
    restarts: int,
    period_s: float | None,
    sampling: tuple[tuple[float, float], ...] = (),
) -> list[str]:
    """Gaps, restarts, missing sections, slow replies, skipped ticks and other stalls, as notes
    (``sampling``: the window's spacings, :func:`~ckptdiag.analysis.stats.spacings`, made once)."""
    notes = []
    if gaps:
        notes.append(f"{gaps} gaps in the samples (no rate or checkpoint is read across one)")
    if restarts:
        notes.append(f"{restarts} server restarts in the window")
    if tally.missing:
        notes.append(f"{tally.missing} serverStatus replies without the wiredTiger section (checkpoint contention)")
    if len(episodes) and disk_bursts(episodes).all():
        notes.append("no checkpoint statistics: episodes are disk write bursts")
    if period_s and period_s > 1.5:
        notes.append(
            f"samples every {period_s:.0f} s: checkpoints shorter than that are placed from the server's timings"
        )
    notes += _counter_jumps(tally)
    notes += _unplaced(tally)
    notes += _uneven_sampling(tally.spaced, sampling)
    if tally.slow:
        notes.append(
            f"{tally.slow} serverStatus replies took {SLOW_REPLY_MS / 1000:g} s or more "
            f"(slowest {tally.slowest_ms / 1000:.1f} s); {tally.slow_during} checkpoints had one"
        )
    if tally.busy_cpu:
        busy = tally.busy_cpu
        low, high = f"{min(busy):.0f}", f"{max(busy):.0f}"
        span = low if low == high else f"{low}-{high}"  # "100 %", not "100-100 %"
        notes.append(
            f"the host's CPUs were {span} % busy (all processes) in {len(busy)} of the "
            f"{tally.hurting} checkpoints that hurt: the server may have waited for a CPU as well as for the disk"
        )
    if tally.skipped:
        notes.append(f"{tally.skipped:.0f} sampling ticks skipped while a reply was late")
    if not tally.ops_seen:
        notes.append("no opcounters: throughput impact unknown")
    if others:
        first = others[0]
        notes.append(
            f"{len(others)} stall{'s' if len(others) != 1 else ''} while no checkpoint ran (the same "
            f"yardstick: writes at most {STALL_OPS_RATIO * 100:.0f} % of the baseline, write latency "
            f"{STALL_LATENCY_RATIO:g}x or more, or writes waiting {STALL_WAIT_MS:g} ms and {STALL_WAIT_RATIO:g}x): "
            f"not the checkpoints; the first at {utc_iso(first.start)}, "
            f"{first.duration_s:.0f} s" + (f" ({'; '.join(first.seen)})" if first.seen else "")
        )
    return notes


def _counter_jumps(tally: EvidenceTally) -> list[str]:
    """A note for each checkpoint start counter that jumped by more than a server can begin
    (the first named): evidence of a reset or of damage, never counted as checkpoints."""
    if tally.first_jump is None:
        return []
    at, by = tally.first_jump
    more = f" ({tally.jumps - 1} more jump{'s' if tally.jumps > 2 else ''})" if tally.jumps > 1 else ""
    return [
        f"checkpoint counter jumped by {by:,.0f} at {utc_iso(at)}: a reset or "
        f"corruption, not checkpoints (none is counted across it){more}"
    ]


def _unplaced(tally: EvidenceTally) -> list[str]:
    """A note for the checkpoints the start counter says began and ended inside intervals too
    long, or too crowded, to place each one."""
    if tally.most_unplaced is None:
        return []
    since, until, count = tally.most_unplaced
    return [
        f"{tally.unplaced:,} checkpoints began and ended between two samples too far apart, or too many "
        f"in one interval, to place each one (the most, {count:,}, from {utc_iso(since)} to {utc_iso(until)}): "
        "counted by the server's start counter, not listed, timed or judged one by one; the checkpoints "
        "listed, their count and their period are those the samples place"
    ]


UNEVEN_SAMPLING = 3.0  # the longest common spacing over the shortest


def _uneven_sampling(spaced: int, named: tuple[tuple[float, float], ...]) -> list[str]:
    """A note when the spacing of the samples varies (the period changed, the collector fell
    behind, or FTDC sampled faster while busy): every spacing that covers 1 % of the time or
    more, with its share, so a 10 s spacing a tenth of the samples take is never left out."""
    if spaced < 10:
        return []
    if len(named) < 2 or named[-1][0] <= UNEVEN_SAMPLING * named[0][0]:
        return []
    return [
        f"samples {sampling_text(named)} (the collection period changed, the collector fell behind, or FTDC "
        "sampled faster while the server was busy): every checkpoint is counted from the server's counters; "
        "between coarse samples it is placed within its interval and its cost is averaged over it"
    ]
