"""The notes under a diagnosis: what the samples could and could not show."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from ckptdiag.analysis.results import Episode, OtherStall
from ckptdiag.analysis.stats import nanmax, sampling_text
from ckptdiag.analysis.thresholds import HOST_BUSY_PCT, SLOW_REPLY_MS, STALL_LATENCY_RATIO, STALL_OPS_RATIO
from ckptdiag.analysis.verdict import hurts
from ckptdiag.recording import utc_iso


def _busy_host(d: pd.DataFrame, episodes: Sequence[Episode]) -> list[str]:
    """Checkpoints that hurt while the host's CPUs (all processes) were saturated: a confounder
    the checkpoint's own counters cannot show."""
    if "host_cpu_pct" not in d:
        return []
    cpu = d["host_cpu_pct"].to_numpy(dtype="float64")
    hurting = [e for e in episodes if hurts(e)]
    busy = []
    for e in hurting:
        peak = nanmax(cpu[e.rows[0] : e.rows[1] + 1])  # the samples whose interval the checkpoint touches
        if peak is not None and peak >= HOST_BUSY_PCT:
            busy.append(peak)
    if not busy:
        return []
    return [
        f"the host's CPUs were {min(busy):.0f}-{max(busy):.0f} % busy (all processes) in {len(busy)} of the "
        f"{len(hurting)} checkpoints that hurt: the server may have waited for a CPU as well as for the disk"
    ]


def evidence(
    d: pd.DataFrame,
    episodes: Sequence[Episode],
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
    missing = int(np.nansum(d["wt_missing"].to_numpy()))
    if missing:
        notes.append(f"{missing} serverStatus replies without the wiredTiger section (checkpoint contention)")
    if episodes and all(e.evidence == "disk-burst" for e in episodes):
        notes.append("no checkpoint statistics: episodes are disk write bursts")
    if period_s and period_s > 1.5:
        notes.append(
            f"samples every {period_s:.0f} s: checkpoints shorter than that are placed from the server's timings"
        )
    notes += _counter_jumps(d)
    notes += _uneven_sampling(d["dt"].to_numpy(dtype="float64"), sampling)
    notes += _slow_replies(d["rtt_ms"].to_numpy(dtype="float64"), episodes)
    notes += _busy_host(d, episodes)
    skipped = float(np.nansum(d["skipped"].to_numpy()))
    if skipped:
        notes.append(f"{skipped:.0f} sampling ticks skipped while a reply was late")
    if d["ops_s"].isna().all():
        notes.append("no opcounters: throughput impact unknown")
    if others:
        first = others[0]
        notes.append(
            f"{len(others)} stall{'s' if len(others) != 1 else ''} while no checkpoint ran (the same "
            f"yardstick: writes at most {STALL_OPS_RATIO * 100:.0f} % of the baseline, write latency "
            f"{STALL_LATENCY_RATIO:g}x or more): not the checkpoints; the first at {utc_iso(first.start)}, "
            f"{first.duration_s:.0f} s" + (f" ({'; '.join(first.seen)})" if first.seen else "")
        )
    return notes


def _counter_jumps(d: pd.DataFrame) -> list[str]:
    """A note for each checkpoint start counter that jumped by more than a server can begin
    (the first named): evidence of a reset or of damage, never counted as checkpoints."""
    if "ckpt_jump" not in d:
        return []
    jumps = d["ckpt_jump"].to_numpy(dtype="float64")
    rows = np.flatnonzero(np.isfinite(jumps))
    if not rows.size:
        return []
    first = int(rows[0])
    more = f" ({rows.size - 1} more jump{'s' if rows.size > 2 else ''})" if rows.size > 1 else ""
    return [
        f"checkpoint counter jumped by {jumps[first]:,.0f} at {utc_iso(float(d['t'].iloc[first]))}: a reset or "
        f"corruption, not checkpoints (none is counted across it){more}"
    ]


UNEVEN_SAMPLING = 3.0  # the longest common spacing over the shortest


def _uneven_sampling(dt: np.ndarray, named: tuple[tuple[float, float], ...]) -> list[str]:
    """A note when the spacing of the samples varies (the period changed, the collector fell
    behind, or FTDC sampled faster while busy): every spacing that covers 1 % of the time or
    more, with its share, so a 10 s spacing a tenth of the samples take is never left out."""
    if int((np.isfinite(dt) & (dt > 0)).sum()) < 10:
        return []
    if len(named) < 2 or named[-1][0] <= UNEVEN_SAMPLING * named[0][0]:
        return []
    return [
        f"samples {sampling_text(named)} (the collection period changed, the collector fell behind, or FTDC "
        "sampled faster while the server was busy): every checkpoint is counted from the server's counters; "
        "between coarse samples it is placed within its interval and its cost is averaged over it"
    ]


def _slow_replies(rtt: np.ndarray, episodes: Sequence[Episode]) -> list[str]:
    slow = np.nan_to_num(rtt, nan=0.0) >= SLOW_REPLY_MS
    if not slow.any():
        return []
    during = sum(int(slow[max(e.rows[0] - 1, 0) : e.rows[1] + 1].any()) for e in episodes if e.evidence != "disk-burst")
    return [
        f"{int(slow.sum())} serverStatus replies took {SLOW_REPLY_MS / 1000:g} s or more "
        f"(slowest {np.nanmax(rtt) / 1000:.1f} s); {during} checkpoints had one"
    ]
