"""report: recordings or FTDC in a window, diagnosed and advised, written in a format."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ckptdiag import recording
from ckptdiag.model.window import WHOLE, TimeWindow
from ckptdiag.status import ExitStatus
from ckptdiag.workflows import Warn

if TYPE_CHECKING:
    from ckptdiag.analysis.results import Diagnosis
    from ckptdiag.guard.outputs import Target
    from ckptdiag.model.facts import ServerFacts
    from ckptdiag.recording.inputs import Inputs
    from ckptdiag.report.cluster import ClusterReport
    from ckptdiag.report.document import Report, ReportSource
    from ckptdiag.workflows.members import Member


@dataclass(frozen=True)
class Destination:
    """Where one rendering of a report goes: a format (auto resolved by the CLI) and a file
    (None: stdout)."""

    fmt: str
    path: Path | None = None
    refused: str = ""  # why this file cannot be written in any format (the CLI's -f auto), if so


@dataclass(frozen=True)
class ReportRequest:
    """Everything ``ckptdiag report`` was asked to do."""

    paths: tuple[Path, ...]
    window: TimeWindow
    outputs: tuple[Destination, ...]  # one diagnosis, each of these written from it
    fail_on: str = "critical"  # warn, critical or never
    top: int | None = None  # episodes listed (the worst, in time order): None the format's default, 0 all


def _ftdc_diagnosis(paths: tuple[Path, ...], window: TimeWindow, events: Any) -> tuple[Diagnosis, ReportSource]:
    """FTDC files read a file at a time (on every core: :mod:`.ftdc_window`), each part diagnosed
    as it comes (:mod:`ckptdiag.analysis.window`): the window is never held whole."""
    from ckptdiag.analysis.diagnosis import diagnosis
    from ckptdiag.analysis.window import WindowDiagnoser
    from ckptdiag.model.facts import ServerFacts, from_ftdc_metadata
    from ckptdiag.report.document import ReportSource
    from ckptdiag.workflows import logs as mongod_logs
    from ckptdiag.workflows.ftdc_window import derive_ftdc

    def facts_of(data: Any) -> ServerFacts:
        facts = from_ftdc_metadata(data.metadata)
        return mongod_logs.with_open_config(facts, events) if events is not None else facts

    stream = WindowDiagnoser(ServerFacts())
    known = -1  # metadata documents the facts were made from

    def sink(part: Any, data: Any) -> None:
        nonlocal known
        if len(data.metadata) != known:  # the facts from what the files read so far say
            stream.facts, known = facts_of(data), len(data.metadata)
        stream.add(part)

    read = derive_ftdc(list(paths), window, sink=sink)
    data = read.data
    stream.facts = facts_of(data)
    damage = tuple(f"{r.path}: {line}" for r in data.reports for line in (*r.damage, *([r.error] if r.error else [])))
    source = ReportSource("ftdc", ", ".join(map(str, paths)), damage, files=len(data.reports))
    return diagnosis(stream, gaps=read.gaps, restarts=read.restarts, notes=source.damaged), source


def diagnose_window(paths: tuple[Path, ...], window: TimeWindow = WHOLE) -> Report:
    """Diagnose recordings or FTDC in a window, with mongod's logs where given, and advise on the
    diagnosis."""
    from ckptdiag.recording.inputs import Inputs

    return _diagnose(Inputs.classify(paths), window)


def _diagnose(inputs: Inputs, window: TimeWindow) -> Report:
    """:func:`diagnose_window` of inputs already told apart (recordings, FTDC, logs)."""
    from ckptdiag.advice.rules import recommend
    from ckptdiag.analysis.window import full_collections_deferred
    from ckptdiag.errors import UsageError
    from ckptdiag.report.document import Report
    from ckptdiag.workflows import logs as mongod_logs
    from ckptdiag.workflows.recording_window import recordings_diagnosis

    if inputs.recordings and inputs.ftdc:
        raise UsageError("mixing recordings and FTDC files in one report", "report them one kind at a time")
    events, read = mongod_logs.read_logs(inputs.logs, window) if inputs.logs else (None, None)
    with full_collections_deferred():
        if inputs.recordings:
            dx, source = recordings_diagnosis(inputs.recordings, window, events)
        else:
            dx, source = _ftdc_diagnosis(inputs.ftdc, window, events)
    if events is None or read is None:
        return Report(dx, source, recommend(dx))
    dx, section = mongod_logs.with_log(dx, events, read)
    return Report(dx, source, recommend(dx), log=section)


def run_report(request: ReportRequest, warn: Warn) -> ExitStatus:
    """Diagnose a window of recordings or FTDC (or of mongod's log alone), write the report, and
    return the exit status its verdict maps to under ``--fail-on``."""
    import tempfile

    from ckptdiag.analysis.window import full_collections_deferred
    from ckptdiag.recording.inputs import Inputs
    from ckptdiag.workflows.members import group_members

    check_outputs(request.outputs, request.paths)  # before the work, and again before each write
    with tempfile.TemporaryDirectory(prefix="ckptdiag-unpacked-") as scratch:  # archives, for this run only
        notes: list[str] = []
        members = group_members(request.paths, Path(scratch), notes)
        for note in notes:
            warn(f"note: {note}")
        if len(members) > 1:
            return _run_cluster(request, members, warn)
        inputs = Inputs.classify(members[0].paths)
        if inputs.logs and not inputs.recordings and not inputs.ftdc:
            return _run_log_only(request, inputs.logs, warn)
        report = _diagnose(inputs, request.window)
    _warn_damage(report, warn)
    with full_collections_deferred():  # the report is built from long-lived results
        for out in request.outputs:
            write_report(report, out.fmt, out.path, protect=request.paths, top=request.top, wrote=warn)
    return exit_status(report.dx.severity, request.fail_on)


def _run_log_only(request: ReportRequest, logs: tuple[Path, ...], warn: Warn) -> ExitStatus:
    """The report of mongod's log alone."""
    from ckptdiag.report.formats import render
    from ckptdiag.workflows.logs import log_only_report

    log_report = log_only_report(logs, request.window)
    for line in log_report.log.damaged:
        warn(f"note: log: {line}")
    for out in request.outputs:
        write_text_output(render(log_report, out.fmt), out.path, request.paths, warn)
    return exit_status(log_report.dx.severity, request.fail_on)


def _warn_damage(report: Report, warn: Warn, member: str = "") -> None:
    prefix = f"{member}: " if member else ""
    for line in report.source.damaged:
        warn(f"note: {prefix}{line}")
    for line in report.log.damaged if report.log else ():
        warn(f"note: {prefix}log: {line}")


def _diagnose_one(paths: tuple[Path, ...], window: TimeWindow) -> Report | str:
    """One member's report, or its error as one line (what crosses back from a worker)."""
    from ckptdiag.errors import CkptdiagError

    try:
        return diagnose_window(paths, window)
    except CkptdiagError as exc:
        return exc.one_line()


def _diagnose_all(members: list[Member], window: TimeWindow) -> list[Report | str]:
    """Every member's report, in worker processes where there are cores for them (the same
    reports as one process gives: each member is read and diagnosed whole by one worker)."""
    from ckptdiag.workflows.workers import workers_for

    workers = workers_for(len(members))
    if workers < 2:
        return [_diagnose_one(m.paths, window) for m in members]
    from concurrent.futures import ProcessPoolExecutor
    from concurrent.futures.process import BrokenProcessPool

    with ProcessPoolExecutor(max_workers=workers) as pool:
        futures = [pool.submit(_diagnose_one, m.paths, window) for m in members]
        reports: list[Report | str] = []
        for member, future in zip(members, futures, strict=True):
            try:
                reports.append(future.result())
            except BrokenProcessPool:  # a worker was killed (the OOM killer): this process does it
                reports.append(_diagnose_one(member.paths, window))
        return reports


def _run_cluster(request: ReportRequest, members: list[Member], warn: Warn) -> ExitStatus:
    """One report per member and the cluster view."""
    cluster = cluster_report(members, request.window, warn)
    for out in request.outputs:
        write_report(cluster, out.fmt, out.path, protect=request.paths, wrote=warn)
    return exit_status(cluster.dx.severity, request.fail_on)


def cluster_report(members: list[Member], window: TimeWindow, warn: Warn) -> ClusterReport:
    """Every member's report and the cluster view over them; a member that cannot be read is a
    note (and it fails only when none can)."""
    from ckptdiag.analysis.cluster import diagnose_cluster
    from ckptdiag.errors import InputError
    from ckptdiag.report.cluster import ClusterReport

    reports: list[tuple[str, Report]] = []
    skipped: list[str] = []
    for member, result in zip(members, _diagnose_all(members, window), strict=True):
        if isinstance(result, str):
            skipped.append(f"{member.name}: {result}")
            warn(f"note: member {member.name} skipped: {result}")
            continue
        _warn_damage(result, warn, member.name)
        reports.append((member.name, result))
    if not reports:
        raise InputError(f"none of the {len(members)} members could be read", skipped[0])
    return ClusterReport(diagnose_cluster([(n, r.dx) for n, r in reports]), tuple(reports), tuple(skipped))


def exit_status(severity: str, fail_on: str) -> ExitStatus:
    """0 ok; 3 warn (only with --fail-on warn); 4 critical (unless --fail-on never)."""
    if severity == "critical" and fail_on in ("warn", "critical"):
        return ExitStatus.CRITICAL
    if severity in ("warn", "critical") and fail_on == "warn":
        return ExitStatus.WARN
    return ExitStatus.OK


def write_report(
    report: Report | ClusterReport,
    fmt: str,
    output: Path | None,
    protect: tuple[Path, ...] = (),
    top: int | None = None,
    wrote: Warn | None = None,
) -> None:
    """Render the report in ``fmt`` to ``output`` (atomically) or to the terminal/stdout, listing
    the ``top`` worst episodes (None: the format's default; 0: all); ``wrote`` is told of a file
    once it is whole. Only the format's own renderer is imported (a cron job's JSON does not
    load the HTML page's)."""
    from ckptdiag.report import formats
    from ckptdiag.report.cluster import ClusterReport

    if isinstance(report, ClusterReport):
        write_text_output(formats.render(report, fmt), output, protect, wrote)
        return
    if fmt == "table" and output is None:  # a terminal: rich's own rendering, in its width
        from rich.console import Console

        from ckptdiag.report.terminal import render_table

        Console().print(render_table(report, top))
        return
    from ckptdiag.report.server import ServerView

    write_text_output(formats.render(ServerView(report, top), fmt), output, protect, wrote)


def check_outputs(outputs: tuple[Destination, ...], inputs: tuple[Path, ...]) -> None:
    """:func:`check_output` of every file among ``outputs``, then any the CLI could choose no
    format for, before any work."""
    from ckptdiag.errors import UsageError
    from ckptdiag.report.formats import known_extensions

    for out in outputs:
        if out.path is not None:
            check_output(out.path, inputs)
    for out in outputs:
        if out.refused:
            raise UsageError(out.refused, f"name it {' '.join(known_extensions())}, or give -f")


def check_output(output: Path, inputs: tuple[Path, ...]) -> Target:
    """Refuse an output ckptdiag must not write (``outputs.check_target``: an input, anything
    under an input directory, a device, a link), or any recording: a report never replaces data."""
    from ckptdiag.errors import OutputError
    from ckptdiag.guard.outputs import check_target

    target = check_target(output, inputs)
    if target.path is not None and target.exists and recording.is_recording(target.path):
        raise OutputError(f"{output} is a recording", "write the report to another file")
    return target


def write_text_output(
    text: str, output: Path | None, protect: tuple[Path, ...] = (), wrote: Warn | None = None
) -> None:
    """``text`` to stdout, or through the guarded writer to ``output`` (never over a recording
    or an input; an HTML page's secrets are replaced by the escaped marker), then "wrote PATH"
    to ``wrote``: a cron job's log and a DBA both see where each file went."""
    from ckptdiag.guard.outputs import STDOUT, write_text
    from ckptdiag.guard.redact import HTML_REDACTED, REDACTED

    target = STDOUT if output is None else check_output(output, protect)
    html = (output is not None and output.suffix.lower() in (".html", ".htm")) or text.lstrip().startswith("<!")
    write_text(target, text, marker=HTML_REDACTED if html else REDACTED)
    if output is not None and wrote is not None:
        wrote(f"wrote {output}")
