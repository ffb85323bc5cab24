"""The cases of `fuzz_inputs.py` for the input kinds beyond FTDC and recordings: mongod logs,
archives, hosts files, live replies, secrets in every spelling, and `-o` targets. Each maker
returns a case: a function that runs it and says "ok" or "named_error" (anything else it raises
is counted as unexpected by the caller)."""

from __future__ import annotations

import gzip
import json
import os
import shutil
import stat
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from ckptdiag.errors import CkptdiagError

Case = Callable[[], str]

_LOG = [
    b'{"t":{"$date":"2026-11-01T00:00:01.000Z"},"s":"I","c":"STORAGE","id":22430,"ctx":"Checkpointer",'
    b'"msg":"WiredTiger message","attr":{"message":"saving checkpoint snapshot min: 1"}}',
    b'{"t":{"$date":{"$numberLong":"1793491202000"}},"s":"I","c":"COMMAND","id":51803,"ctx":"conn1",'
    b'"msg":"Slow query","attr":{"type":"command","ns":"a.b","command":{"insert":"b","x":"card 4111"},'
    b'"durationMillis":150,"locks":{"Global":{"timeAcquiringMicros":{"w":1000}}}}}',
    b'2019-06-18T11:58:58.391+0100 I COMMAND  [conn1] command a.b command: find { find: "b", filter: '
    b'{ x: "command: 4111 }" } } planSummary: IXSCAN { a: 1 } 150ms',
    b"2019-06-18T11:58:59.391+0100 I STORAGE  [WTCheckpointThread] Checkpoint took 3 seconds",
    b"1970-01-01T00:00:05.000+0000 I CONTROL  [initandlisten] MongoDB starting : pid=1 port=27017",
]


def _mutate(rng: np.random.Generator, blob: bytes, flips: int) -> bytes:
    out = bytearray(blob)
    for _ in range(flips):
        if out:
            out[int(rng.integers(0, len(out)))] = int(rng.integers(0, 256))
    return bytes(out)


def log_case(rng: np.random.Generator, d: Path) -> Case:
    def run() -> str:
        from ckptdiag.model.window import WHOLE
        from ckptdiag.workflows.logs import log_only_report

        d.mkdir(parents=True, exist_ok=True)
        lines = [_LOG[int(i)] for i in rng.integers(0, len(_LOG), int(rng.integers(1, 200)))]
        blob = _mutate(rng, b"\n".join(lines) + b"\n", int(rng.integers(0, 6)))
        gz = bool(rng.integers(0, 2))
        data = gzip.compress(blob) if gz else blob
        path = d / ("mongod.log.gz" if gz else "mongod.log")
        path.write_bytes(data[: max(1, int(len(data) * float(rng.uniform(0.2, 1.0))))])
        try:
            log_only_report((path,), WHOLE)
        except CkptdiagError:
            return "named_error"
        return "ok"

    return run


def archive_case(rng: np.random.Generator, d: Path) -> Case:
    def run() -> str:
        from ckptdiag.sources import archives

        d.mkdir(parents=True, exist_ok=True)
        kind = "zip" if rng.integers(0, 2) else "tar.gz"
        from ftdc_writer import support_archive

        blob = _mutate(rng, support_archive(d, kind), int(rng.integers(0, 8)))
        path = d / f"support.{kind}"
        path.write_bytes(blob[: max(1, int(len(blob) * float(rng.uniform(0.05, 1.0))))])
        scratch = d / "scratch"
        shutil.rmtree(scratch, ignore_errors=True)
        try:
            archives.unpack(path, scratch)
        except CkptdiagError:
            return "named_error"
        written = sum(p.stat().st_size for p in scratch.rglob("*") if p.is_file())
        if written > max(archives.FLOOR_BYTES, archives.RATIO * path.stat().st_size):
            raise AssertionError(f"{written} bytes written for a {path.stat().st_size}-byte archive")
        return "ok"

    return run


def _text(rng: np.random.Generator, n: int) -> str:
    alphabet = "abc:/@?#%=,()\"' \t\nmongodb+srv://\x1b[0;31m\u00e9\u4e2d0123456789.-_"
    return "".join(alphabet[int(i)] for i in rng.integers(0, len(alphabet), n))


def hosts_case(rng: np.random.Generator, d: Path) -> Case:
    def run() -> str:
        from ckptdiag.workflows.fleet import read_hosts

        d.mkdir(parents=True, exist_ok=True)
        path = d / "hosts.txt"
        path.write_text(_text(rng, int(rng.integers(0, 300))))
        try:
            hosts = read_hosts(path)
        except CkptdiagError:
            return "named_error"
        if any("@" in h.name for h in hosts):
            raise AssertionError("a credential became a host's name")
        return "ok"

    return run


def _jsonish(rng: np.random.Generator, depth: int = 0) -> Any:
    pick = int(rng.integers(0, 9 if depth < 6 else 6))
    if pick == 0:
        return None
    if pick == 1:
        return bool(rng.integers(0, 2))
    if pick == 2:
        return int(rng.integers(-(2**62), 2**62)) * int(rng.integers(1, 8))
    if pick == 3:
        return float(rng.choice([np.nan, np.inf, -np.inf, 1e308, rng.normal()]))
    if pick in (4, 5):
        return _text(rng, int(rng.integers(0, 12)))
    if pick in (6, 7):
        return {_text(rng, 4): _jsonish(rng, depth + 1) for _ in range(int(rng.integers(0, 4)))}
    return [_jsonish(rng, depth + 1) for _ in range(int(rng.integers(0, 4)))]


def reply_case(rng: np.random.Generator, d: Path) -> Case:
    def run() -> str:
        from fakes import status_doc

        from ckptdiag.recording import build_sample

        doc: dict[str, Any] = status_doc(int(rng.integers(0, 100)))
        for section in rng.choice(["opcounters", "wiredTiger", "opLatencies", "metrics", "repl", "localTime"], 3):
            doc[str(section)] = _jsonish(rng)
        try:
            sample = build_sample(doc, seq=0, wall=1.0, mono=1.0, rtt_ms=1.0)
        except (ValueError, TypeError, KeyError, OverflowError, RecursionError):
            return "named_error"  # the sampler's gap with its reason
        json.dumps(sample, allow_nan=False, default=str)
        return "ok"

    return run


_NAMES = ("secretkey", "keyid", "ldapQueryPassword", "password", "kmsProviders", "tlsCertificateKeyFilePassword")
_SPELLINGS = (
    "{n}={v}",
    "{n}:{v}",
    '"{n}"="{v}"',
    '"{n}": "{v}"',
    '\\"{n}\\"=\\"{v}\\"',
    "&quot;{n}&quot;=&quot;{v}&quot;",
    "--{n} {v}",
    "encryption=({n}={v})",
    "{n}=(a=(b={v}))",
)


def spelling_case(rng: np.random.Generator, d: Path) -> Case:
    def run() -> str:
        from ckptdiag.guard.redact import redact_text

        secret = "Q7" + "".join(chr(int(c)) for c in rng.integers(0x30, 0x7A, int(rng.integers(4, 16))))
        secret = "".join(c for c in secret if c not in ",()=\"'\\ :;&<>[]{}`")
        spelling = _SPELLINGS[int(rng.integers(0, len(_SPELLINGS)))]
        name = _NAMES[int(rng.integers(0, len(_NAMES)))]
        before, after = _text(rng, 20), _text(rng, 20)
        shown = redact_text(f"{before} {spelling.format(n=name, v=secret)} {after}")
        if len(secret) > 3 and secret in shown.replace(before, "").replace(after, ""):
            raise AssertionError(f"leaked {secret!r} written {spelling!r}")
        return "ok"

    return run


def target_case(rng: np.random.Generator, d: Path) -> Case:
    def run() -> str:
        from ckptdiag.guard.outputs import check_target, write_text

        shutil.rmtree(d, ignore_errors=True)
        data = d / "data" / "a" / "b"
        data.mkdir(parents=True)
        (data / "metrics.1").write_bytes(b"x")
        other = d / "other"
        other.write_text("other")
        kind = int(rng.integers(0, 7))
        target = d / "t"
        if kind == 1:
            target.write_text("old")
        elif kind == 2:
            target.symlink_to(other)
        elif kind == 3:
            target.mkdir()
        elif kind == 4:
            os.mkfifo(target)
        elif kind == 5:
            target = data / "metrics.1"
        elif kind == 6:
            target = data / "new.md"
        before = {str(p): (os.lstat(p).st_mode, p.read_bytes() if p.is_file() and not p.is_symlink() else b"")
                  for p in d.rglob("*") if not stat.S_ISFIFO(os.lstat(p).st_mode)}  # fmt: skip
        try:
            write_text(check_target(target, (d / "data",)), "new")
        except CkptdiagError:
            after = {str(p): (os.lstat(p).st_mode, p.read_bytes() if p.is_file() and not p.is_symlink() else b"")
                     for p in d.rglob("*") if not stat.S_ISFIFO(os.lstat(p).st_mode)}  # fmt: skip
            if after != before:
                raise AssertionError(f"a refused write changed the tree (target kind {kind})") from None
            return "named_error"
        if kind not in (0, 1) or target.read_text() != "new":
            raise AssertionError(f"wrote through target kind {kind}")
        return "ok"

    return run
