"""record and diagnose: the commands that talk to a live server."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import click

from ckptdiag.cli.options import (
    CONTEXT,
    connection_options,
    destinations,
    parse_duration,
    report_options,
    resolve_format,
    sampling_options,
    stop_signals,
)
from ckptdiag.cli.output import err
from ckptdiag.status import ExitStatus


@click.command(context_settings=CONTEXT)
@connection_options
@click.option(
    "-o",
    "--output",
    type=click.Path(path_type=Path),
    default=None,
    help="Recording file (.jsonl, or .jsonl.gz for gzip) [default: ckptdiag-<UTC time>.jsonl.gz]; for a "
    "replica set or cluster, a directory that gets one recording per member [default: ckptdiag-<UTC time>/].",
)
@click.option("--overwrite", is_flag=True, help="Replace an existing output file.")
@click.option(
    "--ndjson",
    "ndjson",
    type=click.Choice(["-"]),
    default=None,
    help="Also stream every sample as one JSON line to stdout ('-'), flushed, for pipes (from a cluster, "
    'each line says its "member").',
)
@click.option(
    "-d",
    "--duration",
    default=None,
    metavar="DURATION",
    help="Stop after this long (90, 90s, 10m, 2h) [default: until Ctrl-C].",
)
@sampling_options
@click.pass_context
def record(
    ctx: click.Context,
    /,
    output: Path | None,
    overwrite: bool,
    ndjson: str | None,
    interval: float,
    duration: str | None,
    devices: tuple[str, ...],
    source: str,
    rows: bool,
    discover: bool,
    **conn: Any,
) -> None:
    """Sample serverStatus and /proc/diskstats every second into a recording.

    Reads buildInfo, hostInfo and getCmdLineOpts once, then serverStatus (only the sections
    ckptdiag uses) on absolute 1-second deadlines. A lost connection is recorded as a gap and
    retried; Ctrl-C or --duration end it, and the file is always complete.

    A URI naming a replica set (several hosts, replicaSet=, mongodb+srv://), --discover, or a
    mongos records every data-bearing member (through a mongos: every shard's), each directly, on
    the same ticks, one recording per member in the -o directory; role changes are events in
    them, and members joining or leaving the set are followed.

    \b
    Example:
        ckptdiag record --uri mongodb://monitor@db1:27017/?authSource=admin -d 10m -o db1.jsonl.gz
        ckptdiag record -d 60 --ndjson - | jq -c '.m["cache.dirty_bytes"]'
        ckptdiag record --source diagnostic --uri mongodb://monitor@db1:27017/?authSource=admin -d 10m
        ckptdiag record --uri 'mongodb://monitor@db1,db2,db3/?replicaSet=rs0&authSource=admin' -d 1h -o rs0/
    """
    from ckptdiag.workflows.record import RecordRequest, run_record

    seconds = parse_duration(duration)
    _check_connection(conn, source, devices)
    request = RecordRequest(
        conn=conn,
        output=output,
        overwrite=overwrite,
        stream_stdout=ndjson == "-",
        interval=interval,
        duration=seconds,
        devices=devices,
        live=sys.stdout.isatty() and ndjson is None,
        source=source,
        discover=discover,
        rows=rows,
    )
    result = run_record(request, stop_signals, err)
    if result.stopped_by == "interrupted":
        ctx.exit(ExitStatus.INTERRUPTED)


@click.command(context_settings=CONTEXT)
@connection_options
@click.option(
    "-d",
    "--duration",
    default="5m",
    show_default=True,
    metavar="DURATION",
    help="How long to record before reporting (90, 90s, 10m, 2h); Ctrl-C reports early.",
)
@sampling_options
@click.option(
    "--save",
    type=click.Path(path_type=Path),
    default=None,
    help="Keep the recording in this file (never overwritten); for a cluster, this directory (one file a member).",
)
@click.option(
    "--log",
    "logs",
    multiple=True,
    type=click.Path(exists=True, readable=False, path_type=Path),  # unreadable: ours to say, with the hint
    metavar="PATH",
    help="mongod's log (a file, .gz, or its directory with rotations): its slow operations are set "
    "against the checkpoints, its WiredTiger open config joins the settings. Repeatable.",
)
@click.option(
    "--hosts",
    "hosts_file",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    metavar="FILE",
    help="A fleet: one URI (or host:port) a line, # comments. Every host is diagnosed at the same time, "
    "one report each in the -o directory, and an index lists their verdicts, worst first.",
)
@click.option(
    "--jobs",
    type=click.IntRange(1, 1000),
    default=16,
    show_default=True,
    help="With --hosts: how many hosts are recorded at once.",
)
@report_options
@click.pass_context
def diagnose(
    ctx: click.Context,
    /,
    duration: str,
    interval: float,
    devices: tuple[str, ...],
    source: str,
    rows: bool,
    discover: bool,
    save: Path | None,
    logs: tuple[Path, ...],
    hosts_file: Path | None,
    jobs: int,
    fmt: str,
    output: tuple[Path, ...],
    fail_on: str,
    top: int | None,
    episodes: str,
    **conn: Any,
) -> None:
    """Record a server for a while (5 minutes by default), then report: every checkpoint, its cost, a verdict.

    Takes the connection options, --interval, --device, --source, --rows and --discover of 'record' (the
    recording goes to a temporary file unless --save keeps it), and --format, --output, --fail-on, --top and
    --episodes of 'report'; --log adds mongod's log, its slow operations set against the checkpoints. Exit:
    the verdict's, 0 ok, 4 critical, a warn 0 unless --fail-on warn (3). A replica set or cluster (see
    'record') is recorded member by member and reported with its cluster view (the worst member's verdict).

    \b
    Example:
        ckptdiag diagnose --uri mongodb://monitor@db1:27017/?authSource=admin
        ckptdiag diagnose -d 15m --save db1.jsonl.gz -o db1.md --fail-on warn
        ckptdiag diagnose -d 10m --log /var/log/mongodb/mongod.log
        ckptdiag diagnose --uri 'mongodb://monitor@db1/?replicaSet=rs0&authSource=admin' -d 15m -o rs0.html
        ckptdiag diagnose --hosts fleet.txt -u monitor -d 10m -o /var/reports/$(date +%F)/

    With --hosts FILE, every host of the file is diagnosed at once (--jobs at a time; the connection
    options but --uri/--host/--port apply to all), each report written to the -o directory (HTML unless -f
    says otherwise) with index.<ext> listing every verdict, worst first (without -o: to stdout). An
    unreachable host is a line of the index; the exit status is the worst verdict's, 1 when none was read.
    """
    from ckptdiag.workflows.record import DiagnoseRequest, RecordRequest, run_diagnose

    _check_connection(conn, source, devices)
    record = RecordRequest(
        conn=conn,
        output=save,
        interval=interval,
        duration=parse_duration(duration),
        devices=devices,
        live=sys.stderr.isatty() and sys.stdout.isatty(),
        source=source,
        discover=discover,
        rows=rows,
    )
    if hosts_file is not None:
        ctx.exit(_fleet(ctx, hosts_file, record, fmt, output, fail_on, jobs, save, logs))
    request = DiagnoseRequest(record, destinations(fmt, output), fail_on, logs, 0 if episodes == "all" else top)
    result, status = run_diagnose(request, stop_signals, err)
    ctx.exit(ExitStatus.INTERRUPTED if result.stopped_by == "interrupted" else status)


def _fleet(
    ctx: click.Context,
    hosts_file: Path,
    record: Any,
    fmt: str,
    outputs: tuple[Path, ...],
    fail_on: str,
    jobs: int,
    save: Path | None,
    logs: tuple[Path, ...],
) -> int:
    """diagnose --hosts: the options that cannot go with it refused, the rest to the fleet."""
    from ckptdiag.workflows.fleet import FleetRequest, run_fleet

    given = [
        f"--{name}"
        for name in ("uri", "host", "port")
        if ctx.get_parameter_source(name) == click.core.ParameterSource.COMMANDLINE
    ]
    if given or logs:
        raise click.UsageError(f"--hosts names the hosts; {', '.join(given) or '--log'} cannot go with it")
    if len(outputs) > 1:
        raise click.UsageError("with --hosts, -o is the one directory the reports go to")
    output = outputs[0] if outputs else None
    fmt = fmt if fmt != "auto" else "html" if output is not None else resolve_format(fmt, None)
    request = FleetRequest(hosts_file, record, fmt, output, fail_on, jobs, save)
    return int(run_fleet(request, stop_signals, err))


def _check_connection(conn: dict[str, Any], source: str, devices: tuple[str, ...]) -> None:
    """The password asked for on a terminal when only the user was given; --device refused
    where the disks come from the server (--source diagnostic)."""
    if conn.get("username") and conn.get("password") is None and sys.stdin.isatty():
        conn["password"] = click.prompt("Enter password", hide_input=True, err=True)
    if source == "diagnostic" and devices:
        raise click.UsageError("--device reads this host's /proc/diskstats; --source diagnostic brings the server's")
