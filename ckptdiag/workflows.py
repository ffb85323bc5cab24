"""The commands' work, wired from the pipeline's parts; ``cli.py`` only parses and calls these."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Mapping
from contextlib import AbstractContextManager, ExitStack, nullcontext
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ckptdiag import recording
from ckptdiag.errors import CkptdiagError
from ckptdiag.status import ExitStatus

if TYPE_CHECKING:
    from rich.console import RenderableType

    from ckptdiag.facts import ServerFacts
    from ckptdiag.lab.engine import LabConfig
    from ckptdiag.lab.run import LabRun
    from ckptdiag.lab.scenarios import Scenario
    from ckptdiag.recorder import RecordResult, Source
    from ckptdiag.report.document import Report, ReportSource
    from ckptdiag.sources.mongo import ConnectOptions

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
    source: str = "serverStatus"  # or "diagnostic": getDiagnosticData, with the server's own disks


def connect_options(conn: Mapping[str, Any]) -> ConnectOptions:
    """ConnectOptions from the CLI's connection options (URI: flag, then $MONGODB_URI, then default)."""
    # the server-facing modules (pymongo: ~0.15 s) are imported by the commands that talk to one,
    # not by `report`, which a cron job runs on files
    from ckptdiag.sources.mongo import DEFAULT_URI, ConnectOptions

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
    from ckptdiag.clock import SystemClock
    from ckptdiag.recorder import record_into
    from ckptdiag.sources.devices import DiskPlan, plan_disks
    from ckptdiag.sources.diskstats import read_diskstats
    from ckptdiag.sources.mongo import MongoSource

    options = connect_options(request.conn)
    # The output is opened before connecting: an unwritable path fails before any sampling.
    writer = recording.RecordingWriter(
        request.output, sys.stdout if request.stream_stdout else None, overwrite=request.overwrite
    )
    clock = SystemClock()
    src: Source = source if source is not None else MongoSource(options, request.source)
    try:
        info = src.connect()
    except BaseException:
        writer.discard()
        raise
    try:
        if src.kind == "diagnostic":
            plan = DiskPlan(
                (),
                True,
                notes=(
                    "disks from getDiagnosticData (the server host's own /proc/diskstats); FTDC lists physical "
                    "disks only, so LVM, md and partitions appear as the disks beneath them",
                ),
            )
        else:
            plan = plan_disks(info.dbpath, info.is_local, request.devices, set(read_diskstats()))
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
    from ckptdiag.report.live import event_line

    def on_event(event: dict[str, Any]) -> None:
        if event["kind"] in ("gap", "reconnected", "restart"):
            warn(event_line(event))

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
    verify: bool = False  # then apply the recommended settings and run again


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


def run_demo(request: DemoRequest, stop_signals: StopSignals, warn: Warn) -> RecordResult:
    """Run a lab scenario, record it, and print what happened; with ``verify``, apply the
    recommended settings to the lab, run it again and print before and after."""
    import tempfile

    from rich.console import Console

    from ckptdiag.lab.engine import import_wiredtiger
    from ckptdiag.report.lab import render_lab_run

    import_wiredtiger()  # fail first, with the install command, if the binding is missing
    scenario, config = lab_config(request.scenario, request.overrides)
    duration = request.duration or scenario.duration_s
    console = Console()
    with tempfile.TemporaryDirectory(prefix="ckptdiag-demo-") as tmp:
        output = request.output or Path(tmp) / f"demo-{scenario.name}.jsonl.gz"
        warn(f"lab: {scenario.name}: {scenario.summary}; {duration:g} s")
        run = _lab_run(request, scenario, config, duration, output, console, stop_signals)
        # the same report `ckptdiag report` gives on the recording, then the lab's ground truth
        report = diagnose_window((run.recording,), None, None)
        write_report(report, "table", None)
        console.print(render_lab_run(run, [(e.start, e.stall) for e in report.dx.episodes]))
        if request.output:
            warn(f"recording: {run.recording}; ground truth: {run.truth_path}")
        if not request.verify or run.result.stopped_by == "interrupted":
            return run.result
        overrides = report.advice.lab_overrides if report.advice else {}
        if not overrides:
            warn("verify: no setting to change was recommended, so there is nothing to verify")
            return run.result
        _, after_config = lab_config(scenario.name, {**request.overrides, **overrides})
        changes = ", ".join(f"{k}={v}" for k, v in overrides.items())
        warn(f"verify: the same scenario again with the recommended settings ({changes}); {duration:g} s")
        after_output = output.with_name(output.name.replace(".jsonl", ".after.jsonl"))
        after = _lab_run(request, scenario, after_config, duration, after_output, console, stop_signals)
        after_report = diagnose_window((after.recording,), None, None)
        console.print(render_verify(report, after_report, run, after, overrides))
        if request.output:
            warn(f"after: recording {after.recording}; ground truth {after.truth_path}")
        return after.result


def render_verify(
    before: Report, after: Report, before_run: LabRun, after_run: LabRun, overrides: Mapping[str, Any]
) -> RenderableType:
    """The before/after tables of ``demo --verify``: from the recordings, and from the lab's own truth."""
    from rich.console import Group
    from rich.text import Text

    from ckptdiag.report.compare import compare, render_compare_table
    from ckptdiag.report.document import to_document
    from ckptdiag.report.lab import render_truth_compare

    changes = ", ".join(f"{k}={v}" for k, v in overrides.items())
    comparison = compare(to_document(before), to_document(after), ("before", "recommended"))
    return Group(
        Text(f"verify: {changes}", style="bold"),
        Text("as ckptdiag measured it (the recordings):", style="bold"),
        render_compare_table(comparison),
        Text("as the workload measured it (the lab's ground truth):", style="bold"),
        render_truth_compare(before_run.summary, after_run.summary),
    )


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

        display = LiveStatus(console, f"lab:{scenario.name}", str(output))
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
    import threading

    from ckptdiag.lab.engine import LabEngine, import_wiredtiger
    from ckptdiag.lab.serve import lab_server

    import_wiredtiger()
    scenario, config = lab_config(request.scenario, request.overrides)
    planned_s = request.duration or 600  # the space check plans for 10 minutes when unbounded
    with ExitStack() as stack:
        base = lab_disk(stack, config, request, planned_s, warn)
        if config.disk_mb_s and base is None:
            config = replace(config, disk_mb_s=0)  # the truth file says what really ran
        engine = LabEngine(config, base or request.lab_dir)
        stop = threading.Event()
        try:
            engine.start(planned_s)
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


def lab_disk(stack: ExitStack, config: LabConfig, request: ServeRequest, planned_s: float, warn: Warn) -> Path | None:
    """The throttled disk a scenario asks for (``disk_mb_s``), mounted for the run's life; None for
    the lab dir's own disk. A scenario's own limit falls back with a warning where the disk cannot
    be made (not root, no loop devices); one asked for on the command line is an error."""
    import tempfile

    from ckptdiag.lab.engine import check_space, estimated_bytes, free_bytes
    from ckptdiag.lab.slowdisk import slow_disk, unavailable

    if not config.disk_mb_s:
        return None
    reason = unavailable()
    if reason is not None:
        if request.overrides.get("disk_mb_s"):
            raise CkptdiagError(f"cannot make a {config.disk_mb_s} MB/s disk here: {reason}", "leave out --disk-mb-s")
        warn(
            f"warning: the {request.scenario} scenario runs on a disk limited to {config.disk_mb_s} MB/s and "
            f"cannot make one here ({reason}); running on the lab dir's own disk, where its checkpoints may not stall"
        )
        return None
    base = request.lab_dir or Path(tempfile.gettempdir())
    base.mkdir(parents=True, exist_ok=True)
    need = estimated_bytes(config, planned_s)
    check_space(base, need)  # the image is sparse: the host holds only what the lab writes
    # room to run past the plan (lab serve without --duration), never more than the host has
    size = min(free_bytes(base), max(4 * need, 16 * 2**30))
    disk = stack.enter_context(slow_disk(base, config.disk_mb_s, size_bytes=size))
    return disk.mountpoint


@dataclass(frozen=True)
class ReportRequest:
    """Everything ``ckptdiag report`` was asked to do."""

    paths: tuple[Path, ...]
    since_ms: int | None
    until_ms: int | None
    fmt: str  # table, json, md or html (auto resolved by the CLI)
    output: Path | None
    fail_on: str = "critical"  # warn, critical or never


ROWS_PER_PIECE = 100_000  # FTDC is summarized a piece at a time: ~100k rows bound the memory


def _recording_damage(rec: recording.Recording) -> list[str]:
    """What was wrong with a recording, for the report's notes."""
    out = []
    if rec.truncated:
        out.append(f"{rec.path}: ended inside a line (read up to there)")
    if rec.damaged_lines:
        s = "s" if rec.damaged_lines != 1 else ""
        out.append(f"{rec.path}: {rec.damaged_lines} damaged line{s} skipped (not JSON)")
    return out


def _recordings_window(
    recordings: list[Path], since_ms: int | None, until_ms: int | None
) -> tuple[Any, ServerFacts, int, int, ReportSource]:
    """Recordings read and joined into one derived window -> (derived frame, facts, gaps, restarts, source)."""
    from ckptdiag.analysis.series import derive
    from ckptdiag.errors import InputError
    from ckptdiag.facts import ServerFacts
    from ckptdiag.report.document import ReportSource

    recs = [recording.read_recording(p, columns=True) for p in recordings]
    frame = recording.join_frames([r.to_frame() for r in recs])
    if since_ms is not None:
        frame = frame[frame["t"] * 1000 >= since_ms]
    if until_ms is not None:
        frame = frame[frame["t"] * 1000 <= until_ms]
    if frame.empty:
        raise InputError("no samples in the given window", "check --since/--until against the recording's times")
    head = recs[0].header
    server = head.get("server") or {}
    disks = head.get("disks") or {}
    facts = ServerFacts.from_documents(
        version=server.get("version"),
        host=server.get("host"),
        cmdline=server.get("cmdline"),
        host_info=server.get("host_info"),
        devices=list(disks.get("devices") or []),
        dbpath=server.get("dbpath"),
        parameters=server.get("parameters"),
        filesystem=disks.get("filesystem"),
    )
    gaps = int(frame["gap_before"].astype(bool).iloc[1:].sum())
    restarts = int(frame["segment"].max() - frame["segment"].min())
    damage = tuple(line for r in recs for line in _recording_damage(r))
    source = ReportSource("recording", ", ".join(map(str, recordings)), damage)
    return derive(frame), facts, gaps, restarts, source


def _ftdc_window(
    paths: tuple[Path, ...], since_ms: int | None, until_ms: int | None
) -> tuple[Any, ServerFacts, int, int, ReportSource]:
    """FTDC files read a piece at a time into one derived window -> (derived frame, facts, gaps, restarts, source)."""
    from ckptdiag.analysis.series import derive_pieces
    from ckptdiag.facts import ServerFacts
    from ckptdiag.report.document import ReportSource
    from ckptdiag.sources.ftdc import FtdcData, iter_ftdc, mark_continuity

    data = FtdcData(None, [], [])
    derived, gaps, restarts = derive_pieces(
        iter_ftdc(list(paths), since_ms, until_ms, rows=ROWS_PER_PIECE, into=data), mark_continuity
    )
    meta: Any = next((m["doc"] for m in data.metadata if m["type"] == 0), {})
    meta = meta if isinstance(meta, dict) else {}
    build = meta.get("buildInfo")
    facts = ServerFacts.from_documents(
        version=build.get("version") if isinstance(build, dict) else None,
        host=None,
        cmdline=meta.get("getCmdLineOpts"),
        host_info=meta.get("hostInfo"),
    )
    damage = tuple(f"{r.path}: {r.error}" for r in data.reports if r.error)
    source = ReportSource("ftdc", ", ".join(map(str, paths)), damage, files=len(data.reports))
    return derived, facts, gaps, restarts, source


def diagnose_window(paths: tuple[Path, ...], since_ms: int | None, until_ms: int | None) -> Report:
    """Diagnose recordings or FTDC in a window, and advise on the diagnosis."""
    from ckptdiag.advice.rules import recommend
    from ckptdiag.analysis.diagnosis import diagnose
    from ckptdiag.errors import UsageError
    from ckptdiag.report.document import Report

    recordings = [p for p in paths if p.is_file() and recording.is_recording(p)]
    if recordings and len(recordings) != len(paths):
        raise UsageError("mixing recordings and FTDC files in one report", "report them one kind at a time")
    if recordings:
        derived, facts, gaps, restarts, source = _recordings_window(recordings, since_ms, until_ms)
    else:
        derived, facts, gaps, restarts, source = _ftdc_window(paths, since_ms, until_ms)
    dx = diagnose(derived, facts, gaps=gaps, restarts=restarts, notes=source.damaged)
    return Report(dx, source, recommend(dx))


def run_report(request: ReportRequest, warn: Warn) -> ExitStatus:
    """Diagnose a window of recordings or FTDC, write the report, and return the exit status its
    verdict maps to under ``--fail-on``."""
    report = diagnose_window(request.paths, request.since_ms, request.until_ms)
    for line in report.source.damaged:
        warn(f"note: {line}")
    write_report(report, request.fmt, request.output, protect=request.paths)
    return exit_status(report.dx.severity, request.fail_on)


def exit_status(severity: str, fail_on: str) -> ExitStatus:
    """0 ok; 3 warn (only with --fail-on warn); 4 critical (unless --fail-on never)."""
    if severity == "critical" and fail_on in ("warn", "critical"):
        return ExitStatus.CRITICAL
    if severity in ("warn", "critical") and fail_on == "warn":
        return ExitStatus.WARN
    return ExitStatus.OK


def write_report(report: Report, fmt: str, output: Path | None, protect: tuple[Path, ...] = ()) -> None:
    """Render the report in ``fmt`` to ``output`` (atomically) or to the terminal/stdout."""
    from rich.console import Console

    from ckptdiag.report.document import render_json, to_document
    from ckptdiag.report.html_page import render_html
    from ckptdiag.report.markdown import render_markdown
    from ckptdiag.report.terminal import render_table, render_text

    if fmt == "table" and output is None:
        Console().print(render_table(report))
        return
    if fmt == "json":
        text = render_json(to_document(report))
    elif fmt == "md":
        text = render_markdown(report)
    elif fmt == "html":
        text = render_html(report)
    else:
        text = render_text(report)
    write_text_output(text, output, protect)


def write_text_output(text: str, output: Path | None, protect: tuple[Path, ...] = ()) -> None:
    """``text`` to stdout, or atomically to ``output`` (never over a recording or an input)."""
    from ckptdiag.errors import OutputError

    if output is None:
        sys.stdout.write(text)
        sys.stdout.flush()
        return
    resolved = output.resolve()
    if any(resolved == p.resolve() for p in protect) or (output.is_file() and recording.is_recording(output)):
        raise OutputError(f"{output} is a recording or an input", "write the report to another file")
    tmp = output.with_name(f".{output.name}.tmp-{os.getpid()}")
    try:
        tmp.write_text(text)
        os.replace(tmp, output)  # a reader (a mail job, a web server) never sees half a report
    except OSError as exc:
        tmp.unlink(missing_ok=True)
        raise OutputError(
            f"cannot write {output}: {exc.strerror or exc}", "check the directory and its permissions"
        ) from None


@dataclass(frozen=True)
class DiagnoseRequest:
    """``ckptdiag diagnose``: record for a while, then report on it."""

    record: RecordRequest
    fmt: str
    output: Path | None
    fail_on: str


def run_diagnose(request: DiagnoseRequest, stop_signals: StopSignals, warn: Warn) -> tuple[RecordResult, ExitStatus]:
    """Record (into --save, or a temporary file removed afterwards), then diagnose the recording.

    Stopped early (Ctrl-C), it still reports on what it recorded."""
    import tempfile

    with tempfile.TemporaryDirectory(prefix="ckptdiag-diagnose-") as tmp:
        path = request.record.output or Path(tmp) / "diagnose.jsonl.gz"
        result = run_record(replace(request.record, output=path), stop_signals, warn)
        if result.samples < 2:
            from ckptdiag.errors import InputError

            raise InputError(
                f"only {result.samples} sample recorded: nothing to diagnose", "let it run longer (--duration)"
            )
        report = diagnose_window((path,), None, None)
        if request.record.output is None:
            report = replace(
                report, source=replace(report.source, path="live recording (not kept: --save FILE keeps it)")
            )
        write_report(report, request.fmt, request.output, protect=(path,))
    return result, exit_status(report.dx.severity, request.fail_on)


@dataclass(frozen=True)
class CompareSide:
    """One side of ``ckptdiag compare``: a recording, FTDC, or a JSON report, and a window."""

    path: Path
    since_ms: int | None = None
    until_ms: int | None = None


def load_side(side: CompareSide) -> dict[str, Any]:
    """The report document of one side: read from a JSON report, else diagnosed from the data."""
    import json

    from ckptdiag.errors import InputError, UsageError
    from ckptdiag.report.document import to_document

    if side.path.suffix.lower() == ".json" and side.path.is_file():
        if side.since_ms is not None or side.until_ms is not None:
            raise UsageError(f"{side.path} is a finished report: its window is fixed", "drop --since/--until for it")
        try:
            doc = json.loads(side.path.read_text())
        except (OSError, ValueError) as exc:
            raise InputError(
                f"cannot read {side.path} as a JSON report: {exc}", "pass a 'report -f json' file"
            ) from None
        if not isinstance(doc, dict) or "schema_version" not in doc or "checkpoints" not in doc:
            raise InputError(f"{side.path} is not a ckptdiag JSON report", "write one with 'ckptdiag report -f json'")
        return doc
    if not side.path.exists():
        raise InputError(f"{side.path} does not exist", "pass a recording, a diagnostic.data directory or a report")
    return to_document(diagnose_window((side.path,), side.since_ms, side.until_ms))


@dataclass(frozen=True)
class CompareRequest:
    """``ckptdiag compare A B``."""

    before: CompareSide
    after: CompareSide
    fmt: str
    output: Path | None


def run_compare(request: CompareRequest) -> None:
    """Diagnose (or read) both sides and write the before/after table in the requested format."""
    import json

    from rich.console import Console

    from ckptdiag.report import compare as render

    comparison = render.compare(load_side(request.before), load_side(request.after))
    if request.fmt == "table" and request.output is None:
        Console().print(render.render_compare_table(comparison))
        return
    if request.fmt == "json":
        text = json.dumps(comparison.to_json(), indent=2, allow_nan=False) + "\n"
    elif request.fmt == "md":
        text = render.render_compare_markdown(comparison)
    elif request.fmt == "html":
        text = render.render_compare_html(comparison)
    else:
        text = render.render_compare_text(comparison)
    write_text_output(text, request.output, protect=(request.before.path, request.after.path))
