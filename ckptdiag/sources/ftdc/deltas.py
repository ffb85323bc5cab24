"""The delta stream of a metric chunk: varints with zero runs, summed up to the samples' values."""

from __future__ import annotations

import struct
from collections.abc import Callable
from typing import Any

import numpy as np

from ckptdiag.guard import inflate
from ckptdiag.sources.ftdc.kernel import compiled as _ftdc_kernel
from ckptdiag.sources.ftdc.reference import _I32, _U32, Selection, reference_schema


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

    Damaged streams follow one rule on both paths (tested against each other): values are read
    until the chunk has its ``n_metrics * n_deltas``; whatever follows is ignored; a run never
    extends past that; a marker whose count is missing is one zero; a varint longer than 10 bytes
    ends the stream. A stream that ends before the chunk is full is a ValueError.
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
    tokens, cut = _tokens(stream)
    return _expand_runs(tokens, total, cut).reshape(n_metrics, n_deltas)


def _tokens(data: np.ndarray) -> tuple[np.ndarray, bool]:
    """The varints of a byte stream as uint64 tokens -> (tokens, cut): reading stops at the first
    varint longer than 10 bytes (``cut``, as the kernel's does); a trailing incomplete one is dropped."""
    ends = np.flatnonzero(data < 0x80)
    tail = data.size - (int(ends[-1]) + 1 if ends.size else 0)  # bytes of an incomplete last varint
    if ends.size == 0:
        return np.zeros(0, dtype=np.uint64), tail >= 10
    data = data[: ends[-1] + 1]
    if ends.size == data.size:
        return data.astype(np.uint64), tail >= 10  # every varint is one byte: the common case
    starts = np.empty_like(ends)
    starts[0] = 0
    starts[1:] = ends[:-1] + 1
    lengths = ends - starts + 1
    cut = tail >= 10
    too_long = np.flatnonzero(lengths > 10)
    if too_long.size:
        first = int(too_long[0])
        starts, ends, lengths, cut = starts[:first], ends[:first], lengths[:first], True
        if first == 0:
            return np.zeros(0, dtype=np.uint64), True
    longest = int(lengths.max())
    # byte k of every varint longer than k, one pass per byte position (most are 1 byte)
    tokens = (data[starts] & 0x7F).astype(np.uint64)
    multi = np.flatnonzero(lengths > 1)
    for k in range(1, longest):
        multi = multi[lengths[multi] > k]
        tokens[multi] |= (data[starts[multi] + k] & 0x7F).astype(np.uint64) << np.uint64(7 * k)
    return tokens, cut


def _expand_runs(tokens: np.ndarray, total: int, cut: bool = False) -> np.ndarray:
    """Tokens with their zero runs expanded: the first ``total`` values (the kernel's rule: a run
    never goes past ``total``, a marker whose count is missing is one zero; a stream that gives
    fewer values is a ValueError, naming a too-long varint where one ``cut`` it short)."""
    zero = tokens == 0
    # index of each zero within its run of consecutive zero tokens
    idx = np.arange(tokens.size)
    run_start = np.where(zero & ~np.concatenate(([False], zero[:-1])), idx, 0)
    np.maximum.accumulate(run_start, out=run_start)
    marker = zero & (((idx - run_start) % 2) == 0)
    is_count = np.concatenate(([False], marker[:-1]))
    repeat = np.where(is_count, 0, 1).astype(np.int64)
    m_idx = np.flatnonzero(marker)
    counts = np.minimum(tokens[np.minimum(m_idx + 1, tokens.size - 1)], np.uint64(total)).astype(np.int64)
    counts[m_idx + 1 >= tokens.size] = 0  # a marker with its count cut off: one zero
    repeat[m_idx] = 1 + counts
    # stop at the token that reaches total: later runs never cost memory, whatever they claim
    reach = np.cumsum(repeat)
    stop = int(np.searchsorted(reach, total))
    if stop < tokens.size:
        repeat = repeat[: stop + 1]
        repeat[stop] -= int(reach[stop]) - total
        tokens, marker = tokens[: stop + 1], marker[: stop + 1]
    values = np.where(marker, np.uint64(0), tokens)
    expanded = np.repeat(values, repeat)
    if expanded.size < total:
        if cut:
            raise ValueError("varint longer than 10 bytes")
        raise ValueError(f"delta stream holds {expanded.size} values, the chunk needs {total}")
    result: np.ndarray = expanded[:total]
    return result


# Limits on what a chunk may claim, checked before anything is allocated by it. mongod writes a
# chunk of 300 samples (diagnosticDataCollectionSamplesPerChunk) of a few thousand metrics, which
# inflates to well under 1 MiB; the limits are 50x that and more, and bound a damaged chunk's cost.
MAX_CHUNK_INFLATED = 64 << 20  # bytes a chunk may inflate to
MAX_CHUNK_VALUES = 1 << 24  # metrics x samples in one chunk (128 MiB as 64-bit values)


def _inflate(data: bytes) -> bytes:
    """A chunk's ``uint32 size`` + zlib stream, inflated to exactly that size: never more than the
    size says (a zlib bomb stops there) nor than :data:`MAX_CHUNK_INFLATED`."""
    if len(data) < 4:
        raise ValueError("chunk shorter than its length prefix")
    (expected,) = _U32.unpack_from(data, 0)
    if expected > MAX_CHUNK_INFLATED:
        raise ValueError(f"chunk says it inflates to {expected:,} bytes, over the limit of {MAX_CHUNK_INFLATED:,}")
    try:
        raw: bytes = inflate.decompressobj().decompress(memoryview(data)[4:], expected + 1)
    except inflate.ERRORS:
        raise ValueError("its zlib stream is damaged") from None  # one message, whichever library
    if len(raw) != expected:
        more = "more than " if len(raw) > expected else ""
        raise ValueError(f"inflated to {more}{len(raw):,} bytes, the header says {expected:,}")
    return raw


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
    raw = _inflate(data)
    (ref_len,) = _I32.unpack_from(raw, 0)
    if ref_len < 5 or ref_len + 8 > len(raw):
        raise ValueError(f"reference document of {ref_len} bytes in a chunk of {len(raw)}")
    n_metrics, n_deltas = struct.unpack_from("<II", raw, ref_len)  # compressor.cpp's order
    if n_metrics * n_deltas > MAX_CHUNK_VALUES:
        raise ValueError(
            f"chunk claims {n_metrics} metrics x {n_deltas} samples, over the limit of {MAX_CHUNK_VALUES:,} values"
        )
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
