"""Where each checkpoint's time went: the server's own timing of its phases (scrub, prepare and
the handles it gathered, the per-tree writes, the history store, the final syncs), read from the
"most recent" gauges at the first sample after it ended.

Versions time different phases (docs/metrics.md): 3.4 the scrub; 4.2.12+ and 4.4.3+ the handles;
4.4+ prepare and the history store; 7.1+ the syncs; 7.3+ the per-tree work. A breakdown is kept
only where it is this checkpoint's: the sample's "most recent time" is its duration (not a later
one's, when two ended between samples), and its phases add up to no more than that duration.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ckptdiag.analysis.episode import TIMED_PHASES, Episode
from ckptdiag.analysis.episode_table import Episodes, PhaseArrays
from ckptdiag.model.window import when

# column -> (the catalogue's metric, derived into the column as it is; Phases field, seconds per unit)
PHASES = {
    "ckpt_scrub_ms": ("ckpt.scrub_ms", "scrub_s", 1e-3),
    "ckpt_prepare_ms": ("ckpt.prepare_ms", "prepare_s", 1e-3),
    "ckpt_handles_us": ("ckpt.handles_us", "handles_s", 1e-6),
    "ckpt_handles_walked": ("ckpt.handles_walked", "handles", 1.0),
    "ckpt_trees_us": ("ckpt.trees_us", "trees_s", 1e-6),
    "ckpt_hs_us": ("ckpt.hs_us", "history_store_s", 1e-6),
    "ckpt_sync_us": ("ckpt.sync_us", "sync_s", 1e-6),
}
ROUNDING_S = 0.002  # a phase timed in whole ms (and the duration too): each may read 1 ms long


def phases_of(frame: pd.DataFrame, episodes: Episodes, rows: np.ndarray) -> PhaseArrays:
    """Each episode's phases where the frame has them and they are its own (not timed
    otherwise), read at ``rows`` (the frame's row of each one's last sample); judged all at once
    (a long window has 70,000), as arrays: the episodes' columns."""
    present = [c for c in PHASES if c in frame]
    if not present or not episodes or "ckpt_recent_ms" not in frame:
        return PhaseArrays(np.zeros(len(episodes), dtype=bool), {})
    t = frame["t"].to_numpy()
    ended = episodes.known("end")
    duration = np.where(ended & episodes.known("duration_s"), episodes.floats("duration_s"), np.nan)
    inside = (rows >= 0) & (rows < t.size)
    at = np.where(inside, rows, 0)
    ends = np.where(ended, episodes.floats("end"), np.nan)
    # the sample after it ended, whose "most recent time" is this checkpoint's
    own = inside & (t[at] >= ends) & (np.abs(_at(frame, "ckpt_recent_ms", at) / 1000 - duration) <= ROUNDING_S)
    read = {PHASES[c][1]: np.where(own, _at(frame, c, at) * PHASES[c][2], np.nan) for c in present}
    read = {field: np.where(v >= 0, v, np.nan) for field, v in read.items()}
    known = np.zeros(len(episodes), dtype=np.int64)
    timed = np.zeros(len(episodes))
    for field, v in read.items():
        known += np.isfinite(v)
        if field in TIMED_PHASES:
            timed += np.nan_to_num(v)
    prepare = read.get("prepare_s", duration)
    handles = read.get("handles_s", np.zeros(len(episodes)))
    with np.errstate(invalid="ignore"):
        # not this checkpoint's, or counters that disagree: no breakdown rather than a wrong one
        # a checkpoint under a millisecond has nothing to break down
        kept = (duration > 0) & (
            (known > 0)
            & (timed <= duration + ROUNDING_S * known)
            & ~(np.nan_to_num(handles) > np.where(np.isnan(prepare), duration, prepare) + ROUNDING_S)
        )
    return PhaseArrays(kept, read)


def _at(frame: pd.DataFrame, column: str, rows: np.ndarray) -> np.ndarray:
    """The column's values at ``rows`` as float64 (only those rows widened: a block has 16,000)."""
    return np.asarray(frame[column].to_numpy()[rows], dtype="float64")


SHOWN_SHARE = 0.02  # a phase under this share of the checkpoint (and under SHOWN_S) is left out of the text
SHOWN_S = 0.05


def breakdown(e: Episode) -> str | None:
    """Where the checkpoint's time went, in words: "8.1 s: 0.2 s gathering 45,000 handles, 6.5 s
    writing its tables and indexes (58 MB), 1.2 s syncing its files" (None without phases)."""
    p, duration = e.phases, e.duration_s
    if p is None or not duration:
        return None

    def worth(x: float | None) -> bool:
        return x is not None and (x >= SHOWN_S or x >= SHOWN_SHARE * duration)

    # the handles always, however quick: whether they are the problem is the question (WT-5479)
    gathering = None
    if p.handles_s is not None:
        gathering = f"{_seconds(p.handles_s)} gathering " + (
            f"{p.handles:,.0f} handles" if p.handles else "its handles"
        )
    parts = []
    if worth(p.scrub_s):
        parts.append(f"{_seconds(p.scrub_s)} scrubbing dirty data before it")
    if worth(p.prepare_s):
        parts.append(f"{_seconds(p.prepare_s)} preparing" + (f" ({gathering} of it)" if gathering else ""))
    elif gathering:
        parts.append(gathering)
    if worth(p.trees_s):
        written = f" ({e.bytes_written / 2**20:,.0f} MB)" if e.bytes_written else ""
        parts.append(f"{_seconds(p.trees_s)} writing its tables and indexes{written}")
    if worth(p.history_store_s):
        parts.append(f"{_seconds(p.history_store_s)} on the history store")
    if worth(p.sync_s):
        parts.append(f"{_seconds(p.sync_s)} syncing its files")
    rest = duration - p.timed()
    if worth(rest):
        # before 7.3 the per-tree writes (before 7.1 the syncs too) are not timed: they are the rest
        untimed = p.trees_s is None or p.sync_s is None
        parts.append(f"{_seconds(rest)} " + ("in phases this version does not time" if untimed else "in the rest"))
    return f"{_seconds(duration)}: " + ", ".join(parts) if parts else None


def _seconds(x: float | None) -> str:
    """Seconds, or milliseconds under ``SHOWN_S`` (None only where a caller checked it is not)."""
    x = x or 0.0
    return f"{x:.1f} s" if x >= SHOWN_S else f"{x * 1000:.1f} ms"


def longest_finding(episodes: Episodes) -> list[str]:
    """Where the longest checkpoint with a breakdown spent its time, as a finding (none without)."""
    durations = episodes.floats("duration_s")
    timed = np.flatnonzero(episodes.flags("phases") & episodes.known("duration_s") & (durations != 0))
    if not timed.size:
        return []
    e = episodes[int(timed[np.argmax(durations[timed])])]  # the first of the longest
    said = breakdown(e)
    return [f"where the longest checkpoint's time went ({when(e.start)}): {said}"] if said else []
