"""The 1 Hz sampler: absolute deadlines, gaps recorded, reconnects, nothing lost on the way out.

Ticks fall on ``start + k * interval`` of the monotonic clock, so the cadence never drifts. A
tick whose deadline passed by more than half an interval while a slow reply was outstanding is
skipped (and counted on the next sample) rather than taken late in a pile-up. A lost connection
becomes a ``gap`` event; the sampler reconnects on the following ticks and records ``reconnected``
(and ``restart`` when the server's uptime went back or its pid changed).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, field
from typing import Any, Protocol

from ckptdiag.clock import Clock
from ckptdiag.errors import CkptdiagError, ConnectError, OutputError
from ckptdiag.model import catalogue
from ckptdiag.model.disk import DiskCounters
from ckptdiag.recording import RecordingWriter, build_sample, header, utc_iso
from ckptdiag.sources.devices import DiskPlan
from ckptdiag.sources.diskstats import read_diskstats
from ckptdiag.sources.hostcpu import read_host_cpu
from ckptdiag.sources.mongo import DISKS_KEY, LAG_KEY, BadReply, ServerInfo, SourceLost

DiskReader = Callable[[], Mapping[str, tuple[DiskCounters, int]]]


class Source(Protocol):
    """What the sampler needs of a server (a live mongod, the lab)."""

    kind: str

    def connect(self) -> ServerInfo:
        """(Re)connect and return the server's identity."""

    def sample(self) -> dict[str, Any]:
        """One serverStatus-shaped document; raises SourceLost when the link drops."""

    def close(self) -> None:
        """Release the connection."""


@dataclass
class RecordResult:
    """What a recording run did, for the closing line and the exit status."""

    samples: int = 0
    gaps: int = 0
    restarts: int = 0
    skipped_ticks: int = 0
    wt_missing: int = 0
    stopped_by: str = "duration"
    down_s: float = 0.0
    events: list[dict[str, Any]] = field(default_factory=list)


@dataclass
class _Loop:
    """The sampling loop's own state between ticks."""

    info: ServerInfo
    pid: int | None
    seq: int = 0
    pending_skip: int = 0
    connected: bool = True
    lost_at: float | None = None
    last_uptime: float | None = None
    covered: bool = False
    replica: catalogue.ReplicaState | None = None  # the member's place in its set, last sample

    def restarted(self, doc: Mapping[str, Any]) -> bool:
        """Whether this reply comes from a restarted server (uptime went back, or another pid)."""
        uptime, doc_pid = doc.get("uptimeMillis"), doc.get("pid")
        restarted = (
            isinstance(uptime, (int, float)) and self.last_uptime is not None and uptime < self.last_uptime
        ) or (isinstance(doc_pid, int) and self.pid is not None and doc_pid != self.pid)
        if restarted and isinstance(doc_pid, int):
            self.pid = doc_pid
        if isinstance(uptime, (int, float)):
            self.last_uptime = float(uptime)
        return bool(restarted)


class Sampler:
    """Samples ``source`` every ``interval`` seconds into ``writer`` until the duration or a stop."""

    def __init__(
        self,
        source: Source,
        writer: RecordingWriter,
        *,
        clock: Clock,
        interval: float = 1.0,
        duration: float | None = None,
        read_disks: DiskReader | None = None,
        on_sample: Callable[[dict[str, Any]], None] | None = None,
        on_event: Callable[[dict[str, Any]], None] | None = None,
        read_host: Callable[[], Mapping[str, float]] | None = None,
    ) -> None:
        self.source = source
        self.writer = writer
        self.clock = clock
        self.interval = interval
        self.duration = duration
        self.read_disks = read_disks
        self.read_host = read_host
        self.on_sample = on_sample
        self.on_event = on_event
        self._stop: str | None = None
        self._failure: str | None = None  # the error that ended the run, for its end event

    def request_stop(self, reason: str = "interrupted") -> None:
        """Ask the loop to finish after the current tick (safe from a signal handler)."""
        self._stop = self._stop or reason

    def _event(self, kind: str, result: RecordResult, **fields: Any) -> None:
        wall = self.clock.wall()
        event = {"type": "event", "kind": kind, "t": round(wall, 3), "time": utc_iso(wall), **fields}
        self.writer.write(event, self.clock.monotonic())
        result.events.append(event)
        if self.on_event is not None:
            self.on_event(event)

    def _sleep_until(self, deadline: float) -> None:
        # Short naps so a stop request (Ctrl-C sets a flag) is honoured within 0.2 s.
        while self._stop is None:
            left = deadline - self.clock.monotonic()
            if left <= 0:
                return
            self.clock.sleep(min(left, 0.2))

    def run(self, info: ServerInfo, start: float | None = None) -> RecordResult:
        """Sample until the duration is over or :meth:`request_stop` is called.

        ``start`` is the tick grid's origin (monotonic): every member of a cluster is sampled on
        one grid, and one that joins later takes the grid's next tick; the duration counts from
        it. Without it the grid starts now."""
        result = RecordResult()
        state = _Loop(info=info, pid=info.pid)
        now = self.clock.monotonic()
        start = now if start is None else start
        end = math.inf if self.duration is None else start + self.duration + 1e-9
        # the first tick not late by over half an interval (the rule for every tick, _next_tick)
        tick = max(math.ceil((now - start) / self.interval - 0.5), 0)
        try:
            while True:
                deadline = start + tick * self.interval
                if deadline > end:
                    break
                self._sleep_until(deadline)
                if self._stop is not None:
                    result.stopped_by = self._stop
                    break
                if not state.connected:
                    self._reconnect(state, result)
                if state.connected:
                    # stamped now: after a reconnect that took seconds, not at the tick's start
                    self._take(state, result, self.clock.monotonic(), self.clock.wall())
                tick, skipped = self._next_tick(start, tick)
                state.pending_skip += skipped
        except CkptdiagError as exc:  # refused (auth, privileges) or unwritable (disk full): said so
            result.stopped_by = "error"
            self._failure = exc.message
            raise
        except Exception as exc:  # the end event tells the real reason, never "duration"
            result.stopped_by = "error"
            self._failure = f"unexpected {type(exc).__name__}: {str(exc)[:200]}"
            raise
        finally:
            self._end(result)
        return result

    def _end(self, result: RecordResult) -> None:
        """The closing ``end`` event, with why it ended; where the file cannot take it (disk
        full) the error already raised says so, and every line before stays readable."""
        fields: dict[str, Any] = {"error": self._failure} if self._failure else {}
        try:
            self._event(
                "end",
                result,
                reason=self._stop if self._stop and not self._failure else result.stopped_by,
                samples=result.samples,
                gaps=result.gaps,
                restarts=result.restarts,
                skipped_ticks=result.skipped_ticks,
                **fields,
            )
            self.writer.flush()
        except OutputError:
            if not self._failure:
                raise

    def _reconnect(self, state: _Loop, result: RecordResult) -> None:
        """Try the server again after a gap; a new process (pid or version) is recorded as such."""
        try:
            new_info = self.source.connect()
        except ConnectError as exc:
            if not exc.retryable:
                raise
            return
        state.connected = True
        now = self.clock.monotonic()  # when it answered: a connect attempt can take seconds
        down = now - (state.lost_at or now)
        result.down_s += down
        self._event("reconnected", result, down_s=round(down, 3), next_seq=state.seq)
        if new_info.pid != state.pid or new_info.version != state.info.version:
            state.pid = new_info.pid
            state.info = new_info
            self._event("server", result, server=new_info.to_json(), next_seq=state.seq)

    def _take(self, state: _Loop, result: RecordResult, mono: float, wall: float) -> None:
        """One sample, written; a lost link is recorded as a gap instead."""
        disks = self.read_disks() if self.read_disks is not None else None
        host = self.read_host() if self.read_host is not None else None
        try:
            doc = self.source.sample()
        except SourceLost as exc:
            state.connected = False
            state.lost_at = mono
            result.gaps += 1
            self._event("gap", result, reason=str(exc), next_seq=state.seq)
            return
        except BadReply as exc:  # still connected: the next tick asks again
            result.gaps += 1
            self._event("gap", result, reason=str(exc), next_seq=state.seq)
            return
        if DISKS_KEY in doc:  # getDiagnosticData: the server host's own disks
            disks = doc.pop(DISKS_KEY) or disks
        lag = doc.pop(LAG_KEY, None)  # a replica-set member's lag, from replSetGetStatus
        rtt_ms = (self.clock.monotonic() - mono) * 1000
        if state.restarted(doc):
            result.restarts += 1
            self._event("restart", result, next_seq=state.seq)
        try:
            sample = build_sample(
                doc,
                seq=state.seq,
                wall=wall,
                mono=mono,
                rtt_ms=rtt_ms,
                skipped=state.pending_skip,
                disks=disks,
                host=host,
                extra={catalogue.LAG_METRIC: lag} if lag is not None else None,
            )
        except (ValueError, TypeError, KeyError, OverflowError, RecursionError) as exc:  # a reply of the wrong shape
            result.gaps += 1
            self._event(
                "gap", result, reason=f"unreadable reply: {type(exc).__name__}: {exc}"[:240], next_seq=state.seq
            )
            return
        if sample.get("wt_missing"):
            result.wt_missing += 1
        self._role_event(state, catalogue.replica_state(doc), result)
        self.writer.write(sample, mono)
        if not state.covered and not sample.get("wt_missing"):
            state.covered = True
            self._coverage_event(doc, state.info, result)
        result.samples += 1
        result.skipped_ticks += state.pending_skip
        state.seq += 1
        state.pending_skip = 0
        if self.on_sample is not None:
            self.on_sample(sample)

    def _role_event(self, state: _Loop, now: catalogue.ReplicaState | None, result: RecordResult) -> None:
        """A ``role`` event when the member's role, its primary or its set's configuration
        changed (and at its first sample): failovers, elections and members joining or leaving."""
        before = state.replica
        state.replica = now
        if now is None or (
            before is not None
            and (before.role, before.primary, before.set_version, before.hosts)
            == (now.role, now.primary, now.set_version, now.hosts)
        ):
            return
        self._event(
            "role",
            result,
            role=now.role,
            previous=before.role if before else None,
            set=now.set_name,
            primary=now.primary,
            set_version=now.set_version,
            hosts=list(now.hosts),
            next_seq=state.seq,
        )

    def _coverage_event(self, doc: Mapping[str, Any], info: ServerInfo, result: RecordResult) -> None:
        # Once per recording: which path each metric came from, and what this version lacks.
        cov = catalogue.coverage(doc, catalogue.parse_version(info.version))
        self._event(
            "coverage",
            result,
            version=info.version,
            missing=list(cov.missing),
            not_in_version=list(cov.not_in_version),
            paths=cov.resolved,
        )

    def _next_tick(self, start: float, tick: int) -> tuple[int, int]:
        """The next tick to take and how many were skipped: a tick late by over half an interval is."""
        now = self.clock.monotonic()
        late_by = (now - start) / self.interval - (tick + 1)
        if late_by <= 0.5:
            return tick + 1, 0
        nxt = tick + 1 + math.ceil(late_by - 0.5)
        return nxt, nxt - tick - 1


def record_into(
    writer: RecordingWriter,
    source: Source,
    info: ServerInfo,
    plan: DiskPlan,
    *,
    header_source: Mapping[str, Any],
    clock: Clock,
    interval: float = 1.0,
    duration: float | None = None,
    on_sample: Callable[[dict[str, Any]], None] | None = None,
    on_event: Callable[[dict[str, Any]], None] | None = None,
    stop_signals: Callable[[Callable[[str], None]], AbstractContextManager[None]] | None = None,
    around: AbstractContextManager[Any] | None = None,
    disk_reader: DiskReader | None = None,
    start: float | None = None,
) -> RecordResult:
    """Write the header, then sample ``source`` into ``writer`` (record's and the lab's one path).

    ``stop_signals`` installs the handlers that ask the sampler to stop (a cluster's recorder
    registers each member's here); ``around`` wraps the run (the live display); ``disk_reader``
    reads the plan's devices from elsewhere than /proc/diskstats (the lab's model disk);
    ``start`` is the tick grid's origin the members of a cluster share.
    """
    watched = set(plan.devices)

    def read_disks() -> dict[str, tuple[DiskCounters, int]]:
        return {k: v for k, v in (disk_reader or read_diskstats)().items() if k in watched}

    writer.write(
        header(
            source=header_source,
            server=info.to_json(),
            options={"interval_s": interval, "duration_s": duration},
            disks=plan.to_json(),
            created=clock.wall(),
        ),
        clock.monotonic(),
    )
    sampler = Sampler(
        source,
        writer,
        clock=clock,
        interval=interval,
        duration=duration,
        read_disks=read_disks if watched else None,
        # the host's CPU time where the server is on this host (its disks are ours to read)
        read_host=read_host_cpu if plan.local else None,
        on_sample=on_sample,
        on_event=on_event,
    )
    with stop_signals(sampler.request_stop) if stop_signals else nullcontext(), around or nullcontext():
        return sampler.run(info, start)
