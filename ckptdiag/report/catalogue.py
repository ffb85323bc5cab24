"""The metric catalogue rendered for people (rich table), documents (Markdown) and scripts (JSON)."""

from __future__ import annotations

import io
import json

from rich.console import Console
from rich.table import Table

from ckptdiag.model import catalogue


def render_catalogue(fmt: str) -> str:
    """The catalogue as ``table``, ``md`` or ``json`` text."""
    if fmt == "md":
        return catalogue.markdown_table()
    if fmt == "json":
        return (
            json.dumps(
                [
                    {
                        "name": m.name,
                        "kind": m.kind.value,
                        "unit": m.unit.value,
                        "description": m.description,
                        "sources": [{"path": s.describe(), "versions": catalogue.version_range(s)} for s in m.sources],
                    }
                    for m in catalogue.METRICS
                ],
                indent=2,
            )
            + "\n"
        )
    table = Table("metric", "kind", "unit", "versions", "serverStatus path")
    for m in catalogue.METRICS:
        for i, s in enumerate(m.sources):
            table.add_row(
                m.name if i == 0 else "",
                m.kind.value if i == 0 else "",
                m.unit.value if i == 0 else "",
                catalogue.version_range(s),
                s.describe(),
            )
    buf = io.StringIO()
    Console(file=buf, width=160).print(table)
    return buf.getvalue()
