"""The recording format: written line by line, readable while growing, never overwritten."""

from __future__ import annotations

import gzip
import io
import json
import re
from pathlib import Path

import pytest
from fakes import status_doc
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from readings import python_path, same_reading

from ckptdiag import recording
from ckptdiag.errors import InputError, OutputError
from ckptdiag.recording import FORMAT, RecordingWriter, build_sample, header, is_recording, read_recording


def _header() -> dict:
    return header(
        source={"kind": "serverStatus", "uri": "mongodb://h"},
        server={"version": "7.0.21"},
        options={"interval_s": 1.0},
        disks={"devices": []},
        created=1_795_000_000.0,
    )


def _write(path: Path, n: int, close: bool = True, flush_every_s: float = 0.0) -> RecordingWriter:
    w = RecordingWriter(path, flush_every_s=flush_every_s)
    w.write(_header(), 0.0)
    for i in range(n):
        w.write(build_sample(status_doc(i), seq=i, wall=1_795_000_000.0 + i, mono=10.0 + i, rtt_ms=1.0), float(i))
    if close:
        w.close()
    return w


@pytest.mark.parametrize("name", ["r.jsonl", "r.jsonl.gz"])
def test_round_trip(tmp_path: Path, name: str) -> None:
    _write(tmp_path / name, 5)
    rec = read_recording(tmp_path / name)
    assert rec.header["format"] == FORMAT and rec.header["format_version"] == 1
    assert rec.header["tool"]["name"] == "ckptdiag" and rec.header["created"] == "2026-11-18T11:06:40.000Z"
    assert len(rec.samples) == 5 and not rec.truncated
    assert rec.samples[3]["m"]["ops.insert"] == 300  # raw cumulative counters, not rates
    assert is_recording(tmp_path / name)
    if name.endswith(".gz"):
        assert gzip.decompress((tmp_path / name).read_bytes()).startswith(b'{"type":"header"')


def test_gzip_recording_is_readable_while_still_being_written(tmp_path: Path) -> None:
    path = tmp_path / "live.jsonl.gz"
    writer = _write(path, 10, close=False, flush_every_s=0.0)  # flushed on every line, not closed
    rec = read_recording(path)
    assert len(rec.samples) == 10 and rec.truncated  # no gzip trailer yet: reported, nothing lost
    writer.close()
    assert not read_recording(path).truncated


def test_a_crash_loses_at_most_the_unflushed_seconds(tmp_path: Path) -> None:
    path = tmp_path / "crash.jsonl.gz"
    w = RecordingWriter(path, flush_every_s=2.0)
    w.write(_header(), 0.0)
    for i in range(10):  # one line per second, flushed every 2 s
        w.write(build_sample(status_doc(i), seq=i, wall=float(i), mono=float(i), rtt_ms=1.0), now=float(i))
    # the process dies here: no close(), no final flush; another process reads the file
    got = len(read_recording(path).samples)
    w.close()
    assert 8 <= got <= 10


def test_torn_last_line_is_dropped_and_reported(tmp_path: Path) -> None:
    path = tmp_path / "torn.jsonl"
    _write(path, 3)
    with open(path, "ab") as fh:
        fh.write(b'{"type":"sample","seq":3,"t":1.0,"m":{"ops.ins')
    rec = read_recording(path)
    assert len(rec.samples) == 3 and rec.truncated


def test_a_damaged_line_in_the_middle_is_skipped(tmp_path: Path) -> None:
    path = tmp_path / "damaged.jsonl"
    _write(path, 4)
    lines = path.read_bytes().split(b"\n")
    lines[2] = b"\x00\x00garbage"
    path.write_bytes(b"\n".join(lines))
    rec = read_recording(path)
    assert len(rec.samples) == 3 and rec.damaged_lines == 1


def test_damaged_lines_are_named_in_the_reports_evidence(tmp_path: Path) -> None:
    from ckptdiag.workflows.report import diagnose_window

    path = tmp_path / "damaged.jsonl"
    _write(path, 6)
    lines = path.read_bytes().split(b"\n")
    lines[2] = b"\x00\x00garbage"
    lines[4] = b'{"type": "sample", "t": '
    path.write_bytes(b"\n".join(lines))
    report = diagnose_window((path,))
    note = f"{path}: 2 damaged lines skipped (not JSON: line 3, 5)"
    assert report.source.damaged == (note,) and note in report.dx.evidence


def test_never_overwrites_an_existing_file(tmp_path: Path) -> None:
    path = tmp_path / "keep.jsonl"
    _write(path, 2)
    before = path.read_bytes()
    with pytest.raises(OutputError, match="already exists"):
        RecordingWriter(path)
    assert path.read_bytes() == before


def test_unwritable_output_fails_at_once(tmp_path: Path) -> None:
    with pytest.raises(OutputError, match="cannot write"):
        RecordingWriter(tmp_path / "no-such-dir" / "r.jsonl")


def test_discard_removes_a_file_that_never_got_a_header(tmp_path: Path) -> None:
    w = RecordingWriter(tmp_path / "x.jsonl")
    w.discard()
    assert not (tmp_path / "x.jsonl").exists()


def test_stream_gets_every_line_flushed_and_survives_a_closed_pipe(tmp_path: Path) -> None:
    out = io.StringIO()
    w = RecordingWriter(None, out)
    w.write(_header(), 0.0)
    w.write(build_sample(status_doc(1), seq=0, wall=1.0, mono=1.0, rtt_ms=1.0), 0.0)
    lines = out.getvalue().splitlines()
    assert [json.loads(x)["type"] for x in lines] == ["header", "sample"]

    class Closed(io.StringIO):
        def write(self, s: str) -> int:
            raise BrokenPipeError

    w2 = RecordingWriter(tmp_path / "f.jsonl", Closed())
    w2.write(_header(), 0.0)
    w2.write(build_sample(status_doc(1), seq=0, wall=1.0, mono=1.0, rtt_ms=1.0), 0.0)
    w2.close()
    assert len(read_recording(tmp_path / "f.jsonl").samples) == 1


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"", "is empty"),
        (b'{"hello": 1}\n', "not a ckptdiag recording"),
        (b"\x00\x01binary", "not a ckptdiag recording"),
        (b'{"type":"header","format":"ckptdiag-recording","format_version":99}\n', "newer than this ckptdiag"),
    ],
)
def test_bad_files_give_one_line_errors(tmp_path: Path, content: bytes, message: str) -> None:
    path = tmp_path / "bad"
    path.write_bytes(content)
    with pytest.raises(InputError, match=message):
        read_recording(path)


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(InputError, match=r"nope\.jsonl does not exist"):
        read_recording(tmp_path / "nope.jsonl")


def test_frame_has_metrics_disks_and_histograms(tmp_path: Path) -> None:
    from ckptdiag.model.disk import DiskCounters

    doc = status_doc(3)
    doc["opLatencies"] = {
        "writes": {"latency": 900, "ops": 9, "histogram": [{"micros": 128, "count": 7}, {"micros": 1024, "count": 2}]}
    }
    s = build_sample(
        doc,
        seq=0,
        wall=1_795_000_000.5,
        mono=1.0,
        rtt_ms=1.0,
        disks={"vda": (DiskCounters(wr_ios=5, wr_sectors=80), 17)},
    )
    from ckptdiag.recording import samples_frame

    frame = samples_frame([s])
    assert str(frame.index[0]) == "2026-11-18 11:06:40.500000+00:00"
    assert frame["lat.writes.ops"].iloc[0] == 9
    assert frame["hist.writes.1024"].iloc[0] == 2
    assert frame["disk.vda.wr_sectors"].iloc[0] == 80
    assert frame["ops.insert"].iloc[0] == 300


def _frames_agree(path: Path) -> None:
    """Columns read (the compiled scanner when built) == a dict per sample, frame for frame."""
    slow, fast = read_recording(path), read_recording(path, columns=True)
    assert fast.columns is not None and fast.samples == []
    same_reading(fast, slow)


def _without_the_scanner_in_batches_too(path: Path) -> None:
    """Without the compiled scanner, columns are made a block of lines at a time: blocks of ~7
    lines (~2,500 bytes: shapes that change inside and across blocks) give the frame a dict per
    sample gives."""
    with pytest.MonkeyPatch.context() as mp:
        batched = python_path(path, mp, 2500, 1 << 40)
    same_reading(batched, read_recording(path))


def test_columns_read_every_shape_of_line_as_the_parser_does(tmp_path: Path) -> None:
    path = tmp_path / "mixed.jsonl"
    lines = [json.dumps(_header())]
    for i in range(40):
        doc = status_doc(i)
        if i % 7 == 3:
            del doc["wiredTiger"]  # wt_missing: true, its metrics null
        sample = build_sample(doc, seq=i, wall=1_795_000_000.25 + i, mono=0.5 + i, rtt_ms=1.25, skipped=i % 5 == 0)
        sample["disk"] = {"vda": [i, 0, 2 * i, 3, 4 * i, 5, 6 * i, 7, 0, 9 * i, 10 * i]}
        # histogram bounds name columns: same number of buckets, different bounds
        sample["hist"] = {"writes": [[0, i], [2 if i < 20 else 4, 2 * i], [1024, -3]]}
        if i >= 30:
            sample["m"]["late.metric"] = 1.5e-3 * i  # a new metric mid-file: a new shape
        lines.append(json.dumps(sample))
        if i in (5, 25):
            lines.append(json.dumps({"type": "event", "kind": "gap", "t": 1_795_000_000.0 + i, "next_seq": i + 1}))
            lines.append('{"type":"event","kind":"note","text":"12 \\" quoted 3.5 -7"}')
        if i == 12:
            lines += ["", "   ", '{"type": "sample", "seq": --1}', "not json at all 42", "[1, 2]"]
            lines.append(json.dumps({"type": "other", "x": 1}))
    path.write_text("\n".join(lines) + '\n{"type":"sample","seq":99,"t":17')  # torn last line
    _frames_agree(path)
    _without_the_scanner_in_batches_too(path)
    fast = read_recording(path, columns=True)
    assert fast.damaged_lines == 2 and fast.truncated and fast.sample_count == 40
    assert [e["kind"] for e in fast.events] == ["gap", "note", "gap", "note"]
    frame = fast.to_frame()
    assert frame["hist.writes.4"].notna().sum() == 20 and frame["hist.writes.2"].notna().sum() == 20
    assert frame["late.metric"].notna().sum() == 10
    assert frame["wt_missing"].sum() == 6


def test_columns_of_concatenated_gzip_members_and_an_empty_recording(tmp_path: Path) -> None:
    path = tmp_path / "two.jsonl.gz"
    _write(path, 6)
    first = path.read_bytes()
    lines = gzip.decompress(first).split(b"\n")[1:]
    path.write_bytes(first + gzip.compress(b"\n".join(lines)))  # a second member: more samples
    _frames_agree(path)
    assert read_recording(path, columns=True).sample_count == 12
    empty = tmp_path / "empty.jsonl"
    empty.write_text(json.dumps(_header()) + "\n")
    _frames_agree(empty)
    assert read_recording(empty, columns=True).to_frame().empty


def test_the_scanner_reads_every_number_a_json_parser_reads() -> None:
    # random lines: nested objects and lists, integers and floats in every JSON spelling, strings
    # full of digits, escapes and quotes; the scanner's numbers (document order) are the parser's
    import random

    import numpy as np

    from ckptdiag import recording

    if recording._jsonl is None:
        pytest.skip("compiled scanner not built")
    rng = random.Random(7)

    def value(depth: int) -> object:
        kind = rng.randrange(8 if depth < 3 else 5)
        if kind == 0:
            return rng.randint(-(10**18), 10**18)
        if kind == 1:
            return rng.choice([0.0, -0.0, 1e-7, 123.456, -2.5e300, rng.uniform(-1e6, 1e6)])
        if kind == 2:
            return "".join(rng.choice('ab 1-2.3e\\"\n\t{}[],:') for _ in range(rng.randrange(12)))
        if kind == 3:
            return rng.choice([True, False, None])
        if kind == 4:
            return rng.randint(0, 99)
        if kind == 5:
            return [value(depth + 1) for _ in range(rng.randrange(4))]
        return {f"k{i}\\{rng.randrange(9)}": value(depth + 1) for i in range(rng.randrange(4))}

    lines = [json.dumps({"type": "sample", "v": value(0)}) for _ in range(400)]
    lines.append('{"x": 1E+2, "y": -0.5e-3, "z": [1e2]}')  # spellings json.dumps does not write
    text = ("\n".join(lines) + "\n").encode()
    values_raw, lines_raw = recording._jsonl.scan(text, len(text))
    values = np.frombuffer(values_raw, dtype=np.float64)
    table = np.frombuffer(lines_raw, dtype=np.int64).reshape(-1, 5)
    assert len(table) == len(lines)
    for (start, stop, _hash, count, first), line in zip(table.tolist(), lines, strict=True):
        expected = [
            float(v) for _, v in recording._leaves(json.loads(line)) if v is not None and not isinstance(v, bool)
        ]
        assert text[start:stop].decode() == line
        assert count == len(expected)
        assert values[first : first + count].tolist() == expected


def test_the_scanners_fast_numbers_are_the_parsers_doubles_bit_for_bit() -> None:
    # Clinger's fast path (up to 15 significant digits, a power of ten up to 22) must give the
    # correctly rounded double, exactly as float() does; past its edges the general parser does
    import random
    import struct

    import numpy as np

    from ckptdiag import recording

    if recording._jsonl is None:
        pytest.skip("compiled scanner not built")
    rng = random.Random(11)
    tokens = ["0", "-0", "0.0", "-0.0", "1e22", "1e23", "1e-22", "1e-23", "123456789012345", "1234567890123456"]
    tokens += ["0.000000000000001", "1.5e300", "9007199254740993", "-17.25E+3", "4.35", "0.1", "2.675"]
    for _ in range(20000):
        digits = str(rng.randrange(1, 10 ** rng.randrange(1, 18)))
        point = rng.randrange(len(digits) + 1)
        token = digits[:point] + ("." + digits[point:] if point < len(digits) else "")
        token = token if not token.startswith(".") else "0" + token
        if rng.random() < 0.3:
            token += f"e{rng.randrange(-30, 30)}"
        tokens.append(("-" if rng.random() < 0.3 else "") + token)
    text = ("\n".join(f'{{"v":{t}}}' for t in tokens) + "\n").encode()
    values_raw, _ = recording._jsonl.scan(text, len(text))
    values = np.frombuffer(values_raw, dtype=np.float64).tolist()
    assert len(values) == len(tokens)
    for token, value in zip(tokens, values, strict=True):
        assert struct.pack("<d", value) == struct.pack("<d", float(token)), token


def test_a_long_text_scanned_in_two_halves_is_the_text_scanned_whole(monkeypatch: pytest.MonkeyPatch) -> None:
    import numpy as np

    from ckptdiag import recording
    from ckptdiag.recording import scanned

    if recording._jsonl is None:
        pytest.skip("compiled scanner not built")
    lines = [json.dumps({"type": "sample", "seq": i, "m": {"a": i * 1.5, f"k{i % 3}": -i}}) for i in range(5000)]
    text = ("\n".join(lines) + "\n").encode()
    values_raw, lines_raw = recording._jsonl.scan(text, len(text))
    monkeypatch.setattr(scanned, "SCAN_SPLIT", 1000)
    values, table = scanned._scanned(text, len(text))
    assert np.array_equal(values, np.frombuffer(values_raw, dtype=np.float64))
    assert np.array_equal(table, np.frombuffer(lines_raw, dtype=np.int64).reshape(-1, 5))
    # lines of one shape hash alike; a key one character longer, or changed in any of its bytes, does not
    shapes = {row[2] for row in table.tolist()}
    assert len(shapes) == 3
    base = '{"metric.name.eight": 1}'
    variants = [base, '{"metric.name.eighT": 1}', '{"metric.name.eightt": 1}', '{"metric.name.eigh": 1}']
    variants += ['{"Metric.name.eight": 1}', '{"metric.name.eight": "1"}', '{"metric.name.eight":1}']
    text = ("\n".join(variants) + "\n").encode()
    hashes = np.frombuffer(recording._jsonl.scan(text, len(text))[1], dtype=np.int64).reshape(-1, 5)[:, 2]
    assert len(set(hashes.tolist())) == len(variants)


# numbers beyond a double's range (damage: never written) stand in a line as a marker first
_HUGE = 7.77e77
_HUGE_SPELLINGS = ["1e400", "-1e400", "9" * 400, "-" + "9" * 400]
_number = st.one_of(
    st.integers(-(2**62), 2**62),
    st.floats(allow_nan=False, allow_infinity=False, width=64),
    st.none(),
    st.booleans(),
    st.just(_HUGE),
)


@st.composite
def _recording_lines(draw: st.DrawFn) -> list[str]:
    """Lines a recording may hold: samples whose metrics, disks and histograms change shape
    (names, order, bucket bounds), values of every JSON kind a counter can be and numbers
    beyond a double's range, events, blank and damaged lines (at times more than are named);
    written compact or with spaces."""
    keys = ["ckpt.count", "ops.insert", "cache.dirty_bytes", "a.b"]
    compact = draw(st.booleans())
    damage = draw(st.sampled_from([1, 6]))  # now and then more damaged lines than are named
    lines = [json.dumps(_header())]
    for i in range(draw(st.integers(0, 60))):
        kind = draw(st.sampled_from(["sample"] * 6 + ["event", "blank"] + ["damaged"] * damage))
        if kind == "sample":
            names = draw(st.permutations(keys).map(lambda p: p[: draw(st.integers(0, len(keys)))]))
            sample: dict[str, object] = {"type": "sample", "seq": i, "t": 1_795_000_000.0 + i, "mono": 0.5 * i}
            sample["rtt_ms"] = draw(_number)
            if draw(st.booleans()):
                sample["skipped"] = draw(st.integers(0, 3))
            if draw(st.booleans()):
                sample["wt_missing"] = draw(st.booleans())
            sample["m"] = {name: draw(_number) for name in names}
            if draw(st.booleans()):
                devices = draw(st.sampled_from([["vda"], ["vda", "sdb"], ["sdb"]]))
                sample["disk"] = {d: draw(st.lists(st.integers(0, 2**40), min_size=11, max_size=11)) for d in devices}
            if draw(st.booleans()):
                bounds = draw(st.sampled_from([[0, 2, 1024], [0, 4, 1024], [0, 2], [128]]))
                sample["hist"] = {"writes": [[b, draw(st.integers(0, 99))] for b in bounds]}
            line = json.dumps(sample, separators=(",", ":") if compact else None)
            lines.append(line.replace(json.dumps(_HUGE), draw(st.sampled_from(_HUGE_SPELLINGS))))
        elif kind == "event":
            lines.append(json.dumps({"type": "event", "kind": "gap", "t": 1_795_000_000.0 + i, "next_seq": i + 1}))
        elif kind == "blank":
            lines.append(draw(st.sampled_from(["", "  "])))
        else:
            lines.append(draw(st.sampled_from(['{"type": "sample", "seq": --1}', "not json 42", '{"m": {"a": 1'])))
    return lines


@pytest.mark.skipif(recording._jsonl is None, reason="compiled scanner not built")
@settings(max_examples=120, deadline=None, derandomize=True, database=None, suppress_health_check=list(HealthCheck))
@given(_recording_lines(), st.integers(60, 3000), st.booleans())
def test_the_python_path_reads_every_recording_as_the_scanner_does(
    tmp_path: Path, lines: list[str], block_bytes: int, split: bool
) -> None:
    # the scanner and the parse of every line are two readers of one format: whatever the
    # blocks, and whether or not a forked child parses the second half, they agree
    path = tmp_path / "r.jsonl"
    path.write_text("\n".join(lines) + "\n")
    scanned = read_recording(path, columns=True)
    with pytest.MonkeyPatch.context() as mp:
        parsed = python_path(path, mp, block_bytes, 0 if split else 1 << 40)
    same_reading(parsed, scanned)


def _stored(text: bytes, how: str) -> bytes:
    """A recording's text as a file stores it: plain, one gzip member, two members (a writer
    that started again), or a gzip member cut short (still being written, or the writer died)."""
    if how == "plain":
        return text
    if how == "gzip":
        return gzip.compress(text)
    if how == "members":
        cut = len(text) // 3
        return gzip.compress(text[:cut]) + gzip.compress(text[cut:])
    whole = gzip.compress(text)
    return whole[: max(len(whole) * 2 // 3, 12)]


@pytest.mark.skipif(recording._jsonl is None, reason="compiled scanner not built")
@settings(max_examples=120, deadline=None, derandomize=True, database=None, suppress_health_check=list(HealthCheck))
@given(
    _recording_lines(),
    st.integers(1, 3000),
    st.sampled_from(["plain", "gzip", "members", "cut"]),
    st.booleans(),
    st.integers(1, 700),
    st.sampled_from([1 << 20, 48]),
)
def test_a_recording_read_a_block_of_text_at_a_time_is_the_recording_read_whole(
    tmp_path: Path, lines: list[str], block: int, how: str, torn: bool, chunk: int, max_line: int
) -> None:
    # the text is inflated and scanned a block of whole lines at a time (a long recording's
    # text is never held whole): whatever the blocks, gzip members and torn ends, the samples,
    # events, damage and its line numbers are those of the text read at once
    # (with lines over a small MAX_LINE too: each is one damaged line, whichever reading)
    with pytest.MonkeyPatch.context() as bound:
        from ckptdiag.recording import lines as line_limit

        bound.setattr(line_limit, "MAX_LINE", max_line)
        _read_in_blocks_and_whole(tmp_path, lines, block, how, torn, chunk)


def _read_in_blocks_and_whole(tmp_path: Path, lines: list[str], block: int, how: str, torn: bool, chunk: int) -> None:
    import numpy as np

    from ckptdiag.recording import gzipped, reader

    text = ("\n".join(lines) + "\n" + ('{"type": "sample", "seq"' if torn else "")).encode()
    path = tmp_path / "r.jsonl"
    path.write_bytes(_stored(text, how))
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(reader, "TEXT_BLOCK", 1 << 40)
        try:
            whole = read_recording(path, columns=True)
        except InputError as exc:  # cut inside its header line: no line at all, read either way
            mp.setattr(reader, "TEXT_BLOCK", block)
            with pytest.raises(InputError, match=re.escape(exc.message)):
                read_recording(path, columns=True)
            return
        fresh = read_recording(path, columns=True)  # to_frame takes damaged values out in place
        mp.setattr(reader, "TEXT_BLOCK", block)
        mp.setattr(gzipped, "CHUNK", chunk)  # the file read a few bytes at a time: every seam
        mp.setattr(reader, "text_of", None)  # never the whole text: these streams are not damaged
        blocks = read_recording(path, columns=True)
    same_reading(blocks, whole)
    assert (blocks.bad_trailer, list(blocks.header)) == (whole.bad_trailer, list(whole.header))
    if how == "plain":  # and what the parse of every line reads
        with pytest.MonkeyPatch.context() as mp:
            same_reading(blocks, python_path(path, mp, 1 << 20, 1 << 40))
    # read keeping some columns only, each block let go of the others: the samples of those
    # columns, and the damage counted in all of them, as the whole reading gives them
    keep = lambda name: name not in ("a.b", "rtt_ms") and not name.startswith("disk.")  # noqa: E731
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(reader, "TEXT_BLOCK", block)
        kept = [read_recording(path, columns=True, keep=keep)]
        mp.setattr(reader, "_jsonl", None)
        kept.append(read_recording(path, columns=True, keep=keep))
    expected = fresh.to_block(keep=keep)
    for reading in kept:
        got = reading.to_block()
        assert got.names == expected.names
        for name in got.names:
            np.testing.assert_array_equal(got.values(name), expected.values(name))
        assert reading.damage() == fresh.damage()


def test_a_gzip_stream_damaged_inside_is_read_whole_as_before(tmp_path: Path) -> None:
    # inflated a block at a time, a stream damaged inside is handed to the reader of the whole
    # text, which takes it up again after the damage: the same lines either way
    from ckptdiag.recording import reader

    lines = [json.dumps(_header())]
    lines += [
        json.dumps(build_sample(status_doc(i), seq=i, wall=1_795_000_000.0 + i, mono=i, rtt_ms=1.0)) for i in range(300)
    ]
    raw = bytearray(gzip.compress(("\n".join(lines) + "\n").encode()))
    raw[len(raw) // 2 : len(raw) // 2 + 64] = bytes(64)  # damage in the middle of the deflate data
    path = tmp_path / "r.jsonl.gz"
    path.write_bytes(bytes(raw))
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(reader, "TEXT_BLOCK", 4096)
        blocks = read_recording(path, columns=True)
        mp.setattr(reader, "TEXT_BLOCK", 1 << 40)
        whole = read_recording(path, columns=True)
    same_reading(blocks, whole)
    assert blocks.truncated and blocks.sample_count > 0


def test_a_recording_parsed_in_two_halves_is_the_recording_parsed_whole(tmp_path: Path) -> None:
    # damaged lines in both halves keep their line numbers; events stay in file order; the
    # second half really is parsed by a child, and a child that fails is replaced by the parent
    from ckptdiag import forking

    path = tmp_path / "r.jsonl.gz"
    lines = [json.dumps(_header())]
    for i in range(400):
        lines.append(json.dumps(build_sample(status_doc(i), seq=i, wall=1_795_000_000.0 + i, mono=i, rtt_ms=1.0)))
        if i % 97 == 5:
            lines += ["damaged {", json.dumps({"type": "event", "kind": "gap", "t": 1.0 * i, "next_seq": i + 1})]
    path.write_bytes(gzip.compress(("\n".join(lines) + "\n").encode()))
    children: list[object] = []

    class Spy(forking.Child):  # type: ignore[type-arg]
        def result(self):  # type: ignore[no-untyped-def]
            children.append(self)
            return super().result()

    class Failing(forking.Child):  # type: ignore[type-arg]
        def __init__(self, fn, *args) -> None:  # type: ignore[no-untyped-def]
            super().__init__(lambda *_: 1 // 0)

    assert forking.may_fork()
    with pytest.MonkeyPatch.context() as mp:
        whole = python_path(path, mp, 1 << 20, 1 << 40)
    for child in (Spy, Failing):
        with pytest.MonkeyPatch.context() as mp:
            mp.setattr(forking, "Child", child)
            halves = python_path(path, mp, 4000, 0)
        same_reading(halves, whole)
    assert len(children) == 1
    assert whole.damaged_lines == 5 and whole.damaged_at == [8, 107, 206, 305, 404]
    assert [e["next_seq"] for e in whole.events] == [6, 103, 200, 297, 394]


def test_recordings_derived_as_blocks_are_derived_as_frames(tmp_path: Path) -> None:
    # a report derives recordings from their arrays (never a frame of every metric): two
    # recordings out of order, a gap and a restart recorded, a sample out of time order and a
    # damaged value give the very figures the joined frames give, index included
    import pandas as pd
    from synth import Server, write_recording

    from ckptdiag.analysis.series import derive, derive_block
    from ckptdiag.recording.blocks import join_blocks
    from ckptdiag.recording.columns import join_frames

    later = write_recording(Server(seconds=400).frame(), tmp_path / "later.jsonl")
    first = Server(seconds=300).frame()
    first["t"] -= 10_000.0
    earlier = write_recording(first, tmp_path / "earlier.jsonl")
    lines = later.read_text().splitlines()
    lines.insert(100, json.dumps({"type": "event", "kind": "gap", "t": 0.0, "next_seq": 99}))
    lines.insert(250, json.dumps({"type": "event", "kind": "restart", "t": 0.0, "next_seq": 248}))
    lines[300], lines[301] = lines[301], lines[300]  # one sample out of time order
    assert '"ops.insert":' in lines[320]
    lines[320] = lines[320].replace('"ops.insert":', '"ops.insert":1e400,"x":', 1)
    later.write_text("\n".join(lines) + "\n")
    recs = [read_recording(path, columns=True) for path in (later, earlier)]
    frames = join_frames([r.to_frame() for r in recs])
    again = [read_recording(path, columns=True) for path in (later, earlier)]
    blocks = join_blocks([(r.to_block(), Path(r.path)) for r in again])
    assert [r.damage() for r in again] == [r.damage() for r in recs]
    assert recs[0].unordered == 1 and recs[0].rejected_values == 1
    pd.testing.assert_frame_equal(derive_block(blocks), derive(frames), check_exact=True)
    gaps, segment = frames["gap_before"].to_numpy(), frames["segment"].to_numpy()
    assert blocks.values("gap_before").tolist() == gaps.astype(float).tolist() and gaps.sum() == 2
    assert blocks.values("segment").tolist() == segment.astype(float).tolist() and segment.max() == 2


@settings(max_examples=200, deadline=None, derandomize=True, database=None)
@given(st.lists(st.sampled_from([b"ab", b"\n", b"x" * 30, b"yy\nzz", b""]), max_size=40), st.integers(1, 50))
def test_lines_are_split_into_blocks_as_the_whole_text_is_bounded(parts: list[bytes], size: int) -> None:
    # however the text arrives (pieces inflated from a stream), the blocks are the whole text
    # with every line over MAX_LINE replaced, each block but the last ending on a newline
    from ckptdiag.recording import lines

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(lines, "MAX_LINE", 40)
        blocks = list(lines.line_blocks(parts, size))
        bounded = lines.bounded(b"".join(parts))
    assert b"".join(blocks) == bounded
    assert all(block.endswith(b"\n") for block in blocks[:-1])
    assert all(len(line) <= 40 for line in bounded.split(b"\n"))


def test_a_line_too_long_to_be_the_recorders_costs_one_damaged_line_not_its_size(tmp_path: Path) -> None:
    # 64 MB of one line gzip to 64 KB: read, it is one damaged line at its number, never held
    # (the reading's peak stays far below its size), and the samples after it are read
    import tracemalloc

    from ckptdiag.recording import lines

    good = tmp_path / "r.jsonl"
    _write(good, 6)
    text = good.read_bytes().split(b"\n")
    text.insert(3, b'{"type":"sample","x":"' + b"a" * (64 << 20) + b'"}')
    path = tmp_path / "r.jsonl.gz"
    path.write_bytes(gzip.compress(b"\n".join(text), compresslevel=1))
    del text
    tracemalloc.start()
    try:
        rec = read_recording(path, columns=True)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 32 << 20
    assert (rec.sample_count, rec.damaged_lines, rec.damaged_at) == (6, 1, [4])
    # the text read whole (a damaged stream's path) counts it the same way
    assert lines.TOO_LONG in lines.bounded(b"h\n" + b"a" * (lines.MAX_LINE + 1) + b"\nb\n")
