"""Per-sample figures derived from the sample frame: rates, latencies, cache shares, disks.

One code path for every source (recordings and FTDC produce the same frame). Every rate is a
counter's increase over the *real* time since the sample before, and is NaN across a gap, a
restart (``segment``) or a counter that went back: never negative, never infinite. Gauges are
passed through. The result is small (a few dozen float columns), so a long FTDC window is
derived a piece at a time and only this is kept.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ckptdiag.analysis.event_counts import checkpoints_begun, event_counter
from ckptdiag.analysis.phases import PHASES
from ckptdiag.analysis.pinning import PINNING
from ckptdiag.analysis.stats import p99_bound_ms, ratios
from ckptdiag.model.disk import FIELD_INDEX, iostat
from ckptdiag.model.hostcpu import FIELDS as HOST_CPU_FIELDS
from ckptdiag.model.hostcpu import IDLE as HOST_IDLE
from ckptdiag.model.hostcpu import PREFIX as HOST_CPU
from ckptdiag.model.samples import FrameSamples, SampleBlock, Samples, gap_intervals

OPS = ("ops.insert", "ops.query", "ops.update", "ops.delete", "ops.getmore")
WRITES = ("ops.insert", "ops.update", "ops.delete")
# each disk's figures, named as the analysis reads them, and iostat's names for them
_IOSTAT_FIGURES = {"wmb_s": "wmb_s", "w_s": "w_s", "util_pct": "util_pct", "w_await_ms": "w_await", "aqu_sz": "aqu_sz"}
DISK_FIGURES = tuple(_IOSTAT_FIGURES)


def _restarts(frame: Samples) -> np.ndarray:
    """Rows whose interval crosses a restart (and the first row): no counter is read across one."""
    seam = np.zeros(len(frame), dtype=bool)
    if "segment" in frame:
        segment = frame.values("segment")
        seam[1:] = ~(segment[1:] == segment[:-1])  # a missing segment is a seam
    seam[:1] = True
    return seam


def _flag(frame: Samples, name: str) -> np.ndarray:
    """A flag column as booleans (missing: not set)."""
    flag: np.ndarray = np.nan_to_num(frame.values(name), nan=0.0) != 0
    return flag


def _gaps(frame: Samples, dt: np.ndarray) -> np.ndarray:
    """Rows whose interval is a gap: by the source's mark, or by the spacing itself (a recording
    whose recorder was paused, or whose host slept, has no mark)."""
    gap = gap_intervals(dt)
    if "gap_before" in frame:
        gap |= _flag(frame, "gap_before")
    return gap


# the sample columns the derivation reads (:func:`reads`): a long window's samples are held
# with these alone (tests/test_analysis.py checks that it asks for no other)
_READS = frozenset(
    {
        "t",
        "segment",
        "gap_before",
        "wt_missing",
        *OPS,
        "lat.writes.latency_us",
        "lat.writes.ops",
        "lat.reads.latency_us",
        "lat.reads.ops",
        "cache.max_bytes",
        "cache.dirty_bytes",
        "cache.bytes",
        "cache.updates_bytes",
        "cache.app_evicted_pages",
        "cache.app_wait_time_us",
        "cache.eviction_state",
        "ckpt.running",
        "ckpt.progress_state",
        "ckpt.recent_ms",
        "ckpt.total_ms",
        "ckpt.bytes_written",
        "block.bytes_written",
        "journal.bytes_written",
        *(metric for metric, _, _ in PHASES.values()),
        *PINNING.values(),
        "ckpt.count",
        "ckpt.generation",
        "tickets.write.available",
        "tickets.write.total",
        "queue.writers",
        "queue.readers",
        "capacity.ckpt_wait_us",
        "journal.syncs",
        "process.user_us",
        "process.system_us",
        "rtt_ms",
        "skipped",
        "repl.primary",
        "repl.secondary",
        "repl.lag_ms",
        "repl.apply.ops",
        "repl.apply.batch_ms",
        "repl.apply.batches",
        "repl.buffer.count",
        "repl.wc_wait.ms",
        "repl.wc_wait.count",
    }
)
_READ_PREFIXES = ("hist.writes.", "hist.reads.", "disk.", HOST_CPU)


def reads(name: str) -> bool:
    """Whether :func:`derived_columns` reads the sample column ``name``."""
    return name in _READS or name.startswith(_READ_PREFIXES)


def _delta(frame: Samples, column: str, seam: np.ndarray, wrap: int | None = None) -> np.ndarray:
    values = frame.values(column)
    delta = np.empty_like(values)
    delta[0] = np.nan
    np.subtract(values[1:], values[:-1], out=delta[1:])
    if wrap is not None:
        delta = np.mod(delta, wrap)
    else:
        delta[delta < 0] = np.nan  # a counter that went back: a reset, not a rate
    delta[seam] = np.nan
    return delta


def _sum_deltas(frame: Samples, columns: tuple[str, ...], seam: np.ndarray) -> np.ndarray | None:
    present = [c for c in columns if c in frame]
    if not present:
        return None
    total = np.zeros(len(frame))
    went_back = np.zeros(len(frame), dtype=bool)
    for column in present:
        values = frame.values(column)
        delta = np.concatenate(([np.nan], np.diff(values)))
        went_back |= delta < 0  # one counter reset: the sum of the others would under-count
        total += np.nan_to_num(delta, nan=0.0)  # a counter this sample lacks adds nothing
    total[seam | went_back] = np.nan
    return total


def histogram_p99_ms(frame: Samples, kind: str, seam: np.ndarray) -> np.ndarray | None:
    """p99 of each interval's operations from mongod's latency histograms (``hist.<kind>.<micros>``
    cumulative bucket counts): the lower bound of the bucket holding the 99th percentile, in ms."""
    prefix = f"hist.{kind}."
    # a bucket's bound is a whole number of microseconds; any other (1.5: damage) is no bucket
    columns = sorted(
        (int(c[len(prefix) :]), c) for c in frame.names if c.startswith(prefix) and c[len(prefix) :].isdigit()
    )
    if not columns:
        return None
    counts = np.column_stack([frame.values(c) for _, c in columns])
    seen = ~np.isnan(counts).all(axis=1)
    counts = np.nan_to_num(counts, nan=0.0)  # mongod leaves empty buckets out
    delta = np.vstack([np.full((1, counts.shape[1]), np.nan), np.diff(counts, axis=0)])
    bad = seam | ~seen | np.concatenate(([True], ~seen[:-1])) | (delta < 0).any(axis=1)
    delta[bad] = 0
    p99 = p99_bound_ms(np.array([b for b, _ in columns], dtype="float64"), delta)
    p99[bad] = np.nan
    return p99


def data_disks(frame: Samples) -> list[str]:
    """The disks in the samples, busiest writer first."""
    devices = sorted({c.split(".")[1] for c in frame.names if c.startswith("disk.") and c.endswith(".wr_sectors")})
    written = {d: float(np.nansum(np.diff(frame.values(f"disk.{d}.wr_sectors")))) for d in devices}
    return sorted(devices, key=lambda d: -written[d])


def derive(frame: pd.DataFrame) -> pd.DataFrame:
    """The per-sample figures every analysis reads (:func:`derived_columns`), indexed like ``frame``."""
    derived: pd.DataFrame = pd.DataFrame(derived_columns(FrameSamples(frame)), index=frame.index)
    return derived


def derive_block(samples: SampleBlock) -> pd.DataFrame:
    """:func:`derive` of samples held as arrays, indexed by their UTC time."""
    derived: pd.DataFrame = pd.DataFrame(derived_columns(samples), index=time_index(samples.t))
    return derived


def time_index(t: np.ndarray) -> pd.DatetimeIndex:
    """Epoch seconds as the UTC index every sample frame has (``time``)."""
    index: pd.DatetimeIndex = pd.DatetimeIndex(pd.to_datetime(t, unit="s", utc=True), name="time")
    return index


def derived_columns(frame: Samples) -> dict[str, np.ndarray]:
    """The per-sample figures every analysis reads, a float64 array each, row for row with ``frame``.

    Columns (NaN where unknown): ``t``, ``dt``, ``seam`` (1: a gap, restart or row 0: no rate);
    ``ops_s``, ``writes_s``; ``write_lat_ms``, ``read_lat_ms`` (mean, opLatencies); ``write_p99_ms``, ``read_p99_ms``
    (histograms, when recorded); ``dirty_pct``, ``used_pct``, ``updates_pct``; ``ckpt_starts``
    (checkpoints begun in the interval, placed one by one; ``ckpt_jump`` where the start counter
    rose by more than a server can begin, which is not counted; ``ckpt_unplaced``, those begun and
    ended inside the interval that are counted, not placed), ``journal_syncs_s``, ``host_cpu_pct`` (the host's
    CPUs, all processes), ``mongod_cpu_pct`` (mongod's own part of them), ``ckpt_running`` (1/0),
    ``ckpt_total_ms`` (ms of checkpoints finished in the interval), ``ckpt_recent_ms``, ``ckpt_bytes``,
    ``block_bytes`` (every data-file write),
    ``journal_bytes``; ``app_evict`` (pages), ``app_wait_ms``; ``eviction_state``; ``wtickets_avail``,
    ``wtickets_total``, ``queue_writers``, ``queue_readers``; ``rtt_ms``, ``skipped``, ``wt_missing``; per disk
    ``disk.<dev>.<figure>`` for :data:`DISK_FIGURES` (iostat's formulas); ``secondary`` (1 on a
    replica-set member that is not primary), ``apply_ops_s``, ``apply_batch_ms``, ``repl_buffer``,
    ``repl_lag_s`` (the primary's optime less this member's), ``wc_wait_ms`` (a primary's mean
    wait for its write concerns: w "majority" waits for the secondaries).

    On a secondary the writes are replication's (:func:`_replication`): ``ops_s`` is oplog entries
    applied plus reads, ``writes_s`` the entries applied, ``write_lat_ms`` a batch's mean apply time.
    """
    t = frame.values("t")
    dt = np.concatenate(([np.nan], np.diff(t)))
    gaps = _gaps(frame, dt)
    seam = _restarts(frame) | gaps  # no rate across a gap or a restart (or on the first row)
    dt_ok = np.where(dt > 0, dt, np.nan)
    out: dict[str, np.ndarray] = {"t": t, "dt": dt, "seam": seam.astype("float64")}
    columns = _Reader(frame, seam)
    ops = _sum_deltas(frame, OPS, seam)
    writes = _sum_deltas(frame, WRITES, seam)
    out["ops_s"] = columns.nan if ops is None else ops / dt_ok
    out["writes_s"] = columns.nan if writes is None else writes / dt_ok
    out["write_lat_ms"] = ratios(columns.counter("lat.writes.latency_us"), columns.counter("lat.writes.ops")) / 1000
    out["read_lat_ms"] = ratios(columns.counter("lat.reads.latency_us"), columns.counter("lat.reads.ops")) / 1000
    for kind, name in (("writes", "write_p99_ms"), ("reads", "read_p99_ms")):
        p99 = histogram_p99_ms(frame, kind, seam)
        out[name] = columns.nan if p99 is None else p99
    out.update(_cache_and_checkpoints(columns))
    out["journal_syncs_s"] = columns.counter("journal.syncs") / dt_ok
    out["host_cpu_pct"], out["mongod_cpu_pct"] = _cpu_pcts(columns)
    out.update(_replication(frame, columns, seam, dt_ok, out))
    restarts = _restarts(frame)
    for name, column in (
        ("ckpt_total_ms", "ckpt.total_ms"),
        ("ckpt_bytes", "ckpt.bytes_written"),
        ("block_bytes", "block.bytes_written"),  # all the data files' writes: checkpoints' and eviction's
        ("journal_bytes", "journal.bytes_written"),
    ):
        out[name] = event_counter(frame, column, restarts)
    out["ckpt_starts"], out["ckpt_jump"], out["ckpt_unplaced"] = checkpoints_begun(frame, restarts, dt, gaps)
    out["wt_missing"] = _flag(frame, "wt_missing").astype("float64") if "wt_missing" in frame else np.zeros(len(frame))
    for dev in sorted(data_disks(frame)):  # by name: every piece of a window has the same columns
        out.update(disk_figures(frame, dev, dt, seam))
    return out


def _cpu_pcts(columns: _Reader) -> tuple[np.ndarray, np.ndarray]:
    """How busy the host's CPUs were over each interval, % of their time: all processes (100 x (1 -
    idle share), where waiting for I/O counts as idle: a CPU could have run something else), and
    mongod's own (its user and system time, where the server gives them: Linux, 4.2+)."""
    parts = np.vstack([columns.counter(HOST_CPU + name) for name in HOST_CPU_FIELDS])
    idle = np.vstack([columns.counter(HOST_CPU + name) for name in HOST_IDLE])
    known = np.isfinite(parts).any(axis=0)  # a field a platform lacks is left out, not NaN for all
    total, idle_sum = np.nansum(parts, axis=0), np.nansum(idle, axis=0)
    own_ms = (columns.counter("process.user_us") + columns.counter("process.system_us")) / 1000
    ok = known & (total > 0)
    with np.errstate(invalid="ignore", divide="ignore"):
        host = np.where(ok, 100.0 * (1.0 - idle_sum / total), np.nan)
        # never above the host's: the two are read a moment apart
        return host, np.minimum(np.where(ok, 100.0 * own_ms / total, np.nan), host)


class _Reader:
    """A frame's columns as float64 arrays: counters as increases per interval (NaN across a seam
    or where the counter went back), gauges as they are; NaN where the frame lacks the column."""

    def __init__(self, frame: Samples, seam: np.ndarray) -> None:
        self.frame, self.seam = frame, seam
        self.nan = np.full(len(frame), np.nan)

    def counter(self, column: str) -> np.ndarray:
        return _delta(self.frame, column, self.seam) if column in self.frame else self.nan

    def gauge(self, column: str) -> np.ndarray:
        return self.frame.values(column) if column in self.frame else self.nan

    def has(self, column: str) -> bool:
        return column in self.frame


READS = ("ops.query", "ops.getmore")


def _replication(
    frame: Samples, c: _Reader, seam: np.ndarray, dt_ok: np.ndarray, out: dict[str, np.ndarray]
) -> dict[str, np.ndarray]:
    """The replication figures, and a secondary's throughput: oplog entries applied plus reads,
    its write latency the mean time to apply a batch (client writes and their latency are a
    primary's)."""
    primary, secondary, lag_ms = c.gauge("repl.primary"), c.gauge("repl.secondary"), c.gauge("repl.lag_ms")
    on_secondary = (secondary == 1) | ((primary == 0) & np.isnan(secondary))
    applied = c.counter("repl.apply.ops") / dt_ok
    batch_ms = ratios(c.counter("repl.apply.batch_ms"), c.counter("repl.apply.batches"))
    reads = _sum_deltas(frame, READS, seam)
    reads_s = c.nan if reads is None else reads / dt_ok
    figures = {
        "secondary": np.where(np.isnan(primary) & np.isnan(secondary), np.nan, on_secondary.astype("float64")),
        "apply_ops_s": applied,
        "apply_batch_ms": batch_ms,
        "repl_buffer": c.gauge("repl.buffer.count"),
        "repl_lag_s": np.where(lag_ms >= 0, lag_ms / 1000, np.nan),  # -1: no primary to measure against
        "wc_wait_ms": ratios(c.counter("repl.wc_wait.ms"), c.counter("repl.wc_wait.count")),
        "queue_readers": c.gauge("queue.readers"),
    }
    if on_secondary.any():
        figures["ops_s"] = np.where(on_secondary, applied + np.nan_to_num(reads_s), out["ops_s"])
        figures["writes_s"] = np.where(on_secondary, applied, out["writes_s"])
        figures["write_lat_ms"] = np.where(on_secondary, batch_ms, out["write_lat_ms"])
        figures["write_p99_ms"] = np.where(on_secondary, np.nan, out["write_p99_ms"])
    return figures


def _cache_and_checkpoints(c: _Reader) -> dict[str, np.ndarray]:
    """Cache shares, the checkpoint counters, eviction, tickets and the sampler's own figures."""
    cap = c.gauge("cache.max_bytes")
    cap = np.where(cap > 0, cap, np.nan)
    out = {
        "dirty_pct": 100 * c.gauge("cache.dirty_bytes") / cap,
        "used_pct": 100 * c.gauge("cache.bytes") / cap,
        "updates_pct": 100 * c.gauge("cache.updates_bytes") / cap,
        "cache_max_bytes": cap,
        # checkpoints: the count (or generation) moves when one *starts*; total time when one ends
        # (their counters are read across gaps by event_counter, in derive)
        "ckpt_running": c.nan,
        "ckpt_recent_ms": c.gauge("ckpt.recent_ms"),
        "app_evict": c.counter("cache.app_evicted_pages"),
        "app_wait_ms": c.counter("cache.app_wait_time_us") / 1000,
        "eviction_state": c.gauge("cache.eviction_state"),
        "wtickets_avail": c.gauge("tickets.write.available"),
        "wtickets_total": c.gauge("tickets.write.total"),
        "queue_writers": c.gauge("queue.writers"),
        "throttle_ms": c.counter("capacity.ckpt_wait_us") / 1000,  # checkpoints held back by io_capacity
        "rtt_ms": c.gauge("rtt_ms"),  # how long serverStatus took to answer (recordings)
        "skipped": c.gauge("skipped"),  # ticks the sampler skipped because a reply was late
    }
    # the most recent checkpoint's phases, where this version records them (only then: a long
    # window of a version without them carries no column of NaN for each)
    out.update({column: c.gauge(metric) for column, (metric, _, _) in PHASES.items() if c.has(metric)})
    out.update({column: c.gauge(metric) for column, metric in PINNING.items() if c.has(metric)})
    flag = "ckpt.running" if c.has("ckpt.running") else "ckpt.progress_state" if c.has("ckpt.progress_state") else None
    if flag is not None:  # the running flag (up to 7.0) or the progress state (7.1+)
        state = c.gauge(flag)
        out["ckpt_running"] = np.where(np.isnan(state), np.nan, (state != 0).astype("float64"))
    return out


def disk_figures(frame: Samples, dev: str, dt: np.ndarray, seam: np.ndarray) -> dict[str, np.ndarray]:
    """iostat's figures for one disk of the frame (:func:`ckptdiag.sources.diskstats.iostat`, the
    one implementation the live status line uses too), NaN across a gap or a restart."""
    n = len(frame)
    # by column (Fortran order): iostat reads each counter whole, never a row
    counters = np.zeros((n, len(FIELD_INDEX)), order="F")
    for name, j in FIELD_INDEX.items():  # a field the source lacks (FTDC keeps 11) counts as 0, as there
        column = f"disk.{dev}.{name}"
        if column in frame:
            counters[:, j] = frame.values(column)
    # each row's interval is the row before's counters to its own (none before the first)
    spans = np.where(dt[1:] > 0, dt[1:], np.nan)
    figures = iostat(counters[:-1], counters[1:], spans, wanted=_IOSTAT_FIGURES.values())
    out = {}
    for ours, theirs in _IOSTAT_FIGURES.items():
        values = np.concatenate(([np.nan], figures[theirs]))
        values[seam] = np.nan
        out[f"disk.{dev}.{ours}"] = values
    return out
