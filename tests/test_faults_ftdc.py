"""Damaged and hostile FTDC: every length bounded before it is used, every damage named, nothing
hangs or grows without bound (the fault pass's inputs, rebuilt here)."""

from __future__ import annotations

import datetime as dt
import os
import struct
import subprocess
import sys
import zlib
from pathlib import Path

import bson
import numpy as np
import pytest
from ftdc_writer import SimServer, write_ftdc

from ckptdiag.sources.ftdc import FtdcError, decode_chunk, read_ftdc, walk_metrics
from ckptdiag.sources.ftdc.deltas import MAX_CHUNK_INFLATED, MAX_CHUNK_VALUES
from ckptdiag.sources.ftdc.reference import MAX_DEPTH

T0 = dt.datetime(2026, 11, 1, tzinfo=dt.timezone.utc)


def ckptdiag(*args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "ckptdiag", *args], capture_output=True, text=True, timeout=timeout, check=False
    )


def chunk_data(ref: bytes, n_metrics: int, n_deltas: int, stream: bytes, *, size: int | None = None) -> bytes:
    """A type 1 ``data`` payload: uint32 inflated size + zlib(reference, counts, deltas)."""
    body = ref + struct.pack("<II", n_metrics, n_deltas) + stream
    return struct.pack("<I", len(body) if size is None else size) + zlib.compress(body)


def ftdc_file(path: Path, *datas: bytes, meta: object = None) -> Path:
    out = bytearray(bson.encode({"_id": T0, "type": 0, "doc": meta if meta is not None else {"buildInfo": {}}}))
    for i, data in enumerate(datas):
        out += bson.encode({"_id": T0 + dt.timedelta(seconds=300 * i), "type": 1, "data": bson.Binary(data)})
    path.write_bytes(bytes(out))
    return path


def good_file(path: Path, seconds: int = 200) -> Path:
    write_ftdc(path, SimServer(checkpoints=[(30, 32), (90, 93)]), [float(i) for i in range(seconds)])
    return path


def _patch_length(raw: bytes, marker: bytes, value: int) -> bytes:
    """``raw`` with the int32 right after ``marker`` (an element's type and name) set to ``value``."""
    at = raw.index(marker) + len(marker)
    return raw[:at] + struct.pack("<i", value) + raw[at + 4 :]


REF = bson.encode(
    {
        "start": T0,
        "serverStatus": {
            "s": "text",
            "b": bson.Binary(b"xyz"),
            "d": {"x": 1},
            "c": bson.Code("f()", {"a": 1}),
            "p": bson.DBRef("c", bson.ObjectId()),  # encoded as a document: DBPointer is built by hand
            "n": 5,
        },
    }
)


@pytest.mark.parametrize(
    ("marker", "value"),
    [
        (b"\x02s\x00", -100),  # string: used to revisit the same element forever, growing memory
        (b"\x02s\x00", 1 << 30),
        (b"\x02s\x00", 0),  # a string holds at least its terminator
        (b"\x05b\x00", -7),  # binary
        (b"\x03d\x00", -20),  # sub-document: used to loop on the CPU
        (b"\x03d\x00", 3),
        (b"\x0fc\x00", -30),  # code with scope
        (b"\x0fc\x00", 4),
    ],
)
def test_a_bad_element_length_is_damage_named_at_its_byte(marker: bytes, value: int) -> None:
    bad = _patch_length(REF, marker, value)
    with pytest.raises(ValueError, match=r"at byte \d+"):
        walk_metrics(bad)


def test_a_dbpointer_with_a_bad_length_is_damage() -> None:
    # {"p": DBPointer} by hand: type 0x0C, name, string, 12-byte ObjectId
    elem = b"\x0cp\x00" + struct.pack("<i", 2) + b"c\x00" + b"\x01" * 12
    doc = struct.pack("<i", 4 + len(elem) + 1) + elem + b"\x00"
    assert walk_metrics(doc) == ([], [])
    for value in (-1000, 0, 1 << 20):
        with pytest.raises(ValueError, match="DBPointer"):
            walk_metrics(_patch_length(doc, b"\x0cp\x00", value))


def test_nesting_deeper_than_mongods_limit_is_damage_not_recursion() -> None:
    doc: dict[str, object] = {"v": 1}
    for _ in range(MAX_DEPTH + 5):
        doc = {"d": doc}
    raw = bson.encode(doc)
    with pytest.raises(ValueError, match="nested deeper"):
        walk_metrics(raw)


def _peak_mb_of(code: str) -> tuple[float, subprocess.CompletedProcess[str]]:
    """Run ``code`` in a fresh interpreter -> (its peak RSS in MB, the process). VmHWM is the new
    program's own (ru_maxrss would carry the forked test process's pages across exec)."""
    probe = "\nprint([ln.split()[1] for ln in open('/proc/self/status') if ln.startswith('VmHWM')][0])"
    proc = subprocess.run([sys.executable, "-c", code + probe], capture_output=True, text=True, timeout=60, check=False)
    return int(proc.stdout.split()[-1]) / 1024, proc


def test_a_huge_delta_count_is_refused_before_anything_is_allocated(tmp_path: Path) -> None:
    ref = bson.encode({"start": T0, "serverStatus": {"a": 1, "b": 2}})
    for n_deltas in (2**31, 2**32 - 1, MAX_CHUNK_VALUES):  # 2 metrics x that: over the limit
        with pytest.raises(ValueError, match="over the limit"):
            decode_chunk(chunk_data(ref, 3, n_deltas, b"\x00\x7f"))
    # in a file: the chunk is damage, named, and the good chunks before it are kept
    good = good_file(tmp_path / "good")
    raw = good.read_bytes() + bson.encode(
        {"_id": T0, "type": 1, "data": bson.Binary(chunk_data(ref, 3, 2**31, b"\x00\x7f"))}
    )
    path = tmp_path / "metrics.2026-11-01T00-00-00Z-00000"
    path.write_bytes(raw)
    data = read_ftdc([path])
    assert len(data.frame) == 200
    assert data.reports[0].error is not None and "over the limit" in data.reports[0].error


def test_a_zlib_bomb_stops_at_the_size_its_header_gives(tmp_path: Path) -> None:
    ref = bson.encode({"start": T0, "serverStatus": {"a": 1}})
    body = ref + struct.pack("<II", 2, 1) + b"\x00" * (200 << 20)  # 200 MB of zeros: ~200 KB compressed
    payload = zlib.compress(body, 9)
    lying = struct.pack("<I", len(ref) + 8 + 2) + payload
    with pytest.raises(ValueError, match="inflated to more than"):
        decode_chunk(lying)
    honest = struct.pack("<I", len(body)) + payload
    with pytest.raises(ValueError, match="over the limit"):
        decode_chunk(honest)
    # memory: a file holding the bomb is read in a small multiple of its size, not 200 MB+
    bomb = ftdc_file(tmp_path / "metrics.bomb", lying)
    peak, proc = _peak_mb_of(
        f"from ckptdiag.sources.ftdc import read_file, FileReport; from pathlib import Path\n"
        f"r = FileReport('x'); list(read_file(Path({str(bomb)!r}), r)); print(r.error)"
    )
    assert "inflated to more than" in proc.stdout, proc.stderr
    assert peak < 120, f"peak RSS {peak:.0f} MB"


def test_a_short_delta_stream_is_named_damage() -> None:
    ref = bson.encode({"start": T0, "serverStatus": {"a": 1, "b": 2}})
    for compiled in (True, False):
        with pytest.raises(ValueError, match="holds 1 values, the chunk needs 30"):
            decode_chunk(chunk_data(ref, 3, 10, b"\x05"), compiled=compiled)


def test_a_reference_length_outside_the_chunk_is_damage() -> None:
    ref = bson.encode({"start": T0, "serverStatus": {"a": 1}})
    for length in (-5, 2, 1 << 20):
        body = struct.pack("<i", length) + ref[4:] + struct.pack("<II", 2, 1) + b"\x01\x01"
        with pytest.raises(ValueError, match="reference document"):
            decode_chunk(struct.pack("<I", len(body)) + zlib.compress(body))


def test_inflated_limit_is_far_above_real_chunks() -> None:
    assert MAX_CHUNK_INFLATED >= 64 << 20 and MAX_CHUNK_VALUES >= 300 * 50_000


@pytest.mark.parametrize("device", ["/dev/zero", "fifo"])
def test_inputs_that_are_not_regular_files_are_refused(tmp_path: Path, device: str) -> None:
    path = device
    if device == "fifo":
        path = str(tmp_path / "metrics.fifo")
        os.mkfifo(path)
    for command in (["report", path], ["compare", path, path]):
        proc = ckptdiag(*command, timeout=30)
        assert proc.returncode == 1, proc.stderr
        assert proc.stderr.startswith("ckptdiag: error: ") and proc.stderr.count("\n") == 1
        assert ("a FIFO" if device == "fifo" else "a character device") in proc.stderr and "hint:" in proc.stderr


def test_a_fifo_inside_a_directory_is_not_opened(tmp_path: Path) -> None:
    d = tmp_path / "diagnostic.data"
    d.mkdir()
    good_file(d / "metrics.2026-11-01T00-00-00Z-00000")
    os.mkfifo(d / "metrics.interim")
    proc = ckptdiag("report", str(d), "-f", "json", "--fail-on", "never", timeout=60)
    assert proc.returncode == 0, proc.stderr


def test_metadata_of_the_wrong_type_and_bad_times_are_notes_not_crashes(tmp_path: Path) -> None:
    good = good_file(tmp_path / "good").read_bytes()
    odd_meta = bson.encode({"_id": T0, "type": 0, "doc": "not a document"})
    path = tmp_path / "metrics.odd"
    path.write_bytes(odd_meta + good)
    data = read_ftdc([path])
    assert len(data.frame) == 200 and any("not a document" in n for n in data.reports[0].damage)
    # a chunk whose _id is far outside any real time: damage at its byte, what came before kept
    late = bson.encode({"_id": 10**17, "type": 1, "data": bson.Binary(b"\x00\x00\x00\x00")})
    path.write_bytes(good + late)
    data = read_ftdc([path])
    assert len(data.frame) == 200 and "no valid time" in (data.reports[0].error or "")


def test_no_chunk_found_says_it_was_damage_not_the_window(tmp_path: Path) -> None:
    ref = bson.encode({"start": T0, "serverStatus": {"s": "x"}})
    path = ftdc_file(tmp_path / "metrics.only-bad", chunk_data(_patch_length(ref, b"\x02s\x00", -9), 0, 0, b""))
    proc = ckptdiag("report", str(path))
    assert proc.returncode == 1
    assert "no readable FTDC metric chunk" in proc.stderr and "string at byte" in proc.stderr
    assert "--since" not in proc.stderr


def test_damage_in_a_directory_is_printed_and_the_rest_reported(tmp_path: Path) -> None:
    d = tmp_path / "diagnostic.data"
    d.mkdir()
    good_file(d / "metrics.2026-11-01T00-00-00Z-00000")
    (d / "metrics.2026-11-01T01-00-00Z-00000").write_bytes(b"garbage that is not BSON at all")
    damaged = bytearray(good_file(tmp_path / "x").read_bytes())
    damaged[len(damaged) // 2] ^= 0xFF
    (d / "metrics.interim").write_bytes(bytes(damaged))
    proc = ckptdiag("report", str(d), "-f", "json", "--fail-on", "never")
    assert proc.returncode == 0, proc.stderr
    notes = [line for line in proc.stderr.splitlines() if line.startswith("ckptdiag: note:")]
    assert any("metrics.2026-11-01T01-00-00Z-00000" in n for n in notes), proc.stderr
    assert any("metrics.interim" in n for n in notes), proc.stderr


def test_mutated_files_never_crash_or_hang(tmp_path: Path) -> None:
    """Flipped bytes all over a real-shaped file: a result or a named error, every time."""
    good = good_file(tmp_path / "good").read_bytes()
    rng = np.random.default_rng(17)
    path = tmp_path / "metrics.mutant"
    outcomes = {"read": 0, "error": 0}
    for _ in range(60):
        raw = bytearray(good)
        for at in rng.integers(0, len(raw), size=int(rng.integers(1, 6))):
            raw[int(at)] = int(rng.integers(0, 256))
        path.write_bytes(bytes(raw))
        try:
            data = read_ftdc([path])
        except FtdcError as exc:
            assert exc.message
            outcomes["error"] += 1
        else:
            assert data.frame is not None
            outcomes["read"] += 1
    assert outcomes["read"] + outcomes["error"] == 60


def test_samples_with_an_impossible_time_are_dropped_and_said(tmp_path: Path) -> None:
    from ftdc_writer import _chunk

    docs = SimServer(checkpoints=[(30, 32)]).documents([float(i) for i in range(120)])
    docs[50]["start"] = dt.datetime(9000, 1, 1, tzinfo=dt.timezone.utc)  # no pandas time reaches it
    path = ftdc_file(tmp_path / "metrics.late", _chunk(docs))
    data = read_ftdc([path])
    assert len(data.frame) == 119
    at = len(bson.encode({"_id": T0, "type": 0, "doc": {"buildInfo": {}}}))  # the chunk follows the metadata
    assert data.reports[0].damage == [f"1 sample of the chunk at byte {at} has a time outside 1970-2255 (dropped)"]
    proc = ckptdiag("report", str(path), "-f", "json", "--fail-on", "never")
    assert proc.returncode == 0 and "time outside 1970-2255" in proc.stderr, proc.stderr


def test_an_impossible_time_is_said_of_its_own_chunk_among_chunks_read_together(tmp_path: Path) -> None:
    """Consecutive chunks of one shape are read as one run; the damage still names the chunk."""
    from ftdc_writer import _chunk

    docs = SimServer(checkpoints=[(30, 32)]).documents([float(i) for i in range(300)])
    docs[150]["start"] = dt.datetime(9000, 1, 1, tzinfo=dt.timezone.utc)
    datas = [_chunk(docs[:100]), _chunk(docs[100:200]), _chunk(docs[200:])]
    path = ftdc_file(tmp_path / "metrics.three", *datas)
    data = read_ftdc([path])
    assert len(data.frame) == 299
    first = len(bson.encode({"_id": T0, "type": 0, "doc": {"buildInfo": {}}}))
    second = first + len(bson.encode({"_id": T0, "type": 1, "data": bson.Binary(datas[0])}))
    assert data.reports[0].damage == [f"1 sample of the chunk at byte {second} has a time outside 1970-2255 (dropped)"]


def test_a_checkpoint_counter_jump_in_ftdc_is_a_note_not_a_million_checkpoints(tmp_path: Path) -> None:
    from ftdc_writer import _chunk

    from ckptdiag.workflows.report import diagnose_window

    docs = SimServer(checkpoints=[(30, 32), (90, 93), (150, 152)]).documents([float(i) for i in range(200)])
    for doc in docs[60:]:
        doc["serverStatus"]["wiredTiger"]["transaction"]["transaction checkpoints"] += 1_000_000
    path = ftdc_file(tmp_path / "metrics.jump", _chunk(docs))
    report = diagnose_window((path,))  # linear in the samples: it used to loop a million times
    assert len(report.dx.episodes) <= 3
    assert any("checkpoint counter jumped by 1,000,000" in e for e in report.dx.evidence), report.dx.evidence
