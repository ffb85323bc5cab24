"""Every member of a replica set or sharded cluster, recorded from one process on one tick grid.

Each member gets its own :class:`~ckptdiag.recording.recorder.Sampler` in its own thread, with its own
connection and recording file, and the absolute-deadline cadence of a single recording; the
members share the grid's origin, so sample k of every member is taken at the same moment and
their timelines line up. A member that cannot be reached at the start is recorded from when it
answers; one that goes away mid-run is a gap in its recording (the sampler's own reconnects), never
the end of the others'. Role changes (failovers, elections) are events in each member's recording.
The membership is followed: when a member reports a new configuration (or every
:data:`REDISCOVER_S`), the cluster is discovered again; a member that joined is recorded from then
on, one that left its set's configuration has its recording closed with that reason.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable, Iterator, Mapping
from contextlib import AbstractContextManager, contextmanager, nullcontext
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from ckptdiag.clock import Clock
from ckptdiag.errors import CkptdiagError, ConnectError, OutputError
from ckptdiag.recording import RecordingWriter
from ckptdiag.recording.recorder import RecordResult, Source, record_into
from ckptdiag.sources.devices import DiskPlan
from ckptdiag.sources.discovery import MemberAddress, Topology
from ckptdiag.sources.mongo import ServerInfo

REDISCOVER_S = 60.0  # how often the membership is checked even when no member reports a change
REMOVED = "removed from the set's configuration"
FIRST_CONNECT_S = 30.0  # the longest the first tick waits for the members' first connects

Warn = Callable[[str], None]
StopSignals = Callable[[Callable[[str], None]], AbstractContextManager[None]]


def member_file(host: str) -> str:
    """The recording's file name for a member: its host and port, safe on every filesystem.

    >>> member_file("db1.example.net:27017"), member_file("[::1]:27018")
    ('db1.example.net_27017.jsonl.gz', '__1_27018.jsonl.gz')
    """
    return re.sub(r"[^A-Za-z0-9._-]", "_", host.replace("[", "").replace("]", "")) + ".jsonl.gz"


@dataclass(frozen=True, slots=True)
class MemberOutcome:
    """What the run recorded of one member."""

    host: str
    path: Path | None  # None: streamed to stdout only
    result: RecordResult | None  # None: never answered, or refused
    error: str | None
    joined: bool  # discovered after the run began
    role: str | None  # the role of its last sample

    def line(self) -> str:
        """One line for the closing summary."""
        if self.result is None:
            return f"{self.host}: not recorded ({self.error or 'it never answered'})"
        r = self.result
        text = (
            f"{self.host}{f' ({self.role})' if self.role else ''}: {r.samples} samples to {self.path or 'stdout'}"
            f" ({r.gaps} gaps, {r.restarts} restarts, {r.skipped_ticks} skipped ticks); stopped: {r.stopped_by}"
        )
        return text + (f"; error: {self.error}" if self.error else "")


@dataclass(frozen=True, slots=True)
class ClusterResult:
    """What a cluster recording did."""

    topology: Topology
    members: tuple[MemberOutcome, ...]
    stopped_by: str

    @property
    def samples(self) -> int:
        """Samples recorded across the members."""
        return sum(m.result.samples for m in self.members if m.result is not None)


class _LockedStream:
    """stdout shared by the members' writers: whole lines, never interleaved."""

    def __init__(self, stream: IO[str]) -> None:
        self._stream = stream
        self._lock = threading.Lock()

    def write(self, text: str) -> int:
        with self._lock:
            return self._stream.write(text)

    def flush(self) -> None:
        with self._lock:
            self._stream.flush()


class _MemberRun(threading.Thread):
    """One member: connect (retrying while the run lasts), then sample into its own file."""

    def __init__(self, owner: ClusterRecorder, address: MemberAddress, joined: bool) -> None:
        super().__init__(name=f"ckptdiag {address.host}", daemon=True)
        self.owner = owner
        self.address = address
        self.joined = joined
        self.path = owner.path_for(address.host)
        self.source = owner.source_for(address)
        self.result: RecordResult | None = None
        self.error: str | None = None
        self.role: str | None = address.state.lower() if address.state else None
        self._lock = threading.Lock()
        self._reason: str | None = None
        self._sampler_stop: Callable[[str], None] | None = None
        self.tried = threading.Event()  # its first connect attempt is over, answered or not

    def request_stop(self, reason: str) -> None:
        """Stop this member after its current tick (or its current connect attempt)."""
        with self._lock:
            self._reason = self._reason or reason
            if self._sampler_stop is not None:
                self._sampler_stop(reason)

    @contextmanager
    def _registered(self, sampler_stop: Callable[[str], None]) -> Iterator[None]:
        # the sampler's stop, reachable from the coordinator (signals, a member removed)
        with self._lock:
            self._sampler_stop = sampler_stop
            if self._reason is not None:
                sampler_stop(self._reason)
        yield

    def run(self) -> None:
        try:
            info = self._connect()
            if info is not None:
                self._record(info)
        except CkptdiagError as exc:
            self.error = exc.one_line()
            self.owner.warn(f"note: {self.address.host}: {self.error}")
        except Exception as exc:  # noqa: BLE001 - one member's failure must not cost the others their recordings
            self.error = f"unexpected {type(exc).__name__}: {exc}"
            self.owner.warn(f"note: {self.address.host}: {self.error}")
        finally:
            self.source.close()

    def _connect(self) -> ServerInfo | None:
        """The member's identity, once it answers; None if the run ends first."""
        owner, said = self.owner, False
        while self._reason is None and not owner.over():
            try:
                info = self.source.connect()
                self.tried.set()
                owner.grid_ready.wait()
                return info
            except ConnectError as exc:
                self.tried.set()
                if not exc.retryable:
                    raise
                if not said:
                    owner.warn(f"note: {self.address.host} does not answer ({exc.message}); recorded from when it does")
                    said = True
            owner.nap(owner.interval)
        self.error = "it never answered"
        return None

    def _record(self, info: ServerInfo) -> None:
        owner = self.owner
        writer = RecordingWriter(
            self.path, owner.stream, overwrite=owner.overwrite, stream_fields={"member": self.address.host}
        )
        try:
            plan = owner.plan_for(self.source.kind, info)
            for note in plan.notes:
                owner.warn(f"note: {self.address.host}: {note}")
            self.result = record_into(
                writer,
                self.source,
                info,
                plan,
                header_source={**owner.header_source(self.address), "joined": self.joined},
                clock=owner.clock,
                interval=owner.interval,
                duration=owner.duration,
                on_event=self._on_event,
                on_sample=self._on_sample if owner.on_sample is not None else None,
                stop_signals=self._registered,
                start=owner.grid_start,
            )
        except BaseException:
            writer.discard()  # nothing sampled: no file (every sampled line is kept otherwise)
            raise
        finally:
            writer.close()

    def _on_event(self, event: dict[str, Any]) -> None:
        if event["kind"] == "role":
            self.role = event.get("role")
        self.owner.member_event(self.address, event)

    def _on_sample(self, sample: dict[str, Any]) -> None:
        if self.owner.on_sample is not None:
            self.owner.on_sample(self.address.host, sample)


class ClusterRecorder:
    """Records every member ``discover`` finds into ``out_dir`` (one file each) until the
    duration ends or a stop is asked for; follows the membership as it changes."""

    def __init__(
        self,
        *,
        discover: Callable[[tuple[str, ...]], Topology],
        source_for: Callable[[MemberAddress], Source],
        plan_for: Callable[[str, ServerInfo], DiskPlan],
        header_source: Callable[[MemberAddress], Mapping[str, Any]],
        out_dir: Path | None,
        clock: Clock,
        warn: Warn,
        interval: float = 1.0,
        duration: float | None = None,
        overwrite: bool = False,
        stream: IO[str] | None = None,
        follow_s: float = REDISCOVER_S,
        on_sample: Callable[[str, dict[str, Any]], None] | None = None,
        on_member_event: Callable[[str, dict[str, Any]], None] | None = None,
    ) -> None:
        """``on_sample`` and ``on_member_event`` see every member's samples and events (from the
        members' threads): the live table on a terminal, the lines said about failovers and gaps."""
        self.discover = discover
        self.source_for = source_for
        self.plan_for = plan_for
        self.header_source = header_source
        self.out_dir = out_dir
        self.clock = clock
        self.warn = warn
        self.interval = interval
        self.duration = duration
        self.overwrite = overwrite
        self.stream = _LockedStream(stream) if stream is not None else None
        self.follow_s = follow_s
        self.on_sample = on_sample
        self.on_member_event = on_member_event
        self.grid_start = 0.0
        self.grid_ready = threading.Event()  # set once grid_start is: the members' first tick waits for it
        self._runs: dict[str, _MemberRun] = {}
        self._ended: list[_MemberRun] = []
        self._stop: str | None = None
        self._changed = threading.Event()
        self._configs: dict[str, tuple[int | None, tuple[str, ...]]] = {}  # set -> (version, hosts) last seen
        self._lock = threading.Lock()

    def path_for(self, host: str) -> Path | None:
        """A member's file: by host, with a number when the member left and came back in this run."""
        if self.out_dir is None:
            return None
        name = member_file(host)
        taken = {r.path for r in [*self._runs.values(), *self._ended]}
        path, n = self.out_dir / name, 2
        while path in taken:
            path, n = self.out_dir / name.replace(".jsonl.gz", f"-{n}.jsonl.gz"), n + 1
        return path

    # -- what the members' threads call --------------------------------------------------------
    def over(self) -> bool:
        """Whether the run is over (stopped, or past its duration)."""
        if self._stop is not None:
            return True
        return (
            self.grid_ready.is_set()
            and self.duration is not None
            and self.clock.monotonic() >= self.grid_start + self.duration
        )

    def nap(self, seconds: float) -> None:
        """Sleep up to ``seconds``, waking within 0.2 s of a stop."""
        end = self.clock.monotonic() + seconds
        while not self.over() and (left := end - self.clock.monotonic()) > 0:
            self.clock.sleep(min(left, 0.2))

    def member_event(self, address: MemberAddress, event: dict[str, Any]) -> None:
        """A member's recording event: passed on (``on_member_event``: the terminal's), and a
        configuration change starts a new discovery."""
        if self.on_member_event is not None:
            self.on_member_event(address.host, event)
        if event["kind"] == "role":
            seen = (event.get("set_version"), tuple(event.get("hosts") or ()))
            with self._lock:
                before = self._configs.get(str(event.get("set")))
                self._configs[str(event.get("set"))] = seen
            if before is not None and before != seen:
                self._changed.set()

    # -- the coordinator -----------------------------------------------------------------------
    def request_stop(self, reason: str = "interrupted") -> None:
        """Stop every member after its current tick (safe from a signal handler)."""
        self._stop = self._stop or reason
        for run in list(self._runs.values()):
            run.request_stop(reason)

    def run(
        self, stop_signals: StopSignals | None = None, around: AbstractContextManager[Any] | None = None
    ) -> ClusterResult:
        """Discover, record every member until the end, and say what each recorded; ``around``
        wraps the recording (the live table)."""
        topology = self.discover(())
        if not self.overwrite and self.out_dir is not None:  # before any recording: never a file already there
            for address in topology.members:
                if (path := self.out_dir / member_file(address.host)).exists():
                    raise OutputError(
                        f"{path} already exists; ckptdiag never overwrites a recording",
                        "choose another -o directory, or pass --overwrite",
                    )
        self.warn(f"{topology.describe()}; one recording each in {self.out_dir or 'stdout'}")
        for note in topology.notes:
            self.warn(f"note: {note}")
        with stop_signals(self.request_stop) if stop_signals else nullcontext(), around or nullcontext():
            for address in topology.members:
                self._start(address, joined=False)
            # The grid starts once every member has answered (or failed) its first connect: tick
            # 0 is then every member's first sample, instead of a tick lost to connecting.
            waited_until = self.clock.monotonic() + FIRST_CONNECT_S
            for run in list(self._runs.values()):
                while self._stop is None and not run.tried.wait(0.2) and self.clock.monotonic() < waited_until:
                    pass
            self.grid_start = self.clock.monotonic()
            self.grid_ready.set()
            last_look = self.grid_start
            while self._stop is None and any(r.is_alive() for r in self._runs.values()):
                self._changed.wait(0.2)
                now = self.clock.monotonic()
                if self._changed.is_set() or now - last_look >= self.follow_s:
                    self._changed.clear()
                    last_look = now
                    topology = self._follow(topology)
            for run in [*self._runs.values(), *self._ended]:
                run.join()
        outcomes = tuple(
            MemberOutcome(r.address.host, r.path, r.result, r.error, r.joined, r.role)
            for r in sorted([*self._runs.values(), *self._ended], key=lambda r: r.address.host)
        )
        return ClusterResult(topology, outcomes, self._stop or "duration")

    def _start(self, address: MemberAddress, *, joined: bool) -> None:
        run = _MemberRun(self, address, joined)
        self._runs[address.host] = run
        run.start()

    def _follow(self, topology: Topology) -> Topology:
        """Discover again: record members that joined, close the recordings of those that left."""
        if self.over():
            return topology
        try:
            now = self.discover(tuple(self._runs))
        except CkptdiagError as exc:  # the members are still recorded; the next look may answer
            self.warn(f"note: the membership could not be checked: {exc.message}")
            return topology
        if now.kind != topology.kind:  # answered by a member, not the mongos: not the whole picture
            return topology
        listed = {m.host for m in now.members}
        for address in now.members:
            if address.host not in self._runs and not self.over():
                self.warn(f"{address.host} joined {address.set_name or 'the cluster'}: recorded from now on")
                self._start(address, joined=True)
        for host in [h for h in self._runs if h not in listed]:
            run = self._runs.pop(host)
            self.warn(f"{host} left {run.address.set_name or 'the cluster'}: its recording ends")
            run.request_stop(REMOVED)
            self._ended.append(run)
        return now
