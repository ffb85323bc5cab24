"""The long view's tables (terminal, Markdown): the window's checkpoints by day (or hour)."""

from __future__ import annotations

import html

from ckptdiag.analysis.history import DAY_S, HOUR_S
from ckptdiag.analysis.results import History
from ckptdiag.report.document import iso
from ckptdiag.report.fmt import fmt


def history_rows(h: History) -> tuple[str, list[str], list[list[str]]]:
    """A title, the columns and a row per period, for the terminal and Markdown tables."""
    day = h.period == "day"
    head = ["day UTC" if day else "hour UTC", "ckpts", "stalls", "p50 s", "max s", "p50 MB", "max p99 w ms"]
    rows = [
        [
            (iso(r.start) or "")[:10] if day else (iso(r.start) or "")[5:16].replace("T", " "),
            f"{r.checkpoints:,}",
            f"{r.stalls:,}",
            fmt(r.duration_p50_s, ".2f"),
            fmt(r.duration_max_s, ".2f"),
            fmt(None if r.bytes_p50 is None else r.bytes_p50 / 2**20, ",.1f"),
            fmt(r.write_p99_ms_max, ",.1f"),
        ]
        for r in h.rows
    ]
    return f"by {h.period}", head, rows


PLOT_W, PLOT_H, PAD_L, PAD_B = 880, 160, 60, 30


def history_svg(h: History) -> str:
    """The periods' median checkpoint duration as bars (red where one stalled), their longest as a
    tick, and the duration trend's line: an SVG drawn by hand (no plotting library needed)."""
    rows = h.rows
    top = max((r.duration_max_s or 0.0 for r in rows), default=0.0) or 1.0
    # placed by time: a period without samples has no row, and leaves its place empty
    step = DAY_S if h.period == "day" else HOUR_S
    width = PLOT_W / (round((rows[-1].start - rows[0].start) / step) + 1 if rows else 1)

    def y(v: float) -> float:
        return PLOT_H - v / top * (PLOT_H - 10)

    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{PAD_L + PLOT_W + 10}" height="{PLOT_H + PAD_B}" '
        f'font-family="system-ui,sans-serif" font-size="12" role="img" aria-label="checkpoint duration by {h.period}">',
        f'<text x="4" y="12">s (p50, max)</text><text x="4" y="{y(top) + 14:.1f}">{top:.1f}</text>',
    ]
    for r in rows:
        x = PAD_L + round((r.start - rows[0].start) / step) * width
        label = html.escape(f"{(iso(r.start) or '')[:16]}: {r.checkpoints} checkpoints, {r.stalls} stalled")
        if r.duration_p50_s is not None:
            color = "#c62a2f" if r.stalls else "#4a7fb5"
            parts.append(
                f'<rect x="{x + 1:.1f}" y="{y(r.duration_p50_s):.1f}" width="{max(width - 2, 1):.1f}" '
                f'height="{PLOT_H - y(r.duration_p50_s):.1f}" fill="{color}"><title>{label}</title></rect>'
            )
        if r.duration_max_s is not None:
            parts.append(
                f'<line x1="{x + 1:.1f}" x2="{x + width - 1:.1f}" y1="{y(r.duration_max_s):.1f}" '
                f'y2="{y(r.duration_max_s):.1f}" stroke="#333"/>'
            )
    trend = next((t for t in h.trends if t.figure == "duration_s"), None)
    if trend is not None and trend.significant:
        parts.append(
            f'<line x1="{PAD_L}" y1="{y(trend.first):.1f}" x2="{PAD_L + PLOT_W}" y2="{y(trend.last):.1f}" '
            'stroke="#e08a00" stroke-width="2" stroke-dasharray="6 3"><title>trend</title></line>'
        )
    first, last = (iso(rows[0].start) or "")[:10], (iso(rows[-1].start) or "")[:10]
    parts.append(f'<text x="{PAD_L}" y="{PLOT_H + 20}">{first}</text>')
    parts.append(f'<text x="{PAD_L + PLOT_W}" y="{PLOT_H + 20}" text-anchor="end">{last} (UTC, by {h.period})</text>')
    parts.append("</svg>")
    return "".join(parts)
