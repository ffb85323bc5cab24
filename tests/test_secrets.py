"""Planted secrets never come out: every output of every command that reads a server or its files
(stdout, stderr, recordings, reports in each format) is searched for them."""

from __future__ import annotations

import datetime as dt
import gzip
from pathlib import Path
from typing import Any

import bson
import pytest
from ftdc_writer import SimServer, write_ftdc

pytest.importorskip("mockupdb")

from conftest import load_status
from test_record_wire import ckptdiag
from wire import advancing, replay

SECRETS = ("hunter2LDAP", "hunter3LDAP", "s3cretK3yWT", "k3yidWT", "kmipP4ss", "Pa55URI", "Pa55FLAG")

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
                    "configString": "eviction_target=80,encryption=(keyid=k3yidWT,secretkey=s3cretK3yWT)",
                }
            },
        },
    },
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
    path.write_bytes(bson.encode(meta) + raw[first:])
    assert b"s3cretK3yWT" in path.read_bytes()  # planted
    _outputs_of(tmp_path, d, "ftdc")


def test_secrets_of_the_server_and_the_uri_never_reach_a_recording_or_a_report(tmp_path: Path) -> None:
    base = load_status("serverStatus_7.0.21__EP-UnaHur-2025C1+anti-social-mongo-edp.json")

    def step(doc: dict[str, Any], n: int) -> None:
        doc["uptimeMillis"] = int(base["uptimeMillis"]) + 1000 * n
        doc["localTime"] = dt.datetime.now(dt.timezone.utc)

    out = tmp_path / "rec.jsonl.gz"
    with replay(base, status=advancing(step), cmdline=CMDLINE) as server:
        uri = (
            server.uri.replace("mongodb://", "mongodb://monitor:Pa55URI@")
            + "/?authMechanism=PLAIN&authSource=$external"
        )
        proc = ckptdiag("record", "--uri", uri, "-d", "3", "-o", str(out))
        assert proc.returncode == 0, proc.stderr
        _clean("record", proc.stdout + proc.stderr)
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
