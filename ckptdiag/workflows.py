"""The commands' work, wired from the pipeline's parts; ``cli.py`` only parses and calls these."""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ckptdiag import recording
from ckptdiag.clock import SystemClock
from ckptdiag.recorder import RecordResult, Sampler, Source
from ckptdiag.sources.devices import plan_disks
from ckptdiag.sources.diskstats import DiskCounters, read_diskstats
from ckptdiag.sources.mongo import DEFAULT_URI, ConnectOptions, MongoSource

Warn = Callable[[str], None]
StopSignals = Callable[[Callable[[str], None]], AbstractContextManager[None]]


@dataclass(frozen=True)
class RecordRequest:
    """Everything ``ckptdiag record`` was asked to do."""

    conn: Mapping[str, Any]
    output: Path | None
    overwrite: bool = False
    stream_stdout: bool = False
    interval: float = 1.0
    duration: float | None = None
    devices: tuple[str, ...] = ()
    live: bool = False


def connect_options(conn: Mapping[str, Any]) -> ConnectOptions:
    """ConnectOptions from the CLI's connection options (URI: flag, then $MONGODB_URI, then default)."""
    return ConnectOptions(
        uri=conn.get("uri") or DEFAULT_URI,
        host=conn.get("host"),
        port=conn.get("port"),
        username=conn.get("username"),
        password=conn.get("password"),
        auth_db=conn.get("auth_db"),
        auth_mechanism=conn.get("auth_mechanism"),
        tls=conn.get("tls"),
        tls_ca_file=conn.get("tls_ca_file"),
        tls_cert_key_file=conn.get("tls_cert_key_file"),
        tls_allow_invalid=bool(conn.get("tls_allow_invalid")),
        timeout_s=float(conn.get("timeout_s") or 5.0),
    )


def run_record(
    request: RecordRequest, stop_signals: StopSignals, warn: Warn, source: Source | None = None
) -> RecordResult:
    """Record a server into a file and/or stdout; the file is complete however the run ends."""
    options = connect_options(request.conn)
    # The output is opened before connecting: an unwritable path fails before any sampling.
    writer = recording.RecordingWriter(
        request.output, sys.stdout if request.stream_stdout else None, overwrite=request.overwrite
    )
    clock = SystemClock()
    src: Source = source if source is not None else MongoSource(options)
    try:
        info = src.connect()
    except BaseException:
        writer.discard()
        raise
    try:
        available = {name for name in read_diskstats()}
        plan = plan_disks(info.dbpath, info.is_local, request.devices, available)
        for note in plan.notes:
            warn(f"note: {note}")
        watched = set(plan.devices)

        def read_disks() -> dict[str, tuple[DiskCounters, int]]:
            return {k: v for k, v in read_diskstats().items() if k in watched}

        writer.write(
            recording.header(
                source={"kind": src.kind, "uri": options.display()},
                server=info.to_json(),
                options={"interval_s": request.interval, "duration_s": request.duration},
                disks=plan.to_json(),
                created=clock.wall(),
            ),
            clock.monotonic(),
        )
        target = str(request.output) if request.output else "stdout"
        if request.live:
            from rich.console import Console

            from ckptdiag.report.live import LiveStatus

            display: Any = LiveStatus(Console(), options.display(), target)
        else:
            display = None
        sampler = Sampler(
            src,
            writer,
            clock=clock,
            interval=request.interval,
            duration=request.duration,
            read_disks=read_disks if watched else None,
            on_sample=display.on_sample if display else None,
            on_event=display.on_event if display else _event_printer(warn),
        )
        with stop_signals(sampler.request_stop), display if display else nullcontext():
            result = sampler.run(info)
    finally:
        writer.close()
        src.close()
    warn(
        f"recorded {result.samples} samples to {target}"
        f" ({result.gaps} gaps, {result.restarts} restarts, {result.skipped_ticks} skipped ticks,"
        f" {result.wt_missing} without wiredTiger); stopped: {result.stopped_by}"
    )
    return result


def _event_printer(warn: Warn) -> Callable[[dict[str, Any]], None]:
    def on_event(event: dict[str, Any]) -> None:
        if event["kind"] in ("gap", "reconnected", "restart"):
            detail = event.get("reason") or (f"after {event['down_s']} s" if "down_s" in event else "")
            warn(f"{event['time']} {event['kind']} {detail}".rstrip())

    return on_event


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


def lab_config(scenario_name: str, overrides: Mapping[str, Any]) -> tuple[Any, Any]:
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
    if config.eviction_threads_min > config.eviction_threads_max:
        raise UsageError(
            "eviction threads_min must not exceed threads_max",
            f"got {config.eviction_threads_min} and {config.eviction_threads_max}",
        )
    return scenario, config


def run_demo(request: DemoRequest, stop_signals: StopSignals, warn: Warn) -> RecordResult:
    """Run a lab scenario, record it, and print what happened."""
    import tempfile

    from rich.console import Console

    from ckptdiag.lab.engine import import_wiredtiger
    from ckptdiag.lab.run import run_scenario
    from ckptdiag.report.lab import render_lab_run

    import_wiredtiger()  # fail first, with the install command, if the binding is missing
    scenario, config = lab_config(request.scenario, request.overrides)
    duration = request.duration or scenario.duration_s
    console = Console()
    with tempfile.TemporaryDirectory(prefix="ckptdiag-demo-") as tmp:
        output = request.output or Path(tmp) / f"demo-{scenario.name}.jsonl.gz"
        warn(f"lab: {scenario.name}: {scenario.summary}; {duration:g} s")
        display: Any = None
        if request.live:
            from ckptdiag.report.live import LiveStatus

            display = LiveStatus(console, f"lab:{scenario.name}", str(output))
        with display if display else nullcontext():
            run = run_scenario(
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
        console.print(render_lab_run(run))
        if request.output:
            warn(f"recording: {run.recording}; ground truth: {run.truth_path}")
    return run.result


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
    import threading

    from ckptdiag.lab.engine import LabEngine, import_wiredtiger
    from ckptdiag.lab.serve import lab_server

    import_wiredtiger()
    scenario, config = lab_config(request.scenario, request.overrides)
    engine = LabEngine(config, request.lab_dir)
    stop = threading.Event()
    try:
        engine.start(request.duration or 600)  # the space check plans for 10 minutes when unbounded
        server = lab_server(engine, request.port).start()
        try:
            # the handlers go in before the line that tells a waiting client (or test) we serve
            with stop_signals(lambda reason: stop.set()):
                warn(f"lab {scenario.name} serving on {server.uri} (Ctrl-C or SIGTERM stops)")
                stop.wait(request.duration)
        finally:
            server.stop()
    finally:
        engine.close()
        if request.truth_out is not None and engine.start_wall:
            import json

            request.truth_out.write_text(json.dumps(engine.truth()) + "\n")
    warn("lab stopped; its data directory is removed")
