"""Every real input in ../shared/data, in every format: a report, or a named one-line error.

Nothing a DBA can point ckptdiag at may end in "unexpected": each FTDC file, each directory of
them, and each recording completes in table, JSON, Markdown and HTML, and the JSON validates
against the documented schema (docs/report-schema.json).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from conftest import REPO, SHARED_DATA

from ckptdiag.analysis.thresholds import HURT_OPS_RATIO
from ckptdiag.analysis.verdict import GONE
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
        report = diagnose_window((path,))
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
    _story_holds(doc)


def _story_holds(doc: dict[str, Any]) -> None:
    """What the story says is what the figures beside it say (#28): a verdict for scripts, every
    episode's reasons, the headline's longest checkpoint the JSON's longest, the stall counts one
    number everywhere, no cost told where nothing hurt."""
    verdict = doc["verdict"]
    assert isinstance(verdict, dict) and verdict["severity"] in ("ok", "warn", "critical")
    checkpoints = doc["checkpoints"]
    episodes, count, stalls = checkpoints["episodes"], checkpoints["count"], checkpoints["stalls"]
    assert all(e["reasons"] for e in episodes)
    listed_stalls = sum(bool(e["stall"]) for e in episodes)
    if checkpoints["listed"] == "all":
        assert len(episodes) == count and listed_stalls == stalls
    else:  # the worst of a long window: every stall first
        assert len(episodes) < count and listed_stalls == min(stalls, len(episodes))
    assert stalls == 0 or verdict["severity"] != "ok"
    summary = verdict["summary"]
    if count:
        assert verdict["findings"][0].startswith(f"{stalls:,} of {count:,} checkpoints stalled")
    if stalls:
        assert f"{stalls:,} of {count:,} stalled" in summary and "throughput holds" not in summary
    if checkpoints["listed"] == "all" and verdict["severity"] == "ok":
        # the headline's throughput is the episodes': never "holds" beside checkpoints that cost it
        cost = [
            e
            for e in episodes
            if e["end"] and e["ops_ratio"] is not None and e["ops_ratio"] <= HURT_OPS_RATIO and GONE not in e["reasons"]
        ]
        told = re.search(r"no stall; ([0-9,]+) of [0-9,]+ cost throughput", summary)
        assert ("throughput holds" not in summary) if cost else (told is None), summary
        assert told is None or int(told.group(1).replace(",", "")) == len(cost), summary
    longest = re.search(r"the longest, ([0-9.]+) (s|ms)", summary)
    timed = [e for e in episodes if e["duration_s"] is not None and e["end"] is not None]
    if longest and checkpoints["listed"] == "worst":
        shown = float(longest.group(1)) / (1000 if longest.group(2) == "ms" else 1)
        assert shown == pytest.approx(checkpoints["duration_s"]["max"], abs=0.051)
    elif longest:
        worst = max(timed, key=lambda e: e["duration_s"])
        shown = float(longest.group(1)) / (1000 if longest.group(2) == "ms" else 1)
        assert shown == pytest.approx(worst["duration_s"], abs=0.051), (summary, worst["duration_s"])
        assert f"at {worst['start'][11:19]} UTC" in summary
    # where each checkpoint's time went (#31): never more than its duration, handles inside prepare
    for e in episodes:
        p = e["phases"]
        if p is None:
            continue
        parts = [p[k] for k in ("scrub_s", "prepare_s", "trees_s", "history_store_s", "sync_s") if p[k] is not None]
        assert sum(parts) <= e["duration_s"] + 0.002 * len(parts), e
        assert p["handles_s"] is None or p["prepare_s"] is None or p["handles_s"] <= p["prepare_s"] + 0.002, e
        assert p["untimed_s"] >= 0 and p["text"].startswith(("0", "1", "2", "3", "4", "5", "6", "7", "8", "9"))
    assert (any(e["phases"] for e in episodes) or checkpoints["listed"] == "worst") or not any(
        "where the longest checkpoint's time went" in f for f in verdict["findings"]
    )
    made = "application threads are made to evict"
    if any(made in f for f in verdict["findings"]):
        assert doc["eviction"]["app_evicted_pages"] or doc["eviction"]["app_wait_s"]


def _datadirs() -> list[Path]:
    """The corpus's folders of one project's FTDC (files named ``<id>__<path>__metrics.*``), the
    two with the most files."""
    folders = {p.parent for p in INPUTS if p.is_file() and "public-datadirs" in str(p) and "metrics." in p.name}
    return sorted(folders, key=lambda f: (-len(list(f.glob("*metrics.*"))), str(f)))[:2]


def _as_diagnostic_data(folder: Path, into: Path) -> Path:
    """``folder``'s files as mongod names them, in a ``diagnostic.data`` directory (links)."""
    target = into / folder.name / "diagnostic.data"
    target.mkdir(parents=True)
    for f in sorted(folder.glob("*metrics.*")):
        name = f.name[f.name.index("metrics.") :]
        if not (target / name).exists():
            (target / name).symlink_to(f)
    return target


@pytest.mark.parametrize("kind", ["directory", "glob", "members"])
def test_combinations_keep_the_contract_for_scripts(kind: str, tmp_path: Path) -> None:
    """Through the CLI, on real FTDC laid out as mongod writes it: a diagnostic.data directory,
    the shell's glob of its files, two servers' directories. `.verdict` is an object whatever was
    given, the directory and its glob are one server, and the exit status is the verdict's as
    `--help` says: 4 critical (unless never), 3 warn only with --fail-on warn, else 0."""
    from conftest import run_cli

    folders = _datadirs()
    if len(folders) < 2:
        pytest.skip("shared data not available")
    dirs = [_as_diagnostic_data(f, tmp_path) for f in folders]
    given = {"directory": dirs[:1], "glob": sorted(dirs[0].glob("metrics.*")), "members": dirs}[kind]

    expected = {"ok": (0, 0, 0), "warn": (3, 0, 0), "critical": (4, 4, 0)}
    proc = run_cli("report", *map(str, given), "-f", "json", "--fail-on", "warn")
    doc = json.loads(proc.stdout)
    verdict = doc["verdict"]
    assert isinstance(verdict, dict) and verdict["severity"] in expected, proc.stderr
    assert ("members" in doc) == (kind == "members")
    if "members" not in doc:
        jsonschema.validate(doc, SCHEMA)
        _story_holds(doc)
    codes = [proc.returncode]
    for fail_on in ("critical", "never"):
        codes.append(run_cli("report", *map(str, given), "-f", "json", "--fail-on", fail_on).returncode)
    assert tuple(codes) == expected[verdict["severity"]]
