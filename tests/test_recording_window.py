"""A report of recordings reads them a block at a time: the same report as reading them whole."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from synth import Server, write_recording

from ckptdiag import recording
from ckptdiag.model.window import WHOLE, TimeWindow
from ckptdiag.recording import reader
from ckptdiag.report.document import to_document
from ckptdiag.workflows import recording_window
from ckptdiag.workflows.report import diagnose_window

pytestmark = pytest.mark.skipif(recording._jsonl is None, reason="compiled scanner not built")

T0 = 1_795_000_000.0


def _recordings(tmp_path: Path) -> list[Path]:
    """Two recordings of a server checkpointing every minute, named out of time order; the
    later one with a gap, a restart, a damaged line and a value beyond 64 bits recorded."""
    first = Server(seconds=900).frame()
    first["t"] += T0 - float(first["t"].iloc[0])
    second = Server(seconds=1500).frame()
    second["t"] += T0 + 3600.0 - float(second["t"].iloc[0])
    earlier = write_recording(first, tmp_path / "earlier.jsonl")
    later = write_recording(second, tmp_path / "later.jsonl")
    lines = later.read_text().splitlines()
    lines.insert(400, json.dumps({"type": "event", "kind": "gap", "t": 0.0, "next_seq": 398}))
    lines.insert(900, json.dumps({"type": "event", "kind": "restart", "t": 0.0, "next_seq": 897}))
    lines.insert(1000, "not json")
    lines[1200] = lines[1200].replace('"ops.insert":', '"ops.insert":1e400,"x":', 1)
    later.write_text("\n".join(lines) + "\n")
    return [later, earlier]


def _report(paths: list[Path], window: TimeWindow, read: str) -> dict[str, object]:
    """The JSON report of ``paths``, read a block at a time ("blocks"), whole, or as the reader
    chooses ("either")."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(reader, "TEXT_BLOCK", 40_000)  # ~25 samples a block: hundreds of seams
        if read == "whole":
            mp.setattr(recording_window, "_streamed", _unstreamable)
        elif read == "blocks":
            mp.setattr(recording_window, "_whole", None)  # never read whole here
        document = to_document(diagnose_window(tuple(paths), window), top=0)
    document.pop("generated", None)
    return document


def _unstreamable(*_: object) -> None:
    from ckptdiag.recording.stream import Unstreamable

    raise Unstreamable


@pytest.mark.parametrize(
    "window",
    [WHOLE, TimeWindow(int(T0 * 1000) + 300_000, int(T0 * 1000) + 4_500_000), TimeWindow(int(T0 * 1000) + 4_000_000)],
    ids=["whole", "across-both", "inside-the-later"],
)
def test_recordings_read_a_block_at_a_time_report_as_read_whole(tmp_path: Path, window: TimeWindow) -> None:
    paths = _recordings(tmp_path)
    streamed = _report(paths, window, "blocks")
    assert streamed == _report(paths, window, "whole")
    assert streamed["checkpoints"]["count"] > 10  # type: ignore[index]
    damage = json.dumps(streamed)
    assert "1 damaged line skipped" in damage and "1 value rejected" in damage


@pytest.mark.parametrize("how", ["clock set back across blocks", "an event long after its sample"])
def test_a_recording_the_blocks_cannot_read_as_a_whole_is_read_whole(tmp_path: Path, how: str) -> None:
    later, earlier = _recordings(tmp_path)
    lines = earlier.read_text().splitlines()
    if how.startswith("clock"):
        lines.append(lines[100].replace('"seq":99', '"seq":5000'))  # a sample at a time long passed
    else:
        lines.append(json.dumps({"type": "event", "kind": "restart", "t": 0.0, "next_seq": 50}))
    earlier.write_text("\n".join(lines) + "\n")
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(reader, "TEXT_BLOCK", 40_000)
        from ckptdiag.recording.stream import RecordingStream, Unstreamable

        with pytest.raises(Unstreamable):
            for _ in RecordingStream(earlier, None).blocks():
                pass
    assert _report([later, earlier], WHOLE, "either") == _report([later, earlier], WHOLE, "whole")


@pytest.mark.parametrize("read", ["blocks", "whole"])
def test_recordings_that_overlap_in_time_are_a_named_error(tmp_path: Path, read: str) -> None:
    # joined, time would run back at the seam (it failed deep in the diagnosis before)
    from ckptdiag.errors import InputError

    later, earlier = _recordings(tmp_path)
    with pytest.raises(InputError, match=r"the recordings overlap in time: .*later\.jsonl ends at") as caught:
        _report([later, earlier, later], WHOLE, read)
    assert "report each recording on its own" in caught.value.hint


@pytest.mark.parametrize("read", ["blocks", "whole"])
def test_a_recording_with_no_readable_sample_says_what_was_damaged(tmp_path: Path, read: str) -> None:
    # not "no samples in the given window" when no window was given: what reading found
    from ckptdiag.errors import InputError
    from ckptdiag.recording.lines import MAX_LINE

    later, _ = _recordings(tmp_path)
    head = later.read_bytes().split(b"\n")[0]
    lone = tmp_path / "lone.jsonl"
    lone.write_bytes(head + b"\n" + b"a" * (MAX_LINE + 5) + b"\n")
    with pytest.raises(InputError, match=r"^no samples in the recordings: .*lone\.jsonl: 1 damaged line .*line 2"):
        _report([lone], WHOLE, read)
