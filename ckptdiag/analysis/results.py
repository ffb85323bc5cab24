"""The analysis' typed, immutable results: what crosses from analysis to advice and the reports.

Every figure is a named field (mypy strict catches a renamed one); times are float64 epoch
seconds (Python floats), never a float32 from a derived column.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from ckptdiag.analysis.dirty_curve import DirtyCurve
from ckptdiag.analysis.episode_table import Episodes
from ckptdiag.model.engine_config import EngineSettings
from ckptdiag.model.facts import ServerFacts


@dataclass(frozen=True, slots=True)
class PeriodRow:
    """One day's (or hour's) checkpoints."""

    start: float  # epoch seconds, the period's first second (UTC)
    at: float  # the median start of its checkpoints (the period's middle without one): where it is fitted
    checkpoints: int
    stalls: int
    duration_p50_s: float | None
    duration_max_s: float | None
    bytes_p50: float | None
    write_p99_ms_max: float | None  # the highest write p99 inside its checkpoints (histograms)


@dataclass(frozen=True, slots=True)
class Trend:
    """A figure's least-squares line over the periods' medians."""

    figure: str  # "duration_s" or "bytes_written"
    first: float  # the fit at the first period's checkpoints
    last: float  # the fit at the last period's
    per_day: float  # the slope
    days: float  # the window's length
    significant: bool  # the slope's t statistic reaches p = 0.01 and the figure moved MIN_CHANGE
    reaches_interval_days: float | None = None  # duration only: days until the fit reaches the interval


@dataclass(frozen=True, slots=True)
class History:
    """The window told period by period, with its trends."""

    period: str  # "day" or "hour"
    rows: tuple[PeriodRow, ...]
    trends: tuple[Trend, ...]


@dataclass(frozen=True, slots=True)
class Baseline:
    """The server's usual second, away from checkpoints."""

    samples: int
    ops_s: float | None
    writes_s: float | None
    write_lat_ms: float | None
    write_p99_ms: float | None
    read_lat_ms: float | None
    disk_write_mb_s: float | None
    disk_util_pct: float | None
    estimated: bool = False  # no sample under load away from checkpoints: estimated from the loaded ones


@dataclass(frozen=True, slots=True)
class EvictionSummary:
    """Cache and eviction over the whole window, against the settings in force."""

    dirty_pct_p50: float | None
    dirty_pct_max: float | None
    used_pct_max: float | None
    dirty_pct_p90: float | None  # the dirty level the workload sustains (what a trigger must stay above)
    seconds_over_dirty_target: float
    seconds_over_dirty_trigger: float
    seconds_over_eviction_trigger: float
    seconds_over_updates_trigger: float
    app_evicted_pages: float
    app_wait_s: float
    state_samples: tuple[tuple[str, int], ...]  # eviction-state flag -> samples that had it


@dataclass(frozen=True, slots=True)
class OtherStall:
    """A stall while no checkpoint ran (same yardstick as the episodes'), and what the counters saw."""

    start: float
    end: float
    duration_s: float
    ops_ratio: float | None
    write_latency_ratio: float | None
    write_latency_kind: str
    app_evicted_pages: float
    app_wait_ms: float
    dirty_pct_peak: float | None
    updates_pct_peak: float | None
    updates_at_target: bool
    queued_writers_max: float | None
    seen: tuple[str, ...]  # evidence, not proof of cause


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


@dataclass(frozen=True, slots=True)
class Pinning:
    """History the server kept for its readers over the window, and what held it (see
    analysis/pinning.py); None where the version or the source did not record it."""

    hs_first_bytes: float | None = None  # history kept (the history store on disk and in the cache), first sample
    hs_last_bytes: float | None = None
    hs_span_s: float = 0.0  # between the first and the last sample with a size
    pinned_s_p50: float | None = None  # how far back history was pinned (timestamps, in seconds): median
    pinned_s_max: float | None = None
    pinned_ids_max: float | None = None  # transaction IDs pinned (beyond a running checkpoint's own), at most
    data_handles_max: float | None = None  # data handles open (collections and indexes), at most


@dataclass(frozen=True)
class CloseUp:
    """Every sample around one of the window's worst checkpoints (``start`` to ``end``), in time
    order: what a report zooms into below the timeline's buckets (see analysis/closeups.py)."""

    start: float
    end: float
    stall: bool
    ops_ratio: float | None  # its worst second's throughput against the baseline
    t: np.ndarray = field(compare=False)
    ops_s: np.ndarray = field(compare=False)
    dirty_pct: np.ndarray = field(compare=False)
    disk_mb_s: np.ndarray = field(compare=False)


@dataclass(frozen=True)
class Diagnosis:
    """Everything the advice and the reports read about one window of one server."""

    facts: ServerFacts
    settings: EngineSettings
    start: float
    end: float
    samples: int
    period_s: float | None  # sampling period
    gaps: int
    restarts: int
    samples_without_wiredtiger: int
    episodes: Episodes  # in columns, read as Episode objects
    checkpoint_period_s: float | None
    checkpoint_period_cv: float | None
    baseline: Baseline
    disk: str | None
    eviction: EvictionSummary
    severity: str  # "ok", "warn" or "critical"
    summary: str
    findings: tuple[str, ...]
    evidence: tuple[str, ...]
    ops_s_mean: float | None = None  # over the whole window, checkpoints included
    writes_s_mean: float | None = None
    host_cpu_pct_p50: float | None = None  # the host's CPUs busy (all processes), where recorded
    other_cpu_pct_p50: float | None = None  # of them, with other processes than mongod (Linux, 4.2+)
    timeline: pd.DataFrame | None = field(default=None, compare=False)
    other_stalls: tuple[OtherStall, ...] = ()
    role: str | None = None  # "primary" or "secondary" (replica-set members), None if not known
    disk_peak_mb_s: float | None = None  # the data disk's highest write rate over a second in the window
    journal_syncs_s: float | None = None  # journal syncs a second, median over the window
    # bytes a second written to the data files besides the checkpoints' own (eviction's), over the window
    other_writes_b_s: float | None = None
    # (the data disk's, mongod's own data files' and journal's) bytes written a second, over the window
    disk_writes_b_s: tuple[float, float] | None = None
    spacings: tuple[tuple[float, float], ...] = ()  # (spacing s, share of the time), shortest first
    history: History | None = None  # by day (by hour under two days), with the trends; None: too short
    pinning: Pinning | None = None  # history kept and what held it, data handles open
    overdue: tuple[Overdue, ...] = ()  # checkpoints that ran, or stretches without one, several intervals long
    closeups: tuple[CloseUp, ...] = field(default=(), compare=False)  # every sample around the worst checkpoints
    # checkpoints the start counter counted inside intervals too long or too crowded to place each one
    unplaced_checkpoints: int = 0
    # the dirty data s seconds after a checkpoint ended, as a share of what the next one found
    dirty_curve: DirtyCurve | None = field(default=None, compare=False)

    @property
    def stalls(self) -> int:
        """Episodes that stalled the server."""
        return int(self.episodes.flags("impact.stall").sum())
