"""One checkpoint episode and what it cost, as the analysis judged it: the objects the reports
and the advice read (a window keeps them in columns: :mod:`ckptdiag.analysis.episode_table`)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Impact:
    """What one checkpoint cost, read over the samples whose interval it touches (plus one)."""

    ops_s_baseline: float | None = None
    ops_s_min: float | None = None
    ops_ratio: float | None = None  # worst second's throughput / baseline
    ops_s_after: float | None = None  # the most ops/s from its worst second to RECOVERY_WINDOW_S after it
    write_latency_ratio: float | None = None
    write_latency_kind: str | None = None  # "p99" (histograms) or "mean"
    write_p99_ms_peak: float | None = None
    write_latency_ms_peak: float | None = None
    read_latency_ratio: float | None = None
    write_mb_s_peak: float | None = None
    w_s_peak: float | None = None
    util_pct_peak: float | None = None
    await_ms_peak: float | None = None
    aqu_sz_peak: float | None = None
    app_evicted_pages: float | None = None
    app_wait_ms: float | None = None
    dirty_pct_peak: float | None = None
    write_tickets_available_min: float | None = None
    queued_writers_max: float | None = None
    repl_lag_growth_s: float | None = None  # how much replication lag grew through it (a secondary)
    throttled_ms: float | None = None  # time it waited for WiredTiger's io_capacity
    stall: bool = False
    reasons: tuple[str, ...] = ()  # why it stalled, or why a dip was not called one


NO_IMPACT = Impact()


@dataclass(frozen=True, slots=True)
class Phases:
    """Where one checkpoint's time went, as the server timed it (None: this version does not)."""

    scrub_s: float | None = None  # evicting dirty data before it begins
    prepare_s: float | None = None  # its transaction and handles, under the schema lock
    handles_s: float | None = None  # of prepare: gathering every table's and index's handle
    handles: float | None = None  # the handles it walked
    trees_s: float | None = None  # writing each table's and index's dirty pages
    history_store_s: float | None = None  # the history store file
    sync_s: float | None = None  # the final syncs of its files

    def timed(self) -> float:
        """The seconds its phases account for (each counted once: handles are part of prepare)."""
        parts: list[float | None] = [getattr(self, name) for name in TIMED_PHASES]
        return float(sum(p for p in parts if p is not None))


# the phases that follow one another in a checkpoint (the handles are gathered inside prepare)
TIMED_PHASES = ("scrub_s", "prepare_s", "trees_s", "history_store_s", "sync_s")


@dataclass(frozen=True, slots=True)
class Episode:
    """One checkpoint (or, without checkpoint statistics, one disk write burst) and its cost."""

    start: float  # epoch seconds
    end: float | None  # None: still running when the window ends
    duration_s: float | None
    bytes_written: float | None
    evidence: str  # "counters", "running-flag" or "disk-burst"
    exact_duration: bool = False  # the server's own "most recent time", not sample spacing
    truncated: bool = False  # began before the window (or a gap) did
    shared: bool = False  # one of several that began in one interval: they share its total time
    rows: tuple[int, int] = (0, 0)  # first and last sample whose interval it touches
    impact: Impact = NO_IMPACT
    # where its start can lie, by the samples around it and its duration (None: not known)
    start_earliest: float | None = None
    start_latest: float | None = None
    phases: Phases | None = None  # where its time went, where this version times it

    @property
    def stall(self) -> bool:
        """Did it stall the server?"""
        return self.impact.stall

    @property
    def reasons(self) -> tuple[str, ...]:
        """Why it stalled (or why a dip was not called a stall)."""
        return self.impact.reasons
