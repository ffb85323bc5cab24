"""/proc/diskstats: parsing, and the figures iostat -x prints, computed exactly as iostat does.

Formulas follow sysstat's iostat.c / rd_stats.c / common.h (see docs/style notes in
docs/metrics.md): 512-byte sectors, per-second values over the real interval, averages that are
0 when no I/O completed, 32-bit tick counters that wrap, and a device whose counters all went
down treated as removed and inserted again (iostat.c, "removed then inserted" test).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

SECTOR_BYTES = 512
TICKS_WRAP = 2**32  # rd_ticks & co are unsigned int in the kernel and in iostat
_FIELD_NAMES = (
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
        return [getattr(self, name) for name in _FIELD_NAMES[:n_fields]]

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
        return cls(**dict(zip(_FIELD_NAMES, (int(v) for v in values), strict=False)))


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


def parse_diskstats(text: str) -> dict[str, tuple[DiskCounters, int]]:
    """Parse /proc/diskstats: ``{device: (counters, number of counter fields on the line)}``.

    Lines with 14 (4.18-), 18 (discards, 4.18+) and 20 (flushes, 5.5+) fields are read in full;
    the old 7-field partition line gives reads/writes and sectors only; anything else is ignored,
    as iostat does ("Unknown entry: Ignore it").
    """
    out: dict[str, tuple[DiskCounters, int]] = {}
    for line in text.splitlines():
        parts = line.split()
        if len(parts) < 7:
            continue
        name = parts[2]
        try:
            values = [int(v) for v in parts[3:]]
        except ValueError:
            continue
        if len(parts) == 7:
            rd_ios, rd_sectors, wr_ios, wr_sectors = values
            out[name] = (DiskCounters(rd_ios=rd_ios, rd_sectors=rd_sectors, wr_ios=wr_ios, wr_sectors=wr_sectors), 4)
        elif len(parts) >= 14:
            values = values[:17]
            out[name] = (DiskCounters.from_list(values), len(values))
    return out


def read_diskstats(path: Path = Path("/proc/diskstats")) -> dict[str, tuple[DiskCounters, int]]:
    """Read and parse the host's /proc/diskstats (empty when it does not exist)."""
    try:
        return parse_diskstats(path.read_text())
    except OSError:
        return {}


def _delta(prev: int, curr: int) -> int:
    # iostat: "ioi->x < ioj->x ? 0.0 : ..." - a counter that went back gives no rate
    return 0 if curr < prev else curr - prev


def _ticks(prev: int, curr: int) -> int:
    # ticks are unsigned int: C's unsigned subtraction wraps
    return (curr - prev) % TICKS_WRAP


def _avg(total: float, ios_prev: int, ios_curr: int) -> float:
    return total / (ios_curr - ios_prev) if ios_curr > ios_prev else 0.0


def device_was_reset(prev: DiskCounters, curr: DiskCounters) -> bool:
    """iostat's "removed then inserted again": summed ios and every sector counter went down."""
    ios_down = (curr.rd_ios + curr.wr_ios + curr.dc_ios) < (prev.rd_ios + prev.wr_ios + prev.dc_ios)
    sectors_down = (
        curr.rd_sectors < prev.rd_sectors
        and curr.wr_sectors < prev.wr_sectors
        and (curr.dc_sectors < prev.dc_sectors or prev.dc_sectors == 0)
    )
    return ios_down and sectors_down


def disk_rates(prev: DiskCounters, curr: DiskCounters, dt_s: float) -> DiskRates:
    """iostat -x figures for one device between two samples ``dt_s`` seconds apart.

    >>> p = DiskCounters(wr_ios=100, wr_sectors=2048, wr_ticks=50, tot_ticks=400, rq_ticks=500)
    >>> c = DiskCounters(wr_ios=300, wr_sectors=206848, wr_ticks=450, tot_ticks=900, rq_ticks=1500)
    >>> r = disk_rates(p, c, 1.0)
    >>> (r.w_s, r.wmb_s, r.w_await, r.aqu_sz, r.util_pct)
    (200.0, 100.0, 2.0, 1.0, 50.0)
    """
    if device_was_reset(prev, curr):
        prev = DiskCounters()
    dt = dt_s if dt_s > 0 else 1.0  # iostat get_interval: "if (!itv) itv = 1"
    d_rd, d_wr, d_dc = (
        _delta(prev.rd_ios, curr.rd_ios),
        _delta(prev.wr_ios, curr.wr_ios),
        _delta(prev.dc_ios, curr.dc_ios),
    )
    rd_ticks, wr_ticks, dc_ticks = (
        _ticks(prev.rd_ticks, curr.rd_ticks),
        _ticks(prev.wr_ticks, curr.wr_ticks),
        _ticks(prev.dc_ticks, curr.dc_ticks),
    )
    all_ios = d_rd + d_wr + d_dc
    wr_sectors = _delta(prev.wr_sectors, curr.wr_sectors)
    return DiskRates(
        r_s=d_rd / dt,
        w_s=d_wr / dt,
        d_s=d_dc / dt,
        f_s=_delta(prev.fl_ios, curr.fl_ios) / dt,
        rmb_s=_delta(prev.rd_sectors, curr.rd_sectors) * SECTOR_BYTES / 2**20 / dt,
        wmb_s=wr_sectors * SECTOR_BYTES / 2**20 / dt,
        rrqm_s=_delta(prev.rd_merges, curr.rd_merges) / dt,
        wrqm_s=_delta(prev.wr_merges, curr.wr_merges) / dt,
        r_await=_avg(rd_ticks, prev.rd_ios, curr.rd_ios),
        w_await=_avg(wr_ticks, prev.wr_ios, curr.wr_ios),
        await_ms=(rd_ticks + wr_ticks + dc_ticks) / all_ios if all_ios else 0.0,
        aqu_sz=_delta(prev.rq_ticks, curr.rq_ticks) / (dt * 1000),
        util_pct=min(_delta(prev.tot_ticks, curr.tot_ticks) / (dt * 1000) * 100, 100.0),
        wareq_sz_kb=_avg(wr_sectors / 2, prev.wr_ios, curr.wr_ios),
    )
