"""Advice that names the cause first and cannot make a server worse (issue shapes from real servers)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
import pytest
from synth import Server, disk_busy

from ckptdiag.advice.changes import EngineChange
from ckptdiag.advice.kinds import DIRTY_RAISED, DISK_SATURATED, EVICTION_BEHIND, IO_THROTTLED, JOURNAL_BEHIND
from ckptdiag.advice.recommendation import Advice, Recommendation
from ckptdiag.advice.rules import lowers_a_trigger, recommend, without_contradictions
from ckptdiag.analysis.diagnosis import diagnose
from ckptdiag.analysis.episode_table import Episodes
from ckptdiag.analysis.series import derive
from ckptdiag.model.engine_config import percent_of_cache, resolve
from ckptdiag.model.facts import ServerFacts

GB = 2**30


def _busy_server_idle_disk() -> pd.DataFrame:
    """A real 8.0 server's shape: a 14.9 GB cache with 10-17 % dirty throughout, application threads
    evicting heavily, checkpoints back to back, the disk far from saturated."""
    server = Server(seconds=900, period=6.0, duration=6.0, first_start=30.3, ops=46_000, stall_ops=20_000)
    frame = server.frame()
    rel = frame["t"].to_numpy() - frame["t"].iloc[0]
    frame["cache.max_bytes"] = 14.9 * GB
    frame["cache.dirty_bytes"] = (0.135 + 0.035 * np.sin(rel / 17)) * 14.9 * GB  # 10-17 %
    frame["cache.app_evicted_pages"] = rel * 1_700  # ~1.5 M pages in the window
    frame["disk.vda.tot_ticks"] = np.floor(rel * 360)  # 36 % busy
    return frame


def test_a_busy_server_with_an_idle_disk_never_gets_a_trigger_below_what_it_sustains() -> None:
    frame = _busy_server_idle_disk()
    for config in ("", "eviction_dirty_target=10,eviction_dirty_trigger=30"):
        dx = diagnose(derive(frame), ServerFacts(version="8.0.4", cores=16, config_string=config or None))
        advice = recommend(dx)
        sustained = dx.eviction.dirty_pct_p90
        assert sustained is not None and sustained > 10
        kinds = [c.kind for c in advice.causes]
        assert EVICTION_BEHIND in kinds and DISK_SATURATED not in kinds
        assert advice.summary.startswith("eviction cannot keep up")
        cache = dx.settings.cache_bytes.value
        for rec in advice.recommendations:
            change = rec.change
            if not isinstance(change, EngineChange):
                continue
            for key in ("eviction_dirty_trigger", "eviction_updates_trigger"):
                if key in change.set:
                    value = percent_of_cache(change.set[key], cache)
                    assert value is not None and value > sustained, (config, rec.id, change.set)
        assert not any(lowers_a_trigger(r, cache) for r in advice.recommendations)


def _throttled_server() -> tuple[pd.DataFrame, ServerFacts]:
    """WiredTiger throttled by its own config: io_capacity 60 MB, 42 s checkpoints, throughput at 15-40 %."""
    server = Server(seconds=900, period=60.0, duration=42.0, stall_ops=250.0, stall_latency_ms=8.0, mb_per_s=60.0)
    frame = server.frame()
    rel = frame["t"].to_numpy() - frame["t"].iloc[0]
    running = np.zeros(rel.size)
    for start, end in server.checkpoints():
        running += (rel >= start) & (rel < end)
    frame["capacity.ckpt_wait_us"] = np.cumsum(running) * 400_000  # 0.4 s of each second waiting for it
    frame["disk.vda.tot_ticks"] = np.floor(np.cumsum(np.where(running > 0, 700.0, 50.0)))  # 70 %: room left
    config = "io_capacity=(total=60MB)"
    return frame, ServerFacts(version="7.0.21", config_string=config, cores=8)


def test_a_config_that_throttles_its_own_writes_gets_the_throttle_named_and_a_change_to_it() -> None:
    frame, facts = _throttled_server()
    dx = diagnose(derive(frame), facts)
    assert dx.severity != "ok"
    advice = recommend(dx)
    assert advice.causes and advice.causes[0].kind == IO_THROTTLED
    assert advice.summary.startswith("WiredTiger throttles its own writes (io_capacity)")
    assert any("io_capacity=(total=60 MB)" in line for line in advice.causes[0].evidence)
    rec = next(r for r in advice.recommendations if r.id == "io-capacity")
    assert isinstance(rec.change, EngineChange) and rec.change.set == {"io_capacity": "(total=0)"}
    assert "io_capacity=(total=0)" in (rec.apply_runtime or "")
    assert "io_capacity=(total=62914560)" in (rec.revert_runtime or "")
    # the throttle is the cause: nothing is sized from the throttled checkpoints' write rate
    assert not any(r.id == "eviction-dirty" and "disk" in " ".join(r.evidence) for r in advice.recommendations)


@pytest.mark.parametrize("cache_gb", [0.25, 1, 4, 16, 64, 200])
@pytest.mark.parametrize("dirty_share", [0.01, 0.05, 0.2])
def test_no_recommendation_mixes_units_in_one_setting_pair(cache_gb: float, dirty_share: float) -> None:
    frame = Server(seconds=900, period=60, duration=1.8, mb_per_s=44.0, ops=2000, stall_ops=600).frame()
    frame["cache.max_bytes"] = cache_gb * GB
    frame["cache.dirty_bytes"] = dirty_share * cache_gb * GB
    for config in (None, "eviction_dirty_target=40,eviction_dirty_trigger=60"):
        advice = recommend(diagnose(derive(frame), ServerFacts(version="7.0.21", config_string=config)))
        for rec in advice.recommendations:
            if isinstance(rec.change, EngineChange) and "eviction_dirty_target" in rec.change.set:
                units = {
                    value.endswith("MB") for key, value in rec.change.set.items() if key.startswith("eviction_dirty")
                }
                assert len(units) == 1, rec.change.set


def _rec(id_: str, change: EngineChange | None) -> Recommendation:
    return Recommendation(id_, "setting", "x", "t", None, "", None, (), {}, "", (), "low", "", change)


def test_contradictory_pairs_are_never_emitted() -> None:
    lower = _rec("eviction-dirty", EngineChange({"eviction_dirty_trigger": "1"}, {"eviction_dirty_trigger": "20"}))
    raise_ = _rec(
        "eviction-updates", EngineChange({"eviction_updates_trigger": "20"}, {"eviction_updates_trigger": "10"})
    )
    interval = _rec("checkpoint-interval", None)
    assert lowers_a_trigger(lower, GB) and not lowers_a_trigger(raise_, GB)
    kept = without_contradictions([interval, lower, raise_], GB)
    assert [r.id for r in kept] == ["checkpoint-interval", "eviction-updates"]
    assert [r.id for r in without_contradictions([interval, lower], GB)] == ["checkpoint-interval", "eviction-dirty"]


@pytest.mark.parametrize("busy_pct", [None, 97.0])
def test_a_healthy_server_still_gets_no_change(busy_pct: float | None) -> None:
    """No stall, no change: also where other processes keep the host's CPUs 97 % busy (#30)."""
    frame = Server(stall=False, seconds=900).frame()
    if busy_pct is not None:
        total_ms = (frame["t"].to_numpy() - frame["t"].iloc[0]) * 16_000.0  # 16 CPUs
        frame["host.cpu.user_ms"] = total_ms * busy_pct / 100
        frame["host.cpu.idle_ms"] = total_ms * (1 - busy_pct / 100)
    dx = diagnose(derive(frame), ServerFacts(version="8.0.4", cores=16))
    if busy_pct is not None:
        assert dx.host_cpu_pct_p50 == pytest.approx(busy_pct, abs=1)
    advice = recommend(dx)
    assert dx.severity == "ok" and advice.causes == () and advice.recommendations == ()


def _kinds(frame: pd.DataFrame, **facts: Any) -> list[str]:
    return [c.kind for c in recommend(diagnose(derive(frame), ServerFacts(**facts))).causes]


def test_a_saturated_disk_is_named_as_the_cause() -> None:
    # the synthetic server's disk is 100 % busy while it checkpoints
    kinds = _kinds(Server(seconds=900, period=60, duration=2.0).frame(), version="7.0.21")
    assert kinds[0] == DISK_SATURATED


@pytest.mark.parametrize(("evicted_mb_s", "said"), [(0.0, False), (2.0, False), (4.0, True)])
def test_the_disk_cause_says_what_the_sync_flushes_besides_the_checkpoints_own(evicted_mb_s: float, said: bool) -> None:
    # 400 MB checkpoints (2 s at 200 MB/s) every 60 s; eviction's last 30 s go with each sync:
    # 60 MB at 2 MB/s is not worth a line beside 400 MB (under a quarter), 120 MB at 4 MB/s is
    frame = Server(seconds=900, period=60, duration=2.0).frame()
    frame["block.bytes_written"] = frame["ckpt.bytes_written"] + evicted_mb_s * 2**20 * (
        frame["t"] - frame["t"].iloc[0]
    )
    causes = recommend(diagnose(derive(frame), ServerFacts(version="7.0.21"))).causes
    assert causes[0].kind == DISK_SATURATED
    line = [e for e in causes[0].evidence if "sync also sends" in e]
    assert bool(line) == said
    if said:
        assert "~120 MB at the 4.0 MB/s eviction writes here, beside the checkpoint's own 400 MB" in line[0]
        assert "vm.dirty_expire_centisecs" in line[0]


def test_the_throttle_rule_lifts_it_and_the_interval_rule_steps_aside() -> None:
    frame, facts = _throttled_server()
    # a disk that never wrote faster than the throttle has not shown what it can do: no duration
    throttled_only = next(r for r in recommend(diagnose(derive(frame), facts)).recommendations if r.id == "io-capacity")
    assert throttled_only.predicted["duration_s_after"] is None
    assert "at the disk's own rate" in throttled_only.predicted_text
    # one second of 200 MB (a backup, a compaction) shows the disk's own rate
    rel = frame["t"].to_numpy() - frame["t"].iloc[0]
    frame["disk.vda.wr_sectors"] += np.where(rel >= 10, 200 * 2**20 / 512, 0)
    dx = diagnose(derive(frame), facts)
    advice = recommend(dx)
    rec = next(r for r in advice.recommendations if r.id == "io-capacity")
    assert rec.lab == {"io_capacity_mb": 0}  # what bench_verify --only io-capacity applies
    # not proven in the lab (docs/advice.md): a check that says why, with its commands
    assert rec.kind == "note" and "not proven in the lab: on the lab's io-throttled scenario" in rec.confidence_why
    # the interval model would size from the throttle's own rate: not given while it is the cause
    assert not any(r.id == "checkpoint-interval" for r in advice.recommendations)
    # the prediction writes the same bytes at what the disk has shown, never the throttled rate
    assert dx.disk_peak_mb_s is not None and rec.predicted["duration_s_after"] is not None
    expected = rec.predicted["bytes_per_checkpoint"] / (dx.disk_peak_mb_s * 2**20)
    assert rec.predicted["duration_s_after"] == pytest.approx(expected)
    assert rec.predicted["duration_s_after"] < rec.predicted["duration_s_now"] / 2
    assert advice.combined.apply_runtime == () and advice.lab_overrides == {}


def test_setting_rules_the_lab_has_not_proven_are_checks_with_their_reason() -> None:
    from ckptdiag.advice.proof import NOT_PROVEN, PROVEN, proven

    rec = _rec("eviction-threads", EngineChange({"eviction": "(threads_max=8)"}, {"eviction": "(threads_max=4)"}))
    demoted = proven(rec)
    assert demoted.kind == "note" and demoted.confidence == "low"
    assert demoted.confidence_why.startswith("not proven in the lab: " + NOT_PROVEN["eviction-threads"])
    assert demoted.change == rec.change  # the commands stay, for a DBA who tries it with compare
    assert Advice((demoted,), "", resolve(ServerFacts())).lab_overrides == {}  # demo --verify applies no check
    assert proven(_rec("checkpoint-interval", None)).kind == "note"  # not proven since #30's yardstick
    # every rule that can change a setting is either proven on a named scenario or has its reason
    from ckptdiag.lab.scenarios import SCENARIOS

    assert set(PROVEN.values()) <= set(SCENARIOS)
    setting_ids = {
        "checkpoint-interval",
        "eviction-dirty",
        "cache-size",
        "eviction-target",
        "eviction-threads",
        "eviction-updates",
        "eviction-updates-target",
        "io-capacity",
    }
    assert set(PROVEN) | set(NOT_PROVEN) == setting_ids and not set(PROVEN) & set(NOT_PROVEN)


def test_only_proven_settings_reach_the_combined_block_and_the_lab() -> None:
    frame = _busy_server_idle_disk()
    advice = recommend(diagnose(derive(frame), ServerFacts(version="8.0.4", cores=16)))
    from ckptdiag.advice.proof import PROVEN

    for rec in advice.recommendations:
        assert rec.kind == "note" or rec.id in PROVEN, rec.id
    assert set(advice.lab_overrides) <= {"checkpoint_s"}
    together = " ".join(advice.combined.apply_runtime)
    assert "eviction=(threads" not in together and "eviction_dirty" not in together


def _writes_stop_server(syncs_s: float | None) -> pd.DataFrame:
    """Writes stop (1 % of usual) through every 1.8 s checkpoint; the journal syncs ``syncs_s`` a second."""
    server = Server(seconds=900, period=60, duration=1.8, mb_per_s=80 / 1.8, ops=2000, stall_ops=20)
    frame = server.frame()
    disk_busy(frame, 30)  # not the disk
    if syncs_s is not None:
        frame["journal.syncs"] = np.floor((frame["t"] - frame["t"].iloc[0]) * syncs_s)
    return frame


def test_writes_that_stop_are_put_on_the_journal_only_where_they_wait_for_it() -> None:
    facts = ServerFacts(version="7.0.21")
    # j:true writes: the journal syncs far more often than mongod's flusher (10 a second)
    advice = recommend(diagnose(derive(_writes_stop_server(400.0)), facts))
    assert advice.causes[0].kind == JOURNAL_BEHIND
    assert any("syncs 400 times a second" in line for line in advice.causes[0].evidence)
    assert "journal-disk" in {r.id for r in advice.recommendations}
    # unjournaled writes (the flusher's 10 syncs a second) do not wait for the journal's sync
    advice = recommend(diagnose(derive(_writes_stop_server(10.0)), facts))
    assert JOURNAL_BEHIND not in {c.kind for c in advice.causes}
    assert "journal-disk" not in {r.id for r in advice.recommendations}
    # not recorded: named, with the caveat that it is not known
    advice = recommend(diagnose(derive(_writes_stop_server(None)), facts))
    assert advice.causes[0].kind == JOURNAL_BEHIND
    assert any("not known" in line for line in advice.causes[0].evidence)


def test_checkpoints_that_spent_their_time_preparing_are_not_put_on_the_journal_or_the_disk() -> None:
    # the same stopped j:true writes on ext4, but each 1.8 s checkpoint spent 1.5 s in its prepare
    # (gathering handles under the schema lock, as the lab's many-collections run): what waited for
    # it waited for the lock, so neither the journal's wait behind the sync nor ext4's fdatasync is
    # offered; timed as mostly writing (0.1 s prepare), both are
    import dataclasses

    from ckptdiag.analysis.episode import Phases

    facts = ServerFacts(version="8.0.4", filesystem="ext4")
    dx = diagnose(derive(_writes_stop_server(400.0)), facts)

    def timed(prepare_s: float) -> Advice:
        phases = Phases(prepare_s=prepare_s, handles_s=prepare_s, handles=32_000.0)
        episodes = Episodes.of(dataclasses.replace(e, phases=phases) for e in dx.episodes)
        return recommend(dataclasses.replace(dx, episodes=episodes))

    writing, preparing = timed(0.1), timed(1.5)
    assert JOURNAL_BEHIND in {c.kind for c in writing.causes}
    assert {"journal-disk", "filesystem"} <= {r.id for r in writing.recommendations}
    assert JOURNAL_BEHIND not in {c.kind for c in preparing.causes}
    assert not {"journal-disk", "filesystem", "checkpoint-interval"} & {r.id for r in preparing.recommendations}
    assert "checkpoint-handles" in {c.kind for c in preparing.causes}


def test_a_raised_dirty_target_that_makes_checkpoints_big_is_named() -> None:
    frame = _writes_stop_server(10.0)
    frame["cache.max_bytes"] = 1 * GB  # 5 % of it: 51 MB; each checkpoint writes 80 MB
    frame["cache.dirty_bytes"] = 0.3 * GB  # checkpoints find 30 % of it dirty: 5 % would leave them a sixth
    raised = ServerFacts(version="8.0.4", config_string="eviction_dirty_target=40,eviction_dirty_trigger=60")
    advice = recommend(diagnose(derive(frame), raised))
    assert advice.causes[0].kind == DIRTY_RAISED
    assert advice.summary.startswith("checkpoints write what a raised dirty target lets build up")
    assert advice.causes[0].evidence[0] == "eviction_dirty_target 40 % (configString); mongod's default is 5 %"
    assert "eviction-dirty" in {r.id for r in advice.recommendations}
    # the default target: not this cause
    assert DIRTY_RAISED not in _kinds(frame, version="8.0.4")


def test_no_cause_or_finding_cites_evidence_that_contradicts_it() -> None:
    """Dirty data over the trigger while application threads evicted nothing and waited for
    nothing (counters that did not move): the finding says so, and 'eviction cannot keep up' is
    not a cause (#28: both were stated beside 'application threads evicted 0 pages')."""
    server = Server(seconds=600, ops=5_000, stall=False)
    frame = server.frame()
    frame["cache.max_bytes"] = 1.0 * GB
    frame["cache.dirty_bytes"] = 0.25 * GB  # over the default 20 % trigger throughout
    frame["cache.app_evicted_pages"] = 0.0
    dx = diagnose(derive(frame), ServerFacts(version="7.0.21", cores=4))
    assert dx.eviction.seconds_over_dirty_trigger > 0 and dx.eviction.app_evicted_pages == 0
    over = [f for f in dx.findings if "dirty trigger" in f]
    assert over and "are made to evict" not in over[0] and "evicted nothing" in over[0]
    assert EVICTION_BEHIND not in [c.kind for c in recommend(dx).causes]


@pytest.mark.parametrize(("busy_pct", "advised"), [(30.0, True), (95.0, False)])
def test_no_eviction_thread_advice_on_cpus_already_busy(busy_pct: float, advised: bool) -> None:
    """Application threads made to evict on a host whose CPUs are 95 % busy (all processes):
    more eviction threads would compete with the application's own, so they are not advised;
    at 30 % they are (#28)."""
    frame = _busy_server_idle_disk()
    rel = frame["t"].to_numpy() - frame["t"].iloc[0]
    total_ms = rel * 16_000.0  # 16 CPUs
    frame["host.cpu.user_ms"] = total_ms * busy_pct / 100
    frame["host.cpu.idle_ms"] = total_ms * (1 - busy_pct / 100)
    dx = diagnose(derive(frame), ServerFacts(version="8.0.4", cores=16))
    assert dx.host_cpu_pct_p50 == pytest.approx(busy_pct, abs=1)
    recs = {r.id: r for r in recommend(dx).recommendations}
    assert ("eviction-threads" in recs) is advised
    # where they are not, the report says why in this host's terms (#30), as a check
    assert ("eviction-threads-cores" in recs) is not advised
    if not advised:
        note = recs["eviction-threads-cores"]
        assert note.kind == "note" and note.change is None
        assert (
            note.title
            == "More eviction threads need idle cores: this host's CPUs were 95 % busy (median, all processes)"
        )


def test_a_host_with_no_more_cores_than_eviction_threads_is_told_so() -> None:
    frame = _busy_server_idle_disk()
    for cores, note in ((2, True), (4, True), (16, False)):
        recs = {
            r.id: r
            for r in recommend(diagnose(derive(frame), ServerFacts(version="8.0.4", cores=cores))).recommendations
        }
        assert ("eviction-threads-cores" in recs) is note and ("eviction-threads" in recs) is not note
        if note:
            assert recs["eviction-threads-cores"].title.endswith(
                f"this host has {cores} cores and up to 4 eviction threads already"
            )


def test_no_advice_speaks_of_the_labs_own_host() -> None:
    # what the lab's machine could not show is ckptdiag's business; the reader's host is the subject
    from ckptdiag.advice.proof import NOT_PROVEN

    assert not [why for why in NOT_PROVEN.values() if "lab's host" in why or "2 cores" in why]


@pytest.mark.parametrize(
    ("busy_pct", "disk_saturated", "pauses", "as_settings"),
    [
        (30.0, True, (), True),  # CPUs with room: the settings stand
        (97.0, False, (), False),  # busy CPUs and a disk with room: the CPUs lead, checks only
        (97.0, True, ((300.0, 303.0),), False),  # busy CPUs and a stall with no checkpoint running
        (97.0, True, (), True),  # busy CPUs, but the disk saturated in each stall and none outside them
    ],
)
def test_cpus_busy_with_other_work_are_a_cause_and_turn_settings_into_checks(
    busy_pct: float,
    disk_saturated: bool,
    pauses: tuple[tuple[float, float], ...],
    as_settings: bool,
    interval_proven: None,
) -> None:
    """Stalls on a host whose CPUs were 97 % busy (all processes): the busy CPUs lead the causes
    and no setting is given, only checks that say why; at 30 % the settings stand (#28: the
    healthy lab run beside CPU hogs got a high-confidence interval change). Not where the figures
    say the checkpoints' writes explain the stalls: the data disk saturated in each one and, at the
    same load, no stall while no checkpoint ran (the stall lab beside two CPU hogs)."""
    from ckptdiag.advice.kinds import CPU_BUSY

    frame = Server(seconds=600, pauses=pauses).frame()  # every checkpoint stalls
    rel = frame["t"].to_numpy() - frame["t"].iloc[0]
    total_ms = rel * 16_000.0
    frame["host.cpu.user_ms"] = total_ms * busy_pct / 100
    frame["host.cpu.idle_ms"] = total_ms * (1 - busy_pct / 100)
    if not disk_saturated:
        frame["disk.vda.tot_ticks"] = np.floor(rel * 300.0)  # 30 % busy throughout
    dx = diagnose(derive(frame), ServerFacts(version="7.0.21", cores=16))
    assert bool(dx.other_stalls) is bool(pauses)
    advice = recommend(dx)
    kinds = [c.kind for c in advice.causes]
    settings = [r for r in advice.recommendations if r.kind == "setting"]
    assert bool(settings) is as_settings and advice.recommendations
    assert (kinds[0] == CPU_BUSY) is (busy_pct > 90 and not as_settings), kinds
    if busy_pct > 90 and not as_settings:
        assert all("CPUs were 97 % busy" in r.confidence_why for r in advice.recommendations if r.change is not None)
    if busy_pct > 90 and as_settings:  # the disk leads, and the busy CPUs are still said beside it
        assert kinds[0] == DISK_SATURATED and CPU_BUSY not in kinds
        assert any("the host's CPUs were 97 % busy" in n for n in dx.evidence), dx.evidence


@pytest.mark.parametrize(("mongod_pct", "others_lead"), [(None, None), (10.0, True), (85.0, False)])
def test_busy_cpus_are_split_between_mongod_and_other_processes(
    mongod_pct: float | None, others_lead: bool | None, interval_proven: None
) -> None:
    """mongod's own CPU time (extra_info, Linux 4.2+) beside the host's: the CPU cause says which
    took the CPUs, and the check sends the reader to other processes or to what mongod runs."""
    from ckptdiag.advice.kinds import CPU_BUSY

    frame = Server(seconds=600).frame()
    rel = frame["t"].to_numpy() - frame["t"].iloc[0]
    total_ms = rel * 16_000.0  # 16 CPUs
    frame["host.cpu.user_ms"] = total_ms * 0.97
    frame["host.cpu.idle_ms"] = total_ms * 0.03
    frame["disk.vda.tot_ticks"] = np.floor(rel * 300.0)  # the disk 30 % busy: the CPUs lead
    if mongod_pct is not None:
        frame["process.user_us"] = total_ms * 1000 * mongod_pct / 100 * 0.75
        frame["process.system_us"] = total_ms * 1000 * mongod_pct / 100 * 0.25
    dx = diagnose(derive(frame), ServerFacts(version="7.0.21", cores=16))
    advice = recommend(dx)
    cpu = advice.causes[0]
    assert cpu.kind == CPU_BUSY
    if mongod_pct is None:
        assert dx.other_cpu_pct_p50 is None and len(cpu.evidence) == 1
    else:
        assert dx.other_cpu_pct_p50 == pytest.approx(97 - mongod_pct, abs=0.5)
        others = 97 - mongod_pct
        assert cpu.evidence[1].startswith(f"other processes than mongod took ~{others:.0f} % of the host's CPU time")
    lead = {None: "the host's CPUs were busy:", True: "other processes kept", False: "with mongod's own work"}
    assert lead[others_lead] in cpu.title
    checks = [r.confidence_why for r in advice.recommendations if r.change is not None]
    assert checks
    where = "db.currentOp()" if others_lead is False else "find what else runs on the host first"
    assert all(where in why for why in checks), checks


@pytest.mark.parametrize(("own_between_mb_s", "named"), [(0.0, True), (40.0, False)])
def test_a_disk_that_writes_far_more_than_mongod_has_another_writer(own_between_mb_s: float, named: bool) -> None:
    """#31: the data disk writes 40 MB/s between checkpoints; where mongod's data files and journal
    account for it (eviction's writes) there is no other writer, where they account for none of it
    something else on the host writes there, and a check says how to find it."""
    from ckptdiag.advice.kinds import OTHER_WRITER

    frame = Server(seconds=600, base_mb_s=40.0, mb_per_s=60.0).frame()
    between = np.concatenate(([0.0], np.diff(frame["t"].to_numpy()))).cumsum() * own_between_mb_s * 2**20
    frame["block.bytes_written"] = frame["ckpt.bytes_written"] + np.floor(between)
    frame["journal.bytes_written"] = np.floor(np.arange(len(frame)) * 2**20 * 0.5)  # 0.5 MB/s
    advice = recommend(diagnose(derive(frame), ServerFacts(version="7.0.21")))
    kinds = [c.kind for c in advice.causes]
    assert (OTHER_WRITER in kinds) is named
    if named:
        (cause,) = [c for c in advice.causes if c.kind == OTHER_WRITER]
        assert cause.evidence[0].startswith("vda wrote 4") and "came from elsewhere" in cause.evidence[0]
        assert "pidstat -d 1" in next(r.predicted_text for r in advice.recommendations if r.id == "other-writer")


def test_the_history_cause_explains_the_share_of_mongods_writes_its_store_grew_by() -> None:
    """Where the history store's file time is short (the checkpoints' own phase), what the history
    costs is eviction moving old versions there and the checkpoints' syncs flushing them: its
    growth against mongod's own writes over the window is the share it explains."""
    from ckptdiag.advice.kinds import HISTORY_PINNED

    frame = Server(seconds=600, base_mb_s=4.0, mb_per_s=60.0).frame()
    rel = frame["t"].to_numpy() - frame["t"].iloc[0]
    frame["block.bytes_written"] = frame["ckpt.bytes_written"] + np.floor(rel * 3 * 2**20)  # eviction: 3 MB/s
    frame["journal.bytes_written"] = np.floor(rel * 2**20)  # 1 MB/s
    frame["cache.hs_disk_bytes"] = np.floor(2**30 + rel * 2 * 2**20)  # grows 2 MB/s: 1.0 -> 2.2 GB
    frame["cache.max_bytes"] = 4.0 * 2**30
    dx = diagnose(derive(frame), ServerFacts(version="7.0.21"))
    assert dx.disk_writes_b_s is not None
    own = dx.disk_writes_b_s[1]
    (history,) = [c for c in recommend(dx).causes if c.kind == HISTORY_PINNED]
    assert history.share == pytest.approx(2 * 2**20 / own, rel=0.02)
    assert history.share_of.endswith("the history store's growth")
