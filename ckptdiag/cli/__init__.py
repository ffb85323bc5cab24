"""Command line: parse, build the objects, call them, map errors to exit statuses. Nothing else.

One module a family of commands: :mod:`.live` (record, diagnose), :mod:`.files` (report, compare,
metrics), :mod:`.lab` (demo, lab serve); :mod:`.options` holds the options they share.
"""

from __future__ import annotations

import os
import signal
import sys
import threading
import traceback
import warnings
from typing import Any, NoReturn

import click

from ckptdiag import __version__
from ckptdiag.cli.options import CONTEXT
from ckptdiag.cli.output import err as _err
from ckptdiag.cli.output import guard_streams, restore_streams
from ckptdiag.errors import CkptdiagError, Terminated
from ckptdiag.status import ExitStatus


@click.group(context_settings=CONTEXT)
@click.version_option(__version__, "-V", "--version", prog_name="ckptdiag")
@click.option("--debug", is_flag=True, help="Show tracebacks on errors.")
@click.pass_context
def cli(ctx: click.Context, debug: bool) -> None:
    """Find and fix MongoDB WiredTiger checkpoint stalls.

    \b
    Example:
        ckptdiag report /var/lib/mongodb/diagnostic.data          # what happened, from mongod's own FTDC
        ckptdiag diagnose --uri mongodb://localhost:27017 -d 10m  # watch a live server, then report
        ckptdiag demo                                             # a real WiredTiger engine that stalls
    """
    ctx.obj = {"debug": debug}
    if ctx.invoked_subcommand in DECODING:
        from ckptdiag import fastpath

        line = fastpath.note()
        if line:
            _err(line)


# the commands that decode FTDC or recordings, where missing kernels cost time
DECODING = frozenset({"report", "diagnose", "compare", "demo"})


def main(argv: list[str] | None = None) -> None:
    """Entry point: run the CLI and turn every error into one line and an exit status."""
    debug = "--debug" in (argv if argv is not None else sys.argv[1:])
    previous = _raise_on_sigterm()
    streams = guard_streams()  # every string printed passes the redactor, a click error's too
    # NaN where data is missing is expected and handled (nan-aware maths, counted as damage):
    # numpy's warning about it would be noise on a DBA's terminal and in a cron mail
    warnings.filterwarnings("ignore", category=RuntimeWarning, module=r"numpy(\..*)?$")
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
    except (KeyboardInterrupt, Terminated) as exc:
        _stopped(exc)
    except BrokenPipeError:
        # the reader of our stdout went away (| head): not an error of ours
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        sys.exit(ExitStatus.OK)
    except PermissionError as exc:  # a file mongod's own user may read: FTDC is 0600 on most installs
        _err(f"error: {permission_line(exc)}")
        sys.exit(ExitStatus.ERROR)
    except Exception as exc:  # noqa: BLE001 - the one place that catches everything
        stop = _signal_behind(exc)
        if stop is not None:
            _stopped(stop)
        if debug:
            traceback.print_exc()
        _err(f"error: unexpected {type(exc).__name__}: {exc} (hint: rerun with --debug and report it)")
        sys.exit(ExitStatus.ERROR)
    finally:
        restore_streams(streams)
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)


def _stopped(signal_exc: BaseException) -> NoReturn:
    """Ctrl-C or SIGTERM: one line and its exit status."""
    if isinstance(signal_exc, Terminated):
        _err("stopped by SIGTERM (nothing half-written is left behind)")
        sys.exit(ExitStatus.TERMINATED)
    _err("interrupted")
    sys.exit(ExitStatus.INTERRUPTED)


def _signal_behind(exc: BaseException) -> BaseException | None:
    """The Ctrl-C or SIGTERM that ``exc`` was raised while handling, if any. A signal's exception
    lands wherever the main thread is, and a library's cleanup on its way out can raise its own
    over it (seen: SIGTERM inside the driver's connection handshake became "release unlocked
    lock" from a ``finally`` that released a lock the signal had kept it from taking)."""
    seen: set[int] = set()
    at: BaseException | None = exc
    while at is not None and id(at) not in seen:
        if isinstance(at, (KeyboardInterrupt, Terminated)):
            return at
        seen.add(id(at))
        at = at.__cause__ or at.__context__
    return None


def permission_line(exc: PermissionError) -> str:
    """A refusal to read or write as one line, with what to do about it."""
    from ckptdiag.guard.inputs import permission_hint

    where = f" {exc.filename}" if exc.filename else ""
    return f"permission denied:{where} (hint: {permission_hint(exc)})"


def _raise_on_sigterm() -> Any:
    """SIGTERM raises :class:`Terminated` (the sampling loop installs its own, clean stop): the
    previous handler, or None where signals cannot be set (not the main thread: tests)."""

    def handler(_signum: int, _frame: Any) -> None:
        raise Terminated

    if threading.current_thread() is not threading.main_thread():
        return None
    return signal.signal(signal.SIGTERM, handler)


def _register() -> None:
    from ckptdiag.cli.files import compare, metrics, report
    from ckptdiag.cli.lab import demo, lab
    from ckptdiag.cli.live import diagnose, record

    for command in (record, metrics, diagnose, report, compare, demo, lab):
        cli.add_command(command)


_register()
