"""One server's report as a :class:`~ckptdiag.report.formats.Renderable`: what every format
reads of it (the JSON document, Markdown, terminal text, charts, metrics)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ckptdiag.analysis.results import Diagnosis
from ckptdiag.report.document import Report, to_document
from ckptdiag.report.formats import SEVERITY_VALUE, Metric


@dataclass(frozen=True)
class ServerView:
    """A server's report, listing its ``top`` worst episodes in tables (None: each format's
    default; 0: all)."""

    report: Report
    top: int | None = None

    @property
    def severity(self) -> str:
        """The verdict."""
        return self.report.dx.severity

    def to_json(self) -> dict[str, Any]:
        """The JSON document (docs/report-json.md)."""
        return to_document(self.report, self.top)

    def markdown(self) -> str:
        """The Markdown report."""
        from ckptdiag.report.markdown import render_markdown

        return render_markdown(self.report, self.top)

    def text(self) -> str:
        """The terminal report as plain text."""
        from ckptdiag.report.terminal import render_text

        return render_text(self.report, top=self.top)

    def charts(self) -> str | None:
        """The timeline's charts (with the plotting extra) and the long view's."""
        from ckptdiag.report.html_page import server_charts

        return server_charts(self.report)

    def metrics(self) -> Sequence[Metric]:
        """The verdict and the checkpoints' figures, labelled with the server."""
        dx = self.report.dx
        return server_metrics(dx, dx.facts.host or "server")


def server_metrics(dx: Diagnosis, member: str) -> list[Metric]:
    """One server's figures for a monitoring system, each labelled ``member``."""
    label = (("member", member),)
    done = dx.episodes.take(dx.episodes.known("end"))
    durations, written = done.present("duration_s"), done.present("bytes_written")
    out = [
        Metric("verdict", "The verdict: 0 ok, 1 warn, 2 critical.", SEVERITY_VALUE[dx.severity], label),
        Metric("checkpoints", "Checkpoints in the window.", len(dx.episodes), label),
        Metric("checkpoint_stalls", "Checkpoints that stalled the server in the window.", dx.stalls, label),
        Metric(
            "checkpoint_stall_ratio",
            "The share of the window's checkpoints that stalled the server.",
            dx.stalls / len(dx.episodes) if dx.episodes else None,
            label,
        ),
        Metric("window_end_seconds", "The window's last sample (Unix time).", dx.end, label),
    ]
    for name, values, unit in (("checkpoint_duration_seconds", durations, "s"), ("checkpoint_bytes", written, "bytes")):
        what = f"The window's checkpoints' {'duration' if unit == 's' else 'bytes written'}: p50, p99 and max."
        for stat, q in (("p50", 50.0), ("p99", 99.0), ("max", 100.0)):
            value = float(np.percentile(values, q)) if values.size else None
            out.append(Metric(name, what, value, (*label, ("stat", stat))))
    return out
