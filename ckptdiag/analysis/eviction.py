"""Cache and eviction pressure over the whole window, against the settings in force, tallied a
block at a time."""

from __future__ import annotations

import numpy as np

from ckptdiag.analysis.columns import Columns
from ckptdiag.analysis.distribution import Distribution
from ckptdiag.analysis.results import EvictionSummary
from ckptdiag.analysis.stats import max_so_far
from ckptdiag.model import catalogue
from ckptdiag.model.engine_config import EvictionSettings


def levels(cols: Columns, settings: EvictionSettings) -> np.ndarray:
    """Each sample's interval counted at each cache level it reached (rows x 4: dirty at its
    target, dirty at its trigger, used at the eviction trigger, updates at their trigger)."""
    dirty = np.nan_to_num(cols.dirty_pct)
    dt = np.nan_to_num(cols.dt, nan=0.0)
    out = np.zeros((dt.size, 4))
    for j, (values, level) in enumerate(
        (
            (dirty, settings.dirty_target.number),
            (dirty, settings.dirty_trigger.number),
            (np.nan_to_num(cols.used_pct), settings.trigger.number),
            (np.nan_to_num(cols.updates_pct), settings.updates_trigger.number),
        )
    ):
        out[:, j] = np.where(values >= level, dt, 0.0)
    return out


class EvictionTally:
    """Dirty and used cache, time at or over each target and trigger, application-thread
    eviction, and how many samples had each eviction-state flag, over the blocks of a window."""

    def __init__(self) -> None:
        self.dirty = Distribution()
        self.dirty_max: float | None = None
        self.used_max: float | None = None
        self.at_levels = np.zeros(4)
        self.app_evicted = 0.0
        self.app_wait_ms = 0.0
        self.flags: dict[str, int] = {}

    def block(
        self, cols: Columns, at_levels: np.ndarray, states: np.ndarray, version: catalogue.Version | None, own: slice
    ) -> None:
        """The ``own`` rows of one block (``at_levels``: :func:`levels`; ``states``: the raw
        eviction state)."""
        dirty = cols.dirty_pct[own]
        self.dirty.add(dirty)
        self.dirty_max = max_so_far(self.dirty_max, dirty)
        self.used_max = max_so_far(self.used_max, cols.used_pct[own])
        self.at_levels += at_levels[own].sum(axis=0)
        self.app_evicted += float(np.nansum(cols.app_evict[own]))
        self.app_wait_ms += float(np.nansum(cols.app_wait_ms[own]))
        finite = states[own][np.isfinite(states[own])].astype(np.int64)
        for value, count in zip(*np.unique(finite, return_counts=True), strict=True):
            for flag in catalogue.eviction_state_flags(int(value), version):
                self.flags[flag] = self.flags.get(flag, 0) + int(count)

    def summary(self, stale_levels: np.ndarray) -> EvictionSummary:
        """The window's summary; ``stale_levels``: the time the engine's figures stood frozen at
        each level (their last values, never time spent there)."""
        at = self.at_levels - stale_levels
        return EvictionSummary(
            dirty_pct_p50=self.dirty.median(),
            dirty_pct_max=self.dirty_max,
            used_pct_max=self.used_max,
            dirty_pct_p90=self.dirty.quantile(90.0),
            seconds_over_dirty_target=float(at[0]),
            seconds_over_dirty_trigger=float(at[1]),
            seconds_over_eviction_trigger=float(at[2]),
            seconds_over_updates_trigger=float(at[3]),
            app_evicted_pages=self.app_evicted,
            app_wait_s=self.app_wait_ms / 1000,
            state_samples=tuple(self.flags.items()),
        )
