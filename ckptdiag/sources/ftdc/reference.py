"""A reference document's metric slots, read by mongod's extraction rules: the BSON walk, the
shape of a document (so later documents of that shape are read with a few gathers), and the
slots a reader keeps."""

from __future__ import annotations

import math
import struct
from collections.abc import Callable
from typing import Any

import numpy as np

from ckptdiag.sources.ftdc.kernel import compiled as _ftdc_kernel

INT64_MIN = -(2**63)
_I32 = struct.Struct("<i")
_U32 = struct.Struct("<I")
_I64 = struct.Struct("<q")
_U64 = struct.Struct("<Q")
_F64 = struct.Struct("<d")


MAX_DEPTH = 200  # mongod's own limit on BSON nesting (the maxBSONDepth parameter's default)


def _cstring_end(buf: bytes, pos: int, limit: int | None = None) -> int:
    end = buf.find(b"\x00", pos, limit)
    if end < 0:
        raise ValueError(f"unterminated name at byte {pos}")
    return end


def _length(buf: bytes, pos: int, end: int, least: int, what: str) -> int:
    """The int32 length prefix at ``pos``, checked before anything is read or skipped by it: at
    least ``least`` and inside the enclosing document (whose last byte is ``end``). A negative or
    oversized length in a damaged file would otherwise make the walk revisit or overrun bytes."""
    if pos + 4 > len(buf):
        raise ValueError(f"{what} at byte {pos} is cut off")
    (n,) = _I32.unpack_from(buf, pos)
    if n < least or pos + n > end:
        raise ValueError(f"{what} at byte {pos} claims {n} bytes, outside its document")
    return int(n)


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


def _read_double(buf: bytes, pos: int) -> int:
    return _trunc(_F64.unpack_from(buf, pos)[0])


def _read_int32(buf: bytes, pos: int) -> int:
    return int(_I32.unpack_from(buf, pos)[0])


def _read_int64(buf: bytes, pos: int) -> int:
    return int(_I64.unpack_from(buf, pos)[0])


def _read_bool(buf: bytes, pos: int) -> int:
    return 1 if buf[pos] else 0


def _read_decimal(buf: bytes, pos: int) -> int:
    return _decimal128_long(buf[pos : pos + 16])


# BSON types that are one metric slot: type -> (bytes, slot kind, reader)
_SCALARS: dict[int, tuple[int, int, Callable[[bytes, int], int]]] = {
    0x01: (8, K_DOUBLE, _read_double),
    0x10: (4, K_INT32, _read_int32),
    0x12: (8, K_INT64, _read_int64),
    0x09: (8, K_INT64, _read_int64),  # UTC datetime (ms)
    0x08: (1, K_BOOL, _read_bool),
    0x13: (16, K_DEC128, _read_decimal),
}


def walk_metrics(
    buf: bytes,
    start: int = 0,
    prefix: str = "",
    paths: list[str] | None = None,
    values: list[int] | None = None,
    layout: list[tuple[int, int]] | None = None,
    opaque: list[tuple[int, int]] | None = None,
    depth: int = 0,
) -> tuple[list[str], list[int]]:
    """Metric slots of a BSON document in mongod's extraction order: (paths, reference values).

    With ``layout``, also the (byte offset, kind) of every slot, and with ``opaque`` the (start,
    end) of every non-metric payload (string contents, ObjectIds, binary data), so that later
    documents of the same shape can be read without walking them (:class:`Schema`).

    Every length is checked against the enclosing document before it is used (ValueError): the
    walk moves forward at every element and never reads outside ``buf``, whatever the bytes say.
    """
    if depth > MAX_DEPTH:
        raise ValueError(f"documents nested deeper than {MAX_DEPTH} levels at byte {start}")
    skip = opaque if opaque is not None else []
    paths = [] if paths is None else paths
    values = [] if values is None else values
    lay = layout if layout is not None else []
    length = _length(buf, start, len(buf), 5, "document")  # a nested one was checked by its parent
    end = start + length - 1
    if buf[end] != 0:
        raise ValueError(f"document at byte {start} does not end with its terminator")
    pos = start + 4
    while pos < end:
        etype = buf[pos]
        name_end = _cstring_end(buf, pos + 1, end)
        path = prefix + buf[pos + 1 : name_end].decode("utf-8", "replace")
        pos = name_end + 1
        scalar = _SCALARS.get(etype)
        if scalar is not None:
            width, kind, read = scalar
            if pos + width > end:
                raise ValueError(f"value of {path!r} at byte {pos} is cut off")
            paths.append(path)
            values.append(read(buf, pos))
            lay.append((pos, kind))
            pos += width
        elif etype == 0x11:  # timestamp: increment in the low 32 bits, seconds in the high 32
            if pos + 8 > end:
                raise ValueError(f"value of {path!r} at byte {pos} is cut off")
            (raw,) = _U64.unpack_from(buf, pos)
            paths += [path, f"{path}.inc"]
            values += [raw >> 32, raw & 0xFFFFFFFF]
            lay += [(pos, K_TS_SECS), (pos, K_TS_INC)]
            pos += 8
        elif etype in (0x03, 0x04):  # document, array: recurse
            sub_len = _length(buf, pos, end, 5, f"document {path!r}")
            walk_metrics(buf, pos, f"{path}.", paths, values, lay, skip, depth + 1)
            pos += sub_len
        else:
            pos = _past(buf, pos, etype, skip, end)
    return paths, values


def _past(buf: bytes, pos: int, etype: int, opaque: list[tuple[int, int]], end: int) -> int:
    """The position after a non-metric element at ``pos`` (its document's last byte is ``end``);
    its payload's (start, end) is noted in ``opaque`` where the bytes may differ between documents
    of one shape. Every length is checked first: the result is always past ``pos``, never past ``end``."""
    if etype in (0x02, 0x0D, 0x0E):  # string, JS code, symbol: the length counts the terminating NUL
        n = _length(buf, pos, end - 4, 1, "string")
        opaque.append((pos + 4, pos + 4 + n))
        return pos + 4 + n
    if etype == 0x05:  # binary
        n = _length(buf, pos, end - 5, 0, "binary")
        opaque.append((pos + 5, pos + 5 + n))
        return pos + 5 + n
    if etype == 0x07:  # ObjectId
        if pos + 12 > end:
            raise ValueError(f"ObjectId at byte {pos} is cut off")
        opaque.append((pos, pos + 12))
        return pos + 12
    if etype in (0x06, 0x0A, 0xFF, 0x7F):  # undefined, null, min/max key
        return pos
    if etype == 0x0B:  # regex: two cstrings
        return _cstring_end(buf, _cstring_end(buf, pos, end) + 1, end) + 1
    if etype == 0x0C:  # DBPointer: a string, then an ObjectId
        return pos + 4 + _length(buf, pos, end - 16, 1, "DBPointer") + 12
    if etype == 0x0F:  # code with scope: int32 total, string, document (at least 14 bytes)
        return pos + _length(buf, pos, end, 14, "code with scope")
    raise ValueError(f"unknown BSON type 0x{etype:02x} at byte {pos - 1}")


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
    """What is derived once per chunk shape: the slots kept, their paths, the kernel's row lookup
    (how they become frame columns is the frames' to say: frames.layout_of)."""

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


RECENT_SHAPES = 64  # shapes a cache keeps: a directory's files share a few (a type that changed, a server upgraded)


def reference_schema(raw: bytes, cache: dict[str, Any] | None = None, *, compiled: bool = True) -> Schema:
    """The shape of a reference document: a cached one when it fits (the most recent first),
    else a new one, cached. One cache serves a whole directory: its files share their shapes,
    and walking a reference document field by field is the slowest part of a file's first
    chunk."""
    recent: list[Schema] = cache.setdefault("schemas", []) if cache is not None else []
    for i, schema in enumerate(recent):
        if schema.matches(raw, compiled=compiled):
            if i:
                recent.insert(0, recent.pop(i))
            return schema
    schema = Schema(raw)
    recent.insert(0, schema)
    del recent[RECENT_SHAPES:]
    return schema
