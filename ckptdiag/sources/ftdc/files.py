"""FTDC files and diagnostic.data directories: the outer BSON documents, read in order, damage noted."""

from __future__ import annotations

import stat
import struct
import zlib
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ckptdiag.errors import InputError
from ckptdiag.guard.inputs import check_readable, permission_hint
from ckptdiag.model.window import TimeWindow
from ckptdiag.sources.ftdc.deltas import decode_chunk
from ckptdiag.sources.ftdc.reference import _I32, _I64, Selection


class FtdcError(InputError):
    """A file that is not FTDC, or is damaged at a known byte offset."""


class FtdcUnreadable(FtdcError):
    """A file or directory that could not be opened at all (permissions): not damage."""


@dataclass
class Chunk:
    """One metric chunk: slot paths and their values, one row per metric, one column per sample."""

    start_ms: int  # the chunk's _id
    offset: int  # byte offset of the chunk document in its file
    selection: Selection  # which of its shape's slots were kept, and what the frame makes of them
    values: np.ndarray  # int64, shape (len(paths), samples)

    @property
    def paths(self) -> list[str]:
        return self.selection.paths

    @property
    def samples(self) -> int:
        return int(self.values.shape[1])


@dataclass
class Metadata:
    """A type 0 document (buildInfo, getCmdLineOpts, hostInfo, ...) or a type 2 delta."""

    start_ms: int
    kind: int
    doc: dict[str, Any]


@dataclass
class FileReport:
    """What reading one file found: chunks, samples, and the damage it stopped at (if any)."""

    path: str
    chunks: int = 0
    samples: int = 0
    first_ms: float | None = None  # the earliest and latest plausible sample time read, in or out of the window
    last_ms: float | None = None
    metadata: int = 0
    skipped: int = 0  # metric chunks passed over undecoded, far outside the window
    error: str | None = None
    hint: str = ""  # what to do, when the file could not be read at all (permissions), not damaged
    notes: list[str] = field(default_factory=list)  # facts about the file (zero padding after the last document)
    damage: list[str] = field(default_factory=list)  # damage read past (printed with the report)

    def passed_over(self, start_ms: int) -> None:
        """A metric chunk far outside the window, not decoded: its start still says where the
        file's samples lie."""
        self.skipped += 1
        self.first_ms = start_ms if self.first_ms is None else min(self.first_ms, start_ms)
        self.last_ms = start_ms if self.last_ms is None else max(self.last_ms, start_ms)


def _bson_docs(buf: bytes, report: FileReport) -> Iterator[tuple[int, bytes]]:
    """The documents of a file's bytes in order -> (offset, document); see :func:`_doc_spans`."""
    for pos, length in _doc_spans(buf, report):
        yield pos, buf[pos : pos + length]


def _doc_spans(buf: Any, report: FileReport) -> Iterator[tuple[int, int]]:
    """Where each top-level BSON document of ``buf`` (bytes or a mapped file) lies -> (offset,
    length), its length checked against the bytes left; damage ends the walk (``report.error``),
    zero padding after the last document is a note."""
    pos = 0
    size = len(buf)
    while pos + 5 <= size:
        (length,) = _I32.unpack_from(buf, pos)
        if length == 0 and not buf[pos:].strip(b"\x00"):
            report.notes.append(f"zero padding from byte {pos}")
            return
        if length < 5 or pos + length > size:
            report.error = f"truncated or damaged document at byte {pos}"
            return
        if buf[pos + length - 1] != 0:
            report.error = f"damaged document at byte {pos}"
            return
        yield pos, length
        pos += length
    if pos < size and buf[pos:].strip(b"\x00"):
        report.error = f"truncated document at byte {pos}"


def read_file(
    path: Path,
    report: FileReport | None = None,
    wanted: Callable[[str], bool] | None = None,
    cache: dict[str, Any] | None = None,
    window: TimeWindow | None = None,
) -> Iterator[Chunk | Metadata]:
    """Chunks and metadata of one FTDC file, in order. Damage ends the file (``report.error``).
    ``cache`` keeps the chunks' shapes (:func:`reference_schema`): the files of a directory share
    one, as they share their shapes. With a ``window``, chunks that lie far outside it are passed
    over undecoded (:func:`_far_outside`)."""
    import bson
    from bson.codec_options import CodecOptions, DatetimeConversion

    report = report or FileReport(str(path))
    buf = _file_bytes(path)
    options: CodecOptions[dict[str, Any]] = CodecOptions(datetime_conversion=DatetimeConversion.DATETIME_MS)
    first = True
    cache = {} if cache is None else cache
    far = _far_outside(buf, window) if window is not None and not window.whole else set()
    for offset, raw in _bson_docs(buf, report):
        try:
            doc = bson.decode(raw, codec_options=options)
        except Exception:  # noqa: BLE001 - any decode failure is damage at this offset
            report.error = f"undecodable BSON document at byte {offset}"
            return
        kind = doc.get("type")
        if first and (kind not in (0, 1, 2) or "_id" not in doc):
            raise FtdcError(
                f"{path} is not a MongoDB FTDC file (byte 0 has no _id/type)",
                "ckptdiag reads mongod's diagnostic.data/metrics.* files",
            )
        first = False
        start_ms = _start_ms(doc.get("_id"))
        if start_ms is None:
            report.error = f"document at byte {offset} has no valid time (_id)"
            return
        if kind == 1 and offset in far:
            report.passed_over(start_ms)
        elif kind == 1:
            chunk = _metric_chunk(doc.get("data"), start_ms, offset, wanted, cache, report)
            if chunk is None:
                return  # damage ends the file
            yield chunk
        elif kind in (0, 2):
            meta = doc.get("doc")
            if not isinstance(meta, dict):
                report.damage.append(f"metadata at byte {offset} is not a document (skipped)")
                continue
            report.metadata += 1
            yield Metadata(start_ms, int(kind), meta)
    if first and report.error is None and not report.notes and not report.damage:
        raise FtdcError(f"{path} is empty", "an FTDC file holds at least one document")


def _metric_chunk(
    data: Any,
    start_ms: int,
    offset: int,
    wanted: Callable[[str], bool] | None,
    cache: dict[str, Any],
    report: FileReport,
) -> Chunk | None:
    """A metric chunk's samples (None: damaged, ``report.error`` says how)."""
    if not isinstance(data, bytes):
        report.error = f"metric chunk without data at byte {offset}"
        return None
    try:
        selection, values = decode_chunk(bytes(data), wanted, cache)
    except (ValueError, zlib.error, struct.error, IndexError, RecursionError, MemoryError) as exc:
        report.error = f"bad metric chunk at byte {offset}: {exc}"
        return None
    report.chunks += 1
    report.samples += values.shape[1]
    return Chunk(start_ms, offset, selection, values)


FAR_MS = 3_600_000  # a chunk is passed over only this far outside the window: clocks jitter


def _metric_starts(buf: Any) -> list[tuple[int, int]]:
    """Where each metric chunk of ``buf`` (bytes or a mapped file) lies and when it began (ms),
    read from the documents' headers alone (``{_id: Date, type: 1, ...}``, as mongod writes
    them; a document written otherwise is not listed)."""
    out = []
    for pos, length in _doc_spans(buf, FileReport("")):
        if length < 27 or buf[pos + 4 : pos + 9] != b"\x09_id\x00" or buf[pos + 17 : pos + 23] != b"\x10type\x00":
            continue
        if _I32.unpack_from(buf, pos + 23)[0] == 1:
            out.append((pos, _I64.unpack_from(buf, pos + 9)[0]))
    return out


def _far_outside(buf: bytes, window: TimeWindow) -> set[int]:
    """The offsets of the metric chunks that lie ``FAR_MS`` or more outside the window by their
    ``_id`` (a chunk's first sample) and the next chunk's (after its last): read from the
    documents' headers alone, as mongod writes them. Never the file's first or last chunk (they
    say where the file begins and ends), and none after the file's clock ran back (a chunk's
    samples then need not lie between its ``_id`` and the next)."""
    return _far_of(_metric_starts(buf), window)


def _far_of(starts: list[tuple[int, int]], window: TimeWindow) -> set[int]:
    """:func:`_far_outside` of the metric chunks ``starts`` lists (:func:`_metric_starts`)."""
    far: set[int] = set()
    latest = None
    for k in range(1, len(starts) - 1):
        (pos, at), (_, after) = starts[k], starts[k + 1]
        latest = max(latest if latest is not None else at, starts[k - 1][1])
        if at < latest or after < at:
            break  # the clock ran back: from here every chunk is decoded
        if (window.since_ms is not None and after < window.since_ms - FAR_MS) or (
            window.until_ms is not None and at > window.until_ms + FAR_MS
        ):
            far.add(pos)
    return far


def _file_bytes(path: Path) -> bytes:
    """The file's bytes, refused at once when its first bytes cannot begin a BSON document."""
    try:
        buf = path.read_bytes()
    except OSError as exc:
        raise FtdcUnreadable(f"cannot read {path}: {exc.strerror}", permission_hint(exc)) from None
    if len(buf) >= 5 and _I32.unpack_from(buf, 0)[0] > len(buf) * 4 + 64:
        raise FtdcError(
            f"{path} is not an FTDC file (byte 0 is not a BSON document)",
            "give a diagnostic.data directory or one of its metrics.* files",
        )
    return buf


# FTDC times are ms since the epoch; a value outside years 1970-9999 is damage, not a time
_LAST_MS = 253_402_300_799_999


def _start_ms(value: object) -> int | None:
    """A document's ``_id`` as ms since the epoch, or None when it is not a plausible time."""
    from bson.datetime_ms import DatetimeMS

    if isinstance(value, bool) or not isinstance(value, int | float | DatetimeMS):
        return None
    try:
        ms = int(value)
    except (ValueError, OverflowError):
        return None
    return ms if 0 <= ms <= _LAST_MS else None


def metric_files(path: Path) -> list[Path]:
    """The metrics files of a diagnostic.data directory in time order (interim last), or [path]."""
    st = check_readable(path, FtdcError)
    if stat.S_ISDIR(st.st_mode):
        try:
            files = sorted(p for p in path.iterdir() if p.name.startswith("metrics.") and p.is_file())
        except OSError as exc:
            raise FtdcUnreadable(f"cannot list {path}: {exc.strerror}", permission_hint(exc)) from None
        archives = [p for p in files if p.name != "metrics.interim"]
        interim = [p for p in files if p.name == "metrics.interim"]
        if not files:
            raise FtdcError(f"{path} has no metrics.* files", "give mongod's <dbPath>/diagnostic.data directory")
        return archives + interim
    return [path]


def ftdc_files(paths: Iterable[Path]) -> list[tuple[Path, bool]]:
    """Every metrics file the inputs name, in reading order, each with whether it came from a
    directory (where one bad file does not stop the rest). An empty file given with others is
    read as a directory's (mongod had just opened it: the shell's glob of diagnostic.data with a
    0-byte metrics.interim reads as the directory); a file given by name that is not FTDC raises."""
    given = list(paths)
    out: list[tuple[Path, bool]] = []
    for top in given:
        among = top.is_dir() or (len(given) > 1 and _empty(top))
        out += [(file, among) for file in metric_files(top)]
    return out


def _empty(path: Path) -> bool:
    try:
        return path.stat().st_size == 0
    except OSError:
        return False


def read_selected(
    file: Path,
    in_dir: bool,
    report: FileReport,
    wanted: Callable[[str], bool],
    cache: dict[str, Any],
    window: TimeWindow | None = None,
) -> Iterator[Chunk | Metadata]:
    """:func:`read_file` of one of :func:`ftdc_files`: a file of a directory that is not FTDC is
    its report's error, a file given alone raises."""
    try:
        yield from read_file(file, report, wanted, cache, window)
    except FtdcError as exc:
        if not in_dir:
            raise
        report.error = exc.message  # in a directory one bad file does not stop the rest
        if isinstance(exc, FtdcUnreadable):
            report.hint = exc.hint


def bytes_in_window(path: Path, window: TimeWindow) -> int:
    """About how many of a file's bytes a report of ``window`` decodes: the file's size, less
    its share of the metric chunks lying far outside the window (:func:`_far_outside`, read from
    the documents' headers alone). The whole size when the window is whole or the file cannot
    say."""
    import mmap

    size = path.stat().st_size
    if window.whole:
        return size
    try:
        with path.open("rb") as f, mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as buf:
            starts = _metric_starts(buf)
    except (OSError, ValueError):  # unreadable, or empty (mmap refuses a file of 0 bytes)
        return size
    return size if not starts else size * (len(starts) - len(_far_of(starts, window))) // len(starts)


def last_chunk_start(path: Path) -> int | None:
    """When a file's last metric chunk began (ms since the epoch), read from its documents'
    headers alone (``{_id: Date, type: 1, ...}``, as mongod writes them): where a file ends in
    time, without inflating it. None when the file cannot say."""
    import mmap

    try:
        with path.open("rb") as f, mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as buf:
            starts = _metric_starts(buf)
    except (OSError, ValueError):  # unreadable, or empty (mmap refuses a file of 0 bytes)
        return None
    return starts[-1][1] if starts else None


def last_chunks(path: Path, wanted: Callable[[str], bool], cache: dict[str, Any]) -> Iterator[Chunk]:
    """A file's metric chunks from its end backwards, for the row a file ends on. Only what
    decodes cleanly is given: damage, or a file that is not FTDC, ends it (the caller checks
    what it takes from here against the file read in order)."""
    import bson
    from bson.codec_options import CodecOptions, DatetimeConversion

    options: CodecOptions[dict[str, Any]] = CodecOptions(datetime_conversion=DatetimeConversion.DATETIME_MS)
    try:
        buf = _file_bytes(path)
    except FtdcError:
        return
    for offset, length in reversed(list(_doc_spans(buf, FileReport(str(path))))):
        try:
            doc = bson.decode(buf[offset : offset + length], codec_options=options)
            data = doc.get("data") if doc.get("type") == 1 else None
            start_ms = _start_ms(doc.get("_id"))
            if not isinstance(data, bytes) or start_ms is None:
                continue
            selection, values = decode_chunk(bytes(data), wanted, cache)
        except Exception:  # noqa: BLE001 - damage: nothing more to take from this end
            return
        yield Chunk(start_ms, offset, selection, values)
