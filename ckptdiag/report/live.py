"""The live status shown while recording on a terminal (rich)."""

from __future__ import annotations

import threading
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


class LiveStatus:
    """A one-row table refreshed on every sample: elapsed, checkpoint, dirty %, disk, ops/s."""

    def __init__(self, console: Console, target: str, output: str) -> None:
        self.console = console
        self.target = target
        self.output = output
        self._prev: dict[str, Any] | None = None
        self._first_mono: float | None = None
        self._samples = 0
        self._notes: list[str] = []
        self._first_ckpt: float | None = None
        self._live = Live(self._render(None, 0.0), console=console, refresh_per_second=4, transient=False)

    def __enter__(self) -> LiveStatus:
        self._live.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        self._live.__exit__(None, None, None)

    def on_sample(self, sample: dict[str, Any]) -> None:
        """Update with a new recording sample."""
        if self._first_mono is None:
            self._first_mono = float(sample["mono"])
        self._samples += 1
        figures = instant(self._prev, sample)
        if self._first_ckpt is None and figures.checkpoints is not None:
            self._first_ckpt = figures.checkpoints  # "ckpts": begun since the recording started
        self._prev = sample
        self._live.update(self._render(figures, float(sample["mono"]) - self._first_mono))

    def on_event(self, event: dict[str, Any]) -> None:
        """Show gaps, reconnects and restarts under the table."""
        if event["kind"] in ("gap", "reconnected", "restart", "server"):
            self._notes = [*self._notes, event_line(event)][-3:]

    def _render(self, f: Instant | None, elapsed: float) -> Table:
        table = Table(
            title=f"ckptdiag record {self.target} -> {self.output}",
            title_justify="left",
            caption="\n".join(self._notes) or "Ctrl-C stops; the recording stays complete",
            caption_justify="left",
        )
        # short headers: the table fits an 80-column terminal
        for name in ("elapsed", "ckpt", "ckpts", "dirty%", "wMB/s", "util%", "ops/s", "w p99 ms", "app-ev/s"):
            table.add_column(name, justify="right")
        if f is None:
            table.add_row(f"{elapsed:.0f}s", "-", "-", "-", "-", "-", "-", "-", "-")
            return table
        ckpt = _running(f)
        begun = None if f.checkpoints is None or self._first_ckpt is None else f.checkpoints - self._first_ckpt
        table.add_row(
            f"{elapsed:.0f}s",
            ckpt,
            fmt(begun, ".0f"),
            fmt(f.dirty_pct, ".1f"),
            fmt(f.disk_write_mb_s, ".1f"),
            fmt(f.disk_util_pct, ".0f"),
            fmt(f.ops_s, ",.0f"),
            fmt(f.write_p99_ms, ",.1f"),
            fmt(f.app_evictions_s, ",.0f"),
        )
        return table


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
