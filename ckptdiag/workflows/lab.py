"""demo and lab serve: the WiredTiger lab, recorded and diagnosed, and --verify's before/after."""

from __future__ import annotations

import threading
import time
from collections.abc import Mapping
from contextlib import ExitStack, nullcontext
from dataclasses import dataclass, fields, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ckptdiag.errors import CkptdiagError
from ckptdiag.workflows import StopSignals, Warn
from ckptdiag.workflows.report import diagnose_window, write_report

if TYPE_CHECKING:
    from rich.console import RenderableType

    from ckptdiag.lab.config import LabConfig
    from ckptdiag.lab.run import LabRun
    from ckptdiag.lab.scenarios import Scenario
    from ckptdiag.recording.recorder import RecordResult
    from ckptdiag.report.document import Report
    from ckptdiag.report.verify import VerifyOutcome


@dataclass(frozen=True)
class DemoRequest:
    """Everything ``ckptdiag demo`` was asked to do."""

    scenario: str
    duration: float | None
    output: Path | None
    overwrite: bool
    lab_dir: Path | None
    overrides: Mapping[str, Any]
    live: bool = False
    verify: bool = False  # then apply the recommended settings and run again
    only: str | None = None  # ... or this recommendation's change alone, a check too


def lab_config(scenario_name: str, overrides: Mapping[str, Any]) -> tuple[Scenario, LabConfig]:
    """The scenario and its configuration with the command line's overrides, checked."""
    from ckptdiag.errors import UsageError
    from ckptdiag.lab.scenarios import get_scenario

    scenario = get_scenario(scenario_name)
    config = scenario.config.with_overrides(**overrides)
    if config.eviction_dirty_target >= config.eviction_dirty_trigger:
        raise UsageError(
            "eviction_dirty_target must be below eviction_dirty_trigger",
            f"got {config.eviction_dirty_target} and {config.eviction_dirty_trigger}",
        )
    if config.eviction_target >= config.eviction_trigger:
        raise UsageError(
            "eviction_target must be below eviction_trigger",
            f"got {config.eviction_target} and {config.eviction_trigger}",
        )
    updates = (config.eviction_updates_target, config.eviction_updates_trigger)
    if all(updates) and updates[0] >= updates[1]:
        raise UsageError(
            "eviction_updates_target must be below eviction_updates_trigger",
            f"got {updates[0]} and {updates[1]}",
        )
    if config.eviction_threads_min > config.eviction_threads_max:
        raise UsageError(
            "eviction threads_min must not exceed threads_max",
            f"got {config.eviction_threads_min} and {config.eviction_threads_max}",
        )
    return scenario, config


def changed_here(scenario: LabConfig, config: LabConfig) -> str:
    """The settings the command line changed from the scenario's own, as its options: the
    scenario's summary names its own, which the run no longer has.

    >>> from ckptdiag.lab.scenarios import get_scenario
    >>> own = get_scenario("stall").config
    >>> changed_here(own, own.with_overrides(cache_mb=512, checkpoint_s=10.0))
    '; changed here: --cache-mb 512 --checkpoint-interval 10'
    """
    changed = []
    for f in fields(config):
        value = getattr(config, f.name)
        if value != getattr(scenario, f.name):
            shown = f"{value:g}" if isinstance(value, float) else str(value)
            changed.append(f"--{_OPTION.get(f.name, f.name.replace('_', '-'))} {shown}")
    return f"; changed here: {' '.join(changed)}" if changed else ""


_OPTION = {"checkpoint_s": "checkpoint-interval"}  # the LabConfig fields whose option is named otherwise


def run_demo(request: DemoRequest, stop_signals: StopSignals, warn: Warn) -> RecordResult:
    """Run a lab scenario, record it, and print what happened; with ``verify``, apply the
    recommended settings to the lab, run it again and print before and after."""
    import tempfile

    from rich.console import Console

    from ckptdiag.lab.config import import_wiredtiger
    from ckptdiag.report.lab import render_lab_run

    import_wiredtiger()  # fail first, with the install command, if the binding is missing
    scenario, config = lab_config(request.scenario, request.overrides)
    duration = request.duration or scenario.duration_s
    console = Console()
    with tempfile.TemporaryDirectory(prefix="ckptdiag-demo-") as tmp:
        output = request.output or Path(tmp) / f"demo-{scenario.name}.jsonl.gz"
        warn(f"lab: {scenario.name}: {scenario.summary}; {duration:g} s{changed_here(scenario.config, config)}")
        run = _lab_run(request, scenario, config, duration, output, console, stop_signals)
        # the same report `ckptdiag report` gives on the recording, then the lab's ground truth
        report = diagnose_window((run.recording,))
        write_report(report, "table", None)
        console.print(render_lab_run(run, [(e.start, e.stall) for e in report.dx.episodes]))
        if request.output:
            warn(f"recording: {run.recording}; ground truth: {run.truth_path}")
        if not request.verify and report.advice:
            _next_hint(report, warn)
        if not request.verify or run.result.stopped_by == "interrupted":
            return run.result
        overrides = _verify_overrides(report, request.only)
        if not overrides:
            warn(
                f"verify: {request.only} was not recommended here (or changes nothing the lab can set), so there "
                "is nothing to verify"
                if request.only
                else "verify: no setting to change was recommended, so there is nothing to verify (--only RULE "
                "tries a check's change)"
            )
            return run.result
        _, after_config = lab_config(scenario.name, {**request.overrides, **overrides})
        changes = ", ".join(f"{k}={v}" for k, v in overrides.items())
        warn(f"verify: the same scenario again with the recommended settings ({changes}); {duration:g} s")
        after_output = output.with_name(output.name.replace(".jsonl", ".after.jsonl"))
        after = _lab_run(request, scenario, after_config, duration, after_output, console, stop_signals)
        after_report = diagnose_window((after.recording,))
        console.print(render_verify(report, after_report, run, after, overrides))
        if request.output:
            warn(f"after: recording {after.recording}; ground truth {after.truth_path}")
        return after.result


def _next_hint(report: Report, warn: Warn) -> None:
    """What --verify would show: the proven settings, else a check's change with --only."""
    advice = report.advice
    if advice is None:
        return
    if advice.lab_overrides:
        warn("next: the same command with --verify applies the recommended settings to this lab: before and after")
        return
    tried = next((r.id for r in advice.recommendations if r.lab), None)
    if tried is not None:
        warn(f"next: --verify --only {tried} runs this lab again with that check's change: why it is only a check")


def _verify_overrides(report: Report, only: str | None) -> dict[str, Any]:
    """The lab changes ``demo --verify`` applies: every proven setting, or ``only`` that
    recommendation's (a check's too, to see why it is not proven)."""
    if report.advice is None:
        return {}
    if only is None:
        return report.advice.lab_overrides
    return next((dict(r.lab) for r in report.advice.recommendations if r.id == only), {})


def render_verify(
    before: Report, after: Report, before_run: LabRun, after_run: LabRun, overrides: Mapping[str, Any]
) -> RenderableType:
    """The before/after tables of ``demo --verify``: from the recordings, and from the lab's own truth."""
    from rich.console import Group
    from rich.text import Text

    from ckptdiag.report.compare import compare, render_compare_table
    from ckptdiag.report.document import to_document
    from ckptdiag.report.lab import render_truth_compare
    from ckptdiag.report.verify import judge

    changes = ", ".join(f"{k}={v}" for k, v in overrides.items())
    comparison = compare(to_document(before), to_document(after), ("before", "recommended"))
    outcome = judge(before, after, before_run.summary, after_run.summary)
    return Group(
        Text(f"verify: {changes}", style="bold"),
        Text("as ckptdiag measured it (the recordings):", style="bold"),
        render_compare_table(comparison),
        Text("as the workload measured it (the lab's ground truth):", style="bold"),
        render_truth_compare(before_run.summary, after_run.summary),
        Text(outcome.line(), style=_outcome_style(outcome)),
    )


def _outcome_style(outcome: VerifyOutcome) -> str:
    return "bold green" if outcome.passed else "bold yellow" if outcome.inconclusive else "bold red"


def _lab_run(
    request: DemoRequest,
    scenario: Scenario,
    config: LabConfig,
    duration: float,
    output: Path,
    console: Any,
    stop_signals: StopSignals,
) -> LabRun:
    from ckptdiag.lab.run import run_scenario

    display: Any = None
    if request.live:
        from ckptdiag.report.live import LiveStatus

        display = LiveStatus(console, f"lab:{scenario.name}", str(output), duration)
    with display if display else nullcontext():
        return run_scenario(
            scenario,
            config,
            duration,
            output,
            lab_dir=request.lab_dir,
            stop_signals=stop_signals,
            overwrite=request.overwrite,
            on_sample=display.on_sample if display else None,
            on_event=display.on_event if display else None,
        )


@dataclass(frozen=True)
class ServeRequest:
    """Everything ``ckptdiag lab serve`` was asked to do."""

    scenario: str
    port: int
    duration: float | None
    lab_dir: Path | None
    overrides: Mapping[str, Any]
    truth_out: Path | None = None


def run_serve(request: ServeRequest, stop_signals: StopSignals, warn: Warn) -> None:
    """Serve a running lab over the wire protocol until stopped (or the duration ends)."""
    from ckptdiag.guard.outputs import check_target
    from ckptdiag.lab.config import import_wiredtiger
    from ckptdiag.lab.engine import LabEngine
    from ckptdiag.lab.serve import lab_server
    from ckptdiag.lab.wire import low_descriptors

    import_wiredtiger()
    scenario, config = lab_config(request.scenario, request.overrides)
    truth = None if request.truth_out is None else check_target(request.truth_out, what="the ground truth")
    planned_s = request.duration or 600  # the space check plans for 10 minutes when unbounded
    with ExitStack() as stack:
        base = lab_disk(stack, config, request, planned_s, warn)
        if isinstance(base, Restart):  # the model disk's preload is bound at start: run again with it
            from ckptdiag.lab import modeldisk

            modeldisk.reexec_on(base.directory, base.mb_s, base.state, base.shim)
        if config.disk_mb_s and base is None:
            config = replace(config, disk_mb_s=0)  # the truth file says what really ran
        engine = LabEngine(config, base or request.lab_dir)
        stop = threading.Event()
        try:
            with low_descriptors():
                engine.start(planned_s)
            server = lab_server(engine, request.port).start()
            try:
                # the handlers go in before the line that tells a waiting client (or test) we serve
                with stop_signals(lambda reason: stop.set()):
                    warn(f"lab {scenario.name} serving on {server.uri} (Ctrl-C or SIGTERM stops)")
                    _wait(stop, request.duration)
            finally:
                server.stop()
        finally:
            # the truth before the engine closes: closing writes a last checkpoint of everything
            # dirty, which on a slow disk can outlast the time the parent waits for us
            engine.halt()
            try:
                if truth is not None and engine.start_wall:
                    import json

                    from ckptdiag.guard.outputs import write_text

                    write_text(truth, json.dumps(engine.truth()) + "\n")
            finally:
                engine.close()
    warn("lab stopped; its data directory is removed")


SIGNAL_POLL_S = 0.2


def _wait(stop: threading.Event, duration: float | None) -> None:
    """Until ``stop`` is set or ``duration`` has passed, waking every ``SIGNAL_POLL_S``: a signal
    the kernel delivers to one of the engine's threads sets only a flag, and the main thread runs
    the handler (which sets ``stop``) only once it wakes; blocked without a timeout it never would."""
    deadline = None if duration is None else time.monotonic() + duration
    while not stop.is_set():
        left = SIGNAL_POLL_S if deadline is None else min(SIGNAL_POLL_S, deadline - time.monotonic())
        if left <= 0:
            return
        stop.wait(left)


@dataclass(frozen=True)
class Restart:
    """``lab serve`` must run again with the model disk's shim preloaded, on ``directory``."""

    directory: Path
    mb_s: float
    state: Path
    shim: Path


def lab_disk(
    stack: ExitStack, config: LabConfig, request: ServeRequest, planned_s: float, warn: Warn
) -> Path | Restart | None:
    """Where the engine's data goes when the scenario asks for a slow disk (``disk_mb_s``): the
    model disk (anyone: once this process runs with its shim; before that, the :class:`Restart`
    that ``lab serve`` performs) or the throttled loop device (``slow_disk="loop"``, root), for
    the run's life; None for the lab dir's own disk. Never re-executes the caller itself."""
    if not config.disk_mb_s:
        return None
    if config.slow_disk == "loop":
        return _loop_disk(stack, config, request, planned_s)
    return _model_disk(stack, config, request, warn)


def _model_disk(stack: ExitStack, config: LabConfig, request: ServeRequest, warn: Warn) -> Path | Restart | None:
    """The model disk's directory once this process runs on it; before that, the restart that
    puts it there. Without the shim: the lab dir's own disk, with a warning, or an error when
    --disk-mb-s was asked for."""
    import os
    import shutil
    import tempfile

    from ckptdiag.lab import modeldisk

    running = modeldisk.active()
    if running is not None and running.loaded:
        stack.callback(shutil.rmtree, running.directory, True)  # removed on every exit
        return running.directory
    shim = modeldisk.shim_path()
    reason = None
    if running is not None:  # started with the preload, but the loader skipped it
        reason = "its shim could not be loaded"
    elif shim is None:
        reason = "its shim was not built (no C compiler at install)"
    if reason is not None:
        if running is not None:
            shutil.rmtree(running.directory, ignore_errors=True)
        if request.overrides.get("disk_mb_s"):
            raise CkptdiagError(f"cannot make a {config.disk_mb_s} MB/s disk here: {reason}", "leave out --disk-mb-s")
        warn(
            f"warning: the {request.scenario} scenario runs on a disk limited to {config.disk_mb_s} MB/s and "
            f"cannot make one here ({reason}); running on the lab dir's own disk, where its checkpoints may not stall"
        )
        return None
    assert shim is not None
    base = request.lab_dir or Path(tempfile.gettempdir())
    base.mkdir(parents=True, exist_ok=True)
    directory = modeldisk.make_directory(base)
    state = Path(os.environ.get(modeldisk.ENV_STATE) or directory / "device.state")
    return Restart(directory, config.disk_mb_s, state, shim)


def _loop_disk(stack: ExitStack, config: LabConfig, request: ServeRequest, planned_s: float) -> Path:
    """The kernel-throttled loop device (root): an error where it cannot be made."""
    import tempfile

    from ckptdiag.lab.config import check_space, estimated_bytes, free_bytes
    from ckptdiag.lab.slowdisk import slow_disk, unavailable

    reason = unavailable()
    if reason is not None:
        raise CkptdiagError(
            f"cannot make a {config.disk_mb_s} MB/s loop device here: {reason}",
            "use the model disk (--slow-disk model, the default), which needs no root",
        )
    base = request.lab_dir or Path(tempfile.gettempdir())
    base.mkdir(parents=True, exist_ok=True)
    need = estimated_bytes(config, planned_s)
    check_space(base, need)  # the image is sparse: the host holds only what the lab writes
    # room to run past the plan (lab serve without --duration), never more than the host has
    size = min(free_bytes(base), max(4 * need, 16 * 2**30))
    disk = stack.enter_context(slow_disk(base, config.disk_mb_s, size_bytes=size))
    return disk.mountpoint
