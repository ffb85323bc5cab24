"""What ``ckptdiag demo`` prints about a lab run: its checkpoints and what each cost the workload."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from ckptdiag.lab.run import LabRun
from ckptdiag.lab.truth import STALL_RULE, TruthFigures, TruthSummary, figures, match
from ckptdiag.report.compare import Row, rows_table
from ckptdiag.report.fmt import fmt, fmt_ms


def render_lab_run(run: LabRun, detected: list[tuple[float, bool]] | None = None) -> RenderableType:
    """A table of the run's checkpoints (the lab's ground truth), and how the diagnosis's
    ``detected`` episodes (start, stall) line up with them."""
    s = run.summary
    c = run.config
    # the disk the lab really ran on (its truth): a slow disk it could not make fell back
    disk = (run.truth.get("config") or {}).get("disk_mb_s", c.disk_mb_s)
    table = Table(
        title=f"lab checkpoints ({run.truth.get('scenario')}: cache {c.cache_mb} MB, "
        f"dirty {c.eviction_dirty_target}/{c.eviction_dirty_trigger} %, "
        f"checkpoint every {c.checkpoint_s:g} s, {c.write_rate} {'updates' if c.updates else 'inserts'}/s"
        + (" (j:true)" if c.journaled else "")
        + (f", disk {disk} MB/s" if disk else "")
        + ")",
        title_justify="left",
    )
    m = match(s, detected) if detected is not None else None
    names = ["start (UTC)", "duration s", "writes/s vs baseline", "p99 vs baseline", "max ms", "lab truth"]
    for name in names + (["ckptdiag"] if m else []):
        table.add_column(name, justify="right")
    for i, cp in enumerate(s.checkpoints):
        start = dt.datetime.fromtimestamp(cp.start, dt.timezone.utc).strftime("%H:%M:%S")
        cells: list[str | Text] = [
            start,
            fmt(cp.duration_s, ".2f"),
            fmt(cp.ops_ratio and cp.ops_ratio * 100, ".0f") + " %",
            fmt(cp.p99_ratio, ".1f") + "x",
            fmt(cp.max_ms, ".0f"),
            Text("STALL", style="bold red") if cp.stall else Text("no", style="green"),
        ]
        if m:  # the diagnosis beside the truth: flagged, found (not flagged) or missed
            seen = m.verdicts[i] if i < len(m.verdicts) else None
            cells.append(Text("missed", style="red") if seen is None else Text("STALL" if seen else "found"))
        table.add_row(*cells)
    base = (
        f"baseline {fmt(s.baseline_ops, ',.0f')} writes/s, p99 {fmt_ms(s.baseline_p99_ms)}; "
        f"mean {fmt(s.mean_ops, ',.0f')} writes/s; {len(s.checkpoints)} checkpoints, {s.stalls} stalled "
        f"(a stall: {STALL_RULE})"
    )
    parts: list[RenderableType] = [table, Text(base)]
    if s.behind:
        parts.append(Text(s.behind_line(), style="yellow"))
    if run.truth.get("errors"):
        parts.append(Text("lab errors: " + "; ".join(run.truth["errors"]), style="red"))
    if m is not None:
        found = f"ckptdiag against the ground truth: found {m.found} of {m.checkpoints} checkpoints (start within ±1 s)"
        scored = (
            "; its stall flags not scored (the lab could not keep its pace)"
            if s.behind
            else f"; flagged {m.stalls_flagged} of {m.stalls} stalls; {m.false_stalls} flagged without one"
        )
        parts.append(Text(found + scored, style="bold"))
    parts.append(
        Text(
            f"{run.result.samples} samples recorded; keep the recording with -o and run 'ckptdiag report' on it.",
            style="dim",
        )
    )
    return Group(*parts)


TRUTH_ROWS: tuple[tuple[Callable[[TruthFigures], float | None], str, str, str, str], ...] = (
    (lambda f: f.checkpoints, "checkpoints", "", "", ".0f"),
    (lambda f: f.duration_s, "checkpoint duration (p50)", "s", "lower", ".2f"),
    (lambda f: f.p99_inside_ms, "write p99 inside checkpoints (p50 of their worst second)", "ms", "lower", ",.1f"),
    (lambda f: f.p99_inside_max_ms, "write p99 inside checkpoints (worst)", "ms", "lower", ",.1f"),
    (lambda f: f.p99_between_ms, "write p99 between checkpoints", "ms", "lower", ",.2f"),
    (lambda f: f.dip_p50_pct, "throughput dip (p50 of checkpoints)", "%", "lower", ".0f"),
    (lambda f: f.dip_max_pct, "throughput dip (worst checkpoint)", "%", "lower", ".0f"),
    (lambda f: f.mean_writes_s, "mean throughput", "writes/s", "higher", ",.0f"),
    (lambda f: f.stalls, "stalled checkpoints", "", "lower", ".0f"),
    (lambda f: f.stalled_s_per_h, "seconds stalled per hour", "s", "lower", ",.0f"),
    (lambda f: f.lost_per_h, "writes lost per hour", "", "lower", ",.0f"),
)


def truth_rows(before: TruthSummary, after: TruthSummary) -> tuple[Row, ...]:
    """The lab's own before/after figures (per-second writes and latency around each checkpoint)."""
    a, b = figures(before), figures(after)
    return tuple(Row(name, unit, get(a), get(b), better, digits) for get, name, unit, better, digits in TRUTH_ROWS)


def render_truth_compare(before: TruthSummary, after: TruthSummary) -> RenderableType:
    """The ground-truth before/after table."""
    return rows_table(truth_rows(before, after), ("before", "recommended"), title="lab ground truth")
