"""The embedded WiredTiger lab: real checkpoints, real statistics, served over the wire."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from dataclasses import replace
from pathlib import Path

import pytest

pytest.importorskip("wiredtiger")

from ckptdiag.errors import CkptdiagError
from ckptdiag.lab import config as lab_config_module
from ckptdiag.lab.config import LabConfig
from ckptdiag.lab.engine import LabEngine
from ckptdiag.lab.run import SCENARIO_ONLY, SERVE_FLAGS, LabProcess, serve_command
from ckptdiag.lab.scenarios import get_scenario
from ckptdiag.model import catalogue
from ckptdiag.recording import read_recording

SMALL = LabConfig(cache_mb=256, checkpoint_s=2, write_rate=3000, threads=2)
SMALL_FLAGS = ["--cache-mb", "256", "--checkpoint-interval", "2", "--write-rate", "3000"]


def ckptdiag(*args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "ckptdiag", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        stdin=subprocess.DEVNULL,
    )


def test_engine_makes_real_checkpoints_and_its_statistics_move(tmp_path: Path) -> None:
    with LabEngine(SMALL, tmp_path).start(10) as eng:
        first = eng.server_status(histograms=True)
        time.sleep(6.5)
        last = eng.server_status(histograms=True)
        home = eng.home
        assert home is not None and home.is_dir()
    assert home is not None and not home.exists()  # the data directory is removed on close
    a, b = catalogue.extract(first), catalogue.extract(last)
    assert b["ckpt.generation"] >= a["ckpt.generation"] + 2  # checkpoints every 2 s
    assert b["block.bytes_written"] > a["block.bytes_written"]
    assert b["ckpt.bytes_written"] > a["ckpt.bytes_written"]
    assert b["ops.insert"] - a["ops.insert"] > 3000 * 4  # paced at 3000/s for 6.5 s
    assert b["lat.writes.ops"] == b["ops.insert"]
    assert b["cache.max_bytes"] == 256 * 2**20
    assert catalogue.coverage(last).missing == ()  # shaped exactly as an 8.0 serverStatus
    assert last["opLatencies"]["writes"]["histogram"]
    truth = eng.truth()
    done = [c for c in truth["checkpoints"] if c["end"] is not None]
    assert len(done) >= 2 and all(0 <= c["duration_s"] < 2 for c in done)
    assert len(truth["seconds"]) >= 5 and not truth["errors"]


def _tids() -> set[int]:
    return {int(t) for t in os.listdir("/proc/self/task")}


def test_the_engine_and_its_workload_run_on_short_slices_and_the_caller_gets_its_own_back(tmp_path: Path) -> None:
    # lab/slices.py: the engine's own threads (WiredTiger's eviction, log and sweep servers) and the
    # workload's inherit the short slices asked for before the engine opens
    from ckptdiag.lab.slices import SLICE_US, current_slice_ns

    me = current_slice_ns()
    old = _tids()
    with LabEngine(SMALL, tmp_path).start(5) as eng:
        asked = current_slice_ns()
        if asked == me:
            pytest.skip("this kernel does not let a normal thread ask for its slice (Linux 6.12+)")
        started = {tid: current_slice_ns(tid) for tid in _tids() - old}
        writers = [t.native_id for t in eng._threads]
    assert asked == SLICE_US * 1000
    assert len(started) > len(writers) >= SMALL.threads  # the engine's threads and the lab's
    assert set(started.values()) <= {SLICE_US * 1000, None}, started  # None: a thread that just ended
    assert current_slice_ns() == me


def test_the_lab_keeps_its_paced_rate_with_every_core_busy(tmp_path: Path) -> None:
    # Users' hosts are busy: with every core taken by another process (one CPU-bound process a
    # core), journaled writes from three clients still reach their paced rate. Without the short
    # slices they fell to about half (each wake-up waited out another process's slice).
    from ckptdiag.lab.slices import short_slices

    granted: list[bool] = []  # asked in a thread of its own: the test runner's keeps its slice
    thread = threading.Thread(target=lambda: granted.append(short_slices() is not None))
    thread.start()
    thread.join()
    if not granted[0]:
        pytest.skip("this kernel does not let a normal thread ask for its slice (Linux 6.12+)")
    cfg = LabConfig(cache_mb=256, checkpoint_s=60, write_rate=600, threads=3, value_bytes=1024, journaled=True)
    spin = "import time\nend = time.monotonic() + 60\nwhile time.monotonic() < end: pass"
    hogs = [subprocess.Popen([sys.executable, "-c", spin]) for _ in range(os.cpu_count() or 2)]
    try:
        with LabEngine(cfg, tmp_path).start(12) as eng:
            time.sleep(1.5)
            a, t0 = catalogue.extract(eng.server_status()), time.monotonic()
            time.sleep(6.0)
            b, t1 = catalogue.extract(eng.server_status()), time.monotonic()
    finally:
        for hog in hogs:
            hog.kill()
            hog.wait()
    rate = (b["ops.insert"] - a["ops.insert"]) / (t1 - t0)
    assert rate >= 0.9 * 600, rate


def test_wiredtiger_checkpoint_mode_checkpoints_without_a_thread(tmp_path: Path) -> None:
    cfg = LabConfig(cache_mb=256, checkpoint_s=1, write_rate=2000, threads=1, checkpoint_mode="wiredtiger")
    assert "checkpoint=(wait=1)" in cfg.open_config()
    with LabEngine(cfg, tmp_path).start(5) as eng:
        time.sleep(3.5)
        assert catalogue.extract(eng.server_status())["ckpt.generation"] >= 2


def test_journaled_writes_each_wait_for_a_journal_sync(tmp_path: Path) -> None:
    # j:true: every commit returns after a sync of the journal (shared by concurrent commits);
    # unjournaled commits leave the syncs to the journal flusher (every 100 ms)
    syncs = {}
    for journaled in (False, True):
        cfg = LabConfig(cache_mb=256, checkpoint_s=60, write_rate=1000, threads=2, journaled=journaled)
        with LabEngine(cfg, tmp_path).start(10) as eng:
            time.sleep(1.0)
            a = catalogue.extract(eng.server_status())
            time.sleep(3.0)
            b = catalogue.extract(eng.server_status())
        ops = b["ops.insert"] - a["ops.insert"]
        assert ops > 1000 * 2  # paced at 1000/s for 3 s
        syncs[journaled] = (b["journal.syncs"] - a["journal.syncs"]) / ops
    assert syncs[False] < 0.05  # ~30 flushes for ~3,000 writes
    assert syncs[True] > 0.3  # most commits sync (2 clients: at most two share one)


def test_runtime_reconfigure_changes_the_engine(tmp_path: Path) -> None:
    with LabEngine(SMALL, tmp_path).start(5) as eng:
        eng.reconfigure(cache_mb=320, eviction_dirty_target=3, eviction_dirty_trigger=10)
        assert catalogue.extract(eng.server_status())["cache.max_bytes"] == 320 * 2**20
        assert (
            "eviction_dirty_target=3"
            in eng.cmdline()["parsed"]["storage"]["wiredTiger"]["engineConfig"]["configString"]
        )


def test_the_io_capacity_throttle_reaches_the_engine_and_lifts_at_runtime(tmp_path: Path) -> None:
    # the io-throttled scenario's cause, and the change that lifts it, on the real engine
    cfg = replace(SMALL, io_capacity_mb=1, write_rate=3000)
    assert "io_capacity=(total=1MB)" in cfg.engine_config()

    def waited_us() -> float:  # checkpoints waiting for the throttle (WiredTiger's "capacity" statistics)
        return float(catalogue.extract(eng.server_status())["capacity.ckpt_wait_us"])

    with LabEngine(cfg, tmp_path).start(14) as eng:
        time.sleep(2.0)
        a = waited_us()
        time.sleep(3.0)
        throttled = (waited_us() - a) / 3.0
        eng.reconfigure(io_capacity_mb=0)
        time.sleep(1.0)
        b = waited_us()
        time.sleep(3.0)
        lifted = (waited_us() - b) / 3.0
    assert throttled > 100_000  # checkpoints (every 2 s) waited for the throttle: us a second
    assert lifted < throttled / 10  # lifted: (almost) no more waiting


def test_not_enough_disk_space_fails_before_starting(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(lab_config_module, "free_bytes", lambda path: 10 * 2**20)
    with pytest.raises(CkptdiagError, match="not enough disk space"):
        LabEngine(SMALL, tmp_path).start(60)
    assert list(tmp_path.iterdir()) == []


def test_too_few_open_files_for_the_collections_fails_before_starting(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import resource

    monkeypatch.setattr(resource, "getrlimit", lambda which: (1024, 4096))
    said = "the lab's 10,000 collections need 11,024 open files; this host allows 4,096"
    with pytest.raises(CkptdiagError, match=said):
        LabEngine(replace(SMALL, collections=10_000), tmp_path).start(60)
    assert list(tmp_path.iterdir()) == []


def test_writes_create_collections_only_while_the_host_has_files_for_them() -> None:
    """A create past the open-file limit would make WiredTiger panic: the writes go to the usual
    collection once the budget is spent."""
    import random

    from ckptdiag.lab.collection import NewCollections

    class Session:
        def __init__(self) -> None:
            self.created: list[str] = []

        def create(self, name: str, config: str) -> None:
            self.created.append(name)

        def open_cursor(self, name: str) -> str:
            return name

    session = Session()
    fresh = NewCollections(session, 1.0, "w", budget=3)
    cursors = [fresh.cursor(random.Random(1)) for _ in range(5)]
    assert cursors == ["table:new-w-1", "table:new-w-2", "table:new-w-3", None, None]
    assert session.created == cursors[:3]


def test_many_collections_and_writes_that_create_theirs_reach_the_engine(tmp_path: Path) -> None:
    """300 collections before the run and one write in ten into a collection it creates: every
    checkpoint gathers them all (the server's own count of handles walked), and the new ones are
    real tables; mongod's own CPU time is in the reply, as a Linux mongod gives it."""
    config = replace(SMALL, collections=300, new_collection_share=0.1, write_rate=500)
    with LabEngine(config, tmp_path).start(10) as eng:
        time.sleep(5.0)
        status = eng.server_status()
        assert eng.home is not None
        created = len(list(eng.home.glob("new-*.wt")))
    values = catalogue.extract(status)
    assert created >= 100  # ~50 a second
    assert values["dhandles.active"] >= 300
    assert values["ckpt.handles_walked"] >= 300
    assert values["process.user_us"] > 0 and "system_time_us" in status["extra_info"]


def test_record_against_lab_serve_over_loopback(tmp_path: Path) -> None:
    truth = tmp_path / "truth.json"
    # the same command line `demo` runs: the scenario's overrides become flags
    config = get_scenario("healthy").config.with_overrides(cache_mb=256, checkpoint_s=2, write_rate=3000)
    cmd = serve_command(get_scenario("healthy"), config, truth, tmp_path / "lab")
    assert cmd[cmd.index("--cache-mb") + 1] == "256" and "--eviction-target" not in cmd
    child = LabProcess(cmd)
    uri = child.start()
    try:
        out = tmp_path / "rec.jsonl.gz"
        proc = ckptdiag("record", "--uri", uri, "-d", "6", "-o", str(out))
        import pymongo

        client = pymongo.MongoClient(uri, directConnection=True)
        diag = client.admin.command("getDiagnosticData")["data"]
        client.close()
    finally:
        child.stop()
    assert proc.returncode == 0, proc.stderr
    rec = read_recording(out)
    assert len(rec.samples) == 7
    assert rec.header["server"]["version"] == "8.0.0" and rec.header["disks"]["local_to_server"]
    cov = next(e for e in rec.events if e["kind"] == "coverage")
    assert cov["missing"] == []
    gens = [s["m"]["ckpt.generation"] for s in rec.samples]
    assert gens[-1] - gens[0] >= 2
    assert all("hist" in s for s in rec.samples[1:])
    assert "wiredTiger" in diag["serverStatus"] and "disks" in diag["systemMetrics"]
    assert truth.exists() and not list((tmp_path / "lab").iterdir())  # data removed on SIGTERM


def test_lab_serve_stops_cleanly_on_ctrl_c(tmp_path: Path) -> None:
    lab_dir = tmp_path / "lab"
    cmd = [sys.executable, "-m", "ckptdiag", "lab", "serve", "--port", "0", "--lab-dir", str(lab_dir), *SMALL_FLAGS]
    with subprocess.Popen(cmd, stderr=subprocess.PIPE, text=True) as proc:
        assert proc.stderr is not None
        line = proc.stderr.readline()
        assert "serving on mongodb://127.0.0.1:" in line
        assert len(list(lab_dir.iterdir())) == 1
        proc.send_signal(signal.SIGINT)
        assert proc.wait(60) == 0
    assert list(lab_dir.iterdir()) == []


def test_demo_runs_records_and_reports(tmp_path: Path) -> None:
    out = tmp_path / "demo.jsonl.gz"
    proc = ckptdiag(
        "demo",
        "--scenario",
        "healthy",
        "--duration",
        "8",
        *SMALL_FLAGS,
        "--lab-dir",
        str(tmp_path / "lab"),
        "-o",
        str(out),
    )
    assert proc.returncode == 0, proc.stderr
    assert "lab checkpoints" in proc.stdout and "stalled" in proc.stdout
    assert (tmp_path / "demo.truth.json").exists()
    assert len(read_recording(out).samples) == 9
    assert not list((tmp_path / "lab").iterdir())


def test_demo_without_the_binding_says_how_to_install_it() -> None:
    code = "import sys; sys.modules['wiredtiger'] = None; from ckptdiag.cli import main; main()"
    proc = subprocess.run(
        [sys.executable, "-c", code, "demo"], capture_output=True, text=True, timeout=60, env={**os.environ}
    )
    assert proc.returncode == 1
    assert proc.stderr.startswith("ckptdiag: error: the WiredTiger Python binding is not installed")
    assert "swig==4.1.1" in proc.stderr and "make demo" in proc.stderr


def test_bad_overrides_are_usage_errors() -> None:
    proc = ckptdiag("demo", "--eviction-dirty-target", "30", "--eviction-dirty-trigger", "20")
    assert proc.returncode == 2 and "eviction_dirty_target must be below eviction_dirty_trigger" in proc.stderr
    proc = ckptdiag("demo", "--scenario", "nope")
    assert proc.returncode == 2 and "choose from: healthy, stall" in proc.stderr


def test_every_setting_a_recommendation_can_change_reaches_the_lab(tmp_path: Path) -> None:
    # demo --verify applies advice.lab_overrides through `lab serve` flags: none may be dropped
    from dataclasses import fields

    base = get_scenario("stall").config
    changed = {
        "checkpoint_s": 15.0,
        "cache_mb": 1024,
        "eviction_target": 70,
        "eviction_trigger": 90,
        "eviction_dirty_target": 3,
        "eviction_dirty_trigger": 15,
        "eviction_updates_target": 2,
        "eviction_updates_trigger": 10,
        "eviction_threads_min": 8,
        "eviction_threads_max": 8,
        "io_capacity_mb": 40,
    }
    assert set(changed) <= {f.name for f in fields(base)}
    # every field is a flag of `lab serve` or fixed by the scenario: none can be dropped silently
    assert {f.name for f in fields(base)} == set(SERVE_FLAGS) | SCENARIO_ONLY
    assert all(getattr(base, name) != value for name, value in changed.items())  # each one a change
    cmd = serve_command(get_scenario("stall"), base.with_overrides(**changed), tmp_path / "t.json", None)
    for name, value in changed.items():
        flag = "--" + name.replace("_", "-").replace("checkpoint-s", "checkpoint-interval")
        assert SERVE_FLAGS[name] == flag
        assert cmd[cmd.index(flag) + 1] == str(value), name
    proc = ckptdiag("demo", "--eviction-updates-target", "12", "--eviction-updates-trigger", "10")
    assert proc.returncode == 2 and "eviction_updates_target must be below eviction_updates_trigger" in proc.stderr


def test_healthy_lab_is_ok_and_every_ground_truth_checkpoint_is_found(tmp_path: Path) -> None:
    from ckptdiag.lab.truth import match, summarize

    out = tmp_path / "healthy.jsonl.gz"
    flags = ["--cache-mb", "512", "--checkpoint-interval", "6", "--write-rate", "3000"]
    proc = ckptdiag(
        "demo",
        "--scenario",
        "healthy",
        "--duration",
        "28",
        *flags,
        "--lab-dir",
        str(tmp_path),
        "-o",
        str(out),
        "--verify",
    )
    assert proc.returncode == 0, proc.stderr
    assert "ckptdiag against the ground truth: found" in proc.stdout
    # healthy: no change recommended, so --verify has nothing to run
    assert "Recommendations: no change" in proc.stdout
    assert "no setting to change was recommended, so there is nothing to verify" in proc.stderr
    assert not (tmp_path / "healthy.after.jsonl.gz").exists()
    report = ckptdiag("report", str(out), "-f", "json", "--fail-on", "warn")
    doc = json.loads(report.stdout)
    assert report.returncode == 0 and doc["verdict"]["severity"] == "ok", doc["verdict"]
    assert doc["recommendations"] == [] and doc["advice"]["summary"].startswith("no change")
    truth = summarize(json.loads((tmp_path / "healthy.truth.json").read_text()))
    detected = [(_epoch(e["start"]), e["stall"]) for e in doc["checkpoints"]["episodes"]]
    m = match(truth, detected, tolerance_s=1.0)
    assert m.checkpoints >= 3 and m.found == m.checkpoints and m.false_stalls == 0


def _epoch(iso_time: str) -> float:
    import datetime as dt

    return dt.datetime.fromisoformat(iso_time.replace("Z", "+00:00")).timestamp()


def test_stall_lab_is_critical_and_every_ground_truth_stall_is_flagged_and_placed(tmp_path: Path) -> None:
    # On its slow disk (the model disk, for any user: lab/_slowdisk.c; CI runs this suite as an
    # unprivileged account) the stall scenario's checkpoints stall writes in 2 of 2 by the ground
    # truth, and ckptdiag must say critical, flag both with no false flag, and give the shorter
    # interval as a check (not proven: issue #30's yardstick); --verify --only applies it anyway,
    # judges it, and each checkpoint writes less. Where the shim was not built (no C compiler) the
    # scenario runs on the lab dir's own disk and may not stall: then every stall the truth saw is
    # still flagged and every checkpoint found.
    from ckptdiag.lab.modeldisk import shim_path
    from ckptdiag.lab.truth import match, summarize

    slow = shim_path() is not None
    out = tmp_path / "stall.jsonl.gz"
    proc = ckptdiag(
        "demo",
        # 40 s checkpoints, not the scenario's 60: two of them in 95 s instead of 135, each run
        # (the suite's longest test: CI has 15 minutes)
        *("--scenario", "stall", "--checkpoint-interval", "40", "--duration", "95"),
        *("--lab-dir", str(tmp_path), "-o", str(out)),
        *("--verify", "--only", "checkpoint-interval"),
        timeout=700,
    )
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(ckptdiag("report", str(out), "-f", "json", "--fail-on", "never").stdout)
    truth = summarize(json.loads((tmp_path / "stall.truth.json").read_text()))
    detected = [(_epoch(e["start"]), e["stall"]) for e in doc["checkpoints"]["episodes"]]
    m = match(truth, detected, tolerance_s=1.0)
    assert m.checkpoints >= 2 and m.found == m.checkpoints  # at 40 s and ~81 s
    assert m.stalls_flagged >= 0.9 * m.stalls
    if slow:
        assert m.stalls == m.checkpoints and m.stalls_flagged == m.stalls and m.false_stalls == 0, (truth, detected)
        assert doc["verdict"]["severity"] == "critical", doc["verdict"]
        assert "600 inserts/s (j:true), disk 16 MB/s)" in " ".join(proc.stdout.split())
        assert doc["checkpoints"]["disk"] == "labdisk"  # the model device, sampled like any data disk
    if doc["verdict"]["severity"] == "ok":
        assert not slow and doc["recommendations"] == [] and "nothing to verify" in proc.stderr
        return
    assert "as the workload measured it (the lab's ground truth)" in proc.stdout
    recs = {r["id"]: r for r in doc["recommendations"]}
    interval = recs["checkpoint-interval"]
    assert interval["kind"] == "note" and "not proven in the lab" in interval["confidence"]["why"]
    assert doc["advice"]["apply"]["runtime"] == []  # nothing unproven in the block to paste
    # the yardstick's own line, pass or fail, with the figures the server lives with judged
    verdict = [line for line in proc.stdout.splitlines() if line.startswith("verify: ")][-1]  # after its header
    assert verdict.startswith(("verify: PASS", "verify: FAIL", "verify: INCONCLUSIVE")), verdict
    if verdict.startswith("verify: INCONCLUSIVE"):
        # a run could not keep its pace on this host (the suite's other worker, other processes):
        # no yardstick applies; the line names the run and the figure that says so
        told = " ".join(proc.stdout.split())
        assert "could not keep its pace (before: " in told or "could not keep its pace (after: " in told, told
        assert "between checkpoints" in told and "run it again on an idle host" in told
    else:
        assert "seconds stalled and writes lost per hour" in " ".join(proc.stdout.split())
    # the shorter interval: checkpoints come more often and each one writes less (direction, not
    # figures: benchmarks/bench_verify.py measures how much). 40 -> 10 s cuts a checkpoint's bytes
    # by less than 4x: pages touched by scattered writes are written whole at every checkpoint
    # (one run: 0.67; 60 -> 10 s: 6.5-7.1 MB of ~18, ~0.37)
    after = tmp_path / "stall.after.jsonl.gz"
    compared = json.loads(ckptdiag("compare", str(out), str(after), "-f", "json").stdout)
    rows = {r["metric"]: r for r in compared["rows"]}
    assert rows["bytes per checkpoint (p50)"]["ratio"] < 0.8
    assert rows["checkpoint interval"]["after"] < rows["checkpoint interval"]["before"]


def test_the_lab_child_runs_the_installed_package_not_a_source_tree_in_the_working_directory(tmp_path: Path) -> None:
    # `demo` run from a checkout with a non-editable install: its child must not import the
    # checkout's unbuilt sources (there the slow-disk shim was "not built" and the stall read OK)
    from ckptdiag.lab.run import PYTHON_M

    shadow = tmp_path / "ckptdiag"
    shadow.mkdir()
    for name in ("__init__.py", "__main__.py"):
        (shadow / name).write_text("raise SystemExit('imported the source tree in the working directory')\n")
    scenario = get_scenario("stall")
    cmd = serve_command(scenario, scenario.config, tmp_path / "t.json", None)
    head = cmd[: cmd.index("ckptdiag") + 1]
    assert head == [*PYTHON_M, "ckptdiag"]
    proc = subprocess.run([*head, "--version"], cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0 and proc.stdout.startswith("ckptdiag, version"), proc.stderr
    bare = [sys.executable, "-m", "ckptdiag", "--version"]
    shadowed = subprocess.run(bare, cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert "imported the source tree" in shadowed.stderr  # what PYTHON_M prevents


def _serve_small_stall(tmp_path: Path, env: dict[str, str], *extra: str) -> subprocess.CompletedProcess[str]:
    small = ("--duration", "2", "--cache-mb", "256", "--write-rate", "1000", "--lab-dir", str(tmp_path))
    return subprocess.run(
        [sys.executable, "-m", "ckptdiag", "lab", "serve", "--scenario", "stall", "--port", "0", *small, *extra],
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
        env={**os.environ, **env},
    )


def test_the_stall_scenario_runs_on_the_model_disk_and_cleans_it_up(tmp_path: Path) -> None:
    from ckptdiag.lab import modeldisk

    if modeldisk.shim_path() is None:
        pytest.skip("the model disk's shim was not built")
    state = tmp_path / "device.state"
    proc = _serve_small_stall(tmp_path, {modeldisk.ENV_STATE: str(state)})
    assert proc.returncode == 0, proc.stderr
    assert "warning" not in proc.stderr and "serving on mongodb://" in proc.stderr
    (counters, _n) = modeldisk.read_counters(state)[modeldisk.DEVICE]
    assert counters.wr_ios > 0  # the journal's syncs went through the model device
    assert [p.name for p in tmp_path.iterdir()] == ["device.state"]  # its directory is gone


def test_a_shim_the_loader_skipped_falls_back_with_a_warning_not_a_loop(tmp_path: Path) -> None:
    from ckptdiag.lab import modeldisk

    env = {
        "LD_PRELOAD": str(tmp_path / "missing" / "_slowdisk.so"),
        modeldisk.ENV_DIR: str(tmp_path / f"{modeldisk.PREFIX}1-x"),
        modeldisk.ENV_MB_S: "16",
        modeldisk.ENV_STATE: str(tmp_path / "device.state"),
    }
    proc = _serve_small_stall(tmp_path, env)
    assert proc.returncode == 0, proc.stderr
    assert "cannot make one here (its shim could not be loaded)" in proc.stderr
    assert "running on the lab dir's own disk" in proc.stderr


@pytest.mark.skipif(os.geteuid() == 0, reason="as root the loop device may be made")
def test_the_loop_disk_without_root_is_an_error_that_points_to_the_model_disk(tmp_path: Path) -> None:
    proc = _serve_small_stall(tmp_path, {}, "--slow-disk", "loop")
    assert proc.returncode == 1
    assert "cannot make a 16 MB/s loop device here" in proc.stderr and "--slow-disk model" in proc.stderr
