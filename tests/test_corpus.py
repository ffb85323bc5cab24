"""Every real input in ../shared/data, in every format: a report, or a named one-line error.

Nothing a DBA can point ckptdiag at may end in "unexpected": each FTDC file, each directory of
them, and each recording completes in table, JSON, Markdown and HTML, and the JSON validates
against the documented schema (docs/report-schema.json).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import REPO, SHARED_DATA

from ckptdiag.errors import CkptdiagError
from ckptdiag.report.document import render_json, to_document
from ckptdiag.report.html_page import render_html
from ckptdiag.report.markdown import render_markdown
from ckptdiag.report.terminal import render_text
from ckptdiag.workflows.report import diagnose_window

jsonschema = pytest.importorskip("jsonschema")

_NOT_FTDC = {".npz", ".paths", ".md", ".json", ".tsv", ".txt", ".csv", ".gz"}


def _inputs() -> list[Path]:
    """Every FTDC file and every folder that holds FTDC files, and every recording."""
    if not SHARED_DATA.is_dir():
        return []
    files = sorted(
        p
        for folder in ("ftdc", "ftdc-synthetic")
        for p in (SHARED_DATA / folder).rglob("*")
        if p.is_file() and p.suffix not in _NOT_FTDC
    )
    folders = sorted({p.parent for p in files if p.name.startswith("metrics.") or "metrics." in p.name})
    recordings = sorted(SHARED_DATA.rglob("*.jsonl*"))
    return [*files, *folders, *recordings]


INPUTS = _inputs()
SCHEMA = json.loads((REPO / "docs" / "report-schema.json").read_text())


def test_the_corpus_is_there_or_skipped() -> None:
    if not INPUTS:
        pytest.skip("shared data not available")
    assert len(INPUTS) > 100  # the files, the folders, the recordings


@pytest.mark.parametrize("path", INPUTS, ids=lambda p: str(p.relative_to(SHARED_DATA)))
def test_every_real_input_reports_in_every_format_or_names_its_error(path: Path) -> None:
    try:
        report = diagnose_window((path,), None, None)
    except CkptdiagError as exc:  # a named error: one line, with its hint
        line = exc.one_line()
        assert "\n" not in line and "unexpected" not in line and line
        return
    doc = to_document(report)
    jsonschema.validate(doc, SCHEMA)
    assert json.loads(render_json(doc)) == json.loads(json.dumps(doc))  # plain JSON: no NaN, no numpy
    assert render_markdown(report).startswith(f"# ckptdiag: {report.dx.severity.upper()}")
    assert f'<h1 class="{report.dx.severity}">' in render_html(report)
    assert report.dx.summary in " ".join(render_text(report).split())
