"""Cache and eviction pressure over the whole window, against the settings in force."""

from __future__ import annotations

import numpy as np

from ckptdiag import catalogue
from ckptdiag.analysis.columns import Columns
from ckptdiag.analysis.results import EvictionSummary
from ckptdiag.analysis.stats import nanmax, nanmedian
from ckptdiag.engine_config import EvictionSettings


def _p90(values: np.ndarray) -> float | None:
    finite = values[np.isfinite(values)]
    return float(np.percentile(finite, 90)) if finite.size else None


def eviction_summary(
    cols: Columns,
    states: np.ndarray,
    settings: EvictionSettings,
    version: catalogue.Version | None,
    stale: np.ndarray | None = None,
) -> EvictionSummary:
    """Dirty and used cache, time at or over each target and trigger, application-thread
    eviction, and how many samples had each eviction-state flag (``states``: the raw state).
    ``stale`` samples (the engine's figures frozen) count no time at any level."""
    dirty = np.nan_to_num(cols.dirty_pct)
    dt = np.nan_to_num(cols.dt, nan=0.0)
    if stale is not None:
        dt = np.where(stale, 0.0, dt)
    flags: dict[str, int] = {}
    finite = states[np.isfinite(states)].astype(np.int64)
    for value, count in zip(*np.unique(finite, return_counts=True), strict=True):
        for flag in catalogue.eviction_state_flags(int(value), version):
            flags[flag] = flags.get(flag, 0) + int(count)
    return EvictionSummary(
        dirty_pct_p50=nanmedian(cols.dirty_pct),
        dirty_pct_max=nanmax(cols.dirty_pct),
        used_pct_max=nanmax(cols.used_pct),
        dirty_pct_p90=_p90(cols.dirty_pct),
        seconds_over_dirty_target=float(np.sum(dt[dirty >= settings.dirty_target.number])),
        seconds_over_dirty_trigger=float(np.sum(dt[dirty >= settings.dirty_trigger.number])),
        seconds_over_eviction_trigger=float(np.sum(dt[np.nan_to_num(cols.used_pct) >= settings.trigger.number])),
        seconds_over_updates_trigger=float(
            np.sum(dt[np.nan_to_num(cols.updates_pct) >= settings.updates_trigger.number])
        ),
        app_evicted_pages=float(np.nansum(cols.app_evict)),
        app_wait_s=float(np.nansum(cols.app_wait_ms)) / 1000,
        state_samples=tuple(flags.items()),
    )
