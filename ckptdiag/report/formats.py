"""The output formats, in one registry: every command's ``-f`` choices, ``-f auto``'s file
extensions, the fleet's file names and the renderers come from here, so a format is added in this
module (and its tests) alone.

A format renders any :class:`Renderable`: a server's report, a cluster's, a log's, a fleet's
index, a before/after comparison. Each gives its verdict, its JSON document, its Markdown (the
HTML page's body), its terminal text, its charts and its metrics.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol


@dataclass(frozen=True, slots=True)
class Metric:
    """One sample of the OpenMetrics output: a gauge ``name`` with its labels."""

    name: str  # without the ckptdiag_ prefix
    help: str
    value: float | None  # None: not known (left out)
    labels: tuple[tuple[str, str], ...] = ()


class Renderable(Protocol):
    """What every format needs of a report."""

    @property
    def severity(self) -> str:
        """The verdict (ok, warn, critical)."""

    def to_json(self) -> dict[str, Any]:
        """The JSON document."""

    def markdown(self) -> str:
        """The Markdown report (the HTML page's body)."""

    def text(self) -> str:
        """The terminal report, as plain text."""

    def charts(self) -> str | None:
        """What the HTML page shows after the summary (an SVG), if anything."""

    def metrics(self) -> Sequence[Metric]:
        """The figures a monitoring system keeps (OpenMetrics)."""


@dataclass(frozen=True, slots=True)
class Format:
    """An output format: its ``-f`` name, the file extensions that choose it under ``-f auto``
    (the first is what the fleet names its files), what it is for, and its renderer."""

    name: str
    extensions: tuple[str, ...]
    purpose: str
    render: Callable[[Renderable], str]


_REGISTRY: dict[str, Format] = {}


def register(fmt: Format) -> Format:
    """Add (or replace) a format: every command offers it from then on."""
    _REGISTRY[fmt.name] = fmt
    return fmt


def names() -> tuple[str, ...]:
    """Every format's ``-f`` name, in the order they were registered."""
    return tuple(_REGISTRY)


def for_path(path: Path) -> str | None:
    """The format a file's extension chooses (``-f auto``), or None."""
    suffix = path.suffix.lower()
    return next((f.name for f in _REGISTRY.values() if suffix in f.extensions), None)


def known_extensions() -> tuple[str, ...]:
    """Every extension ``-f auto`` knows, as ``.json``, in the registry's order."""
    return tuple(e for f in _REGISTRY.values() for e in f.extensions)


def extension(name: str) -> str:
    """The extension a file in format ``name`` is given (without the dot)."""
    return _REGISTRY[name].extensions[0].lstrip(".")


def render(r: Renderable, name: str) -> str:
    """``r`` in the format called ``name``."""
    return _REGISTRY[name].render(r)


def _json(r: Renderable) -> str:
    from ckptdiag.report.document import render_json

    return render_json(r.to_json())


def _html(r: Renderable) -> str:
    from ckptdiag.report.html_page import page

    return page(r.markdown(), r.severity, r.charts())


SEVERITY_VALUE = {"ok": 0, "warn": 1, "critical": 2}


def openmetrics(metrics: Sequence[Metric]) -> str:
    """Metrics as OpenMetrics text (also read by Prometheus' text parser and node_exporter's
    textfile collector): every family a gauge with its help, ``# EOF`` last."""
    families: dict[str, list[Metric]] = {}
    for m in metrics:
        if m.value is not None and math.isfinite(m.value):
            families.setdefault(m.name, []).append(m)
    lines = []
    for name, samples in families.items():
        full = f"ckptdiag_{name}"
        lines += [f"# HELP {full} {samples[0].help}", f"# TYPE {full} gauge"]
        for m in samples:
            labels = ",".join(f'{k}="{_escape(v)}"' for k, v in m.labels)
            lines.append(f"{full}{{{labels}}} {m.value:.10g}" if labels else f"{full} {m.value:.10g}")
    return "\n".join([*lines, "# EOF"]) + "\n"


def _escape(value: str) -> str:
    return value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


register(Format("table", (".txt",), "the terminal's report (plain text in a file or a pipe)", lambda r: r.text()))
register(Format("json", (".json",), "for scripts (docs/report-json.md)", _json))
register(Format("md", (".md", ".markdown"), "for tickets and mail", lambda r: r.markdown()))
register(Format("html", (".html", ".htm"), "a page to forward, with charts", _html))
register(
    Format(
        "prom",
        (".prom",),
        "OpenMetrics for node_exporter's textfile collector",
        lambda r: openmetrics(r.metrics()),
    )
)
