"""The live status shown while recording on a terminal (rich)."""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Any

from rich.console import Console
from rich.live import Live
from rich.table import Table
from rich.text import Text

from ckptdiag.analysis.instant import Instant, instant
from ckptdiag.report.fmt import fmt


def event_line(event: dict[str, Any], member: str = "") -> str:
    """A recording event as one line for a person: time, the member it is about (a cluster's),
    kind, and why or for how long; a role change says the new role and the old."""
    at = f"{event['time']} {member} " if member else f"{event['time']} "
    if event["kind"] == "role":
        return f"{at}is now {event['role']} (was {event['previous']})"
    detail = event.get("reason") or (f"after {event['down_s']} s" if "down_s" in event else "")
    return f"{at}{event['kind']} {detail}".rstrip()


COLUMNS = ("elapsed", "ckpt", "ckpts", "dirty%", "wMB/s", "util%", "ops/s", "w p99 ms", "app-ev/s")


def unknown_reasons(prev: dict[str, Any] | None, curr: dict[str, Any], f: Instant, source: str) -> list[str]:
    """Why each column that reads ``-`` does: a figure the source does not give, or one that
    needs two samples, said once (``--source diagnostic`` left w p99 at ``-`` with no reason)."""
    if prev is None:
        return ["rates (ops/s, wMB/s, util%, w p99, app-ev/s) from the second sample"]
    out = []
    if f.checkpoint_running is None:
        out.append("ckpt: the server reports no checkpoint state")
    if f.dirty_pct is None:
        out.append("dirty%: no cache figures in the server's reply")
    if f.disk_write_mb_s is None:
        out.append(
            "wMB/s, util%: no data disk sampled (a server on another host: --source diagnostic gives its own disks)"
            if not curr.get("disk")
            else "wMB/s, util%: the disk's counters went back (a reset)"
        )
    if f.write_p99_ms is None:
        out.append(
            "w p99: no latency histograms in getDiagnosticData's serverStatus (--source serverStatus has them)"
            if source == "diagnostic" and not curr.get("hist")
            else "w p99: no latency histograms in the server's reply"
            if not curr.get("hist")
            else "w p99: no writes in the interval"
        )
    if f.app_evictions_s is None:
        out.append("app-ev/s: the server does not count application-thread evictions")
    return out


def elapsed_cell(elapsed: float, duration: float | None) -> str:
    """``45s``, or ``45/120s`` against ``-d``."""
    return f"{elapsed:.0f}/{duration:.0f}s" if duration else f"{elapsed:.0f}s"


def figure_cells(step: Step) -> tuple[str, ...]:
    """The figures after ``elapsed`` and ``ckpt``, as both displays show them."""
    f = step.figures
    return (
        fmt(step.begun, ".0f"),
        fmt(f.dirty_pct, ".1f"),
        fmt(f.disk_write_mb_s, ".1f"),
        fmt(f.disk_util_pct, ".0f"),
        fmt(f.ops_s, ",.0f"),
        fmt(f.write_p99_ms, ",.1f"),
        fmt(f.app_evictions_s, ",.0f"),
    )


@dataclass(frozen=True)
class Step:
    """One sample as both displays show it."""

    figures: Instant
    elapsed: float  # seconds since the first sample
    begun: float | None  # checkpoints begun since the recording started
    reasons: tuple[str, ...]  # why each column that reads "-" does


class Progress:
    """What the displays keep between samples: the one before, when the first came, and the
    server's checkpoint count then (for "ckpts", begun since the recording started)."""

    def __init__(self, source: str) -> None:
        self.source = source
        self._prev: dict[str, Any] | None = None
        self._first_mono: float | None = None
        self._first_ckpt: float | None = None

    def step(self, sample: dict[str, Any]) -> Step:
        """The figures of ``sample`` against the one before it."""
        if self._first_mono is None:
            self._first_mono = float(sample["mono"])
        f = instant(self._prev, sample)
        if self._first_ckpt is None and f.checkpoints is not None:
            self._first_ckpt = f.checkpoints
        reasons = tuple(unknown_reasons(self._prev, sample, f, self.source))
        self._prev = sample
        begun = None if f.checkpoints is None or self._first_ckpt is None else f.checkpoints - self._first_ckpt
        return Step(f, float(sample["mono"]) - self._first_mono, begun, reasons)


class LiveStatus:
    """A one-row table refreshed on every sample: elapsed (of ``-d``, with the time left),
    checkpoint, dirty %, disk, ops/s; under it why any column reads ``-``."""

    def __init__(
        self, console: Console, target: str, output: str, duration: float | None = None, source: str = "serverStatus"
    ) -> None:
        self.console = console
        self.target = target
        self.output = output
        self.duration = duration
        self._progress = Progress(source)
        self._notes: list[str] = []
        self._live = Live(self._render(None), console=console, refresh_per_second=4, transient=False)

    def __enter__(self) -> LiveStatus:
        self._live.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        self._live.__exit__(None, None, None)

    def on_sample(self, sample: dict[str, Any]) -> None:
        """Update with a new recording sample."""
        self._live.update(self._render(self._progress.step(sample)))

    def on_event(self, event: dict[str, Any]) -> None:
        """Show gaps, reconnects and restarts under the table."""
        if event["kind"] in ("gap", "reconnected", "restart", "server"):
            self._notes = [*self._notes, event_line(event)][-3:]

    def _render(self, step: Step | None) -> Table:
        elapsed = step.elapsed if step else 0.0
        left = f"{max(self.duration - elapsed, 0):.0f} s left; " if self.duration else ""
        caption = [*self._notes, *(f"-  {why}" for why in (step.reasons if step else ()))]
        table = Table(
            title=f"ckptdiag record {self.target} -> {self.output}",
            title_justify="left",
            caption="\n".join([*caption, f"{left}Ctrl-C stops; the recording stays complete"]),
            caption_justify="left",
        )
        # short headers: the table fits an 80-column terminal
        for name in COLUMNS:
            table.add_column(name, justify="right")
        if step is None:
            table.add_row(elapsed_cell(elapsed, self.duration), "-", "-", "-", "-", "-", "-", "-", "-")
            return table
        table.add_row(elapsed_cell(elapsed, self.duration), _running(step.figures), *figure_cells(step))
        return table


class RowsStatus:
    """``--rows``: a line per sample that scrolls, as mongostat prints, with the header again
    every ``HEADER_EVERY`` lines; events and the reasons for a ``-`` (when they change) between
    them. The same figures as :class:`LiveStatus`, kept on screen as a history."""

    HEADER_EVERY = 20
    WIDTHS = (9, 7, 5, 6, 6, 5, 8, 8, 8)

    def __init__(self, console: Console, duration: float | None = None, source: str = "serverStatus") -> None:
        self.console, self.duration = console, duration
        self._progress = Progress(source)
        self._rows = 0
        self._reasons: tuple[str, ...] = ()

    def __enter__(self) -> RowsStatus:
        return self

    def __exit__(self, *exc: object) -> None:
        pass

    def _line(self, cells: tuple[str, ...]) -> str:
        return " ".join(cell.rjust(width) for cell, width in zip(cells, self.WIDTHS, strict=True))

    def on_sample(self, sample: dict[str, Any]) -> None:
        """Print the sample's line (and the header, every ``HEADER_EVERY`` lines)."""
        step = self._progress.step(sample)
        if step.reasons != self._reasons:
            self._reasons = step.reasons
            for why in step.reasons:
                self.console.print(f"-  {why}", highlight=False, style="dim")
        if self._rows % self.HEADER_EVERY == 0:
            self.console.print(self._line(COLUMNS), highlight=False, style="bold")
        self._rows += 1
        f = step.figures
        running = "-" if f.checkpoint_running is None else "RUN" if f.checkpoint_running else "idle"
        cells = (elapsed_cell(step.elapsed, self.duration), running, *figure_cells(step))
        self.console.print(self._line(cells), highlight=False, style="bold red" if running == "RUN" else None)

    def on_event(self, event: dict[str, Any]) -> None:
        """Gaps, reconnects and restarts as lines of their own."""
        if event["kind"] in ("gap", "reconnected", "restart", "server"):
            self.console.print(event_line(event), highlight=False, style="yellow")


class ClusterStatus:
    """A row per member, refreshed four times a second while a cluster is recorded: its role,
    whether it is checkpointing, checkpoints begun, dirty %, ops/s, write p99 and replication lag.
    Members report from their own threads; rich draws from its own."""

    def __init__(self, console: Console, target: str, output: str) -> None:
        self.console = console
        self.title = f"ckptdiag record {target} -> {output}"
        self._lock = threading.Lock()
        self._rows: dict[str, tuple[dict[str, Any] | None, dict[str, Any]]] = {}  # member -> (previous, latest)
        self._first_ckpt: dict[str, float] = {}
        self._roles: dict[str, str] = {}
        self._notes: list[str] = []
        self._live = Live(get_renderable=self._render, console=console, refresh_per_second=4, transient=False)

    def __enter__(self) -> ClusterStatus:
        self._live.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        self._live.__exit__(None, None, None)

    def on_sample(self, member: str, sample: dict[str, Any]) -> None:
        """A member's new sample."""
        with self._lock:
            before = self._rows.get(member)
            self._rows[member] = (before[1] if before else None, sample)

    def on_event(self, member: str, event: dict[str, Any]) -> None:
        """A member's role (the table shows it) or another event."""
        if event["kind"] == "role":
            with self._lock:
                self._roles[member] = str(event.get("role"))

    def note(self, line: str) -> None:
        """A line for the person watching, under the table (the last five stay)."""
        with self._lock:
            self._notes = [*self._notes, line][-5:]

    def _render(self) -> Table:
        table = Table(
            title=self.title,
            title_justify="left",
            caption="\n".join(self._notes) or "Ctrl-C stops; every recording stays complete",
            caption_justify="left",
        )
        for name in ("member", "role", "ckpt", "ckpts", "dirty%", "ops/s", "w p99 ms", "lag s"):
            table.add_column(name, justify="left" if name in ("member", "role") else "right")
        with self._lock:
            rows = sorted(self._rows.items())
            roles = dict(self._roles)
        for member, (prev, latest) in rows:
            f = instant(prev, latest)
            if f.checkpoints is not None:
                self._first_ckpt.setdefault(member, f.checkpoints)
            begun = None if f.checkpoints is None else f.checkpoints - self._first_ckpt[member]
            lag = latest.get("m", {}).get("repl.lag_ms")
            table.add_row(
                member,
                roles.get(member, "-"),
                _running(f),
                fmt(begun, ".0f"),
                fmt(f.dirty_pct, ".1f"),
                fmt(f.ops_s, ",.0f"),
                fmt(f.write_p99_ms, ",.1f"),
                fmt(lag / 1000 if isinstance(lag, (int, float)) and lag >= 0 else None, ".0f"),
            )
        return table


def _running(f: Instant) -> Text:
    if f.checkpoint_running is None:
        return Text("-")
    return Text("RUNNING", style="bold red") if f.checkpoint_running else Text("idle", style="green")
