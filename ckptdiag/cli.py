"""Command line: parse, build the objects, call them, map errors to exit statuses. Nothing else."""

from __future__ import annotations

import os
import signal
import sys
import time
import traceback
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from types import FrameType
from typing import Any, TypeVar

import click

from ckptdiag import __version__
from ckptdiag.errors import CkptdiagError
from ckptdiag.status import ExitStatus

F = TypeVar("F", bound=Callable[..., Any])
CONTEXT = {"help_option_names": ["-h", "--help"], "max_content_width": 100}


def _err(message: str) -> None:
    click.echo(f"ckptdiag: {message}", err=True)


@click.group(context_settings=CONTEXT)
@click.version_option(__version__, "-V", "--version", prog_name="ckptdiag")
@click.option("--debug", is_flag=True, help="Show tracebacks on errors.")
@click.pass_context
def cli(ctx: click.Context, debug: bool) -> None:
    """Find and fix MongoDB WiredTiger checkpoint stalls.

    \b
    Example:
        ckptdiag record --uri mongodb://localhost:27017 --duration 10m -o node1.jsonl.gz
    """
    ctx.obj = {"debug": debug}


def _with_options(func: F, options: list[Any]) -> F:
    for option in reversed(options):
        func = option(func)
    return func


def connection_options(func: F) -> F:
    """The options mongostat users expect, on every command that connects to a server."""
    options = [
        click.option(
            "--uri",
            envvar="MONGODB_URI",
            show_envvar=True,
            default=None,
            metavar="URI",
            help="MongoDB URI (auth and TLS options may go in it) [default: mongodb://localhost:27017].",
        ),
        click.option("--host", default=None, help="Server host (replaces the URI's host)."),
        click.option("--port", type=click.IntRange(1, 65535), default=None, help="Server port."),
        click.option("-u", "--username", default=None, help="User name."),
        click.option(
            "-p",
            "--password",
            default=None,
            help="Password (prompted for when --username is given without it on a terminal).",
        ),
        click.option("--authenticationDatabase", "auth_db", default=None, help="Database that holds the user."),
        click.option(
            "--authenticationMechanism",
            "auth_mechanism",
            default=None,
            help="SCRAM-SHA-256, SCRAM-SHA-1, MONGODB-X509, ...",
        ),
        click.option("--tls/--no-tls", "tls", default=None, help="Use TLS (also --ssl)."),
        click.option("--ssl", "tls", flag_value=True, hidden=True),
        click.option(
            "--tlsCAFile",
            "tls_ca_file",
            type=click.Path(dir_okay=False),
            default=None,
            help="CA certificates that sign the server's certificate (PEM).",
        ),
        click.option(
            "--tlsCertificateKeyFile",
            "tls_cert_key_file",
            type=click.Path(dir_okay=False),
            default=None,
            help="This client's certificate and key (PEM), for x.509 authentication or servers that require one.",
        ),
        click.option(
            "--tlsAllowInvalidCertificates",
            "tls_allow_invalid",
            is_flag=True,
            default=False,
            help="Accept a server certificate that does not validate (testing only: no protection from impostors).",
        ),
        click.option(
            "--timeout",
            "timeout_s",
            type=click.FloatRange(0.1, 600),
            default=5.0,
            show_default=True,
            help="Seconds to wait for the server.",
        ),
    ]
    return _with_options(func, options)


def parse_duration(text: str | None) -> float | None:
    """``90``, ``90s``, ``10m``, ``2h`` -> seconds.

    >>> parse_duration("10m"), parse_duration("1.5h"), parse_duration("45")
    (600.0, 5400.0, 45.0)
    """
    if text is None:
        return None
    units = {"s": 1, "m": 60, "h": 3600, "d": 86400}
    text = text.strip().lower()
    factor = units.get(text[-1:])
    number = text[:-1] if factor else text
    try:
        value = float(number) * (factor or 1)
    except ValueError:
        raise click.BadParameter(f"{text!r} is not a duration like 90, 90s, 10m or 2h") from None
    if value <= 0:
        raise click.BadParameter("must be positive")
    return value


@contextmanager
def _stop_signals(on_stop: Callable[[str], None]) -> Iterator[None]:
    """Ctrl-C and SIGTERM ask the sampler to stop cleanly; a second Ctrl-C stops at once."""
    previous: dict[signal.Signals, Any] = {}

    def handler(signum: int, _frame: FrameType | None) -> None:
        on_stop("interrupted" if signum == signal.SIGINT else "terminated")
        signal.signal(signal.SIGINT, signal.default_int_handler)

    for sig in (signal.SIGINT, signal.SIGTERM):
        previous[sig] = signal.signal(sig, handler)
    try:
        yield
    finally:
        for sig, old in previous.items():
            signal.signal(sig, old)


@cli.command(context_settings=CONTEXT)
@connection_options
@click.option(
    "-o",
    "--output",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Recording file (.jsonl, or .jsonl.gz for gzip) [default: ckptdiag-<UTC time>.jsonl.gz].",
)
@click.option("--overwrite", is_flag=True, help="Replace an existing output file.")
@click.option(
    "--ndjson",
    "ndjson",
    type=click.Choice(["-"]),
    default=None,
    help="Also stream every sample as one JSON line to stdout ('-'), flushed, for pipes.",
)
@click.option(
    "-i",
    "--interval",
    type=click.FloatRange(0.1, 3600),
    default=1.0,
    show_default=True,
    help="Seconds between samples.",
)
@click.option(
    "-d",
    "--duration",
    default=None,
    metavar="DURATION",
    help="Stop after this long (90, 90s, 10m, 2h) [default: until Ctrl-C].",
)
@click.option(
    "--device",
    "devices",
    multiple=True,
    metavar="NAME",
    help="Disk to watch in /proc/diskstats (repeatable) [default: the disks under dbPath].",
)
@click.option(
    "--source",
    "source",
    type=click.Choice(["serverStatus", "diagnostic"]),
    default="serverStatus",
    show_default=True,
    help="diagnostic: poll getDiagnosticData instead; its disk figures are the server host's own, even "
    "from another host (needs clusterMonitor and read on local).",
)
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
    **conn: Any,
) -> None:
    """Sample serverStatus and /proc/diskstats every second into a recording.

    Reads buildInfo, hostInfo and getCmdLineOpts once, then serverStatus (only the sections
    ckptdiag uses) on absolute 1-second deadlines. A lost connection is recorded as a gap and
    retried; Ctrl-C or --duration end it, and the file is always complete.

    \b
    Example:
        ckptdiag record --uri mongodb://monitor@db1:27017/?authSource=admin -d 10m -o db1.jsonl.gz
        ckptdiag record -d 60 --ndjson - | jq -c '.m["cache.dirty_bytes"]'
        ckptdiag record --source diagnostic --uri mongodb://monitor@db1:27017/?authSource=admin -d 10m
    """
    from ckptdiag.workflows.record import RecordRequest, run_record

    seconds = parse_duration(duration)
    if conn.get("username") and conn.get("password") is None and sys.stdin.isatty():
        conn["password"] = click.prompt("Enter password", hide_input=True, err=True)
    if source == "diagnostic" and devices:
        raise click.UsageError("--device reads this host's /proc/diskstats; --source diagnostic brings the server's")
    if output is None and ndjson is None:
        output = Path(time.strftime("ckptdiag-%Y%m%dT%H%M%SZ.jsonl.gz", time.gmtime()))
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
    )
    result = run_record(request, _stop_signals, _err)
    if result.stopped_by == "interrupted":
        ctx.exit(ExitStatus.INTERRUPTED)


@cli.command(context_settings=CONTEXT)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["table", "md", "json"]),
    default="table",
    show_default=True,
    help="table for a terminal, md for docs, json for scripts.",
)
def metrics(fmt: str) -> None:
    """List every metric ckptdiag reads and where each MongoDB version keeps it.

    \b
    Example:
        ckptdiag metrics --format md > docs/metrics.md
    """
    from ckptdiag.report.catalogue import render_catalogue

    click.echo(render_catalogue(fmt), nl=False)


def parse_time(text: str | None) -> int | None:
    """An ISO 8601 time (UTC unless it says otherwise) -> ms since the epoch.

    >>> parse_time("2021-03-15T02:30:00Z"), parse_time("2021-03-15 02:30")
    (1615775400000, 1615775400000)
    """
    if text is None:
        return None
    import datetime as dt

    try:
        when = dt.datetime.fromisoformat(text.strip().replace("Z", "+00:00"))
    except ValueError:
        raise click.BadParameter(f"{text!r} is not a time like 2026-11-22T02:30:00Z") from None
    if when.tzinfo is None:
        when = when.replace(tzinfo=dt.timezone.utc)
    return int(when.timestamp() * 1000)


def output_options(func: F) -> F:
    """Where a report goes and in which format (``-f``, ``-o``)."""
    options = [
        click.option(
            "-f",
            "--format",
            "fmt",
            type=click.Choice(["auto", "table", "json", "md", "html"]),
            default="auto",
            show_default=True,
            help="auto: the file's extension (.json .md .html .txt), else a table on a terminal and JSON in a pipe.",
        ),
        click.option(
            "-o",
            "--output",
            type=click.Path(dir_okay=False, path_type=Path),
            default=None,
            help="Write the report here (replaced atomically).",
        ),
    ]
    return _with_options(func, options)


def report_options(func: F) -> F:
    """How a report is written: format, file, and which verdict fails the exit status."""
    options = [
        click.option(
            "--fail-on",
            type=click.Choice(["warn", "critical", "never"]),
            default="critical",
            show_default=True,
            help="Exit 4 on critical (and 3 on warn with 'warn'); 'never' exits 0 whatever the verdict.",
        ),
    ]
    return output_options(_with_options(func, options))


def resolve_format(fmt: str, output: Path | None) -> str:
    """auto -> the output file's kind, else table on a terminal and JSON in a pipe."""
    from ckptdiag.report.document import EXTENSIONS

    if fmt != "auto":
        return fmt
    if output is not None:
        return EXTENSIONS.get(output.suffix.lower(), "table")
    return "table" if sys.stdout.isatty() else "json"


@cli.command(context_settings=CONTEXT)
@connection_options
@click.option(
    "-d",
    "--duration",
    default="5m",
    show_default=True,
    metavar="DURATION",
    help="How long to record before reporting (90, 90s, 10m, 2h); Ctrl-C reports early.",
)
@click.option(
    "-i",
    "--interval",
    type=click.FloatRange(0.1, 3600),
    default=1.0,
    show_default=True,
    help="Seconds between samples.",
)
@click.option(
    "--device",
    "devices",
    multiple=True,
    metavar="NAME",
    help="Disk to watch in /proc/diskstats (repeatable) [default: the disks under dbPath].",
)
@click.option(
    "--source",
    type=click.Choice(["serverStatus", "diagnostic"]),
    default="serverStatus",
    show_default=True,
    help="diagnostic: poll getDiagnosticData instead; its disk figures are the server host's own "
    "(needs clusterMonitor and read on local).",
)
@click.option(
    "--save",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Keep the recording in this file (never overwritten).",
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
    save: Path | None,
    fmt: str,
    output: Path | None,
    fail_on: str,
    **conn: Any,
) -> None:
    """Record a server for a while (5 minutes by default), then report: every checkpoint, its
    cost and a verdict.

    Takes the connection options and --interval, --device and --source of 'record' (the recording
    goes to a temporary file unless --save keeps it), and --format, --output and --fail-on of
    'report'. The exit status is the verdict's (0 ok, 3 warn, 4 critical; see --fail-on).

    \b
    Example:
        ckptdiag diagnose --uri mongodb://monitor@db1:27017/?authSource=admin
        ckptdiag diagnose -d 15m --save db1.jsonl.gz -o db1.md --fail-on warn
    """
    from ckptdiag.workflows.record import DiagnoseRequest, RecordRequest, run_diagnose

    if conn.get("username") and conn.get("password") is None and sys.stdin.isatty():
        conn["password"] = click.prompt("Enter password", hide_input=True, err=True)
    if source == "diagnostic" and devices:
        raise click.UsageError("--device reads this host's /proc/diskstats; --source diagnostic brings the server's")
    record = RecordRequest(
        conn=conn,
        output=save,
        interval=interval,
        duration=parse_duration(duration),
        devices=devices,
        live=sys.stderr.isatty() and sys.stdout.isatty(),
        source=source,
    )
    request = DiagnoseRequest(record, resolve_format(fmt, output), output, fail_on)
    result, status = run_diagnose(request, _stop_signals, _err)
    ctx.exit(ExitStatus.INTERRUPTED if result.stopped_by == "interrupted" else status)


@cli.command(context_settings=CONTEXT)
@click.argument("paths", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option("--since", default=None, metavar="TIME", help="Start of the window (ISO 8601, UTC by default).")
@click.option("--until", default=None, metavar="TIME", help="End of the window (ISO 8601, UTC by default).")
@report_options
@click.pass_context
def report(
    ctx: click.Context,
    /,
    paths: tuple[Path, ...],
    since: str | None,
    until: str | None,
    fmt: str,
    output: Path | None,
    fail_on: str,
) -> None:
    """Diagnose recordings or MongoDB's own FTDC files (diagnostic.data): every checkpoint, its
    cost, eviction pressure, and a verdict.

    PATHS are recordings, or a diagnostic.data directory and/or its metrics.* files. The exit
    status is the verdict's (0 ok, 3 warn, 4 critical; see --fail-on), for cron.

    \b
    Example:
        ckptdiag report /var/lib/mongodb/diagnostic.data --since 2026-11-22T02:00Z --until 2026-11-22T03:00Z
        ckptdiag report db1.jsonl.gz -f json | jq .verdict
        ckptdiag report /var/lib/mongodb/diagnostic.data --since 2026-11-21T00:00Z -o nightly.html
    """
    from ckptdiag.workflows.report import ReportRequest, run_report

    request = ReportRequest(paths, parse_time(since), parse_time(until), resolve_format(fmt, output), output, fail_on)
    ctx.exit(run_report(request, _err))


@cli.command(context_settings=CONTEXT)
@click.argument("before", type=click.Path(path_type=Path))
@click.argument("after", type=click.Path(path_type=Path))
@click.option("--since-a", default=None, metavar="TIME", help="Start of BEFORE's window (recordings, FTDC).")
@click.option("--until-a", default=None, metavar="TIME", help="End of BEFORE's window.")
@click.option("--since-b", default=None, metavar="TIME", help="Start of AFTER's window.")
@click.option("--until-b", default=None, metavar="TIME", help="End of AFTER's window.")
@output_options
def compare(
    before: Path,
    after: Path,
    since_a: str | None,
    until_a: str | None,
    since_b: str | None,
    until_b: str | None,
    fmt: str,
    output: Path | None,
) -> None:
    """Compare two windows before and after a change: checkpoint duration and bytes, write p99
    inside checkpoints, throughput dip, disk peak, mean throughput.

    BEFORE and AFTER are each a recording, an FTDC file or diagnostic.data directory (with its
    own window), or a JSON report written by 'ckptdiag report -f json'.

    \b
    Example:
        ckptdiag compare monday.json tuesday.json
        ckptdiag compare diagnostic.data diagnostic.data --until-a 2026-11-22T10:00Z --since-b 2026-11-22T10:05Z
        ckptdiag compare before.jsonl.gz after.jsonl.gz -o change-1234.md
    """
    from ckptdiag.workflows.compare import CompareRequest, CompareSide, run_compare

    request = CompareRequest(
        CompareSide(before, parse_time(since_a), parse_time(until_a)),
        CompareSide(after, parse_time(since_b), parse_time(until_b)),
        resolve_format(fmt, output),
        output,
    )
    run_compare(request)


def lab_options(func: F) -> F:
    """Overrides of a lab scenario's settings, so a recommended setting can be tried on it."""
    options = [
        click.option(
            "--scenario", default="stall", show_default=True, help="healthy, stall, dirty-buildup or wt-checkpoint."
        ),
        click.option(
            "--checkpoint-interval",
            "checkpoint_s",
            type=click.FloatRange(1, 3600),
            default=None,
            help="Seconds between checkpoints (syncdelay).",
        ),
        click.option("--cache-mb", type=click.IntRange(64, 1 << 20), default=None, help="WiredTiger cache size."),
        click.option(
            "--eviction-target", type=click.IntRange(10, 99), default=None, help="% of the cache: background eviction."
        ),
        click.option(
            "--eviction-trigger",
            type=click.IntRange(10, 99),
            default=None,
            help="% of the cache: application threads evict too.",
        ),
        click.option(
            "--eviction-dirty-target",
            type=click.IntRange(1, 99),
            default=None,
            help="% of the cache in dirty data: background eviction of dirty pages.",
        ),
        click.option(
            "--eviction-dirty-trigger",
            type=click.IntRange(1, 99),
            default=None,
            help="% of the cache in dirty data: application threads evict too.",
        ),
        click.option(
            "--eviction-updates-target",
            type=click.IntRange(1, 99),
            default=None,
            help="% of the cache in updates: background eviction of update chains.",
        ),
        click.option(
            "--eviction-updates-trigger",
            type=click.IntRange(1, 99),
            default=None,
            help="% of the cache in updates: application threads evict too.",
        ),
        click.option(
            "--eviction-threads-min", type=click.IntRange(1, 20), default=None, help="Fewest eviction threads."
        ),
        click.option("--eviction-threads-max", type=click.IntRange(1, 20), default=None, help="Most eviction threads."),
        click.option("--write-rate", type=click.IntRange(100, 1_000_000), default=None, help="Inserts per second."),
        click.option(
            "--disk-mb-s",
            type=click.IntRange(0, 100_000),
            default=None,
            help="Put the data on a disk that writes at most this many MB/s (a throttled loop device; "
            "needs root; 0: the lab dir's own disk).",
        ),
        click.option(
            "--lab-dir",
            type=click.Path(file_okay=False, path_type=Path),
            default=None,
            help="Where the engine's data directory goes [default: the system temp dir].",
        ),
    ]
    return _with_options(func, options)


@cli.command(context_settings=CONTEXT)
@lab_options
@click.option("-d", "--duration", default=None, metavar="DURATION", help="How long to run [default: the scenario's].")
@click.option(
    "-o",
    "--output",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Keep the recording here (the ground truth goes beside it as <name>.truth.json).",
)
@click.option("--overwrite", is_flag=True, help="Replace an existing output file.")
@click.option(
    "--verify",
    is_flag=True,
    help="Then apply the recommended settings to the lab, run it again, and print before and after.",
)
@click.pass_context
def demo(
    ctx: click.Context,
    /,
    scenario: str,
    duration: str | None,
    output: Path | None,
    overwrite: bool,
    verify: bool,
    lab_dir: Path | None,
    **overrides: Any,
) -> None:
    """Run a real WiredTiger engine configured like mongod, record it, and show what happened.

    The lab writes paced, incompressible documents while mongod's checkpoint and journal threads
    run; ckptdiag records it once a second through the same pipeline as 'record'.

    \b
    Example:
        ckptdiag demo
        ckptdiag demo --scenario healthy --duration 90s -o healthy.jsonl.gz
        ckptdiag demo --scenario stall --checkpoint-interval 10
        ckptdiag demo --verify
    """
    from ckptdiag.workflows.lab import DemoRequest, run_demo

    request = DemoRequest(
        scenario=scenario,
        duration=parse_duration(duration),
        output=output,
        overwrite=overwrite,
        lab_dir=lab_dir,
        overrides=overrides,
        live=sys.stdout.isatty(),
        verify=verify,
    )
    result = run_demo(request, _stop_signals, _err)
    if result.stopped_by == "interrupted":
        ctx.exit(ExitStatus.INTERRUPTED)


@cli.group(context_settings=CONTEXT)
def lab() -> None:
    """The embedded WiredTiger lab.

    \b
    Example:
        ckptdiag lab serve --scenario stall --port 27999 &
        ckptdiag record --uri mongodb://127.0.0.1:27999 -d 2m -o lab.jsonl.gz
    """


@lab.command(context_settings=CONTEXT)
@lab_options
@click.option(
    "--port",
    type=click.IntRange(0, 65535),
    default=27999,
    show_default=True,
    help="Loopback port (0: any free port; the chosen one is printed).",
)
@click.option(
    "-d", "--duration", default=None, metavar="DURATION", help="Stop after this long [default: until stopped]."
)
@click.option(
    "--truth",
    "truth_out",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Write the lab's ground truth (per-second writes and latency, checkpoints) here on exit.",
)
def serve(
    scenario: str, port: int, duration: str | None, lab_dir: Path | None, truth_out: Path | None, **overrides: Any
) -> None:
    """Serve a running lab on 127.0.0.1 over the MongoDB wire protocol.

    Answers hello, ping, buildInfo, hostInfo, getCmdLineOpts, getParameter, serverStatus (with
    section filters) and getDiagnosticData, so 'ckptdiag record' works against it as against
    mongod. Stops cleanly on Ctrl-C or SIGTERM and removes the engine's data.

    \b
    Example:
        ckptdiag lab serve --scenario healthy --port 27999
    """
    from ckptdiag.workflows.lab import ServeRequest, run_serve

    run_serve(
        ServeRequest(
            scenario=scenario,
            port=port,
            duration=parse_duration(duration),
            lab_dir=lab_dir,
            overrides=overrides,
            truth_out=truth_out,
        ),
        _stop_signals,
        _err,
    )


def main(argv: list[str] | None = None) -> None:
    """Entry point: run the CLI and turn every error into one line and an exit status."""
    debug = "--debug" in (argv if argv is not None else sys.argv[1:])
    try:
        # outside standalone mode click returns ctx.exit()'s code instead of exiting with it
        code = cli.main(args=argv, prog_name="ckptdiag", standalone_mode=False)
        if isinstance(code, int) and code:
            sys.exit(code)
    except CkptdiagError as exc:
        if debug:
            traceback.print_exc()
        _err(f"error: {exc.one_line()}")
        sys.exit(exc.status)
    except click.exceptions.Exit as exc:
        sys.exit(exc.exit_code)
    except click.Abort:
        _err("interrupted")
        sys.exit(ExitStatus.INTERRUPTED)
    except click.ClickException as exc:
        if isinstance(exc, click.UsageError):  # one line too, with where to look
            where = exc.ctx.command_path if exc.ctx is not None else "ckptdiag"
            _err(f"error: {exc.format_message()} (hint: see '{where} --help')")
            sys.exit(ExitStatus.USAGE)
        _err(f"error: {exc.format_message()}")
        sys.exit(ExitStatus.ERROR)
    except KeyboardInterrupt:
        _err("interrupted")
        sys.exit(ExitStatus.INTERRUPTED)
    except BrokenPipeError:
        # the reader of our stdout went away (| head): not an error of ours
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        sys.exit(ExitStatus.OK)
    except Exception as exc:  # noqa: BLE001 - the one place that catches everything
        if debug:
            traceback.print_exc()
        _err(f"error: unexpected {type(exc).__name__}: {exc} (hint: rerun with --debug and report it)")
        sys.exit(ExitStatus.ERROR)
