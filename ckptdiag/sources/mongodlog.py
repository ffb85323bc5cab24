"""mongod's own log, read as lines: structured JSON (4.4+) and legacy text (3.0-4.2), plain or
gzip, one file or a rotated set, in time order and streamed (a 1 GB log never sits in memory).

A line becomes a :class:`LogLine`: its time in UTC seconds (any offset in the file), severity,
component, context (the thread: ``conn12``, ``Checkpointer``, ``WTCheckpointThread``), message id
(JSON only), message text, and its attributes (JSON only, as parsed). Lines that are neither
format are counted, never fatal; so are lines over :data:`MAX_LINE` bytes (skipped unread).
"""

from __future__ import annotations

import datetime as dt
import gzip
import re
import zlib
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from ckptdiag.errors import InputError
from ckptdiag.guard.inputs import check_readable, open_maybe_gzip
from ckptdiag.model.logevents import LogReport

try:  # orjson parses a slow-query line several times faster than json
    from orjson import loads as _loads
except ImportError:  # pragma: no cover - orjson is a dependency; json is the same, slower
    from json import loads as _loads  # type: ignore[assignment]

MAX_LINE = 4 << 20  # a slow-query line can be long (a big $in); longer than this is not a log line
BLOCK = 8 << 20  # read a block at a time and split it: several times faster than line by line
GZ_BLOCK = 1 << 20

# legacy text: 2018-12-01T19:37:46.767-0500 I COMMAND  [conn3] message ...
_LEGACY = re.compile(
    rb"^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?(?:Z|[+-]\d\d:?\d\d)?)\s+(?:([FEWID]\d?)\s+(\S+)\s+\[([^\]]*)\]\s)?(.*)$"
)
_ROTATED = re.compile(r"\.(\d{4}-\d\d-\d\dT\d\d-\d\d-\d\d)(?:\.gz)?$")


@dataclass(frozen=True)
class LogLine:
    """One log line, either format, its time in UTC seconds since the epoch."""

    t: float
    severity: str  # F E W I D (D1-D5 as D)
    component: str
    context: str
    msg_id: int | None  # JSON logs' stable message id (22430: "WiredTiger message")
    msg: str
    attr: dict[str, Any] = field(default_factory=dict)


def log_files(paths: Iterable[Path]) -> list[Path]:
    """The log files the paths name, a directory standing for its mongod logs (``mongod.log``
    and its rotations ``mongod.log.<time>[.gz]``), rotations first by their time, the live file last."""
    out: list[Path] = []
    for path in paths:
        check_readable(path)
        if not path.is_dir():
            out.append(path)
            continue
        found = [p for p in path.iterdir() if p.is_file() and ".log" in p.name]
        if not found:
            raise InputError(f"{path} holds no mongod log files", "give mongod.log or the directory it is in")
        out += found
    return sorted(dict.fromkeys(out), key=_rotation_key)  # given in any order: rotations first


def _rotation_key(path: Path) -> tuple[int, str]:
    """Rotated files (named by the time they were rotated) in time order, the live log last."""
    match = _ROTATED.search(path.name)
    return (0, match.group(1)) if match else (1, path.name)


@dataclass(frozen=True)
class Wanted:
    """The lines to parse: those one of the patterns of their format finds. Literal patterns, each
    scanned on its own (1-2 GB/s), not one alternation (which tries every byte: 50 MB/s)."""

    json: tuple[re.Pattern[bytes], ...]
    text: tuple[re.Pattern[bytes], ...]


def read_log(paths: Iterable[Path], report: LogReport | None = None, wanted: Wanted | None = None) -> Iterator[LogLine]:
    """Every line of the logs, file by file (in :func:`log_files` order), as :class:`LogLine`;
    with ``wanted``, only the lines the pattern finds are parsed, the others counted (as skipped,
    or as unparsed when they do not even start like a log line) at the speed of one scan of the
    block, whichever format each line is in."""
    report = report if report is not None else LogReport()
    for path in log_files(paths):
        report.files.append(str(path))
        with open_maybe_gzip(path) as fh:
            try:
                for body in _blocks(fh, report):
                    if wanted is None:
                        yield from _every_line(body, report)
                    else:
                        yield from _found_lines(body, wanted, report)
            except (EOFError, OSError, zlib.error) as exc:  # gzip cut short or damaged
                report.damaged.append(f"{path}: {exc} (read up to there)")


def _every_line(body: bytes, report: LogReport) -> Iterator[LogLine]:
    for raw in body.split(b"\n")[:-1]:
        report.lines += 1
        line = parse_line(raw)
        if line is not None:
            yield line
        elif raw.strip():
            report.unparsed += 1


_ODD_START = re.compile(rb"(?m)^[^{0-9\n\r\t ]")  # a line neither format can start with


def _found_lines(body: bytes, wanted: Wanted, report: LogReport) -> Iterator[LogLine]:
    """The lines of ``body`` that the patterns of the formats it holds find, parsed; the rest
    counted. A block is one format but for a mixed file: its JSON lines start with "{", its text
    lines with the year."""
    total = body.count(b"\n")
    # how many lines start like each format (counted at memory speed): a pure JSON block, the
    # usual case, needs nothing more
    json_lines = body.count(b"\n{") + body.startswith(b"{")
    text_lines = 0 if json_lines == total else body.count(b"\n1") + body.count(b"\n2") + body[:1].isdigit()
    odd = len(_ODD_START.findall(body)) if json_lines + text_lines < total else 0
    patterns: tuple[re.Pattern[bytes], ...] = (wanted.json if json_lines else ()) + (wanted.text if text_lines else ())
    hits = sorted({m.start() for pattern in patterns for m in pattern.finditer(body)})
    parsed = 0
    end = -1
    for at in hits:
        if at <= end:
            continue  # a second hit on a line already taken
        start = body.rfind(b"\n", 0, at) + 1
        end = body.find(b"\n", at)
        if _ODD_START.match(body, start):
            continue  # counted among the odd starts already: neither format
        line = parse_line(body[start:end])
        if line is None:
            odd += 1  # found, but not a log line after all
            continue
        parsed += 1
        yield line
    report.lines += total
    report.unparsed += odd
    report.skipped += total - parsed - odd


def _blocks(fh: IO[bytes], report: LogReport) -> Iterator[bytes]:
    """The file a block of whole lines at a time, each block ending with a newline; a line over
    :data:`MAX_LINE` is counted in ``report.too_long`` and dropped without ever being held whole."""
    rest = b""
    skipping = False  # inside a line already found too long: its tail is dropped too
    while True:
        # gzip: read1 gives what one inflate step made, so a cut stream loses nothing before the cut
        chunk = fh.read1(GZ_BLOCK) if isinstance(fh, gzip.GzipFile) else fh.read(BLOCK)
        if not chunk:
            if rest and not skipping:
                yield from _short_lines(rest + b"\n", report)
            return
        data = rest + chunk
        cut = data.rfind(b"\n") + 1
        if cut == 0:
            rest = data
            if len(rest) > MAX_LINE:
                report.too_long += 0 if skipping else 1
                rest, skipping = b"", True
            continue
        body, rest = data[:cut], data[cut:]
        if skipping:  # the tail of a line already counted as too long
            body = body[body.find(b"\n") + 1 :]
            skipping = False
        if len(rest) > MAX_LINE:
            report.too_long += 1
            rest, skipping = b"", True
        if body:
            yield from _short_lines(body, report)


def _longest_line(body: bytes) -> int:
    """The length of the longest line of ``body`` (newline positions found vectorised: a regular
    expression for "a line this long" retries at every byte of every line)."""
    import numpy as np

    ends = np.flatnonzero(np.frombuffer(body, dtype=np.uint8) == 10)
    if not ends.size:
        return len(body)
    # the distance between two newlines is the line between them plus its newline
    return int(max(ends[0], np.diff(ends).max(initial=1) - 1, len(body) - 1 - ends[-1]))


def _short_lines(body: bytes, report: LogReport) -> Iterator[bytes]:
    """``body`` without its lines over :data:`MAX_LINE` (counted)."""
    if len(body) <= MAX_LINE or _longest_line(body) <= MAX_LINE:
        yield body
        return
    kept = [line for line in body.split(b"\n")[:-1] if len(line) <= MAX_LINE]
    report.too_long += body.count(b"\n") - len(kept)
    yield b"\n".join(kept) + b"\n" if kept else b""


def parse_line(raw: bytes) -> LogLine | None:
    """One line of either format, or None when it is neither."""
    raw = raw.strip()
    if raw.startswith(b"{"):
        return _json_line(raw)
    match = _LEGACY.match(raw)
    if match is None:
        return None
    t = parse_time(match.group(1).decode())
    if t is None:
        return None
    severity, component, context, msg = (g.decode("utf-8", "replace") if g else "" for g in match.group(2, 3, 4, 5))
    return LogLine(t, severity[:1] or "I", component or "-", context, None, msg)


def _json_line(raw: bytes) -> LogLine | None:
    try:
        obj = _loads(raw)
    except (ValueError, RecursionError):
        return None
    if not isinstance(obj, dict):
        return None
    t = _json_time(obj.get("t"))
    msg = obj.get("msg")
    if t is None or not isinstance(msg, str):
        return None
    attr = obj.get("attr")
    msg_id = obj.get("id")
    return LogLine(
        t,
        str(obj.get("s", "I"))[:1],
        str(obj.get("c", "-")),
        str(obj.get("ctx", "")),
        msg_id if isinstance(msg_id, int) and not isinstance(msg_id, bool) else None,
        msg,
        attr if isinstance(attr, dict) else {},
    )


def _json_time(value: Any) -> float | None:
    date = value.get("$date") if isinstance(value, dict) else None
    if isinstance(date, str):
        return parse_time(date)
    if isinstance(date, dict):  # mongod writes {"$numberLong": "<ms>"} outside 1970-9999 (relaxed Extended JSON)
        millis = date.get("$numberLong")
        try:
            return int(millis) / 1000 if isinstance(millis, str) and len(millis) <= 20 else None
        except ValueError:
            return None
    if isinstance(date, int | float) and not isinstance(date, bool):  # canonical: milliseconds as a number
        return float(date) / 1000
    return None


def parse_time(text: str) -> float | None:
    """An ISO 8601 time as mongod writes it (``Z``, ``+07:00`` or ``-0500``) -> UTC seconds, or
    None. A time without an offset is taken as UTC.

    >>> parse_time("2018-12-01T19:37:46.767-0500"), parse_time("2021-12-11T06:18:10.106+07:00")
    (1543711066.767, 1639178290.106)
    """
    try:  # the usual "+07:00" form: straight through (a few hundred ns)
        when = dt.datetime.fromisoformat(text)
    except ValueError:
        text = text.strip().replace("Z", "+00:00")
        if len(text) > 5 and text[-5] in "+-" and text[-4:].isdigit() and text[-3] != ":":
            text = f"{text[:-2]}:{text[-2:]}"  # -0500 -> -05:00 (fromisoformat of 3.10 needs the colon)
        try:
            when = dt.datetime.fromisoformat(text)
        except ValueError:
            return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=dt.timezone.utc)
    return when.timestamp()
