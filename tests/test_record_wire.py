"""`ckptdiag record` end to end over the real wire protocol, against a loopback server replaying
real serverStatus documents (mockupdb as the wire server)."""

from __future__ import annotations

import contextlib
import copy
import json
import math
import os
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from conftest import load_status, run_cli, shared_path
from wire import advancing, replay

from ckptdiag.model import catalogue
from ckptdiag.recording import read_recording

pytest.importorskip("mockupdb")

VERSIONS = [
    "serverStatus_4.2.12__b1ron+ftdc.json",
    "serverStatus_7.0.21__EP-UnaHur-2025C1+anti-social-mongo-edp.json",
    "serverStatus_8.0.10__ISEP-1190402+SEGPRD-2025.json",
    "serverStatus_8.2.10__AdilEnaanai+iwa2026.json",
]


def ckptdiag(*args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return run_cli(*args, timeout=timeout)


def _moving(base: dict[str, Any]):  # type: ignore[no-untyped-def]
    def step(doc: dict[str, Any], n: int) -> None:
        doc["uptimeMillis"] = int(base["uptimeMillis"]) + 1000 * n
        doc["opcounters"]["insert"] = int(base["opcounters"]["insert"]) + 500 * n
        doc["wiredTiger"]["cache"]["tracked dirty bytes in the cache"] = 1_000_000 * (n + 1)

    return advancing(step)


@pytest.mark.parametrize("name", VERSIONS, ids=lambda n: n.split("__")[0])
def test_record_replays_real_documents_of_each_version(tmp_path: Path, name: str) -> None:
    base = load_status(name)
    out = tmp_path / "rec.jsonl.gz"
    with replay(base, status=_moving(base)) as server:
        proc = ckptdiag("record", "--uri", server.uri, "-i", "0.25", "-d", "0.75", "-o", str(out))
        sampling = [r for r in server.requests if len(r) > 2]
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == ""  # not a terminal: nothing on stdout
    assert proc.stderr.strip().splitlines()[-1].startswith("ckptdiag: recorded 4 samples")
    rec = read_recording(out)
    assert rec.header["server"]["version"] == base["version"]
    assert len(rec.samples) == 4 and not rec.truncated
    cov = next(e for e in rec.events if e["kind"] == "coverage")
    assert cov["missing"] == []
    expected = catalogue.extract(base)
    first = rec.samples[0]["m"]
    for key in ("cache.max_bytes", "ckpt.generation", "ckpt.bytes_written", "cache.app_evicted_pages"):
        assert first[key] == expected[key]
    assert [s["m"]["cache.dirty_bytes"] for s in rec.samples] == [2_000_000, 3_000_000, 4_000_000, 5_000_000]
    # a server on this host: its host's CPU time beside each sample (as FTDC's systemMetrics.cpu)
    assert rec.header["disks"]["local_to_server"] and all(s["m"]["host.cpu.idle_ms"] > 0 for s in rec.samples)
    # each tick asks only for what the catalogue needs, with latency histograms: the replication
    # sections (a secondary's writes and role) are asked for, locks and the rest are not
    needed = catalogue.sections()
    assert {"repl", "metrics", "opcountersRepl"} <= needed
    assert sampling and all(r["locks"] == 0 and not ({k for k, v in r.items() if v == 0} & needed) for r in sampling)
    assert all(r["opLatencies"] == {"histograms": True} and "wiredTiger" not in r for r in sampling)


def test_dropped_connection_and_missing_wiredtiger_are_recorded_and_survived(tmp_path: Path) -> None:
    base = load_status(VERSIONS[1])
    moving = _moving(base)

    def status(n: int, b: dict[str, Any]) -> dict[str, Any] | str:
        if n == 3:
            return "hangup"
        doc = moving(n, b)
        if n == 6:
            del doc["wiredTiger"]  # mongod omits it under checkpoint contention
        return doc

    out = tmp_path / "rec.jsonl"
    with replay(base, status=status) as server:
        proc = ckptdiag("record", "--uri", server.uri, "-d", "6", "-o", str(out))
    assert proc.returncode == 0, proc.stderr
    rec = read_recording(out)
    kinds = [e["kind"] for e in rec.events]
    assert kinds[0] == "coverage" and "gap" in kinds and "reconnected" in kinds and kinds[-1] == "end"
    assert "restart" not in kinds
    assert sum(bool(s.get("wt_missing")) for s in rec.samples) == 1
    assert len(rec.samples) >= 5  # 7 ticks, one lost to the drop
    assert " gap " in proc.stderr and "reconnected" in proc.stderr


def test_mmapv1_server_is_refused_with_a_hint(tmp_path: Path) -> None:
    base = load_status("serverStatus_3.2.4-mmapv1__cotramarko+exjobb.json")
    out = tmp_path / "rec.jsonl"
    with replay(base) as server:
        proc = ckptdiag("record", "--uri", server.uri, "-d", "2", "-o", str(out))
    assert proc.returncode == 1
    line = proc.stderr.strip()
    assert line.startswith("ckptdiag: error: ") and "mmapv1 storage engine, not WiredTiger" in line
    assert "(hint: " in line and "\n" not in line
    assert not out.exists()  # nothing recorded, nothing left behind


def test_mongos_is_refused(tmp_path: Path) -> None:
    base = load_status(VERSIONS[1])
    with replay(base, hello_extra={"msg": "isdbgrid"}) as server:
        proc = ckptdiag("record", "--uri", server.uri, "-d", "2", "-o", str(tmp_path / "r.jsonl"))
    assert proc.returncode == 1 and "is a mongos" in proc.stderr and "shard member" in proc.stderr


def test_auth_failure_says_so_and_never_shows_the_password(tmp_path: Path) -> None:
    base = load_status(VERSIONS[1])
    fail = {"saslstart": {"ok": 0, "code": 18, "codeName": "AuthenticationFailed", "errmsg": "Authentication failed."}}
    with replay(base, fail=fail) as server:
        uri = server.uri.replace("mongodb://", "mongodb://monitor:Hunter2Secret@") + "/?authSource=admin"
        proc = ckptdiag("record", "--uri", uri, "-d", "2", "-o", str(tmp_path / "r.jsonl"))
    assert proc.returncode == 1
    assert "authentication failed" in proc.stderr and "--authenticationDatabase" in proc.stderr
    assert "Hunter2Secret" not in proc.stderr + proc.stdout


def test_missing_privileges_name_clustermonitor(tmp_path: Path) -> None:
    base = load_status(VERSIONS[1])
    fail = {
        "getcmdlineopts": {
            "ok": 0,
            "code": 13,
            "codeName": "Unauthorized",
            "errmsg": "not authorized on admin to execute command { getCmdLineOpts: 1 }",
        }
    }
    with replay(base, fail=fail) as server:
        proc = ckptdiag("record", "--uri", server.uri, "-d", "2", "-o", str(tmp_path / "r.jsonl"))
    assert proc.returncode == 1 and "not authorized" in proc.stderr and "clusterMonitor" in proc.stderr


def test_unreachable_server(tmp_path: Path) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # closed when the block ends: nothing listens there
    proc = ckptdiag(
        "record", "--uri", f"mongodb://127.0.0.1:{port}", "--timeout", "0.5", "-d", "2", "-o", str(tmp_path / "r.jsonl")
    )
    assert proc.returncode == 1
    assert proc.stderr.startswith("ckptdiag: error: cannot reach mongodb://127.0.0.1:") and "hint:" in proc.stderr
    assert not (tmp_path / "r.jsonl").exists()


def test_unwritable_output_fails_before_any_sampling(tmp_path: Path) -> None:
    base = load_status(VERSIONS[1])
    with replay(base) as server:
        proc = ckptdiag("record", "--uri", server.uri, "-d", "2", "-o", str(tmp_path / "missing" / "r.jsonl"))
        assert server.calls == 0
    assert proc.returncode == 1 and "cannot write" in proc.stderr


def test_existing_recording_is_never_overwritten(tmp_path: Path) -> None:
    out = tmp_path / "r.jsonl"
    out.write_text("precious\n")
    proc = ckptdiag("record", "--uri", "mongodb://127.0.0.1:1", "-d", "2", "-o", str(out))
    assert proc.returncode == 1 and "already exists" in proc.stderr
    assert out.read_text() == "precious\n"


def test_ndjson_streams_one_object_per_sample_and_credentials_stay_out(tmp_path: Path) -> None:
    base = copy.deepcopy(load_status(VERSIONS[2]))
    cmdline = {
        "argv": ["mongod", "--tlsCertificateKeyFilePassword", "PemPass9", "--dbpath", "/data/db"],
        "parsed": {"storage": {"dbPath": "/data/db"}, "net": {"tls": {"certificateKeyFilePassword": "PemPass9"}}},
    }
    out = tmp_path / "r.jsonl.gz"
    with replay(base, status=_moving(base), cmdline=cmdline) as server:
        uri = (
            server.uri.replace("mongodb://", "mongodb://monitor:Hunter2Secret@")
            + "/?authMechanism=PLAIN&authSource=$external"
        )
        # the replay server accepts PLAIN: auth succeeds, so the secrets reach every output path
        proc = ckptdiag("record", "--uri", uri, "-d", "2", "--ndjson", "-", "-o", str(out))
    assert proc.returncode == 0, proc.stderr
    lines = [json.loads(x) for x in proc.stdout.splitlines()]
    assert lines[0]["type"] == "header"
    assert [x["seq"] for x in lines if x["type"] == "sample"] == [0, 1, 2]
    everything = proc.stdout + proc.stderr + read_recording(out).header.__repr__()
    import gzip

    everything += gzip.decompress(out.read_bytes()).decode()
    assert "Hunter2Secret" not in everything and "PemPass9" not in everything
    assert "monitor:<redacted>@" in lines[0]["source"]["uri"]
    assert "<redacted>" in json.dumps(lines[0]["server"]["cmdline"])


def test_bad_duration_is_a_usage_error() -> None:
    proc = ckptdiag("record", "-d", "soon")
    assert proc.returncode == 2 and "is not a duration" in proc.stderr


def test_source_diagnostic_records_the_servers_own_disks(tmp_path: Path) -> None:
    from bson import json_util

    diag = json_util.loads(shared_path("server-status", "exporter__testdata__get_diagnostic_data.json").read_text())
    base = diag["serverStatus"]
    sda = diag["systemMetrics"]["disks"]["sda"]

    def system_metrics(n: int) -> dict[str, Any]:
        disk = {**sda, "writes": int(sda["writes"]) + 100 * n, "write_sectors": int(sda["write_sectors"]) + 2048 * n}
        return {"disks": {"sda": disk}}

    out = tmp_path / "diag.jsonl"
    with replay(base, status=_moving(base), system_metrics=system_metrics) as server:
        proc = ckptdiag("record", "--source", "diagnostic", "--uri", server.uri, "-d", "3", "-o", str(out))
    assert proc.returncode == 0, proc.stderr
    rec = read_recording(out)
    assert rec.header["source"]["kind"] == "diagnostic" and rec.header["source"]["disks"] == "getDiagnosticData"
    assert "physical disks only" in rec.header["disks"]["notes"][0]
    writes = [s["disk"]["sda"][4] for s in rec.samples]
    assert [w - writes[0] for w in writes] == [0, 100, 200, 300]
    assert rec.samples[0]["m"]["cache.max_bytes"] == catalogue.extract(base)["cache.max_bytes"]
    frame = rec.to_frame()
    assert frame["disk.sda.wr_sectors"].diff().iloc[1] == 2048


def test_source_diagnostic_without_privileges_names_read_on_local(tmp_path: Path) -> None:
    base = load_status(VERSIONS[1])
    fail = {
        "getdiagnosticdata": {
            "ok": 0,
            "code": 13,
            "codeName": "Unauthorized",
            "errmsg": "not authorized on admin to execute command { getDiagnosticData: 1 }",
        }
    }
    with replay(base, fail=fail) as server:
        proc = ckptdiag(
            "record", "--source", "diagnostic", "--uri", server.uri, "-d", "2", "-o", str(tmp_path / "r.jsonl")
        )
    assert proc.returncode == 1 and "read on local" in proc.stderr and not (tmp_path / "r.jsonl").exists()


@pytest.mark.parametrize(("sig", "code", "reason"), [(2, 130, "interrupted"), (15, 0, "terminated")])
def test_ctrl_c_and_sigterm_leave_a_complete_recording(tmp_path: Path, sig: int, code: int, reason: str) -> None:
    import signal
    import time

    base = load_status(VERSIONS[1])
    out = tmp_path / "r.jsonl.gz"
    with replay(base, status=_moving(base)) as server:
        proc = subprocess.Popen(
            [sys.executable, "-m", "ckptdiag", "record", "--uri", server.uri, "-o", str(out)],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        deadline = time.monotonic() + 30
        while server.calls < 4 and time.monotonic() < deadline:  # connect's serverStatus + 3 samples
            time.sleep(0.1)
        proc.send_signal(signal.Signals(sig))
        _, err = proc.communicate(timeout=30)
    assert proc.returncode == code, err
    rec = read_recording(out)
    assert not rec.truncated and len(rec.samples) >= 3
    assert rec.events[-1]["kind"] == "end" and rec.events[-1]["reason"] == reason
    assert f"stopped: {reason}" in err


def test_debug_shows_the_traceback(tmp_path: Path) -> None:
    proc = ckptdiag(
        "--debug",
        "record",
        "--uri",
        "mongodb://127.0.0.1:1",
        "--timeout",
        "0.2",
        "-d",
        "1",
        "-o",
        str(tmp_path / "r.jsonl"),
    )
    assert proc.returncode == 1 and "Traceback" in proc.stderr and "ckptdiag: error: cannot reach" in proc.stderr


def test_diagnose_records_then_reports_and_keeps_the_recording_only_when_asked(tmp_path: Path) -> None:
    base = load_status(VERSIONS[-1])
    saved = tmp_path / "kept.jsonl.gz"
    report = tmp_path / "report.md"
    with replay(base, status=_moving(base)) as server:
        proc = ckptdiag("diagnose", "--uri", server.uri, "-d", "3", "-f", "json")
        kept = ckptdiag("diagnose", "--uri", server.uri, "-d", "2", "--save", str(saved), "-o", str(report))
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    assert doc["window"]["samples"] == 4 and doc["server"]["version"] == base["version"]
    assert doc["verdict"]["severity"] == "ok" and "not kept" in doc["source"]["path"]
    assert kept.returncode == 0, kept.stderr
    assert len(read_recording(saved).samples) == 3 and report.read_text().startswith("# ckptdiag: OK")
    # an unreachable server: the record's one-line error, no report
    closed = socket.socket()
    closed.bind(("127.0.0.1", 0))
    port = closed.getsockname()[1]
    closed.close()
    proc = ckptdiag("diagnose", "--uri", f"mongodb://127.0.0.1:{port}", "--timeout", "0.5", "-d", "2")
    assert proc.returncode == 1 and proc.stderr.startswith("ckptdiag: error: ") and proc.stdout == ""


def test_port_replaces_only_the_host_credentials_auth_source_and_tls_are_kept(tmp_path: Path) -> None:
    from fakes import status_doc

    # the URI names a host nobody listens on; --host/--port point at the server and nothing else changes
    uri = "mongodb://monitor:Pa%2Fss%3Fw0rd@127.0.0.1:1/?authMechanism=PLAIN&authSource=$external"
    with replay(status_doc(0)) as server:
        proc = ckptdiag("record", "--uri", uri, "--port", str(server.server.port), "-d", "1", "-o", str(tmp_path / "a"))
        assert proc.returncode == 0, proc.stderr
        (auth,) = server.auth[:1]
        assert auth["mechanism"] == "PLAIN" and auth["$db"] == "$external"  # authSource kept
        assert bytes(auth["payload"]) == b"\x00monitor\x00Pa/ss?w0rd"  # the credentials, decoded, kept
        assert server.requests  # it sampled through the replaced host
        proc = ckptdiag(
            "record", "--uri", uri, "--host", f"127.0.0.1:{server.server.port}", "-d", "1", "-o", str(tmp_path / "b")
        )
        assert proc.returncode == 0, proc.stderr
        assert len(server.auth) == 2 and server.auth[1]["$db"] == "$external"
        # TLS kept: the server speaks plain TCP, so a client that kept tls=true cannot get through
        calls = server.calls
        tls = "mongodb://127.0.0.1:1/?tls=true&tlsInsecure=true"
        proc = ckptdiag(
            "record",
            "--uri",
            tls,
            "--port",
            str(server.server.port),
            "--timeout",
            "2",
            "-d",
            "1",
            "-o",
            str(tmp_path / "c"),
        )
        assert proc.returncode != 0 and "cannot reach" in proc.stderr
        assert server.calls == calls and "Pa/ss" not in proc.stderr


@pytest.mark.parametrize("password", ["Pa/ss9w0rd", "Pa?ss9w0rd", "Pa#ss9w0rd", "P@ss9w0rd", "Pa:ss9w0rd"])
def test_a_password_typed_unescaped_never_appears_in_an_error(tmp_path: Path, password: str) -> None:
    # a password with a character the URI grammar reserves, typed without escaping: whatever the
    # driver makes of the URI, the error names the target without it and writes no file
    out = tmp_path / "r.jsonl"
    uri = f"mongodb://monitor:{password}@127.0.0.1:1/?authSource=admin"
    proc = ckptdiag("record", "--uri", uri, "--timeout", "0.5", "-d", "1", "-o", str(out))
    assert proc.returncode in (1, 2) and proc.stderr.startswith("ckptdiag: error: "), proc.stderr
    for text in (proc.stdout, proc.stderr):
        assert "ss9w0rd" not in text and password not in text, text
    assert "monitor:<redacted>@" in proc.stderr and not out.exists()


@pytest.mark.parametrize("args", [["-d", "nan"], ["-d", "inf"], ["-d", "1e400"], ["-i", "nan"], ["--timeout", "nan"]])
def test_numbers_are_checked_before_any_file_is_made(tmp_path: Path, args: list[str]) -> None:
    out = tmp_path / "r.jsonl"
    proc = ckptdiag("record", "--uri", "mongodb://127.0.0.1:1", *args, "-o", str(out))
    assert proc.returncode == 2 and proc.stderr.startswith("ckptdiag: error: ") and proc.stderr.count("\n") == 1
    assert not out.exists()


def test_sigterm_while_connecting_leaves_no_file(tmp_path: Path) -> None:
    import signal
    import time

    # a listener that accepts and never answers: the driver waits in its handshake
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(8)
        port = listener.getsockname()[1]
        out = tmp_path / "r.jsonl.gz"
        env = {k: v for k, v in os.environ.items() if k != "MONGODB_URI"}
        proc = subprocess.Popen(
            [sys.executable, "-m", "ckptdiag", "record", "--uri", f"mongodb://127.0.0.1:{port}/?directConnection=true",
             "--timeout", "60", "-d", "10", "-o", str(out)],
            stderr=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env,
        )  # fmt: skip
        # the recording takes its name only with its first sample: wait for the driver to connect
        # (then it is in its handshake) instead of for a file
        listener.settimeout(30)
        conn, _ = listener.accept()
        time.sleep(0.5)
        proc.send_signal(signal.SIGTERM)
        _, stderr = proc.communicate(timeout=30)
        conn.close()
    assert proc.returncode == 143, stderr
    assert stderr.strip() == "ckptdiag: stopped by SIGTERM (nothing half-written is left behind)"
    assert not out.exists()  # a 0-byte file here used to block the next run ("already exists")


def _limited(max_bytes: int):  # type: ignore[no-untyped-def]
    import resource

    def limit() -> None:  # in the child: its files cannot grow past max_bytes, as on a full disk
        resource.setrlimit(resource.RLIMIT_FSIZE, (max_bytes, max_bytes))

    return limit


def _record_on_a_small_disk(out: Path, max_bytes: int, seconds: int) -> subprocess.CompletedProcess[str]:
    """``record`` against a replaying server, its files limited to ``max_bytes`` (EFBIG past it)."""
    base = load_status(VERSIONS[1])
    env = {k: v for k, v in os.environ.items() if k != "MONGODB_URI"}
    with replay(base, status=_moving(base)) as server:
        return subprocess.run(
            [sys.executable, "-m", "ckptdiag", "record", "--uri", server.uri, "-d", str(seconds), "-o", str(out)],
            capture_output=True, text=True, timeout=90, env=env, preexec_fn=_limited(max_bytes),
        )  # fmt: skip


def test_a_full_disk_ends_with_a_clear_error_and_keeps_every_sample_written(tmp_path: Path) -> None:
    out = tmp_path / "r.jsonl"
    proc = _record_on_a_small_disk(out, 12_000, 30)
    assert proc.returncode == 1, proc.stderr
    line = proc.stderr.strip().splitlines()[-1]
    assert line.startswith(f"ckptdiag: error: cannot write {out}: File too large (") and "stay readable" in line
    flushed = int(line.split("(the ")[1].split(" sample")[0])
    rec = read_recording(out)
    assert flushed >= 1 and len(rec.samples) >= flushed  # every sample it said was kept is there
    assert "unexpected" not in proc.stderr


def test_no_space_at_all_leaves_no_file_behind(tmp_path: Path) -> None:
    out = tmp_path / "r.jsonl"
    proc = _record_on_a_small_disk(out, 0, 5)
    assert proc.returncode == 1 and "cannot write" in proc.stderr and "the 0 samples" in proc.stderr, proc.stderr
    assert not out.exists()
    if os.path.exists("/dev/full"):  # ENOSPC itself: the device is never removed
        proc = ckptdiag(
            "record", "--uri", "mongodb://127.0.0.1:1", "--timeout", "0.3", "--overwrite", "-o", "/dev/full"
        )
        assert proc.returncode == 1 and os.path.exists("/dev/full")


def test_diagnose_reads_mongods_log_beside_its_recording(tmp_path: Path) -> None:
    import datetime as dt

    base = load_status(VERSIONS[1])
    log = tmp_path / "mongod.log"
    with replay(base, status=_moving(base)) as server:
        bad = ckptdiag("diagnose", "--uri", server.uri, "-d", "3", "--log", str(_not_a_log(tmp_path)))
        calls = server.calls
        # a slow operation 4 s from now, inside the 8 s recording that starts now (its interpreter
        # and first sample take 1-3 s on a loaded host: the line lies well inside, not at its edge)
        soon = dt.datetime.now(dt.timezone.utc) + dt.timedelta(seconds=4)
        attr = {"type": "command", "ns": "a.b", "command": {"insert": "b"}, "durationMillis": 250}
        line = {"t": {"$date": soon.isoformat(timespec="milliseconds")}, "s": "I", "c": "COMMAND", "id": 51803,
                "ctx": "conn1", "msg": "Slow query", "attr": attr}  # fmt: skip
        log.write_text(json.dumps(line) + "\n")
        proc = ckptdiag(
            "diagnose", "--uri", server.uri, "-d", "8", "--log", str(log), "-f", "json", "--fail-on", "never"
        )
    assert bad.returncode == 2 and calls == 0  # refused before any sampling
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)["log"]
    assert doc["files"] == [str(log)] and doc["slow_ops"] == 1, doc  # in the recording's window


def _not_a_log(tmp_path: Path) -> Path:
    path = tmp_path / "notes.txt"
    path.write_text("remember to check the checkpoints\n")
    return path


@pytest.mark.parametrize("name", VERSIONS, ids=lambda n: n.split("__")[0])
def test_a_reply_read_lazily_gives_the_same_sample_as_one_decoded_whole(name: str) -> None:
    """serverStatus replies stay raw BSON until the catalogue reads them: the sample is the same
    as from the reply decoded whole, for every version's real document."""
    import bson
    from bson.raw_bson import RawBSONDocument

    from ckptdiag.recording import build_sample
    from ckptdiag.sources import mongo

    base = load_status(name)
    raw = dict(RawBSONDocument(bson.encode(base)))
    plain = bson.decode(bson.encode(base))
    lazy_sample = build_sample(raw, seq=0, wall=1.0, mono=1.0, rtt_ms=1.0)
    whole_sample = build_sample(plain, seq=0, wall=1.0, mono=1.0, rtt_ms=1.0)
    assert lazy_sample == whole_sample
    assert lazy_sample["m"] and catalogue.replica_state(raw) == catalogue.replica_state(plain)
    # the compiled reader: only the paths a sample reads, the same sample, role, coverage and restarts
    picked = mongo.read_reply(RawBSONDocument(bson.encode(base)))
    if mongo._bsonpick is None:
        pytest.skip("the compiled reply reader was not built")
    assert build_sample(picked, seq=0, wall=1.0, mono=1.0, rtt_ms=1.0) == whole_sample
    assert catalogue.replica_state(picked) == catalogue.replica_state(plain)
    assert catalogue.coverage(picked) == catalogue.coverage(plain)
    assert all(picked.get(k) == plain.get(k) for k in ("uptimeMillis", "pid", "localTime"))
    assert len(bson.encode(picked)) < len(bson.encode(plain))


def test_the_compiled_reply_reader_refuses_damage_and_takes_the_last_of_a_repeated_field() -> None:
    import bson

    from ckptdiag.sources import mongo

    pick = mongo._bsonpick
    if pick is None:
        pytest.skip("the compiled reply reader was not built")
    tree = ((b"a", ((b"b", None),)), (b"c", None))
    whole = mongo._whole
    doc = bson.encode({"a": {"b": 1, "x": [1, 2]}, "z": "skipped", "c": {"deep": [1, {"e": 2}]}})
    assert pick.pick(doc, tree, whole) == {"a": {"b": 1}, "c": {"deep": [1, {"e": 2}]}}
    # a field wanted as a document that is not one is left out (as a lookup into it finds nothing)
    assert pick.pick(bson.encode({"a": 5, "c": 1.5}), tree, whole) == {"c": 1.5}
    # the driver's dict keeps the last of a repeated field; so does the reader
    twice = bson.encode({"c": 1})[:-1] + b"\x10c\x00\x02\x00\x00\x00\x00"
    twice = len(twice).to_bytes(4, "little") + twice[4:]
    assert pick.pick(twice, tree, whole) == {"c": 2} == dict(bson.decode(twice))
    # every cut and every flipped length byte: a ValueError or a value, never a crash
    for cut in range(len(doc)):
        with pytest.raises(ValueError):
            pick.pick(doc[:cut], tree, whole)
    for at in range(len(doc)):
        for byte in (0x00, 0x7F, 0xFF):
            bad = bytearray(doc)
            bad[at] = byte
            with contextlib.suppress(ValueError, bson.errors.BSONError, UnicodeDecodeError):
                pick.pick(bytes(bad), tree, whole)
    at = doc.index(b"\x02z\x00") + 3  # the skipped string's length, past the document's end
    long_string = doc[:at] + (1000).to_bytes(4, "little") + doc[at + 4 :]
    with pytest.raises(mongo.BadReply, match="unreadable serverStatus reply: damaged BSON at byte"):
        mongo.read_reply(bson.raw_bson.RawBSONDocument(long_string))


def test_record_survives_any_reply_and_the_end_event_tells_why_it_ended(tmp_path: Path) -> None:
    """Replies of the wrong shape (NaN and infinite counters, a histogram bucket that is no
    number, sections of the wrong type, a value nested far deeper than any sample) are each a
    gap with its reason or a value left out; the recording goes on to its duration."""
    base = load_status(VERSIONS[1])
    moving = _moving(base)
    deep: Any = 1
    for _ in range(90):
        deep = {"d": deep}

    def status(n: int, b: dict[str, Any]) -> dict[str, Any]:
        doc = moving(n, b)
        doc = copy.deepcopy(doc)
        if n == 1:
            doc["opcounters"]["insert"] = float("nan")
            doc["wiredTiger"]["cache"]["tracked dirty bytes in the cache"] = float("inf")
        elif n == 2:
            doc["opLatencies"]["writes"]["histogram"] = [{"micros": "x", "count": 1}]
        elif n == 3:
            doc["wiredTiger"] = "not a section"
            doc["opcounters"] = [1, 2, 3]
        elif n == 4:
            doc["metrics"] = deep
        return doc

    out = tmp_path / "rec.jsonl.gz"
    with replay(base, status=status) as server:
        proc = ckptdiag("record", "--uri", server.uri, "-d", "6", "-o", str(out))
    assert proc.returncode == 0, proc.stderr
    assert "unexpected" not in proc.stderr
    rec = read_recording(out)
    end = rec.events[-1]
    assert end["kind"] == "end" and end["reason"] == "duration" and "error" not in end
    assert len(rec.samples) + end["gaps"] >= 6
    assert len(rec.samples) >= 4  # the replies with a bad value still give their good ones
    gaps = [e for e in rec.events if e["kind"] == "gap"]
    assert gaps and all(e["reason"].startswith("unreadable reply") for e in gaps)
    assert all(math.isfinite(v) for s in rec.samples for v in s["m"].values() if isinstance(v, float))


def test_an_oversized_reply_is_a_gap_with_its_reason(tmp_path: Path) -> None:
    """A reply past the wire protocol's 48 MiB (a server section grown huge): one gap that says
    so, a reconnect, and the recording goes on to its duration."""
    base = load_status(VERSIONS[1])

    def status(n: int, b: dict[str, Any]) -> dict[str, Any]:
        doc = copy.deepcopy(b)
        doc["uptimeMillis"] = int(b["uptimeMillis"]) + 1000 * n
        if n == 2:
            doc["metrics"]["huge"] = "x" * (60 << 20)
        return doc

    out = tmp_path / "rec.jsonl.gz"
    with replay(base, status=status, honour_filter=False) as server:
        proc = ckptdiag("record", "--uri", server.uri, "-d", "6", "-o", str(out), timeout=120)
    assert proc.returncode == 0, proc.stderr
    rec = read_recording(out)
    gaps = [e for e in rec.events if e["kind"] == "gap"]
    assert len(gaps) == 1 and "larger than server max message size" in gaps[0]["reason"]
    assert rec.events[-1]["reason"] == "duration" and len(rec.samples) >= 4
