"""The diagnosis in every format: JSON for scripts, a terminal report with a timeline, Markdown
for tickets and mail, HTML with charts for nightly reports.

The JSON document is the contract (docs/report-json.md); the other formats show the same facts.
"""

from __future__ import annotations

import datetime as dt
import html
import io
import json
import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from ckptdiag import __version__
from ckptdiag.advice.rules import Advice
from ckptdiag.analysis.diagnosis import Diagnosis, ServerFacts, hurts
from ckptdiag.analysis.episodes import Episode
from ckptdiag.recording import utc_iso
from ckptdiag.report.advice import advice_markdown, advice_renderables
from ckptdiag.report.fmt import fmt

SCHEMA_VERSION = 3
FORMATS = ("table", "json", "md", "html")
EXTENSIONS = {".json": "json", ".md": "md", ".markdown": "md", ".html": "html", ".htm": "html", ".txt": "table"}
HTML_EXTRA_HINT = "pip install 'ckptdiag[html]'"
_STYLE = {"ok": "bold green", "warn": "bold yellow", "critical": "bold red"}
_SPARK = "▁▂▃▄▅▆▇█"


@dataclass
class Report:
    """Everything a report shows: the diagnosis, where it came from, the server, the advice."""

    dx: Diagnosis
    source: dict[str, Any]
    facts: ServerFacts
    advice: Advice | None = None


def iso(ts: float | None) -> str | None:
    """Epoch seconds as ISO 8601 UTC with milliseconds."""
    return None if ts is None or not math.isfinite(ts) else utc_iso(ts)


def _num(value: Any, digits: int = 3) -> Any:
    if value is None:
        return None
    if isinstance(value, bool | str):
        return value
    if isinstance(value, int | np.integer):
        return int(value)
    value = float(value)
    return round(value, digits) if math.isfinite(value) else None


def _episode_json(e: Episode, disk: str | None) -> dict[str, Any]:
    m = e.impact
    return {
        "start": iso(e.start),
        "end": iso(e.end),
        "duration_s": _num(e.duration_s),
        "exact_duration": e.exact_duration,
        "bytes_written": _num(e.bytes_written, 0),
        "evidence": e.evidence,
        "truncated": e.truncated,
        "stall": e.stall,
        "stall_reasons": list(e.reasons if e.stall else []),
        "ops_ratio": _num(m.get("ops_ratio")),
        "ops_s_min": _num(m.get("ops_s_min"), 1),
        "ops_s_baseline": _num(m.get("ops_s_baseline"), 1),
        "write_latency_ratio": _num(m.get("write_latency_ratio")),
        "write_latency_kind": m.get("write_latency_kind"),
        "write_p99_ms_peak": _num(m.get("write_p99_ms_peak")),
        "write_latency_ms_peak": _num(m.get("write_latency_ms_peak")),
        "read_latency_ratio": _num(m.get("read_latency_ratio")),
        "disk": {
            "device": disk,
            "write_mb_s_peak": _num(m.get("write_mb_s_peak"), 2),
            "w_s_peak": _num(m.get("w_s_peak"), 1),
            "util_pct_peak": _num(m.get("util_pct_peak"), 1),
            "await_ms_peak": _num(m.get("await_ms_peak"), 2),
            "aqu_sz_peak": _num(m.get("aqu_sz_peak"), 2),
        },
        "eviction": {
            "app_evicted_pages": _num(m.get("app_evicted_pages"), 0),
            "app_wait_ms": _num(m.get("app_wait_ms"), 1),
            "dirty_pct_peak": _num(m.get("dirty_pct_peak"), 2),
        },
        "tickets": {
            "write_available_min": _num(m.get("write_tickets_available_min"), 0),
            "queued_writers_max": _num(m.get("queued_writers_max"), 0),
        },
    }


def _stats(values: list[float]) -> dict[str, Any]:
    if not values:
        return {"p50": None, "max": None}
    return {"p50": _num(float(np.median(values))), "max": _num(max(values))}


OTHER_STALLS_LISTED = 100  # a window full of them lists this many (and counts them all)


def to_document(r: Report) -> dict[str, Any]:
    """The versioned JSON report as a dict (times ISO 8601 UTC, no NaN)."""
    dx, source, facts, advice = r.dx, r.source, r.facts, r.advice
    done = [e for e in dx.episodes if e.duration_s is not None]
    b = dx.baseline
    return {
        "schema_version": SCHEMA_VERSION,
        "tool": {"name": "ckptdiag", "version": __version__},
        "generated": iso(dt.datetime.now(dt.timezone.utc).timestamp()),
        "source": {k: v for k, v in source.items()},
        "server": facts.to_json(),
        "window": {
            "start": iso(dx.start),
            "end": iso(dx.end),
            "samples": dx.samples,
            "period_s": _num(dx.period_s),
            "gaps": dx.gaps,
            "restarts": dx.restarts,
            "samples_without_wiredtiger": dx.samples_without_wiredtiger,
        },
        "verdict": {"severity": dx.severity, "summary": dx.summary, "findings": dx.findings, "evidence": dx.evidence},
        "baseline": {
            "samples": b.samples,
            "ops_s": _num(b.ops_s, 1),
            "writes_s": _num(b.writes_s, 1),
            "write_latency_ms": _num(b.write_lat_ms),
            "write_p99_ms": _num(b.write_p99_ms),
            "read_latency_ms": _num(b.read_lat_ms),
            "disk_write_mb_s": _num(b.disk_write_mb_s, 2),
            "disk_util_pct": _num(b.disk_util_pct, 1),
        },
        "throughput": {"ops_s_mean": _num(dx.ops_s_mean, 1), "writes_s_mean": _num(dx.writes_s_mean, 1)},
        "checkpoints": {
            "count": len(dx.episodes),
            "stalls": dx.stalls,
            "period_s": _num(dx.checkpoint_period_s, 1),
            "period_cv": _num(dx.checkpoint_period_cv),
            "duration_s": _stats([e.duration_s for e in done if e.duration_s is not None]),
            "bytes_written": _stats([e.bytes_written for e in dx.episodes if e.bytes_written is not None]),
            "disk": dx.disk,
            "episodes": [_episode_json(e, dx.disk) for e in dx.episodes],
        },
        "eviction": {k: (_num(v) if not isinstance(v, dict) else v) for k, v in dx.eviction.items()},
        "other_stalls": {
            "count": len(dx.other_stalls),
            "listed": [
                _clean({**o, "start": iso(o["start"]), "end": iso(o["end"])})
                for o in dx.other_stalls[:OTHER_STALLS_LISTED]
            ],
        },
        "advice": _clean(advice.to_json()) if advice else None,
        "recommendations": [_clean(x.to_json()) for x in advice.recommendations] if advice else [],
    }


def _clean(value: Any) -> Any:
    """Figures rounded, NaN as null, all the way down."""
    if isinstance(value, dict):
        return {k: _clean(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_clean(v) for v in value]
    if isinstance(value, float | np.floating):
        return _num(value)
    return value


def render_json(doc: dict[str, Any]) -> str:
    """The JSON report text (no NaN: every figure is a number or null)."""
    try:
        import orjson
    except ImportError:  # pragma: no cover - orjson is a dependency
        return json.dumps(doc, indent=2, allow_nan=False, ensure_ascii=False) + "\n"
    return orjson.dumps(doc, option=orjson.OPT_INDENT_2 | orjson.OPT_APPEND_NEWLINE).decode()


# --- people ------------------------------------------------------------------------------------


def _mb(value: Any) -> str:
    return "-" if value is None else f"{value / 2**20:,.1f}"


def _spark(values: np.ndarray, top: float | None = None) -> str:
    finite = values[np.isfinite(values)]
    hi = top if top is not None else (float(finite.max()) if finite.size else 0.0)
    out = []
    for v in values:
        if not np.isfinite(v):
            out.append(" ")
        elif hi <= 0:
            out.append(_SPARK[0])
        else:
            out.append(_SPARK[min(int(v / hi * (len(_SPARK) - 1) + 0.5), len(_SPARK) - 1)])
    return "".join(out)


def _resample(tl: pd.DataFrame, width: int) -> pd.DataFrame:
    group = (np.arange(len(tl)) * width // max(len(tl), 1)).clip(0, width - 1)
    return tl.groupby(group).agg(
        ops_s=("ops_s", "min"),
        dirty_pct=("dirty_pct", "max"),
        disk_mb_s=("disk_mb_s", "max"),
        checkpoint=("checkpoint", "any"),
        stall=("stall", "any"),
        t=("t", "first"),
    )


def timeline_text(dx: Diagnosis, width: int = 96) -> Text:
    """Sparklines of ops/s (lowest in each column), dirty % and disk MB/s, checkpoints marked."""
    if dx.timeline is None or dx.timeline.empty:
        return Text("")
    tl = _resample(dx.timeline, width)
    marks = Text()
    for ckpt, stall in zip(tl["checkpoint"], tl["stall"], strict=True):
        marks.append("▼" if stall else "│" if ckpt else " ", style="bold red" if stall else "cyan")
    label = 14
    text = Text()
    text.append("checkpoints".ljust(label), style="dim")
    text.append_text(marks)
    text.append("  ▼ stall  │ checkpoint\n", style="dim")
    rows = [
        ("ops/s (min)", tl["ops_s"].to_numpy(dtype="float64"), "green", "{:,.0f}"),
        ("dirty %", tl["dirty_pct"].to_numpy(dtype="float64"), "yellow", "{:.1f}"),
        ("disk MB/s", tl["disk_mb_s"].to_numpy(dtype="float64"), "magenta", "{:,.0f}"),
    ]
    for name, values, style, spec in rows:
        if not np.isfinite(values).any():
            continue
        text.append(name.ljust(label), style="dim")
        text.append(_spark(values), style=style)
        text.append(f"  max {spec.format(np.nanmax(values))}\n", style="dim")
    text.append(" " * label + f"{iso(dx.start)} … {iso(dx.end)}", style="dim")
    return text


def _episode_rows(dx: Diagnosis, limit: int) -> tuple[list[str], list[list[str]]]:
    head = ["start UTC", "s", "MB", "ops", "w lat", "MB/s", "%util", "await", "app ev", "stall"]
    rows = []
    same_day = (iso(dx.start) or "")[:10] == (iso(dx.end) or "")[:10]
    shown = dx.episodes
    if len(shown) > limit:  # the stalls first, else the latest
        shown = [e for e in dx.episodes if e.stall][:limit] or dx.episodes[-limit:]
    for e in shown:
        m = e.impact
        rows.append(
            [
                (iso(e.start) or "")[11:19] if same_day else (iso(e.start) or "")[5:19].replace("T", " "),
                fmt(e.duration_s, ".2f") + ("" if e.exact_duration or e.duration_s is None else "~"),
                _mb(e.bytes_written),
                fmt(None if m.get("ops_ratio") is None else 100 * float(m["ops_ratio"] or 0), ".0f", " %"),
                fmt(m.get("write_latency_ratio"), ".1f", "x"),
                fmt(m.get("write_mb_s_peak"), ",.1f"),
                fmt(m.get("util_pct_peak"), ".0f"),
                fmt(m.get("await_ms_peak"), ".1f"),
                fmt(m.get("app_evicted_pages"), ",.0f"),
                "STALL" if e.stall else ("hurts" if hurts(e) else ""),
            ]
        )
    return head, rows


def render_table(r: Report, limit: int = 25) -> RenderableType:
    """The terminal report."""
    dx, source, facts = r.dx, r.source, r.facts
    cache_gb = None if facts.cache_max_bytes is None else facts.cache_max_bytes / 2**30
    head = Text.assemble(
        (f"{source.get('kind')}: {source.get('path')}\n", "bold"),
        f"server {facts.version or '?'} {facts.host or ''}; cache {fmt(cache_gb, '.1f', ' GB')}; "
        f"{iso(dx.start)} to {iso(dx.end)}, {dx.samples:,} samples every {fmt(dx.period_s, '.0f', ' s')}",
    )
    verdict = Text.assemble((f" {dx.severity.upper()} ", _STYLE[dx.severity] + " reverse"), "  ", (dx.summary, "bold"))
    findings = Text("\n".join(f"• {f}" for f in dx.findings)) if dx.findings else Text("")
    episodes = Table(
        title=(
            f"checkpoints: {len(dx.episodes)}"
            + (f", one every {dx.checkpoint_period_s:.0f} s" if dx.checkpoint_period_s else "")
            + (f" (cv {dx.checkpoint_period_cv:.2f})" if dx.checkpoint_period_cv is not None else "")
            + (f"; data disk {dx.disk}" if dx.disk else "")
            + (f"; showing {limit}" if len(dx.episodes) > limit else "")
        ),
        title_justify="left",
    )
    cols, rows = _episode_rows(dx, limit)
    for c in cols:
        episodes.add_column(c, justify="right")
    for row in rows:
        episodes.add_row(*row, style="red" if row[-1] == "STALL" else None)
    b = dx.baseline
    ev = dx.eviction
    s = dx.settings
    base = Text(
        f"baseline ({b.samples:,} samples away from checkpoints): {fmt(b.ops_s, ',.0f')} ops/s, write latency "
        f"{fmt(b.write_lat_ms, '.2f', ' ms')}"
        + (f" (p99 {b.write_p99_ms:.1f} ms)" if b.write_p99_ms else "")
        + f", disk {fmt(b.disk_write_mb_s, ',.1f', ' MB/s')}\n"
        f"cache: dirty p50 {fmt(ev['dirty_pct_p50'], '.1f', ' %')}, max {fmt(ev['dirty_pct_max'], '.1f', ' %')} "
        f"(target {s.dirty_target:g} %, trigger {s.dirty_trigger:g} %: {s.source}); used max "
        f"{fmt(ev['used_pct_max'], '.1f', ' %')}; application threads evicted {ev['app_evicted_pages']:,.0f} pages, "
        f"waited {ev['app_wait_s']:,.1f} s"
    )
    parts: list[RenderableType] = [head, verdict, findings, timeline_text(dx), episodes, base]
    notes = list(dx.evidence)
    if source.get("kind") == "ftdc":
        notes.append("FTDC records physical disks only: if dbPath is on LVM or md, these are the disks beneath it")
    if r.advice is not None:
        parts.extend(advice_renderables(r.advice))
    if notes:
        parts.append(Text("\n".join(f"note: {n}" for n in notes), style="dim"))
    return Group(*parts)


def render_text(r: Report, width: int = 120) -> str:
    """The terminal report as plain text (for a file)."""
    from rich.console import Console

    buffer = io.StringIO()
    Console(file=buffer, width=width, color_system=None, legacy_windows=False).print(render_table(r))
    return buffer.getvalue()


def render_markdown(r: Report, limit: int = 50) -> str:
    """Markdown for tickets and mail."""
    dx, source, facts = r.dx, r.source, r.facts
    b, ev, s = dx.baseline, dx.eviction, dx.settings
    out = [
        f"# ckptdiag: {dx.severity.upper()}",
        "",
        f"**{dx.summary}**",
        "",
        f"- source: {source.get('kind')} `{source.get('path')}`",
        f"- server: {facts.version or '?'} {facts.host or ''}, cache "
        f"{fmt(facts.cache_max_bytes and facts.cache_max_bytes / 2**30, '.1f', ' GB')}, "
        f"RAM {fmt(facts.ram_bytes and facts.ram_bytes / 2**30, '.1f', ' GB')}, cores {fmt(facts.cores, 'd')}",
        f"- window: {iso(dx.start)} to {iso(dx.end)}, {dx.samples:,} samples, {dx.gaps} gaps, {dx.restarts} restarts",
        f"- checkpoints: {len(dx.episodes)}, {dx.stalls} stalls"
        + (f", one every {dx.checkpoint_period_s:.0f} s" if dx.checkpoint_period_s else ""),
        "",
    ]
    if dx.findings:
        out += ["## Findings", ""] + [f"- {f}" for f in dx.findings] + [""]
    cols, rows = _episode_rows(dx, limit)
    if rows:
        out += ["## Checkpoints", "", "| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
        out += ["| " + " | ".join(r) + " |" for r in rows]
        out.append("")
    out += [
        "## Baseline and cache",
        "",
        f"- baseline: {fmt(b.ops_s, ',.0f')} ops/s, write latency {fmt(b.write_lat_ms, '.2f', ' ms')}, "
        f"disk {dx.disk or '-'} {fmt(b.disk_write_mb_s, ',.1f', ' MB/s')}",
        f"- dirty cache: p50 {fmt(ev['dirty_pct_p50'], '.1f', ' %')}, max {fmt(ev['dirty_pct_max'], '.1f', ' %')} "
        f"(target {s.dirty_target:g} %, trigger {s.dirty_trigger:g} %, {s.source}); "
        f"{ev['seconds_over_dirty_trigger']:.0f} s at or over the trigger",
        f"- application threads evicted {ev['app_evicted_pages']:,.0f} pages and waited "
        f"{ev['app_wait_s']:,.1f} s for cache",
        "",
    ]
    if r.advice is not None:
        out += advice_markdown(r.advice)
    if dx.evidence:
        out += ["## Notes", ""] + [f"- {n}" for n in dx.evidence] + [""]
    out.append(f"_ckptdiag {__version__}_")
    return "\n".join(out) + "\n"


def _charts_svg(dx: Diagnosis) -> str | None:
    try:
        import matplotlib  # type: ignore[import-not-found,unused-ignore]

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt  # type: ignore[import-not-found,unused-ignore]
    except ImportError:
        return None
    tl = dx.timeline
    if tl is None or tl.empty:
        return None
    times = pd.to_datetime(tl["t"], unit="s", utc=True)
    series = [
        (label, column, color)
        for label, column, color in (
            ("ops/s (lowest)", "ops_s", "tab:green"),
            ("dirty %", "dirty_pct", "tab:orange"),
            ("disk MB/s", "disk_mb_s", "tab:purple"),
        )
        if tl[column].notna().any()
    ]
    fig, axes = plt.subplots(len(series), 1, figsize=(11, 2.2 * len(series)), sharex=True, squeeze=False)
    for ax, (label, column, color) in zip(axes[:, 0], series, strict=True):
        ax.plot(times, tl[column], color=color, linewidth=0.9)
        ax.set_ylabel(label)
        ax.grid(alpha=0.3)
        for e in dx.episodes:
            end = e.end if e.end is not None else dx.end
            ax.axvspan(
                pd.Timestamp(e.start, unit="s", tz="UTC"),
                pd.Timestamp(max(end, e.start + 0.5), unit="s", tz="UTC"),
                color="red" if e.stall else "tab:blue",
                alpha=0.25 if e.stall else 0.12,
                linewidth=0,
            )
    axes[-1, 0].set_xlabel("UTC (red: stalled checkpoint, blue: checkpoint)")
    fig.tight_layout()
    buffer = io.StringIO()
    fig.savefig(buffer, format="svg")
    plt.close(fig)
    svg = buffer.getvalue()
    return svg[svg.find("<svg") :]


def render_html(r: Report) -> str:
    """A self-contained HTML page: verdict, charts (with the plotting extra), tables."""
    import re

    dx = r.dx
    md = render_markdown(r)
    body = []
    table: list[str] = []
    code: list[str] | None = None
    for line in md.splitlines():
        if line.startswith("```"):
            if code is None:
                code = []
            else:
                body.append("<pre><code>" + html.escape("\n".join(code)) + "</code></pre>")
                code = None
            continue
        if code is not None:
            code.append(line)
            continue
        if line.startswith("|"):
            if not re.fullmatch(r"\|(---\|)+", line):
                cells = [html.escape(c.strip()) for c in line.strip("|").split("|")]
                tag = "th" if not table else "td"
                table.append("<tr>" + "".join(f"<{tag}>{c}</{tag}>" for c in cells) + "</tr>")
            continue
        if table:
            body.append("<table>" + "".join(table) + "</table>")
            table = []
        text = html.escape(line)
        text = re.sub(r"\*\*(.+?)\*\*", r"<strong>\1</strong>", text)
        text = re.sub(r"`(.+?)`", r"<code>\1</code>", text)
        if line.startswith("# "):
            body.append(f'<h1 class="{dx.severity}">{text[2:]}</h1>')
        elif line.startswith("### "):
            body.append(f"<h3>{text[4:]}</h3>")
        elif line.startswith("## "):
            body.append(f"<h2>{text[3:]}</h2>")
        elif line.startswith("- "):
            body.append(f"<li>{text[2:]}</li>")
        elif line:
            body.append(f"<p>{text}</p>")
    if table:
        body.append("<table>" + "".join(table) + "</table>")
    svg = _charts_svg(dx)
    charts = (
        f'<div class="charts">{svg}</div>'
        if svg
        else f'<p class="hint">Charts need the plotting extra: <code>{html.escape(HTML_EXTRA_HINT)}</code></p>'
    )
    # the charts go right after the summary paragraph
    at = next((i for i, part in enumerate(body) if part.startswith("<p><strong>")), 0) + 1
    body.insert(at, charts)
    style = (
        "body{font-family:system-ui,sans-serif;max-width:1200px;margin:2em auto;color:#222}"
        "h1.ok{color:#18794e}h1.warn{color:#ad5700}h1.critical{color:#c62a2f}"
        "table{border-collapse:collapse;font-size:90%}td,th{border:1px solid #ccc;padding:2px 6px;text-align:right}"
        ".hint{color:#666}svg{max-width:100%;height:auto}"
        "pre{background:#f6f8fa;padding:.6em;overflow-x:auto}"
    )
    return (
        f'<!doctype html>\n<html lang="en"><head><meta charset="utf-8"><title>ckptdiag: {dx.severity}</title>'
        f"<style>{style}</style></head><body>\n" + "\n".join(body) + "\n</body></html>\n"
    )
