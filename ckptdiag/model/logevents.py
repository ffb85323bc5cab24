"""What mongod's log gives ckptdiag, as the sources read it and the analysis and the reports use
it: slow operations (as columns), checkpoint messages, engine opens, starts, and what reading met
(the parsing is sources/logevents.py and sources/mongodlog.py)."""

from __future__ import annotations

from array import array
from dataclasses import dataclass, field
from typing import Any

import numpy as np


@dataclass(frozen=True)
class Waits:
    """What a slow operation waited on, in ms (None: the line does not say)."""

    locks_ms: float | None = None  # acquiring locks (every resource, every mode)
    storage_ms: float | None = None  # the storage engine: cache, disk (storage.timeWaitingMicros)
    write_concern_ms: float | None = None
    flow_control_ms: float | None = None
    queued_ms: float | None = None  # admission (tickets) queues, 7.0+ "queues"


@dataclass(frozen=True)
class SlowOp:
    """A slow operation: when it was logged (its end), what it was, how long it took."""

    t: float
    kind: str  # command, insert, update, remove, query, getmore
    command: str  # insert, find, update, aggregate, ... (the command's name only)
    ns: str
    duration_ms: float
    plan: str | None
    waits: Waits


@dataclass(frozen=True)
class CheckpointMessage:
    """A log line about a checkpoint: ``saving`` (4.4+: "saving checkpoint snapshot", logged as
    each checkpoint starts), ``progress`` (4.4+: running for N s so far), ``took`` (3.x-4.2: N s
    in all, after a slow one)."""

    t: float
    kind: str
    seconds: float | None


@dataclass(frozen=True)
class EngineOpen:
    """The WiredTiger open config mongod logged at startup (secrets redacted)."""

    t: float
    config: str


WAIT_KINDS = ("locks", "storage", "write concern", "flow control", "queued")


@dataclass(frozen=True)
class SlowOps:
    """Slow operations as columns (a day of a busy log holds millions: ~50 bytes each here, not
    an object each). Names (command, namespace, plan) are codes into ``names``."""

    t: np.ndarray  # float64, when each was logged (its end)
    duration_ms: np.ndarray  # float32
    waits_ms: np.ndarray  # float32 (n, len(WAIT_KINDS)); NaN where the line does not say
    kind: np.ndarray  # int32 codes into names
    command: np.ndarray
    ns: np.ndarray
    plan: np.ndarray  # -1: no plan summary
    names: tuple[str, ...]

    def __len__(self) -> int:
        return int(self.t.size)

    def __getitem__(self, i: int) -> SlowOp:
        """The ``i``-th operation as a :class:`SlowOp`."""
        w = [None if np.isnan(v) else float(v) for v in self.waits_ms[i]]
        plan = int(self.plan[i])
        return SlowOp(
            float(self.t[i]),
            self.names[int(self.kind[i])],
            self.names[int(self.command[i])],
            self.names[int(self.ns[i])],
            float(self.duration_ms[i]),
            self.names[plan] if plan >= 0 else None,
            Waits(*w),
        )


class SlowOpsBuilder:
    """Slow operations appended one at a time into compact arrays, names interned."""

    def __init__(self) -> None:
        self.t = array("d")
        self.duration = array("f")
        self.waits = array("f")
        self.codes: dict[str, array[int]] = {k: array("i") for k in ("kind", "command", "ns", "plan")}
        self.index: dict[str, int] = {}

    def code(self, name: str | None) -> int:
        if name is None:
            return -1
        found = self.index.get(name)
        if found is None:
            found = self.index[name] = len(self.index)
        return found

    def add(self, op: SlowOp) -> None:
        self.t.append(op.t)
        self.duration.append(op.duration_ms)
        w = op.waits
        for v in (w.locks_ms, w.storage_ms, w.write_concern_ms, w.flow_control_ms, w.queued_ms):
            self.waits.append(float("nan") if v is None else v)
        for key, name in (("kind", op.kind), ("command", op.command), ("ns", op.ns), ("plan", op.plan)):
            self.codes[key].append(self.code(name))

    def build(self) -> SlowOps:
        # the columns are views of the arrays built (read-only, never copied: a log of millions
        # of slow operations is held once)
        def ints(key: str) -> np.ndarray:
            return np.frombuffer(self.codes[key], dtype=np.int32) if self.codes[key] else np.zeros(0, np.int32)

        t = np.frombuffer(self.t, dtype=np.float64) if self.t else np.zeros(0)
        duration = np.frombuffer(self.duration, dtype=np.float32) if self.duration else np.zeros(0, np.float32)
        waits = np.frombuffer(self.waits, dtype=np.float32) if self.waits else np.zeros(0, np.float32)
        return SlowOps(
            t,
            duration,
            waits.reshape(-1, len(WAIT_KINDS)),
            ints("kind"),
            ints("command"),
            ints("ns"),
            ints("plan"),
            tuple(self.index),
        )


NO_SLOW_OPS = SlowOpsBuilder().build()


@dataclass(frozen=True)
class LogEvents:
    """Everything the log gives ckptdiag, in time order."""

    slow_ops: SlowOps = NO_SLOW_OPS
    checkpoints: tuple[CheckpointMessage, ...] = ()
    engine_opens: tuple[EngineOpen, ...] = ()
    starts: tuple[float, ...] = ()  # times mongod started
    options: tuple[tuple[float, dict[str, Any]], ...] = ()  # (t, parsed startup options, secrets redacted)
    cache_pressure: tuple[tuple[float, str], ...] = field(default_factory=tuple)  # (t, message)


@dataclass
class LogReport:
    """What reading a set of log files met: lines read, and those set aside (counted, not fatal)."""

    files: list[str] = field(default_factory=list)
    lines: int = 0
    skipped: int = 0  # lines the caller's filter passed over unparsed (most of a log)
    unparsed: int = 0  # neither JSON nor legacy text (binary, another program's lines)
    too_long: int = 0
    damaged: list[str] = field(default_factory=list)  # a gzip file cut short or damaged: read up to there
