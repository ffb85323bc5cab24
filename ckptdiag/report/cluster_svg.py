"""The cluster's timeline as an SVG drawn by hand (no plotting library needed): one lane per member
on one time axis, each checkpoint a blue bar, each stalled checkpoint a red one."""

from __future__ import annotations

import datetime as dt
import html
from collections.abc import Sequence

from ckptdiag.analysis.results import Diagnosis

LABEL_W, LANE_H, PLOT_W, AXIS_H = 220, 24, 880, 34


def timeline_svg(members: Sequence[tuple[str, Diagnosis]]) -> str | None:
    """Every member's checkpoints and stalls on one time axis, or None without members."""
    if not members:
        return None
    start = min(dx.start for _, dx in members)
    end = max(dx.end for _, dx in members)
    span = max(end - start, 1e-9)

    def x(t: float) -> float:
        return LABEL_W + (t - start) / span * PLOT_W

    height = LANE_H * len(members) + AXIS_H
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{LABEL_W + PLOT_W + 10}" height="{height}" '
        f'font-family="system-ui,sans-serif" font-size="12" role="img" aria-label="checkpoints of every member">'
    ]
    for row, (name, dx) in enumerate(members):
        y = row * LANE_H
        label = html.escape(f"{name} ({dx.role})" if dx.role else name)
        parts.append(f'<text x="4" y="{y + 16}">{label}</text>')
        parts.append(
            f'<rect x="{x(dx.start):.1f}" y="{y + 4}" width="{max(x(dx.end) - x(dx.start), 1):.1f}" '
            f'height="{LANE_H - 8}" fill="#eef1f4"><title>{label}: recorded</title></rect>'
        )
        for e in dx.episodes:
            stop = e.end if e.end is not None else dx.end
            color = "#c62a2f" if e.stall else "#4a7fb5"
            when = dt.datetime.fromtimestamp(e.start, dt.timezone.utc).strftime("%H:%M:%S")
            title = f"{when} UTC, {stop - e.start:.0f} s{': stalled' if e.stall else ''}"
            parts.append(
                f'<rect x="{x(e.start):.1f}" y="{y + 4}" width="{max(x(stop) - x(e.start), 1.5):.1f}" '
                f'height="{LANE_H - 8}" fill="{color}"><title>{html.escape(title)}</title></rect>'
            )
    axis_y = LANE_H * len(members) + 4
    parts.append(f'<line x1="{LABEL_W}" y1="{axis_y}" x2="{LABEL_W + PLOT_W}" y2="{axis_y}" stroke="#888"/>')
    for k in range(6):
        t = start + span * k / 5
        stamp = dt.datetime.fromtimestamp(t, dt.timezone.utc)
        text = stamp.strftime("%Y-%m-%d %H:%M" if k == 0 else "%H:%M:%S")
        anchor = "start" if k == 0 else "end" if k == 5 else "middle"
        parts.append(f'<text x="{x(t):.1f}" y="{axis_y + 16}" text-anchor="{anchor}">{text}</text>')
    parts.append(
        f'<text x="4" y="{axis_y + 16}" fill="#666">UTC; <tspan fill="#c62a2f">stalled</tspan>, '
        '<tspan fill="#4a7fb5">checkpoint</tspan></text>'
    )
    parts.append("</svg>")
    return "".join(parts)
