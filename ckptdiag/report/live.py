"""The live status shown while recording on a terminal (rich)."""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.live import Live
from rich.table import Table
from rich.text import Text

from ckptdiag.analysis.instant import Instant, instant
from ckptdiag.report.fmt import fmt


def event_line(event: dict[str, Any]) -> str:
    """A recording event as one line for a person: time, kind, and why or for how long."""
    detail = event.get("reason") or (f"after {event['down_s']} s" if "down_s" in event else "")
    return f"{event['time']} {event['kind']} {detail}".rstrip()


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
        ckpt = (
            Text("-")
            if f.checkpoint_running is None
            else (Text("RUNNING", style="bold red") if f.checkpoint_running else Text("idle", style="green"))
        )
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
