"""Running a lab scenario exactly as a DBA would watch a server: the engine serves over the wire in
its own process (``ckptdiag lab serve``), and ``record``'s pipeline samples it once a second.

Two processes, because the sampler's own Python work (decoding, extracting, compressing) would
otherwise share the engine process's interpreter lock with the workload and show up in the very
write latencies the lab measures.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ckptdiag import recording
from ckptdiag.clock import SystemClock
from ckptdiag.errors import CkptdiagError
from ckptdiag.guard.outputs import check_target, write_text
from ckptdiag.lab import modeldisk
from ckptdiag.lab.config import LabConfig
from ckptdiag.lab.scenarios import Scenario
from ckptdiag.lab.truth import TruthSummary, summarize
from ckptdiag.recording.recorder import DiskReader, RecordResult, record_into
from ckptdiag.sources.connection import ConnectOptions
from ckptdiag.sources.devices import DiskPlan, plan_disks
from ckptdiag.sources.diskstats import read_diskstats
from ckptdiag.sources.mongo import MongoSource

StopSignals = Callable[[Callable[[str], None]], Any]
_SERVING = re.compile(r"serving on (mongodb://127\.0\.0\.1:\d+)")


@dataclass(frozen=True)
class LabRun:
    """Where a lab run's recording and ground truth went, and what the truth says."""

    recording: Path
    truth_path: Path
    truth: dict[str, Any]
    summary: TruthSummary
    result: RecordResult
    config: LabConfig


def truth_path_for(recording_path: Path) -> Path:
    """The ground-truth file written beside a recording: ``<name>.truth.json``."""
    name = recording_path.name
    for suffix in (".jsonl.gz", ".jsonl", ".gz"):
        if name.endswith(suffix):
            name = name[: -len(suffix)]
            break
    return recording_path.with_name(name + ".truth.json")


# every setting a recommendation or the command line can change, as `lab serve` flags: a field
# missing here would be silently dropped from `demo --verify`'s after run (tests/test_lab.py)
SERVE_FLAGS = {
    "checkpoint_s": "--checkpoint-interval",
    "cache_mb": "--cache-mb",
    "eviction_target": "--eviction-target",
    "eviction_trigger": "--eviction-trigger",
    "eviction_dirty_target": "--eviction-dirty-target",
    "eviction_dirty_trigger": "--eviction-dirty-trigger",
    "eviction_updates_target": "--eviction-updates-target",
    "eviction_updates_trigger": "--eviction-updates-trigger",
    "eviction_threads_min": "--eviction-threads-min",
    "eviction_threads_max": "--eviction-threads-max",
    "write_rate": "--write-rate",
    "io_capacity_mb": "--io-capacity-mb",
    "disk_mb_s": "--disk-mb-s",
    "slow_disk": "--slow-disk",
}
# the scenario's own shape, not settings: fixed by the scenario's name
SCENARIO_ONLY = frozenset(
    {
        "collections",
        "new_collection_share",
        "checkpoint_mode",
        "journal_commit_ms",
        "threads",
        "value_bytes",
        "journaled",
        "preload_docs",
        "updates",
        "snapshot_after_s",
    }
)


# The installed package, never a source tree that happens to be the working directory: run from a
# checkout with a non-editable install, `python -m` put the checkout first on sys.path and the lab
# imported its unbuilt sources (no slow-disk shim: the stall scenario fell back and read OK).
# `python -P` would keep the working directory off sys.path, but only from 3.11: `-c` puts it there as
# "" (unless PYTHONSAFEPATH is set), the code drops it and runs the module named next, on every version.
_RUN_INSTALLED = (
    "import runpy, sys\n"
    "if sys.path and sys.path[0] == '':\n"
    "    del sys.path[0]\n"
    "runpy.run_module(sys.argv.pop(1), run_name='__main__', alter_sys=True)\n"
)
PYTHON_M = (sys.executable, "-c", _RUN_INSTALLED)


def serve_command(scenario: Scenario, config: LabConfig, truth_out: Path, lab_dir: Path | None) -> list[str]:
    """The ``ckptdiag lab serve`` command line that runs ``config`` on a free port."""
    base = scenario.config
    cmd = [
        *PYTHON_M,
        "ckptdiag",
        "lab",
        "serve",
        "--scenario",
        scenario.name,
        "--port",
        "0",
        "--truth",
        str(truth_out),
    ]
    for field, flag in SERVE_FLAGS.items():
        if getattr(config, field) != getattr(base, field):
            cmd += [flag, str(getattr(config, field))]
    if lab_dir is not None:
        cmd += ["--lab-dir", str(lab_dir)]
    return cmd


class LabProcess:
    """A ``lab serve`` child process: started, waited for, stopped with SIGTERM."""

    def __init__(self, cmd: list[str], env: dict[str, str] | None = None) -> None:
        self.cmd = cmd
        self.env = env or {}
        self.proc: subprocess.Popen[str] | None = None
        self.stderr_lines: list[str] = []
        self.uri: str | None = None
        self._ready = threading.Event()
        self._pump_thread: threading.Thread | None = None

    def _pump(self) -> None:
        assert self.proc is not None and self.proc.stderr is not None
        for line in self.proc.stderr:
            self.stderr_lines.append(line.rstrip())
            if line.startswith("ckptdiag: warning:"):
                # what the child warns about (a slow disk it could not make) is the user's to see
                sys.stderr.write(line)
            match = _SERVING.search(line)
            if match and self.uri is None:
                self.uri = match.group(1)
                self._ready.set()
        self._ready.set()

    def start(self, timeout_s: float = 180.0) -> str:
        """Start the child and return its URI once it serves."""
        env = {**os.environ, **self.env, "PYTHONUNBUFFERED": "1"}
        self.proc = subprocess.Popen(
            self.cmd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=env
        )
        self._pump_thread = threading.Thread(target=self._pump, daemon=True)
        self._pump_thread.start()
        self._ready.wait(timeout_s)
        if self.uri is None:
            self.stop()
            detail = next((ln for ln in reversed(self.stderr_lines) if "error" in ln), "no answer")
            raise CkptdiagError(
                f"the lab did not start: {detail.removeprefix('ckptdiag: error: ')}",
                "run 'ckptdiag lab serve --debug' to see why",
            )
        return self.uri

    def stop(self, timeout_s: float = 60.0) -> None:
        """SIGTERM, then wait: the child closes the engine, writes its truth file, removes its data."""
        if self.proc is None:
            return
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout_s)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        if self._pump_thread is not None:
            self._pump_thread.join(timeout=5)  # EOF once the child is gone
        if self.proc.stderr is not None:
            self.proc.stderr.close()


def _disk_plan(dbpath: str, config: LabConfig, model_state: Path | None) -> tuple[DiskPlan, DiskReader | None]:
    """The disk the recorder watches: the model device's counters, or dbPath's disk."""
    if model_state is None:
        return plan_disks(dbpath, True, (), set(read_diskstats())), None
    note = f"the lab's model disk: {config.disk_mb_s} MB/s with one queue (docs/lab.md#slow-disk)"
    plan = DiskPlan((modeldisk.DEVICE,), True, notes=(note,), source="lab model disk")
    return plan, lambda: modeldisk.read_counters(model_state)


def run_scenario(
    scenario: Scenario,
    config: LabConfig,
    duration_s: float,
    output: Path,
    *,
    lab_dir: Path | None = None,
    stop_signals: StopSignals | None = None,
    on_sample: Callable[[dict[str, Any]], None] | None = None,
    on_event: Callable[[dict[str, Any]], None] | None = None,
    overwrite: bool = False,
) -> LabRun:
    """Serve the scenario in a child process, record it for ``duration_s``, stop it, keep its truth."""
    truth_target = check_target(truth_path_for(output), (output,), what="the ground truth")  # before minutes of lab
    writer = recording.RecordingWriter(output, overwrite=overwrite)
    clock = SystemClock()
    with tempfile.TemporaryDirectory(prefix="ckptdiag-truth-") as tmp:
        truth_tmp = Path(tmp) / "truth.json"
        # on the model disk the child writes the device's counters where this process reads them
        model_state = Path(tmp) / "modeldisk.state" if config.disk_mb_s and config.slow_disk == "model" else None
        env = {modeldisk.ENV_STATE: str(model_state)} if model_state else {}
        child = LabProcess(serve_command(scenario, config, truth_tmp, lab_dir), env)
        try:
            uri = child.start()
        except BaseException:
            writer.discard()
            raise
        source = MongoSource(ConnectOptions(uri=uri))
        try:
            info = source.connect()
            plan, reader = _disk_plan(info.dbpath, config, model_state)
            result = record_into(
                writer,
                source,
                info,
                plan,
                header_source={"kind": "lab", "scenario": scenario.name, "uri": uri},
                clock=clock,
                interval=1.0,
                duration=duration_s,
                on_sample=on_sample,
                on_event=on_event,
                stop_signals=stop_signals,
                disk_reader=reader,
            )
        finally:
            writer.close()
            source.close()
            child.stop()
        if not truth_tmp.exists():
            raise CkptdiagError(
                "the lab stopped without writing its ground truth",
                "; ".join(child.stderr_lines[-3:]) or "see 'ckptdiag lab serve --debug'",
            )
        truth = json.loads(truth_tmp.read_text())
    truth["scenario"] = scenario.name
    truth["recorded_at"] = time.time()
    write_text(truth_target, json.dumps(truth, indent=1) + "\n")
    return LabRun(output, truth_path_for(output), truth, summarize(truth), result, config)
