"""/proc/diskstats parsed into :class:`~ckptdiag.model.disk.DiskCounters` (the figures iostat
prints from them are :mod:`ckptdiag.model.disk`'s)."""

from __future__ import annotations

from pathlib import Path

from ckptdiag.model.disk import DiskCounters


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
