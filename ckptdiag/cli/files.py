"""report, compare and metrics: the commands that read files."""

from __future__ import annotations

from pathlib import Path

import click

from ckptdiag.cli.options import (
    CONTEXT,
    destinations,
    output_options,
    parse_time,
    report_options,
)
from ckptdiag.cli.output import err
from ckptdiag.model.window import TimeWindow


@click.command(context_settings=CONTEXT)
@click.option(
    "-f",
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


@click.command(context_settings=CONTEXT)
@click.argument("paths", nargs=-1, required=True, type=click.Path(readable=False, path_type=Path))
@click.option(
    "--since",
    default=None,
    metavar="TIME",
    help="Start of the window: ISO 8601 (UTC by default), a day (2026-11-22), or before now (-2h, -7d).",
)
@click.option(
    "--until", default=None, metavar="TIME", help="End of the window: ISO 8601, a day, now, or before now (-30m)."
)
@report_options
@click.pass_context
def report(
    ctx: click.Context,
    /,
    paths: tuple[Path, ...],
    since: str | None,
    until: str | None,
    fmt: str,
    output: tuple[Path, ...],
    fail_on: str,
    top: int | None,
    episodes: str,
) -> None:
    """Diagnose recordings or MongoDB's own FTDC files (diagnostic.data): every checkpoint, its
    cost, eviction pressure, and a verdict.

    PATHS are recordings, or a diagnostic.data directory and/or its metrics.* files; mongod's
    log (a file, .gz, or the directory of it and its rotations) may go beside them: its slow
    operations are set against the checkpoints. The exit status is the verdict's, for cron: 0 ok,
    4 critical; a warn exits 0 unless --fail-on warn (then 3); --fail-on never always exits 0.

    \b
    Example:
        ckptdiag report /var/lib/mongodb/diagnostic.data --since 2026-11-22T02:00Z --until 2026-11-22T03:00Z
        ckptdiag report db1.jsonl.gz -f json | jq .verdict
        ckptdiag report /var/lib/mongodb/diagnostic.data --since 2026-11-21T00:00Z -o nightly.html
        ckptdiag report /var/lib/mongodb/diagnostic.data /var/log/mongodb/ -o incident.md
    """
    from ckptdiag.workflows.report import ReportRequest, run_report

    window = TimeWindow(parse_time(since), parse_time(until))
    request = ReportRequest(paths, window, destinations(fmt, output), fail_on, 0 if episodes == "all" else top)
    ctx.exit(run_report(request, err))


@click.command(context_settings=CONTEXT)
@click.argument("before", type=click.Path(readable=False, path_type=Path))
@click.argument("after", type=click.Path(readable=False, path_type=Path))
@click.option("--since-a", default=None, metavar="TIME", help="Start of BEFORE's window (recordings, FTDC).")
@click.option("--until-a", default=None, metavar="TIME", help="End of BEFORE's window.")
@click.option("--since-b", default=None, metavar="TIME", help="Start of AFTER's window.")
@click.option("--until-b", default=None, metavar="TIME", help="End of AFTER's window.")
@click.option(
    "--fail-on",
    type=click.Choice(["regress", "never"]),
    default="never",
    show_default=True,
    help="'regress': exit 3 when any figure got worse (for CI after a change).",
)
@output_options
@click.pass_context
def compare(
    ctx: click.Context,
    /,
    before: Path,
    after: Path,
    since_a: str | None,
    until_a: str | None,
    since_b: str | None,
    until_b: str | None,
    fail_on: str,
    fmt: str,
    output: tuple[Path, ...],
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
        CompareSide(before, TimeWindow(parse_time(since_a), parse_time(until_a))),
        CompareSide(after, TimeWindow(parse_time(since_b), parse_time(until_b))),
        destinations(fmt, output),
        fail_on,
    )
    ctx.exit(run_compare(request, err))
