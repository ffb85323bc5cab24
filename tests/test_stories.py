"""The story a report tells, exact for each shape of server that misled it before (#28).

Each test writes synthetic FTDC by mongod's encoding rules (tests/ftdc_writer.py) for one shape,
with its exact expected story: the headline, every episode's verdict and reasons, the figures
beside them.
"""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np
import pytest
from ftdc_writer import SimServer, write_ftdc

from ckptdiag.analysis.results import Diagnosis
from ckptdiag.analysis.verdict import NO_LOAD
from ckptdiag.workflows.report import diagnose_window

BURSTS = ((600.0, 620.0), (3000.0, 3020.0), (6000.0, 6015.0))
LONG = ((610.0, 618.0), (3010.0, 3018.0))  # 8 s checkpoints inside the first two bursts
HOURS_2 = 7200


def _bursty(tmp_path: Path) -> tuple[Path, SimServer, list[float]]:
    """A 7.0 server idle but for three batch bursts of 110,000 writes/s (sampled every 0.1 s
    while busy, as FTDC does, every second else): a 28 ms checkpoint every 60 s, and two 8 s
    checkpoints inside bursts, each stopping writes for 0.5 s (latency 27x) then running on."""
    short = [(30.0 + 60 * k, 30.028 + 60 * k) for k in range(HOURS_2 // 60)]
    server = SimServer(
        sorted([*short, *LONG]),
        ops=110_000.0,
        stall_ops=1000.0,
        stall_in=[(s + 2, s + 2.5) for s, _ in LONG],
        latency_ms=0.2,
        stall_latency_ms=5.4,
        bursts=BURSTS,
    )
    times: list[float] = []
    t = 0.0
    while t < HOURS_2:
        times.append(round(t, 3))
        t += 0.1 if any(s - 1 <= t < e + 1 for s, e in BURSTS) else 1.0
    path = tmp_path / "metrics.2023-11-14T22-13-20Z-00000"
    write_ftdc(path, server, times)
    return path, server, times


def test_intermittent_bursts_are_judged_against_the_load_they_interrupted(tmp_path: Path) -> None:
    """Busy ~1 % of two hours: the baseline is the bursts' (never the idle hours' 0 ops/s), the
    two 8 s checkpoints inside bursts are the stalls, every 28 ms one between bursts says it had no
    load to interrupt, and the headline names the usual checkpoint, the stalls and the longest."""
    path, server, times = _bursty(tmp_path)
    report = diagnose_window((path,))
    dx = report.dx
    assert isinstance(dx, Diagnosis)
    assert len(dx.episodes) == HOURS_2 // 60 + len(LONG)
    assert dx.baseline.ops_s == pytest.approx(110_000, rel=1e-3)
    stalled = [e for e in dx.episodes if e.stall]
    assert [round(e.start - server.t0) for e in stalled] == [610, 3010]
    for e in stalled:
        assert e.duration_s == pytest.approx(8.0) and e.reasons == ("throughput and latency",)
        assert e.impact.ops_ratio is not None and e.impact.ops_ratio <= 0.02
        assert e.impact.write_latency_ratio == pytest.approx(27.0, rel=0.02)
    in_burst = [e for e in dx.episodes if any(s <= e.start - server.t0 < end for s, end in BURSTS)]
    assert in_burst == stalled
    for e in dx.episodes:
        if not e.stall:  # between bursts, and 15 s after the last one ended
            assert e.reasons == (NO_LOAD,), (e.start - server.t0, e.reasons)
    assert dx.severity == "warn"
    assert dx.summary.startswith("every 60 s a 28 ms checkpoint writes 64 MB; 2 of 122 stalled: operations drop 99 %")
    assert "the longest, 8.0 s, wrote 64 MB (1 % of usual operations, mean write latency 27.0x)" in dx.summary
    # the mean throughput is the operations done over the time: the counters' own rise
    docs = server.documents([times[0], times[-1]])
    done = docs[1]["serverStatus"]["opcounters"]["insert"] - docs[0]["serverStatus"]["opcounters"]["insert"]
    assert dx.ops_s_mean == pytest.approx(done / (times[-1] - times[0]), rel=1e-3)
    # how the samples came: every spacing named, in the header's words and the JSON's
    (every, share), (every_2, share_2) = dx.spacings
    assert (every, every_2) == (0.1, 1.0) and share + share_2 == pytest.approx(1.0, abs=0.01)
    assert any(n.startswith("samples every 0.1 s (1 % of the time) and 1 s (99 %)") for n in dx.evidence)


def test_intermittent_bursts_draw_the_mean_line_and_their_peak(tmp_path: Path) -> None:
    """The lowest ops/s in each column of a bursty server is 0 throughout: the terminal draws
    the time-weighted mean, and its figure is the highest second's, never "max 0"."""
    from ckptdiag.analysis.timeline import ops_line
    from ckptdiag.report.terminal import timeline_text

    path, _, _ = _bursty(tmp_path)
    dx = diagnose_window((path,)).dx
    assert isinstance(dx, Diagnosis) and dx.timeline is not None
    assert ops_line(dx.timeline) == ("ops/s (mean)", "ops_s_mean")
    line = next(row for row in timeline_text(dx).plain.splitlines() if row.startswith("ops/s"))
    assert line.startswith("ops/s (mean)") and line.endswith("max 110,000")
    assert np.nanmax(dx.timeline["ops_s_mean"].to_numpy(dtype="float64")) > 1000


def _story(tmp_path: Path, server: SimServer, seconds: int) -> Diagnosis:
    path = tmp_path / "metrics.2023-11-14T22-13-20Z-00000"
    write_ftdc(path, server, [float(i) for i in range(seconds)])
    dx = diagnose_window((path,)).dx
    assert isinstance(dx, Diagnosis)
    return dx


def test_a_checkpoint_running_far_past_the_interval_is_a_finding(tmp_path: Path) -> None:
    """A checkpoint that ran 150 s at the 60 s interval: named with its length and time, and the
    verdict is never ok (the dirty data of those 150 s waited for the next)."""
    server = SimServer([(30, 31), (91, 92), (152, 302), (362, 363)], stall_in=[(0, 0)])
    dx = _story(tmp_path, server, 420)
    late = [f for f in dx.findings if f.startswith("a checkpoint ran")]
    assert late == [
        "a checkpoint ran 150 s, 2.5x the 60 s interval (from 22:15:51 UTC): no other begins while it runs, "
        "so the dirty data of all that time waits for the next"
    ]
    assert dx.severity == "warn" and not any("no checkpoint began" in f for f in dx.findings)


def test_no_checkpoint_for_intervals_under_writes_is_a_finding(tmp_path: Path) -> None:
    """Writes went on at 1,000/s but no checkpoint began for 308 s (91.5 s, the placed end of the
    last, to 400 s) at a 60 s interval: the checkpoint thread was held; the figures moved, so
    nothing is called frozen."""
    server = SimServer([(30, 31), (91, 92), (400, 401)], stall_in=[(0, 0)])
    dx = _story(tmp_path, server, 460)
    (held,) = [f for f in dx.findings if f.startswith("no checkpoint began")]
    assert held.startswith("no checkpoint began for 308 s, 5.1x the 60 s interval (from 22:14:51 UTC), while")
    assert "something held its checkpoint thread" in held and "did not move" not in held
    assert dx.severity == "warn"


def test_frozen_counters_while_the_server_answers_are_named_and_not_counted_as_time_at_a_level(
    tmp_path: Path,
) -> None:
    """The load ended at 120 s and the engine's figures froze, dirty data at 21 % (over the 20 %
    trigger), no checkpoint after the one ending at 91.5 s (its start placed mid-interval): named
    as frozen from when they stopped moving, and the frozen seconds never count as time over the
    trigger."""
    server = SimServer([(30, 31), (91, 92)], bursts=[(0, 120)], dirty_bytes=int(0.21 * (1 << 30)), stall_in=[(0, 0)])
    dx = _story(tmp_path, server, 300)
    (frozen,) = [f for f in dx.findings if f.startswith("no checkpoint began")]
    assert frozen.startswith("no checkpoint began for 208 s, 3.5x the 60 s interval (from 22:14:51 UTC)")
    assert "from 22:15:20 UTC the storage engine's figures did not move at all" in frozen
    assert dx.eviction.seconds_over_dirty_trigger == pytest.approx(120.0, abs=1.0)  # the loaded seconds only


def test_an_idle_servers_skipped_checkpoints_are_no_finding(tmp_path: Path) -> None:
    """No writes and no dirty data to speak of: a clean database's checkpoints may be skipped,
    the counters standing still; nothing is overdue."""
    server = SimServer([(30, 31), (91, 92)], bursts=[(0, 10)], stall_in=[(0, 0)])
    dx = _story(tmp_path, server, 600)
    assert not any("no checkpoint began" in f or "checkpoint ran" in f for f in dx.findings)


def test_a_containers_restarts_under_new_hostnames_are_one_member(tmp_path: Path) -> None:
    """One dbPath's diagnostic.data, written by a container restarted three times (a new hostname
    each start), given as the shell's glob with metrics.interim: one server, its restarts events,
    the JSON a single server's (`jq .verdict` an object with the severity); the directory itself
    the same."""
    import json

    from conftest import run_cli

    folder = tmp_path / "db" / "diagnostic.data"
    folder.mkdir(parents=True)
    t0 = 1_700_000_000.0
    for k, host in enumerate(("c0ffee01", "c0ffee02", "c0ffee03")):
        server = SimServer([(30, 32), (90, 93)], t0=t0 + 400 * k, uptime0_ms=1000, stall_in=[(0, 0)])
        stamp = f"2023-11-14T22-{13 + 7 * k:02d}-20Z-00000"
        write_ftdc(folder / f"metrics.{stamp}", server, [float(i) for i in range(150)], host=host)
    # the interim file: the latest samples, no metadata document of its own
    write_ftdc(tmp_path / "interim", SimServer([], t0=t0 + 1200, uptime0_ms=151_000), [float(i) for i in range(20)])
    body = (tmp_path / "interim").read_bytes()
    (folder / "metrics.interim").write_bytes(body[int.from_bytes(body[:4], "little") :])
    globbed = sorted(str(p) for p in folder.glob("metrics.*"))
    for given in (globbed, [str(folder)]):
        proc = run_cli("report", *given, "-f", "json", "--fail-on", "never")
        assert proc.returncode == 0, proc.stderr
        doc = json.loads(proc.stdout)
        assert "members" not in doc and doc["verdict"]["severity"] == "ok", given
        assert doc["server"]["host"] == "c0ffee01" and doc["window"]["restarts"] == 2
        assert doc["checkpoints"]["count"] == 6


def test_a_glob_with_an_empty_interim_file_reads_as_its_directory(tmp_path: Path) -> None:
    """mongod had just opened metrics.interim (0 bytes): the shell's glob reads as the directory,
    the empty file a note (a damaged part costs only that part); one file given alone still fails."""
    import json

    from conftest import run_cli

    folder = tmp_path / "diagnostic.data"
    folder.mkdir()
    write_ftdc(
        folder / "metrics.2023-11-14T22-13-20Z-00000", SimServer([(30, 32), (90, 93)]), [float(i) for i in range(150)]
    )
    (folder / "metrics.interim").write_bytes(b"")
    docs = []
    for given in (sorted(str(p) for p in folder.glob("metrics.*")), [str(folder)]):
        proc = run_cli("report", *given, "-f", "json", "--fail-on", "never")
        assert proc.returncode == 0, proc.stderr
        docs.append(json.loads(proc.stdout))
    assert docs[0]["checkpoints"] == docs[1]["checkpoints"] and docs[0]["verdict"] == docs[1]["verdict"]
    alone = run_cli("report", str(folder / "metrics.interim"), "-f", "json")
    assert alone.returncode != 0 and "is empty" in alone.stderr


def test_a_host_that_slept_keeps_its_metronome(tmp_path: Path) -> None:
    """An idle host checkpointing every 60 s exactly, asleep twice for ten minutes (no sample, so
    two gaps): the period is 60 s and its regularity 0, over the spacings that cross no gap (it
    read 1.26 counting the sleeps)."""
    sleeps = ((300.0, 900.0), (1500.0, 2100.0))
    starts = [30.0 + 60 * k for k in range(45)]
    starts = [s for s in starts if not any(a - 5 <= s < b for a, b in sleeps)]
    server = SimServer([(s, s + 0.5) for s in starts], stall_in=[(0, 0)])
    times = [float(i) for i in range(2700) if not any(a <= i < b for a, b in sleeps)]
    path = tmp_path / "metrics.2023-11-14T22-13-20Z-00000"
    write_ftdc(path, server, times)
    report = diagnose_window((path,))
    dx = report.dx
    assert isinstance(dx, Diagnosis) and dx.gaps == 2
    assert dx.checkpoint_period_s == pytest.approx(60.0) and dx.checkpoint_period_cv == pytest.approx(0.0, abs=0.01)


def test_every_row_says_why_in_the_thresholds_terms(tmp_path: Path) -> None:
    """Four checkpoints of one server, each with its exact reason: one that stopped writes (50
    ops/s, latency 60x) and the load came back, one the load went through unharmed, one the load
    stopped with and never came back to, one with no load before it."""
    from ckptdiag.analysis.verdict import GONE

    server = SimServer(
        [(30, 32), (90, 92), (199.5, 201), (270, 271)],
        stall_in=[(30, 31.5)],
        stall_ops=50.0,
        stall_latency_ms=60.0,
        bursts=[(0, 200)],
    )
    dx = _story(tmp_path, server, 330)
    assert [e.reasons for e in dx.episodes] == [
        ("throughput and latency",),
        (
            "throughput held at 100 % of the baseline (a stall: 60 % or less, "
            "or writes waiting 500 ms and 10x the baseline)",
            "write latency 1.0x the baseline (a stall: 2x or more)",
        ),
        (GONE,),
        (NO_LOAD,),
    ]
    assert [e.stall for e in dx.episodes] == [True, False, False, False]


def test_cpus_busy_elsewhere_are_the_cause_and_settings_become_checks(tmp_path: Path, interval_proven: None) -> None:
    """Every checkpoint stalls on a host whose CPUs other processes kept 97 % busy (FTDC's
    systemMetrics): the busy CPUs lead the causes and no setting is printed, only checks; at 30 %
    the interval setting stands."""
    from ckptdiag.advice.kinds import CPU_BUSY
    from ckptdiag.advice.rules import recommend

    checkpoints = [(30.0 + 60 * k, 33.0 + 60 * k) for k in range(9)]
    for busy, as_settings in ((97.0, False), (30.0, True)):
        server = SimServer(checkpoints, stall_ops=50.0, stall_latency_ms=60.0, cpu_busy_pct=busy, dirty_builds=True)
        dx = _story(tmp_path, server, 600)
        assert dx.host_cpu_pct_p50 == pytest.approx(busy, abs=0.5) and dx.stalls == 9
        advice = recommend(dx)
        assert (advice.causes[0].kind == CPU_BUSY) is not as_settings
        assert any(r.kind == "setting" for r in advice.recommendations) is as_settings


def test_dirty_over_the_trigger_without_application_eviction_is_never_called_eviction_behind(tmp_path: Path) -> None:
    """Dirty data at 21 % (over the 20 % trigger) the whole window, every checkpoint stalls, but
    application threads evicted nothing and waited for nothing: the finding says so in those words,
    and no cause claims eviction cannot keep up (the cited evidence would contradict it)."""
    from ckptdiag.advice.kinds import EVICTION_BEHIND
    from ckptdiag.advice.rules import recommend

    checkpoints = [(30.0 + 60 * k, 33.0 + 60 * k) for k in range(9)]
    server = SimServer(checkpoints, stall_ops=50.0, stall_latency_ms=60.0, dirty_bytes=int(0.21 * (1 << 30)))
    dx = _story(tmp_path, server, 600)
    (dirty,) = [f for f in dx.findings if f.startswith("dirty cache at or over the dirty trigger")]
    assert dirty.endswith("yet application threads evicted nothing and waited for nothing")
    advice = recommend(dx)
    assert EVICTION_BEHIND not in [c.kind for c in advice.causes]
    assert not any("cannot keep up" in line for c in advice.causes for line in (c.title, *c.evidence))


def _weeks(tmp_path: Path, durations: np.ndarray) -> Diagnosis:
    """21 days of a 7.0 server checkpointing every 60 s (each of ``durations``), sampled every 60 s."""
    days = 21
    starts = 30.0 + 60.0 * np.arange(days * 1440)
    server = SimServer(
        [(float(s), float(s + d)) for s, d in zip(starts, durations, strict=True)],
        stall_in=[(0, 0)],
        written=[int(64e6 * d / durations[0]) for d in durations],
        _fine=1.0,
    )
    return _story_at(tmp_path, server, [60.0 * i for i in range(days * 1440)])


def _story_at(tmp_path: Path, server: SimServer, times: list[float]) -> Diagnosis:
    path = tmp_path / "metrics.2023-11-14T22-13-20Z-00000"
    write_ftdc(path, server, times, chunk=1000)
    dx = diagnose_window((path,)).dx
    assert isinstance(dx, Diagnosis)
    return dx


def test_checkpoints_growing_over_three_weeks_are_a_trend_with_its_forecast(tmp_path: Path) -> None:
    """Checkpoints growing from 4 s to 30 s over 21 days: told by day, the trend fitted over the
    days' medians (+1.24 s/day, significant), a finding, and when it reaches the 60 s interval."""
    n = 21 * 1440
    dx = _weeks(tmp_path, np.linspace(4.0, 30.0, n))
    h = dx.history
    assert h is not None and h.period == "day" and len(h.rows) == 22  # 21 days from 22:13 UTC
    assert sum(r.checkpoints for r in h.rows) == len([e for e in dx.episodes if e.end is not None])
    duration, written = h.trends
    assert duration.figure == "duration_s" and duration.significant
    assert duration.per_day == pytest.approx(26.0 / 21, rel=0.05)
    assert duration.first == pytest.approx(4.0, abs=1.0) and duration.last == pytest.approx(30.0, abs=1.0)
    assert duration.days == written.days == pytest.approx(21.0, abs=0.01)
    assert duration.reaches_interval_days == pytest.approx((60.0 - duration.last) / duration.per_day)
    assert written.figure == "bytes_written" and written.significant and written.reaches_interval_days is None
    (growing,) = [f for f in dx.findings if f.startswith("checkpoint duration")]
    assert growing == (
        f"checkpoint duration {duration.first:.1f} s -> {duration.last:.1f} s over 21 days, "
        f"+{duration.per_day:.1f} s/day; "
        f"at this rate it reaches the checkpoint interval in ~{duration.reaches_interval_days:.0f} days"
    )


def test_flat_checkpoints_over_three_weeks_have_no_trend_and_no_forecast(tmp_path: Path) -> None:
    """The same three weeks with checkpoints of 2 s give or take 10 %: no significant trend, no
    forecast, no finding; the days are still told."""
    rng = np.random.default_rng(7)
    dx = _weeks(tmp_path, 2.0 + rng.uniform(-0.2, 0.2, 21 * 1440))
    h = dx.history
    assert h is not None and h.period == "day"
    assert all(not t.significant and t.reaches_interval_days is None for t in h.trends)
    assert not any(f.startswith(("checkpoint duration", "bytes a checkpoint")) for f in dx.findings)


def test_the_long_view_in_every_format(tmp_path: Path) -> None:
    """Five days of growing checkpoints: the JSON's history validates (6 days, the trends), the
    Markdown and terminal tables list every day, the HTML draws a bar a day and the trend line
    (by hand: with or without the plotting extra), its charts shading the timeline's runs."""
    import json

    from conftest import REPO

    from ckptdiag.report.document import to_document
    from ckptdiag.report.html_page import SHADED_MAX, _shaded, render_html
    from ckptdiag.report.markdown import render_markdown
    from ckptdiag.report.terminal import render_text

    jsonschema = pytest.importorskip("jsonschema")
    n = 5 * 1440
    durations = np.linspace(4.0, 30.0, n)
    starts = 30.0 + 60.0 * np.arange(n)
    checkpoints = [(float(s), float(s + d)) for s, d in zip(starts, durations, strict=True)]
    path = tmp_path / "metrics.2023-11-14T22-13-20Z-00000"
    write_ftdc(path, SimServer(checkpoints, stall_in=[(0, 0)], _fine=1.0), [60.0 * i for i in range(n)], chunk=1000)
    report = diagnose_window((path,))
    doc = to_document(report)
    jsonschema.validate(doc, json.loads((REPO / "docs" / "report-schema.json").read_text()))
    history = doc["history"]
    assert history["period"] == "day" and len(history["rows"]) == 6
    assert [t["figure"] for t in history["trends"]] == ["duration_s", "bytes_written"]
    assert [t["significant"] for t in history["trends"]] == [True, False]  # each writes 64 MiB
    for text in (render_markdown(report), render_text(report)):
        assert all(r["start"][:10] in text for r in history["rows"])
    page = render_html(report)
    assert page.count('fill="#4a7fb5"><title>') == 6 and "stroke-dasharray" in page
    # the charts shade the timeline's runs, not 7,199 spans one by one (14,000 took 30 s to draw)
    spans = _shaded(report.dx)
    assert len(report.dx.episodes) > SHADED_MAX and len(spans) <= SHADED_MAX
    assert all(any(a <= e.start <= b for a, b, _ in spans) for e in report.dx.episodes[::100])


def test_the_long_views_rows_follow_the_data_never_the_span(tmp_path: Path) -> None:
    """A recording whose clock jumped two days, then 190 years: a row for each day that holds
    samples (3), none for the days between (unknown, not "0 checkpoints"); it made 69,446 rows,
    a 16 MB JSON and a 69,554-line table. The HTML's bars stand where their days are."""
    import json

    from synth import Server, write_recording

    from ckptdiag.report.html_page import render_html

    path = write_recording(Server(seconds=300).frame(), tmp_path / "good.jsonl")
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    for first, shift in ((101, 2 * 86_400.0), (201, 6e9)):  # samples 100 on, then 200 on (line 0: the header)
        for o in lines[first:]:
            o["t"] += shift
            o["mono"] += shift
    jumped = tmp_path / "jumped.jsonl"
    jumped.write_text("".join(json.dumps(o) + "\n" for o in lines))
    report = diagnose_window((jumped,))
    h = report.dx.history
    assert h is not None and h.period == "day"
    assert [r.checkpoints for r in h.rows] == [2, 1, 2]  # 30.3 and 90.3 s; 150.3 s; 210.3 and 270.3 s
    assert [time.strftime("%Y-%m-%d", time.gmtime(r.start)) for r in h.rows] == [
        "2023-11-14",
        "2023-11-16",
        "2214-01-04",
    ]
    assert render_html(report).count('fill="#c62a2f"><title>') == 3  # a bar a day, each stalled


def test_a_long_windows_json_lists_its_worst_episodes_and_top_0_lists_all(tmp_path: Path) -> None:
    """Three days of checkpoints every minute (4,319), three of them stalls: the JSON lists the
    2,000 worst in time order, every stall among them (`listed`: worst); --top 5 lists 5, --top 0
    every one; the counts are the window's whatever is listed."""
    from ckptdiag.report.document import JSON_TOP, to_document

    n = 3 * 1440
    starts = 30.0 + 60.0 * np.arange(n)
    stalled = [float(starts[k]) for k in (100, 2000, 4000)]
    server = SimServer(
        [(float(s), float(s) + 2.0) for s in starts],
        stall_in=[(s, s + 1.5) for s in stalled],
        stall_ops=50.0,
        stall_latency_ms=60.0,
        _fine=0.5,
    )
    # every 10 s, every second around the stalls (FTDC's own spacing varies as much)
    fine = {float(t) for s in stalled for t in np.arange(s - 20.0, s + 20.0, 1.0)}
    times = sorted({*np.arange(0, n * 60.0, 10.0).tolist(), *fine})
    path = tmp_path / "metrics.2023-11-14T22-13-20Z-00000"
    write_ftdc(path, server, times, chunk=3000)
    report = diagnose_window((path,))
    doc = to_document(report)
    listed = doc["checkpoints"]["episodes"]
    assert doc["checkpoints"]["listed"] == "worst" and len(listed) == JSON_TOP
    assert doc["checkpoints"]["count"] == len(report.dx.episodes) > JSON_TOP and doc["checkpoints"]["stalls"] == 3
    assert sum(e["stall"] for e in listed) == 3 and [e["start"] for e in listed] == sorted(e["start"] for e in listed)
    assert len(to_document(report, 5)["checkpoints"]["episodes"]) == 5
    every = to_document(report, 0)["checkpoints"]
    assert every["listed"] == "all" and len(every["episodes"]) == every["count"]
    import json

    from conftest import run_cli

    proc = run_cli("report", str(path), "-f", "json", "--episodes", "all", "--fail-on", "never")
    assert json.loads(proc.stdout)["checkpoints"] == every
