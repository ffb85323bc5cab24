"""The window summary, for people (rich) and for scripts (JSON)."""

from __future__ import annotations

import json
from typing import Any

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from ckptdiag import __version__
from ckptdiag.analysis.summary import Summary

SCHEMA_VERSION = 1


def _x(value: float | None, spec: str, unit: str = "") -> str:
    return "-" if value is None else format(value, spec) + unit


def summary_json(summary: Summary, source: dict[str, Any], server: dict[str, Any]) -> str:
    """The versioned JSON document (times in ISO 8601 UTC)."""
    doc = {
        "schema_version": SCHEMA_VERSION,
        "tool": {"name": "ckptdiag", "version": __version__},
        "source": source,
        "server": server,
        **summary.to_json(),
    }
    return json.dumps(doc, indent=2, allow_nan=False, default=str) + "\n"


def summary_table(summary: Summary, source: dict[str, Any], server: dict[str, Any]) -> RenderableType:
    """A terminal report: the window, its checkpoints, the cache and the disks."""
    head = Text.assemble(
        (f"{source.get('kind')}: {source.get('path')}\n", "bold"),
        f"server {server.get('version') or '?'} {server.get('host') or ''}; "
        f"{summary.start} to {summary.end}, {summary.samples} samples every {_x(summary.period_s, '.0f')} s; "
        f"{summary.gaps} gaps, {summary.restarts} restarts, "
        f"{summary.samples_without_wiredtiger} samples without wiredTiger",
    )
    ckpt = Table(
        title=f"checkpoints: {len(summary.checkpoints)}, one every {_x(summary.checkpoint_interval_s, '.0f', ' s')}",
        title_justify="left",
    )
    for col in ("completed (UTC)", "duration ms", "MB written"):
        ckpt.add_column(col, justify="right")
    for c in summary.checkpoints[-20:]:
        ckpt.add_row(c.end, _x(c.duration_ms, ",.0f"), _x(c.bytes_written and c.bytes_written / 2**20, ",.1f"))
    disks = Table(title="disks (busiest second)", title_justify="left")
    for col in ("device", "write MB/s", "%util", "w_await ms"):
        disks.add_column(col, justify="right")
    for dev, peak in summary.disks.items():
        disks.add_row(
            dev, _x(peak.write_mb_s_peak, ".1f"), _x(peak.util_pct_peak, ".0f"), _x(peak.w_await_ms_peak, ".1f")
        )
    cache = Text(
        f"cache: dirty up to {_x(summary.dirty_pct_max, '.1f', ' %')}, used up to "
        f"{_x(summary.used_pct_max, '.1f', ' %')}; application threads evicted "
        f"{_x(summary.app_evicted_pages, ',.0f')} pages and waited "
        f"{_x(summary.app_cache_wait_s, ',.1f', ' s')} for cache"
    )
    parts: list[RenderableType] = [head, ckpt, cache, disks]
    if source.get("kind") == "ftdc":
        parts.append(
            Text(
                "FTDC records physical disks only: if dbPath is on LVM or md, these are the disks beneath it.",
                style="dim",
            )
        )
    parts.append(Text("Episode detection, impact and a verdict come with the analysis.", style="dim"))
    return Group(*parts)
