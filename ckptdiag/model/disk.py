"""A disk's counters as /proc/diskstats and FTDC give them, and the figures iostat -x prints from
two of them, computed exactly as iostat does: the vocabulary the sampler, the recording, the
analysis and the live line share (the parsing of /proc/diskstats is sources/diskstats.py).

Formulas follow sysstat's iostat.c / rd_stats.c / common.h (see docs/style notes in
docs/metrics.md): 512-byte sectors, per-second values over the real interval, averages that are
0 when no I/O completed, 32-bit tick counters that wrap, and a device whose counters all went
down treated as removed and inserted again (iostat.c, "removed then inserted" test).
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass, fields
from typing import Any

import numpy as np

SECTOR_BYTES = 512
TICKS_WRAP = 2**32  # rd_ticks & co are unsigned int in the kernel and in iostat
# a disk is busy at most the whole interval: iostat clips a little more (the kernel's ticks and
# the sampler's clock differ) to 100 %, but a busy-time counter that rose by twice the interval
# or more jumped (a suspend and resume, a device reset): no figure, never "100 % busy"
TICKS_JUMP_FACTOR = 2.0
FIELD_NAMES = (
    "rd_ios",
    "rd_merges",
    "rd_sectors",
    "rd_ticks",
    "wr_ios",
    "wr_merges",
    "wr_sectors",
    "wr_ticks",
    "ios_pgr",
    "tot_ticks",
    "rq_ticks",
    "dc_ios",
    "dc_merges",
    "dc_sectors",
    "dc_ticks",
    "fl_ios",
    "fl_ticks",
)


# FTDC's systemMetrics.disks.<dev>.<name> (mongod's procparser) -> the DiskCounters field it reads:
# the first 11 /proc/diskstats fields, in order (FTDC keeps no discard or flush counters).
FTDC_DISK_FIELDS = {
    "reads": "rd_ios",
    "reads_merged": "rd_merges",
    "read_sectors": "rd_sectors",
    "read_time_ms": "rd_ticks",
    "writes": "wr_ios",
    "writes_merged": "wr_merges",
    "write_sectors": "wr_sectors",
    "write_time_ms": "wr_ticks",
    "io_in_progress": "ios_pgr",
    "io_time_ms": "tot_ticks",
    "io_queued_ms": "rq_ticks",
}


@dataclass(frozen=True, slots=True)
class DiskCounters:
    """The cumulative counters of one /proc/diskstats line (ticks in ms)."""

    rd_ios: int = 0
    rd_merges: int = 0
    rd_sectors: int = 0
    rd_ticks: int = 0
    wr_ios: int = 0
    wr_merges: int = 0
    wr_sectors: int = 0
    wr_ticks: int = 0
    ios_pgr: int = 0  # in flight now: a gauge
    tot_ticks: int = 0  # io_ticks: time the device was busy
    rq_ticks: int = 0  # time_in_queue: weighted busy time
    dc_ios: int = 0
    dc_merges: int = 0
    dc_sectors: int = 0
    dc_ticks: int = 0
    fl_ios: int = 0
    fl_ticks: int = 0

    def as_list(self, n_fields: int = 17) -> list[int]:
        """The counters in /proc/diskstats order, as a recording stores them."""
        return [getattr(self, name) for name in FIELD_NAMES[:n_fields]]

    @classmethod
    def from_ftdc(cls, fields: Mapping[str, Any]) -> tuple[DiskCounters, int]:
        """Counters from a systemMetrics.disks.<dev> document, with their field count (11)."""
        return cls(**{ours: int(fields.get(theirs, 0)) for theirs, ours in FTDC_DISK_FIELDS.items()}), 11

    def to_ftdc(self) -> dict[str, int]:
        """The systemMetrics.disks.<dev> form of these counters."""
        return {theirs: getattr(self, ours) for theirs, ours in FTDC_DISK_FIELDS.items()}

    @classmethod
    def from_list(cls, values: list[int]) -> DiskCounters:
        """Inverse of :meth:`as_list`; shorter lists (14- and 18-field kernels) leave zeros."""
        return cls(**dict(zip(FIELD_NAMES, (int(v) for v in values), strict=False)))


@dataclass(frozen=True, slots=True)
class DiskRates:
    """One interval of one device, in iostat -x's columns and units."""

    r_s: float
    w_s: float
    d_s: float
    f_s: float
    rmb_s: float
    wmb_s: float
    rrqm_s: float
    wrqm_s: float
    r_await: float  # ms
    w_await: float  # ms
    await_ms: float  # reads, writes and discards together (flushes excluded, as iostat does)
    aqu_sz: float
    util_pct: float
    wareq_sz_kb: float

    @classmethod
    def names(cls) -> tuple[str, ...]:
        """Column names in order."""
        return tuple(f.name for f in fields(cls))


# the fields that are ms counters: unsigned int in the kernel and in iostat, so they wrap at 2**32
_TICK_FIELDS = frozenset({"rd_ticks", "wr_ticks", "dc_ticks", "fl_ticks"})
FIELD_INDEX = {name: i for i, name in enumerate(FIELD_NAMES)}


def device_was_reset(prev: DiskCounters, curr: DiskCounters) -> bool:
    """iostat's "removed then inserted again": summed ios and every sector counter went down."""
    return bool(_reset(np.array([prev.as_list()], dtype="float64"), np.array([curr.as_list()], dtype="float64"))[0])


def _reset(prev: np.ndarray, curr: np.ndarray) -> np.ndarray:
    """Rows of (n, 17) counter matrices whose device was removed and inserted again: iostat.c's
    test, exactly (fewer ios in all, and every sector counter that was not 0 went down)."""
    f = FIELD_INDEX
    ios = [f["rd_ios"], f["wr_ios"], f["dc_ios"], f["fl_ios"]]
    with np.errstate(invalid="ignore"):
        down = curr[:, ios].sum(axis=1) < prev[:, ios].sum(axis=1)
        for name in ("rd_sectors", "wr_sectors", "dc_sectors"):
            was, now = prev[:, f[name]], curr[:, f[name]]
            down &= (was == 0) | (now < was)
    result: np.ndarray = down
    return result


def _wrapped(column: np.ndarray) -> np.ndarray:
    """``column`` modulo ``TICKS_WRAP``, the modulo (slow: a tenth of a piece's iostat figures)
    taken only where it changes a value (+ 0.0 copies, and makes -0.0 the +0.0 it gives)."""
    out: np.ndarray = column + 0.0
    with np.errstate(invalid="ignore"):
        beyond = (column < 0) | (column >= TICKS_WRAP)
    out[beyond] = np.mod(column[beyond], TICKS_WRAP)
    return out


def iostat(
    prev: np.ndarray, curr: np.ndarray, dt_s: np.ndarray, wanted: Collection[str] | None = None
) -> dict[str, np.ndarray]:
    """iostat -x figures for n intervals at once: ``prev`` and ``curr`` are (n, 17) counter
    matrices in /proc/diskstats order (NaN where a counter is unknown), ``dt_s`` the n interval
    lengths. -> one array per :class:`DiskRates` field (only those ``wanted``, when given: a long
    window's disks need five of the fourteen).

    sysstat's rules, exactly: a device whose summed ios and sector counters all went down was
    removed and inserted again, so the interval counts from zero; any other counter that went
    back gives no rate (0, "ioi->x < ioj->x ? 0.0 : ..."); the ms tick counters are unsigned
    int and wrap at 2**32 (one exception: a tick counter that went back from the lower half of
    that range did not wrap and gives no figure, where sysstat would print an await of hours);
    averages are 0 when no I/O completed; %util is at most 100; an
    interval of 0 counts as 1 s (get_interval: "if (!itv) itv = 1").
    """
    reset = _reset(prev, curr)
    dt = np.where(dt_s > 0, dt_s, 1.0)
    deltas: dict[str, np.ndarray] = {}

    def d(name: str) -> np.ndarray:
        if name not in deltas:  # each counter's increase taken once, and only where a figure reads it
            j = FIELD_INDEX[name]
            with np.errstate(invalid="ignore"):
                before = np.where(reset, 0.0, prev[:, j])
                column = curr[:, j] - before
                if name in _TICK_FIELDS:  # the ms counters wrap, from high to low only
                    deltas[name] = np.where((column < 0) & (before < TICKS_WRAP / 2), np.nan, _wrapped(column))
                else:  # the others that went back give no rate
                    deltas[name] = np.where(column < 0, 0.0, column)
        return deltas[name]

    def avg(total: np.ndarray, ios: np.ndarray) -> np.ndarray:
        out = np.zeros_like(total)
        np.divide(total, ios, out=out, where=ios > 0)
        out[np.isnan(total) | np.isnan(ios)] = np.nan
        return out

    figures: dict[str, Callable[[], np.ndarray]] = {
        "r_s": lambda: d("rd_ios") / dt,
        "w_s": lambda: d("wr_ios") / dt,
        "d_s": lambda: d("dc_ios") / dt,
        "f_s": lambda: d("fl_ios") / dt,
        "rmb_s": lambda: d("rd_sectors") * SECTOR_BYTES / 2**20 / dt,
        "wmb_s": lambda: d("wr_sectors") * SECTOR_BYTES / 2**20 / dt,
        "rrqm_s": lambda: d("rd_merges") / dt,
        "wrqm_s": lambda: d("wr_merges") / dt,
        "r_await": lambda: avg(d("rd_ticks"), d("rd_ios")),
        "w_await": lambda: avg(d("wr_ticks"), d("wr_ios")),
        # flushes excluded: "Origin (unmerged) flush operations are counted as writes"
        "await_ms": lambda: avg(d("rd_ticks") + d("wr_ticks") + d("dc_ticks"), d("rd_ios") + d("wr_ios") + d("dc_ios")),
        "aqu_sz": lambda: d("rq_ticks") / (dt * 1000),
        "util_pct": lambda: _util(d("tot_ticks"), dt),
        "wareq_sz_kb": lambda: avg(d("wr_sectors") / 2, d("wr_ios")),
    }
    return {name: figure() for name, figure in figures.items() if wanted is None or name in wanted}


def _util(busy_ms: np.ndarray, dt: np.ndarray) -> np.ndarray:
    """iostat's %util, clipped at 100; NaN where the busy time rose by ``TICKS_JUMP_FACTOR``
    intervals or more (a counter that jumped, not a disk that was busy).

    >>> _util(np.array([500.0, 1010.0, 2500.0]), np.array([1.0, 1.0, 1.0])).tolist()
    [50.0, 100.0, nan]
    """
    with np.errstate(invalid="ignore"):
        share = busy_ms / (dt * 1000)
        out: np.ndarray = np.where(share >= TICKS_JUMP_FACTOR, np.nan, np.minimum(share * 100, 100.0))
    return out


def disk_rates(prev: DiskCounters, curr: DiskCounters, dt_s: float) -> DiskRates:
    """iostat -x figures for one device between two samples ``dt_s`` seconds apart (the live
    status line's path into :func:`iostat`).

    >>> p = DiskCounters(wr_ios=100, wr_sectors=2048, wr_ticks=50, tot_ticks=400, rq_ticks=500)
    >>> c = DiskCounters(wr_ios=300, wr_sectors=206848, wr_ticks=450, tot_ticks=900, rq_ticks=1500)
    >>> r = disk_rates(p, c, 1.0)
    >>> (r.w_s, r.wmb_s, r.w_await, r.aqu_sz, r.util_pct)
    (200.0, 100.0, 2.0, 1.0, 50.0)
    """
    figures = iostat(
        np.array([prev.as_list()], dtype="float64"),
        np.array([curr.as_list()], dtype="float64"),
        np.array([dt_s], dtype="float64"),
    )
    return DiskRates(**{name: float(values[0]) for name, values in figures.items()})
