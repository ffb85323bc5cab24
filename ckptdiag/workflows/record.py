"""record and diagnose: sample a live server into a recording, then (diagnose) report on it."""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ckptdiag import recording
from ckptdiag.status import ExitStatus
from ckptdiag.workflows import StopSignals, Warn
from ckptdiag.workflows.report import Destination, diagnose_window, exit_status, write_report

if TYPE_CHECKING:
    from ckptdiag.recording.cluster import ClusterResult
    from ckptdiag.recording.recorder import RecordResult, Source
    from ckptdiag.report.cluster import ClusterReport
    from ckptdiag.report.document import Report
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
    discover: bool = False  # every member of the URI's replica set (or, through a mongos, cluster)
    rows: bool = False  # a line per sample that scrolls (mongostat's way), on stderr, terminal or not
    protect: tuple[Path, ...] = ()  # files this run reads (diagnose --log): never the recording


def connect_options(conn: Mapping[str, Any]) -> ConnectOptions:
    """ConnectOptions from the CLI's connection options (URI: flag, then $MONGODB_URI, then default)."""
    # the server-facing modules (pymongo: ~0.15 s) are imported by the commands that talk to one,
    # not by `report`, which a cron job runs on files
    from ckptdiag.guard.redact import remember, uri_password
    from ckptdiag.sources.connection import DEFAULT_URI, ConnectOptions

    remember(conn.get("password"), uri_password(conn.get("uri") or ""))  # wherever they may be quoted
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


def records_cluster(request: RecordRequest) -> bool:
    """Whether the request records every member of a cluster: ``--discover``, or a URI that names
    a replica set (several hosts, replicaSet=, mongodb+srv://)."""
    from ckptdiag.sources.connection import names_a_cluster

    return request.discover or names_a_cluster(connect_options(request.conn).client_uri())


def default_output(cluster: bool) -> Path:
    """Where a recording goes when -o is not given: a file, or for a cluster a directory."""
    import time

    return Path(time.strftime("ckptdiag-%Y%m%dT%H%M%SZ" + ("" if cluster else ".jsonl.gz"), time.gmtime()))


def run_record(
    request: RecordRequest, stop_signals: StopSignals, warn: Warn, source: Source | None = None
) -> RecordResult | ClusterResult:
    """Record a server into a file and/or stdout; the file is complete however the run ends:
    with its ``end`` event, or (stopped before its first sample) not left behind at all. A
    cluster (:func:`records_cluster`, or a mongos) is recorded one file per member."""
    from ckptdiag.sources.refusals import MongosTarget

    if source is None and records_cluster(request):
        return run_cluster_record(request, stop_signals, warn)
    one = request if request.output or request.stream_stdout else replace(request, output=default_output(False))
    try:
        return _run_one(one, stop_signals, warn, source)
    except MongosTarget:
        if source is not None or (request.output is not None and request.output.name.endswith((".jsonl", ".gz"))):
            raise  # a recording file was asked for: one server's
        warn("note: a mongos: recording its shards' members instead (--discover)")
        return run_cluster_record(replace(request, discover=True), stop_signals, warn)


def _run_one(request: RecordRequest, stop_signals: StopSignals, warn: Warn, source: Source | None) -> RecordResult:
    """One server into one file and/or stdout."""
    from ckptdiag.errors import OutputError
    from ckptdiag.sources.mongo import MongoSource

    options = connect_options(request.conn)
    # The output is opened before connecting: an unwritable path fails before any sampling.
    writer = recording.RecordingWriter(
        request.output,
        sys.stdout if request.stream_stdout else None,
        overwrite=request.overwrite,
        inputs=request.protect,
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
    from ckptdiag.recording.recorder import record_into

    info = src.connect()
    clock = SystemClock()
    plan = _disk_plan(src.kind, info, request.devices)
    for note in plan.notes:
        warn(f"note: {note}")
    target = str(request.output) if request.output else "stdout"
    display: Any = None
    if request.rows:
        from rich.console import Console

        from ckptdiag.report.live import RowsStatus

        display = RowsStatus(Console(stderr=True), request.duration, request.source)
    elif request.live:
        from rich.console import Console

        from ckptdiag.report.live import LiveStatus

        display = LiveStatus(Console(), options.display(), target, request.duration, request.source)
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


def run_cluster_record(request: RecordRequest, stop_signals: StopSignals, warn: Warn) -> ClusterResult:
    """Every member of the cluster the URI leads to, one recording each in the output directory."""
    from ckptdiag.clock import SystemClock
    from ckptdiag.errors import ConnectError
    from ckptdiag.recording.cluster import ClusterRecorder
    from ckptdiag.sources import discovery
    from ckptdiag.sources.mongo import MongoSource

    out_dir = _members_dir(request)
    options = connect_options(request.conn)
    resolved: list[tuple[tuple[str, str], ...]] = [()]

    def discover(known: tuple[str, ...]) -> discovery.Topology:
        topology = discovery.discover(options, known)
        resolved[0] = topology.resolved
        return topology

    def header_source(address: discovery.MemberAddress) -> dict[str, Any]:
        return {
            "kind": request.source,
            "uri": options.for_member(address.host, resolved[0]).display(),
            "disks": "getDiagnosticData" if request.source == "diagnostic" else "/proc/diskstats",
            "cluster": {"set": address.set_name, "shard": address.shard},
        }

    display: Any = None
    if request.live:
        from rich.console import Console

        from ckptdiag.report.live import ClusterStatus

        display = ClusterStatus(Console(), options.display(), str(out_dir or "stdout"))
    recorder = ClusterRecorder(
        discover=discover,
        source_for=lambda a: MongoSource(options.for_member(a.host, resolved[0]), request.source),
        plan_for=lambda kind, info: _disk_plan(kind, info, request.devices),
        header_source=header_source,
        out_dir=out_dir,
        clock=SystemClock(),
        warn=display.note if display else warn,  # under the live table, not through it
        interval=request.interval,
        duration=request.duration,
        overwrite=request.overwrite,
        stream=sys.stdout if request.stream_stdout else None,
        on_sample=display.on_sample if display else None,
        on_member_event=_member_event_printer(display.note if display else warn, display.on_event if display else None),
    )
    result = recorder.run(stop_signals, display)
    for member in result.members:
        warn(member.line())
    if result.samples == 0:
        errors = [m.error for m in result.members if m.error]
        raise ConnectError(
            f"no member of the {result.topology.kind} was recorded" + (f": {errors[0]}" if errors else ""),
            "check the members' addresses are reachable from here as the set's configuration names them",
        )
    return result


def _members_dir(request: RecordRequest) -> Path | None:
    """The directory a cluster's recordings go to (created), or None when they only stream."""
    from ckptdiag.errors import OutputError, UsageError

    out_dir = request.output or (None if request.stream_stdout else default_output(cluster=True))
    if out_dir is None:
        return None
    if out_dir.name.endswith((".jsonl", ".gz")) or out_dir.is_file():
        raise UsageError(
            f"a cluster is recorded one file per member, and {out_dir} names a file",
            "give -o a directory (created if missing)",
        )
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise OutputError(f"cannot create {out_dir}: {exc.strerror}", "check the path and its permissions") from None
    return out_dir


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


def _member_event_printer(
    say: Warn, also: Callable[[str, dict[str, Any]], None] | None
) -> Callable[[str, dict[str, Any]], None]:
    """A cluster member's events for a person: a change of role, a gap, a reconnect, a restart,
    each named by its member (after ``also``, the live table's own)."""
    from ckptdiag.report.live import event_line

    def on_event(member: str, event: dict[str, Any]) -> None:
        if also is not None:
            also(member, event)
        kind = event["kind"]
        if kind in ("gap", "reconnected", "restart") or (
            kind == "role" and event.get("previous") not in (None, event.get("role"))
        ):
            say(event_line(event, member))

    return on_event


@dataclass(frozen=True)
class DiagnoseRequest:
    """``ckptdiag diagnose``: record for a while, then report on it."""

    record: RecordRequest
    outputs: tuple[Destination, ...]  # the report's files (or stdout), all from one diagnosis
    fail_on: str
    logs: tuple[Path, ...] = ()  # mongod's logs, read beside the recording
    top: int | None = None  # episodes listed (the worst, in time order): None the format's default, 0 all


def run_diagnose(
    request: DiagnoseRequest, stop_signals: StopSignals, warn: Warn
) -> tuple[RecordResult | ClusterResult, ExitStatus]:
    """Record (into --save, or a temporary file removed afterwards), then diagnose the recording;
    a cluster is recorded member by member and reported with its cluster view.

    The report's target is checked before anything is recorded; if writing it (or anything
    after the recording) fails, the temporary recording is kept and named. Stopped early
    (Ctrl-C), it still reports on what it recorded."""
    from ckptdiag.workflows.report import check_outputs

    saved = () if request.record.output is None else (request.record.output,)
    check_outputs(request.outputs, (*saved, *request.logs))  # before minutes of recording, not after
    with kept_on_failure(warn) as scratch:
        result, report = record_and_diagnose(request, stop_signals, warn, scratch)
        for out in request.outputs:
            protect = (*_saved(request, result), *request.logs)
            write_report(report, out.fmt, out.path, protect=protect, top=request.top, wrote=warn)
    return result, exit_status(report.dx.severity, request.fail_on)


@contextlib.contextmanager
def kept_on_failure(warn: Warn) -> Iterator[Path]:
    """A scratch directory for a recording made only to be diagnosed: removed when all went
    well; kept, and named, when anything after the recording failed (the report could not be
    written, the run was stopped): minutes of recording are never thrown away."""
    import shutil
    import tempfile

    scratch = Path(tempfile.mkdtemp(prefix="ckptdiag-diagnose-"))
    try:
        yield scratch
    except BaseException:
        kept = sorted(p for p in scratch.rglob("*.jsonl*") if not p.name.startswith("."))
        if kept:
            where = kept[0] if len(kept) == 1 else scratch
            warn(f"note: the recording is kept: {where} ('ckptdiag report {where}' reports on it)")
        else:
            shutil.rmtree(scratch, ignore_errors=True)
        raise
    shutil.rmtree(scratch, ignore_errors=True)


def _saved(request: DiagnoseRequest, result: RecordResult | ClusterResult) -> tuple[Path, ...]:
    """The recordings kept by --save (a report is never written over them)."""
    from ckptdiag.recording.cluster import ClusterResult

    if request.record.output is None:
        return ()
    if isinstance(result, ClusterResult):
        return tuple(m.path for m in result.members if m.path is not None)
    return (request.record.output,)


def record_and_diagnose(
    request: DiagnoseRequest, stop_signals: StopSignals, warn: Warn, scratch: Path
) -> tuple[RecordResult | ClusterResult, Report | ClusterReport]:
    """Record (into --save, or ``scratch``), then diagnose what was recorded: one server's
    report, or a cluster's."""
    import shutil

    from ckptdiag.errors import InputError, UsageError
    from ckptdiag.recording.cluster import ClusterResult
    from ckptdiag.sources.refusals import MongosTarget
    from ckptdiag.workflows.logs import check_logs

    cluster = records_cluster(request.record)
    if cluster and request.logs:
        raise UsageError(
            "--log with a cluster: which member's log it is is not known",
            "diagnose one member with its log (--uri mongodb://db1:27017 --log ...), or the cluster without",
        )
    check_logs(request.logs)  # before minutes of recording, not after
    path = request.record.output or scratch / ("members" if cluster else "diagnose.jsonl.gz")
    try:
        result = run_record(replace(request.record, output=path, protect=request.logs), stop_signals, warn)
    except MongosTarget:
        if request.record.output is not None or request.logs:
            raise
        warn("note: a mongos: diagnosing its shards' members instead (--discover)")
        path = scratch / "members"
        result = run_record(replace(request.record, output=path, discover=True), stop_signals, warn)
    if result.samples < 2:
        if request.record.output is None:  # nothing worth keeping: the scratch folder goes
            shutil.rmtree(scratch, ignore_errors=True)
        raise InputError(
            f"only {result.samples} sample recorded: nothing to diagnose", "let it run longer (--duration)"
        )
    if isinstance(result, ClusterResult):
        return result, _cluster_report(result, warn)
    report = diagnose_window((path, *request.logs))
    if request.record.output is None:
        report = replace(report, source=replace(report.source, path="live recording (not kept: --save FILE keeps it)"))
    return result, report


def _cluster_report(result: ClusterResult, warn: Warn) -> Report | ClusterReport:
    """The members' recordings (this run's, not whatever else the directory holds) reported
    together: one report each and the cluster view (one member found: its own report)."""
    from ckptdiag.model.window import WHOLE
    from ckptdiag.workflows.members import group_members
    from ckptdiag.workflows.report import cluster_report

    paths = tuple(m.path for m in result.members if m.result and m.result.samples and m.path and m.path.exists())
    members = group_members(paths)
    if len(members) == 1:
        return diagnose_window(members[0].paths)
    return cluster_report(members, WHOLE, warn)
