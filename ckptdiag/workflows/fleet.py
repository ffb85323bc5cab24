"""diagnose --hosts FILE: a fleet for a nightly cron. Every host (or replica set) of the file is
recorded and diagnosed at the same time (at most ``jobs`` at once), one report each, and an index
lists every host's verdict, worst first. One host that cannot be reached is a line in the index,
not a failed run: the exit status is the worst verdict's, or an error only when no host could be
diagnosed."""

from __future__ import annotations

import re
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

from ckptdiag.status import ExitStatus
from ckptdiag.workflows import StopSignals, Warn
from ckptdiag.workflows.record import DiagnoseRequest, RecordRequest

if TYPE_CHECKING:
    from ckptdiag.analysis.fleet import HostVerdict


@dataclass(frozen=True, slots=True)
class FleetHost:
    """One line of the hosts file."""

    line: int
    uri: str

    @property
    def name(self) -> str:
        """The URI's hosts (never its credentials): how the index and the files name it."""
        from ckptdiag.guard.redact import uri_hosts

        return uri_hosts(self.uri) or f"line {self.line}"


def read_hosts(path: Path) -> tuple[FleetHost, ...]:
    """The hosts file: one ``mongodb://`` or ``mongodb+srv://`` URI, or ``host[:port]``, a line;
    blank lines and ``#`` comments (a whole line, or after a space) are ignored."""
    from ckptdiag.errors import InputError, UsageError
    from ckptdiag.guard.inputs import check_readable
    from ckptdiag.guard.redact import remember, uri_hosts, uri_password

    check_readable(path)
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"cannot read {path}: {exc}", "give a text file of one URI per line") from None
    hosts: list[FleetHost] = []
    seen: dict[str, int] = {}
    for number, raw in enumerate(text.splitlines(), 1):
        line = re.sub(r"(^|\s)#.*$", "", raw).strip()
        if not line:
            continue
        uri = line if line.startswith(("mongodb://", "mongodb+srv://")) else f"mongodb://{line}"
        remember(uri_password(uri))  # a driver's message quoting it is redacted too
        if uri_hosts(uri) is None or any(c.isspace() for c in uri):
            # the line is not shown: it may hold a password
            raise UsageError(f"{path}:{number} is not a MongoDB URI or host[:port]", "one URI per line; # comments")
        if uri in seen:
            raise UsageError(f"{path}:{number} repeats line {seen[uri]}", "list each host once")
        seen[uri] = number
        hosts.append(FleetHost(number, uri))
    if not hosts:
        raise UsageError(f"{path} lists no host", "one mongodb:// URI or host:port a line")
    return tuple(hosts)


@dataclass(frozen=True)
class FleetRequest:
    """``ckptdiag diagnose --hosts FILE``."""

    hosts: Path
    record: RecordRequest  # what every host shares: credentials, TLS, interval, duration, source
    fmt: str
    output: Path | None  # a directory: index.<ext> and one report per host; None: the index on stdout
    fail_on: str
    jobs: int = 16
    save: Path | None = None  # a directory that keeps every host's recording


class _Stops:
    """Every running host's stop, reachable from the one signal handler of the main thread."""

    def __init__(self) -> None:
        self.reason: str | None = None
        self._lock = threading.Lock()
        self._stops: list[Callable[[str], None]] = []

    def stop_all(self, reason: str) -> None:
        self.reason = self.reason or reason
        for stop in list(self._stops):
            stop(reason)

    @contextmanager
    def register(self, stop: Callable[[str], None]) -> Iterator[None]:
        with self._lock:
            self._stops.append(stop)
        if self.reason is not None:
            stop(self.reason)
        try:
            yield
        finally:
            with self._lock:
                self._stops.remove(stop)


def file_stem(host: FleetHost, taken: set[str]) -> str:
    """A host's report and recording name: its hosts, safe on every filesystem, unique.

    >>> file_stem(FleetHost(3, "mongodb://u:p@db1:27017,db2:27017/?replicaSet=rs0"), set())
    'db1_27017+db2_27017'
    """
    stem = re.sub(r"[^A-Za-z0-9._+-]", "_", host.name.replace(",", "+").replace("[", "").replace("]", ""))
    if stem in taken:
        stem = f"{stem}-line{host.line}"
    taken.add(stem)
    return stem


def run_fleet(request: FleetRequest, stop_signals: StopSignals, warn: Warn) -> ExitStatus:
    """Diagnose every host of the file at once (bounded), write each report and the index, and
    return the worst verdict's exit status."""
    from concurrent.futures import ThreadPoolExecutor

    from ckptdiag.errors import CkptdiagError
    from ckptdiag.report.fleet import FleetIndex
    from ckptdiag.report.formats import extension, render
    from ckptdiag.workflows.report import exit_status, write_text_output

    hosts = read_hosts(request.hosts)
    for directory in (request.output, request.save):
        if directory is not None:
            _make_dir(directory)
    taken: set[str] = set()
    stems = {h.line: file_stem(h, taken) for h in hosts}
    stops = _Stops()
    warn(f"{len(hosts)} hosts from {request.hosts}, {min(request.jobs, len(hosts))} at a time")
    with stop_signals(stops.stop_all), ThreadPoolExecutor(max_workers=min(request.jobs, len(hosts))) as pool:
        verdicts = list(pool.map(lambda h: _diagnose_host(request, h, stems[h.line], stops, warn), hosts))
    index = FleetIndex(tuple(verdicts))
    target = request.output / f"index.{extension(request.fmt)}" if request.output else None
    write_text_output(render(index, request.fmt), target, protect=(request.hosts,), wrote=warn)
    if target is not None:
        warn(f"{index.summary}; index: {target}")
    if not any(v.diagnosed for v in verdicts):
        raise CkptdiagError(
            f"none of the {len(hosts)} hosts could be diagnosed", verdicts[0].summary.split(" (hint:")[0]
        )
    return exit_status(index.severity, request.fail_on)


def _make_dir(directory: Path) -> None:
    from ckptdiag.errors import OutputError, UsageError

    if directory.exists() and not directory.is_dir():
        raise UsageError(f"{directory} is a file; a fleet's reports go to a directory", "give -o/--save a directory")
    try:
        directory.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise OutputError(f"cannot create {directory}: {exc.strerror}", "check the path and its permissions") from None


def _diagnose_host(request: FleetRequest, host: FleetHost, stem: str, stops: _Stops, warn: Warn) -> HostVerdict:
    """One host's diagnosis and report, or the line saying why it has none."""
    from ckptdiag.analysis.fleet import HostVerdict
    from ckptdiag.errors import CkptdiagError
    from ckptdiag.recording.cluster import ClusterResult
    from ckptdiag.report.cluster import ClusterReport
    from ckptdiag.report.formats import extension
    from ckptdiag.workflows.record import connect_options, kept_on_failure, record_and_diagnose, records_cluster
    from ckptdiag.workflows.report import Destination, write_report

    conn = {**request.record.conn, "uri": host.uri, "host": None, "port": None}
    record = replace(request.record, conn=conn, output=None, live=False, stream_stdout=False)
    cluster = records_cluster(record)
    if request.save is not None:
        record = replace(record, output=request.save / (stem if cluster else f"{stem}.jsonl.gz"))
    target = connect_options(conn).display()
    if stops.reason is not None:
        return HostVerdict(host.line, host.name, target, None, f"not diagnosed: {stops.reason} before it began")

    def say(line: str) -> None:
        warn(f"{host.name}: {line}")

    try:
        with kept_on_failure(say) as scratch:
            result, report = record_and_diagnose(
                DiagnoseRequest(record, (Destination(request.fmt),), request.fail_on), stops.register, say, scratch
            )
            path = request.output / f"{stem}.{extension(request.fmt)}" if request.output else None
            if path is not None:
                write_report(report, request.fmt, path, protect=(request.hosts,), wrote=warn)
    except CkptdiagError as exc:
        say(f"not diagnosed: {exc.one_line()}")
        return HostVerdict(host.line, host.name, target, None, exc.one_line())
    except Exception as exc:  # noqa: BLE001 - one host's failure is its line in the index, not the fleet's end
        say(f"not diagnosed: unexpected {type(exc).__name__}: {exc}")
        return HostVerdict(host.line, host.name, target, None, f"unexpected {type(exc).__name__}: {exc}")
    kind, members = "server", 1
    if isinstance(result, ClusterResult):
        kind, members = result.topology.kind, len(report.members) if isinstance(report, ClusterReport) else 1
    return HostVerdict(
        host.line,
        host.name,
        target,
        report.dx.severity,
        report.dx.summary,
        kind,
        members,
        str(path) if path is not None else None,
    )
