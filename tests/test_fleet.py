"""diagnose --hosts FILE: a fleet diagnosed at once over the real wire protocol (loopback servers
replaying real serverStatus documents), one report each and an index, worst first."""

from __future__ import annotations

import json
import socket
import subprocess
from pathlib import Path

import pytest
from conftest import load_status, run_cli
from replset import replica_set
from wire import advancing, replay

from ckptdiag.analysis.fleet import HostVerdict, fleet_severity, worst_first
from ckptdiag.workflows.fleet import FleetHost, file_stem, read_hosts

pytest.importorskip("mockupdb")

STATUS = "serverStatus_8.2.10__AdilEnaanai+iwa2026.json"


def ckptdiag(*args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return run_cli(*args, timeout=timeout)


def closed_port() -> int:
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = int(sock.getsockname()[1])
    sock.close()
    return port


def _moving(doc: dict) -> object:  # type: ignore[type-arg]
    def step(d: dict, n: int) -> None:  # type: ignore[type-arg]
        d["uptimeMillis"] = int(doc["uptimeMillis"]) + 1000 * n
        d["opcounters"]["insert"] = int(doc["opcounters"]["insert"]) + 500 * n

    return advancing(step)


def test_a_fleet_with_an_unreachable_host_reports_every_host(tmp_path: Path) -> None:
    base = load_status(STATUS)
    down = closed_port()
    out = tmp_path / "reports"
    with replay(base, status=_moving(base)) as one, replay(base, status=_moving(base)) as two, replica_set(3) as rs:
        hosts = tmp_path / "fleet.txt"
        hosts.write_text(
            "# nightly fleet\n"
            f"{one.uri}\n"
            "\n"
            f"127.0.0.1:{two.server.port}   # a host:port line\n"
            f"mongodb://monitor:s3cret-pw@127.0.0.1:{down}/?authSource=admin\n"
            f"{rs.seed_uri}\n"
        )
        proc = ckptdiag(
            "diagnose",
            "--hosts",
            str(hosts),
            "-d",
            "0.6",
            "-i",
            "0.2",
            "--timeout",
            "0.5",
            "-o",
            str(out),
            "-f",
            "json",
            "--save",
            str(tmp_path / "saved"),
        )
    assert proc.returncode == 0, proc.stderr  # the worst verdict's: the unreachable host is a line, not a failure
    document = json.loads((out / "index.json").read_text())
    index = document["fleet"]
    assert document["verdict"]["severity"] == index["severity"] == "ok"  # `jq .verdict` as for one server
    assert document["verdict"]["member"] in {r["name"] for r in index["hosts"] if r["diagnosed"]}
    rows = index["hosts"]
    assert [r["line"] for r in rows] == [5, 2, 4, 6]  # not diagnosed before ok, then the file's order
    unreachable = rows[0]
    assert unreachable["diagnosed"] is False and "cannot reach" in unreachable["summary"]
    assert unreachable["report"] is None
    assert index["summary"] == "4 hosts: 0 critical, 0 warn, 3 ok, 1 not diagnosed"
    by_line = {r["line"]: r for r in rows}
    assert by_line[6]["kind"] == "replica set" and by_line[6]["members"] == 3
    for line in (2, 4, 6):
        report = Path(by_line[line]["report"])
        assert report.parent == out and report.suffix == ".json"
        assert json.loads(report.read_text())  # each host's own full report
    assert len(list((tmp_path / "saved").glob("*.jsonl.gz"))) == 2
    assert len(list((tmp_path / "saved").glob("*/*.jsonl.gz"))) == 3  # the set: a directory of members
    # the password on line 5 is nowhere: not in the index, the reports or the terminal
    for text in [proc.stderr, proc.stdout, *(p.read_text() for p in out.iterdir())]:
        assert "s3cret-pw" not in text
    assert f"127.0.0.1:{down}: not diagnosed: cannot reach" in proc.stderr


def test_no_host_diagnosed_is_an_error_after_the_index(tmp_path: Path) -> None:
    hosts = tmp_path / "fleet.txt"
    hosts.write_text(f"127.0.0.1:{closed_port()}\n127.0.0.1:{closed_port()}\n")
    proc = ckptdiag("diagnose", "--hosts", str(hosts), "-d", "1", "--timeout", "0.3", "-f", "table")
    assert proc.returncode == 1
    assert proc.stderr.splitlines()[-1].startswith("ckptdiag: error: none of the 2 hosts could be diagnosed")
    assert proc.stdout.startswith("OK  2 hosts: 0 critical, 0 warn, 0 ok, 2 not diagnosed")


def test_hosts_file_lines(tmp_path: Path) -> None:
    path = tmp_path / "hosts"
    path.write_text("db1\n  # comment\nmongodb+srv://u:p@c0.example.net/  # atlas\ndb2:27018\n")
    assert [(h.line, h.uri) for h in read_hosts(path)] == [
        (1, "mongodb://db1"),
        (3, "mongodb+srv://u:p@c0.example.net/"),
        (4, "mongodb://db2:27018"),
    ]
    assert [h.name for h in read_hosts(path)] == ["db1", "c0.example.net", "db2:27018"]
    taken: set[str] = set()
    assert [file_stem(FleetHost(n, "mongodb://db1:1"), taken) for n in (1, 2)] == ["db1_1", "db1_1-line2"]


@pytest.mark.parametrize(
    ("text", "error"),
    [
        ("db1\nmongodb://u:pa ss@db2\n", "fleet.txt:2 is not a MongoDB URI or host[:port]"),
        ("db1\ndb1\n", "fleet.txt:2 repeats line 1"),
        ("# nothing\n\n", "fleet.txt lists no host"),
    ],
)
def test_a_bad_hosts_file_is_a_usage_error_naming_its_line(tmp_path: Path, text: str, error: str) -> None:
    hosts = tmp_path / "fleet.txt"
    hosts.write_text(text)
    proc = ckptdiag("diagnose", "--hosts", str(hosts), "-d", "1")
    assert proc.returncode == 2 and error in proc.stderr and "pa ss" not in proc.stderr
    assert proc.stderr.count("\n") == 1


def test_hosts_cannot_go_with_uri(tmp_path: Path) -> None:
    hosts = tmp_path / "fleet.txt"
    hosts.write_text("db1\n")
    proc = ckptdiag("diagnose", "--hosts", str(hosts), "--uri", "mongodb://db9")
    assert proc.returncode == 2 and "--uri cannot go with it" in proc.stderr


def test_the_index_lists_the_worst_first() -> None:
    hosts = [
        HostVerdict(1, "a", "a", "ok", ""),
        HostVerdict(2, "b", "b", None, "unreachable"),
        HostVerdict(3, "c", "c", "critical", ""),
        HostVerdict(4, "d", "d", "warn", ""),
        HostVerdict(5, "e", "e", "critical", ""),
    ]
    assert [h.name for h in worst_first(hosts)] == ["c", "e", "d", "b", "a"]
    assert fleet_severity(hosts) == "critical" and fleet_severity(hosts[:2]) == "ok"
