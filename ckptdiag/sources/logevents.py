"""What a mongod log tells about checkpoints: slow operations (shapes and waits, never values),
checkpoint messages, the WiredTiger open config, restarts. Both formats, typed results.

Privacy by construction: a slow operation keeps its command name, namespace, plan summary (index
key patterns, no values), duration and waits; the command document, filter and documents are
never read into a result. The open config has its secrets redacted.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from ckptdiag.guard.redact import redact_doc, redact_text
from ckptdiag.model.logevents import (
    CheckpointMessage,
    EngineOpen,
    LogEvents,
    LogReport,
    SlowOp,
    SlowOpsBuilder,
    Waits,
)
from ckptdiag.model.sanity import as_float
from ckptdiag.sources.logshapes import COMMANDS, KINDS, QUOTED, past_documents, shape_name, shape_ns, shape_plan
from ckptdiag.sources.mongodlog import LogLine, Wanted, read_log

# JSON message ids (stable across 4.4-8.x): mongod's logv2 ids
SLOW_QUERY = 51803
WT_MESSAGE = 22430
OPENING_WT = 22315
STARTING = 4615611
OPTIONS = 21951  # "Options set by command line": the parsed configuration, as getCmdLineOpts' "parsed"


_LEGACY_SLOW = re.compile(r"^(command|insert|update|remove|query|getmore)\s+(\S+)\s+(.*?)(\d+)ms\s*$")
_LEGACY_COMMAND = re.compile(r"\s*command:\s+(\w+)\s+\{")  # the body's first field, before its document
_LEGACY_PLAN = re.compile(r"planSummary:\s+(\w+(?:\s+\{[^}]*\})?(?:,\s*\w+(?:\s+\{[^}]*\})?)*)")
_LEGACY_LOCK_WAIT = re.compile(r"timeAcquiringMicros:\s*\{([^}]*)\}")
_LEGACY_STORAGE_WAIT = re.compile(r"timeWaitingMicros:\s*(\d+)")
_CKPT_RUNNING = re.compile(r"Checkpoint has been running for (\d+(?:\.\d+)?) seconds")
_CKPT_TOOK = re.compile(r"Checkpoint took (\d+(?:\.\d+)?) seconds")
_PRESSURE = re.compile(
    r"cache (?:is )?(?:full|stuck)|eviction (?:server|worker).*(?:stuck|unable)|application thread.*evict", re.I
)


# the lines extract() can use: JSON lines by their message id (spaces allowed, as in a log
# re-serialised by another tool), text lines by their words
WANTED = Wanted(
    json=(re.compile(rb'"id":\s*(?:%d|%d|%d|%d|%d)\b' % (SLOW_QUERY, WT_MESSAGE, OPENING_WT, STARTING, OPTIONS)),),
    text=tuple(
        re.compile(p)
        for p in (rb"\dms\r?\n", rb"Checkpoint", rb"wiredtiger_open config", rb"MongoDB starting", rb"evict")
    ),
)


def scan_logs(
    paths: Iterable[Path], report: LogReport | None = None, since: float | None = None, until: float | None = None
) -> LogEvents:
    """The events of mongod logs (files, gzip, directories of rotated logs) inside a window of
    UTC seconds, read in one streamed pass."""
    return extract(read_log(paths, report, wanted=WANTED), since, until)


def extract(lines: Iterable[LogLine], since: float | None = None, until: float | None = None) -> LogEvents:
    """The log's slow operations, checkpoint messages, open configs, starts and cache-pressure
    messages inside the window (lines in time order give results in time order). Open configs
    are kept from before the window too: the settings in force were set at the last start."""
    slow = SlowOpsBuilder()
    checkpoints: list[CheckpointMessage] = []
    opens: list[EngineOpen] = []
    starts: list[float] = []
    options: list[tuple[float, dict[str, Any]]] = []
    pressure: list[tuple[float, str]] = []
    for line in lines:
        if until is not None and line.t > until:
            continue
        if line.msg_id == OPENING_WT or (line.msg_id is None and line.msg.startswith("wiredtiger_open config: ")):
            opens.append(_engine_open(line))
            continue
        if line.msg_id == OPTIONS and isinstance(line.attr.get("options"), Mapping):
            options.append((line.t, redact_doc(dict(line.attr["options"]))))
            continue
        if since is not None and line.t < since:
            continue
        op = _slow_json(line) if line.msg_id == SLOW_QUERY else _slow_legacy(line) if line.msg_id is None else None
        if op is not None:
            slow.add(op)
            continue
        text = _wt_text(line)
        ckpt = _checkpoint(line.t, text)
        if ckpt is not None:
            checkpoints.append(ckpt)
        elif line.msg_id == STARTING or (line.msg_id is None and line.msg.startswith("MongoDB starting")):
            starts.append(line.t)
        elif _PRESSURE.search(text):
            pressure.append((line.t, text[:200]))
    return LogEvents(
        slow.build(),
        tuple(checkpoints),
        tuple(o for o in opens if o.config),
        tuple(starts),
        tuple(options),
        tuple(pressure),
    )


def _engine_open(line: LogLine) -> EngineOpen:
    config = line.attr.get("config") if line.msg_id == OPENING_WT else line.msg.split(": ", 1)[1]
    return EngineOpen(line.t, redact_text(config.strip()) if isinstance(config, str) else "")


def _wt_text(line: LogLine) -> str:
    """The text of a line, a WiredTiger message's own text where it is one (a string, or 7.x+'s
    structured message)."""
    if line.msg_id == WT_MESSAGE:
        message = line.attr.get("message")
        if isinstance(message, str):
            return message
        if isinstance(message, Mapping):
            return f"[{message.get('category', '')}] {message.get('msg', '')}"
    return line.msg


def _checkpoint(t: float, text: str) -> CheckpointMessage | None:
    if "CHECKPOINT_PROGRESS" in text:
        running = _CKPT_RUNNING.search(text)
        if running:
            return CheckpointMessage(t, "progress", float(running.group(1)))
        if "saving checkpoint snapshot" in text:
            return CheckpointMessage(t, "saving", None)
        return None
    took = _CKPT_TOOK.search(text)
    return CheckpointMessage(t, "took", float(took.group(1))) if took else None


def _micros_sum(value: Any) -> float:
    """The sum of every ``timeAcquiringMicros``-like number under ``value`` (by lock mode)."""
    if isinstance(value, Mapping):
        return sum(_micros_sum(v) for v in value.values())
    return as_float(value) or 0.0


def _slow_json(line: LogLine) -> SlowOp | None:
    a = line.attr
    duration = a.get("durationMillis")
    if not isinstance(duration, int | float):
        return None
    command = a.get("command")
    name = next(iter(command), "") if isinstance(command, Mapping) and command else str(a.get("type", ""))
    locks = a.get("locks")
    lock_us = (
        sum(_micros_sum(v.get("timeAcquiringMicros")) for v in locks.values() if isinstance(v, Mapping))
        if isinstance(locks, Mapping)
        else None
    )
    storage = a.get("storage")
    storage_us = None
    if isinstance(storage, Mapping):
        data = storage.get("data")
        inner = data if isinstance(data, Mapping) else storage
        storage_us = _micros_sum(inner.get("timeWaitingMicros"))
    flow = a.get("flowControl")
    queues = a.get("queues")
    plan = a.get("planSummary")
    return SlowOp(
        line.t,
        shape_name(str(a.get("type", "command")), KINDS),
        shape_name(str(name), COMMANDS),
        shape_ns(str(a.get("ns", ""))),
        float(duration),
        shape_plan(plan) if isinstance(plan, str) else None,
        Waits(
            locks_ms=lock_us / 1000 if lock_us is not None else None,
            storage_ms=storage_us / 1000 if storage_us is not None else None,
            write_concern_ms=as_float(a.get("waitForWriteConcernDurationMillis")),
            flow_control_ms=_micros_sum(flow.get("timeAcquiringMicros")) / 1000 if isinstance(flow, Mapping) else None,
            queued_ms=_queued_ms(queues),
        ),
    )


def _queued_ms(queues: Any) -> float | None:
    if not isinstance(queues, Mapping):
        return None
    return sum(_micros_sum(q.get("totalTimeQueuedMicros")) for q in queues.values() if isinstance(q, Mapping)) / 1000


def _slow_legacy(line: LogLine) -> SlowOp | None:
    match = _LEGACY_SLOW.match(line.msg)
    if match is None:
        return None
    kind, ns, body, ms = match.groups()
    # Only shapes leave the line: strings are blanked first (a brace, a field name or the word
    # "command:" inside one is a value's text), the command's name is the body's first field,
    # and the plan and waits are read past the leading documents (the command, query, update).
    blanked = QUOTED.sub(lambda q: q.group()[0] + "_" * (len(q.group()) - 2) + q.group()[0], body)  # same offsets
    command = _LEGACY_COMMAND.match(blanked) if kind == "command" else None
    start = past_documents(blanked)
    rest = blanked[start:]
    plan_at = _LEGACY_PLAN.search(blanked, start) if start < len(blanked) else None
    plan = body[plan_at.start(1) : plan_at.end(1)] if plan_at else None  # an index's key pattern, as written
    locks = _LEGACY_LOCK_WAIT.findall(rest)
    lock_us = sum(float(n) for group in locks for n in re.findall(r":\s*(\d+)", group)) if locks else None
    storage = _LEGACY_STORAGE_WAIT.search(rest)
    return SlowOp(
        line.t,
        kind,
        shape_name(command.group(1), COMMANDS) if command else kind,
        shape_ns(ns),
        float(ms),
        shape_plan(plan),
        Waits(
            locks_ms=lock_us / 1000 if lock_us is not None else None,
            storage_ms=float(storage.group(1)) / 1000 if storage else None,
        ),
    )
