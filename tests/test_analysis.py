"""The analysis: episodes, their placement and cost, the baseline, the verdict, on frames whose
checkpoints are known exactly (tests/synth.py) and on real FTDC."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from conftest import shared_path
from synth import Server

from ckptdiag.analysis.diagnosis import diagnose, hurts
from ckptdiag.analysis.episode_table import Episodes
from ckptdiag.analysis.episodes import find_episodes, period
from ckptdiag.analysis.results import Diagnosis
from ckptdiag.analysis.series import derive
from ckptdiag.model.engine_config import EvictionSettings, resolve
from ckptdiag.model.facts import ServerFacts
from ckptdiag.model.window import WHOLE

F42 = "mongodb-4.2.12__b1ron__metrics.2021-03-15T02-21-47Z-00000"
F70_IDLE = "mongodb-7.0.0-rc6__b1ron__metrics.2024-04-16T11-34-42Z-00000"


def run(server: Server, **kw: object) -> object:
    return diagnose(derive(server.frame()), ServerFacts(version="7.0.0"), **kw)  # type: ignore[arg-type]


def _matched(found: list[float], truth: list[float], tol: float) -> int:
    return sum(any(abs(f - s) <= tol for f in found) for s in truth)


def test_rates_never_cross_gaps_restarts_or_decreases() -> None:
    frame = pd.DataFrame(
        {
            "t": [0.0, 1, 2, 3, 4, 5],
            "ops.insert": [10, 20, 5, 15, 25, 30],
            "segment": [0, 0, 1, 1, 1, 1],
            "gap_before": [False, False, False, False, True, False],
        }
    )
    got = derive(frame)["ops_s"].tolist()
    assert np.isnan(got[0]) and got[1] == 10 and np.isnan(got[2]) and got[3] == 10
    assert np.isnan(got[4]) and got[5] == 5
    # a counter that went back inside a segment is a reset: no rate, never negative
    frame["segment"] = 0
    frame["gap_before"] = False
    assert np.isnan(derive(frame)["ops_s"].iloc[2])


def test_rates_use_the_real_time_between_samples() -> None:
    frame = pd.DataFrame({"t": [0.0, 1.0, 3.0], "ops.insert": [0, 100, 300], "segment": 0, "gap_before": False})
    assert derive(frame)["ops_s"].tolist()[1:] == [100.0, 100.0]


def test_write_await_reads_tick_counters_across_their_32_bit_wrap() -> None:
    # the same figure disk_rates gives: 400 ms of write ticks over 100 writes
    frame = pd.DataFrame(
        {
            "t": [0.0, 1.0],
            "segment": [0, 0],
            "gap_before": [False, False],
            "disk.vda.wr_ios": [1000, 1100],
            "disk.vda.wr_sectors": [0, 2048],
            "disk.vda.wr_ticks": [2**32 - 100, 300],
        }
    )
    assert derive(frame)["disk.vda.w_await_ms"].iloc[1] == 4.0


def test_histogram_p99_from_bucket_deltas() -> None:
    # 100 writes in the interval: 98 under 1 ms, 2 in the 64 ms bucket -> p99 is that bucket
    frame = pd.DataFrame(
        {
            "t": [0.0, 1.0],
            "segment": 0,
            "gap_before": False,
            "hist.writes.512": [1000, 1098],
            "hist.writes.65536": [5, 7],
        }
    )
    assert derive(frame)["write_p99_ms"].iloc[1] == 65.536


def test_stalling_checkpoints_are_found_placed_and_judged_critical() -> None:
    server = Server()
    dx = run(server)
    truth = [s for s, _ in server.checkpoints()]
    assert len(dx.episodes) == len(truth) == 10  # type: ignore[attr-defined]
    for e, (s, end) in zip(dx.episodes, server.checkpoints(), strict=True):  # type: ignore[attr-defined]
        assert abs(e.start - (s + 1_700_000_000)) <= 1.0
        assert e.duration_s == pytest.approx(2.0) and e.exact_duration
        assert e.stall and (e.impact.ops_ratio or 1) < 0.6 and (e.impact.write_latency_ratio or 0) > 2
        assert e.bytes_written == pytest.approx(400 * 2**20, rel=0.02)
        assert e.impact.util_pct_peak == 100.0
        del end
    assert dx.severity == "critical" and dx.checkpoint_period_s == pytest.approx(60)  # type: ignore[attr-defined]
    assert "every 60 s a 2.0 s checkpoint writes 400 MB" in dx.summary  # type: ignore[attr-defined]
    assert "disk vda at 100 % util" in dx.summary  # type: ignore[attr-defined]


def test_healthy_checkpoints_are_found_and_the_verdict_is_ok() -> None:
    dx = run(Server(stall=False))
    assert len(dx.episodes) == 10 and not any(e.stall for e in dx.episodes)  # type: ignore[attr-defined]
    assert dx.severity == "ok"  # type: ignore[attr-defined]


def test_a_checkpoint_shorter_than_a_sample_is_found_and_placed_by_its_own_timing() -> None:
    server = Server(duration=0.2, first_start=30.55)
    dx = run(server)
    assert len(dx.episodes) == 10  # type: ignore[attr-defined]
    for e, (s, _) in zip(dx.episodes, server.checkpoints(), strict=True):  # type: ignore[attr-defined]
        assert 30 < e.start - 1_700_000_000 - (s - 30.55) <= 31  # inside the right interval
        assert e.duration_s == pytest.approx(0.2)


def test_the_end_is_where_total_time_moved_even_with_the_progress_state_still_up() -> None:
    # 7.1+ engines record the checkpoint's time before they clear its progress state: a sample
    # can show the new total with the state still set (the lab's 18 s checkpoints did)
    server = Server(duration=18.0, first_start=45.5, period=63.0, seconds=280, flag_lag_s=0.8)
    dx = run(server)
    assert len(dx.episodes) == len(server.checkpoints()) == 4  # type: ignore[attr-defined]
    for e, (s, _) in zip(dx.episodes, server.checkpoints(), strict=True):  # type: ignore[attr-defined]
        assert e.duration_s == pytest.approx(18.0)
        assert e.exact_duration
        assert abs(e.start - 1_700_000_000 - s) <= 1.0


def test_every_few_seconds_and_back_to_back_checkpoints() -> None:
    for server in (Server(period=5.0, duration=1.0), Server(period=3.0, duration=2.6, seconds=120)):
        dx = run(server)
        truth = [s + 1_700_000_000 for s, _ in server.checkpoints()]
        found = [e.start for e in dx.episodes]  # type: ignore[attr-defined]
        assert _matched(found, truth, 1.0) >= 0.9 * len(truth)
        assert dx.checkpoint_period_s == pytest.approx(server.period, abs=0.5)  # type: ignore[attr-defined]
        # little time away from checkpoints: the baseline is the loaded half-minute before the first
        base = dx.baseline  # type: ignore[attr-defined]
        assert base.samples == 28 and base.ops_s == server.ops
        assert dx.severity != "ok"  # type: ignore[attr-defined]
    assert run(Server(period=5.0, duration=1.0)).severity == "critical"  # type: ignore[attr-defined]


def test_back_to_back_stalling_checkpoints_are_all_stalls() -> None:
    # the load never "comes back" between them, but the operations that complete still show the
    # wait: the stall goes on, the client did not go away
    server = Server(period=3.0, duration=2.6, seconds=120)
    dx = run(server)
    assert dx.severity == "critical" and dx.stalls >= 0.9 * len(dx.episodes)  # type: ignore[attr-defined]


def test_samples_every_10_seconds_still_place_checkpoints() -> None:
    server = Server(sample_s=10.0, seconds=1200)
    dx = run(server)
    truth = [s + 1_700_000_000 for s, _ in server.checkpoints()]
    assert len(dx.episodes) == len(truth)  # type: ignore[attr-defined]
    assert all(e.duration_s == pytest.approx(2.0) for e in dx.episodes)  # type: ignore[attr-defined]
    assert _matched([e.start for e in dx.episodes], truth, 10.0) == len(truth)  # type: ignore[attr-defined]


def test_a_gap_and_a_restart_invent_nothing() -> None:
    frame = Server(stall=False).frame()
    gap = (frame["t"] > frame["t"].iloc[0] + 100) & (frame["t"] < frame["t"].iloc[0] + 200)
    frame = frame[~gap].copy()
    frame.loc[frame.index[100], "gap_before"] = True
    # a restart at 400 s: every counter starts again from zero
    later = frame["t"] >= frame["t"].iloc[0] + 400
    for column in [c for c in frame.columns if c.startswith(("ops.", "lat.", "ckpt.", "disk."))]:
        if column != "ckpt.running":
            frame.loc[later, column] = frame.loc[later, column] - frame.loc[later, column].iloc[0]
    frame.loc[later, "segment"] = 1
    d = derive(frame)
    assert (d["ops_s"].dropna() >= 0).all() and np.isfinite(d["ops_s"].dropna()).all()
    dx = diagnose(d, ServerFacts(), gaps=1, restarts=1)
    # checkpoints at 150 s (in the gap) and the one whose start counter was rebased are not invented
    starts = [round(e.start - frame["t"].iloc[0]) for e in dx.episodes]
    assert 150 not in starts and all(s < 600 for s in starts)
    assert dx.gaps == 1 and dx.restarts == 1
    assert any("gaps" in n for n in dx.evidence) and any("restart" in n for n in dx.evidence)


def test_without_checkpoint_statistics_disk_bursts_stand_in() -> None:
    server = Server(counters=False, stall=False)
    d = derive(server.frame())
    episodes = find_episodes(d)
    assert [e.evidence for e in episodes] == ["disk-burst"] * 10
    assert period(Episodes.of(episodes))[0] == pytest.approx(60)
    dx = diagnose(d, ServerFacts())
    assert any("disk write bursts" in n for n in dx.evidence)


def test_load_that_stops_with_a_checkpoint_is_not_a_stall() -> None:
    dx = run(Server(stall=False, load_stops_at=270.5))
    assert not any(e.stall for e in dx.episodes)  # type: ignore[attr-defined]
    assert any("did not come back" in " ".join(e.reasons) for e in dx.episodes)  # type: ignore[attr-defined]


def test_eviction_settings_from_a_config_string() -> None:
    config = "eviction=(threads_min=4,threads_max=8),eviction_dirty_target=2,eviction_dirty_trigger=512MB"
    s = resolve(ServerFacts(config_string=config), 4 * 2**30).eviction
    assert (s.dirty_target.value, s.dirty_trigger.value, s.threads_max.value, s.source) == (
        2.0,
        12.5,
        8,
        "configString",
    )
    assert s.updates_target.value == 1.0 and s.updates_trigger.value == 6.25
    assert EvictionSettings.defaults().source.startswith("version defaults")


def test_the_checkpoint_rich_42_file_all_13_checkpoints_with_their_counters_durations() -> None:
    from ckptdiag.sources.ftdc import read_ftdc

    frame = read_ftdc([shared_path("ftdc", F42)]).frame
    dx = diagnose(derive(frame), ServerFacts(version="4.2.12"))
    assert len(dx.episodes) == 13
    # "most recent time" after each long one, read by hand from the chunks
    long = [round(e.duration_s * 1000) for e in dx.episodes if e.duration_s and e.duration_s > 0.5]
    assert long == [1137, 2079, 1592, 2529, 2442, 1783]
    assert all(e.exact_duration for e in dx.episodes)
    assert dx.checkpoint_period_s == pytest.approx(60, abs=2)
    # bytes written for checkpoint while each ran: the 2.5 s one wrote 63.0 MB
    assert dx.episodes[10].bytes_written == 228818944 - 165797888


def test_the_idle_70_file_is_ok_without_a_stall() -> None:
    from ckptdiag.sources.ftdc import read_ftdc

    frame = read_ftdc([shared_path("ftdc", F70_IDLE)]).frame
    dx = diagnose(derive(frame), ServerFacts(version="7.0.0"))
    assert dx.severity == "ok" and dx.stalls == 0
    assert dx.samples == 19007 and len(dx.episodes) > 300


def test_derive_in_pieces_equals_derive_in_one_go() -> None:
    from ckptdiag.analysis.pieces import PieceChain
    from ckptdiag.sources.ftdc import FtdcData, file_pieces, mark_block, read_ftdc

    path = shared_path("ftdc", F42)
    whole = derive(read_ftdc([path]).frame)
    for rows in (50, 299, 301):  # seams inside chunks' worth of rows and exactly on them
        chain = PieceChain(mark_block)
        for piece in file_pieces(path, False, WHOLE, rows, FtdcData(None, [], []), {}):
            chain.add(piece)
        parts, gaps, restarts = chain.result()
        assert gaps == 0 and restarts == 0
        assert list(parts.columns) == list(whole.columns)
        assert parts.index.equals(whole.index)
        pd.testing.assert_frame_equal(
            parts.astype("float64"), whole.astype("float32").astype("float64"), check_exact=False, rtol=1e-6
        )


def test_slow_replies_and_skipped_ticks_are_evidence() -> None:
    frame = Server(seconds=200).frame()
    frame["rtt_ms"] = 2.0
    frame.loc[frame.index[91], "rtt_ms"] = 2500.0  # during the checkpoint at 90.3 s
    frame["skipped"] = 0
    frame.loc[frame.index[92], "skipped"] = 2
    dx = diagnose(derive(frame), ServerFacts())
    assert any(
        "1 serverStatus replies took 1 s or more (slowest 2.5 s); 1 checkpoints had one" in n for n in dx.evidence
    )
    assert any("2 sampling ticks skipped" in n for n in dx.evidence)


def test_stalls_while_no_checkpoint_runs_warn_without_blaming_checkpoints() -> None:
    # healthy checkpoints; the server stalls twice on its own (eviction of a huge page, a lock):
    # the checkpoints stay innocent, both pauses are listed with their figures, and the verdict
    # warns (never more: they are not the checkpoints')
    dx = run(Server(stall=False, pauses=((100.2, 103.2), (400.5, 401.8))))
    assert dx.severity == "warn" and not any(e.stall for e in dx.episodes)  # type: ignore[attr-defined]
    assert "writes stalled 2 times while no checkpoint ran" in dx.findings  # type: ignore[attr-defined]
    assert "0 of 10 checkpoints stalled the server; 0 cost throughput" in dx.findings  # type: ignore[attr-defined]
    others = dx.other_stalls  # type: ignore[attr-defined]
    assert [round(o.start - 1_700_000_000) for o in others] == [100, 400]
    assert others[0].duration_s == pytest.approx(3.0) and (others[0].ops_ratio or 1) < 0.1
    assert (others[0].write_latency_ratio or 0) > 2 and others[0].write_latency_kind == "mean"
    assert any("2 stalls while no checkpoint ran" in note for note in dx.evidence)  # type: ignore[attr-defined]
    # a stall inside a checkpoint is the checkpoint's, not another one
    dx = run(Server(stall=False, pauses=((31.0, 32.0),)))
    assert dx.other_stalls == () and dx.episodes[0].stall  # type: ignore[attr-defined]
    # load that goes away is not a stall
    assert run(Server(stall=False, load_stops_at=200.5)).other_stalls == ()  # type: ignore[attr-defined]


def test_a_stall_outside_checkpoints_says_what_the_counters_saw() -> None:
    # the lab's own pauses: updates in cache reach eviction_updates_target (half the dirty target)
    # and eviction of those pages holds writers up
    frame = Server(stall=False, pauses=((100.2, 103.2),)).frame()
    rel = frame["t"].to_numpy() - frame["t"].iloc[0]
    frame["cache.updates_bytes"] = np.where((rel >= 95) & (rel <= 101), 0.026, 0.01) * 2**30
    dx = diagnose(derive(frame), ServerFacts(version="7.0.0"))
    (other,) = dx.other_stalls
    assert other.updates_pct_peak == pytest.approx(2.6) and other.updates_at_target
    assert "writes stalled 1 time while no checkpoint ran; 1 with the updates in cache at their eviction target" in (
        dx.findings
    )
    assert list(other.seen) == ["updates in cache at the eviction updates target (2.5 %)"]
    assert "(updates in cache at the eviction updates target (2.5 %))" in dx.evidence[-1]


def _as_member(frame: pd.DataFrame, secondary: bool) -> pd.DataFrame:
    """The same server as a replica-set member: on a secondary its writes are replication's
    (oplog entries applied, in batches whose time rises with their latency); reads stay client's."""
    out = frame.copy()
    writes = out["ops.insert"].to_numpy()
    out["repl.primary"] = 0.0 if secondary else 1.0
    out["repl.secondary"] = 1.0 if secondary else 0.0
    if secondary:
        out["repl.apply.ops"] = writes
        out["repl.apply.batches"] = np.floor(writes / 100)  # batches of ~100 entries
        # a batch takes what its entries took: the writes' latency, summed
        out["repl.apply.batch_ms"] = out["lat.writes.latency_us"].to_numpy() / 1000 / 100
        out["ops.insert"] = 0.0
        out["lat.writes.ops"] = 0.0
        out["lat.writes.latency_us"] = 0.0
    return out


def test_a_secondary_whose_apply_stalls_in_checkpoints_is_critical_and_named() -> None:
    server = Server(stall_ops=50.0, stall_latency_ms=40.0)
    as_secondary = diagnose(derive(_as_member(server.frame(), secondary=True)), ServerFacts(version="7.0.21"))
    assert as_secondary.role == "secondary" and as_secondary.severity == "critical"
    assert as_secondary.stalls >= 0.9 * len(as_secondary.episodes)
    assert as_secondary.summary.startswith("secondary: ")
    assert any("oplog entries applied plus reads" in note for note in as_secondary.evidence)
    assert as_secondary.baseline.ops_s == pytest.approx(server.ops, rel=0.02)  # applied + reads
    # the same server as primary: as before, judged on its client operations
    as_primary = diagnose(derive(_as_member(server.frame(), secondary=False)), ServerFacts(version="7.0.21"))
    plain = diagnose(derive(server.frame()), ServerFacts(version="7.0.21"))
    assert as_primary.role == "primary" and plain.role is None
    assert (as_primary.severity, as_primary.stalls, as_primary.summary) == (plain.severity, plain.stalls, plain.summary)
    assert [e.impact.ops_ratio for e in as_primary.episodes] == [e.impact.ops_ratio for e in plain.episodes]


def test_a_stall_while_the_hosts_cpus_are_busy_says_so() -> None:
    # a busy host (another process on the cores): the pause is listed with the CPU figure, which
    # FTDC (systemMetrics.cpu) and a recording on the server's host both carry as host.cpu.*
    frame = Server(stall=False, pauses=((100.2, 103.2),)).frame()
    rel = frame["t"].to_numpy() - frame["t"].iloc[0]
    busy = (rel >= 99) & (rel <= 104)
    # 2 CPUs, 2,000 ms of CPU time a second: 30 % busy, 100 % in the pause
    frame["host.cpu.user_ms"] = np.cumsum(np.where(busy, 1800.0, 500.0))
    frame["host.cpu.system_ms"] = np.cumsum(np.where(busy, 200.0, 100.0))
    frame["host.cpu.idle_ms"] = np.cumsum(np.where(busy, 0.0, 1300.0))
    frame["host.cpu.iowait_ms"] = np.cumsum(np.where(busy, 0.0, 100.0))
    d = derive(frame)
    assert np.nanmedian(d["host_cpu_pct"]) == pytest.approx(30.0)
    (other,) = diagnose(d, ServerFacts(version="7.0.0")).other_stalls
    assert list(other.seen) == ["the host's CPUs 100 % busy (all processes): the server may have waited for a CPU"]
    # without the CPU figures the stall is listed as before, with nothing seen
    (other,) = diagnose(derive(Server(stall=False, pauses=((100.2, 103.2),)).frame()), ServerFacts()).other_stalls
    assert other.seen == ()


def test_checkpoints_that_hurt_while_the_host_is_saturated_say_so_in_the_evidence() -> None:
    frame = Server(seconds=300).frame()  # stalls in every checkpoint
    rel = frame["t"].to_numpy() - frame["t"].iloc[0]
    frame["host.cpu.user_ms"] = np.cumsum(np.full(rel.size, 1950.0))  # 2 CPUs, 97.5 % busy throughout
    frame["host.cpu.idle_ms"] = np.cumsum(np.full(rel.size, 50.0))
    dx = diagnose(derive(frame), ServerFacts())
    hurting = sum(1 for e in dx.episodes if hurts(e))
    assert hurting and any(
        f"the host's CPUs were 98 % busy (all processes) in {hurting} of the {hurting} checkpoints that hurt" in n
        for n in dx.evidence
    ), dx.evidence
    assert not any("host's CPUs" in n for n in diagnose(derive(Server(seconds=300).frame()), ServerFacts()).evidence)


def test_nanmedian_is_numpys_median_of_the_finite_values() -> None:
    from ckptdiag.analysis.stats import nanmedian

    rng = np.random.default_rng(3)
    for n in range(60):
        for _ in range(10):
            values = rng.normal(size=n) * 10.0 ** rng.integers(-5, 10)
            values[rng.random(n) < 0.2] = np.nan
            if n > 4:
                values[:2] = [np.inf, -np.inf]
            finite = values[np.isfinite(values)]
            assert nanmedian(values) == (float(np.median(finite)) if finite.size else None)


def test_a_local_baseline_keeps_every_other_figure_of_the_whole_windows() -> None:
    # local_baselines builds each Baseline field by field: a field added to Baseline must not be lost
    import dataclasses

    from ckptdiag.analysis.baseline import baseline, local_baselines
    from ckptdiag.analysis.columns import Columns
    from ckptdiag.analysis.window import pick_disk

    d = derive(Server(seconds=900).frame())
    cols = Columns.of(d, pick_disk(d, ()))
    whole = dataclasses.replace(baseline(cols, np.isfinite(cols.ops_s)), estimated=True, disk_util_pct=12.5)
    rows = np.isfinite(cols.ops_s)
    (local,) = local_baselines(cols, rows, whole, cols.t[[600]], cols.t[[602]])
    assert local.samples < whole.samples  # the window before it, not the whole
    changed = {"samples", "ops_s", "write_lat_ms", "write_p99_ms", "read_lat_ms"}
    for f in dataclasses.fields(local):
        if f.name not in changed:
            assert getattr(local, f.name) == getattr(whole, f.name), f.name


@pytest.mark.parametrize(
    ("server", "expected"),
    [
        (Server(seconds=300, stall=True), "throughput and latency"),
        (Server(seconds=300, ops=0.0, stall=False), "no load in the 3 s before it"),
        (Server(seconds=300, ops=10.0, stall_ops=1.0, stall_latency_ms=40.0), "no load in the 3 s before it"),
        (Server(seconds=300, stall_ops=900.0, stall_latency_ms=40.0), "throughput held at 90 % of the baseline"),
        (Server(seconds=300, stall_ops=100.0, stall_latency_ms=1.2), "write latency 1.2x the baseline"),
        (Server(seconds=300, load_stops_at=151.0), "load stopped with it and did not come back"),
        # throughput held at 90 % while every write waited 600 ms: writes froze (a short freeze
        # sampled once a second hides in its throughput); 400 ms, or 600 ms against a baseline of
        # 100 ms (6x), is not a freeze
        (Server(seconds=300, stall_ops=900.0, stall_latency_ms=600.0), "writes froze: mean 600 ms write latency"),
        (Server(seconds=300, stall_ops=900.0, stall_latency_ms=400.0), "throughput held at 90 % of the baseline"),
        (
            Server(seconds=300, latency_ms=100.0, stall_ops=900.0, stall_latency_ms=600.0),
            "throughput held at 90 % of the baseline",
        ),
    ],
    ids=["stall", "idle", "little-load", "throughput-held", "latency-within", "load-gone", "froze", "waited", "slow"],
)
def test_every_episode_says_why_it_is_or_is_not_a_stall(server: Server, expected: str) -> None:
    """Every episode carries its reasons: the stall's, or why not, in the thresholds' own terms
    (#28); the JSON gives them for every episode, the terminal in a word or two."""
    from ckptdiag.report.document import Report, ReportSource, to_document
    from ckptdiag.report.terminal import episode_rows

    dx = run(server)
    assert isinstance(dx, Diagnosis) and dx.episodes and all(e.reasons for e in dx.episodes)
    assert any(expected in r for e in dx.episodes for r in e.reasons), [e.reasons for e in dx.episodes]
    if expected.startswith(("throughput and latency", "writes froze")):
        assert all(e.stall for e in dx.episodes)
    else:
        assert not any(e.stall and expected in " ".join(e.reasons) for e in dx.episodes)
    doc = to_document(Report(dx, ReportSource("recording", "x")))
    assert all(ep["reasons"] for ep in doc["checkpoints"]["episodes"])
    _cols, rows = episode_rows(dx, 25)
    assert all(row[-1] for row in rows)


def test_the_headline_names_the_longest_checkpoint_the_json_lists() -> None:
    """The usual checkpoint of a mostly idle 4.2 file is 11 ms; its loaded ones ran 1-2.5 s and
    wrote 47-66 MB at 92-100 % util: the headline names the longest, as the episodes show it (#28)."""
    import json
    import subprocess
    import sys

    from conftest import shared_path

    path = shared_path("ftdc", F42)
    proc = subprocess.run(
        [sys.executable, "-m", "ckptdiag", "report", str(path), "-f", "json", "--fail-on", "never"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    doc = json.loads(proc.stdout)
    episodes = [e for e in doc["checkpoints"]["episodes"] if e["duration_s"] is not None]
    longest = max(episodes, key=lambda e: e["duration_s"])
    summary = doc["verdict"]["summary"]
    assert f"the longest, {longest['duration_s']:.1f} s" in summary
    assert f"at {longest['start'][11:19]} UTC" in summary
    assert f"disk {longest['disk']['util_pct_peak']:.0f} % util" in summary


def test_the_windows_mean_throughput_is_time_weighted() -> None:
    """A server busy 10 s at 1,000 ops/s sampled every 0.1 s, then idle 100 s sampled every 10 s
    (as FTDC spaces its samples): 10,000 operations in 110 s is 90.9 ops/s, not the 909 of the
    unweighted mean of the intervals' rates (#28)."""
    import pandas as pd

    frame = Server(seconds=300).frame()
    busy = frame.iloc[:101].copy()
    busy["t"] = frame["t"].iloc[0] + 0.1 * np.arange(101)
    ops = [c for c in frame.columns if c.startswith("ops.")]
    for c in ops:
        busy[c] = frame[c].iloc[0] + (100 if c == ops[0] else 0) * np.arange(101)
    idle = busy.iloc[[-1] * 10].copy()
    idle["t"] = busy["t"].iloc[-1] + 10.0 * np.arange(1, 11)
    dx = run_frame(pd.concat([busy, idle], ignore_index=True))
    assert dx.ops_s_mean == pytest.approx(10_000 / 110, rel=0.02)


def run_frame(frame: object) -> Diagnosis:
    dx = diagnose(derive(frame), ServerFacts(version="7.0.0"))  # type: ignore[arg-type]
    assert isinstance(dx, Diagnosis)
    return dx


def test_uneven_sampling_names_every_spacing_with_its_share_of_the_time() -> None:
    """FTDC sampling every 0.1 s while busy, 1 s, and 10 s while idle: the note names all three
    (the 10 s spacing is a fiftieth of the samples but half the time), never '0.1 to 1 s' (#28)."""
    from ckptdiag.analysis.evidence import _uneven_sampling
    from ckptdiag.analysis.stats import spacings

    mixed = np.array([0.1] * 4000 + [1.0] * 600 + [10.0] * 100)
    (note,) = _uneven_sampling(mixed.size, spacings(mixed))
    assert note.startswith("samples every 0.1 s (20 % of the time), 1 s (30 %) and 10 s (50 %)")
    even = np.array([1.0] * 100 + [1.02] * 50)
    assert _uneven_sampling(even.size, spacings(even)) == []


def test_a_checkpoint_cut_off_by_the_windows_end_never_alone_decides_the_verdict() -> None:
    """A live run whose duration ended inside its only (stalled) checkpoint: warn, not critical,
    and the episode says it was cut off; with a finished stall before it the verdict is critical (#28)."""
    cut_only = run(Server(seconds=64, first_start=58.5, duration=8))
    assert isinstance(cut_only, Diagnosis)
    (e,) = cut_only.episodes
    assert e.end is None and e.stall and any("still running when the window ended" in r for r in e.reasons)
    assert cut_only.severity == "warn"
    both = run(Server(seconds=124, first_start=58.5, duration=8))
    assert isinstance(both, Diagnosis) and both.severity == "critical"


def test_the_terminal_table_shows_why_where_it_fits() -> None:
    """At 80 columns a why column would squeeze every figure: the table keeps its figures and
    says where the reasons are; at 130 it shows each episode's why (#28)."""
    from ckptdiag.report.document import Report, ReportSource
    from ckptdiag.report.terminal import render_text

    dx = run(Server(seconds=300, ops=0.0, stall=False))
    assert isinstance(dx, Diagnosis)
    report = Report(dx, ReportSource("recording", "x"))
    narrow, wide = render_text(report, width=80), render_text(report, width=130)
    assert "why each is a stall or not: -f md or -f json" in narrow and "no load" not in narrow
    assert "why" in wide and "no load" in wide


def test_local_baselines_taken_together_are_each_episodes_own_medians() -> None:
    """The medians of episodes with as many samples are taken in one partition: the same values
    as each episode's own nanmedian, with NaN among the samples, odd and even counts, and episodes
    with too few samples left to the whole window's."""
    import dataclasses

    from ckptdiag.analysis.baseline import BASELINE_WINDOW_S, baseline, local_baselines
    from ckptdiag.analysis.columns import Columns
    from ckptdiag.analysis.stats import nanmedian
    from ckptdiag.analysis.window import pick_disk

    d = derive(Server(seconds=3600).frame())
    cols = Columns.of(d, pick_disk(d, ()))
    rng = np.random.default_rng(3)
    lat = cols.write_lat_ms.copy()
    lat[rng.random(cols.t.size) < 0.01] = np.nan
    cols = dataclasses.replace(cols, ops_s=rng.normal(1000, 100, cols.t.size), write_lat_ms=lat)
    rows = rng.random(cols.t.size) < 0.9
    whole = baseline(cols, rows)
    starts = cols.t[[5, 400, 401, 900, 1500, 2200, 3000]] + 0.5
    got = local_baselines(cols, rows, whole, starts, starts + 2)
    for k, start in enumerate(starts):
        a, b = np.searchsorted(cols.t, start - BASELINE_WINDOW_S), np.searchsorted(cols.t, start)
        picked = np.flatnonzero(rows[a:b]) + a
        if picked.size < 10:
            b = np.searchsorted(cols.t, start + 2 + BASELINE_WINDOW_S)
            picked = np.flatnonzero(rows[a:b]) + a
        assert got[k].samples == picked.size
        assert got[k].ops_s == nanmedian(cols.ops_s[picked])
        assert got[k].write_lat_ms == nanmedian(cols.write_lat_ms[picked])


def test_a_counter_reset_without_a_restart_costs_one_row_in_pieces_of_any_size() -> None:
    """A counter that starts again low without a restart (a statistics reset; a file that follows
    another server's) is a reset at that row alone: the checkpoints after it keep their
    durations, and every figure is the same however the window is cut into pieces (the rows after
    it were compared with the old run's highest, read as resets again, and lost their durations
    for as long as a piece ran)."""
    from ckptdiag.analysis.pieces import PieceChain
    from ckptdiag.model.samples import SampleBlock
    from ckptdiag.sources.ftdc import mark_block, mark_continuity

    frame = Server(seconds=1200).frame().reset_index(drop=True)
    frame.loc[:599, "ckpt.total_ms"] += 10_000_000.0  # before row 600: another run's high counter
    whole = derive(mark_continuity(frame.copy()))
    total = whole["ckpt_total_ms"].to_numpy()
    assert np.isnan(total[600]) and np.isfinite(total[601:]).all()
    assert np.nansum(total[601:]) == frame["ckpt.total_ms"].iloc[-1] - frame["ckpt.total_ms"].iloc[600]
    for rows in (97, 600, 601, 1200):
        chain = PieceChain(mark_block)
        for at in range(0, len(frame), rows):
            chain.add(SampleBlock.of_frame(frame.iloc[at : at + rows]))
        parts, _, _ = chain.result()
        np.testing.assert_array_equal(parts["ckpt_total_ms"].to_numpy(), total.astype("float32"))


def test_the_derivation_reads_only_the_sample_columns_it_names() -> None:
    """A long window's samples are held with the columns :func:`series.reads` names alone: the
    derivation, given every column a sample may have, asks for no other, and gives the same
    figures from those alone."""
    from ckptdiag.analysis.series import derived_columns, reads
    from ckptdiag.model import catalogue, hostcpu
    from ckptdiag.model.disk import FIELD_INDEX
    from ckptdiag.model.samples import SampleBlock

    names = {m.name for m in catalogue.METRICS} | {f"disk.vda.{f}" for f in FIELD_INDEX}
    names |= {hostcpu.PREFIX + f for f in (*hostcpu.FIELDS, *hostcpu.IDLE)}
    names |= {"hist.writes.128", "hist.writes.1024", "hist.reads.128", "seq", "mono", "server_ms", "rtt_ms"}
    rng = np.random.default_rng(7)
    n = 200
    columns = {name: np.cumsum(rng.integers(0, 50, n)).astype("float64") for name in sorted(names)}
    columns |= {"t": 1.7e9 + np.arange(n, dtype="float64"), "segment": np.zeros(n), "gap_before": np.zeros(n)}
    columns |= {"wt_missing": np.zeros(n), "skipped": np.zeros(n)}
    for flag in ("ckpt.running", "repl.secondary", "repl.primary"):
        columns[flag] = rng.integers(0, 2, n).astype("float64")
    asked: list[str] = []

    class Spy(SampleBlock):
        def values(self, name: str) -> np.ndarray:
            asked.append(name)
            return super().values(name)

    full = derived_columns(Spy(columns))
    assert asked and sorted({name for name in asked if not reads(name)}) == []
    assert not all(reads(name) for name in columns)  # others there are left out
    kept = derived_columns(SampleBlock({name: v for name, v in columns.items() if reads(name)}))
    assert list(kept) == list(full)
    for name in full:
        np.testing.assert_array_equal(kept[name], full[name])
