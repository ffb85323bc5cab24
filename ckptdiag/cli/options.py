"""The options and parsers every command shares: connection (mongostat's), output, lab overrides."""

from __future__ import annotations

import math
import re
import signal
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING, Any, TypeVar

import click

from ckptdiag.lab.scenarios import SCENARIOS

if TYPE_CHECKING:
    from ckptdiag.workflows.report import Destination

F = TypeVar("F", bound=Callable[..., Any])
CONTEXT = {"help_option_names": ["-h", "--help"], "max_content_width": 100}


def _with_options(func: F, options: list[Any]) -> F:
    for option in reversed(options):
        func = option(func)
    return func


# every line printed passes the redactor, the help too: a metavar as wide as its marker keeps the
# help's columns (TEXT was shown as <redacted>, six characters wider)
_PASSWORD = click.option(
    "-p",
    "--password",
    default=None,
    metavar="<password>",
    help="Password (prompted for when --username is given without it on a terminal).",
)


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
        _PASSWORD,
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
            type=FiniteRange(0.1, 600),
            default=5.0,
            show_default=True,
            help="Seconds to wait for the server.",
        ),
    ]
    return _with_options(func, options)


def sampling_options(func: F) -> F:
    """How a live server is sampled: how often, which disks, and through which command."""
    options = [
        click.option(
            "-i",
            "--interval",
            type=FiniteRange(0.1, 3600),
            default=1.0,
            show_default=True,
            help="Seconds between samples.",
        ),
        click.option(
            "--device",
            "devices",
            multiple=True,
            metavar="NAME",
            help="Disk to watch in /proc/diskstats (repeatable) [default: the disks under dbPath].",
        ),
        click.option(
            "--source",
            "source",
            type=click.Choice(["serverStatus", "diagnostic"]),
            default="serverStatus",
            show_default=True,
            help="diagnostic: poll getDiagnosticData instead; its disk figures are the server host's own, even "
            "from another host (needs clusterMonitor and read on local).",
        ),
        click.option(
            "--rows",
            is_flag=True,
            help="A line per sample on stderr that scrolls (as mongostat prints), with the header every 20 "
            "lines, instead of the one-line status; also when not on a terminal.",
        ),
        click.option(
            "--discover",
            is_flag=True,
            help="Record every data-bearing member of the server's replica set (through a mongos: of every "
            "shard), as mongostat --discover finds them; implied by a URI that names a set.",
        ),
    ]
    return _with_options(func, options)


class FiniteRange(click.FloatRange):
    """A float range that also refuses ``nan`` (every comparison with it is false, so a plain
    FloatRange lets it through) and ``inf``."""

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> float:
        number = super().convert(value, param, ctx)
        if not math.isfinite(number):
            self.fail(f"{value!r} is not a finite number", param, ctx)
        return number


MAX_DURATION_S = 366 * 86400.0  # a year: longer is a typo, and would overflow deadlines downstream


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
    if not math.isfinite(value) or not 0 < value <= MAX_DURATION_S:
        raise click.BadParameter(f"{text!r} is not a positive duration of at most a year (90, 90s, 10m, 2h, 7d)")
    return value


@contextmanager
def stop_signals(on_stop: Callable[[str], None]) -> Iterator[None]:
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


def parse_time(text: str | None, now: float | None = None) -> int | None:
    """An ISO 8601 time or day (UTC unless it says otherwise), ``now``, or a duration before now
    (``-2h``, ``-30m``, ``-7d``) -> ms since the epoch.

    >>> parse_time("2021-03-15T02:30:00Z"), parse_time("2021-03-15 02:30"), parse_time("2021-03-15")
    (1615775400000, 1615775400000, 1615766400000)
    >>> parse_time("-2h", now=1615775400.0), parse_time("now", now=1615775400.0)
    (1615768200000, 1615775400000)
    """
    if text is None:
        return None
    import datetime as dt
    import time

    spoken = text.strip().lower()
    if spoken == "now" or (spoken.startswith("-") and spoken[1:2].isdigit()):
        at = time.time() if now is None else now
        ago = 0.0 if spoken == "now" else parse_duration(spoken[1:]) or 0.0
        return int((at - ago) * 1000)
    try:
        when = dt.datetime.fromisoformat(text.strip().replace("Z", "+00:00"))
    except ValueError:
        raise click.BadParameter(f"{text!r} is not a time like 2026-11-22T02:30:00Z, 2026-11-22 or -2h") from None
    if when.tzinfo is None:
        when = when.replace(tzinfo=dt.timezone.utc)
    return int(when.timestamp() * 1000)


class FormatChoice(click.Choice):  # type: ignore[type-arg]
    """``-f``'s choices, read from the format registry each time they are needed (help, checking,
    completion): a format registered is offered by every command."""

    def __init__(self) -> None:
        super().__init__(("auto",))

    @property
    def choices(self) -> tuple[str, ...]:
        """``auto`` and every registered format."""
        from ckptdiag.report.formats import names

        return ("auto", *names())

    @choices.setter
    def choices(self, _value: object) -> None:  # click's __init__ sets them: the registry decides
        pass


def output_options(func: F) -> F:
    """Where a report goes and in which format (``-f``, ``-o``)."""
    options = [
        click.option(
            "-f",
            "--format",
            "fmt",
            type=FormatChoice(),
            default="auto",
            show_default=True,
            help="auto: the -o file's extension (.json .md .html .txt .prom), else a table on a terminal "
            "and JSON in a pipe.",
        ),
        click.option(
            "-o",
            "--output",
            type=click.Path(path_type=Path),
            multiple=True,
            help="Write the report here (replaced atomically) and say so on stderr; repeat it for several "
            "files from one run (-o n.md -o n.json), each in its extension's format (an extension no format "
            "knows is refused).",
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
        click.option(
            "--top",
            type=click.IntRange(0, None),
            default=None,
            metavar="N",
            help="Checkpoints listed: the N worst (stalls first, then the costliest), in time order; 0 lists "
            "all [default: 25 in a terminal, 50 in Markdown and HTML, in JSON every one up to 2,000].",
        ),
        click.option(
            "--episodes",
            type=click.Choice(["worst", "all"]),
            default="worst",
            show_default=True,
            help="all: every checkpoint in every format (as --top 0), for scripts that want each one.",
        ),
    ]
    return output_options(_with_options(func, options))


def destinations(fmt: str, outputs: tuple[Path, ...]) -> tuple[Destination, ...]:
    """Where the report goes: each ``-o`` file in ``fmt`` (auto: its extension's format), or
    stdout; one file named twice is refused (two renderings would race for it)."""
    from ckptdiag.workflows.report import Destination

    seen = [str(p) for p in outputs]
    twice = next((p for p in seen if seen.count(p) > 1), None)
    if twice is not None:
        raise click.UsageError(f"-o {twice} is given twice")
    if not outputs:
        return (Destination(resolve_format(fmt, None)),)
    return tuple(Destination(resolve_format(fmt, p), p, unknown_extension(fmt, p)) for p in outputs)


# what reads as a file's extension (.pdf, .xlsx); a dated name (nightly.2026-11-27, FTDC's
# metrics.2026-...-00000) has none
_EXTENSION = re.compile(r"\.[A-Za-z][A-Za-z0-9]{0,4}")


def resolve_format(fmt: str, output: Path | None) -> str:
    """auto -> the output file's kind (a name without an extension: the text table), else table
    on a terminal and JSON in a pipe."""
    from ckptdiag.report.formats import for_path

    if fmt != "auto":
        return fmt
    if output is None:
        return "table" if sys.stdout.isatty() else "json"
    return for_path(output) or "table"


def unknown_extension(fmt: str, output: Path | None) -> str:
    """Why ``-f auto`` cannot write ``output`` (an extension no format writes: ``-o r.pdf`` wrote a
    text table into r.pdf), or "" where it can. Refused once the guarded writer has checked the
    file (an input, a device: its reason comes first)."""
    from ckptdiag.report.formats import for_path

    if fmt != "auto" or output is None or for_path(output) or not _EXTENSION.fullmatch(output.suffix):
        return ""
    return f"-o {output}: no format is written as {output.suffix} files"


# the lab's eviction overrides: (option, lowest, highest, help)
_EVICTION_OVERRIDES = (
    ("--eviction-target", 10, 99, "% of the cache: background eviction."),
    ("--eviction-trigger", 10, 99, "% of the cache: application threads evict too."),
    ("--eviction-dirty-target", 1, 99, "% of the cache in dirty data: background eviction of dirty pages."),
    ("--eviction-dirty-trigger", 1, 99, "% of the cache in dirty data: application threads evict too."),
    ("--eviction-updates-target", 1, 99, "% of the cache in updates: background eviction of update chains."),
    ("--eviction-updates-trigger", 1, 99, "% of the cache in updates: application threads evict too."),
    ("--eviction-threads-min", 1, 20, "Fewest eviction threads."),
    ("--eviction-threads-max", 1, 20, "Most eviction threads."),
)


def lab_options(func: F) -> F:
    """Overrides of a lab scenario's settings, so a recommended setting can be tried on it."""
    options = [
        click.option(
            "--scenario",
            default="stall",
            show_default=True,
            help=", ".join(SCENARIOS) + ".",
        ),
        click.option(
            "--checkpoint-interval",
            "checkpoint_s",
            type=FiniteRange(1, 3600),
            default=None,
            help="Seconds between checkpoints (syncdelay).",
        ),
        click.option("--cache-mb", type=click.IntRange(64, 1 << 20), default=None, help="WiredTiger cache size."),
        *(
            click.option(name, type=click.IntRange(low, high), default=None, help=text)
            for name, low, high, text in _EVICTION_OVERRIDES
        ),
        click.option("--write-rate", type=click.IntRange(100, 1_000_000), default=None, help="Inserts per second."),
        click.option(
            "--io-capacity-mb",
            type=click.IntRange(0, 100_000),
            default=None,
            help="WiredTiger's own write throttle, io_capacity=(total=N MB) (0: off).",
        ),
        click.option(
            "--disk-mb-s",
            type=click.IntRange(0, 100_000),
            default=None,
            help="Put the data on a disk that writes at most this many MB/s, with one queue (0: the lab dir's "
            "own disk).",
        ),
        click.option(
            "--slow-disk",
            type=click.Choice(["model", "loop"]),
            default=None,
            help="How --disk-mb-s is made: model (a modelled device in the lab's process, for anyone; the "
            "default) or loop (a loop device the kernel throttles; needs root).",
        ),
        click.option(
            "--lab-dir",
            type=click.Path(file_okay=False, path_type=Path),
            default=None,
            help="Where the engine's data directory goes [default: the system temp dir].",
        ),
    ]
    return _with_options(func, options)
