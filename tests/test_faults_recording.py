"""Damaged recordings and hostile values: what can be kept is kept, every damage is counted and
named, and no value makes the analysis loop or fail (the fault pass's inputs, rebuilt here)."""

from __future__ import annotations

import gzip
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from synth import Server, write_recording

from ckptdiag.errors import InputError
from ckptdiag.recording import read_recording
from ckptdiag.workflows.report import diagnose_window

GOOD_CHECKPOINTS = 5  # Server(seconds=300): checkpoints at 30.3 + 60k s


def ckptdiag(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "ckptdiag", *args], capture_output=True, text=True, timeout=120, check=False
    )


@pytest.fixture(scope="module")
def lines(tmp_path_factory: pytest.TempPathFactory) -> list[dict[str, Any]]:
    path = tmp_path_factory.mktemp("rec") / "good.jsonl"
    write_recording(Server(seconds=300).frame(), path)
    return [json.loads(line) for line in path.read_text().splitlines()]


def _write(path: Path, objs: list[Any], *, raw_lines: dict[int, str] | None = None) -> Path:
    text = [json.dumps(o, separators=(",", ":")) for o in objs]
    for i, line in (raw_lines or {}).items():
        text[i] = line
    path.write_text("\n".join(text) + "\n")
    return path


def _copy(objs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return json.loads(json.dumps(objs))


def test_a_counter_jump_is_evidence_and_costs_nothing(tmp_path: Path, lines: list[dict[str, Any]]) -> None:
    objs = _copy(lines)
    for o in objs[150:]:
        o["m"]["ckpt.count"] += 1e6  # once: 1e6 checkpoints "begun" in one second
    report = diagnose_window((_write(tmp_path / "jump.jsonl", objs),))
    assert len(report.dx.episodes) == GOOD_CHECKPOINTS
    assert any("checkpoint counter jumped by 1,000,000" in e and "reset or corruption" in e for e in report.dx.evidence)


def test_non_finite_and_absurd_values_are_rejected_one_by_one(tmp_path: Path, lines: list[dict[str, Any]]) -> None:
    objs = _copy(lines)
    raw = {}
    for i in range(100, 110):
        raw[i] = json.dumps(objs[i], separators=(",", ":")).replace(
            f'"ckpt.count":{objs[i]["m"]["ckpt.count"]}', '"ckpt.count":1e400'
        )
    objs[120]["m"]["ops.insert"] = 1e30  # beyond any 64-bit counter
    objs[121]["m"]["ops.insert"] = "many"  # not a number at all
    path = _write(tmp_path / "inf.jsonl", objs, raw_lines=raw)
    report = diagnose_window((path,))
    assert len(report.dx.episodes) == GOOD_CHECKPOINTS
    notes = [n for n in report.source.damaged if "values rejected" in n]
    assert notes and notes[0].startswith(f"{path}: 11 values rejected"), report.source.damaged
    assert notes[0] in report.dx.evidence


@pytest.mark.parametrize("scanner", [True, False])
def test_a_number_beyond_a_double_loses_one_value_not_the_samples_like_it(
    tmp_path: Path, lines: list[dict[str, Any]], scanner: bool
) -> None:
    # the first sample is the one every sample of its shape is named from: a 1e400 there (and a
    # 400-digit integer further on) is one value rejected each, not every sample of the shape
    # lost as damaged lines; a JSON parser that refuses the number must not decide it
    from ckptdiag.recording import reader

    objs = _copy(lines)
    raw = {}
    for i, name, spelling in ((1, "ckpt.count", "1e400"), (200, "ops.query", "-" + "9" * 400)):
        value = f'"{name}":{json.dumps(objs[i]["m"][name])}'
        raw[i] = json.dumps(objs[i], separators=(",", ":")).replace(value, f'"{name}":{spelling}')
        assert spelling in raw[i]
    path = _write(tmp_path / "huge.jsonl", objs, raw_lines=raw)
    with pytest.MonkeyPatch.context() as mp:
        if not scanner:
            mp.setattr(reader, "_jsonl", None)
        rec = read_recording(path, columns=True)
    frame = rec.to_frame()
    assert (rec.sample_count, rec.damaged_lines, rec.rejected_values) == (len(objs) - 1, 0, 2)
    assert np.isnan(frame["ckpt.count"].iloc[0]) and np.isnan(frame["ops.query"].iloc[199])
    assert len(diagnose_window((path,)).dx.episodes) == GOOD_CHECKPOINTS


def test_impossible_times_are_dropped_and_out_of_order_samples_sorted(
    tmp_path: Path, lines: list[dict[str, Any]]
) -> None:
    objs = _copy(lines)
    objs[100]["t"] = 1e18  # year 31 billion
    objs[101]["t"] = -5.0
    objs[50], objs[51] = objs[51], objs[50]
    report = diagnose_window((_write(tmp_path / "t.jsonl", objs),))
    dx = report.dx
    assert dx.start < dx.end and dx.period_s == pytest.approx(1.0) and dx.samples == 299
    assert len(dx.episodes) == GOOD_CHECKPOINTS
    assert any("2 samples dropped: time outside 1970-2255" in n for n in report.source.damaged)
    assert any("1 sample out of time order (sorted)" in n for n in report.source.damaged)


def test_a_bad_gzip_trailer_keeps_every_line(tmp_path: Path, lines: list[dict[str, Any]]) -> None:
    text = ("\n".join(json.dumps(o, separators=(",", ":")) for o in lines) + "\n").encode()
    blob = bytearray(gzip.compress(text))
    blob[-8] ^= 0xFF  # the CRC: zcat still gives every line
    path = tmp_path / "crc.jsonl.gz"
    path.write_bytes(bytes(blob))
    for columns in (True, False):
        rec = read_recording(path, columns=columns)
        assert rec.sample_count == len(lines) - 1 and rec.bad_trailer
    report = diagnose_window((path,))
    assert any("gzip trailer does not match" in n for n in report.source.damaged)
    assert len(report.dx.episodes) == GOOD_CHECKPOINTS


def test_flipped_bytes_in_a_gzip_recording_keep_what_comes_before(tmp_path: Path, lines: list[dict[str, Any]]) -> None:
    text = ("\n".join(json.dumps(o, separators=(",", ":")) for o in lines) + "\n").encode()
    blob = gzip.compress(text)
    rng = np.random.default_rng(5)
    kept = []
    for n in range(22):
        mutant = bytearray(blob)
        at = int(rng.integers(len(blob) // 4, len(blob) - 8))  # past the header line's bytes
        mutant[at] ^= 1 << int(rng.integers(0, 8))
        path = tmp_path / f"m{n}.jsonl.gz"
        path.write_bytes(bytes(mutant))
        rec = read_recording(path, columns=True)
        rec.to_frame()
        kept.append(rec.sample_count)
        assert rec.damage() or rec.sample_count == len(lines) - 1
    assert min(kept) > 0, kept  # none rejected whole


def test_damaged_lines_are_counted_and_named_by_number(tmp_path: Path, lines: list[dict[str, Any]]) -> None:
    objs = _copy(lines)
    deep = "[" * 100_000 + "]" * 100_000  # deeper than any JSON parser's stack
    path = _write(tmp_path / "d.jsonl", objs, raw_lines={10: "{not json", 20: deep, 30: '{"type":"sample",'})
    for columns in (True, False):
        rec = read_recording(path, columns=columns)
        assert rec.damaged_lines == 3 and rec.damaged_at == [11, 21, 31]
    report = diagnose_window((path,))
    assert f"{path}: 3 damaged lines skipped (not JSON: line 11, 21, 31)" in report.source.damaged


def test_events_without_next_seq_are_ignored_and_counted(tmp_path: Path, lines: list[dict[str, Any]]) -> None:
    objs = _copy(lines)
    objs.insert(100, {"type": "event", "kind": "gap", "t": objs[100]["t"]})
    objs.insert(200, {"type": "event", "kind": "restart", "t": objs[200]["t"], "next_seq": "soon"})
    report = diagnose_window((_write(tmp_path / "e.jsonl", objs),))
    assert any("2 gap/restart events without a valid next_seq ignored" in n for n in report.source.damaged)


@pytest.mark.parametrize(
    ("version", "shown"),
    [
        ("x", "'x'"),
        (1.5, "'1.5'"),
        (None, "'None'"),
        (True, "'True'"),
        (float("inf"), "'inf'"),
        (float("nan"), "'nan'"),
    ],
)
def test_a_header_with_a_bad_format_version_costs_only_the_header(
    tmp_path: Path, lines: list[dict[str, Any]], version: Any, shown: str
) -> None:
    objs = _copy(lines)
    objs[0]["format_version"] = version
    path = _write(tmp_path / "v.jsonl", objs)
    for columns in (True, False):
        rec = read_recording(path, columns=columns)
        assert rec.sample_count == len(lines) - 1
        assert f"format_version is {shown}, not a whole number" in rec.header_damage
    report = diagnose_window((path,))
    assert len(report.dx.episodes) == GOOD_CHECKPOINTS
    assert any("not a whole number" in n for n in report.source.damaged)


def test_a_newer_recording_format_is_a_named_error(tmp_path: Path, lines: list[dict[str, Any]]) -> None:
    objs = _copy(lines)
    objs[0]["format_version"] = 99
    with pytest.raises(InputError, match="newer than"):
        read_recording(_write(tmp_path / "v.jsonl", objs))


@pytest.mark.parametrize(
    "first",
    [
        "DAMAGED",  # the header line overwritten
        "\x00" * 4096,  # the first 4 KiB zeroed (a killed recording's first block lost)
        '{ "type" : "header" , "format" : "ckptdiag-recording", "format_version": "1", "server": [] }',
    ],
    ids=["garbage", "zeroed", "spaced-and-mistyped"],
)
def test_a_damaged_header_line_is_read_past(tmp_path: Path, lines: list[dict[str, Any]], first: str) -> None:
    text = [json.dumps(o, separators=(", ", ": ")) for o in lines]  # spaced as json.dumps spaces it
    text[0] = first
    path = tmp_path / "h.jsonl"
    path.write_text("\n".join(text) + "\n")
    proc = ckptdiag("report", str(path), "-f", "json", "--fail-on", "never")
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    assert doc["checkpoints"]["count"] == GOOD_CHECKPOINTS
    assert "header" in proc.stderr or "format_version" in proc.stderr


def test_header_metadata_of_the_wrong_type_is_left_out(tmp_path: Path, lines: list[dict[str, Any]]) -> None:
    objs = _copy(lines)
    objs[0]["server"] = {"version": 7, "host": ["a"], "cmdline": "x", "host_info": 3, "parameters": []}
    objs[0]["disks"] = {"devices": "vda", "filesystem": 1}
    report = diagnose_window((_write(tmp_path / "h.jsonl", objs),))
    assert report.dx.facts.version is None and report.dx.facts.devices == ()
    objs[0]["server"] = "not a document"
    report = diagnose_window((_write(tmp_path / "h2.jsonl", objs),))
    assert len(report.dx.episodes) == GOOD_CHECKPOINTS


def test_a_negative_dirty_value_draws_in_the_table(tmp_path: Path, lines: list[dict[str, Any]]) -> None:
    objs = _copy(lines)
    for o in objs[1:40]:
        o["m"]["cache.dirty_bytes"] = -5e8
    proc = ckptdiag("report", str(_write(tmp_path / "neg.jsonl", objs)), "-f", "table", "--fail-on", "never")
    assert proc.returncode == 0 and "Traceback" not in proc.stderr and "unexpected" not in proc.stderr


def test_one_bad_recording_in_a_directory_is_skipped_with_a_note(tmp_path: Path, lines: list[dict[str, Any]]) -> None:
    d = tmp_path / "recordings"
    d.mkdir()
    _write(d / "a.jsonl", lines)
    bad = _copy(lines)
    bad[0]["format_version"] = 99
    _write(d / "b.jsonl", bad)
    proc = ckptdiag("report", str(d), "-f", "json", "--fail-on", "never")
    assert proc.returncode == 0, proc.stderr
    assert "b.jsonl: skipped:" in proc.stderr and "newer than this ckptdiag" in proc.stderr
    assert json.loads(proc.stdout)["checkpoints"]["count"] == GOOD_CHECKPOINTS


def test_an_output_inside_an_input_directory_or_behind_a_link_is_refused(tmp_path: Path) -> None:
    from tests.ftdc_writer import SimServer, write_ftdc

    d = tmp_path / "diagnostic.data"
    d.mkdir()
    target = d / "metrics.2026-11-01T00-00-00Z-00000"
    write_ftdc(target, SimServer(checkpoints=[(30, 32)]), [float(i) for i in range(100)])
    before = target.read_bytes()
    link = tmp_path / "link.md"
    os.symlink(target, link)
    hard = tmp_path / "hard.md"
    os.link(target, hard)
    for out in (target, link, hard, Path(os.path.relpath(target))):
        proc = ckptdiag("report", str(d), "-o", str(out), "--fail-on", "never")
        assert proc.returncode == 1 and "is one of the inputs" in proc.stderr, (out, proc.stderr)
    assert target.read_bytes() == before
    ok = ckptdiag("report", str(d), "-o", str(tmp_path / "nightly.md"), "--fail-on", "never")
    assert ok.returncode == 0 and (tmp_path / "nightly.md").exists()


def _written(path: Path, samples: int) -> bytes:
    """A gzip recording as ``record`` writes it: flushed every 2 s, in full every minute."""
    from fakes import status_doc

    from ckptdiag.recording import RecordingWriter, build_sample, header

    w = RecordingWriter(path, flush_every_s=2.0)
    w.write(header(source={}, server={"version": "7.0.21"}, options={}, disks={}, created=1.0), 0.0)
    for i in range(samples):
        w.write(build_sample(status_doc(i), seq=i, wall=1.7e9 + i, mono=float(i), rtt_ms=1.0), float(i))
    w.close()
    return path.read_bytes()


def test_a_gzip_recording_whose_start_was_zeroed_is_read_from_the_next_minute(tmp_path: Path) -> None:
    """A crash that zeroed the first 4 KiB of a gzip recording (its header and first blocks):
    every sample after the next full flush (a minute at most) is read, and the header's loss is
    a note."""
    raw = bytearray(_written(tmp_path / "w.jsonl.gz", 600))
    raw[:4096] = b"\0" * 4096
    path = tmp_path / "zeroed.jsonl.gz"
    path.write_bytes(bytes(raw))
    for columns in (True, False):
        rec = read_recording(path, columns=columns)
        assert rec.sample_count >= 600 - 60 - 4096 // 30  # what the zeroed bytes held, and a minute
        assert rec.header_damage and rec.truncated
    proc = ckptdiag("report", str(path), "-f", "json", "--fail-on", "never")
    assert proc.returncode == 0, proc.stderr
    assert "not a recording header" in proc.stderr


def test_a_gzip_stream_damaged_inside_is_read_again_after_the_damage(tmp_path: Path) -> None:
    raw = bytearray(_written(tmp_path / "w.jsonl.gz", 600))
    # a run of garbage the inflater refuses (an invalid block type), a third of the way in
    at = len(raw) // 3
    raw[at : at + 64] = b"\xff" * 64
    path = tmp_path / "hole.jsonl.gz"
    path.write_bytes(bytes(raw))
    before_the_hole = None
    for columns in (True, False):
        rec = read_recording(path, columns=columns)
        assert rec.truncated
        before_the_hole = before_the_hole or rec.sample_count
        assert rec.sample_count >= 600 - 60 - 200  # the damaged third's minute, not the rest of the file
    assert before_the_hole is not None


def test_a_header_nested_far_deeper_than_any_document_is_cut_not_a_crash(
    tmp_path: Path, lines: list[dict[str, Any]]
) -> None:
    objs = _copy(lines)
    # the 950 levels written as text: json.dumps would recurse once a level, and how deep the test
    # runner's own stack already is (a worker of pytest-xdist: deeper) is not this test's subject
    deep = '{"a":1}'
    for _ in range(950):
        deep = '{"n":' + deep + "}"
    at = "@DEEP@"
    objs[0]["server"] = {"version": "7.0.21", "cmdline": {"parsed": at, "argv": ["mongod"]}, "parameters": at}
    header = json.dumps(objs[0], separators=(",", ":")).replace(f'"{at}"', deep)
    path = _write(tmp_path / "deep.jsonl", objs, raw_lines={0: header})
    for fmt in ("json", "md", "html"):
        proc = ckptdiag("report", str(path), "-f", fmt, "--fail-on", "never")
        assert proc.returncode == 0 and "unexpected" not in proc.stderr, proc.stderr


def test_a_histogram_bound_that_is_no_whole_number_is_no_bucket(tmp_path: Path, lines: list[dict[str, Any]]) -> None:
    objs = _copy(lines)
    for o in objs[1:]:
        if o.get("type") == "sample":
            o["hist"] = {"writes": [[1.5, 3], [2048, 5], [4096, 1]]}
    proc = ckptdiag("report", str(_write(tmp_path / "h.jsonl", objs)), "-f", "json", "--fail-on", "never")
    assert proc.returncode == 0 and "unexpected" not in proc.stderr, proc.stderr
    assert json.loads(proc.stdout)["checkpoints"]["count"] == GOOD_CHECKPOINTS


def test_a_line_nested_900_deep_costs_its_own_values(tmp_path: Path, lines: list[dict[str, Any]]) -> None:
    text = [json.dumps(o, separators=(",", ":")) for o in lines]
    deep = "1"
    for _ in range(900):
        deep = '{"a":' + deep + "}"
    text.insert(5, '{"type":"sample","seq":3,"t":' + str(lines[4]["t"] + 0.5) + ',"m":' + deep + "}")
    text.insert(6, '{"type":"event","kind":"gap","t":' + str(lines[4]["t"] + 0.6) + ',"x":' + deep + "}")
    path = tmp_path / "deep.jsonl"
    path.write_text("\n".join(text) + "\n")
    for columns in (True, False):
        assert read_recording(path, columns=columns).sample_count >= len(lines) - 1
    proc = ckptdiag("report", str(path), "-f", "json", "--fail-on", "never")
    assert proc.returncode == 0 and "unexpected" not in proc.stderr, proc.stderr
    assert json.loads(proc.stdout)["checkpoints"]["count"] == GOOD_CHECKPOINTS
