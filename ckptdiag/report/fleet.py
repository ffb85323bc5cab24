"""The fleet index: every host's verdict on one page, worst first, with where its report is
(JSON: ``fleet``; docs/report-json.md#fleets)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ckptdiag.analysis.fleet import HostVerdict, fleet_severity, worst_first
from ckptdiag.report.document import clean, head
from ckptdiag.report.formats import SEVERITY_VALUE, Metric


@dataclass(frozen=True)
class FleetIndex:
    """The index of a fleet's reports."""

    hosts: tuple[HostVerdict, ...]  # in the hosts file's order

    @property
    def severity(self) -> str:
        """The fleet's verdict: its worst host's."""
        return fleet_severity(self.hosts)

    @property
    def summary(self) -> str:
        """One line: how many hosts, how many stalled, how many could not be diagnosed."""
        counts = {s: sum(1 for h in self.hosts if h.severity == s) for s in ("critical", "warn", "ok")}
        missing = sum(1 for h in self.hosts if not h.diagnosed)
        text = f"{len(self.hosts)} hosts: {counts['critical']} critical, {counts['warn']} warn, {counts['ok']} ok"
        return text + (f", {missing} not diagnosed" if missing else "")

    def to_json(self) -> dict[str, Any]:
        """The JSON document: the fleet's verdict and one entry per host, worst first."""
        doc: dict[str, Any] = clean(
            {
                **head(),
                # the same shape as one server's, so `jq .verdict` reads any document: the worst host's
                "verdict": {
                    "severity": self.severity,
                    "summary": self.summary,
                    "findings": [],
                    "evidence": [],
                    "member": next((h.name for h in worst_first(self.hosts) if h.diagnosed), None),
                },
                "fleet": {
                    "severity": self.severity,
                    "summary": self.summary,
                    "hosts": [_host_json(h) for h in worst_first(self.hosts)],
                },
            }
        )
        return doc

    def metrics(self) -> Sequence[Metric]:
        """Each host's verdict and whether it was diagnosed, labelled with its name."""
        out: list[Metric] = []
        for h in self.hosts:
            label = (("member", h.name),)
            out.append(Metric("diagnosed", "1 when the host could be diagnosed, else 0.", int(h.diagnosed), label))
            if h.severity is not None:
                verdict = SEVERITY_VALUE[h.severity]
                out.append(Metric("verdict", "The verdict: 0 ok, 1 warn, 2 critical.", verdict, label))
        return out

    def markdown(self) -> str:
        """The Markdown index (the HTML page's body)."""
        out = [f"# ckptdiag fleet: {self.severity.upper()}", "", f"**{self.summary}**", ""]
        out += ["| host | kind | verdict | summary | report |", "|---|---|---|---|---|"]
        for h in worst_first(self.hosts):
            report = f"[{h.report}]({h.report})" if h.report else "-"
            out.append(f"| {h.name} | {_kind(h)} | {h.severity or 'not diagnosed'} | {_cell(h.summary)} | {report} |")
        return "\n".join(out) + "\n"

    def charts(self) -> str | None:
        """No chart: the page is its table."""
        return None

    def text(self) -> str:
        """The terminal index."""
        width = max((len(h.name) for h in self.hosts), default=4)
        lines = [f"{self.severity.upper()}  {self.summary}", ""]
        lines.append(f"{'host':<{width}}  {'verdict':<13}  summary")
        for h in worst_first(self.hosts):
            lines.append(f"{h.name:<{width}}  {h.severity or 'not diagnosed':<13}  {h.summary}")
            if h.report:
                lines.append(f"{'':<{width}}  {'':<13}  report: {h.report}")
        return "\n".join(lines) + "\n"


def _kind(h: HostVerdict) -> str:
    return h.kind if h.kind == "server" else f"{h.kind} ({h.members} members)"


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _host_json(h: HostVerdict) -> dict[str, Any]:
    return {
        "line": h.line,
        "name": h.name,
        "target": h.target,
        "kind": h.kind,
        "members": h.members,
        "severity": h.severity,
        "diagnosed": h.diagnosed,
        "summary": h.summary,
        "report": h.report,
    }
