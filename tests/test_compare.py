"""`ckptdiag compare`: the same before/after figures from recordings, FTDC windows or JSON reports."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from synth import Server, write_recording

from ckptdiag.advice.rules import recommend
from ckptdiag.analysis.diagnosis import diagnose
from ckptdiag.analysis.series import derive
from ckptdiag.model.facts import ServerFacts
from ckptdiag.report import formats
from ckptdiag.report.compare import compare, figures, render_compare_markdown
from ckptdiag.report.document import Report, ReportSource, to_document


def ckptdiag(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "ckptdiag", *args], capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL
    )


BEFORE = Server(seconds=600, period=60, duration=2.0, mb_per_s=40, stall_ops=50, stall_latency_ms=40)
AFTER = Server(seconds=600, period=30, duration=0.9, mb_per_s=40, stall=False)


def _doc(server: Server) -> dict[str, object]:
    facts = ServerFacts(version="7.0.21")
    dx = diagnose(derive(server.frame()), facts)
    return to_document(Report(dx, ReportSource("recording", "x"), recommend(dx)))


def test_figures_of_a_report() -> None:
    f = figures(_doc(BEFORE))
    assert f["checkpoints"] == 10 and f["stalls"] == 10
    assert f["duration_p50_s"] == pytest.approx(2.0, abs=0.01)
    assert f["mb_per_checkpoint"] == pytest.approx(80, rel=0.01)
    assert f["dip_max_pct"] is not None and f["dip_max_pct"] > 90  # 50 of 1000 ops/s in its worst second
    assert f["ops_s_mean"] == pytest.approx(1000 * (58 / 60) + 50 * (2 / 60), rel=0.02)


def test_before_and_after_rows() -> None:
    c = compare(_doc(BEFORE), _doc(AFTER))
    rows = {r.name: r for r in c.rows}
    assert rows["checkpoint duration (p50)"].ratio == pytest.approx(0.45, rel=0.02)
    assert rows["bytes per checkpoint (p50)"].ratio == pytest.approx(0.45, rel=0.02)
    assert rows["checkpoint duration (p50)"].verdict == "better"
    assert rows["stalled checkpoints"].after == 0 and rows["stalled checkpoints"].verdict == "better"
    assert rows["throughput dip (worst checkpoint)"].after == pytest.approx(0, abs=1)
    # no more dips: 3 % more operations on the whole, within the 5 % called "same"
    assert rows["mean throughput"].ratio == pytest.approx(1000 / 968.3, rel=0.01)
    assert rows["mean throughput"].verdict == "same"
    doc = c.to_json()
    assert doc["kind"] == "compare" and doc["before"]["verdict"] == "critical" and doc["after"]["verdict"] == "ok"
    md = render_compare_markdown(c)
    assert "| checkpoint duration (p50) | 2.00 s | 0.90 s | 0.45x | better |" in md
    assert "<td>checkpoint duration (p50)</td>" in formats.render(c, "html")


def test_compare_cli_over_recordings_and_a_json_report(tmp_path: Path) -> None:
    a = write_recording(BEFORE.frame(), tmp_path / "before.jsonl")
    b = write_recording(AFTER.frame(), tmp_path / "after.jsonl")
    proc = ckptdiag("compare", str(a), str(b), "-f", "json")
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    rows = {r["metric"]: r for r in doc["rows"]}
    assert rows["stalled checkpoints"]["before"] == 10 and rows["stalled checkpoints"]["after"] == 0
    # one overall verdict for a script, and --fail-on regress for CI: the fix is no regression,
    # undoing it is (#28)
    assert doc["overall"] in ("better", "mixed") and "stalled checkpoints" not in doc["worse"]
    assert ckptdiag("compare", str(a), str(b), "--fail-on", "regress", "-f", "json").returncode == (
        3 if doc["worse"] else 0
    )
    back = ckptdiag("compare", str(b), str(a), "--fail-on", "regress", "-f", "md")
    assert (
        back.returncode == 3 and "overall: " in back.stdout and "stalled checkpoints" in back.stdout.split("worse: ")[1]
    )
    # a JSON report written earlier stands for its side
    report = tmp_path / "before.json"
    assert ckptdiag("report", str(a), "-o", str(report), "--fail-on", "never").returncode == 0
    out = tmp_path / "change.md"
    proc = ckptdiag("compare", str(report), str(b), "-o", str(out))
    assert proc.returncode == 0, proc.stderr
    assert "| stalled checkpoints | 10 | 0 |" in out.read_text()
    # windows of one recording: the first 5 minutes against the last 5
    proc = ckptdiag(
        "compare", str(a), str(a), "--until-a", _iso(BEFORE, 300), "--since-b", _iso(BEFORE, 300), "-f", "json"
    )
    assert proc.returncode == 0, proc.stderr
    rows = {r["metric"]: r for r in json.loads(proc.stdout)["rows"]}
    assert rows["checkpoints"]["before"] == 5 and rows["checkpoints"]["after"] == 5


def _iso(server: Server, seconds: float) -> str:
    from ckptdiag.report.document import iso

    t0 = float(server.frame()["t"].iloc[0])
    value = iso(t0 + seconds)
    assert value is not None
    return value


def test_compare_bad_input_is_one_line(tmp_path: Path) -> None:
    a = write_recording(BEFORE.frame(), tmp_path / "before.jsonl")
    proc = ckptdiag("compare", str(a), str(tmp_path / "missing.jsonl"))
    assert proc.returncode == 1 and proc.stderr.count("\n") == 1 and "does not exist" in proc.stderr
    bogus = tmp_path / "x.json"
    bogus.write_text('{"hello": 1}')
    proc = ckptdiag("compare", str(bogus), str(a))
    assert proc.returncode == 1 and "is not a ckptdiag JSON report" in proc.stderr and "hint:" in proc.stderr
    report = tmp_path / "r.json"
    ckptdiag("report", str(a), "-o", str(report), "--fail-on", "never")
    proc = ckptdiag("compare", str(report), str(a), "--since-a", "2026-01-01T00:00Z")
    assert proc.returncode == 2 and "window is fixed" in proc.stderr
    # never written over an input
    proc = ckptdiag("compare", str(a), str(report), "-o", str(report))
    assert proc.returncode == 1 and "is one of the inputs" in proc.stderr
