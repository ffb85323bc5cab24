"""One renderer for the reports that are not a single server's full report (a log alone, a
cluster): each gives its JSON document, its Markdown and its terminal text."""

from __future__ import annotations

import json
from typing import Any, Protocol


class TextReport(Protocol):
    """What :func:`render` needs of a report."""

    @property
    def severity(self) -> str:
        """The verdict (ok, warn, critical)."""

    def to_json(self) -> dict[str, Any]:
        """The JSON document."""

    def markdown(self) -> str:
        """The Markdown report (the HTML page's body)."""

    def text(self) -> str:
        """The terminal report."""

    def charts(self) -> str | None:
        """What the HTML page shows after the summary (an SVG), if anything."""


def render(r: TextReport, fmt: str) -> str:
    """``r`` in ``fmt`` (json, md, html, table)."""
    if fmt == "json":
        return json.dumps(r.to_json(), indent=2) + "\n"
    if fmt == "md":
        return r.markdown()
    if fmt == "html":
        from ckptdiag.report.html_page import page

        return page(r.markdown(), r.severity, r.charts())
    return r.text()
