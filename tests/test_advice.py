"""Recommendations: the checkpoint model against the seeds' figures, the version traps, the
settings in force, the commands, and that a healthy server is left alone."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from conftest import shared_path
from synth import Server, disk_busy

from ckptdiag.advice.model import CheckpointShape, at_interval, checkpoint_shape
from ckptdiag.advice.rules import Advice, recommend
from ckptdiag.analysis.diagnosis import Diagnosis, diagnose
from ckptdiag.analysis.series import derive
from ckptdiag.model.engine_config import merge_config
from ckptdiag.model.engine_config import resolve as current_settings
from ckptdiag.model.facts import ServerFacts
from ckptdiag.report.document import Report, ReportSource, to_document
from ckptdiag.report.html_page import render_html
from ckptdiag.report.markdown import render_markdown
from ckptdiag.report.terminal import render_text

MB = 2**20
GB = 2**30

# seed 004's table: interval -> (dirty data per checkpoint MB, duration s, write p99 inside ms)
SEED_004 = {30: (40, 0.8, 45), 60: (80, 1.8, 85), 120: (160, 3.5, 150), 300: (400, 8.2, 280)}
SEED_004_P99_BETWEEN_MS = 15


def test_seed_004_interval_table_from_its_60_s_row() -> None:
    mb, duration, p99 = SEED_004[60]
    now = CheckpointShape(60, mb * MB, duration, p99, SEED_004_P99_BETWEEN_MS)
    for interval, (want_mb, want_s, want_p99) in SEED_004.items():
        got = at_interval(now, interval)
        assert got.bytes_written is not None and got.duration_s is not None and got.p99_inside_ms is not None
        assert got.bytes_written / MB == pytest.approx(want_mb)  # bytes scale with the interval, exactly
        assert got.duration_s == pytest.approx(want_s, rel=0.125)
        if interval <= 120:
            assert got.p99_inside_ms == pytest.approx(want_p99, rel=0.12)
        else:
            # at 300 s the model is pessimistic (documented): never optimistic
            assert want_p99 <= got.p99_inside_ms <= want_p99 * 1.35


def _seed_004_server(**kw: Any) -> Server:
    # 2,000 writes/s; every 60 s a 1.8 s checkpoint writes 80 MB and writes slow down
    settings: dict[str, Any] = {"stall_ops": 600, "stall_latency_ms": 20, **kw}
    return Server(seconds=900, period=60, duration=1.8, mb_per_s=80 / 1.8, ops=2000, **settings)


def _facts(version: str, **kw: Any) -> ServerFacts:
    return ServerFacts(version=version, **kw)


def _advise(server: Server, facts: ServerFacts) -> tuple[Diagnosis, Advice]:
    dx = diagnose(derive(server.frame()), facts)
    return dx, recommend(dx)


def _by_id(advice: Advice) -> dict[str, Any]:
    return {r.id: r for r in advice.recommendations}


def test_seed_004_server_gets_30_s_via_syncdelay_on_4x_to_8x() -> None:
    for version in ("4.0.28", "4.4.29", "5.0.31", "6.0.20", "7.0.21", "8.0.12", "8.2.1"):
        dx, advice = _advise(_seed_004_server(), _facts(version))
        assert dx.severity != "ok"
        rec = _by_id(advice)["checkpoint-interval"]
        assert rec.recommended == 30
        assert rec.setting == "syncdelay / storage.syncPeriodSecs"
        assert rec.apply_runtime == "db.adminCommand({setParameter: 1, syncdelay: 30})"
        assert rec.apply_config == "storage:\n  syncPeriodSecs: 30"
        assert rec.revert_runtime == "db.adminCommand({setParameter: 1, syncdelay: 60})"
        assert "checkpoint=(wait" not in (rec.apply_runtime + rec.apply_config)
        # at 30 s a checkpoint finds what the server's own cache held 30 s after one ended: its
        # dirty data builds up from each checkpoint's start, so 30 + 1.8 s of the 60 s, of 80 MB
        # (the published table's 40 MB is the interval's share alone)
        after = rec.predicted["after"]
        assert after["bytes_per_checkpoint"] / MB == pytest.approx(80 * (30 + 1.8) / 60, rel=0.02)
        assert after["duration_s"] == pytest.approx(1.8 * (30 + 1.8) / 60, rel=0.05)
        assert rec.current_source == "version default" and rec.current == 60
        # not proven in the lab since the yardstick asks for nothing worse (#30): a check with its reason
        assert rec.kind == "note" and rec.confidence == "low"
        assert rec.confidence_why.startswith("not proven in the lab: on the lab's stall scenario")
        assert rec.lab == {"checkpoint_s": 30}  # what bench_verify --only and demo --verify --only apply


def test_an_interval_already_at_the_floor_is_not_recommended_again() -> None:
    # syncdelay=10: mongod sleeps 10 s after each checkpoint ends, so 0.6 s checkpoints come every
    # 10.6 s start to start; each still stops writes, but 10 s is what is configured already and
    # the rule's floor ("every 10 s instead of 10 s" was printed)
    server = Server(seconds=300, period=10.6, duration=0.6, mb_per_s=10, stall_ops=20, stall_latency_ms=500)
    dx, advice = _advise(server, _facts("7.0.21", parameters={"syncdelay": 10}))
    assert dx.settings.interval.value == 10 and dx.stalls
    assert "checkpoint-interval" not in _by_id(advice)
    # configured at 60 (the default) the same checkpoints would get the floor
    _, default = _advise(Server(seconds=600, period=60.6, duration=3.0, mb_per_s=10, stall_ops=20), _facts("7.0.21"))
    assert _by_id(default)["checkpoint-interval"].recommended < 60


def test_a_34_server_gets_wiredtiger_checkpoint_wait() -> None:
    config = "eviction=(threads_min=4,threads_max=4),checkpoint=(wait=60,log_size=2GB)"
    cmdline = {"parsed": {"storage": {"wiredTiger": {"engineConfig": {"configString": config}}}}}
    _, advice = _advise(_seed_004_server(), _facts("3.4.24", cmdline=cmdline, config_string=config))
    rec = _by_id(advice)["checkpoint-interval"]
    assert rec.setting == "checkpoint=(wait=N)"
    assert rec.current == 60 and rec.current_source == "configString checkpoint=(wait)"
    assert rec.apply_runtime == (
        'db.adminCommand({setParameter: 1, wiredTigerEngineRuntimeConfig: "checkpoint=(wait=30,log_size=2GB)"})'
    )
    # persistent: the whole configString, the other keys kept
    assert 'configString: "eviction=(threads_min=4,threads_max=4),checkpoint=(wait=30,log_size=2GB)"' in (
        rec.apply_config
    )
    assert "syncdelay" not in rec.apply_runtime and "syncPeriodSecs" not in rec.apply_config
    assert "checkpoint=(wait=60,log_size=2GB)" in rec.revert_runtime


def test_checkpoint_wait_in_configstring_on_36_plus_is_called_out() -> None:
    config = "checkpoint=(wait=25,log_size=1GB)"  # seed 003 on a 3.6 server
    cur = current_settings(_facts("3.6.8", config_string=config))
    assert cur.interval.value == 60 and cur.interval.inferred
    assert any("second" in n or "beside" in n for n in cur.notes)


def test_seed_003_110_gb_cache_on_190_gb_ram_is_flagged() -> None:
    cmdline = {"parsed": {"storage": {"wiredTiger": {"engineConfig": {"cacheSizeGB": 110}}}}}
    facts = ServerFacts.from_documents(
        version="3.6.8",
        host="shard1",
        cmdline=cmdline,
        host_info={"system": {"memSizeMB": 190 * 1024, "numCores": 32}},
    )
    server = _seed_004_server()
    frame = server.frame()
    frame["cache.max_bytes"] = float(110 * GB)
    frame["cache.bytes"] = float(100 * GB)
    frame["cache.dirty_bytes"] = float(5 * GB)
    dx = diagnose(derive(frame), facts)
    advice = recommend(dx)
    rec = _by_id(advice)["cache-size"]
    assert rec.current == pytest.approx(110)
    assert rec.recommended <= 95  # mongod's default for 190 GB: 94.5 GB
    assert rec.apply_config.endswith(f"cacheSizeGB: {rec.recommended}")
    assert any("110.0 GB of 190.0 GB RAM (58 %)" in e for e in rec.evidence)
    assert rec.revert_config.endswith("cacheSizeGB: 110")


def test_a_large_cache_gets_an_absolute_dirty_target() -> None:
    # 200 GB cache; checkpoints write at ~44 MB/s: 5 % (10 GB) of dirty data is minutes of disk
    server = _seed_004_server()
    frame = server.frame()
    frame["cache.max_bytes"] = float(200 * GB)
    frame["cache.dirty_bytes"] = float(9.8 * GB)  # dirty data at the 5 % target
    facts = _facts("7.0.21")
    dx = diagnose(derive(frame), facts)
    rec = _by_id(recommend(dx))["eviction-dirty"]
    target = rec.recommended["eviction_dirty_target"]
    assert target.endswith("MB")  # under 1 % of the cache: said in bytes, as WiredTiger takes them
    assert int(target.removesuffix("MB")) == pytest.approx(2 * 80 / 1.8, rel=0.05)  # 2 s of checkpoint writes
    assert "eviction_dirty_target=" + target in rec.apply_runtime


def test_a_110_gb_cache_on_a_190_gb_host_whose_checkpoints_write_30_gb() -> None:
    # seed 003's shape: tens of GB of dirty data a checkpoint (27 GB, 25 % of the cache), written
    # at 500 MB/s for a minute while writes all but stop (7,500 -> 40 ops/s)
    server = Server(seconds=1800, period=180, duration=60, mb_per_s=500, ops=7500, stall_ops=40, base_mb_s=20)
    frame = server.frame()
    frame["cache.max_bytes"] = float(110 * GB)
    frame["cache.bytes"] = float(100 * GB)
    frame["cache.dirty_bytes"] = float(27 * GB)
    dx = diagnose(derive(frame), _facts("4.0.28", ram_bytes=190 * GB, cores=32))
    advice = recommend(dx)
    assert dx.severity == "critical" and dx.episodes[0].bytes_written == pytest.approx(60 * 500 * MB, rel=0.05)
    recs = _by_id(advice)
    # the cache: back to mongod's default for this RAM, never above it
    cache = recs["cache-size"]
    assert cache.recommended == 94 and "110.0 GB of 190.0 GB RAM (58 %)" in cache.evidence[0]
    # 5 % of 94 GB leaves a checkpoint 17 % of the 25 % it finds; eviction writes the rest as it
    # comes and the kernel holds its last 30 s (of 180) for the sync: a third of what it writes now
    written = float(np.median([e.bytes_written for e in dx.episodes if e.bytes_written]))
    share = (5 * 94 / 110) / (27 / 110 * 100)
    assert cache.predicted["checkpoint_bytes"] == pytest.approx(written * (share + 30 / 180), rel=0.02)
    assert ": ~10.0 GB a checkpoint instead of ~29.3 GB" in cache.predicted_text
    # dirty data: in MB on a cache this size (whole percents are 1.1 GB steps), sized to 2 s of
    # what the disk showed it writes; the trigger never lowered toward the 25 % the server sustains
    dirty = recs["eviction-dirty"].recommended
    assert dirty["eviction_dirty_target"] == "1000MB"
    assert dirty["eviction_dirty_trigger"] == "22528MB"  # the 20 % in force, in the target's unit
    assert "5 % of a 110.0 GB cache is 5.5 GB of dirty data: 11.3 s" in recs["eviction-dirty"].evidence[0]


def test_the_dirty_target_is_left_alone_where_dirty_data_never_nears_it() -> None:
    # the same large cache with 32 MB of dirty data: the interval, not the target, sets the burst
    frame = _seed_004_server().frame()
    frame["cache.max_bytes"] = float(200 * GB)
    facts = _facts("7.0.21")
    dx = diagnose(derive(frame), facts)
    ids = [r.id for r in recommend(dx).recommendations]
    assert "eviction-dirty" not in ids and "checkpoint-interval" in ids


def test_checkpoints_that_stop_writes_are_aimed_at_a_third_of_a_second() -> None:
    # seed 004's server, but writes stop (1 % of usual) while each 1.8 s checkpoint runs, as
    # journaled writes do behind the checkpoint's sync: 0.3 s checkpoints, every 10 s
    _, advice = _advise(_seed_004_server(stall_ops=20), _facts("7.0.21"))
    rec = _by_id(advice)["checkpoint-interval"]
    assert rec.recommended == 10
    # what its cache held 10 s after a checkpoint ended: 11.8 s of the 60 s build-up, not 10 of 60
    assert rec.predicted["after"]["duration_s"] == pytest.approx(1.8 * (10 + 1.8) / 60, rel=0.05)
    assert any("writes stop while a checkpoint runs (1 % of usual" in e for e in rec.evidence)
    held = "(from this server's own cache: 10 s after a checkpoint ended it held 20 % of the dirty data the next one "
    assert held in rec.predicted_text
    assert "a floor" not in rec.predicted_text
    seed = _by_id(_advise(_seed_004_server(), _facts("7.0.21"))[1])["checkpoint-interval"]
    assert seed.recommended == 30 and "a floor" not in seed.predicted_text
    # without the dirty data's figures the bytes go with the interval: at 60 -> 10 s that is a floor
    # (the lab measured 2x its bytes at 10 s)
    blind = _seed_004_server(stall_ops=20).frame().drop(columns="cache.dirty_bytes")
    rec = _by_id(recommend(diagnose(derive(blind), _facts("7.0.21"))))["checkpoint-interval"]
    assert rec.predicted["after"]["duration_s"] == pytest.approx(0.3, rel=0.05)
    assert "a floor, not a promise" in rec.predicted_text and rec.predicted["after_low"] is None


def _dirty_server(dirty_gb: float, evicted_mb_s: float = 0.0, builds: bool = False) -> Any:
    # seed 004's server (1 GB cache, 80 MB checkpoints every 60 s on a saturated disk), its
    # checkpoints finding ``dirty_gb`` of dirty data, eviction writing ``evicted_mb_s`` besides;
    # the dirty data held there all the time, or (``builds``) built up to it from each checkpoint
    frame = _seed_004_server().frame()
    built = frame["cache.dirty_bytes"] / frame["cache.dirty_bytes"].max() if builds else 1.0
    frame["cache.dirty_bytes"] = dirty_gb * GB * built
    frame["block.bytes_written"] = frame["ckpt.bytes_written"] + evicted_mb_s * MB * (frame["t"] - frame["t"].iloc[0])
    return frame


def test_a_shorter_interval_still_syncs_evictions_held_writes() -> None:
    # seed 004's server with eviction writing 0.4 MB/s besides its 80 MB checkpoints (as the lab's
    # stall did): each 1.8 s sync flushed 80 + 12 MB; at 10 s, 13 MB of its own and 4 MB held,
    # at the same rate: 0.33 s, not the 0.3 s of its own bytes alone (the lab measured 0.71 s
    # for 0.46 s predicted this way, 0.29 s without the hold: docs/advice.md#predictions)
    frame = _dirty_server(0.03, evicted_mb_s=0.4)
    dx = diagnose(derive(frame), _facts("7.0.21"))
    now = checkpoint_shape(dx, 60.0)
    assert now is not None and now.held_bytes == pytest.approx(12 * MB, rel=0.03)
    after = at_interval(now, 10.0)
    rate = (80 + 12) * MB / 1.8
    assert after.duration_s == pytest.approx((80 / 6 + 4) * MB / rate, rel=0.05)
    assert after.held_bytes == pytest.approx(4 * MB, rel=0.03)


def test_raised_dirty_targets_are_brought_back() -> None:
    config = "eviction_dirty_target=40,eviction_dirty_trigger=60"
    facts = _facts("8.0.4", config_string=config)
    dx = diagnose(derive(_dirty_server(0.3)), facts)  # checkpoints find 30 % of the cache dirty
    advice = recommend(dx)
    rec = _by_id(advice)["eviction-dirty"]
    # a sixth of the dirty data is left to the checkpoint; eviction writes the rest as it comes
    # (80 MB a minute), and the kernel holds its last 30 s until the checkpoint's sync: 13 + 40 MB
    assert rec.predicted["checkpoint_bytes"] == pytest.approx(80 * MB / 6 + 40 * MB, rel=0.03)
    assert "vm.dirty_expire_centisecs" in rec.predicted_text and "now up to 307 MB" in rec.predicted_text
    assert rec.current == {"eviction_dirty_target": 40, "eviction_dirty_trigger": 60}
    # the trigger stays above the 30 % the workload sustains today (with headroom), not at 20 %
    assert rec.recommended == {"eviction_dirty_target": "5", "eviction_dirty_trigger": "38"}
    assert rec.revert_runtime.endswith('"eviction_dirty_target=40,eviction_dirty_trigger=60"})')
    # on a disk the checkpoint's sync saturates the lab has not proven it (docs/lab.md#kernel-hold):
    # a check, as the interval is, so the combined block is empty and demo --verify applies nothing
    assert rec.kind == "note" and rec.lab == {"eviction_dirty_target": 5, "eviction_dirty_trigger": 38}
    assert "where the checkpoint's sync saturates the disk, as here" in rec.confidence_why
    assert list(advice.combined.apply_runtime) == [] and advice.combined.apply_config is None
    assert advice.lab_overrides == {}


def test_a_raised_dirty_target_on_a_disk_that_keeps_up_is_a_check_with_the_labs_reason() -> None:
    # the lab's dirty-buildup (40/60 % back to 5/20 %, the disk keeping up): 3 runs of 3 at 150 s,
    # then a 300 s run worse between checkpoints: not proven (docs/lab.md#proof)
    frame = _dirty_server(0.3)
    disk_busy(frame, 30)
    facts = _facts("8.0.4", config_string="eviction_dirty_target=40,eviction_dirty_trigger=60")
    advice = recommend(diagnose(derive(frame), facts))
    rec = _by_id(advice)["eviction-dirty"]
    assert rec.kind == "note" and rec.recommended["eviction_dirty_target"] == "5"
    assert "a 300 s run failed" in rec.confidence_why
    # its own bytes at a sixth of the dirty data (no sync held back: the disk keeps up)
    assert rec.predicted["checkpoint_bytes"] == pytest.approx(80 * MB / 6, rel=0.03)
    assert advice.lab_overrides == {} and list(advice.combined.apply_runtime) == []


@pytest.mark.parametrize("dirty_gb", [0.03, 0.06])
def test_a_raised_dirty_target_the_checkpoints_never_fill_is_left_alone(dirty_gb: float) -> None:
    # the lab's stall with dirty 20/40 % (2026-11-27): checkpoints found ~5 % of the cache; a
    # 5 % target would change nothing (3 %), or leave 5 of 6 parts to the checkpoint and the
    # kernel's 30 s hold of the sixth to its sync (6 %): no cut worth a change
    facts = _facts("8.0.4", config_string="eviction_dirty_target=20,eviction_dirty_trigger=40")
    dx = diagnose(derive(_dirty_server(dirty_gb)), facts)
    assert dx.severity != "ok"
    assert "eviction-dirty" not in _by_id(recommend(dx))


def test_eviction_threads_bounded_by_cores_and_the_limit() -> None:
    frame = _seed_004_server().frame()
    frame["cache.app_evicted_pages"] = (frame["t"] - frame["t"].iloc[0]) * 50  # application threads evict
    for cores, want in ((2, None), (8, 8), (64, 8)):
        facts = _facts("7.0.21", cores=cores)
        dx = diagnose(derive(frame), facts)
        rec = _by_id(recommend(dx)).get("eviction-threads")
        if want is None:
            assert rec is None  # 2 cores: more threads than 4 would fight the workload
        else:
            assert rec is not None
            assert rec.recommended["threads_max"] == want <= 20
            assert "eviction=(threads_min=4,threads_max=8)" in rec.apply_runtime


def test_a_healthy_server_gets_no_change_and_nothing_else() -> None:
    for version in ("3.4.24", "4.2.12", "8.0.4"):
        dx, advice = _advise(Server(stall=False, seconds=900), _facts(version, ram_bytes=190 * GB))
        assert dx.severity == "ok"
        assert (
            list(advice.recommendations) == []
            and list(advice.combined.apply_runtime) == []
            and advice.combined.apply_config is None
        )
        assert advice.summary.startswith("no change")


def test_the_idle_70_ftdc_file_gets_no_change() -> None:
    from ckptdiag.workflows.report import diagnose_window

    path = shared_path("ftdc", "mongodb-7.0.0-rc6__b1ron__metrics.2024-04-16T11-34-42Z-00000")
    report = diagnose_window((path,))
    assert report.dx.severity == "ok" and report.advice is not None and list(report.advice.recommendations) == []


def test_current_settings_precedence() -> None:
    facts = _facts(
        "7.0.21",
        cmdline={"parsed": {"storage": {"syncPeriodSecs": 45, "journal": {"commitIntervalMs": 50}}}},
        parameters={"syncdelay": 30, "wiredTigerEngineRuntimeConfig": "eviction_dirty_target=3"},
        config_string="eviction_dirty_target=10,eviction_dirty_trigger=30",
    )
    cur = current_settings(facts)
    assert (cur.interval.value, cur.interval.source) == (30, "getParameter syncdelay")  # the running value wins
    assert (cur.commit_ms.value, cur.commit_ms.inferred) == (50, False)
    assert cur.eviction.dirty_target.value == 3 and cur.eviction.dirty_trigger.value == 30  # runtime over configString
    cur = current_settings(_facts("7.0.21", cmdline={"parsed": {"storage": {"syncPeriodSecs": 45}}}))
    assert (cur.interval.value, cur.interval.source) == (45, "getCmdLineOpts storage.syncPeriodSecs")
    cur = current_settings(_facts(None))  # type: ignore[arg-type]
    assert cur.interval.inferred and any("version unknown" in n for n in cur.notes)


def test_merge_config_keeps_other_keys_and_merges_eviction() -> None:
    base = "cache_size=2G,eviction=(threads_min=4,threads_max=4),eviction_dirty_target=5"
    merged = merge_config(base, {"eviction": "(threads_max=8)", "eviction_dirty_target": "3"})
    assert merged == "cache_size=2G,eviction=(threads_min=4,threads_max=8),eviction_dirty_target=3"
    assert merge_config("", {"eviction_target": "75"}) == "eviction_target=75"


def test_every_format_carries_the_recommendations() -> None:
    facts = _facts("8.0.4", config_string="eviction_dirty_target=40,eviction_dirty_trigger=60")
    dx = diagnose(derive(_dirty_server(0.3, builds=True)), facts)
    advice = recommend(dx)
    report = Report(dx, ReportSource("recording", "x"), advice)
    doc = to_document(report)
    assert doc["schema_version"] == 3
    recs = doc["recommendations"]
    assert [r["id"] for r in recs][:2] == ["checkpoint-interval", "eviction-dirty"]
    for r in recs:
        assert {"setting", "current", "recommended", "evidence", "predicted", "tradeoffs", "confidence"} <= set(r)
        if r["id"] in ("checkpoint-interval", "eviction-dirty"):  # checks keep their commands
            assert r["apply"]["runtime"] and r["apply"]["mongod_conf"] and r["revert"]["runtime"]
    assert recs[0]["apply"]["runtime"] == "db.adminCommand({setParameter: 1, syncdelay: 30})"
    assert doc["advice"]["apply"]["runtime"] == []  # only what the lab proved goes together
    md = render_markdown(report)
    assert "## Recommendations" in md and "```yaml\nstorage:\n  syncPeriodSecs: 30\n```" in md
    text = render_text(report)
    assert "syncdelay: 30" in text and "Recommendations" in text
    page = render_html(report)
    assert "<pre><code>db.adminCommand({setParameter: 1, syncdelay: 30})" in page


def test_healthy_report_says_no_change() -> None:
    facts = _facts("8.0.4")
    dx, advice = _advise(Server(stall=False), facts)
    report = Report(dx, ReportSource("recording", "x"), advice)
    assert to_document(report)["recommendations"] == []
    assert "no change" in render_text(report)


def _update_burst_frame(updates_fraction_at_pause: float) -> Any:
    # healthy checkpoints; writes stop for 3 s between two of them while the updates in cache are
    # at their eviction target (the lab's own pauses: docs/lab.md)
    frame = Server(stall=False, pauses=((100.2, 103.2),)).frame()
    rel = frame["t"].to_numpy() - frame["t"].iloc[0]
    import numpy as np

    frame["cache.updates_bytes"] = np.where((rel >= 95) & (rel <= 101), updates_fraction_at_pause, 0.01) * GB
    return frame


def test_stalls_at_the_updates_target_get_an_earlier_updates_target() -> None:
    facts = _facts("8.0.4", config_string="eviction_dirty_target=8,eviction_dirty_trigger=30")
    dx = diagnose(derive(_update_burst_frame(0.04)), facts)  # updates target: half of 8 % = 4 %
    assert dx.severity == "warn" and dx.stalls == 0
    advice = recommend(dx)
    rec = _by_id(advice)["eviction-updates-target"]
    assert rec.current == {"eviction_updates_target": 4.0} and rec.recommended == {"eviction_updates_target": 2}
    assert "(half the dirty target)" in rec.current_source
    assert rec.apply_runtime == (
        'db.adminCommand({setParameter: 1, wiredTigerEngineRuntimeConfig: "eviction_updates_target=2"})'
    )
    assert rec.revert_runtime.endswith('"eviction_updates_target=4"})')
    assert "eviction_updates_target=2" in (rec.apply_config or "") and "eviction_dirty_target=8" in rec.apply_config
    # not proven in the lab: a check with its commands, never in the combined block or the lab's verify
    assert rec.kind == "note" and rec.confidence_why.startswith("not proven in the lab")
    assert advice.lab_overrides == {} and not advice.combined.apply_runtime
    assert "writes stalled 1 time while no checkpoint ran" in rec.evidence[0]


def test_updates_target_rule_stays_quiet_where_it_does_not_apply() -> None:
    # 4.2 has no updates knobs; a default dirty target already gives 2.5 %; pauses with the
    # updates far from the target are something else
    for version, config, fraction in (
        ("4.2.12", "eviction_dirty_target=8,eviction_dirty_trigger=30", 0.04),
        ("8.0.4", "", 0.026),
        ("8.0.4", "eviction_dirty_target=8,eviction_dirty_trigger=30", 0.01),
    ):
        facts = _facts(version, config_string=config)
        dx = diagnose(derive(_update_burst_frame(fraction)), facts)
        assert dx.severity == "warn"
        assert "eviction-updates-target" not in _by_id(recommend(dx)), (version, config, fraction)


def test_a_runtime_dirty_target_is_the_one_every_stage_and_format_reads() -> None:
    # set at runtime only (setParameter wiredTigerEngineRuntimeConfig): no configString says so
    facts = _facts("8.0.4", parameters={"wiredTigerEngineRuntimeConfig": "eviction_dirty_target=10"})
    frame = _seed_004_server().frame()
    frame["cache.dirty_bytes"] = 0.08 * frame["cache.max_bytes"]  # 8 %: over the default 5 %, under 10 %
    # a disk that keeps up (30 % busy): a checkpoint writes the dirty data it finds, so 5 % of the
    # cache instead of 8 % is a cut (on a saturated disk the kernel's hold of eviction's writes
    # would leave what the sync flushes where it is)
    disk_busy(frame, 30)
    dx = diagnose(derive(frame), facts)
    runtime = "runtime config (wiredTigerEngineRuntimeConfig)"
    target = dx.settings.eviction.dirty_target
    assert (target.value, target.source) == (10, runtime)
    assert dx.eviction.seconds_over_dirty_target == 0  # judged against 10 %, not the default 5 %
    rec = _by_id(recommend(dx))["eviction-dirty"]
    assert rec.current["eviction_dirty_target"] == 10 and rec.current_source == runtime
    assert any("eviction_dirty_target is 10 %" in e for e in rec.evidence)
    report = Report(dx, ReportSource("recording", "x"), recommend(dx))
    doc = to_document(report)
    settings = doc["eviction"]["settings"]
    assert settings["eviction_dirty_target"] == 10 and settings["sources"]["eviction_dirty_target"] == runtime
    said = f"target 10 % ({runtime}), trigger 20 % (version default)"
    assert said in render_markdown(report)
    assert said in " ".join(render_text(report).split())
    assert said in render_html(report)


def test_the_interval_title_names_the_setting_in_force_not_the_measured_period() -> None:
    # checkpoints of 2 s under syncdelay=60 come every 62 s start to start: "instead of 60 s"
    server = Server(seconds=900, period=62, duration=2.0, mb_per_s=40, ops=2000, stall_ops=20)
    _, advice = _advise(server, _facts("7.0.21", parameters={"syncdelay": 60}))
    rec = _by_id(advice)["checkpoint-interval"]
    assert rec.title.endswith("instead of 60 s") and rec.current == 60
    assert any(e.startswith("checkpoints every 62 s (configured 60 s") for e in rec.evidence)
