"""The terminal report: verdict, findings, a sparkline timeline, the checkpoints, the baseline."""

from __future__ import annotations

import io
from typing import Any

import numpy as np
import pandas as pd
from rich.console import Console, ConsoleOptions, Group, RenderableType, RenderResult
from rich.table import Table
from rich.text import Text

from ckptdiag.analysis.phases import breakdown
from ckptdiag.analysis.results import Baseline, Diagnosis
from ckptdiag.analysis.stats import sampling_text
from ckptdiag.analysis.timeline import ops_line
from ckptdiag.analysis.verdict import hurts, listed_count, worst_episodes
from ckptdiag.model.engine_config import EngineSettings
from ckptdiag.report.advice import advice_renderables
from ckptdiag.report.document import Report, iso
from ckptdiag.report.fmt import fmt, fmt_ms, unplaced
from ckptdiag.report.history import history_rows

_STYLE = {"ok": "bold green", "warn": "bold yellow", "critical": "bold red"}
_SPARK = "▁▂▃▄▅▆▇█"
FTDC_DISKS_NOTE = "FTDC records physical disks only: if dbPath is on LVM or md, these are the disks beneath it"


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
            # clipped at both ends: a negative value (a damaged gauge) is the lowest bar, not an index error
            out.append(_SPARK[min(max(int(v / hi * (len(_SPARK) - 1) + 0.5), 0), len(_SPARK) - 1)])
    return "".join(out)


def _resample(tl: pd.DataFrame, width: int) -> pd.DataFrame:
    group = (np.arange(len(tl)) * width // max(len(tl), 1)).clip(0, width - 1)
    return tl.groupby(group).agg(
        ops_s=("ops_s", "min"),
        ops_s_mean=("ops_s_mean", "mean"),
        ops_s_max=("ops_s_max", "max"),
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
    label_ops, column = ops_line(dx.timeline)
    # the right-hand figure is the line's highest, and for ops/s the highest second's (a mean or a
    # lowest line of a bursty server would read "max 0" beside 110,000 ops/s bursts)
    rows = [
        (label_ops, tl[column], "green", "{:,.0f}", tl["ops_s_max"]),
        ("dirty %", tl["dirty_pct"], "yellow", "{:.1f}", tl["dirty_pct"]),
        ("disk MB/s", tl["disk_mb_s"], "magenta", "{:,.0f}", tl["disk_mb_s"]),
    ]
    for name, line, style, spec, highest in rows:
        values = line.to_numpy(dtype="float64")
        if not np.isfinite(values).any():
            continue
        text.append(name.ljust(label), style="dim")
        text.append(_spark(values), style=style)
        text.append(f"  max {spec.format(np.nanmax(highest.to_numpy(dtype='float64')))}\n", style="dim")
    text.append(" " * label + f"{iso(dx.start)} … {iso(dx.end)}", style="dim")
    return text


def baseline_basis(b: Baseline) -> str:
    """What the baseline was made from, in the words of the evidence beside it: an estimate when
    no loaded sample lies away from a checkpoint, never "N samples away from checkpoints" then."""
    if b.estimated:
        return f"estimated from {b.samples:,} loaded samples: checkpoints back to back"
    return f"{b.samples:,} samples away from checkpoints"


def dirty_settings_text(settings: EngineSettings) -> str:
    """The dirty target and trigger in force and where they came from, for a sentence."""
    target, trigger = settings.eviction.dirty_target, settings.eviction.dirty_trigger
    if target.source == trigger.source:
        return f"target {target.number:g} %, trigger {trigger.number:g} %: {target.source}"
    return f"target {target.number:g} % ({target.source}), trigger {trigger.number:g} % ({trigger.source})"


def episode_rows(dx: Diagnosis, limit: int, *, full_why: bool = False) -> tuple[list[str], list[list[str]]]:
    """The episodes table (the worst ``limit`` when there are more, in time order), each row with
    why it is a stall or not: in full (``full_why``: Markdown), else in a word or two (a terminal)."""
    head = ["start UTC", "s", "MB", "ops", "w lat", "MB/s", "%util", "await", "app ev", "stall", "why"]
    rows = []
    same_day = (iso(dx.start) or "")[:10] == (iso(dx.end) or "")[:10]
    shown = worst_episodes(dx.episodes, limit)
    # Markdown and HTML say where each one's time went, where the server timed it
    phased = full_why and any(e.phases is not None for e in shown)
    if phased:
        head.append("where the time went")
    for e in shown:
        m = e.impact
        rows.append(
            [
                (iso(e.start) or "")[11:19] if same_day else (iso(e.start) or "")[5:19].replace("T", " "),
                fmt(e.duration_s, ".2f") + ("" if e.exact_duration or e.duration_s is None else "~"),
                _mb(e.bytes_written),
                fmt(None if m.ops_ratio is None else 100 * m.ops_ratio, ".0f", " %"),
                fmt(m.write_latency_ratio, ".1f", "x"),
                fmt(m.write_mb_s_peak, ",.1f"),
                fmt(m.util_pct_peak, ".0f"),
                fmt(m.await_ms_peak, ".1f"),
                fmt(m.app_evicted_pages, ",.0f"),
                "STALL" if e.stall else ("hurts" if hurts(e) else ""),
                "; ".join(e.reasons if full_why else map(_short, e.reasons)),
                *([(breakdown(e) or "").partition(": ")[2]] if phased else []),
            ]
        )
    return head, rows


_SHORT = (
    ("no load in the", "no load"),
    ("load stopped with it", "load gone"),
    ("throughput and latency", "ops+latency"),
    ("writes froze", "froze"),
    ("application threads waited", "cache wait"),
    ("too little load", "little load"),
    ("no write latency figure", "no latency"),
    ("still running when the window ended", "cut off"),
)


def _short(reason: str) -> str:
    """A reason in a word or two for a terminal's narrow column (the JSON and Markdown say it whole)."""
    for start, short in _SHORT:
        if start in reason:
            return short
    figure = reason.split(" (", 1)[0]  # "throughput held at 79 % of the baseline" -> "ops 79 %"
    if figure.startswith("throughput held at "):
        return "ops " + figure.removeprefix("throughput held at ").removesuffix(" of the baseline")
    if figure.startswith("write latency "):
        return "lat " + figure.removeprefix("write latency ").split(" ", 1)[0]
    return reason


TERMINAL_TOP = 25  # episodes a terminal lists by default (the worst, in time order)


def render_table(r: Report, top: int | None = None) -> RenderableType:
    """The terminal report, listing the ``top`` worst episodes (None: ``TERMINAL_TOP``; 0: all)."""
    limit = listed_count(top, TERMINAL_TOP, len(r.dx.episodes))
    dx, source, facts = r.dx, r.source, r.dx.facts
    cache = dx.settings.cache_bytes.value
    cache_gb = None if cache is None else cache / 2**30
    head = Text.assemble(
        (f"{source.kind}: {source.path}\n", "bold"),
        f"server {facts.version or '?'} {facts.host or ''}{f' ({dx.role})' if dx.role else ''}; "
        f"cache {fmt(cache_gb, '.1f', ' GB')}; "
        f"{iso(dx.start)} to {iso(dx.end)}, {dx.samples:,} samples {sampling_text(dx.spacings)}",
    )
    verdict = Text.assemble((f" {dx.severity.upper()} ", _STYLE[dx.severity] + " reverse"), "  ", (dx.summary, "bold"))
    findings = Text("\n".join(f"• {f}" for f in dx.findings)) if dx.findings else Text("")
    episodes = _EpisodeTable(dx, limit)
    b = dx.baseline
    ev = dx.eviction
    base = Text(
        f"baseline ({baseline_basis(b)}): {fmt(b.ops_s, ',.0f')} ops/s, write latency "
        f"{fmt_ms(b.write_lat_ms)}"
        + (f" (p99 {fmt_ms(b.write_p99_ms)})" if b.write_p99_ms else "")
        + f", disk {fmt(b.disk_write_mb_s, ',.1f', ' MB/s')}\n"
        f"cache: dirty p50 {fmt(ev.dirty_pct_p50, '.1f', ' %')}, max {fmt(ev.dirty_pct_max, '.1f', ' %')} "
        f"({dirty_settings_text(dx.settings)}); used max "
        f"{fmt(ev.used_pct_max, '.1f', ' %')}; application threads evicted {ev.app_evicted_pages:,.0f} pages, "
        f"waited {ev.app_wait_s:,.1f} s"
    )
    parts: list[RenderableType] = [head, verdict, findings, timeline_text(dx), episodes]
    if dx.history is not None:
        title, cols, rows = history_rows(dx.history)
        by = Table(title=title, title_justify="left")
        for c in cols:
            by.add_column(c, justify="right", no_wrap=True)
        for row in rows:
            by.add_row(*row)
        parts.append(by)
    parts.append(base)
    if r.log is not None:
        parts.append(Text("mongod log:\n" + "\n".join(f"  {line}" for line in r.log.lines_for_report())))
    notes = list(dx.evidence)
    if source.kind == "ftdc":
        notes.append(FTDC_DISKS_NOTE)
    if r.advice is not None:
        parts.extend(advice_renderables(r.advice))
    if notes:
        parts.append(Text("\n".join(f"note: {n}" for n in notes), style="dim"))
    return Group(*parts)


WHY_MIN_WIDTH = 110  # a console at least this wide shows why beside each episode's figures


class _EpisodeTable:
    """The episodes table, laid out for the console it is printed on: with each episode's why
    (in a word or two) where the console is wide enough, else with the stall marker alone and a
    caption saying where the reasons are (at 80 columns a why column squeezes every figure)."""

    def __init__(self, dx: Diagnosis, limit: int, top_option: bool = True) -> None:
        self.dx, self.limit, self.top_option = dx, limit, top_option

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        dx, limit = self.dx, self.limit
        wide = options.max_width >= WHY_MIN_WIDTH
        table = Table(
            title=(
                f"checkpoints: {len(dx.episodes):,}"
                + unplaced(dx.unplaced_checkpoints)
                + (f", one every {dx.checkpoint_period_s:.0f} s" if dx.checkpoint_period_s else "")
                + (f" (cv {dx.checkpoint_period_cv:.2f})" if dx.checkpoint_period_cv is not None else "")
                + (f"; data disk {dx.disk}" if dx.disk else "")
                + (f"; showing the {limit} worst" if len(dx.episodes) > limit else "")
                + (" (--top)" if len(dx.episodes) > limit and self.top_option else "")
            ),
            title_justify="left",
            caption=None if wide else "why each is a stall or not: -f md or -f json, or a wider terminal",
            caption_justify="left",
        )
        cols, rows = episode_rows(dx, limit)
        for c in cols[:-1] if wide else cols[:-2]:
            table.add_column(c, justify="right", no_wrap=c == "start UTC")
        table.add_column("why" if wide else "stall", justify="left", no_wrap=True)
        for *row, stall, why in rows:
            table.add_row(*row, *((stall, why) if wide else (stall,)), style="red" if stall == "STALL" else None)
        yield table


def episodes_text(dx: Diagnosis, limit: int, width: int = 120) -> str:
    """The episodes table of ``dx`` (its ``limit`` worst) as plain text: a cluster's member in a terminal."""
    from rich.console import Console

    buffer = io.StringIO()
    table = _EpisodeTable(dx, limit, top_option=False)  # a member's list is not --top's
    Console(file=buffer, width=width, color_system=None, legacy_windows=False).print(table)
    return buffer.getvalue()


def render_text(r: Report, width: int = 120, top: int | None = None) -> str:
    """The terminal report as plain text (for a file)."""
    from rich.console import Console

    buffer = io.StringIO()
    Console(file=buffer, width=width, color_system=None, legacy_windows=False).print(render_table(r, top))
    return buffer.getvalue()
