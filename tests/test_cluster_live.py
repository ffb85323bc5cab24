"""Every member of a replica set or sharded cluster recorded live over the real wire protocol:
loopback wire servers (mockupdb) replaying a real 3-member set's documents, driven through the
CLI while the test fails the primary over, takes a member down, and changes the membership."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from conftest import run_cli
from replset import ReplicaSetReplay, replica_set, sharded

from ckptdiag.recording import Recording, read_recording

pytest.importorskip("mockupdb")

INTERVAL = 0.2


def ckptdiag(*args: str, timeout: float = 90) -> subprocess.CompletedProcess[str]:
    return run_cli(*args, timeout=timeout)


def recordings(directory: Path) -> dict[str, Recording]:
    """Each member's recording, by the host its server reported."""
    out = {}
    for path in sorted(directory.glob("*.jsonl.gz")):
        rec = read_recording(path)
        out[rec.header["server"]["host"]] = rec
    return out


def roles(rec: Recording) -> list[tuple[str | None, str]]:
    return [(e["previous"], e["role"]) for e in rec.events if e["kind"] == "role"]


class AtSample(threading.Thread):
    """``action`` run once the recorder has sampled ``member`` ``count`` times: the change comes
    at the same point of the recording however long the recorder took to start (seconds after
    its launch were too few on a host whose cores were busy)."""

    def __init__(self, rs: ReplicaSetReplay, member: int, count: int, action: Any) -> None:
        super().__init__(daemon=True)
        self.server, self.count, self.action = rs.members[member], count, action
        self.stopped = threading.Event()
        self.start()

    def run(self) -> None:
        while not self.stopped.wait(0.01):
            if self.server.calls >= self.count:
                self.action()
                return

    def cancel(self) -> None:
        self.stopped.set()


def at_sample(rs: ReplicaSetReplay, count: int, action: Any) -> AtSample:
    """``action`` once the first member has been sampled ``count`` times (``INTERVAL`` apart)."""
    return AtSample(rs, 0, count, action)


def test_a_replica_set_uri_records_every_member_on_one_grid(tmp_path: Path) -> None:
    with replica_set(3) as rs:
        proc = ckptdiag("record", "--uri", rs.seed_uri, "-d", "2", "-i", str(INTERVAL), "-o", str(tmp_path / "rs"))
    assert proc.returncode == 0, proc.stderr
    assert "replica set (rs1): 3 members" in proc.stderr
    recs = recordings(tmp_path / "rs")
    # the URI named one member; the other two came from replSetGetStatus
    assert sorted(recs) == sorted(rs.addresses)
    for host, rec in recs.items():
        assert len(rec.samples) == 11 and not rec.truncated, host  # ticks 0..10, none lost to connecting
        assert roles(rec) == [(None, "primary" if host == rs.addresses[0] else "secondary")]
        assert rec.header["source"]["cluster"] == {"set": "rs1", "shard": None}
        assert "directConnection=true" in rec.header["source"]["uri"]
        assert rec.samples[-1]["m"]["repl.primary"] == (1 if host == rs.addresses[0] else 0)
    # one grid: sample k of every member is taken at the same moment (a shared origin, not each
    # member's own start), so the members' timelines line up sample for sample
    origin = min(rec.samples[0]["mono"] for rec in recs.values())
    for rec in recs.values():
        for sample in rec.samples:
            assert abs(sample["mono"] - origin - sample["seq"] * INTERVAL) < 0.15


def test_each_members_replication_lag_is_recorded_beside_its_samples(tmp_path: Path) -> None:
    with replica_set(3) as rs:
        rs.state.behind[2] = 4.5  # member 2 applies 4.5 s behind the primary; member 1 keeps up
        proc = ckptdiag("record", "--uri", rs.seed_uri, "-d", "0.4", "-i", str(INTERVAL), "-o", str(tmp_path / "rs"))
    assert proc.returncode == 0, proc.stderr
    recs = recordings(tmp_path / "rs")
    lags = {host: {s["m"]["repl.lag_ms"] for s in rec.samples} for host, rec in recs.items()}
    assert lags == {rs.addresses[0]: {0}, rs.addresses[1]: {0}, rs.addresses[2]: {4500}}


def test_a_failover_mid_recording_is_role_events_with_nothing_lost(tmp_path: Path) -> None:
    out = tmp_path / "rs"
    with replica_set(3) as rs:
        timer = at_sample(rs, 8, lambda: rs.fail_over(1))
        proc = ckptdiag("record", "--uri", rs.seed_uri, "-d", "3", "-i", str(INTERVAL), "-o", str(out))
        timer.cancel()
    assert proc.returncode == 0, proc.stderr
    recs = recordings(out)
    old, new, other = (recs[a] for a in rs.addresses)
    assert roles(old) == [(None, "primary"), ("primary", "secondary")]
    assert roles(new) == [(None, "secondary"), ("secondary", "primary")]
    assert [r for _, r in roles(other)] == ["secondary", "secondary"]  # it saw the new primary
    assert next(e for e in other.events if e["kind"] == "role" and e["previous"])["primary"] == rs.addresses[1]
    for rec in recs.values():  # every tick of every member, the failover included
        assert len(rec.samples) == 16 and not [e for e in rec.events if e["kind"] == "gap"]
    assert f"{rs.addresses[1]} is now primary (was secondary)" in proc.stderr


def test_a_member_that_goes_away_is_a_gap_in_its_recording_only(tmp_path: Path) -> None:
    out = tmp_path / "rs"
    with replica_set(3) as rs:
        timers = [at_sample(rs, 5, lambda: rs.state.down.add(2)), at_sample(rs, 10, lambda: rs.state.down.discard(2))]
        proc = ckptdiag("record", "--uri", rs.seed_uri, "-d", "4", "-i", str(INTERVAL), "-o", str(out))
        for t in timers:
            t.cancel()
    assert proc.returncode == 0, proc.stderr
    recs = recordings(out)
    lost = recs[rs.addresses[2]]
    kinds = [e["kind"] for e in lost.events]
    assert "gap" in kinds and "reconnected" in kinds and kinds[-1] == "end"
    assert 5 < len(lost.samples) < 21
    for host in rs.addresses[:2]:
        assert len(recs[host].samples) == 21 and "gap" not in [e["kind"] for e in recs[host].events]
    assert f"{rs.addresses[2]} gap" in proc.stderr


def test_members_joining_and_leaving_are_followed(tmp_path: Path) -> None:
    out = tmp_path / "rs"
    with replica_set(3, spare=1) as rs:
        # member 3 joins and member 2 leaves: a new configuration (setVersion 2) that every member reports
        timer = at_sample(rs, 8, lambda: rs.reconfigure([0, 1, 3]))
        proc = ckptdiag("record", "--uri", rs.seed_uri, "-d", "4", "-i", str(INTERVAL), "-o", str(out))
        timer.cancel()
    assert proc.returncode == 0, proc.stderr
    recs = recordings(out)
    assert sorted(recs) == sorted(rs.addresses)
    joined, left = recs[rs.addresses[3]], recs[rs.addresses[2]]
    assert joined.header["source"]["joined"] is True and recs[rs.addresses[0]].header["source"]["joined"] is False
    assert 3 <= len(joined.samples) < 21  # recorded from when it joined, on the same grid
    origin = recs[rs.addresses[0]].samples[0]["mono"]
    assert all(
        abs((s["mono"] - origin) / INTERVAL - round((s["mono"] - origin) / INTERVAL)) < 0.5 for s in joined.samples
    )
    end = left.events[-1]
    assert end["kind"] == "end" and end["reason"] == "removed from the set's configuration"
    assert 5 < len(left.samples) < 21
    assert f"{rs.addresses[3]} joined rs1" in proc.stderr and f"{rs.addresses[2]} left rs1" in proc.stderr


def test_a_member_down_at_the_start_is_recorded_from_when_it_answers(tmp_path: Path) -> None:
    out = tmp_path / "rs"
    with replica_set(3) as rs:
        rs.state.down.add(2)
        timer = at_sample(rs, 8, lambda: rs.state.down.discard(2))
        proc = ckptdiag(
            "record", "--uri", rs.seed_uri, "-d", "4", "-i", str(INTERVAL), "-o", str(out), "--timeout", "0.5"
        )
        timer.cancel()
    assert proc.returncode == 0, proc.stderr
    recs = recordings(out)
    assert len(recs[rs.addresses[0]].samples) == 21
    late = recs[rs.addresses[2]]
    assert 0 < len(late.samples) < 21


def test_a_mongos_leads_to_every_shard_member(tmp_path: Path) -> None:
    out = tmp_path / "cluster"
    with sharded(shards=2, members=2) as (mongos, sets):
        proc = ckptdiag("record", "--uri", mongos.uri, "-d", "1", "-i", str(INTERVAL), "-o", str(out))
        members = [a for rs in sets for a in rs.addresses]
    assert proc.returncode == 0, proc.stderr
    assert "a mongos: recording its shards' members instead" in proc.stderr
    assert "sharded cluster (shard0rs, shard1rs): 4 members" in proc.stderr
    recs = recordings(out)
    assert sorted(recs) == sorted(members)  # the mongos itself is not polled: it has no WiredTiger
    shards = {host: rec.header["source"]["cluster"]["shard"] for host, rec in recs.items()}
    assert shards == {**dict.fromkeys(sets[0].addresses, "shard0"), **dict.fromkeys(sets[1].addresses, "shard1")}
    assert all(len(rec.samples) == 6 for rec in recs.values())


def test_discover_from_one_member(tmp_path: Path) -> None:
    out = tmp_path / "rs"
    with replica_set(3) as rs:
        one = f"mongodb://{rs.addresses[1]}"
        proc = ckptdiag("record", "--uri", one, "--discover", "-d", "0.4", "-i", str(INTERVAL), "-o", str(out))
    assert proc.returncode == 0, proc.stderr
    assert sorted(recordings(out)) == sorted(rs.addresses)


def test_cluster_ndjson_lines_say_their_member(tmp_path: Path) -> None:
    with replica_set(3) as rs:
        proc = ckptdiag("record", "--uri", rs.seed_uri, "-d", "0.4", "-i", str(INTERVAL), "--ndjson", "-")
    assert proc.returncode == 0, proc.stderr
    lines = [json.loads(line) for line in proc.stdout.splitlines()]
    samples = [line for line in lines if line["type"] == "sample"]
    assert sorted({s["member"] for s in samples}) == sorted(rs.addresses)
    assert len(samples) == 9
    assert not list(tmp_path.iterdir()) and not list(Path.cwd().glob("ckptdiag-*"))  # stdout only: no files


def test_existing_member_files_are_never_overwritten(tmp_path: Path) -> None:
    out = tmp_path / "rs"
    with replica_set(3) as rs:
        first = ckptdiag("record", "--uri", rs.seed_uri, "-d", "0.2", "-i", str(INTERVAL), "-o", str(out))
        before = {p: p.read_bytes() for p in out.iterdir()}
        again = ckptdiag("record", "--uri", rs.seed_uri, "-d", "0.2", "-i", str(INTERVAL), "-o", str(out))
    assert first.returncode == 0, first.stderr
    assert again.returncode == 1
    assert again.stderr.count("\n") == 1 and "already exists; ckptdiag never overwrites" in again.stderr
    assert {p: p.read_bytes() for p in out.iterdir()} == before


def test_a_file_output_for_a_cluster_is_a_usage_error(tmp_path: Path) -> None:
    with replica_set(3) as rs:
        proc = ckptdiag("record", "--uri", rs.seed_uri, "-d", "1", "-o", str(tmp_path / "rs.jsonl.gz"))
    assert proc.returncode == 2
    assert proc.stderr.startswith("ckptdiag: error: a cluster is recorded one file per member")
    assert not list(tmp_path.iterdir())


def test_diagnose_a_replica_set_reports_the_cluster(tmp_path: Path) -> None:
    with replica_set(3) as rs:
        proc = ckptdiag(
            "diagnose",
            "--uri",
            rs.seed_uri,
            "-d",
            "1.6",
            "-i",
            str(INTERVAL),
            "-f",
            "json",
            "--save",
            str(tmp_path / "rs"),
        )
    assert proc.returncode in (0, 3, 4), proc.stderr
    doc = json.loads(proc.stdout)
    members = {m["name"]: m for m in doc["cluster"]["members"]}
    assert sorted(members) == sorted(rs.addresses)
    assert members[rs.addresses[0]]["role"] == "primary"
    assert {members[a]["role"] for a in rs.addresses[1:]} == {"secondary"}
    assert len(list((tmp_path / "rs").glob("*.jsonl.gz"))) == 3


def test_diagnose_a_cluster_with_a_log_is_refused_before_recording(tmp_path: Path) -> None:
    log = tmp_path / "mongod.log"
    log.write_text("")
    with replica_set(3) as rs:
        started = time.monotonic()
        proc = ckptdiag("diagnose", "--uri", rs.seed_uri, "-d", "10m", "--log", str(log))
    assert proc.returncode == 2 and time.monotonic() - started < 30
    assert "--log with a cluster" in proc.stderr


def test_rediscovery_that_reaches_only_a_shard_does_not_drop_the_others() -> None:
    """After a mongos goes away, asking a known member finds only its own set: not a reason to
    stop recording the other shards."""
    from ckptdiag.clock import SystemClock
    from ckptdiag.recording.cluster import ClusterRecorder
    from ckptdiag.sources.discovery import MemberAddress, Topology

    whole = Topology("sharded cluster", (MemberAddress("a:1", "s0", "s0"), MemberAddress("b:1", "s1", "s1")))
    part = Topology("replica set", (MemberAddress("a:1", "s0"),))
    recorder = ClusterRecorder(
        discover=lambda known: part,
        source_for=lambda a: None,  # type: ignore[arg-type,return-value]
        plan_for=lambda kind, info: None,  # type: ignore[arg-type,return-value]
        header_source=lambda a: {},
        out_dir=None,
        clock=SystemClock(),
        warn=lambda line: None,
    )
    assert recorder._follow(whole) is whole


def test_replica_set_replay_serves_the_real_documents() -> None:
    rs = ReplicaSetReplay(3)
    assert rs.status["version"] == "4.2.8" and len(rs.rs_status["members"]) == 3


def test_a_mongodb_srv_name_leads_to_its_members_with_its_txt_options(monkeypatch: pytest.MonkeyPatch) -> None:
    """mongodb+srv:// resolves through DNS (SRV: the hosts; TXT: authSource, replicaSet): the
    resolver is given the loopback set's addresses, and each member's own URI keeps what the
    TXT record said (authSource) and leaves replicaSet out (each member is polled directly)."""
    from pymongo.synchronous import srv_resolver

    from ckptdiag.sources.connection import ConnectOptions
    from ckptdiag.sources.discovery import discover
    from ckptdiag.sources.mongo import MongoSource

    with replica_set(3) as rs:
        seeds = [("127.0.0.1", int(a.rsplit(":", 1)[1])) for a in rs.addresses[:2]]
        monkeypatch.setattr(srv_resolver._SrvResolver, "get_hosts", lambda self: seeds)
        monkeypatch.setattr(srv_resolver._SrvResolver, "get_options", lambda self: "authSource=admin&replicaSet=rs1")
        # tls=false: the loopback servers speak plain TCP (an SRV name implies TLS otherwise)
        options = ConnectOptions(uri="mongodb+srv://monitor:pw@cluster0.example.net/?tls=false&authMechanism=PLAIN")
        topology = discover(options)
        assert topology.kind == "replica set" and sorted(m.host for m in topology.members) == sorted(rs.addresses)
        assert topology.resolved == (("authSource", "admin"),)
        third = options.for_member(rs.addresses[2], topology.resolved)
        assert "replicaSet" not in third.client_uri() and "authSource=admin" in third.client_uri()
        source = MongoSource(third)
        try:
            info = source.connect()
        finally:
            source.close()
        assert info.host == rs.addresses[2]
        assert rs.members[2].auth[-1]["$db"] == "admin"  # the TXT record's authSource reached the member
        assert "pw" not in third.display()


def test_source_diagnostic_brings_each_members_own_disks(tmp_path: Path) -> None:
    with replica_set(3) as rs:
        proc = ckptdiag(
            "record",
            "--uri",
            rs.seed_uri,
            "--source",
            "diagnostic",
            "-d",
            "0.4",
            "-i",
            str(INTERVAL),
            "-o",
            str(tmp_path / "rs"),
        )
    assert proc.returncode == 0, proc.stderr
    recs = recordings(tmp_path / "rs")
    assert len(recs) == 3
    assert all(rec.header["source"]["disks"] == "getDiagnosticData" for rec in recs.values())
    assert all(rec.header["source"]["kind"] == "diagnostic" for rec in recs.values())


def test_ctrl_c_ends_every_members_recording_complete(tmp_path: Path) -> None:
    import signal

    out = tmp_path / "rs"
    env = {k: v for k, v in os.environ.items() if k != "MONGODB_URI"}
    with replica_set(3) as rs:
        proc = subprocess.Popen(
            [sys.executable, "-m", "ckptdiag", "record", "--uri", rs.seed_uri, "-i", str(INTERVAL), "-o", str(out)],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
        )
        deadline = time.monotonic() + 30
        while len(list(out.glob("*.jsonl.gz"))) < 3 and time.monotonic() < deadline:
            time.sleep(0.1)
        time.sleep(1.0)
        proc.send_signal(signal.SIGINT)
        _, stderr = proc.communicate(timeout=30)
    assert proc.returncode == 130, stderr
    recs = recordings(out)
    assert len(recs) == 3
    for rec in recs.values():
        end = rec.events[-1]
        assert end["kind"] == "end" and end["reason"] == "interrupted" and not rec.truncated
        assert len(rec.samples) >= 3 and end["samples"] == len(rec.samples)


def test_a_standalone_found_through_a_seed_list_is_the_one_that_answered(tmp_path: Path) -> None:
    import socket

    from conftest import load_status
    from wire import replay

    closed = socket.socket()
    closed.bind(("127.0.0.1", 0))
    dead = closed.getsockname()[1]
    closed.close()
    base = load_status("serverStatus_8.2.10__AdilEnaanai+iwa2026.json")
    out = tmp_path / "one"
    with replay(base) as server:
        uri = f"mongodb://127.0.0.1:{dead},127.0.0.1:{server.server.port}/"
        proc = ckptdiag("record", "--uri", uri, "-d", "0.4", "-i", str(INTERVAL), "-o", str(out), "--timeout", "0.5")
    assert proc.returncode == 0, proc.stderr
    assert "server: 1 member" in proc.stderr
    (rec,) = [read_recording(p) for p in out.glob("*.jsonl.gz")]
    assert len(rec.samples) == 3 and f"127.0.0.1:{server.server.port}" in rec.header["source"]["uri"]
