"""Planted secrets never come out: every output of every command that reads a server or its files
(stdout, stderr, recordings, reports in each format) is searched for them."""

from __future__ import annotations

import datetime as dt
import gzip
import json
from pathlib import Path
from typing import Any

import bson
import pytest
from ftdc_writer import SimServer, write_ftdc

pytest.importorskip("mockupdb")

from conftest import load_status, mongod_line
from test_record_wire import ckptdiag
from wire import advancing, replay

SECRETS = (
    "hunter2LDAP",
    "hunter3LDAP",
    "s3cretK3yWT",
    "k3yidWT",
    "kmipP4ss",
    "Pa55URI",
    "Pa55FLAG",
    "C0lonS3cret",  # secretkey:VALUE, WiredTiger's other assignment
    "Qu0tedS3cret",  # "secretkey"="VALUE"
    "GetP4ramS3cret",  # getParameter's encryption=(secretkey=...)
)

CMDLINE: dict[str, Any] = {
    "argv": [
        "mongod",
        "--setParameter",
        "ldapQueryPassword=hunter2LDAP",
        "--setParameter=ldapQueryPassword=hunter3LDAP",
        '--wiredTigerEngineConfigString=encryption=(name=AES256-CBC,keyid="k3yidWT",secretkey=s3cretK3yWT)',
        "--kmipClientCertificatePassword",
        "kmipP4ss",
    ],
    "parsed": {
        "setParameter": {"ldapQueryPassword": "hunter2LDAP"},
        "security": {"kmip": {"clientCertificatePassword": "kmipP4ss"}},
        "storage": {
            "dbPath": "/data/db",
            "wiredTiger": {
                "engineConfig": {
                    "cacheSizeGB": 1,
                    "configString": "eviction_target=80,encryption=(keyid=k3yidWT,secretkey=s3cretK3yWT),"
                    'log=(enabled),encryption=(secretkey:C0lonS3cret),"encryption"=("secretkey"="Qu0tedS3cret")',
                }
            },
        },
    },
}


PARAMETERS: dict[str, Any] = {
    "syncdelay": 60.0,
    "wiredTigerEngineRuntimeConfig": "eviction=(threads_max=4),encryption=(secretkey=GetP4ramS3cret)",
    "ok": 1.0,
}


def _clean(label: str, text: str) -> None:
    for secret in SECRETS:
        assert secret.lower() not in text.lower(), f"{secret} in {label}"


def _outputs_of(tmp_path: Path, source: Path, tag: str) -> None:
    """Every report format of ``source``, to stdout and to files: none holds a secret."""
    for fmt in ("json", "md", "html", "table"):
        proc = ckptdiag("report", str(source), "-f", fmt, "--fail-on", "never")
        assert proc.returncode == 0, proc.stderr
        _clean(f"{tag} report -f {fmt}", proc.stdout + proc.stderr)
    for name in ("r.json", "r.md", "r.html", "r.txt"):
        out = tmp_path / f"{tag}-{name}"
        proc = ckptdiag("report", str(source), "-o", str(out), "--fail-on", "never")
        assert proc.returncode == 0, proc.stderr
        _clean(f"{tag} {name}", out.read_text() + proc.stderr)
    proc = ckptdiag("compare", str(source), str(source), "-f", "json")
    _clean(f"{tag} compare", proc.stdout + proc.stderr)


def test_secrets_in_ftdc_metadata_never_reach_a_report(tmp_path: Path) -> None:
    d = tmp_path / "diagnostic.data"
    d.mkdir()
    path = d / "metrics.2026-11-01T00-00-00Z-00000"
    write_ftdc(path, SimServer(checkpoints=[(30, 32), (90, 93)]), [float(i) for i in range(200)])
    # the metadata document as mongod writes it, with the planted getCmdLineOpts
    raw = path.read_bytes()
    first = int.from_bytes(raw[:4], "little")
    meta = bson.decode(raw[:first])
    meta["doc"]["getCmdLineOpts"] = CMDLINE
    meta["doc"]["getParameter"] = dict(PARAMETERS)
    path.write_bytes(bson.encode(meta) + raw[first:])
    assert b"s3cretK3yWT" in path.read_bytes()  # planted
    _outputs_of(tmp_path, d, "ftdc")


def test_secrets_of_the_server_and_the_uri_never_reach_a_recording_or_a_report(tmp_path: Path) -> None:
    base = load_status("serverStatus_7.0.21__EP-UnaHur-2025C1+anti-social-mongo-edp.json")

    def step(doc: dict[str, Any], n: int) -> None:
        doc["uptimeMillis"] = int(base["uptimeMillis"]) + 1000 * n
        doc["localTime"] = dt.datetime.now(dt.timezone.utc)

    out = tmp_path / "rec.jsonl.gz"
    handlers = {"getParameter": lambda d: dict(PARAMETERS)}
    with replay(base, status=advancing(step), cmdline=CMDLINE, handlers=handlers) as server:
        uri = (
            server.uri.replace("mongodb://", "mongodb://monitor:Pa55URI@")
            + "/?authMechanism=PLAIN&authSource=$external"
        )
        proc = ckptdiag("record", "--uri", uri, "-d", "3", "-o", str(out))
        assert proc.returncode == 0, proc.stderr
        _clean("record", proc.stdout + proc.stderr)
        proc = ckptdiag("record", "--uri", uri, "-d", "2", "--ndjson", "-")
        assert proc.returncode == 0 and proc.stdout.count("\n") >= 3, proc.stderr
        _clean("record --ndjson -", proc.stdout + proc.stderr)
        proc = ckptdiag(
            "diagnose",
            "--uri",
            server.uri,
            "-u",
            "monitor",
            "-p",
            "Pa55FLAG",
            "--authenticationMechanism",
            "PLAIN",
            "--authenticationDatabase",
            "$external",
            "-d",
            "3",
            "-f",
            "json",
            "--fail-on",
            "never",
        )
        _clean("diagnose", proc.stdout + proc.stderr)
        assert proc.returncode == 0, proc.stderr
        assert any(b"Pa55FLAG" in bytes(a.get("payload", b"")) for a in server.auth)  # it did reach the server
    _clean("recording", gzip.decompress(out.read_bytes()).decode())
    _outputs_of(tmp_path, out, "recording")


def test_secrets_in_a_log_never_reach_a_report(tmp_path: Path) -> None:
    """The open config in every grammar and startup options with secrets, in both log formats."""
    config = (
        "create,cache_size=1G,encryption=(name=AES256-CBC,keyid=k3yidWT,secretkey:C0lonS3cret),"
        '"encryption"=("secretkey"="Qu0tedS3cret")'
    )
    lines = [
        mongod_line("2026-11-01T00:00:00.400Z", "CONTROL", 21951, "initandlisten", "Options set by command line",
                    {"options": CMDLINE["parsed"]}),
        mongod_line("2026-11-01T00:00:00.500Z", "STORAGE", 22315, "initandlisten", "Opening WiredTiger",
                    {"config": config}),
    ]  # fmt: skip
    lines += [
        mongod_line(f"2026-11-01T00:{m:02d}:{sec:02d}.000Z", "COMMAND", 51803, "conn7", "Slow query",
                    {"type": "command", "ns": "a.b", "command": {"insert": "b", "password": "hunter2LDAP"},
                     "durationMillis": 150})
        for m in range(3)
        for sec in range(0, 60, 7)
    ]  # fmt: skip
    log = tmp_path / "mongod.log"
    log.write_text("\n".join(lines) + "\n")
    legacy = tmp_path / "legacy" / "mongod.log"
    legacy.parent.mkdir()
    legacy.write_text(
        "2019-06-18T11:58:58.391+0100 I STORAGE  [initandlisten] wiredtiger_open config: "
        'create,cache_size=1G,encryption=(name=AES256-CBC,keyid="k3yidWT",secretkey:C0lonS3cret),'
        '"secretkey"="Qu0tedS3cret"\n'
        + "".join(
            f"2019-06-18T12:0{m}:0{s}.000+0100 I COMMAND  [conn1] command a.b command: insert "
            f'{{ insert: "b", password: "hunter2LDAP" }} 150ms\n'
            for m in range(3)
            for s in range(9)
        )
    )
    for path in (log, legacy):
        for fmt in ("json", "md", "html", "table"):
            proc = ckptdiag("report", str(path), "-f", fmt, "--fail-on", "never")
            assert proc.returncode == 0, proc.stderr
            _clean(f"log report -f {fmt}", proc.stdout + proc.stderr)
            out = tmp_path / f"log.{fmt}"
            proc = ckptdiag("report", str(path), "-f", fmt, "-o", str(out), "--fail-on", "never")
            assert proc.returncode == 0, proc.stderr
            _clean(f"log report -o .{fmt}", out.read_text() + proc.stderr)


def test_secrets_in_a_recording_header_and_on_the_command_line_never_come_out(tmp_path: Path) -> None:
    """A recording written by hand (or by another tool) with secrets in its header; a usage
    error quoting an option's value; a hosts file whose password holds / ? and #."""
    from synth import Server, write_recording

    rec = write_recording(Server(seconds=200).frame(), tmp_path / "plain.jsonl")
    lines = rec.read_text().splitlines()
    head = json.loads(lines[0])
    head["server"]["cmdline"] = CMDLINE
    head["server"]["parameters"] = PARAMETERS
    head["source"]["uri"] = "mongodb://monitor:Pa55URI@db1:27017/?authSource=admin"
    planted = tmp_path / "planted.jsonl"
    planted.write_text("\n".join([json.dumps(head), *lines[1:]]) + "\n")
    _outputs_of(tmp_path, planted, "header")
    proc = ckptdiag("report", str(rec), "--since", "secretkey=C0lonS3cret")
    assert proc.returncode == 2 and "ckptdiag: error:" in proc.stderr
    _clean("usage error", proc.stdout + proc.stderr)
    proc = ckptdiag("record", "--uri", "mongodb://monitor:Pa55URI@127.0.0.1:1/?serverSelectionTimeoutMS=200", "-d", "x")
    _clean("record usage error", proc.stdout + proc.stderr)
    hosts = tmp_path / "hosts.txt"
    hosts.write_text("mongodb://mon:Pa55URI/?#fleet@127.0.0.1:1/?serverSelectionTimeoutMS=200\n")
    out = tmp_path / "fleet"
    proc = ckptdiag("diagnose", "--hosts", str(hosts), "-d", "2", "-o", str(out), "-f", "json")
    assert proc.returncode == 1, proc.stderr
    _clean("fleet stderr", proc.stdout + proc.stderr)
    assert "fleet" not in proc.stderr.replace(str(out), "")  # the password's tail is never a host's name
    for path in out.iterdir():
        _clean(f"fleet {path.name}", path.read_text())
