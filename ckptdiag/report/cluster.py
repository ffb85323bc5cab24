"""The cluster report: every member's verdict side by side, the findings that need them together,
then each member's own report (JSON: ``cluster`` and ``members``; docs/report-json.md#clusters)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ckptdiag.analysis.cluster import ClusterDiagnosis, MemberSummary
from ckptdiag.report.document import Report, clean, head, iso, to_document
from ckptdiag.report.formats import SEVERITY_VALUE, Metric


@dataclass(frozen=True)
class ClusterReport:
    """Several members' reports and the cluster view over them."""

    dx: ClusterDiagnosis
    members: tuple[tuple[str, Report], ...]
    skipped: tuple[str, ...] = ()  # members that could not be read, with why

    @property
    def severity(self) -> str:
        """The verdict (ok, warn, critical)."""
        return self.dx.severity

    def to_json(self) -> dict[str, Any]:
        """The JSON document: the cluster view, then each member's full report."""
        worst = next((r for name, r in self.members if name == self.dx.worst), None)
        doc: dict[str, Any] = clean(
            {
                **head(),
                # the same shape as one server's, so `jq .verdict` reads any document: the worst member's
                "verdict": {
                    "severity": self.dx.severity,
                    "summary": self.dx.summary,
                    "findings": list(self.dx.findings),
                    "evidence": list(worst.dx.evidence) if worst is not None else [],
                    "member": self.dx.worst,
                },
                "cluster": {
                    "severity": self.dx.severity,
                    "worst_member": self.dx.worst,
                    "summary": self.dx.summary,
                    "findings": list(self.dx.findings),
                    "members": [_member_json(m) for m in self.dx.members],
                    "skipped": list(self.skipped),
                },
                "members": [{"name": name, "report": to_document(r)} for name, r in self.members],
            }
        )
        return doc

    def metrics(self) -> Sequence[Metric]:
        """Every member's figures, labelled with its name, and the cluster's verdict."""
        from ckptdiag.report.server import server_metrics

        out = [Metric("cluster_verdict", "The cluster's verdict (its worst member's): 0 ok, 1 warn, 2 critical.",
                      SEVERITY_VALUE[self.severity])]  # fmt: skip
        for name, r in self.members:
            out += server_metrics(r.dx, name)
        return out

    def markdown(self) -> str:
        """The Markdown report: the cluster, then each member's report one heading level down."""
        from ckptdiag.report.markdown import render_markdown

        d = self.dx
        out = [f"# ckptdiag cluster: {d.severity.upper()}", "", f"**{d.summary}**", ""]
        if d.findings:
            out += ["## Findings", ""] + [f"- {f}" for f in d.findings] + [""]
        out += ["## Members", "", "| member | role | verdict | checkpoints | stalls |", "|---|---|---|---|---|"]
        out += [f"| {m.name} | {m.role or '-'} | {m.severity} | {m.checkpoints} | {m.stalls} |" for m in d.members]
        out += ["", "## Timeline (every member on one time axis)", "", "```", *self.timeline(), "```"]
        out += [""] + [f"- skipped: {s}" for s in self.skipped]
        for name, r in self.members:
            body = render_markdown(r).replace("\n#", "\n##")
            out += ["", f"## {name}", "", body.removeprefix("# ").split("\n", 1)[1]]
        return "\n".join(out).rstrip("\n") + "\n"

    def timeline(self) -> list[str]:
        """Every member's checkpoints and stalls on one time axis (``#`` stall, ``|`` checkpoint)."""
        windows = [(r.dx.start, r.dx.end) for _, r in self.members]
        if not windows:
            return []
        start, end = min(w[0] for w in windows), max(w[1] for w in windows)
        width = max((len(n) for n, _ in self.members), default=0)
        rows = [f"{name:<{width}}  {_marks(r, start, end, TIMELINE_WIDTH)}" for name, r in self.members]
        return [*rows, f"{'':<{width}}  {iso(start)} .. {iso(end)}  (# stalled checkpoint, | checkpoint)"]

    def charts(self) -> str | None:
        """The members' checkpoints and stalls on one time axis (SVG)."""
        from ckptdiag.report.cluster_svg import timeline_svg

        svg = timeline_svg([(name, r.dx) for name, r in self.members])
        return f'<div class="charts">{svg}</div>' if svg else None

    def text(self) -> str:
        """The terminal report: the members table, the findings, then each member's worst
        checkpoints (its whole report is in the other formats)."""
        from ckptdiag.report.terminal import episodes_text

        d = self.dx
        width = max((len(m.name) for m in d.members), default=6)
        said = f"; each member's {MEMBER_TOP} worst checkpoints below (whole reports: -f md, html or json)"
        lines = [f"{d.severity.upper()}  {d.summary}{said if self.members else ''}", ""]
        lines.append(f"{'member':<{width}}  {'role':<9}  {'verdict':<8}  {'ckpts':>5}  {'stalls':>6}  summary")
        for m in d.members:
            role = m.role or "-"
            counts = f"{m.checkpoints:>5}  {m.stalls:>6}"
            lines.append(f"{m.name:<{width}}  {role:<9}  {m.severity:<8}  {counts}  {m.summary}")
        lines += ["", *self.timeline()]
        lines += [""] + [f"• {f}" for f in d.findings] + [f"skipped: {s}" for s in self.skipped]
        for name, r in self.members:
            lines += ["", f"── {name}: {r.dx.severity.upper()}  {r.dx.summary}"]
            lines += episodes_text(r.dx, MEMBER_TOP).rstrip("\n").splitlines() if r.dx.episodes else ["no checkpoint"]
        return "\n".join(lines).rstrip("\n") + "\n"


TIMELINE_WIDTH = 96
MEMBER_TOP = 5  # checkpoints listed per member in a terminal (the worst, in time order)


def _marks(report: Report, start: float, end: float, width: int) -> str:
    """One member's row: ``#`` where a checkpoint stalled it, ``|`` a checkpoint, ``.`` samples,
    `` `` none, over ``width`` equal bins of [start, end]."""
    row = [" "] * width
    tl = report.dx.timeline
    if tl is None or tl.empty:
        return "".join(row)
    span = max(end - start, 1e-9)
    for t, ckpt, stall in zip(tl["t"].tolist(), tl["checkpoint"].tolist(), tl["stall"].tolist(), strict=True):
        i = min(int((t - start) / span * width), width - 1)
        mark = "#" if stall else "|" if ckpt else "."
        if row[i] == " " or "#|.".index(mark) < "#|.".index(row[i]):
            row[i] = mark
    return "".join(row)


def _member_json(m: MemberSummary) -> dict[str, Any]:
    return {
        "name": m.name,
        "role": m.role,
        "severity": m.severity,
        "checkpoints": m.checkpoints,
        "stalls": m.stalls,
        "summary": m.summary,
        "repl_lag_growth_s_max": m.repl_lag_growth_s,
        "primary_write_latency_ratio_during_stalls": m.primary_latency_ratio,
        "primary_write_concern_wait_ms": (
            {"outside_stalls": m.primary_wc_wait_ms[0], "during_stalls_max": m.primary_wc_wait_ms[1]}
            if m.primary_wc_wait_ms is not None
            else None
        ),
    }
