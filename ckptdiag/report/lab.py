"""What ``ckptdiag demo`` prints about a lab run: its checkpoints and what each cost the workload."""

from __future__ import annotations

import datetime as dt

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from ckptdiag.lab.run import LabRun
from ckptdiag.lab.truth import match
from ckptdiag.report.fmt import fmt


def render_lab_run(run: LabRun, detected: list[tuple[float, bool]] | None = None) -> RenderableType:
    """A table of the run's checkpoints (the lab's ground truth), and how the diagnosis's
    ``detected`` episodes (start, stall) line up with them."""
    s = run.summary
    c = run.config
    table = Table(
        title=f"lab checkpoints ({run.truth.get('scenario')}: cache {c.cache_mb} MB, "
        f"dirty {c.eviction_dirty_target}/{c.eviction_dirty_trigger} %, "
        f"checkpoint every {c.checkpoint_s:g} s, {c.write_rate} inserts/s)",
        title_justify="left",
    )
    for name in ("start (UTC)", "duration s", "writes/s vs baseline", "p99 vs baseline", "max ms", "stall"):
        table.add_column(name, justify="right")
    for cp in s.checkpoints:
        start = dt.datetime.fromtimestamp(cp.start, dt.timezone.utc).strftime("%H:%M:%S")
        table.add_row(
            start,
            fmt(cp.duration_s, ".2f"),
            fmt(cp.ops_ratio and cp.ops_ratio * 100, ".0f") + " %",
            fmt(cp.p99_ratio, ".1f") + "x",
            fmt(cp.max_ms, ".0f"),
            Text("STALL", style="bold red") if cp.stall else Text("no", style="green"),
        )
    base = (
        f"baseline {fmt(s.baseline_ops, ',.0f')} writes/s, p99 {fmt(s.baseline_p99_ms, '.2f')} ms; "
        f"mean {fmt(s.mean_ops, ',.0f')} writes/s; {len(s.checkpoints)} checkpoints, {s.stalls} stalled "
        f"(a stall: writes/s <= 60 % and p99 >= 10x the baseline)"
    )
    parts: list[RenderableType] = [table, Text(base)]
    if run.truth.get("errors"):
        parts.append(Text("lab errors: " + "; ".join(run.truth["errors"]), style="red"))
    if detected is not None:
        m = match(s, detected)
        parts.append(
            Text(
                f"ckptdiag against the ground truth: found {m.found} of {m.checkpoints} checkpoints (start within "
                f"±1 s); flagged {m.stalls_flagged} of {m.stalls} stalls; {m.false_stalls} flagged without one",
                style="bold",
            )
        )
    parts.append(
        Text(
            f"{run.result.samples} samples recorded; keep the recording with -o and run 'ckptdiag report' on it.",
            style="dim",
        )
    )
    return Group(*parts)
