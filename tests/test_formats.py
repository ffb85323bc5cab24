"""One format registry (#29): every command's -f and -f auto come from it, a format added there is
offered by every command, and -f prom is OpenMetrics that Prometheus' own parsers read."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from click.testing import CliRunner
from ftdc_writer import SimServer, write_ftdc

from ckptdiag.analysis.episode import Episode, Impact
from ckptdiag.analysis.episode_table import Episodes
from ckptdiag.cli import cli
from ckptdiag.report import formats


@pytest.fixture(scope="module")
def ftdc(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("f") / "metrics.2023-11-14T22-13-20Z-00000"
    server = SimServer([(30.0 + 60 * k, 33.0 + 60 * k) for k in range(5)], stall_ops=50.0, stall_latency_ms=60.0)
    write_ftdc(path, server, [float(i) for i in range(330)], host="db1")
    return path


def test_a_format_added_to_the_registry_is_offered_by_every_command(
    ftdc: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A format registered once appears in the help of report, diagnose and compare, is chosen
    by -f and by -o's extension, and renders every kind of report (a server's, a comparison)."""
    tsv = formats.Format("tsv", (".tsv",), "for a spreadsheet", lambda r: f"verdict\t{r.severity}\n")
    monkeypatch.setitem(formats._REGISTRY, "tsv", tsv)
    runner = CliRunner()
    for command in ("report", "diagnose", "compare"):
        assert "tsv" in runner.invoke(cli, [command, "--help"]).output, command
    by_flag = runner.invoke(cli, ["report", str(ftdc), "-f", "tsv", "--fail-on", "never"])
    assert by_flag.exit_code == 0 and by_flag.output == "verdict\tcritical\n", by_flag.output
    out = tmp_path / "r.tsv"
    assert runner.invoke(cli, ["report", str(ftdc), "-o", str(out), "--fail-on", "never"]).exit_code == 0
    assert out.read_text() == "verdict\tcritical\n"
    compared = runner.invoke(cli, ["compare", str(ftdc), str(ftdc), "-f", "tsv"])
    assert compared.exit_code == 0 and compared.output == "verdict\tok\n"
    assert formats.for_path(Path("x.tsv")) == "tsv" and formats.extension("tsv") == "tsv"


def test_prom_is_openmetrics_that_prometheus_reads(ftdc: Path, tmp_path: Path) -> None:
    """-f prom (and -o x.prom) for node_exporter's textfile collector: Prometheus' text parser
    and the OpenMetrics parser both read it; the figures are the report's own."""
    parser = pytest.importorskip("prometheus_client.parser")
    openmetrics = pytest.importorskip("prometheus_client.openmetrics.parser")
    import json

    runner = CliRunner()
    doc = json.loads(runner.invoke(cli, ["report", str(ftdc), "-f", "json", "--fail-on", "never"]).output)
    out = tmp_path / "ckptdiag.prom"
    assert runner.invoke(cli, ["report", str(ftdc), "-o", str(out), "--fail-on", "never"]).exit_code == 0
    text = out.read_text()
    samples = {
        (s.name, tuple(sorted(s.labels.items()))): s.value
        for family in parser.text_string_to_metric_families(text)
        for s in family.samples
    }
    assert list(openmetrics.text_string_to_metric_families(text))  # valid OpenMetrics, # EOF and all
    member = (("member", "db1"),)
    assert samples[("ckptdiag_verdict", member)] == {"ok": 0, "warn": 1, "critical": 2}[doc["verdict"]["severity"]]
    assert samples[("ckptdiag_checkpoints", member)] == doc["checkpoints"]["count"]
    assert samples[("ckptdiag_checkpoint_stalls", member)] == doc["checkpoints"]["stalls"]
    durations = [e["duration_s"] for e in doc["checkpoints"]["episodes"] if e["duration_s"] is not None]
    key = ("ckptdiag_checkpoint_duration_seconds", (("member", "db1"), ("stat", "max")))
    assert samples[key] == pytest.approx(max(durations))


def test_every_kind_of_report_renders_as_prom(ftdc: Path, tmp_path: Path) -> None:
    """A cluster (two members), a comparison and a log alone are OpenMetrics too."""
    parser = pytest.importorskip("prometheus_client.parser")
    a, b = tmp_path / "a" / "diagnostic.data", tmp_path / "b" / "diagnostic.data"
    for folder, host in ((a, "db1"), (b, "db2")):
        folder.mkdir(parents=True)
        write_ftdc(
            folder / ftdc.name, SimServer([(30.0, 33.0), (90.0, 93.0)]), [float(i) for i in range(150)], host=host
        )
    log = tmp_path / "mongod.log"
    log.write_text(
        "2019-06-18T12:00:30.000+0100 I STORAGE  [WTCheckpointThread] Checkpoint took 12 seconds to complete\n"
    )
    runner = CliRunner()
    for args, expect in (
        (["report", str(a), str(b)], {"ckptdiag_cluster_verdict", "ckptdiag_verdict"}),
        (["compare", str(ftdc), str(ftdc)], {"ckptdiag_compare_worse_figures", "ckptdiag_compare_ratio"}),
        (["report", str(log)], {"ckptdiag_verdict", "ckptdiag_checkpoint_duration_seconds"}),
    ):
        result = runner.invoke(cli, [*args, "-f", "prom", *(["--fail-on", "never"] if args[0] == "report" else [])])
        assert result.exit_code == 0, result.output
        names = {f.name for f in parser.text_string_to_metric_families(result.output)}
        assert expect <= names, (args, names)


def test_o_repeated_writes_every_file_from_one_diagnosis(
    ftdc: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """-o n.md -o n.json -o n.html -o n.prom: four files, each in its extension's format, from one
    decode and diagnosis (a nightly job decoded FTDC once a format); a file named twice is a usage
    error before any work."""
    import json

    from ckptdiag.workflows import report as workflow

    calls = []
    real = workflow._diagnose

    def counted(*args: object) -> object:
        calls.append(args)
        return real(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(workflow, "_diagnose", counted)
    names = [tmp_path / f"n.{ext}" for ext in ("md", "json", "html", "prom")]
    args = ["report", str(ftdc), *[x for n in names for x in ("-o", str(n))], "--fail-on", "never"]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 0, result.output
    assert len(calls) == 1
    md, doc, page, prom = (n.read_text() for n in names)
    assert md.startswith("# ckptdiag: ") and json.loads(doc)["verdict"]["severity"] in md.lower()
    assert page.startswith("<!doctype html>") and prom.rstrip().endswith("# EOF")
    twice = CliRunner().invoke(cli, ["report", str(ftdc), "-o", str(names[0]), "-o", str(names[0])])
    assert twice.exit_code == 2 and "given twice" in twice.output


def test_every_file_written_is_said_on_stderr_and_an_unknown_extension_is_refused(ftdc: Path, tmp_path: Path) -> None:
    """#32: "wrote PATH" for each -o file (report and compare), on stderr only (stdout stays the
    report's); -o r.pdf is a usage error naming the extensions, and nothing is written."""
    import subprocess
    import sys

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "ckptdiag", *args], capture_output=True, text=True, timeout=120)

    md, page = tmp_path / "n.md", tmp_path / "n.html"
    done = run("report", str(ftdc), "-o", str(md), "-o", str(page), "--fail-on", "never")
    assert done.returncode == 0 and done.stdout == "", done.stderr
    assert done.stderr.splitlines()[-2:] == [f"ckptdiag: wrote {md}", f"ckptdiag: wrote {page}"]
    change = tmp_path / "change.md"
    compared = run("compare", str(ftdc), str(ftdc), "-o", str(change))
    assert compared.returncode == 0 and compared.stderr.splitlines()[-1] == f"ckptdiag: wrote {change}"
    pdf = tmp_path / "r.pdf"
    refused = run("report", str(ftdc), "-o", str(pdf))
    assert refused.returncode == 2 and not pdf.exists()
    line = refused.stderr.strip()
    assert line.startswith(f"ckptdiag: error: -o {pdf}: no format is written as .pdf files (hint: name it")
    assert "\n" not in line
    assert all(ext in line for ext in formats.known_extensions()) and "give -f" in line
    # an explicit format writes what it is told, and a name without an extension is the text table
    assert run("report", str(ftdc), "-f", "json", "-o", str(pdf), "--fail-on", "never").returncode == 0
    for plain in (tmp_path / "report", tmp_path / "nightly.2026-11-27"):  # a dated name has no extension
        assert run("report", str(ftdc), "-o", str(plain), "--fail-on", "never").returncode == 0
        assert plain.read_text().lstrip().startswith("ftdc:")


def test_each_commands_help_says_only_what_applies_to_it() -> None:
    runner = CliRunner()
    for command in ("report", "compare"):
        text = " ".join(runner.invoke(cli, [command, "--help"]).output.split())
        assert "--hosts" not in text and "directory" not in text.split("-o, --output")[1].split("--")[0], command
    assert "-o directory" in " ".join(runner.invoke(cli, ["diagnose", "--help"]).output.split())
    metrics = runner.invoke(cli, ["metrics", "-f", "json"])
    assert metrics.exit_code == 0 and metrics.output.lstrip().startswith("[")


def test_the_html_footer_is_emphasis_not_markdown_underscores(ftdc: Path) -> None:
    page = CliRunner().invoke(cli, ["report", str(ftdc), "-f", "html", "--fail-on", "never"]).output
    assert "<p><em>ckptdiag " in page and "_ckptdiag" not in page


def test_the_html_charts_read_at_a_glance() -> None:
    """#32: a few spikes do not flatten the steady load (the axis stops at its 99.5th percentile
    and says the peaks are cut); the dirty chart shows the target and trigger in force."""
    pytest.importorskip("matplotlib")
    import matplotlib

    matplotlib.use("Agg")
    from types import SimpleNamespace

    import matplotlib.pyplot as plt
    import numpy as np

    from ckptdiag.model.engine_config import resolve
    from ckptdiag.model.facts import ServerFacts
    from ckptdiag.report.html_page import _dirty_lines, _robust_top

    fig, (ops, dirty) = plt.subplots(2, 1)
    load = np.full(1000, 600.0)
    load[[100, 500]] = 40_000.0  # two spikes
    ops.plot(np.arange(1000), load)
    ops.set_ylabel("ops/s")
    _robust_top(ops, load)
    assert ops.get_ylim()[1] < 1000 and "peaks to 40,000 cut" in ops.get_ylabel()

    dx = SimpleNamespace(settings=resolve(ServerFacts(version="7.0.21")))  # all _dirty_lines reads
    level = np.linspace(1.0, 4.5, 200)  # up to the 5 % target, far from the 20 % trigger
    dirty.plot(np.arange(200), level)
    dirty.set_ylabel("dirty %")
    _dirty_lines(dirty, dx, level)  # type: ignore[arg-type]
    assert dirty.get_ylabel() == "dirty %\n(target 5, trigger 20)"
    drawn = sorted(line.get_ydata()[0] for line in dirty.get_lines()[1:])
    assert drawn == [5.0]  # the trigger, 4x above the data, would flatten it: in the label only
    plt.close(fig)


def test_the_html_page_has_an_interactive_timeline_that_survives_the_redactor(ftdc: Path, tmp_path: Path) -> None:
    """#32: a zoomable timeline in the one self-contained file: uPlot (vendored, no CDN) and the
    page's script intact after every string passed the redactor (which took minified `key:l` for a
    secret), the data valid JSON with a band per checkpoint; the static charts stay for print."""
    import base64
    import json
    import re

    from ckptdiag.report.interactive import _SCRIPT, _vendor

    out = tmp_path / "r.html"
    assert CliRunner().invoke(cli, ["report", str(ftdc), "-o", str(out), "--fail-on", "never"]).exit_code == 0
    page = out.read_text()
    scripts = [base64.b64decode(s).decode() for s in re.findall(r'src="data:text/javascript;base64,([^"]+)"', page)]
    assert scripts == [_vendor("uPlot.iife.min.js"), _SCRIPT]
    assert not re.search(r'(src|href)="(https?:)?//', page)  # nothing fetched: it works offline
    raw = re.search(r'<script type="application/json" id="ckptdiag-timeline-data">(.*?)</script>', page, re.S)
    assert raw is not None
    data = json.loads(raw.group(1))
    assert len(data["t"]) == len(data["series"][0]["values"]) and data["series"][0]["label"].startswith("ops/s")
    assert len(data["spans"]) == 5 and all(stalled for _, _, stalled in data["spans"])
    assert all(a < b for a, b, _ in data["spans"])
    assert '<div class="static-charts">' in page and "@media print" in page


def _timeline_data(page: str) -> dict[str, Any]:
    raw = re.search(r'<script type="application/json" id="ckptdiag-timeline-data">(.*?)</script>', page, re.S)
    assert raw is not None
    data: dict[str, Any] = json.loads(raw.group(1))
    return data


def test_the_html_timeline_zooms_from_hours_down_to_every_second_of_the_worst_checkpoints(tmp_path: Path) -> None:
    """#32: three hours in 600 buckets of 18 s cannot show one checkpoint; the worst ones keep every
    sample around them (the stalls, not the quick ones), drawn in their buckets' place with their
    own bands, and a button zooms to each (#closeup-N opens the page zoomed)."""
    from ckptdiag.analysis.closeups import LIMIT, PAD_S

    checkpoints = [(30.0 + 60 * k, 32.0 + 60 * k) for k in range(180)]
    stalled = [checkpoints[k] for k in (20, 75, 140)]
    server = SimServer(checkpoints, stall_ops=40.0, stall_latency_ms=80.0, stall_in=stalled)
    path = tmp_path / "metrics.2023-11-14T22-13-20Z-00000"
    write_ftdc(path, server, [float(i) for i in range(3 * 3600)], host="db1")
    out = tmp_path / "r.html"
    assert CliRunner().invoke(cli, ["report", str(path), "-o", str(out), "--fail-on", "never"]).exit_code == 0
    data = _timeline_data(out.read_text())
    t = np.array(data["t"])
    assert np.all(np.diff(t) > 0)
    closeups = data["closeups"]
    assert len(closeups) == LIMIT
    for start, end in stalled:  # every stall is among them, with every second around it
        at = server.t0 + start
        (lo, hi, label) = next(c for c in closeups if c[0] <= at <= c[1])
        assert "stalled" in label and "2.0 s, ops/s at 4 % of the baseline" in label
        assert lo <= at - PAD_S + 1 and hi >= server.t0 + end + PAD_S - 1
        inside = t[(t >= lo) & (t <= hi)]
        assert inside.size >= hi - lo and np.diff(inside).max() <= 1.0 + 1e-6
        red = [s for s in data["spans"] if s[2] and lo <= s[0] <= hi]  # its own band, not its bucket's
        assert [(round(a - server.t0), round(b - server.t0)) for a, b, _ in red] == [(start, end)]
    # away from them, still the buckets: not the window's 10,800 samples
    assert t.size <= 600 + sum(hi - lo + 1 for lo, hi, _ in closeups) and np.median(np.diff(t)) > 10
    ops = np.array(data["series"][0]["values"], dtype=float)
    at_stall = (t > server.t0 + stalled[0][0]) & (t <= server.t0 + stalled[0][1])  # each sample: the second before it
    assert np.nanmax(ops[at_stall]) < 100  # the dip, per second


def test_the_close_ups_keep_the_worst_checkpoints_in_memory_bounded_by_their_number(tmp_path: Path) -> None:
    """However long the window, a few close-ups of at most MAX_SAMPLES samples each: a checkpoint
    stuck for hours keeps its first ones, a quick one is dropped for a worse one."""
    from ckptdiag.analysis.closeups import MAX_SAMPLES, CloseUpTally
    from ckptdiag.analysis.columns import Columns

    n = 20_000
    t = np.arange(n, dtype=float)
    cols = Columns(**{f: (t if f == "t" else np.ones(n)) for f in Columns.__dataclass_fields__})
    tally = CloseUpTally(limit=3)
    quick = [_episode(float(s), float(s) + 1.0, stall=False) for s in range(100, 19_000, 60)]
    stuck = _episode(1_000.5, 9_000.0, stall=True)
    tally.block(cols, Episodes.of([*quick[:10], stuck, *quick[10:]]))
    kept = tally.result()
    assert len(kept) == 3 and [c.start for c in kept if c.stall] == [1_000.5]
    assert next(c for c in kept if c.stall).t.size == MAX_SAMPLES
    assert all(c.t.base is None for c in kept)  # copies: the block's arrays are not kept alive
    assert sum(c.t.size for c in kept) <= 3 * MAX_SAMPLES


def _episode(start: float, end: float, stall: bool) -> Episode:
    return Episode(
        start=start,
        end=end,
        duration_s=end - start,
        bytes_written=None,
        evidence="counters",
        impact=Impact(ops_ratio=0.01 if stall else 0.9, stall=stall),
    )
