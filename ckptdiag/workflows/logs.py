"""mongod logs beside a report's samples: recognised among the inputs, read once, their open
config handed to the settings in force, their slow operations set against the checkpoints."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from ckptdiag.analysis.results import Diagnosis
from ckptdiag.model.facts import ServerFacts
from ckptdiag.model.logevents import LogEvents, LogReport
from ckptdiag.model.window import TimeWindow
from ckptdiag.recording import utc_iso
from ckptdiag.report.logonly import LogOnlyReport
from ckptdiag.report.logsection import LogSection
from ckptdiag.sources.logevents import scan_logs
from ckptdiag.sources.logfiles import is_log_input

if TYPE_CHECKING:
    import numpy as np


def check_logs(paths: tuple[Path, ...]) -> None:
    """Refuse, before any work, a ``--log`` that is not a mongod log or a directory of them."""
    from ckptdiag.errors import UsageError
    from ckptdiag.guard.inputs import check_readable

    for path in paths:
        check_readable(path)
        if not is_log_input(path):
            raise UsageError(
                f"{path} is not a mongod log (neither JSON log lines nor mongod's text format)",
                "give mongod.log, a rotated mongod.log.<time>[.gz], or the directory that holds them",
            )


def read_logs(paths: tuple[Path, ...], window: TimeWindow) -> tuple[LogEvents, LogReport]:
    """The logs' events in the window (the open config from before it too), and what reading met."""
    report = LogReport()
    events = scan_logs(paths, report, since=window.since_s, until=window.until_s)
    return events, report


def with_open_config(facts: ServerFacts, events: LogEvents) -> ServerFacts:
    """The facts with the WiredTiger open config of mongod's last logged start (its settings), and
    its startup options where the samples' source kept no getCmdLineOpts."""
    if events.options and not facts.cmdline.get("parsed"):
        at, options = events.options[-1]
        source = f"log options, {utc_iso(at)}"
        facts = replace(facts, cmdline={**facts.cmdline, "parsed": options}, cmdline_source=source)
    if not events.engine_opens:
        return facts
    last = events.engine_opens[-1]
    return replace(facts, open_config=last.config, open_config_source=f"log, {utc_iso(last.t)}")


def log_only_report(paths: tuple[Path, ...], window: TimeWindow) -> LogOnlyReport:
    """A report from mongod's log alone: its checkpoint messages and slow operations."""
    from ckptdiag.analysis.logonly import diagnose_log
    from ckptdiag.errors import InputError

    events, report = read_logs(paths, window)
    import numpy as np

    times = np.concatenate(
        [np.array([m.t for m in events.checkpoints], dtype=np.float64), events.slow_ops.t, np.array(events.starts)]
    )
    if not times.size:
        raise InputError(
            "no checkpoint message and no slow operation in the log's window",
            "check --since/--until, or give the server's diagnostic.data beside the log",
        )
    clocked = plausible_span(times, report)
    start = window.since_s if window.since_s is not None else clocked[0]
    end = window.until_s if window.until_s is not None else clocked[1]
    dx = diagnose_log(events, start, end)
    section = LogSection.of(report, events, dx.correlation, (start, end))
    return LogOnlyReport(dx, section, ", ".join(map(str, paths)))


def with_log(dx: Diagnosis, events: LogEvents, report: LogReport) -> tuple[Diagnosis, LogSection]:
    """The diagnosis with the log's finding in its evidence, and the report's log section."""
    from ckptdiag.analysis.slowops import correlate

    correlation = correlate(events.slow_ops, dx.episodes, dx.start, dx.end)
    section = LogSection.of(report, events, correlation, (dx.start, dx.end))
    evidence = (correlation.finding, *dx.evidence) if correlation.finding else dx.evidence
    notes = tuple(f"log: {d}" for d in section.damaged)
    return replace(dx, evidence=(*evidence, *notes)), section


def plausible_span(times: np.ndarray, report: LogReport) -> tuple[float, float]:
    """The first and last of ``times`` that a working clock could have stamped (2009 to a year
    ahead of now). A line stamped 1970 (a clock not yet set at boot) or in a far year does not
    stretch the window over decades: it is a note in ``report.damaged``."""
    import time

    import numpy as np

    from ckptdiag.model.sanity import CLOCK_AHEAD_S, MONGOD_EARLIEST_S

    ok = (times >= MONGOD_EARLIEST_S) & (times <= time.time() + CLOCK_AHEAD_S)
    odd = int(times.size - np.count_nonzero(ok))
    if odd and odd < times.size:
        strange = times[~ok]
        shown = sorted({utc_iso(float(t))[:10] for t in strange[(strange >= 0) & (strange < 9e9)][:1000]})
        stamps = f" ({', '.join(shown[:3])}{', ...' if len(shown) > 3 else ''})" if shown else ""
        report.damaged.append(
            f"{odd} line{'s' if odd != 1 else ''} stamped outside 2009 to a year from now{stamps}: a clock not yet "
            "set at boot, or set wrong; the window is the other lines'"
        )
        return float(times[ok].min()), float(times[ok].max())
    return float(times.min()), float(times.max())
