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
import json
import re
import zlib
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any, cast

from ckptdiag.errors import InputError
from ckptdiag.inputs import check_readable

MAX_LINE = 4 << 20  # a slow-query line can be long (a big $in); longer than this is not a log line

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


@dataclass
class LogReport:
    """What reading a set of log files met: lines read, and those set aside (counted, not fatal)."""

    files: list[str] = field(default_factory=list)
    lines: int = 0
    unparsed: int = 0  # neither JSON nor legacy text (binary, another program's lines)
    too_long: int = 0
    damaged: list[str] = field(default_factory=list)  # a gzip file cut short or damaged: read up to there


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
        out += sorted(found, key=_rotation_key)
    return out


def _rotation_key(path: Path) -> tuple[int, str]:
    """Rotated files (named by the time they were rotated) in time order, the live log last."""
    match = _ROTATED.search(path.name)
    return (0, match.group(1)) if match else (1, path.name)


def read_log(paths: Iterable[Path], report: LogReport | None = None) -> Iterator[LogLine]:
    """Every line of the logs, file by file (in :func:`log_files` order), as :class:`LogLine`."""
    report = report if report is not None else LogReport()
    for path in log_files(paths):
        report.files.append(str(path))
        with _open(path) as fh:
            try:
                yield from _lines(fh, report)
            except (EOFError, OSError, zlib.error) as exc:  # gzip cut short or damaged
                report.damaged.append(f"{path}: {exc} (read up to there)")


def _open(path: Path) -> IO[bytes]:
    with open(path, "rb") as probe:
        gz = probe.read(2) == b"\x1f\x8b"
    if gz:
        return cast("IO[bytes]", gzip.open(path, "rb"))
    return open(path, "rb")


def _lines(fh: IO[bytes], report: LogReport) -> Iterator[LogLine]:
    while True:
        raw = fh.readline(MAX_LINE + 1)
        if not raw:
            return
        if len(raw) > MAX_LINE and not raw.endswith(b"\n"):
            report.too_long += 1
            while raw and not raw.endswith(b"\n"):  # skip the rest of it, a bounded piece at a time
                raw = fh.readline(MAX_LINE)
            continue
        report.lines += 1
        line = parse_line(raw)
        if line is None:
            if raw.strip():
                report.unparsed += 1
            continue
        yield line


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
        obj = json.loads(raw)
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
    if isinstance(date, dict) and isinstance(date.get("$numberLong"), str):  # outside 1970-9999
        return None
    return None


def parse_time(text: str) -> float | None:
    """An ISO 8601 time as mongod writes it (``Z``, ``+07:00`` or ``-0500``) -> UTC seconds, or
    None. A time without an offset is taken as UTC.

    >>> parse_time("2018-12-01T19:37:46.767-0500"), parse_time("2021-12-11T06:18:10.106+07:00")
    (1543711066.767, 1639178290.106)
    """
    text = text.strip()
    if len(text) > 5 and text[-5] in "+-" and text[-4:].isdigit() and text[-3] != ":":
        text = f"{text[:-2]}:{text[-2:]}"  # -0500 -> -05:00 (fromisoformat of 3.10 needs the colon)
    try:
        when = dt.datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=dt.timezone.utc)
    return when.timestamp()
