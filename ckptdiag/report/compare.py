"""Before and after: the same figures from two reports side by side, as a change ticket wants them.

Both sides are JSON report documents (``to_document``), whatever they came from (a recording, an
FTDC window, or a report written earlier), so a comparison reads the one contract
(docs/report-json.md) and works on reports of older schema versions as far as they have the figures.
"""

from __future__ import annotations

import io
import statistics
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from ckptdiag import __version__
from ckptdiag.report.fmt import fmt
from ckptdiag.report.formats import Metric

COMPARE_SCHEMA_VERSION = 1


@dataclass(frozen=True)
class Row:
    """One compared figure."""

    name: str
    unit: str
    before: float | None
    after: float | None
    better: str  # "lower", "higher" or "" (neither)
    digits: str = ".1f"

    @property
    def ratio(self) -> float | None:
        """after / before (None when either is unknown or before is 0)."""
        if self.before is None or self.after is None or abs(self.before) < 1e-9:
            return None
        return self.after / self.before

    @property
    def verdict(self) -> str:
        """ "better", "worse" or "same" (within 5 %), by the row's direction; "" when unknown."""
        if not self.better or self.before is None or self.after is None:
            return ""
        if abs(self.before) < 1e-9:  # from none: no stall before, stalls after is the worst news
            if abs(self.after) < 1e-9:
                return "same"
            return "worse" if self.better == "lower" else "better"
        r = self.ratio
        if r is None:
            return ""
        if abs(r - 1) < 0.05:
            return "same"
        return "better" if (r < 1) == (self.better == "lower") else "worse"

    def to_json(self) -> dict[str, Any]:
        """JSON form."""
        return {
            "metric": self.name,
            "unit": self.unit,
            "before": _round(self.before),
            "after": _round(self.after),
            "ratio": _round(self.ratio),
            "better": self.better or None,
            "verdict": self.verdict or None,
        }


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 4)


def _values(episodes: Iterable[dict[str, Any]], get: Callable[[dict[str, Any]], Any]) -> list[float]:
    out = []
    for e in episodes:
        value = get(e)
        if isinstance(value, int | float) and not isinstance(value, bool):
            out.append(float(value))
    return out


def _median(values: list[float]) -> float | None:
    return statistics.median(values) if values else None


def figures(doc: dict[str, Any]) -> dict[str, float | None]:
    """The compared figures of one report document."""
    cp = doc.get("checkpoints") or {}
    episodes = [e for e in cp.get("episodes") or [] if not e.get("truncated")]
    p99 = _values(episodes, lambda e: e.get("write_p99_ms_peak"))
    mean_lat = _values(episodes, lambda e: e.get("write_latency_ms_peak"))
    dips = [max(0.0, 100 * (1 - r)) for r in _values(episodes, lambda e: e.get("ops_ratio"))]
    written = _values(episodes, lambda e: e.get("bytes_written"))
    durations = _values(episodes, lambda e: e.get("duration_s"))
    disk_mb = _values(episodes, lambda e: (e.get("disk") or {}).get("write_mb_s_peak"))
    util = _values(episodes, lambda e: (e.get("disk") or {}).get("util_pct_peak"))
    base = doc.get("baseline") or {}
    return {
        "checkpoints": float(cp.get("count") or 0),
        "period_s": cp.get("period_s"),
        "duration_p50_s": _median(durations),
        "duration_max_s": max(durations) if durations else None,
        "mb_per_checkpoint": statistics.median(written) / 2**20 if written else None,
        "p99_inside_ms": _median(p99),
        "latency_inside_ms": _median(mean_lat),
        "p99_between_ms": base.get("write_p99_ms"),
        "dip_p50_pct": _median(dips),
        "dip_max_pct": max(dips) if dips else None,
        "disk_mb_s_peak": max(disk_mb) if disk_mb else None,
        "util_pct_peak": max(util) if util else None,
        "ops_s_mean": (doc.get("throughput") or {}).get("ops_s_mean"),
        "stalls": float(cp.get("stalls") or 0),
    }


ROWS: tuple[tuple[str, str, str, str, str], ...] = (
    # key, name, unit, better, format
    ("checkpoints", "checkpoints", "", "", ".0f"),
    ("period_s", "checkpoint interval", "s", "", ".0f"),
    ("duration_p50_s", "checkpoint duration (p50)", "s", "lower", ".2f"),
    ("duration_max_s", "checkpoint duration (max)", "s", "lower", ".2f"),
    ("mb_per_checkpoint", "bytes per checkpoint (p50)", "MB", "lower", ",.0f"),
    ("p99_inside_ms", "write p99 inside checkpoints (p50)", "ms", "lower", ",.1f"),
    ("latency_inside_ms", "mean write latency inside checkpoints (p50)", "ms", "lower", ",.2f"),
    ("p99_between_ms", "write p99 between checkpoints", "ms", "lower", ",.2f"),
    ("dip_p50_pct", "throughput dip (p50 of checkpoints)", "%", "lower", ".0f"),
    ("dip_max_pct", "throughput dip (worst checkpoint)", "%", "lower", ".0f"),
    ("disk_mb_s_peak", "disk write peak", "MB/s", "lower", ",.0f"),
    ("util_pct_peak", "disk %util peak", "%", "lower", ".0f"),
    ("ops_s_mean", "mean throughput", "ops/s", "higher", ",.0f"),
    ("stalls", "stalled checkpoints", "", "lower", ".0f"),
)


@dataclass(frozen=True)
class Comparison:
    """Two reports and their figures side by side."""

    before: dict[str, Any]
    after: dict[str, Any]
    rows: tuple[Row, ...]
    before_label: str = "before"
    after_label: str = "after"

    @property
    def overall(self) -> str:
        """ "better" (a figure improved, none got worse), "worse" (a figure got worse, none
        improved), "mixed" (both), or "same"."""
        seen = {r.verdict for r in self.rows}
        if "worse" in seen:
            return "mixed" if "better" in seen else "worse"
        return "better" if "better" in seen else "same"

    @property
    def worse(self) -> tuple[str, ...]:
        """The figures that got worse."""
        return tuple(r.name for r in self.rows if r.verdict == "worse")

    @property
    def severity(self) -> str:
        """For the formats: ``warn`` when a figure got worse, else ``ok``."""
        return "warn" if self.worse else "ok"

    def markdown(self) -> str:
        """The before/after table in Markdown (the HTML page's body)."""
        return render_compare_markdown(self)

    def text(self) -> str:
        """The before/after table as plain text."""
        return render_compare_text(self)

    def charts(self) -> str | None:
        """No chart: the page is its table."""
        return None

    def metrics(self) -> Sequence[Metric]:
        """Each figure's after/before ratio and whether it got worse, and the overall change."""
        out = [Metric("compare_worse_figures", "Figures that got worse from before to after.", len(self.worse))]
        for r in self.rows:
            label = (("figure", r.name),)
            out.append(Metric("compare_ratio", "A figure's after over its before.", r.ratio, label))
            worse = int(r.verdict == "worse")
            out.append(Metric("compare_worse", "1 when the figure got worse, else 0.", worse, label))
        return out

    def to_json(self) -> dict[str, Any]:
        """The comparison as JSON (docs/report-json.md, "compare")."""

        def side(doc: dict[str, Any], label: str) -> dict[str, Any]:
            return {
                "label": label,
                "source": doc.get("source"),
                "window": doc.get("window"),
                "verdict": doc.get("verdict", {}).get("severity"),
                "summary": doc.get("verdict", {}).get("summary"),
            }

        return {
            "schema_version": COMPARE_SCHEMA_VERSION,
            "kind": "compare",
            "tool": {"name": "ckptdiag", "version": __version__},
            "before": side(self.before, self.before_label),
            "after": side(self.after, self.after_label),
            "rows": [r.to_json() for r in self.rows],
            "overall": self.overall,
            "worse": list(self.worse),
        }


def compare(before: dict[str, Any], after: dict[str, Any], labels: tuple[str, str] = ("before", "after")) -> Comparison:
    """Compare two report documents; rows neither side knows are left out."""
    a, b = figures(before), figures(after)
    rows = tuple(
        Row(name, unit, a.get(key), b.get(key), better, digits)
        for key, name, unit, better, digits in ROWS
        if a.get(key) is not None or b.get(key) is not None
    )
    return Comparison(before, after, rows, *labels)


def _change(row: Row) -> str:
    r = row.ratio
    if r is None:
        return "-"
    return f"{r:.2f}x"


_VERDICT_STYLE = {"better": "green", "worse": "red", "same": "dim"}


def rows_table(rows: Iterable[Row], labels: tuple[str, str], title: str = "before / after") -> Table:
    """Rows as a rich table: the figure, each side, after/before, better or worse."""
    table = Table(title=title, title_justify="left")
    table.add_column("", justify="left")
    for name in (*labels, "after/before"):
        table.add_column(name, justify="right")
    table.add_column("", justify="left")
    for row in rows:
        unit = f" {row.unit}" if row.unit else ""
        table.add_row(
            row.name,
            fmt(row.before, row.digits, unit),
            fmt(row.after, row.digits, unit),
            _change(row),
            Text(row.verdict, style=_VERDICT_STYLE.get(row.verdict, "")),
        )
    return table


def render_compare_table(c: Comparison) -> RenderableType:
    """The before/after table for a terminal."""
    table = rows_table(c.rows, (c.before_label, c.after_label))
    table.caption = _overall_line(c)
    table.caption_justify = "left"
    head = Text.assemble(
        (f"{c.before_label}: ", "bold"),
        f"{_source(c.before)} ({c.before.get('verdict', {}).get('severity', '?')})\n",
        (f"{c.after_label}: ", "bold"),
        f"{_source(c.after)} ({c.after.get('verdict', {}).get('severity', '?')})",
    )
    return Group(head, table)


def _source(doc: dict[str, Any]) -> str:
    src = doc.get("source") or {}
    window = doc.get("window") or {}
    return f"{src.get('kind', '?')} {src.get('path', '')}, {window.get('start')} to {window.get('end')}"


def render_compare_text(c: Comparison, width: int = 120) -> str:
    """The terminal table as plain text."""
    from rich.console import Console

    buffer = io.StringIO()
    Console(file=buffer, width=width, color_system=None).print(render_compare_table(c))
    return buffer.getvalue()


def render_compare_markdown(c: Comparison) -> str:
    """Markdown for a ticket: the before/after table."""
    out = [
        "# ckptdiag: before / after",
        "",
        f"- {c.before_label}: {_source(c.before)} ({c.before.get('verdict', {}).get('severity', '?')})",
        f"- {c.after_label}: {_source(c.after)} ({c.after.get('verdict', {}).get('severity', '?')})",
        "",
        f"| | {c.before_label} | {c.after_label} | after/before | |",
        "|---|---|---|---|---|",
    ]
    for row in c.rows:
        unit = f" {row.unit}" if row.unit else ""
        out.append(
            f"| {row.name} | {fmt(row.before, row.digits, unit)} | {fmt(row.after, row.digits, unit)} | "
            f"{_change(row)} | {row.verdict} |"
        )
    out += ["", f"**{_overall_line(c)}**", "", f"_ckptdiag {__version__}_"]
    return "\n".join(out) + "\n"


def _overall_line(c: Comparison) -> str:
    """The comparison in a line: better, worse, mixed or same, and what got worse."""
    worse = f" (worse: {', '.join(c.worse)})" if c.worse else ""
    return f"overall: {c.overall}{worse}"
