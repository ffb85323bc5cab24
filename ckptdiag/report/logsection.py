"""The report's mongod-log section: what the log gave, and its slow operations against the
checkpoints (JSON ``log`` object, and the lines the Markdown and terminal reports print)."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Any

import numpy as np

from ckptdiag.analysis.slowops import SlowOpCorrelation, SlowOpGroup
from ckptdiag.model.engine_config import checkpoint_settings
from ckptdiag.model.logevents import LogEvents, LogReport
from ckptdiag.recording import utc_iso

CHART_POINTS = 5_000


@dataclass(frozen=True)
class LogSection:
    """What the mongod log added to a report."""

    files: tuple[str, ...]
    lines: int
    damaged: tuple[str, ...]  # files cut or damaged, lines set aside (counted)
    slow_ops: int  # in the window
    checkpoint_messages: tuple[tuple[str, int], ...]  # (kind, count) in the window
    longest_checkpoint_s: float | None  # the longest a checkpoint message gives (took / running for)
    starts: int
    engine_config: str | None  # the last WiredTiger open config logged (secrets redacted)
    engine_config_at: float | None
    cache_pressure: int
    correlation: SlowOpCorrelation | None
    points: tuple[tuple[float, float], ...] = ()  # (end, ms) of up to CHART_POINTS slow operations, for charts

    @classmethod
    def of(
        cls,
        report: LogReport,
        events: LogEvents,
        correlation: SlowOpCorrelation | None,
        window: tuple[float, float] | None = None,
    ) -> LogSection:
        """The section from what reading the log met, what it gave, and the correlation (over
        ``window``, when given: the samples' own)."""
        ops = events.slow_ops
        keep = np.ones(len(ops), dtype=bool) if window is None else (ops.t >= window[0]) & (ops.t <= window[1])
        picked = np.flatnonzero(keep)
        if picked.size > CHART_POINTS:  # the longest ones, which a chart must show
            picked = picked[np.argsort(ops.duration_ms[picked])[-CHART_POINTS:]]
            picked.sort()
        damaged = list(report.damaged)
        for count, what in (
            (report.unparsed, "lines neither JSON nor mongod's text format"),
            (report.too_long, "lines over 4 MiB"),
        ):
            if count:
                damaged.append(f"{count} {what} skipped")
        seconds = [c.seconds for c in events.checkpoints if c.seconds is not None]
        opened = events.engine_opens[-1] if events.engine_opens else None
        return cls(
            tuple(report.files),
            report.lines,
            tuple(damaged),
            int(keep.sum()),
            tuple(sorted(Counter(c.kind for c in events.checkpoints).items())),
            max(seconds) if seconds else None,
            len(events.starts),
            opened.config if opened else None,
            opened.t if opened else None,
            len(events.cache_pressure),
            correlation,
            tuple(zip(ops.t[picked].tolist(), ops.duration_ms[picked].astype(float).tolist(), strict=True)),
        )

    def to_json(self) -> dict[str, Any]:
        """The JSON report's ``log`` object (docs/report-json.md)."""
        c = self.correlation
        return {
            "files": list(self.files),
            "lines": self.lines,
            "damaged": list(self.damaged),
            "slow_ops": self.slow_ops,
            "checkpoint_messages": dict(self.checkpoint_messages),
            "longest_checkpoint_s": self.longest_checkpoint_s,
            "starts": self.starts,
            "engine_config": self.engine_config,
            "engine_config_at": utc_iso(self.engine_config_at) if self.engine_config_at is not None else None,
            "cache_pressure_messages": self.cache_pressure,
            "slow_ops_vs_checkpoints": None if c is None else _correlation_json(c),
        }

    def lines_for_report(self) -> list[str]:
        """The section as plain sentences (Markdown bullets and the terminal report use them)."""
        out = [f"{self.slow_ops:,} slow operations in the window, from {len(self.files)} log file(s)"]
        c = self.correlation
        if c is not None:
            out.append(_group_line("inside checkpoints", c.inside))
            out.append(_group_line("outside", c.outside))
            if c.finding:
                out.append(c.finding)
        if self.checkpoint_messages:
            kinds = ", ".join(f"{n} {k}" for k, n in self.checkpoint_messages)
            longest = f"; the longest {self.longest_checkpoint_s:g} s" if self.longest_checkpoint_s else ""
            out.append(f"checkpoint messages: {kinds}{longest}")
        if self.engine_config_at is not None:
            # the keys that bear on checkpoints; the rest (statistics, verbose, ...) by name, whole in the JSON
            kept, others = checkpoint_settings(self.engine_config or "")
            folded = f" (and {len(others)} more: {', '.join(others)}; whole in the JSON)" if others else ""
            out.append(f"WiredTiger opened at {utc_iso(self.engine_config_at)} with: {kept or '-'}{folded}")
        out += [f"log damage: {d}" for d in self.damaged]
        return out


def _group_line(where: str, g: SlowOpGroup) -> str:
    if not g.count:
        return f"{where}: no slow operation"
    rate = f"{g.per_min:.1f}/min" if g.per_min is not None else "-"
    top = ", ".join(f"{name} {n}" for name, n in g.top_commands[:3])
    return f"{where}: {g.count:,} ({rate}), p50 {g.p50_ms:.0f} ms, p99 {g.p99_ms:.0f} ms; {top}"


def _group_json(g: SlowOpGroup) -> dict[str, Any]:
    return {
        "count": g.count,
        "minutes": g.minutes,
        "per_min": g.per_min,
        "duration_ms": {"p50": g.p50_ms, "p99": g.p99_ms},
        "waits_median_ms": dict(g.waits_median_ms),
        "top_commands": [{"command": c, "count": n} for c, n in g.top_commands],
        "top_namespaces": [{"ns": ns, "count": n} for ns, n in g.top_namespaces],
    }


def _correlation_json(c: SlowOpCorrelation) -> dict[str, Any]:
    return {
        "inside": _group_json(c.inside),
        "outside": _group_json(c.outside),
        "writes": {"inside": c.writes_inside, "total": c.writes_total},
        "time_share": c.time_share,
        "dominant_wait": c.dominant_wait,
        "dominant_wait_median_ms": c.dominant_wait_median_ms,
        "per_checkpoint": [{"slow_ops": n, "longest_ms": ms} for n, ms in c.per_checkpoint],
        "finding": c.finding,
    }
