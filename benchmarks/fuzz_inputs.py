"""A long fuzz run over every input ckptdiag reads: prints counts, hangs, unexpected errors, max RSS.

    python benchmarks/fuzz_inputs.py                      # the documented run (docs/benchmarks.md)
    python benchmarks/fuzz_inputs.py --streams 2000 --ftdc 200 --recordings 50   # a quick one

Four families, each case run in this process under a watchdog (a case that takes longer than
``--timeout`` seconds is a hang):

* delta streams: random FTDC-shaped varint streams with damage, decoded by the numpy path and by
  the compiled kernel; any difference in values or in the error is a disagreement;
* FTDC files: a synthetic mongod FTDC file (and the largest real one under ../shared/data, when
  there) with 1-8 random bytes changed, read in full;
* recordings: a synthetic recording, gzip and plain, with random bytes changed or lines
  replaced by random text, read and diagnosed end to end, and read by the compiled scanner and
  by the Python path (split in two halves, the second by a forked child): any difference in the
  frame, events or damage is a disagreement;
* redaction: random passwords in URIs, escaped or not; random secrets in argv and config strings;
  secrets in every spelling the boundary redactor knows, inside random text;
* mongod logs: JSON and legacy lines, bytes changed, lines cut, gzip cut anywhere, read and
  diagnosed (a log alone);
* archives: a support download (.zip and .tar.gz of two hosts' FTDC) with bytes changed or cut,
  unpacked within the bound;
* hosts files: random text read as a fleet's hosts file (no credential is ever a host's name);
* live replies: serverStatus documents of random shapes made into a recording line (or a gap);
* -o targets: files, links, FIFOs, directories and inputs as a report's target: refused with
  everything as it was, or a regular file holding the report.

A case ends in a result, or in a named error (ckptdiag's own, or the ValueError a damaged chunk
is reported with); anything else is "unexpected" and listed.
"""

from __future__ import annotations

import argparse
import json
import resource
import signal
import sys
import tempfile
import time
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))  # the synthetic FTDC and recording writers
sys.path.insert(0, str(Path(__file__).resolve().parent))  # fuzz_more: the other input kinds


class Hang(Exception):
    pass


def _alarm(_signum: int, _frame: Any) -> None:
    raise Hang


class Tally:
    """Outcomes of one family."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.counts = {"ok": 0, "named_error": 0, "unexpected": 0, "hang": 0, "disagree": 0}
        self.examples: list[str] = []
        self.seconds = 0.0

    def run(self, case: Callable[[], str], timeout: float) -> None:
        start = time.perf_counter()
        signal.setitimer(signal.ITIMER_REAL, timeout)
        try:
            outcome = case()
        except Hang:
            outcome = "hang"
        except Exception as exc:  # noqa: BLE001 - counting them is the point
            outcome = "unexpected"
            if len(self.examples) < 5:
                self.examples.append("".join(traceback.format_exception_only(type(exc), exc)).strip())
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
        self.counts[outcome] += 1
        self.seconds += time.perf_counter() - start

    def summary(self) -> dict[str, Any]:
        return {
            "cases": sum(self.counts.values()),
            **self.counts,
            "seconds": round(self.seconds, 1),
            "examples": self.examples,
        }


def _stream(rng: np.random.Generator) -> bytes:
    from ftdc_writer import _varint  # the tests' independent FTDC encoder

    parts = []
    for _ in range(int(rng.integers(0, 40))):
        kind = int(rng.integers(0, 5))
        if kind == 0:
            parts.append(_varint(int(rng.integers(0, 4))))
        elif kind == 1:
            parts.append(_varint(int(rng.integers(0, 2**63)) * int(rng.integers(1, 3))))
        elif kind == 2:
            parts.append(b"\x00" + _varint(int(rng.integers(0, 2**63)) >> int(rng.integers(0, 63))))
        elif kind == 3:
            parts.append(rng.bytes(int(rng.integers(1, 15))))
        else:
            parts.append(b"\xff" * int(rng.integers(9, 16)))
    raw = b"".join(parts)
    return raw[: len(raw) - int(rng.integers(0, 4))] if raw else raw


def delta_case(rng: np.random.Generator) -> Callable[[], str]:
    from ckptdiag.sources.ftdc import decode_deltas

    stream = np.frombuffer(_stream(rng), dtype=np.uint8)
    metrics, deltas = int(rng.integers(0, 7)), int(rng.integers(0, 9))
    rows = None
    if metrics and rng.random() < 0.5:
        rows = np.flatnonzero(rng.random(metrics) < 0.5)

    def decode(compiled: bool) -> object:
        try:
            return decode_deltas(stream, metrics, deltas, compiled=compiled, rows=rows).tobytes()
        except ValueError as exc:
            return ("error", str(exc))

    def case() -> str:
        return "ok" if decode(True) == decode(False) else "disagree"

    return case


def ftdc_case(rng: np.random.Generator, good: bytes, path: Path) -> Callable[[], str]:
    from ckptdiag.sources.ftdc import FtdcError, read_ftdc

    raw = bytearray(good)
    for at in rng.integers(0, len(raw), size=int(rng.integers(1, 9))):
        raw[int(at)] = int(rng.integers(0, 256))

    def case() -> str:
        path.write_bytes(bytes(raw))
        try:
            read_ftdc([path])
        except FtdcError:
            return "named_error"
        return "ok"

    return case


def recording_case(rng: np.random.Generator, good: bytes, gz: bool, path: Path) -> Callable[[], str]:
    from ckptdiag.errors import CkptdiagError
    from ckptdiag.workflows.report import diagnose_window

    if gz:
        raw = bytearray(good)
        for at in rng.integers(0, len(raw), size=int(rng.integers(1, 5))):
            raw[int(at)] ^= 1 << int(rng.integers(0, 8))
        data = bytes(raw)
    else:
        lines = good.split(b"\n")
        for _ in range(int(rng.integers(1, 6))):
            i = int(rng.integers(0, len(lines)))
            lines[i] = rng.choice(
                [
                    rng.bytes(int(rng.integers(0, 40))),
                    lines[i][: int(rng.integers(0, len(lines[i]) + 1))],
                    lines[i].replace(b"1", b"9e999"),
                ]
            )
        data = b"\n".join(lines)

    def case() -> str:
        path.write_bytes(data)
        try:
            diagnose_window((path,))
        except CkptdiagError:
            return "named_error"
        return "ok" if _readers_agree(path) else "disagree"

    return case


def _readers_agree(path: Path) -> bool:
    """The compiled scanner and the Python path (its second half parsed by a forked child) read
    ``path`` alike: the same frame, events, damage and truncation (True without the scanner)."""
    import pytest
    from readings import python_path, same_reading

    from ckptdiag.recording import reader

    if reader._jsonl is None:
        return True
    scanned = reader.read_recording(path, columns=True)
    with pytest.MonkeyPatch.context() as mp:
        parsed = python_path(path, mp, reader.BLOCK_BYTES, 0)
    try:
        same_reading(parsed, scanned)
    except AssertionError:
        return False
    return True


def redaction_case(rng: np.random.Generator) -> Callable[[], str]:
    from urllib.parse import quote

    from ckptdiag.guard.redact import redact_doc, redact_uri

    alphabet = [chr(c) for c in range(33, 127)] + ["é", "ß", "€"]
    password = "Q7" + "".join(rng.choice(alphabet, size=int(rng.integers(4, 20))))
    typed = quote(password, safe="") if rng.random() < 0.5 else password
    secret = "Q7" + "".join(c for c in rng.choice(alphabet, size=12) if c not in ',()="\\ ')

    def case() -> str:
        shown = redact_uri(f"mongodb://monitor:{typed}@db1:27017/?authSource=admin")
        config = f"cache_size=1G,encryption=(name=AES256-CBC,keyid={secret},secretkey={secret})"
        doc = {
            "argv": [
                "mongod",
                "--setParameter",
                f"ldapQueryPassword={secret}",
                f"--wiredTigerEngineConfigString={config}",
            ]
        }
        leaked = password in shown or typed in shown or secret in repr(redact_doc(doc))
        return "disagree" if leaked else "ok"

    return case


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--streams", type=int, default=20_000)
    parser.add_argument("--ftdc", type=int, default=2_000)
    parser.add_argument("--recordings", type=int, default=400)
    parser.add_argument("--redactions", type=int, default=5_000)
    parser.add_argument("--logs", type=int, default=400)
    parser.add_argument("--archives", type=int, default=300)
    parser.add_argument("--hosts", type=int, default=2_000)
    parser.add_argument("--replies", type=int, default=2_000)
    parser.add_argument("--targets", type=int, default=300)
    parser.add_argument("--timeout", type=float, default=20.0)
    parser.add_argument("--seed", type=int, default=2026)
    args = parser.parse_args()
    signal.signal(signal.SIGALRM, _alarm)
    rng = np.random.default_rng(args.seed)

    from ftdc_writer import SimServer, write_ftdc
    from synth import Server, write_recording

    from ckptdiag.sources.ftdc.kernel import compiled

    tallies = []
    with tempfile.TemporaryDirectory() as tmp:
        d = Path(tmp)
        streams = Tally("delta streams (numpy path vs compiled kernel)")
        if compiled is not None:
            for _ in range(args.streams):
                streams.run(delta_case(rng), args.timeout)
        tallies.append(streams)

        sources = [d / "synthetic"]
        write_ftdc(sources[0], SimServer(checkpoints=[(30, 32), (90, 93), (150, 151)]), [float(i) for i in range(600)])
        shared = REPO.parent / "shared" / "data" / "ftdc"
        real = (
            sorted(
                (
                    p
                    for p in shared.rglob("*")
                    if p.is_file() and "metrics." in p.name and "not-mongod" not in p.name and p.suffix != ".json"
                ),
                key=lambda p: p.stat().st_size,
            )
            if shared.is_dir()
            else []
        )
        if real:
            sources.append(real[-1])
        files = Tally(f"FTDC files ({', '.join(p.name for p in sources)}), 1-8 bytes changed")
        for i in range(args.ftdc):
            good = sources[i % len(sources)].read_bytes()
            files.run(ftdc_case(rng, good, d / "metrics.mutant"), args.timeout)
        tallies.append(files)

        recordings = Tally("recordings (gzip: bits flipped; plain: lines cut, replaced, made 9e999), diagnosed")
        plain = write_recording(Server(seconds=300).frame(), d / "good.jsonl").read_bytes()
        import gzip

        packed = gzip.compress(plain)
        for i in range(args.recordings):
            gz = i % 2 == 0
            recordings.run(
                recording_case(rng, packed if gz else plain, gz, d / ("mutant.jsonl.gz" if gz else "mutant.jsonl")),
                args.timeout,
            )
        tallies.append(recordings)

        redactions = Tally("redaction (URI passwords, argv and config-string secrets): leaks")
        for _ in range(args.redactions):
            redactions.run(redaction_case(rng), args.timeout)
        tallies.append(redactions)

        from fuzz_more import archive_case, hosts_case, log_case, reply_case, spelling_case, target_case

        for name, make, count in (
            ("secrets in every spelling, in random text: leaks", spelling_case, args.redactions),
            ("mongod logs (bytes changed, lines cut, gzip cut), diagnosed", log_case, args.logs),
            ("archives (.zip, .tar.gz: bytes changed, cut), unpacked within the bound", archive_case, args.archives),
            ("hosts files (random text)", hosts_case, args.hosts),
            ("serverStatus replies of random shapes: a line or a gap", reply_case, args.replies),
            ("-o targets (files, links, FIFOs, directories, inputs)", target_case, args.targets),
        ):
            tally = Tally(name)
            for i in range(count):
                tally.run(make(rng, d / f"case-{i % 4}"), args.timeout)
            tallies.append(tally)

    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(
        json.dumps(
            {"seed": args.seed, "max_rss_mb": round(peak_mb, 1), "families": {t.name: t.summary() for t in tallies}},
            indent=2,
        )
    )


if __name__ == "__main__":
    main()
