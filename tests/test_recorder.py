"""The sampling loop on a fake clock: cadence, skipped ticks, gaps, reconnects, restarts, stops."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from fakes import FakeClock, ScriptedSource, server_info, status_doc

from ckptdiag.errors import ConnectError
from ckptdiag.recording import RecordingWriter, read_recording
from ckptdiag.recording.recorder import Sampler


def _run(tmp_path: Path, source: ScriptedSource, clock: FakeClock, duration: float, **kw):  # type: ignore[no-untyped-def]
    path = tmp_path / "rec.jsonl"
    writer = RecordingWriter(path)
    writer.write({"type": "header", "format": "ckptdiag-recording", "format_version": 1}, clock.monotonic())
    sampler = Sampler(source, writer, clock=clock, duration=duration, **kw)
    result = sampler.run(server_info())
    writer.close()
    return result, read_recording(path)


def _run_until(error: type[Exception], tmp_path: Path, source: ScriptedSource, clock: FakeClock):  # type: ignore[no-untyped-def]
    """Sample for up to 10 s, expecting ``error`` to end the run; the recording it left."""
    path = tmp_path / "rec.jsonl"
    writer = RecordingWriter(path)
    writer.write({"type": "header", "format": "ckptdiag-recording", "format_version": 1}, 0)
    with pytest.raises(error):
        Sampler(source, writer, clock=clock, duration=10).run(server_info())
    writer.close()
    return read_recording(path)


def _raising(at: set[int], error: Exception) -> Callable[[int], dict[str, Any]]:
    """A script of status documents whose replies number ``at`` raise ``error`` instead."""

    def script(n: int) -> dict[str, Any]:
        if n in at:
            raise error
        return status_doc(n)

    return script


def test_ticks_follow_absolute_deadlines_without_drift(tmp_path: Path) -> None:
    clock = FakeClock(start=1000.0)
    # replies take 5-300 ms: a relative sleep(1) loop would drift by their sum (~hundreds of ms)
    source = ScriptedSource(clock, status_doc, rtt=lambda n: 0.005 + (n % 7) * 0.045)
    result, rec = _run(tmp_path, source, clock, duration=600)
    assert result.samples == 601 and result.skipped_ticks == 0
    offsets = [t - 1000.0 for t in source.sample_times]
    assert max(abs(o - round(o)) for o in offsets) < 1e-6  # every request on its deadline
    assert offsets[-1] == pytest.approx(600.0)
    assert [s["seq"] for s in rec.samples] == list(range(601))


def test_a_slow_reply_skips_ticks_instead_of_piling_up(tmp_path: Path) -> None:
    clock = FakeClock(start=0.0)
    source = ScriptedSource(clock, status_doc, rtt=lambda n: 3.7 if n == 5 else 0.01)
    result, rec = _run(tmp_path, source, clock, duration=20)
    offsets = [round(t, 6) for t in source.sample_times]
    # tick 5 took 3.7 s: ticks 6, 7 and 8 are gone (8.7 > 8 + 0.5), tick 9 is taken on time
    assert offsets[:8] == [0, 1, 2, 3, 4, 5, 9, 10]
    assert result.skipped_ticks == 3
    assert rec.samples[6]["skipped"] == 3 and "skipped" not in rec.samples[7]


def test_a_reply_slightly_late_is_taken_not_skipped(tmp_path: Path) -> None:
    clock = FakeClock(start=0.0)
    source = ScriptedSource(clock, status_doc, rtt=lambda n: 1.2 if n == 2 else 0.01)
    result, _ = _run(tmp_path, source, clock, duration=6)
    assert result.skipped_ticks == 0
    assert [round(t, 3) for t in source.sample_times][:5] == [0, 1, 2, 3.2, 4]


def test_lost_connection_is_a_gap_then_reconnect(tmp_path: Path) -> None:
    clock = FakeClock(start=0.0)
    script = lambda n: ("lost", "connection closed") if n == 3 else status_doc(n)  # noqa: E731
    connects = lambda n: "unreachable" if n in (0, 1) else server_info()  # noqa: E731
    source = ScriptedSource(clock, script, connect_script=connects)
    result, rec = _run(tmp_path, source, clock, duration=10)
    kinds = [e["kind"] for e in rec.events]
    assert kinds.count("gap") == 1 and kinds.count("reconnected") == 1
    gap = next(e for e in rec.events if e["kind"] == "gap")
    back = next(e for e in rec.events if e["kind"] == "reconnected")
    assert gap["reason"] == "connection closed" and gap["next_seq"] == 3
    assert back["down_s"] == pytest.approx(3.0, abs=0.05)  # two failed reconnects, back on the third tick
    assert result.samples == 11 - 1 - 2  # one tick lost to the gap, two to failed reconnects
    frame = rec.to_frame()
    assert frame["gap_before"].sum() == 1 and bool(frame.loc[frame["seq"] == 3, "gap_before"].iloc[0])


def test_fatal_errors_on_reconnect_stop_the_run_but_keep_the_file(tmp_path: Path) -> None:
    from ckptdiag.errors import ConnectError

    clock = FakeClock(start=0.0)
    source = ScriptedSource(clock, lambda n: ("lost", "x") if n == 2 else status_doc(n))

    def connect():  # type: ignore[no-untyped-def]
        raise ConnectError("authentication failed")

    source.connect = connect  # type: ignore[method-assign]
    rec = _run_until(ConnectError, tmp_path, source, clock)
    assert len(rec.samples) == 2 and rec.events[-1]["kind"] == "end"


def test_restart_is_marked_when_uptime_goes_back(tmp_path: Path) -> None:
    clock = FakeClock(start=0.0)
    script = lambda n: status_doc(n) if n < 4 else status_doc(n - 4, uptime0=500)  # noqa: E731
    result, rec = _run(tmp_path, ScriptedSource(clock, script), clock, duration=7)
    assert result.restarts == 1
    restart = next(e for e in rec.events if e["kind"] == "restart")
    assert restart["next_seq"] == 4
    assert list(rec.to_frame()["segment"]) == [0, 0, 0, 0, 1, 1, 1, 1]


def test_restart_is_marked_when_pid_changes(tmp_path: Path) -> None:
    clock = FakeClock(start=0.0)
    script = lambda n: status_doc(n, pid=42 if n < 2 else 77)  # noqa: E731
    result, _ = _run(tmp_path, ScriptedSource(clock, script), clock, duration=4)
    assert result.restarts == 1


def test_missing_wiredtiger_section_is_recorded_as_evidence(tmp_path: Path) -> None:
    clock = FakeClock(start=0.0)
    script = lambda n: status_doc(n, wt=n not in (2, 3))  # noqa: E731
    result, rec = _run(tmp_path, ScriptedSource(clock, script), clock, duration=5)
    assert result.wt_missing == 2
    assert [bool(s.get("wt_missing")) for s in rec.samples] == [False, False, True, True, False, False]
    assert "cache.dirty_bytes" not in rec.samples[2]["m"] and rec.samples[2]["m"]["ops.insert"] == 200
    assert list(rec.to_frame()["wt_missing"]) == [False, False, True, True, False, False]


def test_stop_request_ends_with_a_complete_file(tmp_path: Path) -> None:
    clock = FakeClock(start=0.0)
    holder: dict[str, Sampler] = {}

    def script(n: int):  # type: ignore[no-untyped-def]
        if n == 4:
            holder["s"].request_stop("interrupted")
        return status_doc(n)

    path = tmp_path / "rec.jsonl.gz"
    writer = RecordingWriter(path)
    writer.write({"type": "header", "format": "ckptdiag-recording", "format_version": 1}, 0)
    holder["s"] = Sampler(ScriptedSource(clock, script), writer, clock=clock, duration=None)
    result = holder["s"].run(server_info())
    writer.close()
    rec = read_recording(path)
    assert result.stopped_by == "interrupted" and len(rec.samples) == 5 and not rec.truncated
    assert rec.events[-1]["kind"] == "end" and rec.events[-1]["reason"] == "interrupted"


def test_coverage_event_names_paths_once(tmp_path: Path) -> None:
    clock = FakeClock(start=0.0)
    _, rec = _run(tmp_path, ScriptedSource(clock, status_doc), clock, duration=3)
    cov = [e for e in rec.events if e["kind"] == "coverage"]
    assert len(cov) == 1
    assert cov[0]["paths"]["cache.dirty_bytes"] == 'wiredTiger.cache["tracked dirty bytes in the cache"]'
    assert "ckpt.progress_state" in cov[0]["not_in_version"]


def test_disks_are_read_with_every_sample(tmp_path: Path) -> None:
    from ckptdiag.model.disk import DiskCounters

    clock = FakeClock(start=0.0)
    reads = iter(range(100))

    def read_disks():  # type: ignore[no-untyped-def]
        k = next(reads)
        return {"vda": (DiskCounters(wr_ios=10 * k, wr_sectors=2048 * k), 17)}

    _, rec = _run(tmp_path, ScriptedSource(clock, status_doc), clock, duration=2, read_disks=read_disks)
    assert [s["disk"]["vda"][4] for s in rec.samples] == [0, 10, 20]
    frame = rec.to_frame()
    assert list(frame["disk.vda.wr_sectors"]) == [0, 2048, 4096]


def test_down_s_runs_to_the_answer_and_the_next_sample_is_stamped_after_it(tmp_path: Path) -> None:
    # the server is gone for ~11 s; each reconnect attempt blocks 5 s (the driver's timeout)
    # before it fails, and the one that succeeds answers 3 s into its attempt
    clock = FakeClock(start=0.0)
    script = lambda n: ("lost", "connection closed") if n == 3 else status_doc(n)  # noqa: E731
    source = ScriptedSource(clock, script)
    attempts = iter([5.0, 3.0])

    def connect():  # type: ignore[no-untyped-def]
        from ckptdiag.errors import ConnectError

        wait = next(attempts)
        clock.advance(wait)
        if wait == 5.0:
            raise ConnectError("unreachable", retryable=True)
        return server_info()

    source.connect = connect  # type: ignore[method-assign]
    _, rec = _run(tmp_path, source, clock, duration=20)
    back = next(e for e in rec.events if e["kind"] == "reconnected")
    lost_at = 3.0  # the tick whose request failed
    answered = back["t"] - (clock.epoch)  # the event is stamped when the server answered
    assert back["down_s"] == pytest.approx(answered - lost_at, abs=0.02)
    # lost at 3; the attempt at 4 fails at 9, the one at 9 is answered at 12 (the tick's start said 6)
    assert back["down_s"] == pytest.approx(9.0, abs=0.02)
    after = next(s for s in rec.samples if s["seq"] == back["next_seq"])
    assert after["mono"] >= answered - 1e-6  # taken after the answer, not at its tick's start
    assert after["t"] >= back["t"]


@pytest.mark.parametrize(
    ("error", "at", "said"),
    [
        (ConnectError("not authorized on admin to execute command { serverStatus: 1 }"), 4, "not authorized"),
        (RuntimeError("something no one planned for"), 3, "RuntimeError"),  # unexpected: still said so
    ],
    ids=["refused", "unexpected"],
)
def test_a_failure_mid_run_ends_with_its_reason_not_duration(
    tmp_path: Path, error: Exception, at: int, said: str
) -> None:
    clock = FakeClock(start=0.0)
    rec = _run_until(type(error), tmp_path, ScriptedSource(clock, _raising({at}, error)), clock)
    end = rec.events[-1]
    assert end["kind"] == "end" and end["reason"] == "error" and said in end["error"]
    assert end["samples"] == at and len(rec.samples) == at


def test_an_unreadable_reply_is_a_gap_and_sampling_goes_on_connected(tmp_path: Path) -> None:
    from ckptdiag.sources.mongo import BadReply

    clock = FakeClock(start=1000.0)

    source = ScriptedSource(clock, _raising({2, 3}, BadReply("unreadable reply: InvalidBSON: damaged BSON at byte 41")))
    result, rec = _run(tmp_path, source, clock, duration=8)
    assert result.samples == 7 and result.gaps == 2 and source.connects == 0  # never reconnected
    gaps = [e for e in rec.events if e["kind"] == "gap"]
    assert [g["reason"] for g in gaps] == ["unreadable reply: InvalidBSON: damaged BSON at byte 41"] * 2
    assert rec.events[-1]["reason"] == "duration"
