"""MongoDB's own FTDC files (``<dbPath>/diagnostic.data/metrics.*``), decoded exactly and fast.

Format (mongo ``src/mongo/db/ftdc``): a file is a sequence of BSON documents ``{_id: Date, type,
doc | data}``. Type 0 is metadata (buildInfo, getCmdLineOpts, hostInfo), type 2 periodic metadata,
type 1 a metric chunk: ``data`` holds ``uint32 uncompressed size`` + a zlib stream of a reference
BSON document, ``uint32 metric count``, ``uint32 delta count``, then metric-major deltas as
unsigned LEB128 varints in which a 0 is followed by the number of further zeros (runs may
continue into the next metric). Metric values are extracted as mongod's ``util.cpp`` does:
numbers as 64-bit integers (doubles truncated toward zero, Decimal128 too), bool 0/1, Date in
ms, Timestamp as two slots (seconds, increment); strings, ObjectIds, null and binary are not
metrics; documents and arrays recurse in field order.

The delta stream is decoded with numpy, vectorised (varints, zero runs, cumulative sums), so a
chunk costs a few array passes; memory is bounded by one chunk.
"""

from __future__ import annotations

import math
import struct
import zlib
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ckptdiag.errors import InputError
from ckptdiag.sources.diskstats import FTDC_DISK_FIELDS

try:
    from ckptdiag import _ftdc_kernel
except ImportError:  # built without a C compiler: the numpy paths do the same work, slower
    _ftdc_kernel = None  # type: ignore[assignment]

INT64_MIN = -(2**63)
_I32 = struct.Struct("<i")
_U32 = struct.Struct("<I")
_I64 = struct.Struct("<q")
_U64 = struct.Struct("<Q")
_F64 = struct.Struct("<d")


class FtdcError(InputError):
    """A file that is not FTDC, or is damaged at a known byte offset."""


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
    metadata: int = 0
    error: str | None = None
    notes: list[str] = field(default_factory=list)


# --- BSON: the outer documents and the metric walk of a reference document -------------------


def _cstring_end(buf: bytes, pos: int) -> int:
    end = buf.find(b"\x00", pos)
    if end < 0:
        raise ValueError("unterminated field name")
    return end


def _trunc(value: float) -> int:
    # numberLong() of a double: truncation toward zero; NaN is 0 and out-of-range saturates
    if math.isnan(value):
        return 0
    if value >= 9.223372036854775807e18:
        return 2**63 - 1
    if value <= -9.223372036854775808e18:
        return INT64_MIN
    return int(value)


def _decimal128_long(raw: bytes) -> int:
    from bson.decimal128 import Decimal128

    dec = Decimal128.from_bid(raw).to_decimal()
    if dec.is_nan():
        return 0
    if dec.is_infinite():
        return 2**63 - 1 if dec > 0 else INT64_MIN
    return max(min(int(dec), 2**63 - 1), INT64_MIN)


# Slot kinds in a reference document's layout (where each metric's bytes are, and how to read them)
K_DOUBLE, K_INT32, K_INT64, K_BOOL, K_TS_SECS, K_TS_INC, K_DEC128 = range(1, 8)


def walk_metrics(
    buf: bytes,
    start: int = 0,
    prefix: str = "",
    paths: list[str] | None = None,
    values: list[int] | None = None,
    layout: list[tuple[int, int]] | None = None,
    opaque: list[tuple[int, int]] | None = None,
) -> tuple[list[str], list[int]]:
    """Metric slots of a BSON document in mongod's extraction order: (paths, reference values).

    With ``layout``, also the (byte offset, kind) of every slot, and with ``opaque`` the (start,
    end) of every non-metric payload (string contents, ObjectIds, binary data), so that later
    documents of the same shape can be read without walking them (:class:`Schema`).
    """
    skip = opaque if opaque is not None else []
    paths = [] if paths is None else paths
    values = [] if values is None else values
    lay = layout if layout is not None else []
    (length,) = _I32.unpack_from(buf, start)
    end = start + length - 1
    pos = start + 4
    while pos < end:
        etype = buf[pos]
        name_end = _cstring_end(buf, pos + 1)
        name = buf[pos + 1 : name_end].decode("utf-8", "replace")
        path = f"{prefix}{name}"
        pos = name_end + 1
        if etype == 0x01:  # double
            paths.append(path)
            values.append(_trunc(_F64.unpack_from(buf, pos)[0]))
            lay.append((pos, K_DOUBLE))
            pos += 8
        elif etype == 0x10:  # int32
            paths.append(path)
            values.append(_I32.unpack_from(buf, pos)[0])
            lay.append((pos, K_INT32))
            pos += 4
        elif etype in (0x12, 0x09):  # int64, UTC datetime (ms)
            paths.append(path)
            values.append(_I64.unpack_from(buf, pos)[0])
            lay.append((pos, K_INT64))
            pos += 8
        elif etype == 0x08:  # bool
            paths.append(path)
            values.append(1 if buf[pos] else 0)
            lay.append((pos, K_BOOL))
            pos += 1
        elif etype == 0x11:  # timestamp: increment in the low 32 bits, seconds in the high 32
            (raw,) = _U64.unpack_from(buf, pos)
            paths += [path, f"{path}.inc"]
            values += [raw >> 32, raw & 0xFFFFFFFF]
            lay += [(pos, K_TS_SECS), (pos, K_TS_INC)]
            pos += 8
        elif etype == 0x13:  # decimal128
            paths.append(path)
            values.append(_decimal128_long(buf[pos : pos + 16]))
            lay.append((pos, K_DEC128))
            pos += 16
        elif etype in (0x03, 0x04):  # document, array: recurse
            (sub_len,) = _I32.unpack_from(buf, pos)
            walk_metrics(buf, pos, f"{path}.", paths, values, lay, skip)
            pos += sub_len
        elif etype in (0x02, 0x0D, 0x0E):  # string, JS code, symbol
            n = _I32.unpack_from(buf, pos)[0]
            skip.append((pos + 4, pos + 4 + n))
            pos += 4 + n
        elif etype == 0x05:  # binary
            n = _I32.unpack_from(buf, pos)[0]
            skip.append((pos + 5, pos + 5 + n))
            pos += 5 + n
        elif etype == 0x07:  # ObjectId
            skip.append((pos, pos + 12))
            pos += 12
        elif etype in (0x06, 0x0A, 0xFF, 0x7F):  # undefined, null, min/max key
            pass
        elif etype == 0x0B:  # regex: two cstrings
            pos = _cstring_end(buf, _cstring_end(buf, pos) + 1) + 1
        elif etype == 0x0C:  # DBPointer
            pos += 4 + _I32.unpack_from(buf, pos)[0] + 12
        elif etype == 0x0F:  # code with scope
            pos += _I32.unpack_from(buf, pos)[0]
        else:
            raise ValueError(f"unknown BSON type 0x{etype:02x}")
    return paths, values


_VALUE_BYTES = {K_DOUBLE: 8, K_INT32: 4, K_INT64: 8, K_BOOL: 1, K_TS_SECS: 8, K_TS_INC: 8, K_DEC128: 16}


class Schema:
    """The shape of one reference document: slot paths, and where each slot's value sits.

    A later reference document has the same shape exactly when it has the same length and the
    same bytes everywhere but in the value bytes and the contents of strings and ObjectIds (so
    field names, types, nesting and every length prefix agree, and every offset is the same):
    then its values are read with a few numpy gathers instead of a field-by-field walk. mongod
    starts a new chunk when a document's shape changes, so most chunks of a file share one shape.
    """

    def __init__(self, raw: bytes) -> None:
        layout: list[tuple[int, int]] = []
        opaque: list[tuple[int, int]] = []
        self.paths, first_values = walk_metrics(raw, 0, layout=layout, opaque=opaque)
        self.length = len(raw)
        self.offsets = np.array([o for o, _ in layout], dtype=np.int64)
        self.kinds = np.array([k for _, k in layout], dtype=np.int8)
        mask = np.zeros(len(raw), dtype=bool)
        for offset, kind in layout:
            mask[offset : offset + _VALUE_BYTES[kind]] = True
        for start, end in opaque:  # string contents may change; their lengths (not masked) may not
            mask[start:end] = True
        self._fixed = np.flatnonzero(~mask)
        self._template = np.frombuffer(raw, dtype=np.uint8)[self._fixed].copy()
        # the same bytes as (start, end) runs, for the compiled comparison
        edges = np.diff(np.concatenate(([0], (~mask).view(np.int8), [0])))
        self._ranges = np.column_stack((np.flatnonzero(edges == 1), np.flatnonzero(edges == -1))).astype(np.int64)
        self.first_values = np.array(first_values, dtype=np.int64)
        self.first_raw = raw
        self._plans: dict[int | None, tuple[np.ndarray | None, list[tuple[int, str, np.ndarray, np.ndarray]]]] = {}
        self._selections: dict[int, tuple[Callable[[str], bool] | None, Selection]] = {}

    def select(self, wanted: Callable[[str], bool] | None) -> Selection:
        """The slots ``wanted`` keeps (all for None), made once per shape and predicate."""
        found = self._selections.get(id(wanted))
        if found is not None and found[0] is wanted:
            return found[1]
        rows = (
            np.arange(len(self.paths))
            if wanted is None
            else np.array([i for i, p in enumerate(self.paths) if wanted(p)], dtype=np.int64)
        )
        paths = [self.paths[i] for i in rows]
        selection = Selection(rows, paths, len(self.paths), self.offsets[rows], self.kinds[rows])
        self._selections[id(wanted)] = (wanted, selection)  # holding wanted keeps its id unique
        return selection

    def matches(self, raw: bytes, *, compiled: bool = True) -> bool:
        """Whether ``raw`` has exactly this shape."""
        if len(raw) != self.length:
            return False
        if compiled and _ftdc_kernel is not None:
            return bool(_ftdc_kernel.same_shape(raw, self._ranges, self._template))
        return bool(np.array_equal(np.frombuffer(raw, dtype=np.uint8)[self._fixed], self._template))

    def kept_values(self, raw: bytes, kept: Selection, *, compiled: bool = True) -> np.ndarray:
        """The reference values of the slots ``kept`` keeps, in a document of this shape."""
        if raw is self.first_raw:
            first: np.ndarray = self.first_values[kept.rows]
            return first
        if compiled and _ftdc_kernel is not None and kept.plain:
            values: np.ndarray = np.frombuffer(_ftdc_kernel.reference(raw, kept.offsets, kept.kinds), dtype=np.int64)
            return values
        return self.values(raw, kept.rows)

    def _plan(self, rows: np.ndarray | None) -> list[tuple[int, str, np.ndarray, np.ndarray]]:
        # (kind, dtype, positions in the output, byte gather index) per kind: made once per rows
        key = None if rows is None else id(rows)
        cached = self._plans.get(key)
        if cached is not None and (rows is None or cached[0] is rows):
            return cached[1]
        offsets = self.offsets if rows is None else self.offsets[rows]
        kinds = self.kinds if rows is None else self.kinds[rows]
        plan = []
        for kind, width, dtype in _GATHERS:
            sel = np.flatnonzero(kinds == kind)
            if sel.size:
                plan.append((kind, dtype, sel, offsets[sel, None] + np.arange(width)))
        self._plans[key] = (rows, plan)
        return plan

    def values(self, raw: bytes, rows: np.ndarray | None = None) -> np.ndarray:
        """The slots' values (all, or ``rows``) in a document of this shape (int64, mongod's rules)."""
        buf = np.frombuffer(raw, dtype=np.uint8)
        out = np.empty(self.offsets.size if rows is None else rows.size, dtype=np.int64)
        for kind, dtype, sel, gather in self._plan(rows):
            if kind == K_BOOL:
                out[sel] = buf[gather[:, 0]] != 0
                continue
            if kind == K_DEC128:
                for i, g in zip(sel, gather, strict=True):
                    out[i] = _decimal128_long(bytes(buf[g]))
                continue
            grabbed = buf[gather].view(dtype).ravel()
            if kind == K_DOUBLE:
                exact = np.abs(grabbed) < 9.2e18  # the rest (and NaN) one by one, as _trunc does
                out[sel[exact]] = np.trunc(grabbed[exact]).astype(np.int64)
                for i in np.flatnonzero(~exact):
                    out[sel[i]] = _trunc(float(grabbed[i]))
            elif kind == K_TS_SECS:
                out[sel] = (grabbed >> np.uint64(32)).astype(np.int64)
            elif kind == K_TS_INC:
                out[sel] = (grabbed & np.uint64(0xFFFFFFFF)).astype(np.int64)
            else:
                out[sel] = grabbed
        return out


class Selection:
    """What is derived once per chunk shape: the slots kept, their paths, the kernel's row lookup,
    and (lazily) how they become frame columns."""

    def __init__(
        self, rows: np.ndarray, paths: list[str], n_metrics: int, offsets: np.ndarray, kinds: np.ndarray
    ) -> None:
        self.rows = rows
        self.paths = paths
        self.all = rows.size == n_metrics
        self.offsets = np.ascontiguousarray(offsets, dtype=np.int64)
        self.kinds = np.ascontiguousarray(kinds, dtype=np.int8)
        self.plain = not bool(np.any(self.kinds == K_DEC128))  # the kernel reads every kind but these
        lut = np.full(n_metrics, -1, dtype=np.int32)
        lut[rows] = np.arange(rows.size, dtype=np.int32)
        self.lut = lut.tobytes()
        self._layout: FrameLayout | None = None

    @property
    def layout(self) -> FrameLayout:
        """How this shape's slots become the sample frame's columns."""
        if self._layout is None:
            self._layout = FrameLayout(self.paths)
        return self._layout


_GATHERS = (
    (K_INT32, 4, "<i4"),
    (K_INT64, 8, "<i8"),
    (K_DOUBLE, 8, "<f8"),
    (K_TS_SECS, 8, "<u8"),
    (K_TS_INC, 8, "<u8"),
    (K_BOOL, 1, "u1"),
    (K_DEC128, 16, "u1"),
)


def reference_metrics(raw: bytes, cache: dict[str, Any] | None = None) -> tuple[list[str], np.ndarray]:
    """Slot paths and values of a chunk's reference document, reusing the last shape when it fits."""
    schema = reference_schema(raw, cache)
    return schema.paths, (schema.first_values if schema.first_raw is raw else schema.values(raw))


def reference_schema(raw: bytes, cache: dict[str, Any] | None = None, *, compiled: bool = True) -> Schema:
    """The shape of a reference document: the cached one when it fits, else a new one (cached)."""
    schema: Schema | None = cache.get("schema") if cache is not None else None
    if schema is not None and schema.matches(raw, compiled=compiled):
        return schema
    schema = Schema(raw)
    if cache is not None:
        cache["schema"] = schema
    return schema


# --- the delta stream ---------------------------------------------------------------------------


def decode_deltas(
    stream: np.ndarray,
    n_metrics: int,
    n_deltas: int,
    *,
    compiled: bool = True,
    rows: np.ndarray | None = None,
    lut: bytes | None = None,
) -> np.ndarray:
    """Varints with zero runs -> a (n_metrics, n_deltas) uint64 array of deltas, vectorised
    (or only the metrics in ``rows``, in that order: the compiled kernel then writes no other;
    ``lut`` is its row lookup for ``rows``, when the caller has it already).

    A varint ends at a byte without the 0x80 bit. A 0 value is a run marker: the next value counts
    the *further* zeros. The first zero of a run of zero tokens is always a marker (a marker is 0,
    so the token before a run, being non-zero, cannot be one); inside the run markers and counts
    alternate; a run of odd length ends with a marker whose count is the next, non-zero token.
    """
    total = n_metrics * n_deltas
    if total == 0:
        return np.zeros((n_metrics if rows is None else rows.size, n_deltas), dtype=np.uint64)
    if compiled and _ftdc_kernel is not None:
        if rows is None:
            out = _ftdc_kernel.decode(stream.data, n_metrics, n_deltas)
            return np.frombuffer(out, dtype=np.uint64).reshape(n_metrics, n_deltas)
        keep: np.ndarray = rows
        if lut is None:
            table = np.full(n_metrics, -1, dtype=np.int32)
            table[keep] = np.arange(keep.size, dtype=np.int32)
            lut = table.tobytes()
        out = _ftdc_kernel.decode(stream.data, n_metrics, n_deltas, lut, keep.size)
        return np.frombuffer(out, dtype=np.uint64).reshape(keep.size, n_deltas)
    if rows is not None:
        selected: np.ndarray = decode_deltas(stream, n_metrics, n_deltas, compiled=False)[rows]
        return selected
    data = stream
    ends = np.flatnonzero(data < 0x80)
    if ends.size == 0:
        raise ValueError("no complete varint in the delta stream")
    data = data[: ends[-1] + 1]
    if ends.size == data.size:
        tokens = data.astype(np.uint64)  # every varint is one byte: the common case
    else:
        starts = np.empty_like(ends)
        starts[0] = 0
        starts[1:] = ends[:-1] + 1
        lengths = ends - starts + 1
        longest = int(lengths.max())
        if longest > 10:
            raise ValueError("varint longer than 10 bytes")
        # byte k of every varint longer than k, one pass per byte position (most are 1 byte)
        tokens = (data[starts] & 0x7F).astype(np.uint64)
        multi = np.flatnonzero(lengths > 1)
        for k in range(1, longest):
            multi = multi[lengths[multi] > k]
            tokens[multi] |= (data[starts[multi] + k] & 0x7F).astype(np.uint64) << np.uint64(7 * k)
    zero = tokens == 0
    # index of each zero within its run of consecutive zero tokens
    idx = np.arange(tokens.size)
    run_start = np.where(zero & ~np.concatenate(([False], zero[:-1])), idx, 0)
    np.maximum.accumulate(run_start, out=run_start)
    marker = zero & (((idx - run_start) % 2) == 0)
    is_count = np.concatenate(([False], marker[:-1]))
    repeat = np.where(is_count, 0, 1).astype(np.int64)
    m_idx = np.flatnonzero(marker)
    counts = tokens[np.minimum(m_idx + 1, tokens.size - 1)].astype(np.int64)
    counts[m_idx + 1 >= tokens.size] = 0  # a marker with its count cut off: one zero
    repeat[m_idx] = 1 + counts
    values = np.where(marker, np.uint64(0), tokens)
    expanded = np.repeat(values, repeat)
    if expanded.size < total:
        raise ValueError(f"delta stream holds {expanded.size} values, the chunk needs {total}")
    return expanded[:total].reshape(n_metrics, n_deltas)


def decode_chunk(
    data: bytes,
    wanted: Callable[[str], bool] | None = None,
    cache: dict[str, Any] | None = None,
    *,
    compiled: bool = True,
) -> tuple[Selection, np.ndarray]:
    """A type 1 ``data`` payload -> (the slots kept, their int64 values of shape (kept, samples)).

    With ``wanted``, only the metrics it accepts are summed up and returned (the delta stream is
    still read in full: it is one sequence across metrics).
    """
    if len(data) < 4:
        raise ValueError("chunk shorter than its length prefix")
    (expected,) = _U32.unpack_from(data, 0)
    raw = zlib.decompress(data[4:])
    if len(raw) != expected:
        raise ValueError(f"inflated to {len(raw)} bytes, the header says {expected}")
    (ref_len,) = _I32.unpack_from(raw, 0)
    n_metrics, n_deltas = struct.unpack_from("<II", raw, ref_len)  # compressor.cpp's order
    ref_raw = raw[:ref_len]
    schema = reference_schema(ref_raw, cache, compiled=compiled)
    if n_metrics != len(schema.paths):
        raise ValueError(f"chunk says {n_metrics} metrics, its reference document has {len(schema.paths)}")
    stream = np.frombuffer(raw, dtype=np.uint8, offset=ref_len + 8)
    kept = schema.select(wanted)
    # only the reference values of the rows kept are read
    ref = schema.kept_values(ref_raw, kept, compiled=compiled)
    if compiled and _ftdc_kernel is not None:
        # reference, deltas and running sums in one pass
        series = _ftdc_kernel.series(stream.data, n_metrics, n_deltas, kept.lut, kept.rows.size, ref.tobytes())
        return kept, np.frombuffer(series, dtype=np.int64).reshape(kept.rows.size, n_deltas + 1)
    deltas = decode_deltas(
        stream, n_metrics, n_deltas, compiled=False, rows=None if kept.all else kept.rows, lut=kept.lut
    )
    out = np.empty((kept.rows.size, n_deltas + 1), dtype=np.uint64)
    out[:, 0] = ref.view(np.uint64)
    out[:, 1:] = deltas
    np.cumsum(out, axis=1, out=out)  # uint64 arithmetic wraps, as mongod's int64 deltas do
    return kept, out.view(np.int64)


# --- files and directories -------------------------------------------------------------------


def _bson_docs(buf: bytes, report: FileReport) -> Iterator[tuple[int, bytes]]:
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
        yield pos, buf[pos : pos + length]
        pos += length
    if pos < size and buf[pos:].strip(b"\x00"):
        report.error = f"truncated document at byte {pos}"


def read_file(
    path: Path, report: FileReport | None = None, wanted: Callable[[str], bool] | None = None
) -> Iterator[Chunk | Metadata]:
    """Chunks and metadata of one FTDC file, in order. Damage ends the file (``report.error``)."""
    import bson
    from bson.codec_options import CodecOptions, DatetimeConversion

    report = report or FileReport(str(path))
    try:
        buf = path.read_bytes()
    except OSError as exc:
        raise FtdcError(f"cannot read {path}: {exc.strerror}", "check the path and its permissions") from None
    if len(buf) >= 5 and _I32.unpack_from(buf, 0)[0] > len(buf) * 4 + 64:
        raise FtdcError(
            f"{path} is not an FTDC file (byte 0 is not a BSON document)",
            "give a diagnostic.data directory or one of its metrics.* files",
        )
    options: CodecOptions[dict[str, Any]] = CodecOptions(datetime_conversion=DatetimeConversion.DATETIME_MS)
    first = True
    cache: dict[str, Any] = {}  # the last reference document's shape, reused while it fits
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
        start = doc.get("_id")
        start_ms = int(start) if start is not None else 0
        if kind == 1:
            data = doc.get("data")
            if not isinstance(data, bytes):
                report.error = f"metric chunk without data at byte {offset}"
                return
            try:
                selection, values = decode_chunk(bytes(data), wanted, cache)
            except (ValueError, zlib.error, struct.error, IndexError) as exc:
                report.error = f"bad metric chunk at byte {offset}: {exc}"
                return
            report.chunks += 1
            report.samples += values.shape[1]
            yield Chunk(start_ms, offset, selection, values)
        elif kind in (0, 2):
            report.metadata += 1
            yield Metadata(start_ms, int(kind), dict(doc.get("doc") or {}))
    if first and report.error is None and not report.notes:
        raise FtdcError(f"{path} is empty", "an FTDC file holds at least one document")


def metric_files(path: Path) -> list[Path]:
    """The metrics files of a diagnostic.data directory in time order (interim last), or [path]."""
    if path.is_dir():
        files = sorted(p for p in path.iterdir() if p.name.startswith("metrics.") and p.is_file())
        archives = [p for p in files if p.name != "metrics.interim"]
        interim = [p for p in files if p.name == "metrics.interim"]
        if not files:
            raise FtdcError(f"{path} has no metrics.* files", "give mongod's <dbPath>/diagnostic.data directory")
        return archives + interim
    if not path.exists():
        raise FtdcError(f"{path} does not exist", "check the path")
    return [path]


# --- FTDC as a sample frame (the same columns a recording gives) ------------------------------


@dataclass
class FtdcData:
    """FTDC read into a frame, with the server's identity from the metadata documents."""

    frame: Any  # pandas.DataFrame indexed by UTC time (None while streaming)
    metadata: list[dict[str, Any]]
    reports: list[FileReport]


def _wanted_paths() -> frozenset[str]:
    """The FTDC paths of every catalogue source (serverStatus paths, prefixed 'serverStatus.')."""
    from ckptdiag import catalogue

    return frozenset(
        "serverStatus." + ".".join(f.path)
        for metric in catalogue.METRICS
        for source in metric.sources
        for f in catalogue.source_fields(source)
    )


class FrameLayout:
    """How one chunk shape's kept slots become frame columns: the catalogue metrics (first source
    present wins, as with a live server) and the disk fields, read in one fancy-indexing step
    plus the few combined ones (8.1's attempts - failures, 7.3's api + compaction)."""

    def __init__(self, paths: list[str]) -> None:
        from ckptdiag import catalogue

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
        self.names = [name for name, _ in ones] + [name for name, _, _ in self.extras]
        self.rows = np.array([r for _, r in ones], dtype=np.int64)

    def block(self, values: np.ndarray) -> np.ndarray:
        """A chunk's columns as one 2-D array, a row per name in ``names``."""
        block = values[self.rows]
        if not self.extras:
            return block
        more = [
            values[rows[0]] - values[rows[1]] if how == "diff" else values[rows].sum(axis=0)
            for _, how, rows in self.extras
        ]
        return np.vstack([block, *more])


def _is_wanted(path: str, wanted: frozenset[str]) -> bool:
    return path in wanted or path.startswith("systemMetrics.disks.") or path in ("start", "end")


def read_ftdc(paths: Iterable[Path], since_ms: int | None = None, until_ms: int | None = None) -> FtdcData:
    """FTDC files or diagnostic.data directories as one frame: catalogue metrics, disks, time.

    Decodes only what the catalogue and the disk figures need; ``since``/``until`` (ms since the
    epoch) trim the window. Chunks without serverStatus (another FTDC producer) are refused.
    For a long window, :func:`iter_ftdc` gives the same rows a bounded piece at a time.
    """
    import pandas as pd

    data = FtdcData(None, [], [])
    frames = list(iter_ftdc(paths, since_ms, until_ms, into=data))
    data.frame = frames[0] if len(frames) == 1 else mark_continuity(_ordered(pd.concat(frames)))
    return data


def iter_ftdc(
    paths: Iterable[Path],
    since_ms: int | None = None,
    until_ms: int | None = None,
    *,
    rows: int | None = None,
    into: FtdcData | None = None,
) -> Iterator[Any]:
    """The FTDC sample frame in pieces of about ``rows`` rows (None: one piece), in file order.

    Memory stays bounded by one piece. Metadata documents and per-file reports are collected in
    ``into``. Each piece is ordered by time, and marked for continuity on its own: a caller that
    joins pieces re-marks across the seam (:func:`mark_continuity`).
    """
    wanted = _wanted_paths()
    data = into if into is not None else FtdcData(None, [], [])
    # Chunks are gathered as 2-D blocks and a frame is built once per piece: a DataFrame per
    # chunk cost a third of the decoding time, and a dict of columns per chunk another sixth.
    pieces: list[tuple[list[str], np.ndarray, np.ndarray]] = []
    lengths: list[int] = []
    seen_mongod = False
    produced = False
    for item in _read_selected(paths, data.reports, lambda p: _is_wanted(p, wanted)):
        if isinstance(item, Metadata):
            data.metadata.append({"start_ms": item.start_ms, "type": item.kind, "doc": item.doc})
            continue
        layout = item.selection.layout
        if not layout.mongod:
            continue  # not mongod's: another FTDC producer (genny, cedar) or a foreign collector
        seen_mongod = True
        if layout.start < 0:
            continue
        start = item.values[layout.start]
        keep = np.ones(start.size, dtype=bool)
        if since_ms is not None:
            keep &= start >= since_ms
        if until_ms is not None:
            keep &= start <= until_ms
        if not keep.any():
            continue
        block = layout.block(item.values)
        # the names list is one object per shape: _build joins a run of one shape at once
        pieces.append((layout.names, block[:, keep] if not keep.all() else block, start[keep] / 1000.0))
        lengths.append(int(keep.sum()))
        if rows is not None and sum(lengths) >= rows:
            yield mark_continuity(_ordered(_build(pieces)))
            produced = True
            pieces, lengths = [], []
    if not seen_mongod and any(r.samples for r in data.reports):
        raise FtdcError(
            f"{data.reports[0].path}: these FTDC files were not written by mongod (no serverStatus)",
            "ckptdiag reads mongod's diagnostic.data; files from other FTDC producers have other metrics",
        )
    if lengths:
        yield mark_continuity(_ordered(_build(pieces)))
    elif not produced:
        raise FtdcError(
            "no FTDC samples in the given window"
            if any(r.samples for r in data.reports)
            else "no FTDC metric chunks found",
            "check --since/--until, or give a diagnostic.data directory",
        )


def _build(pieces: list[tuple[list[str], np.ndarray, np.ndarray]]) -> Any:
    """One frame from chunk blocks, in time order (the last row read wins a repeated time); a
    column some chunks lack is NaN there (and float).

    Each chunk's block is copied once, straight to its place in one 2-D array that the DataFrame
    wraps without copying: joining runs, stacking a dict of columns and reordering the frame each
    copied everything again, and for files of many small chunks those copies cost as much as
    decoding did.
    """
    import pandas as pd

    times = np.concatenate([t for _, _, t in pieces])
    n = times.size
    dest = np.arange(n)
    if n > 1 and not bool(np.all(times[1:] > times[:-1])):
        # a clock stepped back, or interim after archives: each sample's row in time order, or -1
        sorted_at = np.argsort(times, kind="stable")
        ts = times[sorted_at]
        rows = sorted_at[np.append(ts[1:] != ts[:-1], True)]
        dest = np.full(n, -1)
        dest[rows] = np.arange(rows.size)
        times = times[rows]
    shapes = list({id(names): names for names, _, _ in pieces}.values())
    order = list(dict.fromkeys(name for names in shapes for name in names))
    everywhere = [name for name in order if all(name in names for names in shapes)]
    partial = [name for name in order if name not in set(everywhere)]
    whole = np.empty((len(everywhere), times.size), dtype=np.int64)
    holes = np.full((len(partial), times.size), np.nan)
    missing = np.empty(times.size, dtype=bool)
    # per shape: its rows feeding `whole` (None: all, in order) and (row in holes, its row) pairs
    plans: dict[int, tuple[list[int] | None, list[tuple[int, int]]]] = {}
    for names in shapes:
        at = {name: i for i, name in enumerate(names)}
        feed = None if names == everywhere else [at[name] for name in everywhere]
        plans[id(names)] = (feed, [(k, at[name]) for k, name in enumerate(partial) if name in at])
    start = 0
    for names, block, _ in pieces:
        width = block.shape[1]
        d = dest[start : start + width]
        start += width
        feed, extra = plans[id(names)]
        src = block if feed is None else block[feed]
        where: slice | np.ndarray
        cols: slice | np.ndarray
        if d[0] >= 0 and d[-1] - d[0] == width - 1 and (width < 3 or bool(np.all(d[1:] > d[:-1]))):
            where, cols = slice(int(d[0]), int(d[-1]) + 1), slice(None)  # in place: one slice copy
        else:
            cols = np.flatnonzero(d >= 0)
            where = d[cols]
        whole[:, where] = src[:, cols]
        for k, row in extra:
            holes[k, where] = block[row, cols]
        missing[where] = "cache.max_bytes" not in names
    pieces.clear()
    frames = [
        pd.DataFrame(big.T, columns=names, copy=False)
        for names, big in ((everywhere, whole), (partial, holes))
        if names
    ]
    frame = frames[0] if len(frames) == 1 else pd.concat(frames, axis=1)
    frame.insert(0, "t", times)
    frame["wt_missing"] = missing
    return frame


def _ordered(frame: Any) -> Any:
    """Rows in time order, one per time (the last one read wins: interim after archives)."""
    t = frame["t"].to_numpy()
    if t.size < 2 or bool(np.all(t[1:] > t[:-1])):
        return frame
    order = np.argsort(t, kind="stable")
    ts = t[order]
    last_of_each = np.append(ts[1:] != ts[:-1], True)
    return frame.iloc[order[last_of_each]].reset_index(drop=True)


def mark_continuity(frame: Any) -> Any:
    """Index by UTC time; ``seq``; ``segment`` (+1 at each restart: uptime went back);
    ``gap_before`` (a sample more than 3 periods after the one before)."""
    import pandas as pd

    frame = frame.reset_index(drop=True)
    frame.index = pd.to_datetime(frame["t"], unit="s", utc=True)
    frame.index.name = "time"
    frame["seq"] = np.arange(len(frame))
    uptime = frame.get("uptime_ms")
    restarts = (uptime.diff() < 0) if uptime is not None else pd.Series(False, index=frame.index)
    frame["segment"] = restarts.cumsum().astype(int)
    dt = frame["t"].diff()
    period = float(dt.median()) if len(frame) > 1 else 1.0
    frame["gap_before"] = dt > max(3 * period, period + 2)
    return frame


def _read_selected(
    paths: Iterable[Path], reports: list[FileReport], wanted: Callable[[str], bool]
) -> Iterator[Chunk | Metadata]:
    for top in paths:
        files = metric_files(top)
        for file in files:
            report = FileReport(str(file))
            reports.append(report)
            try:
                yield from read_file(file, report, wanted)
            except FtdcError as exc:
                if not top.is_dir():
                    raise
                report.error = exc.message  # in a directory one bad file does not stop the rest
