"""History the server keeps for its readers, and what holds it there, over a window.

A long-running transaction or snapshot, or a majority commit point that lags (a PSA set with its
secondary down), keeps every older version of what is written since: in the cache, then in the
history store ("cache overflow" or "lookaside" table before 4.4), which checkpoints then write
(WT-6681). The server's gauges say how far back it pins history (in timestamps, whose high 32
bits are seconds, and in transaction IDs) and how large the history store has grown; the data
handles open say how many tables and indexes each checkpoint walks (WT-5479).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ckptdiag.analysis.distribution import Distribution
from ckptdiag.analysis.results import Pinning
from ckptdiag.analysis.stats import max_so_far

# derived column -> the catalogue's metric (a column only where the version has it)
PINNING = {
    "hs_disk_bytes": "cache.hs_disk_bytes",
    "hs_cache_bytes": "cache.hs_bytes",
    "pinned_ids": "txn.pinned_ids",
    "pinned_ckpt_ids": "txn.pinned_ckpt_ids",
    "pinned_ts": "txn.pinned_ts",
    "dhandles": "dhandles.active",
}
TS_SECONDS = float(1 << 32)  # a MongoDB timestamp: seconds in the high 32 bits, an increment in the low
# a pinned range this long is no range: nothing set the oldest timestamp (a standalone server
# reads as the whole epoch), so it is not a figure
MAX_PINNED_S = 365 * 86_400.0


class PinningTally:
    """The window's history store size (first and last), how far back history was pinned
    (median and most) and the most data handles open, fed a block's own rows at a time."""

    def __init__(self) -> None:
        self.hs_first: tuple[float, float] | None = None  # (time, bytes)
        self.hs_last: tuple[float, float] | None = None
        self.pinned_s = Distribution()
        self.pinned_s_max: float | None = None
        self.pinned_ids_max: float | None = None
        self.handles_max: float | None = None

    def add(self, frame: pd.DataFrame, own: slice) -> None:
        """The ``own`` rows of a derived frame."""
        t = frame["t"].to_numpy(dtype="float64")[own]
        hs = _history_bytes(frame, own)
        if hs is not None:
            known = np.flatnonzero(np.isfinite(hs))
            if known.size:
                first, last = int(known[0]), int(known[-1])
                self.hs_first = self.hs_first or (float(t[first]), float(hs[first]))
                self.hs_last = (float(t[last]), float(hs[last]))
        if "pinned_ts" in frame:
            seconds = frame["pinned_ts"].to_numpy(dtype="float64")[own] / TS_SECONDS
            seconds = np.where(seconds <= MAX_PINNED_S, seconds, np.nan)
            self.pinned_s.add(seconds)
            self.pinned_s_max = max_so_far(self.pinned_s_max, seconds)
        if "pinned_ids" in frame:
            ids = frame["pinned_ids"].to_numpy(dtype="float64")[own]
            if "pinned_ckpt_ids" in frame:  # a checkpoint pins its own snapshot while it runs: not a reader
                ids = ids - np.nan_to_num(frame["pinned_ckpt_ids"].to_numpy(dtype="float64")[own])
            self.pinned_ids_max = max_so_far(self.pinned_ids_max, ids)
        if "dhandles" in frame:
            self.handles_max = max_so_far(self.handles_max, frame["dhandles"].to_numpy(dtype="float64")[own])

    def result(self) -> Pinning | None:
        """What the window showed (None: the server recorded none of it)."""
        if self.hs_first is None and self.pinned_s_max is None and self.pinned_ids_max is None:
            return None if self.handles_max is None else Pinning(data_handles_max=self.handles_max)
        first, last = self.hs_first, self.hs_last
        return Pinning(
            hs_first_bytes=first[1] if first else None,
            hs_last_bytes=last[1] if last else None,
            hs_span_s=(last[0] - first[0]) if first and last else 0.0,
            pinned_s_p50=self.pinned_s.median(),
            pinned_s_max=self.pinned_s_max,
            pinned_ids_max=self.pinned_ids_max,
            data_handles_max=self.handles_max,
        )


def _history_bytes(frame: pd.DataFrame, own: slice) -> np.ndarray | None:
    """The history kept: the history store on disk and its pages in the cache (not yet written
    there, or read back), each where the version has it (None: neither)."""
    parts = [frame[c].to_numpy(dtype="float64")[own] for c in ("hs_disk_bytes", "hs_cache_bytes") if c in frame]
    if not parts:
        return None
    stacked = np.vstack(parts)
    known = np.isfinite(stacked).any(axis=0)
    return np.where(known, np.nansum(stacked, axis=0), np.nan)
