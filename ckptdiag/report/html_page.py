"""The HTML report: the Markdown report as a self-contained page, with charts when the plotting
extra (matplotlib) is installed."""

from __future__ import annotations

import html
import io
import re
from typing import Any

import numpy as np
import pandas as pd

from ckptdiag.analysis.results import Diagnosis
from ckptdiag.analysis.timeline import ops_line
from ckptdiag.report.document import Report
from ckptdiag.report.history import history_svg
from ckptdiag.report.interactive import timeline_html
from ckptdiag.report.markdown import render_markdown

HTML_EXTRA_HINT = "pip install 'ckptdiag[html]'"


def _charts_svg(
    dx: Diagnosis, spans: list[tuple[float, float, bool]], slow: tuple[tuple[float, float], ...] = ()
) -> str | None:
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
    ops_label, ops_column = ops_line(tl)
    series = [
        (label, column, color)
        for label, column, color in (
            (ops_label, ops_column, "tab:green"),
            ("dirty %", "dirty_pct", "tab:orange"),
            ("disk MB/s", "disk_mb_s", "tab:purple"),
        )
        if tl[column].notna().any()
    ]
    rows = len(series) + (1 if slow else 0)
    fig, axes = plt.subplots(rows, 1, figsize=(11, 2.2 * rows), sharex=True, squeeze=False)
    for ax, (label, column, color) in zip(axes[:, 0], series, strict=False):
        values = tl[column].to_numpy(dtype="float64")
        ax.plot(times, values, color=color, linewidth=0.9)
        ax.set_ylabel(label)
        _robust_top(ax, values)
        if column == "dirty_pct":
            _dirty_lines(ax, dx, values)
    _time_axis(axes[-1, 0])
    if slow:  # the log's slow operations on the same timeline, one dot each at its end
        ax = axes[-1, 0]
        ax.scatter(pd.to_datetime([t for t, _ in slow], unit="s", utc=True), [ms for _, ms in slow], s=4, color="black")
        ax.set_ylabel("slow ops (ms)")
        ax.set_yscale("log")
    _shade(axes[:, 0], spans)
    axes[-1, 0].set_xlabel("UTC (red: stalled checkpoint, blue: checkpoint)")
    # fixed margins: tight_layout drew every figure twice (a third of an HTML report's time)
    inches = 2.2 * rows
    fig.subplots_adjust(left=0.1, right=0.99, top=1 - 0.1 / inches, bottom=0.6 / inches, hspace=0.12)
    buffer = io.StringIO()
    fig.savefig(buffer, format="svg")
    plt.close(fig)
    svg = buffer.getvalue()
    return svg[svg.find("<svg") :]


ROBUST_QUANTILE = 99.5  # an axis' top: a few spikes must not flatten the steady load to a line


def _robust_top(ax: Any, values: np.ndarray) -> None:
    """The axis up to the 99.5th percentile (with room) where a few spikes reach far above it;
    the spikes run off the top, and the label says the axis is cut."""
    finite = values[np.isfinite(values)]
    if finite.size < 20:
        return
    top, peak = float(np.percentile(finite, ROBUST_QUANTILE)), float(finite.max())
    if top > 0 and peak > 2 * top:
        ax.set_ylim(bottom=min(0.0, float(finite.min())), top=top * 1.15)
        ax.set_ylabel(f"{ax.get_ylabel()}\n(peaks to {peak:,.0f} cut)")


def _dirty_lines(ax: Any, dx: Diagnosis, values: np.ndarray) -> None:
    """The dirty target and trigger in force: in the axis label, and as dashed lines where dirty
    data comes near them (a trigger at 20 % drawn over 2 % of dirty data would flatten it)."""
    ev = dx.settings.eviction
    target, trigger = ev.dirty_target.number, ev.dirty_trigger.number
    if not (0 < target <= 100 and 0 < trigger <= 100):
        return
    ax.set_ylabel(f"{ax.get_ylabel()}\n(target {target:g}, trigger {trigger:g})")
    finite = values[np.isfinite(values)]
    near = 1.5 * float(finite.max()) if finite.size else 0.0
    for value, name, style in ((target, "target", "--"), (trigger, "trigger", ":")):
        if value <= near:
            ax.axhline(value, color="tab:red", linestyle=style, linewidth=0.8)
            ax.annotate(
                f"dirty {name} {value:g} %",
                (0.995, value),
                xycoords=("axes fraction", "data"),
                ha="right",
                va="bottom",
                fontsize=7,
                color="tab:red",
            )


def _time_axis(ax: Any) -> None:
    """Dates and times a reader can read at any span (minutes to weeks), in UTC."""
    from matplotlib.dates import AutoDateLocator, ConciseDateFormatter  # type: ignore[import-not-found,unused-ignore]

    locator = AutoDateLocator(tz="UTC")  # type: ignore[no-untyped-call,unused-ignore]
    ax.xaxis.set_major_locator(locator)
    ax.xaxis.set_major_formatter(ConciseDateFormatter(locator, tz="UTC"))  # type: ignore[no-untyped-call,unused-ignore]


def _shade(axes: Any, spans: list[tuple[float, float, bool]]) -> None:
    """The checkpoints as shaded bands over each chart: one collection of rectangles a kind
    (checkpoint, stall), full height whatever the axis' scale (one artist per band cost 1 ms each)."""
    from matplotlib.collections import PolyCollection  # type: ignore[import-not-found,unused-ignore]
    from matplotlib.dates import date2num  # type: ignore[import-not-found,unused-ignore]

    for ax in axes:
        ax.grid(alpha=0.3)
        for stalled in (False, True):
            chosen = [(s, e) for s, e, st in spans if st == stalled]
            if not chosen:
                continue
            starts = date2num(pd.to_datetime([s for s, _ in chosen], unit="s", utc=True))  # type: ignore[no-untyped-call,unused-ignore]
            ends = date2num(pd.to_datetime([e for _, e in chosen], unit="s", utc=True))  # type: ignore[no-untyped-call,unused-ignore]
            boxes = [[(a, 0.0), (a, 1.0), (b, 1.0), (b, 0.0)] for a, b in zip(starts, ends, strict=True)]
            color = "red" if stalled else "tab:blue"
            # an edge as wide as a line: a 28 ms checkpoint in a day is still seen
            alpha = 0.35 if stalled else 0.3  # 0.15 was nearly invisible in an OK report
            bands = PolyCollection(boxes, facecolors=color, edgecolors=color, alpha=alpha, linewidths=0.6)
            bands.set_transform(ax.get_xaxis_transform())  # x in dates, y the axis' full height
            ax.add_collection(bands, autolim=False)


SHADED_MAX = 600  # spans a chart shades one by one; beyond, the timeline's buckets are shaded instead


def _shaded(dx: Diagnosis) -> list[tuple[float, float, bool]]:
    """The spans to shade (start, end, stalled): each checkpoint where there are few, else the
    runs of timeline buckets a checkpoint touched (a 10-day window's 14,000 checkpoints shaded one
    by one took 30 s to draw; at 600 buckets across 900 pixels they look the same)."""
    if len(dx.episodes) <= SHADED_MAX or dx.timeline is None or dx.timeline.empty:
        return [(e.start, max(e.end if e.end is not None else dx.end, e.start + 0.5), e.stall) for e in dx.episodes]
    tl = dx.timeline
    t = tl["t"].to_numpy(dtype="float64")
    width = float(t[1] - t[0]) if t.size > 1 else 1.0
    out: list[tuple[float, float, bool]] = []
    for stalled in (False, True):
        marked = tl["stall" if stalled else "checkpoint"].to_numpy(dtype=bool)
        edges = np.flatnonzero(np.diff(np.concatenate(([0], marked.astype(np.int8), [0]))))
        out += [(float(t[a]), float(t[b - 1]) + width, stalled) for a, b in zip(edges[::2], edges[1::2], strict=True)]
    return out


def _inline(line: str) -> str:
    text = html.escape(line)
    text = re.sub(r"\*\*(.+?)\*\*", r"<strong>\1</strong>", text)
    # a whole line in _emphasis_ (the footer: "_ckptdiag 0.1.0; units ..._" showed its underscores)
    text = re.sub(r"^_(.+)_$", r"<em>\1</em>", text)
    return re.sub(r"`(.+?)`", r"<code>\1</code>", text)


def _block(line: str, severity: str) -> str | None:
    """One Markdown line (not a table row or a code line) as HTML; None for a blank line."""
    text = _inline(line)
    if line.startswith("# "):
        return f'<h1 class="{severity}">{text[2:]}</h1>'
    if line.startswith("### "):
        return f"<h3>{text[4:]}</h3>"
    if line.startswith("## "):
        return f"<h2>{text[3:]}</h2>"
    if line.startswith("- "):
        return f"<li>{text[2:]}</li>"
    return f"<p>{text}</p>" if line else None


def markdown_body(md: str, severity: str) -> list[str]:
    """The subset of Markdown the reports write (headings, lists, tables, code blocks) as HTML parts."""
    body: list[str] = []
    table: list[str] = []
    code: list[str] | None = None
    for line in md.splitlines():
        if line.startswith("```"):
            if code is not None:
                body.append("<pre><code>" + html.escape("\n".join(code)) + "</code></pre>")
            code = [] if code is None else None
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
        part = _block(line, severity)
        if part is not None:
            body.append(part)
    if table:
        body.append("<table>" + "".join(table) + "</table>")
    return body


_CSS = (
    "body{font-family:system-ui,sans-serif;max-width:1200px;margin:2em auto;color:#222}"
    "h1.ok{color:#18794e}h1.warn{color:#ad5700}h1.critical{color:#c62a2f}"
    "table{border-collapse:collapse;font-size:90%}td,th{border:1px solid #ccc;padding:2px 6px;text-align:right;"
    "white-space:nowrap}td:last-child,th:last-child{text-align:left;white-space:normal}"
    ".hint{color:#666}svg{max-width:100%;height:auto}"
    "pre{background:#f6f8fa;padding:.6em;overflow-x:auto}"
)


def render_html(r: Report, top: int | None = None) -> str:
    """A self-contained HTML page: verdict, charts (with the plotting extra), tables."""
    return page(render_markdown(r, top), r.dx.severity, server_charts(r))


def server_charts(r: Report) -> str:
    """A server report's charts: the timeline's (with the plotting extra, else a hint) and the
    long view's (drawn by hand: there with or without it)."""
    dx = r.dx
    spans = _shaded(dx)  # the checkpoints' bands, for the static charts and the interactive one
    svg = _charts_svg(dx, spans, r.log.points if r.log is not None else ())
    charts = (
        f'<div class="charts">{svg}</div>'
        if svg
        else f'<p class="hint">Charts need the plotting extra: <code>{html.escape(HTML_EXTRA_HINT)}</code></p>'
    )
    interactive = timeline_html(dx, spans)
    if interactive is not None:  # zoomable on screen; the static charts for print and without JavaScript
        charts = interactive + f'<div class="static-charts">{charts}</div>'
    if dx.history is not None:
        charts += f'<div class="charts">{history_svg(dx.history)}</div>'
    return charts


def page(markdown: str, severity: str, charts: str | None = None) -> str:
    """A self-contained HTML page of a Markdown report, ``charts`` right after its summary."""
    body = markdown_body(markdown, severity)
    if charts:
        at = next((i for i, part in enumerate(body) if part.startswith("<p><strong>")), 0) + 1
        body.insert(at, charts)
    return (
        f'<!doctype html>\n<html lang="en"><head><meta charset="utf-8"><title>ckptdiag: {severity}</title>'
        f"<style>{_CSS}</style></head><body>\n" + "\n".join(body) + "\n</body></html>\n"
    )
