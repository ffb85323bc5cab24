"""The FTDC decoder: exact on mongod's encoding rules, robust on every real file, usable as a source."""

from __future__ import annotations

import csv
import struct
import zlib
from collections.abc import Iterator
from pathlib import Path

import bson
import numpy as np
import pytest
from conftest import SHARED_DATA, shared_path
from ftdc_writer import _varint

from ckptdiag.model import catalogue
from ckptdiag.model.window import TimeWindow
from ckptdiag.sources.ftdc import (
    INT64_MIN,
    Chunk,
    FileReport,
    FtdcError,
    decode_chunk,
    decode_deltas,
    read_file,
    read_ftdc,
    reference_metrics,
    walk_metrics,
)

SYNTHETIC = ["S1_basic", "S2_objectid", "S3_decimal", "S4_bigchunk", "S5_padded"]


def _raw_chunks(path: Path) -> Iterator[bytes]:
    """The inflated payload of every metric chunk of a file, read without the decoder under test."""
    buf = path.read_bytes()
    pos = 0
    while pos < len(buf):
        (length,) = struct.unpack_from("<i", buf, pos)
        doc = bson.decode(buf[pos : pos + length])
        pos += length
        if doc.get("type") == 1:
            yield zlib.decompress(doc["data"][4:])


def _stream(tokens: list[int]) -> np.ndarray:
    return np.frombuffer(b"".join(_varint(t) for t in tokens), dtype=np.uint8)


from ckptdiag.sources import ftdc as ftdc_module  # noqa: E402

PATHS = [pytest.param(True, id="compiled"), pytest.param(False, id="numpy")]


@pytest.fixture(params=PATHS)
def compiled(request: pytest.FixtureRequest) -> bool:
    if request.param and ftdc_module._ftdc_kernel is None:
        pytest.skip("compiled kernel not built (no C compiler at install)")
    return bool(request.param)


def test_zero_runs_cross_metric_boundaries(compiled: bool) -> None:
    # 3 metrics x 4 deltas: [5,0,0,0] [0,0,0,0] [0,7,300,1]: one run of 3+4+1 = 8 zeros spans all three
    got = decode_deltas(_stream([5, 0, 7, 7, 300, 1]), 3, 4, compiled=compiled)
    assert got.tolist() == [[5, 0, 0, 0], [0, 0, 0, 0], [0, 7, 300, 1]]


def test_a_zero_count_means_a_single_zero_and_runs_alternate(compiled: bool) -> None:
    # tokens 0,0 = one zero; then 0,0 again = one zero; then 0,2 = three zeros; then 9
    got = decode_deltas(_stream([0, 0, 0, 0, 0, 2, 9]), 1, 6, compiled=compiled)
    assert got.tolist() == [[0, 0, 0, 0, 0, 9]]


def test_multi_byte_varints_and_wraparound(compiled: bool) -> None:
    big = 2**64 - 5  # -5 as an unsigned delta
    got = decode_deltas(_stream([big, 2**40, 1]), 1, 3, compiled=compiled)
    assert got.tolist() == [[big, 2**40, 1]]
    assert got.view(np.int64).tolist() == [[-5, 2**40, 1]]


def test_short_stream_is_an_error(compiled: bool) -> None:
    with pytest.raises(ValueError, match="holds 2 values"):
        decode_deltas(_stream([1, 2]), 1, 3, compiled=compiled)


def test_a_chunk_without_deltas(compiled: bool) -> None:
    assert decode_deltas(_stream([]), 5, 0, compiled=compiled, rows=np.array([1, 3])).shape == (2, 0)


def test_selected_rows_only(compiled: bool) -> None:
    stream = _stream([5, 0, 7, 7, 300, 1])
    got = decode_deltas(stream, 3, 4, compiled=compiled, rows=np.array([2, 0]))
    assert got.tolist() == [[0, 7, 300, 1], [5, 0, 0, 0]]


def test_a_marker_whose_count_is_cut_off_is_one_zero(compiled: bool) -> None:
    assert decode_deltas(_stream([4, 0]), 1, 2, compiled=compiled).tolist() == [[4, 0]]


def test_compiled_and_numpy_paths_agree_on_real_chunks() -> None:
    if ftdc_module._ftdc_kernel is None:
        pytest.skip("compiled kernel not built")
    f = shared_path("ftdc", "mongodb-7.0.0-rc6__b1ron__metrics.2024-04-16T11-34-42Z-00000")
    checked = 0
    for raw in _raw_chunks(f):
        (ref_len,) = struct.unpack_from("<i", raw, 0)
        n_metrics, n_deltas = struct.unpack_from("<II", raw, ref_len)
        stream = np.frombuffer(raw, dtype=np.uint8, offset=ref_len + 8)
        a = decode_deltas(stream, n_metrics, n_deltas, compiled=True)
        b = decode_deltas(stream, n_metrics, n_deltas, compiled=False)
        assert np.array_equal(a, b)
        some = np.arange(0, n_metrics, 7)[::-1]
        assert np.array_equal(decode_deltas(stream, n_metrics, n_deltas, compiled=True, rows=some), b[some])
        checked += 1
    assert checked == 65


def test_compiled_series_equal_the_numpy_running_sums_on_every_real_file() -> None:
    # the kernel's one-pass reference + deltas + running sums against decode + numpy cumsum,
    # for all slots and for a selection, on every real file (wrapping counters included)
    if ftdc_module._ftdc_kernel is None:
        pytest.skip("compiled kernel not built")
    checked = 0
    for f in sorted(shared_path("ftdc").rglob("*metrics.*")):
        try:
            chunks = list(_raw_chunks(f))
        except (bson.errors.BSONError, zlib.error, struct.error):
            continue  # damaged files have their own tests
        caches: tuple[dict[str, object], dict[str, object]] = ({}, {})  # later chunks reuse the shape
        for raw in chunks[:4]:
            data = struct.pack("<I", len(raw)) + zlib.compress(raw)
            for wanted in (None, lambda p: "wiredTiger" in p or p == "start"):
                kept_a, a = decode_chunk(data, wanted, caches[0], compiled=True)
                kept_b, b = decode_chunk(data, wanted, caches[1], compiled=False)
                assert kept_a.paths == kept_b.paths
                assert np.array_equal(a, b)
            checked += 1
    assert checked > 50


def test_compiled_reference_values_follow_mongod_rules_like_the_numpy_path() -> None:
    # a second document of the first one's shape: its values read by the kernel and by numpy
    from bson import Decimal128, Int64, Timestamp

    from ckptdiag.sources.ftdc import Schema

    def doc(x: float, flag: bool, n: int, ts: Timestamp) -> bytes:
        return bson.encode({"d": x, "b": flag, "i": n, "l": Int64(n * 2**33), "t": ts, "s": "abc", "e": -x})

    first = Schema(doc(1.5, False, 1, Timestamp(1, 2)))
    other = doc(float("nan"), True, -7, Timestamp(2**31 + 5, 9))
    assert first.matches(other, compiled=True) and first.matches(other, compiled=False)
    for compiled in (True, False):
        # string contents may change within a shape; a field name may not
        assert first.matches(other.replace(b"abc", b"abd"), compiled=compiled)
        assert not first.matches(other.replace(b"e\x00", b"f\x00"), compiled=compiled)
    kept = first.select(None)
    a = first.kept_values(other, kept, compiled=True).tolist()
    assert a == first.kept_values(other, kept, compiled=False).tolist()
    assert a == [0, 1, -7, -7 * 2**33, 2**31 + 5, 9, 0]
    huge = doc(1e300, False, 0, Timestamp(0, 0))
    assert first.kept_values(huge, kept, compiled=True).tolist()[0] == 2**63 - 1
    assert first.kept_values(huge, kept, compiled=True).tolist()[-1] == INT64_MIN
    dec = Schema(bson.encode({"x": Decimal128("12.9"), "y": 3}))
    assert not dec.select(None).plain  # Decimal128 stays on the Python path
    assert dec.kept_values(bson.encode({"x": Decimal128("-4.5"), "y": 4}), dec.select(None)).tolist() == [-4, 4]


def test_compiled_series_refuses_a_short_stream() -> None:
    if ftdc_module._ftdc_kernel is None:
        pytest.skip("compiled kernel not built")
    lut = np.array([0], dtype=np.int32).tobytes()
    first = np.array([10], dtype=np.int64).tobytes()
    stream = _stream([1, 2])
    with pytest.raises(ValueError, match="holds 2 values, the chunk needs 3"):
        ftdc_module._ftdc_kernel.series(stream.data, 1, 3, lut, 1, first)
    got = ftdc_module._ftdc_kernel.series(_stream([1, 2, 2**64 - 1]).data, 1, 3, lut, 1, first)
    assert np.frombuffer(got, dtype=np.int64).tolist() == [10, 11, 13, 12]


@pytest.mark.parametrize("entry", [2, 5, -2, 2**31 - 1])
def test_the_kernel_rejects_a_row_lookup_outside_its_rows(entry: int) -> None:
    if ftdc_module._ftdc_kernel is None:
        pytest.skip("compiled kernel not built")
    kernel = ftdc_module._ftdc_kernel
    stream = _stream([1, 2, 3, 4, 5, 6]).data
    bad = np.array([0, entry], dtype=np.int32).tobytes()
    first = np.array([10, 20], dtype=np.int64).tobytes()
    with pytest.raises(ValueError, match=f"row lookup entry 1 is {entry}"):
        kernel.decode(stream, 2, 3, bad, 2)
    with pytest.raises(ValueError, match=f"row lookup entry 1 is {entry}"):
        kernel.series(stream, 2, 3, bad, 2, first)


def test_the_kernel_never_returns_a_row_unwritten() -> None:
    if ftdc_module._ftdc_kernel is None:
        pytest.skip("compiled kernel not built")
    kernel = ftdc_module._ftdc_kernel
    stream = _stream([1, 2, 3, 4, 5, 6]).data
    only_first = np.array([0, -1], dtype=np.int32).tobytes()  # row 1: no metric maps to it
    for _ in range(50):  # fresh buffers each time: garbage would show in one of them
        deltas = np.frombuffer(kernel.decode(stream, 2, 3, only_first, 2), dtype=np.uint64).reshape(2, 3)
        assert deltas.tolist() == [[1, 2, 3], [0, 0, 0]]
        first = np.array([10, 20], dtype=np.int64).tobytes()
        series = np.frombuffer(kernel.series(stream, 2, 3, only_first, 2, first), dtype=np.int64).reshape(2, 4)
        assert series.tolist() == [[10, 11, 13, 16], [20, 20, 20, 20]]


def test_reference_walk_follows_mongod_extraction_rules() -> None:
    from bson import Decimal128, Int64, ObjectId, Timestamp

    doc = {
        "a": 1.9,
        "b": -1.9,
        "c": True,
        "d": Int64(2**40),
        "e": "text",
        "f": ObjectId(),
        "g": None,
        "h": Timestamp(1700000000, 7),
        "i": [{"x": 1}, {"x": 2}],
        "j": Decimal128("12.75"),
        "k": {"l": 3},
    }
    raw = bson.encode(doc)
    paths, values = walk_metrics(raw)
    assert paths == ["a", "b", "c", "d", "h", "h.inc", "i.0.x", "i.1.x", "j", "k.l"]
    assert values == [1, -1, 1, 2**40, 1700000000, 7, 1, 2, 12, 3]
    got_paths, got_values = reference_metrics(raw)
    assert got_paths == paths and got_values.tolist() == values


@pytest.mark.parametrize("name", SYNTHETIC)
def test_synthetic_files_decode_to_exact_values(name: str) -> None:
    path = shared_path("ftdc-synthetic", name)
    expected = np.load(SHARED_DATA / "ftdc-synthetic" / f"{name}.expected.npz")
    order = (SHARED_DATA / "ftdc-synthetic" / f"{name}.paths").read_text().split("\n")
    report = FileReport(name)
    chunks = [c for c in read_file(path, report) if isinstance(c, Chunk)]
    assert report.error is None
    total = sum(c.samples for c in chunks)
    seen: list[str] = []
    for c in chunks:
        seen += [p for p in c.paths if p not in seen]
    assert seen == [p for p in order if p]
    for key in expected.files:
        if key == "__ts__":
            continue
        got = np.full(total, INT64_MIN, dtype=np.int64)
        pos = 0
        for c in chunks:
            if key in c.paths:
                got[pos : pos + c.samples] = c.values[c.paths.index(key)]
            pos += c.samples
        assert np.array_equal(got, expected[key]), key
    starts = np.concatenate([c.values[c.paths.index("start")] for c in chunks])
    assert np.array_equal(starts, expected["__ts__"])
    if name == "S5_padded":
        assert report.notes and "zero padding" in report.notes[0]


def _real_files() -> list[Path]:
    root = SHARED_DATA / "ftdc"
    if not root.is_dir():
        return []
    return sorted(p for p in root.rglob("*") if p.is_file() and not p.name.endswith((".json", ".tsv")))


def test_every_real_file_decodes_or_fails_with_one_line_naming_file_and_offset() -> None:
    files = _real_files()
    if not files:
        pytest.skip("shared data not available")
    clean = 0
    for f in files:
        report = FileReport(str(f))
        try:
            for item in read_file(f, report):
                if isinstance(item, Chunk):
                    assert item.values.shape == (len(item.paths), item.samples)
        except FtdcError as exc:
            assert str(f) in exc.one_line() and "\n" not in exc.one_line()
            continue
        if report.error:
            assert "at byte" in report.error, (f, report.error)
        else:
            clean += 1
    assert clean >= len(files) - 5


def _payloads(path: Path) -> Iterator[bytes]:
    """Every metric chunk's payload (uint32 size + zlib stream) up to the file's first damage."""
    buf = path.read_bytes()
    pos = 0
    while pos + 4 <= len(buf):
        (length,) = struct.unpack_from("<i", buf, pos)
        if length < 5 or pos + length > len(buf):
            return
        try:
            doc = bson.decode(buf[pos : pos + length])
        except bson.errors.BSONError:
            return
        pos += length
        if doc.get("type") == 1 and isinstance(doc.get("data"), bytes):
            yield bytes(doc["data"])


def test_isal_inflates_every_real_chunk_to_the_same_bytes_as_zlib() -> None:
    from ckptdiag.sources.ftdc import deltas

    isal_zlib = pytest.importorskip("isal.isal_zlib")
    files = _real_files()
    if not files:
        pytest.skip("shared data not available")
    from ckptdiag.guard import inflate

    assert inflate.zlib_like is isal_zlib  # installed, so chunks are inflated by it
    chunks = 0
    for f in files:
        for data in _payloads(f):
            (size,) = struct.unpack_from("<I", data, 0)
            expected = zlib.decompressobj().decompress(data[4:], size + 1)
            assert deltas._inflate(data) == expected, f
            chunks += 1
    assert chunks > 2000  # every real chunk, not a sample of them


def test_a_damaged_zlib_stream_is_one_message_whichever_library_inflates(monkeypatch: pytest.MonkeyPatch) -> None:
    from ckptdiag.guard import inflate
    from ckptdiag.sources.ftdc import deltas

    good = zlib.compress(bytes(range(256)) * 64)
    data = struct.pack("<I", 256 * 64) + good[:20] + bytes(b ^ 0x5A for b in good[20:])
    messages = set()
    for module in {inflate.zlib_like, zlib}:
        monkeypatch.setattr(inflate, "zlib_like", module)
        with pytest.raises(ValueError) as exc:
            deltas._inflate(data)
        messages.add(str(exc.value))
    assert messages == {"its zlib stream is damaged"}


def test_fast_and_exact_reference_walks_agree_on_real_chunks() -> None:
    f = shared_path("ftdc", "mongodb-7.0.0-rc6__b1ron__metrics.2024-04-16T11-34-42Z-00000")
    checked = 0
    cache: dict = {}  # the second and later chunks go through the shape cache
    for raw in _raw_chunks(f):
        if checked == 5:
            break
        (ref_len,) = struct.unpack_from("<i", raw, 0)
        exact_paths, exact_values = walk_metrics(raw[:ref_len])
        got_paths, got_values = reference_metrics(raw[:ref_len], cache)
        assert got_paths == exact_paths and got_values.tolist() == exact_values
        checked += 1
    assert checked == 5 and len(cache["schemas"]) == 1  # one shape: every chunk after the first reused it


def _csv_rows(name: str) -> list[dict[str, str]]:
    with shared_path("timeseries", name).open() as fh:
        return list(csv.DictReader(fh))


@pytest.mark.parametrize(
    ("ftdc", "extract"),
    [
        (
            "mongodb-4.2.12__b1ron__metrics.2021-03-15T02-21-47Z-00000",
            "mongodb-4.2.12__b1ron_ftdc__metrics.2021-03-15T02-21-47Z.csv",
        ),
        (
            "mongodb-7.0.0-rc6__b1ron__metrics.2024-04-16T11-34-42Z-00000",
            "mongodb-7.0.0-rc6__b1ron_ftdc__metrics.2024-04-16T11-34-42Z.csv",
        ),
    ],
)
def test_frame_matches_an_independent_per_second_extract(ftdc: str, extract: str) -> None:
    frame = read_ftdc([shared_path("ftdc", ftdc)]).frame
    rows = _csv_rows(extract)
    assert len(frame) == len(rows)
    pairs = {
        "ckpt.recent_ms": "ckpt_most_recent_ms",
        "ckpt.total_ms": "ckpt_total_ms",
        "cache.dirty_bytes": "cache_dirty_bytes",
        "cache.max_bytes": "cache_max_bytes",
        "ckpt.bytes_written": "bm_bytes_written_ckpt",
        "block.bytes_written": "bm_bytes_written",
        "journal.bytes_written": "log_bytes_written",
        "uptime_ms": "uptime_ms",
        "cache.app_evicted_pages": "cache_app_evict_pages",
    }
    for ours, theirs in pairs.items():
        assert frame[ours].astype(np.int64).tolist() == [int(r[theirs]) for r in rows], ours
    assert (frame["t"] * 1000).round().astype(np.int64).tolist() == [int(r["start_ms"]) for r in rows]
    disk = next(c for c in rows[0] if c.startswith("disk_") and c.endswith("_writes"))
    dev = disk.split("_")[1]
    assert frame[f"disk.{dev}.wr_ios"].astype(np.int64).tolist() == [int(r[disk]) for r in rows]


def test_checkpoint_rich_42_file_has_its_13_checkpoints() -> None:
    frame = read_ftdc([shared_path("ftdc", "mongodb-4.2.12__b1ron__metrics.2021-03-15T02-21-47Z-00000")]).frame
    assert len(frame) == 849
    counts = frame["ckpt.count"].astype(np.int64)
    assert counts.iloc[0] == 1 and counts.iloc[-1] - counts.iloc[0] == 13  # start-up's, then 13 in the window
    assert frame["ckpt.recent_ms"].max() == 2529 and frame["ckpt.max_ms"].max() == 2529
    assert round(frame["cache.dirty_bytes"].max() / 1e6) == 805
    assert frame["ckpt.running"].max() == 1


def test_first_sample_equals_the_published_reference_document() -> None:
    from bson import json_util

    doc = json_util.loads(shared_path("server-status", "serverStatus_4.2.12__b1ron+ftdc.json").read_text())
    frame = read_ftdc([shared_path("ftdc", "mongodb-4.2.12__b1ron__metrics.2021-03-15T02-21-47Z-00000")]).frame
    expected = catalogue.extract(doc)
    row = frame.loc[(frame["t"] * 1000).round() == int(doc["start"].timestamp() * 1000)]
    assert len(row) == 1
    for name, value in expected.items():
        assert int(row[name].iloc[0]) == int(value), name


def test_since_and_until_trim_the_window() -> None:
    f = shared_path("ftdc", "mongodb-4.2.12__b1ron__metrics.2021-03-15T02-21-47Z-00000")
    full = read_ftdc([f]).frame
    t0 = int(full["t"].iloc[100] * 1000)
    t1 = int(full["t"].iloc[199] * 1000)
    part = read_ftdc([f], TimeWindow(t0, t1)).frame
    assert len(part) == 100


def test_another_ftdc_producer_is_refused() -> None:
    f = shared_path("ftdc", "not-mongod__mongodb-ftdc-lib__perf_metrics_small.ftdc")
    with pytest.raises(FtdcError, match="not written by mongod"):
        read_ftdc([f])


def test_not_an_ftdc_file(tmp_path: Path) -> None:
    bad = tmp_path / "notes.txt"
    bad.write_text("this is not BSON at all, just text that goes on for a while\n" * 4)
    with pytest.raises(FtdcError, match="not an FTDC file"):
        list(read_file(bad))
    json_doc = tmp_path / "x.bson"
    json_doc.write_bytes(bson.encode({"hello": "world"}))
    with pytest.raises(FtdcError, match="not a MongoDB FTDC file"):
        list(read_file(json_doc))


def _chunk_doc(raw_payload: bytes) -> bytes:
    return bson.encode({"_id": bson.datetime_ms.DatetimeMS(0), "type": 1, "data": raw_payload})


def test_corrupt_zlib_and_metric_count_mismatch_name_the_offset(tmp_path: Path) -> None:
    meta = bson.encode({"_id": bson.datetime_ms.DatetimeMS(0), "type": 0, "doc": {"buildInfo": {}}})
    corrupt = tmp_path / "corrupt"
    corrupt.write_bytes(meta + _chunk_doc(struct.pack("<I", 100) + b"\x78\x9cnot zlib"))
    report = FileReport("x")
    list(read_file(corrupt, report))
    assert report.error is not None and report.error.startswith(f"bad metric chunk at byte {len(meta)}")

    ref = bson.encode({"start": bson.datetime_ms.DatetimeMS(0), "a": 1})
    body = ref + struct.pack("<II", 5, 0)  # says 5 metrics; the reference document has 2
    mismatch = tmp_path / "mismatch"
    mismatch.write_bytes(meta + _chunk_doc(struct.pack("<I", len(body)) + zlib.compress(body)))
    report = FileReport("y")
    list(read_file(mismatch, report))
    assert report.error is not None and "says 5 metrics" in report.error and f"byte {len(meta)}" in report.error


def test_truncated_file_keeps_what_came_before(tmp_path: Path) -> None:
    src = shared_path("ftdc-synthetic", "S1_basic").read_bytes()
    cut = tmp_path / "cut"
    cut.write_bytes(src[:2500])  # inside the third document
    report = FileReport("cut")
    chunks = [c for c in read_file(cut, report) if isinstance(c, Chunk)]
    assert len(chunks) == 2 and report.error and "at byte 2205" in report.error


def test_directory_without_metrics_and_missing_path(tmp_path: Path) -> None:
    with pytest.raises(FtdcError, match="has no metrics"):
        read_ftdc([tmp_path])
    with pytest.raises(FtdcError, match="does not exist"):
        read_ftdc([tmp_path / "nope"])


def test_directory_reads_archives_then_interim_and_survives_a_bad_file(tmp_path: Path) -> None:
    d = tmp_path / "diagnostic.data"
    d.mkdir()
    src = shared_path("ftdc", "mongodb-7.0.0-rc6__b1ron__metrics.2024-04-16T11-34-42Z-00000")
    (d / "metrics.2024-04-16T11-34-42Z-00000").write_bytes(src.read_bytes())
    (d / "metrics.interim").write_bytes(b"\x00" * 10)
    (d / "metrics.2024-04-17T00-00-00Z-00000").write_bytes(b"garbage that is not bson")
    data = read_ftdc([d])
    assert len(data.frame) == 19007
    assert [Path(r.path).name for r in data.reports][-1] == "metrics.interim"
    assert sum(r.error is not None for r in data.reports) == 1


def test_frame_building_orders_time_drops_repeats_and_fills_missing_columns() -> None:
    # three chunks, two shapes; the clock steps back inside the third; 2.0 is read twice (the
    # later one wins); "b" exists only in the second shape: NaN elsewhere and float
    from ckptdiag.sources.ftdc import block_of, frame_of

    one, two = ["a", "cache.max_bytes"], ["b", "a"]
    pieces = [
        (one, np.array([[1, 2], [9, 9]]), np.array([1.0, 2.0])),
        (two, np.array([[70, 80], [3, 4]]), np.array([3.0, 4.0])),
        (one, np.array([[5, 6, 7], [9, 9, 9]]), np.array([5.0, 2.0, 0.5])),
    ]
    frame = frame_of(list(pieces))
    assert frame["t"].tolist() == [0.5, 1.0, 2.0, 3.0, 4.0, 5.0]
    assert frame["a"].tolist() == [7, 1, 6, 3, 4, 5]
    assert frame["a"].dtype == np.int64
    assert frame["b"].fillna(-1).tolist() == [-1, -1, -1, 70, 80, -1]
    assert frame["wt_missing"].tolist() == [False, False, False, True, True, False]
    # the same samples as float64 arrays (a long window's pieces)
    block = block_of(list(pieces))
    assert block.names == list(frame.columns)
    for name in frame.columns:
        np.testing.assert_array_equal(block.values(name), frame[name].to_numpy(dtype="float64", na_value=np.nan))


def test_without_the_compiled_kernel_the_frame_is_the_same(monkeypatch: pytest.MonkeyPatch) -> None:
    # an install without a C compiler: every numpy fallback at once, on real files
    if ftdc_module._ftdc_kernel is None:
        pytest.skip("compiled kernel not built: only the numpy path exists")
    files = [
        shared_path("ftdc", "mongodb-4.2.12__b1ron__metrics.2021-03-15T02-21-47Z-00000"),
        shared_path("ftdc", "mongodb-7.0.0-rc6__b1ron__metrics.2024-04-16T11-34-42Z-00000"),
    ]
    for f in files:
        compiled = read_ftdc([f]).frame
        monkeypatch.setattr(ftdc_module, "_ftdc_kernel", None)
        plain = read_ftdc([f]).frame
        monkeypatch.undo()
        assert list(plain.columns) == list(compiled.columns)
        assert plain.equals(compiled)


def test_the_hosts_cpu_time_is_read_from_system_metrics() -> None:
    # FTDC keeps the host's CPU time (systemMetrics.cpu.*_ms, procparser); a stall is read beside it
    from ckptdiag.analysis.series import derive
    from ckptdiag.model.hostcpu import FIELDS, PREFIX
    from ckptdiag.sources.ftdc.frames import read_ftdc

    path = shared_path(
        "ftdc",
        "public-datadirs",
        "ISEP-1190402+SEGPRD-2025",
        "a0ce77479b__mongo-data__diagnostic.data__metrics.2025-06-04T12-54-20Z-00000",
    )
    frame = read_ftdc([path]).frame
    assert {PREFIX + f for f in FIELDS} <= set(frame.columns)
    busy = derive(frame)["host_cpu_pct"].dropna()
    assert len(busy) > 10 and busy.between(0, 100).all() and busy.median() > 0
