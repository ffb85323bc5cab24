"""The report of a mongod log alone: the same verdict, log section and formats as a full report,
with the checkpoints the log's messages give (the weaker evidence, said in its summary)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ckptdiag import __version__
from ckptdiag.analysis.logonly import LogOnlyDiagnosis
from ckptdiag.recording import utc_iso
from ckptdiag.report.document import clean, head, iso
from ckptdiag.report.formats import SEVERITY_VALUE, Metric
from ckptdiag.report.logsection import LogSection


@dataclass(frozen=True)
class LogOnlyReport:
    """A report whose only source is mongod's log."""

    dx: LogOnlyDiagnosis
    log: LogSection
    path: str

    @property
    def severity(self) -> str:
        """The verdict (ok, warn, critical)."""
        return self.dx.severity

    def to_json(self) -> dict[str, Any]:
        """The JSON document (docs/report-json.md#log-only-reports): a full report's keys where the
        log can fill them, ``source.kind`` ``log``."""
        dx = self.dx
        doc: dict[str, Any] = clean(
            {
                **head(),
                "source": {"kind": "log", "path": self.path, "damaged": list(self.log.damaged)},
                "window": {"start": iso(dx.start), "end": iso(dx.end)},
                "verdict": {
                    "severity": dx.severity,
                    "summary": dx.summary,
                    "findings": list(dx.findings),
                    "evidence": list(dx.evidence),
                },
                "checkpoints": {
                    "count": len(dx.episodes),
                    "period_s": dx.period_s,
                    "episodes": [
                        {
                            "start": iso(e.start),
                            "duration_s": e.duration_s,
                            "exact_duration": e.exact_duration,
                            "evidence": e.evidence,
                            "slow_ops": n,
                            "longest_slow_op_ms": longest,
                        }
                        for e, (n, longest) in zip(dx.episodes, dx.per_episode, strict=True)
                    ],
                },
                "slow_op_bursts": [
                    {"start": utc_iso(t0), "end": utc_iso(t1), "slow_ops": n} for t0, t1, n in dx.bursts
                ],
                "log": self.log.to_json(),
            }
        )
        return doc

    def markdown(self) -> str:
        """The Markdown report (and the HTML report's body)."""
        dx = self.dx
        out = [f"# ckptdiag: {dx.severity.upper()}", "", f"**{dx.summary}**", "", f"- source: mongod log `{self.path}`"]
        out += [f"- window: {iso(dx.start)} to {iso(dx.end)}", ""]
        if dx.findings or dx.evidence:
            out += ["## Findings", ""] + [f"- {n}" for n in (*dx.findings, *dx.evidence)] + [""]
        out += ["## mongod log: slow operations and checkpoints", ""] + [f"- {x}" for x in self.log.lines_for_report()]
        if dx.episodes:
            out += [
                "",
                "## Checkpoints (from the log's messages)",
                "",
                "| start | duration | slow ops |",
                "|---|---|---|",
            ]
            for e, (n, _) in zip(dx.episodes, dx.per_episode, strict=True):
                duration = f"{e.duration_s:g} s" if e.duration_s is not None else "-"
                out.append(f"| {iso(e.start)} | {duration} | {n} |")
        out += ["", f"_ckptdiag {__version__}_"]
        return "\n".join(out) + "\n"

    def charts(self) -> str | None:
        """No chart: a log alone has no sampled timeline to draw."""
        return None

    def metrics(self) -> Sequence[Metric]:
        """The verdict and what the log's checkpoint messages give."""
        dx = self.dx
        longest = max((e.duration_s for e in dx.episodes if e.duration_s is not None), default=None)
        return [
            Metric("verdict", "The verdict: 0 ok, 1 warn, 2 critical.", SEVERITY_VALUE[dx.severity]),
            Metric("checkpoints", "Checkpoints in the window.", len(dx.episodes)),
            Metric("checkpoint_duration_seconds", "The longest checkpoint the log's messages give.", longest,
                   (("stat", "max"),)),
        ]  # fmt: skip

    def text(self) -> str:
        """The terminal report (plain text: the log has no timeline to draw)."""
        dx = self.dx
        lines = [f"mongod log: {self.path}", f"{dx.severity.upper()}  {dx.summary}"]
        lines += [f"• {n}" for n in (*dx.findings, *dx.evidence)] + self.log.lines_for_report()
        return "\n".join(lines) + "\n"
