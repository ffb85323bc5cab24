"""Several members at once, offline: one report per member and a cluster view, never one window
mixing two servers' counters; the member whose checkpoints stall is named."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from ftdc_writer import SimServer, write_ftdc

from ckptdiag.workflows.members import group_members
from ckptdiag.workflows.report import _diagnose_one as _REAL_ONE

CHECKPOINTS = [(30.0 + 60 * i, 33.0 + 60 * i) for i in range(9)]
TIMES = [float(t) for t in np.arange(0, 570, 1.0)]


def ckptdiag(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "ckptdiag", *args], capture_output=True, text=True, timeout=180, check=False
    )


@pytest.fixture(scope="module")
def bundle(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A support download: a folder per host, each with its diagnostic.data: a primary whose
    checkpoints do not hurt it, a secondary that falls behind in every one of its own."""
    root = tmp_path_factory.mktemp("bundle")
    members = (
        ("db1", 27017, SimServer(CHECKPOINTS, primary=True, stall_latency_ms=1.0)),
        ("db2", 27018, SimServer(CHECKPOINTS, stall_ops=100.0, secondary=True)),
        ("db3", 27019, SimServer(CHECKPOINTS, secondary=True)),
    )
    for host, port, server in members:
        d = root / f"{host}.example.net_{port}" / "diagnostic.data"
        d.mkdir(parents=True)
        write_ftdc(d / "metrics.2023-11-14T22-13-20Z-00000", server, TIMES, host=f"{host}.example.net", port=port)
    return root


def test_members_are_named_by_their_own_metadata(bundle: Path) -> None:
    members = group_members((bundle,))
    assert [m.name for m in members] == ["db1.example.net:27017", "db2.example.net:27018", "db3.example.net:27019"]
    # the same member given twice (its directory and a file of it) is one member
    d = bundle / "db2.example.net_27018" / "diagnostic.data"
    twice = group_members((d, next(d.iterdir())))
    assert len(twice) == 1 and twice[0].name == "db2.example.net:27018" and len(twice[0].paths) == 2


def test_the_cluster_view_names_the_member_that_stalls(bundle: Path) -> None:
    proc = ckptdiag("report", str(bundle), "-f", "json", "--fail-on", "critical")
    assert proc.returncode == 4, proc.stderr  # the cluster's verdict: the worst member's
    doc = json.loads(proc.stdout)
    cluster = doc["cluster"]
    assert cluster["severity"] == "critical" and cluster["worst_member"] == "db2.example.net:27018"
    rows = {m["name"]: m for m in cluster["members"]}
    assert rows["db1.example.net:27017"]["role"] == "primary" and rows["db1.example.net:27017"]["stalls"] == 0
    assert rows["db2.example.net:27018"]["role"] == "secondary" and rows["db2.example.net:27018"]["stalls"] == 9
    assert rows["db3.example.net:27019"]["stalls"] == 0
    assert 2.5 <= rows["db2.example.net:27018"]["repl_lag_growth_s_max"] <= 3.6
    finding = next(
        f for f in cluster["findings"] if f.startswith("db2.example.net:27018 (secondary) stalled in 9 of 9")
    )
    assert "replication lag grew by up to" in finding and "the primary's write latency did not rise" in finding
    assert "the primary did not stall: the stalls are the secondaries' own checkpoints" in cluster["findings"]
    # every member's full report follows, each its own window
    assert [m["name"] for m in doc["members"]] == list(rows)
    assert all(m["report"]["checkpoints"]["count"] == 9 for m in doc["members"])


@pytest.mark.parametrize("fmt", ["md", "table", "html"])
def test_every_format_shows_the_members(bundle: Path, fmt: str) -> None:
    proc = ckptdiag("report", str(bundle), "-f", fmt, "--fail-on", "never")
    assert proc.returncode == 0, proc.stderr
    for name in ("db1.example.net:27017", "db2.example.net:27018", "db3.example.net:27019"):
        assert name in proc.stdout, (fmt, name)
    assert "stalled in 9 of 9 checkpoints" in proc.stdout
    rows = {}  # the aligned timeline: a row of marks per member
    for line in proc.stdout.splitlines():
        name, _, marks = line.partition("  ")
        if marks and len(marks) >= 96 and set(marks.strip()) <= set("#|. "):
            rows[name.split(">")[-1].strip()] = marks  # (in HTML the first row follows <pre><code>)
    assert rows["db2.example.net:27018"].count("#") >= 9 and "#" not in rows["db1.example.net:27017"]
    assert rows["db1.example.net:27017"].count("|") >= 9


def test_the_terminal_lists_each_members_worst_checkpoints_below_the_summary(bundle: Path) -> None:
    """#32: one line per member said nothing of a member's checkpoints; each member's worst are
    listed below the summary, which says so."""
    text = ckptdiag("report", str(bundle), "-f", "table", "--fail-on", "never").stdout
    first = text.splitlines()[0]
    assert first.startswith("CRITICAL") and first.endswith(
        "each member's 5 worst checkpoints below (whole reports: -f md, html or json)"
    )
    sections = text.split("\n── ")[1:]
    assert [s.split(":", 2)[0] + ":" + s.split(":", 2)[1] for s in sections] == [
        "db1.example.net:27017",
        "db2.example.net:27018",
        "db3.example.net:27019",
    ]
    stalled = next(s for s in sections if s.startswith("db2.example.net:27018: CRITICAL"))
    assert stalled.count("STALL") == 5 and "showing the 5 worst" in stalled and "(--top)" not in stalled
    calm = next(s for s in sections if s.startswith("db1.example.net:27017: OK"))
    assert "STALL" not in calm and calm.count("22:") >= 5


def test_the_html_page_draws_every_members_lane(bundle: Path) -> None:
    import re
    import xml.etree.ElementTree as ET

    proc = ckptdiag("report", str(bundle), "-f", "html", "--fail-on", "never")
    svg = proc.stdout[proc.stdout.index("<svg") : proc.stdout.index("</svg>") + 6]
    root = ET.fromstring(svg)  # well-formed: a browser draws it as it is
    ns = "{http://www.w3.org/2000/svg}"
    labels = [t.text for t in root.iter(f"{ns}text") if t.text and "example.net" in t.text]
    assert labels == [
        "db1.example.net:27017 (primary)",
        "db2.example.net:27018 (secondary)",
        "db3.example.net:27019 (secondary)",
    ]
    lanes: dict[float, list[str]] = {}
    for rect in root.iter(f"{ns}rect"):
        lanes.setdefault(float(rect.get("y", 0)), []).append(rect.get("fill", ""))
    fills = [lanes[y] for y in sorted(lanes)]
    assert fills[0].count("#4a7fb5") == 9 and "#c62a2f" not in fills[0]  # the primary: checkpoints only
    assert fills[1].count("#c62a2f") == 9  # the secondary that stalls in all nine
    assert re.search(r"stalled</tspan>", svg)


def test_a_member_that_cannot_be_read_is_a_note(bundle: Path, tmp_path: Path) -> None:
    broken = tmp_path / "db4.example.net_27020"
    broken.mkdir()
    (broken / "metrics.2023-11-14T22-13-20Z-00000").write_bytes(b"not ftdc at all, not even BSON")
    db1 = bundle / "db1.example.net_27017" / "diagnostic.data"
    proc = ckptdiag("report", str(db1), str(broken), "-f", "json", "--fail-on", "never")
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    assert len(doc["members"]) == 1 and doc["cluster"]["skipped"][0].startswith("db4.example.net_27020: ")
    assert "member db4.example.net_27020 skipped" in proc.stderr


def test_a_primary_whose_writes_wait_during_a_secondarys_stalls_is_said_to(tmp_path: Path) -> None:
    # the primary's own checkpoints fall between the secondary's, and its write latency rises
    # 40x exactly while the secondary stalls (majority writes waiting for it)
    own = [(s + 20.0, e + 20.0) for s, e in CHECKPOINTS]
    members = (
        ("db1", 27017, SimServer(own, primary=True, stall_in=CHECKPOINTS, stall_latency_ms=40.0)),
        ("db2", 27018, SimServer(CHECKPOINTS, stall_ops=100.0, secondary=True)),
    )
    dirs = []
    for host, port, server in members:
        d = tmp_path / host / "diagnostic.data"
        d.mkdir(parents=True)
        write_ftdc(d / "metrics.2023-11-14T22-13-20Z-00000", server, TIMES, host=host, port=port)
        dirs.append(str(d))
    doc = json.loads(ckptdiag("report", *dirs, "-f", "json", "--fail-on", "never").stdout)
    rows = {m["name"]: m for m in doc["cluster"]["members"]}
    assert rows["db2:27018"]["primary_write_latency_ratio_during_stalls"] == pytest.approx(40.0, rel=0.1)
    finding = next(f for f in doc["cluster"]["findings"] if f.startswith("db2:27018"))
    assert "the primary's write latency rose" in finding and "majority writes" in finding


def test_the_primarys_majority_write_waits_during_a_secondarys_stalls(tmp_path: Path) -> None:
    # every write on the primary asks for w: majority: it waits 2 ms for the secondaries, and 300 ms
    # while the secondary stalls in its checkpoints (the primary's own throughput does not dip)
    own = [(s + 20.0, e + 20.0) for s, e in CHECKPOINTS]
    primary = SimServer(
        own, primary=True, stall_in=CHECKPOINTS, stall_latency_ms=1.0, wc_wait_ms=2.0, stall_wc_wait_ms=300.0
    )
    quiet = SimServer(
        own, primary=True, stall_in=CHECKPOINTS, stall_latency_ms=1.0, wc_wait_ms=2.0, stall_wc_wait_ms=2.0
    )
    for label, first in (("waits", primary), ("quiet", quiet)):
        dirs = []
        for host, port, server in (
            ("db1", 27017, first),
            ("db2", 27018, SimServer(CHECKPOINTS, stall_ops=100.0, secondary=True)),
        ):
            d = tmp_path / label / host / "diagnostic.data"
            d.mkdir(parents=True)
            write_ftdc(d / "metrics.2023-11-14T22-13-20Z-00000", server, TIMES, host=host, port=port)
            dirs.append(str(d))
        doc = json.loads(ckptdiag("report", *dirs, "-f", "json", "--fail-on", "never").stdout)
        rows = {m["name"]: m for m in doc["cluster"]["members"]}
        wait = rows["db2:27018"]["primary_write_concern_wait_ms"]
        finding = next(f for f in doc["cluster"]["findings"] if f.startswith("db2:27018"))
        if label == "waits":
            assert wait["outside_stalls"] == pytest.approx(2.0, abs=0.5)
            assert wait["during_stalls_max"] == pytest.approx(300.0, rel=0.1)
            assert "waiting for their write concern (w: majority) waited up to 30" in finding
            assert "they waited for this secondary" in finding
        else:
            assert wait["during_stalls_max"] == pytest.approx(2.0, abs=0.5)
            assert "the primary's write-concern waits did not rise during them" in finding
        assert rows["db1:27017"]["primary_write_concern_wait_ms"] is None  # a primary's own row has none


@pytest.mark.parametrize("kind", ["tar.gz", "zip"])
def test_a_downloaded_archive_is_read_as_its_folders(bundle: Path, tmp_path: Path, kind: str) -> None:
    import tarfile
    import zipfile

    archive = tmp_path / f"support.{kind}"
    files = sorted(p for p in bundle.rglob("*") if p.is_file())
    if kind == "zip":
        with zipfile.ZipFile(archive, "w", zipfile.ZIP_DEFLATED) as z:
            for f in files:
                z.write(f, f"download/{f.relative_to(bundle)}")
            z.writestr("../../escape/metrics.evil", b"outside")  # never written outside the scratch folder
    else:
        with tarfile.open(archive, "w:gz") as t:
            for f in files:
                t.add(f, f"download/{f.relative_to(bundle)}")
    proc = ckptdiag("report", str(archive), "-f", "json", "--fail-on", "never")
    assert proc.returncode == 0, proc.stderr
    cluster = json.loads(proc.stdout)["cluster"]
    assert cluster["worst_member"] == "db2.example.net:27018" and len(cluster["members"]) >= 3
    assert not (tmp_path.parent / "escape").exists() and not Path("/escape").exists()


def test_an_archive_member_that_inflates_past_its_limit_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import zipfile

    from ckptdiag.errors import InputError
    from ckptdiag.sources import archives

    monkeypatch.setattr(archives, "MAX_FILE_BYTES", 1 << 20)
    archive = tmp_path / "bomb.zip"
    with zipfile.ZipFile(archive, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("host/diagnostic.data/metrics.2026-01-01T00-00-00Z-00000", b"\0" * (8 << 20))
    with pytest.raises(InputError, match=r"claims 8,388,608 bytes, over the limit"):
        archives.unpack(archive, tmp_path / "out")
    # a header that lies about the size is caught while copying, at the limit
    import io

    with pytest.raises(InputError, match=r"inflates past the limit of 1,048,576 bytes"):
        archives._copy(io.BytesIO(b"\0" * (2 << 20)), io.BytesIO(), 1 << 20, archive, "metrics.x")


def test_two_real_servers_ftdc_are_two_members_never_one_window() -> None:
    from conftest import shared_path

    a = shared_path("ftdc", "mongodb-4.2.12__b1ron__metrics.2021-03-15T02-21-47Z-00000")
    b = shared_path("ftdc", "mongodb-7.0.0-rc6__b1ron__metrics.2024-04-16T11-34-42Z-00000")
    assert [m.name for m in group_members((a, b))] == ["ip-10-0-0-192:27017", "byron-ThinkCentre-M910q:27017"]
    proc = ckptdiag("report", str(a), str(b), "-f", "json", "--fail-on", "never")
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    versions = [m["report"]["server"]["version"] for m in doc["members"]]
    assert versions == ["4.2.12", "7.0.0-rc6"]  # each member its own server, its own window
    starts = [m["report"]["window"]["start"][:4] for m in doc["members"]]
    assert starts == ["2021", "2024"]
    # one contract for scripts: `jq .verdict` reads a cluster document as it reads one server's
    verdict = doc["verdict"]
    assert verdict["severity"] == doc["cluster"]["severity"] and verdict["member"] == doc["cluster"]["worst_member"]
    worst = next(m["report"] for m in doc["members"] if m["name"] == verdict["member"])
    assert verdict["evidence"] == worst["verdict"]["evidence"] and verdict["summary"] == doc["cluster"]["summary"]


def test_members_in_worker_processes_give_the_same_reports_as_one_process(bundle: Path) -> None:
    import os

    from ckptdiag.workflows.workers import workers_for

    def run(jobs: str) -> dict[str, object]:
        env = {**os.environ, "CKPTDIAG_JOBS": jobs}
        proc = subprocess.run(
            [sys.executable, "-m", "ckptdiag", "report", str(bundle), "-f", "json", "--fail-on", "never"],
            capture_output=True, text=True, timeout=180, check=False, env=env,
        )  # fmt: skip
        assert proc.returncode == 0, proc.stderr
        doc = json.loads(proc.stdout)
        for part in (doc, *(m["report"] for m in doc["members"])):
            part.pop("generated")
        return doc

    assert workers_for(3) >= 1
    assert run("1") == run("3")  # byte for byte but the generation time


def test_a_glob_of_one_diagnostic_data_with_its_interim_file_is_one_server(tmp_path: Path) -> None:
    """`report /var/lib/mongodb/diagnostic.data/metrics.*`: the shell's glob gives metrics.interim,
    which carries no metadata, beside the files that name the server; it is that server's, never a
    second member named by its folder, and the JSON keeps one server's shape (#28)."""
    from ftdc_writer import SimServer, write_ftdc

    d = tmp_path / "mongodb" / "diagnostic.data"
    d.mkdir(parents=True)
    server = SimServer(checkpoints=[(30, 32), (90, 93), (150, 152)])
    write_ftdc(
        d / "metrics.2026-11-01T00-00-00Z-00000", server, [float(i) for i in range(0, 120)], host="db1", port=27017
    )
    interim = d / "metrics.interim"
    write_ftdc(interim, server, [float(i) for i in range(120, 200)], host="db1", port=27017)
    raw = interim.read_bytes()
    interim.write_bytes(raw[int.from_bytes(raw[:4], "little") :])  # its metadata document gone
    files = sorted(d.glob("metrics.*"))
    assert [m.name for m in group_members(tuple(files))] == ["db1:27017"]
    proc = ckptdiag("report", *map(str, files), "-f", "json", "--fail-on", "never")
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    assert "cluster" not in doc and doc["verdict"]["severity"] in ("ok", "warn", "critical")


def _dies_on_the_second_member(paths: tuple[Path, ...], window: object) -> object:
    import multiprocessing
    import os

    if "db2" in str(paths[0]) and multiprocessing.parent_process() is not None:
        os._exit(9)  # as the OOM killer leaves a worker (only a worker: the parent does it again)
    return _REAL_ONE(paths, window)


def test_a_member_worker_killed_costs_only_time(bundle: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from ckptdiag.workflows import report

    members = group_members((bundle,))
    monkeypatch.setattr("ckptdiag.workflows.workers.workers_for", lambda jobs: 3)
    one = [report._diagnose_one(m.paths, report.WHOLE) for m in members]
    monkeypatch.setattr(report, "_diagnose_one", _dies_on_the_second_member)
    many = report._diagnose_all(members, report.WHOLE)
    assert [r.dx.episodes for r in many] == [r.dx.episodes for r in one]  # type: ignore[union-attr]
