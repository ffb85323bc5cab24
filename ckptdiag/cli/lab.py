"""demo and lab serve: the embedded WiredTiger lab."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import click

from ckptdiag.cli.options import (
    CONTEXT,
    lab_options,
    parse_duration,
    stop_signals,
)
from ckptdiag.cli.output import err
from ckptdiag.status import ExitStatus


@click.command(context_settings=CONTEXT)
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
@click.option(
    "--only",
    metavar="RULE",
    default=None,
    help="With --verify: apply this recommendation's change alone (its id, e.g. checkpoint-interval), a "
    "check too: to see why the lab has not proven it.",
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
    only: str | None,
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
        ckptdiag demo --verify --only checkpoint-interval
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
        verify=verify or only is not None,
        only=only,
    )
    result = run_demo(request, stop_signals, err)
    if result.stopped_by == "interrupted":
        ctx.exit(ExitStatus.INTERRUPTED)


@click.group(context_settings=CONTEXT)
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
        stop_signals,
        err,
    )
