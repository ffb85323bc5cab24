"""record and diagnose: sample a live server into a recording, then (diagnose) report on it."""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ckptdiag import recording
from ckptdiag.status import ExitStatus
from ckptdiag.workflows import StopSignals, Warn
from ckptdiag.workflows.report import diagnose_window, exit_status, write_report

if TYPE_CHECKING:
    from ckptdiag.recorder import RecordResult, Source
    from ckptdiag.sources.connection import ConnectOptions
    from ckptdiag.sources.devices import DiskPlan
    from ckptdiag.sources.mongo import ServerInfo


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
    source: str = "serverStatus"  # or "diagnostic": getDiagnosticData, with the server's own disks


def connect_options(conn: Mapping[str, Any]) -> ConnectOptions:
    """ConnectOptions from the CLI's connection options (URI: flag, then $MONGODB_URI, then default)."""
    # the server-facing modules (pymongo: ~0.15 s) are imported by the commands that talk to one,
    # not by `report`, which a cron job runs on files
    from ckptdiag.sources.connection import DEFAULT_URI, ConnectOptions

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
    """Record a server into a file and/or stdout; the file is complete however the run ends:
    with its ``end`` event, or (stopped before its first sample) not left behind at all."""
    from ckptdiag.errors import OutputError
    from ckptdiag.sources.mongo import MongoSource

    options = connect_options(request.conn)
    # The output is opened before connecting: an unwritable path fails before any sampling.
    writer = recording.RecordingWriter(
        request.output, sys.stdout if request.stream_stdout else None, overwrite=request.overwrite
    )
    src: Source = source if source is not None else MongoSource(options, request.source)
    try:
        result = _sample(request, src, writer, options, warn, stop_signals)
    except BaseException:
        writer.discard()  # stopped before the first sample (SIGTERM while connecting, refused): no file
        with contextlib.suppress(OutputError):  # the error in flight says more than a failed close
            writer.close()
        src.close()
        raise
    try:
        writer.close()
    finally:
        src.close()
    target = str(request.output) if request.output else "stdout"
    warn(
        f"recorded {result.samples} samples to {target}"
        f" ({result.gaps} gaps, {result.restarts} restarts, {result.skipped_ticks} skipped ticks,"
        f" {result.wt_missing} without wiredTiger); stopped: {result.stopped_by}"
    )
    return result


def _sample(
    request: RecordRequest,
    src: Source,
    writer: recording.RecordingWriter,
    options: ConnectOptions,
    warn: Warn,
    stop_signals: StopSignals,
) -> RecordResult:
    """Connect, then sample into ``writer`` until the duration, a stop or an error."""
    from ckptdiag.clock import SystemClock
    from ckptdiag.recorder import record_into

    info = src.connect()
    clock = SystemClock()
    plan = _disk_plan(src.kind, info, request.devices)
    for note in plan.notes:
        warn(f"note: {note}")
    target = str(request.output) if request.output else "stdout"
    display: Any = None
    if request.live:
        from rich.console import Console

        from ckptdiag.report.live import LiveStatus

        display = LiveStatus(Console(), options.display(), target)
    result = record_into(
        writer,
        src,
        info,
        plan,
        header_source={
            "kind": src.kind,
            "uri": options.display(),
            "disks": "getDiagnosticData" if src.kind == "diagnostic" else "/proc/diskstats",
        },
        clock=clock,
        interval=request.interval,
        duration=request.duration,
        on_sample=display.on_sample if display else None,
        on_event=display.on_event if display else _event_printer(warn),
        stop_signals=stop_signals,
        around=display,
    )
    return result


def _disk_plan(kind: str, info: ServerInfo, devices: tuple[str, ...]) -> DiskPlan:
    """Which disks to read: the server host's own (getDiagnosticData), else those under dbPath."""
    from ckptdiag.sources.devices import DiskPlan, plan_disks
    from ckptdiag.sources.diskstats import read_diskstats

    if kind == "diagnostic":
        return DiskPlan(
            (),
            True,
            notes=(
                "disks from getDiagnosticData (the server host's own /proc/diskstats); FTDC lists physical "
                "disks only, so LVM, md and partitions appear as the disks beneath them",
            ),
        )
    return plan_disks(info.dbpath, info.is_local, devices, set(read_diskstats()))


def _event_printer(warn: Warn) -> Callable[[dict[str, Any]], None]:
    from ckptdiag.report.live import event_line

    def on_event(event: dict[str, Any]) -> None:
        if event["kind"] in ("gap", "reconnected", "restart"):
            warn(event_line(event))

    return on_event


@dataclass(frozen=True)
class DiagnoseRequest:
    """``ckptdiag diagnose``: record for a while, then report on it."""

    record: RecordRequest
    fmt: str
    output: Path | None
    fail_on: str
    logs: tuple[Path, ...] = ()  # mongod's logs, read beside the recording


def run_diagnose(request: DiagnoseRequest, stop_signals: StopSignals, warn: Warn) -> tuple[RecordResult, ExitStatus]:
    """Record (into --save, or a temporary file removed afterwards), then diagnose the recording.

    Stopped early (Ctrl-C), it still reports on what it recorded."""
    import tempfile

    from ckptdiag.workflows.logs import check_logs

    check_logs(request.logs)  # before minutes of recording, not after
    with tempfile.TemporaryDirectory(prefix="ckptdiag-diagnose-") as tmp:
        path = request.record.output or Path(tmp) / "diagnose.jsonl.gz"
        result = run_record(replace(request.record, output=path), stop_signals, warn)
        if result.samples < 2:
            from ckptdiag.errors import InputError

            raise InputError(
                f"only {result.samples} sample recorded: nothing to diagnose", "let it run longer (--duration)"
            )
        report = diagnose_window((path, *request.logs), None, None)
        if request.record.output is None:
            report = replace(
                report, source=replace(report.source, path="live recording (not kept: --save FILE keeps it)")
            )
        write_report(report, request.fmt, request.output, protect=(path, *request.logs))
    return result, exit_status(report.dx.severity, request.fail_on)
