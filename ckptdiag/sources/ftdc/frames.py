"""FTDC as a sample frame: the same columns a recording gives, a bounded piece at a time."""

from __future__ import annotations

import functools
import re
import weakref
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ckptdiag.model import catalogue
from ckptdiag.model.disk import FTDC_DISK_FIELDS
from ckptdiag.model.hostcpu import FIELDS as HOST_CPU_FIELDS
from ckptdiag.model.hostcpu import PREFIX as HOST_CPU
from ckptdiag.model.samples import SampleBlock
from ckptdiag.model.window import WHOLE, TimeWindow
from ckptdiag.sources.ftdc.assemble import MARK_READS, Piece, block_of, frame_of, mark_continuity
from ckptdiag.sources.ftdc.files import Chunk, FileReport, FtdcError, Metadata, ftdc_files, last_chunks, read_selected
from ckptdiag.sources.ftdc.reference import Selection

# consecutive chunks of one shape taken together, up to this many samples (mongod's chunks hold
# ~300: 14 of them): the steps from a chunk's values to its piece cost one pass a run
RUN_SAMPLES = 4096


@dataclass
class FtdcData:
    """FTDC read into a frame, with the server's identity from the metadata documents."""

    frame: Any  # pandas.DataFrame indexed by UTC time (None while streaming)
    metadata: list[dict[str, Any]]
    reports: list[FileReport]
    mongod: bool = False  # a chunk of mongod's was read (not another FTDC producer's)


@functools.cache
def _wanted(keep: Callable[[str], bool] | None = None) -> Callable[[str], bool]:
    """Whether an FTDC path is read: every catalogue source (serverStatus paths, prefixed
    'serverStatus.') of the metrics ``keep`` names (all for None; and those marking a block
    reads, :data:`~.assemble.MARK_READS`), the disks, the host's CPU, replication members. One
    predicate for every file: a chunk shape remembers what it kept for it (:meth:`Schema.select`).
    Every source of a metric kept is read, so the same one wins as when all are."""
    metrics = [m for m in catalogue.METRICS if keep is None or keep(m.name) or m.name in MARK_READS]
    fields = (f for m in metrics for source in m.sources for f in catalogue.source_fields(source))
    wanted = frozenset("serverStatus." + ".".join(f.path) for f in fields)
    return lambda path: _is_wanted(path, wanted)


class FrameLayout:
    """How one chunk shape's kept slots become frame columns: the catalogue metrics (first source
    present wins, as with a live server) and the disk fields, read in one fancy-indexing step
    plus the few combined ones (8.1's attempts - failures, 7.3's api + compaction)."""

    def __init__(self, paths: list[str]) -> None:
        from ckptdiag.model import catalogue

        index = {p: i for i, p in enumerate(paths)}
        self.mongod = any(p.startswith("serverStatus.") for p in paths)
        self.start = index.get("start", -1)
        ones: list[tuple[str, int]] = []
        self.extras: list[tuple[str, str, list[int]]] = []
        for metric in catalogue.METRICS:
            for source in metric.sources:
                keys = ["serverStatus." + ".".join(f.path) for f in catalogue.source_fields(source)]
                if isinstance(source, catalogue.Total):
                    if keys[0] in index:
                        self.extras.append((metric.name, "sum", [index[k] for k in keys if k in index]))
                        break
                elif all(k in index for k in keys):
                    if isinstance(source, catalogue.Difference):
                        self.extras.append((metric.name, "diff", [index[k] for k in keys]))
                    else:
                        ones.append((metric.name, index[keys[0]]))
                    break
        for path, i in index.items():
            if path.startswith("systemMetrics.disks."):
                _, _, dev, name = path.split(".", 3)
                if name in FTDC_DISK_FIELDS:
                    ones.append((f"disk.{dev}.{FTDC_DISK_FIELDS[name]}", i))
            elif _host_cpu(path):
                ones.append((HOST_CPU + path[len(_CPU) :], i))
        lag = _lag_rows(index)
        if lag:
            self.extras.append((LAG, "lag", lag))
        self.names = [name for name, _ in ones] + [name for name, _, _ in self.extras]
        self.rows = np.array([r for _, r in ones], dtype=np.int64)

    def block(self, parts: list[np.ndarray]) -> np.ndarray:
        """Consecutive chunks' values (kept slots x samples each) as one 2-D array, a row per name
        in ``names``, a column per sample. Each chunk's rows are copied straight to their place:
        joining the chunks first and indexing the join copied everything twice, at a sixth of the
        speed (numpy's join along the samples copies row by row)."""
        width = sum(part.shape[1] for part in parts)
        block = np.empty((len(self.names), width), dtype=np.int64)
        kept = self.rows.size
        at = 0
        for part in parts:
            block[:kept, at : at + part.shape[1]] = part[self.rows]
            at += part.shape[1]
        if self.extras:  # the few combined columns, from the rows they read, joined
            used = sorted({row for _, _, rows in self.extras for row in rows})
            joined = parts[0][used] if len(parts) == 1 else np.concatenate([part[used] for part in parts], axis=1)
            where = {row: k for k, row in enumerate(used)}
            for j, (_, how, rows) in enumerate(self.extras):
                mine = [where[row] for row in rows]
                block[kept + j] = (
                    _lag(joined, mine)
                    if how == "lag"
                    else joined[mine[0]] - joined[mine[1]]
                    if how == "diff"
                    else joined[mine].sum(axis=0)
                )
        return block


# one layout a chunk shape, made the first time a chunk of that shape is read (a file has a few
# shapes, a directory a few dozen); held while its Selection lives
_LAYOUTS: weakref.WeakKeyDictionary[Selection, FrameLayout] = weakref.WeakKeyDictionary()


def layout_of(selection: Selection) -> FrameLayout:
    """How ``selection``'s slots become the sample frame's columns."""
    layout = _LAYOUTS.get(selection)
    if layout is None:
        layout = _LAYOUTS[selection] = FrameLayout(selection.paths)
    return layout


_CPU = "systemMetrics.cpu."  # the host's CPU time (procparser), as hostcpu.py records it live


def _host_cpu(path: str) -> bool:
    """Is ``path`` one of the host CPU-time fields ckptdiag reads?"""
    return path.startswith(_CPU) and path[len(_CPU) :] in HOST_CPU_FIELDS


LAG = catalogue.LAG_METRIC  # from replSetGetStatus: the rule of catalogue.replset_lag_ms, on columns
_MEMBER = re.compile(r"^replSetGetStatus\.members\.(\d+)\.(optimeDate|state|self)$")


def _lag_rows(index: dict[str, int]) -> list[int]:
    """The rows of replSetGetStatus' members FTDC keeps, as [self's optimeDate, then each
    member's optimeDate and state], or [] when they are not there (not a replica-set member)."""
    members: dict[int, dict[str, int]] = {}
    for path, i in index.items():
        match = _MEMBER.match(path)
        if match:
            members.setdefault(int(match.group(1)), {})[match.group(2)] = i
    mine = [m for m in members.values() if "self" in m and "optimeDate" in m]
    others = [m for m in members.values() if "optimeDate" in m and "state" in m]
    if len(mine) != 1 or not others:
        return []
    return [mine[0]["optimeDate"], *(r for m in others for r in (m["optimeDate"], m["state"]))]


def _lag(values: np.ndarray, rows: list[int]) -> np.ndarray:
    """Each sample's replication lag in ms: the primary's optime less this member's; -1 where no
    member was primary (an election) and 0 on the primary itself."""
    optimes = values[rows[1::2]]
    states = values[rows[2::2]]
    primary = np.where(states == 1, optimes, np.iinfo(np.int64).min).max(axis=0)
    lag = np.maximum(primary - values[rows[0]], 0)
    return np.where(primary == np.iinfo(np.int64).min, -1, lag)


def _is_wanted(path: str, wanted: frozenset[str]) -> bool:
    return (
        path in wanted
        or path.startswith("systemMetrics.disks.")
        or _host_cpu(path)
        or path in ("start", "end")
        or (path.startswith("replSetGetStatus.members.") and _MEMBER.match(path) is not None)
    )


def read_ftdc(paths: Iterable[Path], window: TimeWindow = WHOLE) -> FtdcData:
    """FTDC files or diagnostic.data directories as one frame: catalogue metrics, disks, time.

    Decodes only what the catalogue and the disk figures need; ``since``/``until`` (ms since the
    epoch) trim the window. Chunks without serverStatus (another FTDC producer) are refused.
    For a long window, :func:`file_pieces` gives a file's rows a bounded piece at a time.
    """
    data = FtdcData(None, [], [])
    cache: dict[str, Any] = {}  # every file's chunk shapes: a directory's files share them
    pieces = [p for file, in_dir in ftdc_files(paths) for p in _windows(file, in_dir, window, data, cache, None)]
    check_read(data, bool(pieces))
    data.frame = mark_continuity(frame_of(pieces))
    return data


def file_pieces(
    file: Path,
    in_dir: bool,
    window: TimeWindow,
    rows: int,
    into: FtdcData,
    cache: dict[str, Any],
    keep: Callable[[str], bool] | None = None,
) -> Iterator[SampleBlock]:
    """One metrics file's samples in blocks of about ``rows`` rows, in file order: memory stays
    bounded by one piece, and a piece never spans two files (a file's pieces are the same
    whether it is read alone or after others). Metadata documents and the file's report are
    collected in ``into``; only the metrics ``keep`` names are decoded (all for None). Each
    piece is ordered by time, not marked for continuity: its caller marks it once joined to the
    row before it (:func:`~.assemble.mark_block`)."""
    # Chunks are gathered as 2-D blocks and assembled once per piece: a DataFrame per chunk
    # cost a third of the decoding time, and a dict of columns per chunk another sixth.
    pieces: list[Piece] = []
    kept = 0
    for piece in _windows(file, in_dir, window, into, cache, keep):
        pieces.append(piece)
        kept += piece[2].size
        if kept >= rows:
            yield block_of(pieces)
            pieces, kept = [], 0
    if kept:
        yield block_of(pieces)


def _windows(
    file: Path,
    in_dir: bool,
    window: TimeWindow,
    into: FtdcData,
    cache: dict[str, Any],
    keep: Callable[[str], bool] | None,
) -> Iterator[Piece]:
    """A file's mongod chunks inside the window, as :func:`_in_window` gives them, consecutive
    chunks of one shape (up to ``RUN_SAMPLES`` samples) taken together; its metadata and report
    go to ``into``."""
    report = FileReport(str(file))
    into.reports.append(report)
    run: list[Chunk] = []
    held = 0
    for item in read_selected(file, in_dir, report, _wanted(keep), cache, window):
        if isinstance(item, Metadata):
            into.metadata.append({"start_ms": item.start_ms, "type": item.kind, "doc": item.doc})
            continue
        if not layout_of(item.selection).mongod:
            continue  # not mongod's: another FTDC producer (genny, cedar) or a foreign collector
        into.mongod = True
        if run and (item.selection is not run[0].selection or held >= RUN_SAMPLES):
            piece = _in_window(run, window, report)
            if piece is not None:
                yield piece
            run, held = [], 0
        run.append(item)
        held += item.samples
    if run:
        piece = _in_window(run, window, report)
        if piece is not None:
            yield piece


def last_row(
    file: Path, window: TimeWindow, cache: dict[str, Any], keep: Callable[[str], bool] | None = None
) -> SampleBlock | None:
    """The sample a metrics file ends on inside the window (its last mongod chunk's latest), as
    a chain of pieces holds it (:meth:`SampleBlock.seam`), or None when its end has none (or
    does not decode); only the metrics ``keep`` names (all for None)."""
    scratch = FileReport(str(file))
    for chunk in last_chunks(file, _wanted(keep), cache):
        if not layout_of(chunk.selection).mongod:
            continue
        piece = _in_window([chunk], window, scratch)
        if piece is not None:
            return block_of([piece]).seam()
    return None


def check_read(data: FtdcData, produced: bool) -> None:
    """Raise what reading found wrong: files of another FTDC producer only, or no sample at all."""
    if not data.mongod and any(r.samples for r in data.reports):
        raise FtdcError(
            f"{data.reports[0].path}: these FTDC files were not written by mongod (no serverStatus)",
            "ckptdiag reads mongod's diagnostic.data; files from other FTDC producers have other metrics",
        )
    if not produced:
        raise _nothing_read(data.reports)


def _nothing_read(reports: list[FileReport]) -> FtdcError:
    """Why no sample came out: the window, the damage found (the first file's, and how many were
    damaged), or no metric chunk at all."""
    if any(r.samples for r in reports):
        firsts = [r.first_ms for r in reports if r.first_ms is not None]
        lasts = [r.last_ms for r in reports if r.last_ms is not None]
        first, last = (min(firsts) / 1000, max(lasts) / 1000) if firsts and lasts else (None, None)
        error = WHOLE.empty("FTDC samples", "files", first, last, FtdcError)
        assert isinstance(error, FtdcError)
        return error
    damaged = [r for r in reports if r.error]
    unreadable = [r for r in damaged if r.hint]
    if unreadable and len(unreadable) == len(damaged):  # not damage: the files could not be opened
        return FtdcError(f"no FTDC file could be read: {unreadable[0].error}", unreadable[0].hint)
    if damaged:
        others = len(damaged) - 1
        more = f" (and {others} more damaged file{'s' if others > 1 else ''})" if others else ""
        return FtdcError(
            f"no readable FTDC metric chunk: {damaged[0].path}: {damaged[0].error}{more}",
            "the file is damaged before its first good chunk; give other metrics.* files or the whole directory",
        )
    return FtdcError("no FTDC metric chunks found", "give mongod's diagnostic.data directory or its metrics.* files")


def _in_window(chunks: list[Chunk], window: TimeWindow, report: FileReport) -> Piece | None:
    """Chunks' frame columns for their samples inside the window -> (names, block, times in s), or
    None when none is. The chunks are consecutive and of one shape (one :class:`Selection`):
    taken together, a file's ~300-sample chunks cost one pass of the steps below, not one each
    (those steps' per-call overhead was most of their cost). The names list is one object per
    shape: :func:`~.assemble.block_of` joins a run of one shape at once. Samples whose time is
    impossible are dropped and counted in ``report``, chunk by chunk."""
    from ckptdiag.model.sanity import plausible_times

    layout = layout_of(chunks[0].selection)
    if layout.start < 0:
        return None
    parts = [c.values for c in chunks]
    start = parts[0][layout.start] if len(parts) == 1 else np.concatenate([part[layout.start] for part in parts])
    keep = plausible_times(start / 1000.0)
    if not keep.all():
        _implausible(chunks, keep, report)
    if keep.any():  # the file's own range, for an empty window's error
        seen = start[keep]
        low, high = float(seen.min()), float(seen.max())
        report.first_ms = low if report.first_ms is None else min(report.first_ms, low)
        report.last_ms = high if report.last_ms is None else max(report.last_ms, high)
    keep &= window.keep_ms(start)
    if not keep.any():
        return None
    block = layout.block(parts)
    return layout.names, block[:, keep] if not keep.all() else block, start[keep] / 1000.0


def _implausible(chunks: list[Chunk], keep: np.ndarray, report: FileReport) -> None:
    """Each chunk's samples whose time is impossible (``keep`` False), counted in ``report``."""
    at = 0
    for chunk in chunks:
        bad = int(chunk.samples - np.count_nonzero(keep[at : at + chunk.samples]))
        at += chunk.samples
        if bad:
            report.damage.append(
                f"{bad} sample{'s' if bad > 1 else ''} of the chunk at byte {chunk.offset} "
                f"{'have' if bad > 1 else 'has'} a time outside 1970-2255 (dropped)"
            )
