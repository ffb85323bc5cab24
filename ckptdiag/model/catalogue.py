"""The metric catalogue: the only place that knows where each metric lives in serverStatus.

Every metric ckptdiag reads has one canonical name (``ckpt.generation``, ``cache.dirty_bytes``),
a unit, a kind (counter, gauge, flag, enum) and the serverStatus paths that hold it, each tagged
with the MongoDB versions whose WiredTiger branch has it. The paths and version ranges come from
WiredTiger's ``dist/stat_data.py`` on each ``mongodb-X.Y`` branch and were checked against real
serverStatus documents from 3.2 to 8.2 (see docs/metrics.md).

Resolution tries every source in order, whatever the version says, so that a patch release
that kept or gained a statistic still resolves; the version ranges only decide what a server of
that version is *expected* to lack (:func:`coverage`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime
from enum import Enum
from typing import Any

Version = tuple[int, ...]  # (major, minor) or (major, minor, patch); tuples compare as versions
Number = int | float


class Kind(str, Enum):
    """How a metric behaves over time; the analysis derives rates only for counters."""

    COUNTER = "counter"  # cumulative since start-up; rates come from deltas
    GAUGE = "gauge"  # a level at the moment of the sample
    FLAG = "flag"  # 0 or 1
    ENUM = "enum"  # a state code or bitmask; never averaged


class Unit(str, Enum):
    """The unit a raw value is in, for renderers and for rate names."""

    BYTES = "bytes"
    MS = "ms"
    US = "us"
    OPS = "ops"
    PAGES = "pages"
    COUNT = "count"
    STATE = "state"


def parse_version(text: str | None) -> Version | None:
    """``"7.0.21"`` -> ``(7, 0, 21)``; ``None`` when the text has no major.minor.

    >>> parse_version("3.6.5-2-g38fa7abcaf")
    (3, 6, 5)
    >>> parse_version("8.3")
    (8, 3, 0)
    """
    if not text:
        return None
    match = re.match(r"(\d+)\.(\d+)(?:\.(\d+))?", text)
    if not match:
        return None
    return (int(match.group(1)), int(match.group(2)), int(match.group(3) or 0))


def _lookup(doc: Mapping[str, Any], path: tuple[str, ...]) -> Number | None:
    node: Any = doc
    for key in path:
        if not isinstance(node, Mapping):
            return None
        node = node.get(key)
        if node is None:
            return None
    if isinstance(node, bool):
        return int(node)
    if isinstance(node, int):
        return int(node)  # bson.Int64 -> int, so json and pandas see a plain int
    if isinstance(node, float):
        return int(node) if node.is_integer() else node
    return None


@dataclass(frozen=True, slots=True)
class Field:
    """One serverStatus path, present in the WiredTiger branches of MongoDB ``since`` up to ``before``."""

    path: tuple[str, ...]
    since: Version | None = None
    before: Version | None = None  # exclusive: the first version without it

    def get(self, doc: Mapping[str, Any]) -> Number | None:
        """The value at this path, or ``None`` when the document lacks it."""
        return _lookup(doc, self.path)

    def covers(self, version: Version) -> bool:
        """Whether a server of ``version`` is expected to have this path."""
        return (self.since is None or version >= self.since) and (self.before is None or version < self.before)

    def describe(self) -> str:
        """The path as a DBA types it in the shell, e.g. ``wiredTiger.cache["maximum bytes configured"]``."""
        return ".".join(self.path[:2]) + "".join(f'["{p}"]' for p in self.path[2:])


@dataclass(frozen=True, slots=True)
class Difference:
    """A metric the server splits in two, e.g. 8.1's evict *attempts* minus *failures*."""

    minuend: Field
    subtrahend: Field

    @property
    def since(self) -> Version | None:
        return self.minuend.since

    def get(self, doc: Mapping[str, Any]) -> Number | None:
        a, b = self.minuend.get(doc), self.subtrahend.get(doc)
        return None if a is None or b is None else a - b

    def covers(self, version: Version) -> bool:
        return self.minuend.covers(version)

    def describe(self) -> str:
        return f"{self.minuend.describe()} - {self.subtrahend.describe()}"


@dataclass(frozen=True, slots=True)
class Total:
    """A metric the server splits by cause, e.g. 7.3's checkpoints started by api + by compaction."""

    parts: tuple[Field, ...]

    @property
    def since(self) -> Version | None:
        return self.parts[0].since

    def get(self, doc: Mapping[str, Any]) -> Number | None:
        values = [part.get(doc) for part in self.parts]
        present = [v for v in values if v is not None]
        # The compaction counter may be missing on a patch release; the api one must be there.
        return sum(present) if values[0] is not None else None

    def covers(self, version: Version) -> bool:
        return self.parts[0].covers(version)

    def describe(self) -> str:
        return " + ".join(part.describe() for part in self.parts)


Source = Field | Difference | Total


@dataclass(frozen=True, slots=True)
class Metric:
    """One canonical metric and where every MongoDB version keeps it."""

    name: str
    unit: Unit
    kind: Kind
    description: str
    sources: tuple[Source, ...]
    replica_set_only: bool = False  # absent on a standalone server, whatever its version
    linux_only: bool = False  # absent on macOS and Windows servers, whatever their version

    def applies_to(self, version: Version | None) -> bool:
        """Whether a server of ``version`` should have this metric (unknown version: yes)."""
        return version is None or any(s.covers(version) for s in self.sources)

    def resolve(self, doc: Mapping[str, Any]) -> tuple[Number, Source] | None:
        """The value and the source that held it, trying the sources in order."""
        for source in self.sources:
            value = source.get(doc)
            if value is not None:
                return value, source
        return None

    @property
    def sections(self) -> frozenset[str]:
        """The top-level serverStatus sections this metric needs."""
        out: set[str] = set()
        for s in self.sources:
            fields = (
                (s,) if isinstance(s, Field) else ((s.minuend, s.subtrahend) if isinstance(s, Difference) else s.parts)
            )
            out.update(f.path[0] for f in fields)
        return frozenset(out)


# --- the catalogue ---------------------------------------------------------------------------

V34, V36, V40, V42, V44, V70, V71, V73, V80, V81 = (
    (3, 4),
    (3, 6),
    (4, 0),
    (4, 2),
    (4, 4),
    (7, 0),
    (7, 1),
    (7, 3),
    (8, 0),
    (8, 1),
)


def _wt(category: str, name: str, since: Version | None = None, before: Version | None = None) -> Field:
    return Field(("wiredTiger", category, name), since, before)


def _txn_ckpt(old: str, new: str) -> tuple[Field, Field]:
    """A checkpoint statistic before (≤7.0, ``transaction``) and after (7.1+, ``checkpoint``) WT-11171."""
    return (
        _wt("transaction", f"transaction checkpoint {old}", before=V71),
        _wt("checkpoint", new, since=V71),
    )


# The handle statistics came to 4.2 and 4.4 in patch releases: the shared captures of 4.2.2-4.2.9
# and 4.4.1 lack them, 4.2.12 and 4.4.3 on have them
V4212, V443 = (4, 2, 12), (4, 4, 3)


def _backported(name: str) -> tuple[Field, Field]:
    """A ``transaction checkpoint`` handle statistic as 4.2.12+ and 4.4.3-7.0 name it."""
    old = f"transaction checkpoint {name}"
    return _wt("transaction", old, since=V4212, before=V44), _wt("transaction", old, since=V443, before=V71)


def _split_in_81(old: str, attempts: str, failures: str) -> tuple[Source, Source]:
    """An eviction counter before 8.1, and attempts minus failures from 8.1 on (WT-8969)."""
    return (
        _wt("cache", old, before=V81),
        Difference(_wt("cache", attempts, since=V81), _wt("cache", failures, since=V81)),
    )


def _m(name: str, unit: Unit, kind: Kind, description: str, *sources: Source) -> Metric:
    return Metric(name, unit, kind, description, tuple(sources))


C, G, F, E = Kind.COUNTER, Kind.GAUGE, Kind.FLAG, Kind.ENUM

# fmt: off  (a table reads better aligned by hand)
METRICS: tuple[Metric, ...] = (
    # checkpoint
    _m(
        "ckpt.running",
        Unit.STATE,
        F,
        "a checkpoint is running (gone in 7.1+: see ckpt.progress_state)",
        _wt("transaction", "transaction checkpoint currently running", before=V71),
    ),
    _m(
        "ckpt.progress_state",
        Unit.STATE,
        E,
        "checkpoint phase, 0 = inactive (WT_CHECKPOINT_STATE_*)",
        _wt("checkpoint", "progress state", since=V71),
    ),
    _m(
        "ckpt.count",
        Unit.COUNT,
        C,
        "checkpoints started",
        _wt("transaction", "transaction checkpoints", before=V71),
        _wt("checkpoint", "number of checkpoints started", since=V71, before=V73),
        Total(
            (
                _wt("checkpoint", "number of checkpoints started by api", since=V73),
                _wt("checkpoint", "number of checkpoints started by compaction", since=V73),
            )
        ),
    ),
    _m(
        "ckpt.generation",
        Unit.COUNT,
        C,
        "checkpoint generation (continuous across all versions)",
        *_txn_ckpt("generation", "generation"),
    ),
    _m(
        "ckpt.recent_ms",
        Unit.MS,
        G,
        "duration of the most recent checkpoint",
        *_txn_ckpt("most recent time (msecs)", "most recent time (msecs)"),
    ),
    _m(
        "ckpt.max_ms",
        Unit.MS,
        G,
        "longest checkpoint since start-up",
        *_txn_ckpt("max time (msecs)", "max time (msecs)"),
    ),
    _m(
        "ckpt.total_ms",
        Unit.MS,
        C,
        "time spent in checkpoints since start-up",
        *_txn_ckpt("total time (msecs)", "total time (msecs)"),
    ),
    # the phases of the most recent checkpoint (set as each one passes them; txn_ckpt.c)
    _m(
        "ckpt.scrub_ms",
        Unit.MS,
        G,
        "the most recent checkpoint's scrub: evicting dirty data before it starts",
        _wt("transaction", "transaction checkpoint scrub time (msecs)", since=V34, before=V71),
        _wt("checkpoint", "scrub time (msecs)", since=V71, before=V73),
        _wt("checkpoint", "scrub most recent time (msecs)", since=V73),
    ),
    _m(
        "ckpt.prepare_ms",
        Unit.MS,
        G,
        "the most recent checkpoint's prepare: its transaction and handles, under the schema lock",
        _wt("transaction", "transaction checkpoint prepare most recent time (msecs)", since=V44, before=V71),
        _wt("checkpoint", "prepare most recent time (msecs)", since=V71),
    ),
    _m(
        "ckpt.handles_us",
        Unit.US,
        G,
        "the most recent checkpoint's gathering of every data handle (part of prepare)",
        *_backported("most recent duration for gathering all handles (usecs)"),
        _wt("checkpoint", "most recent duration for gathering all handles (usecs)", since=V71),
    ),
    _m(
        "ckpt.handles_walked",
        Unit.COUNT,
        G,
        "data handles the most recent checkpoint walked",
        *_backported("most recent handles walked"),
        _wt("checkpoint", "most recent handles walked", since=V71),
    ),
    _m(
        "ckpt.trees_us",
        Unit.US,
        G,
        "the most recent checkpoint's per-tree work: writing each table's and index's dirty pages",
        _wt("checkpoint", "time spent on per-tree checkpoint work (usecs)", since=V73),
    ),
    _m(
        "ckpt.hs_us",
        Unit.US,
        G,
        "the most recent checkpoint's history store file",
        _wt("transaction", "transaction checkpoint history store file duration (usecs)", since=V44),
    ),
    _m(
        "ckpt.sync_us",
        Unit.US,
        G,
        "the most recent checkpoint's final syncs of its files",
        _wt("checkpoint", "fsync duration after allocating the transaction ID (usecs)", since=V71),
    ),
    _m(
        "ckpt.bytes_written",
        Unit.BYTES,
        C,
        "bytes written for checkpoint (block manager)",
        _wt("block-manager", "bytes written for checkpoint", since=V34),
    ),
    _m(
        "block.bytes_written",
        Unit.BYTES,
        C,
        "bytes written by the block manager (all writes)",
        _wt("block-manager", "bytes written"),
    ),
    _m("block.bytes_read", Unit.BYTES, C, "bytes read by the block manager", _wt("block-manager", "bytes read")),
    # cache
    _m(
        "cache.max_bytes",
        Unit.BYTES,
        G,
        "cache size (maximum bytes configured)",
        _wt("cache", "maximum bytes configured"),
    ),
    _m("cache.bytes", Unit.BYTES, G, "bytes currently in the cache", _wt("cache", "bytes currently in the cache")),
    _m(
        "cache.dirty_bytes",
        Unit.BYTES,
        G,
        "tracked dirty bytes in the cache",
        _wt("cache", "tracked dirty bytes in the cache"),
    ),
    _m(
        "cache.updates_bytes",
        Unit.BYTES,
        G,
        "bytes allocated for updates (drives eviction_updates_*)",
        _wt("cache", "bytes allocated for updates", since=V44),
    ),
    _m(
        "cache.hs_bytes",
        Unit.BYTES,
        G,
        "history store (cache overflow before 4.4) bytes in the cache",
        _wt("cache", "bytes belonging to the history store table in the cache", since=V44),
        _wt("cache", "bytes belonging to the cache overflow table in the cache", since=V36, before=V44),
        # early 3.6 patch releases still said "lookaside" (seen in real 3.6.2 to 3.6.5 documents)
        _wt("cache", "bytes belonging to the lookaside table in the cache", since=V36, before=V40),
    ),
    _m(
        "cache.app_evicted_pages",
        Unit.PAGES,
        C,
        "pages evicted by application threads",
        *_split_in_81(
            "pages evicted by application threads",
            "page evict attempts by application threads",
            "page evict failures by application threads",
        ),
    ),
    _m(
        "cache.app_evicted_modified_pages",
        Unit.PAGES,
        C,
        "modified pages evicted by application threads",
        *_split_in_81(
            "modified pages evicted by application threads",
            "modified page evict attempts by application threads",
            "modified page evict failures by application threads",
        ),
    ),
    _m(
        "cache.app_evict_time_us",
        Unit.US,
        C,
        "application thread time evicting",
        _wt("thread-yield", "application thread time evicting (usecs)", since=V34, before=V80),
        _wt("cache", "application thread time evicting (usecs)", since=V80),
    ),
    _m(
        "cache.app_wait_time_us",
        Unit.US,
        C,
        "application thread time waiting for cache",
        _wt("thread-yield", "application thread time waiting for cache (usecs)", since=V34),
    ),
    _m(
        "cache.app_page_writes",
        Unit.PAGES,
        C,
        "application threads page write from cache to disk count",
        _wt("cache", "application threads page write from cache to disk count", since=V34),
    ),
    _m(
        "cache.evicted_modified_pages",
        Unit.PAGES,
        C,
        "modified pages evicted (all threads)",
        _wt("cache", "modified pages evicted"),
    ),
    _m(
        "cache.evicted_unmodified_pages",
        Unit.PAGES,
        C,
        "unmodified pages evicted (all threads)",
        _wt("cache", "unmodified pages evicted"),
    ),
    _m(
        "cache.eviction_workers_active",
        Unit.COUNT,
        G,
        "eviction worker threads active",
        # in the mongodb-3.4 branch tip, not in real 3.4.0; 3.4.6 is the first release seen with it
        _wt("cache", "eviction worker thread active", since=(3, 4, 6)),
    ),
    _m(
        "cache.eviction_worker_evicted_pages",
        Unit.PAGES,
        C,
        "pages evicted by eviction worker threads",
        *_split_in_81(
            "eviction worker thread evicting pages",
            "evict page attempts by eviction worker threads",
            "evict page failures by eviction worker threads",
        ),
    ),
    _m(
        "cache.eviction_state",
        Unit.STATE,
        E,
        "eviction state bitmask (decode with eviction_state_flags)",
        _wt("cache", "eviction state", since=V34),
    ),
    _m(
        "cache.eviction_slow",
        Unit.COUNT,
        C,
        "eviction server unable to reach eviction goal",
        _wt("cache", "eviction server unable to reach eviction goal"),
    ),
    _m(
        "cache.timed_out_ops",
        Unit.OPS,
        C,
        "operations timed out waiting for space in cache",
        # stat_data.py has it from mongodb-3.6, but real 3.6.x documents lack it: 4.0 is the first seen
        _wt("cache", "operations timed out waiting for space in cache", since=V40),
    ),
    _m(
        "cache.urgent_queued_pages",
        Unit.PAGES,
        C,
        "pages queued for urgent eviction",
        _wt("cache", "pages queued for urgent eviction"),
    ),
    # journal
    _m("journal.bytes_written", Unit.BYTES, C, "journal (log) bytes written", _wt("log", "log bytes written")),
    _m("journal.syncs", Unit.COUNT, C, "journal sync operations", _wt("log", "log sync operations")),
    _m("journal.sync_time_us", Unit.US, C, "journal sync time", _wt("log", "log sync time duration (usecs)")),
    _m("conn.fsyncs", Unit.COUNT, C, "WiredTiger fsync calls", _wt("connection", "total fsync I/Os")),
    # tickets: wiredTiger.concurrentTransactions up to 7.0, queues.execution from 8.0 (DataDog#22320)
    *(
        _m(
            f"tickets.{rw}.{key}",
            Unit.COUNT,
            G,
            f"{rw} tickets {label}",
            Field(("wiredTiger", "concurrentTransactions", rw, field), before=V71),
            Field(("queues", "execution", rw, field), since=V80),
        )
        for rw in ("read", "write")
        for key, field, label in (
            ("out", "out", "in use"),
            ("available", "available", "available"),
            ("total", "totalTickets", "in total"),
        )
    ),
    # operations
    *(
        _m(f"ops.{op}", Unit.OPS, C, f"opcounters.{op}", Field(("opcounters", op)))
        for op in ("insert", "query", "update", "delete", "getmore", "command")
    ),
    *(
        m
        for kind in ("reads", "writes", "commands")
        for m in (
            _m(
                f"lat.{kind}.latency_us",
                Unit.US,
                C,
                f"total latency of {kind}",
                Field(("opLatencies", kind, "latency"), since=V34),
            ),
            _m(
                f"lat.{kind}.ops",
                Unit.OPS,
                C,
                f"{kind} counted in opLatencies",
                Field(("opLatencies", kind, "ops"), since=V34),
            ),
        )
    ),
    *(
        _m(f"queue.{who}", Unit.COUNT, G, f"globalLock.currentQueue.{who}", Field(("globalLock", "currentQueue", who)))
        for who in ("total", "readers", "writers")
    ),
    # WiredTiger's own I/O throttle (io_capacity): non-zero only when it is set
    _m(
        "capacity.ckpt_wait_us",
        Unit.US,
        C,
        "time checkpoints waited for io_capacity",
        _wt("capacity", "time waiting during checkpoint (usecs)", since=V42),
    ),
    _m(
        "capacity.total_wait_us",
        Unit.US,
        C,
        "time writes waited for io_capacity's total",
        _wt("capacity", "time waiting due to total capacity (usecs)", since=V42),
    ),
    # replication: a secondary takes its writes by applying the oplog, not from clients
    *(
        _m(
            f"repl.ops.{op}",
            Unit.OPS,
            C,
            f"opcountersRepl.{op} (writes applied by replication)",
            Field(("opcountersRepl", op)),
        )
        for op in ("insert", "update", "delete")
    ),
    _m("repl.apply.ops", Unit.OPS, C, "oplog entries applied", Field(("metrics", "repl", "apply", "ops"))),
    _m(
        "repl.apply.batches",
        Unit.COUNT,
        C,
        "oplog apply batches",
        Field(("metrics", "repl", "apply", "batches", "num")),
    ),
    _m(
        "repl.apply.batch_ms",
        Unit.MS,
        C,
        "time spent applying oplog batches",
        Field(("metrics", "repl", "apply", "batches", "totalMillis")),
    ),
    _m(
        "repl.buffer.count",
        Unit.COUNT,
        G,
        "oplog entries fetched and waiting to be applied",
        Field(("metrics", "repl", "buffer", "count"), before=V80),
        Field(("metrics", "repl", "buffer", "apply", "count"), since=V80),
    ),
    _m(
        "repl.buffer.bytes",
        Unit.BYTES,
        G,
        "bytes of oplog waiting to be applied",
        Field(("metrics", "repl", "buffer", "sizeBytes"), before=V80),
        Field(("metrics", "repl", "buffer", "apply", "sizeBytes"), since=V80),
    ),
    # the primary's waits for its write concern (w: "majority", w > 1): how long writes waited for
    # the secondaries, so a secondary's checkpoint stall shows on the primary here first
    _m(
        "repl.wc_wait.count",
        Unit.OPS,
        C,
        "writes that waited for their write concern (w: majority, w > 1)",
        Field(("metrics", "getLastError", "wtime", "num")),
    ),
    _m(
        "repl.wc_wait.ms",
        Unit.MS,
        C,
        "time writes spent waiting for their write concern",
        Field(("metrics", "getLastError", "wtime", "totalMillis")),
    ),
    Metric(
        "repl.primary",
        Unit.STATE,
        F,
        "the member is the writable primary (replica sets only)",
        (Field(("repl", "isWritablePrimary")), Field(("repl", "ismaster"))),
        replica_set_only=True,
    ),
    Metric(
        "repl.secondary",
        Unit.STATE,
        F,
        "the member is a secondary (replica sets only)",
        (Field(("repl", "secondary")),),
        replica_set_only=True,
    ),
    # history kept for readers, and what pins it (a cause of long checkpoints: WT-6681)
    _m(
        "cache.hs_disk_bytes",
        Unit.BYTES,
        G,
        "the history store's size on disk (4.2: the cache overflow table's; some late 3.6 patches have it too)",
        # not in the real 3.6.2-3.6.5 and 4.0.x documents: a 4.2 statistic, read wherever a server has it
        _wt("cache", "cache overflow table on-disk size", since=V42, before=V44),
        _wt("cache", "history store table on-disk size", since=V44),
    ),
    _m(
        "txn.pinned_ids",
        Unit.COUNT,
        G,
        "transaction IDs pinned: the oldest transaction or snapshot still read holds history back",
        _wt("transaction", "transaction range of IDs currently pinned"),
    ),
    _m(
        "txn.pinned_ckpt_ids",
        Unit.COUNT,
        G,
        "transaction IDs pinned by a running checkpoint (its own snapshot: not a reader's)",
        _wt("transaction", "transaction range of IDs currently pinned by a checkpoint"),
    ),
    _m(
        "txn.pinned_ts",
        Unit.COUNT,
        G,
        "the range of timestamps pinned (the high 32 bits are seconds): how far back history is kept",
        _wt("transaction", "transaction range of timestamps currently pinned", since=V36),
    ),
    _m(
        "dhandles.active",
        Unit.COUNT,
        G,
        "data handles open: a collection or index each (a checkpoint walks every one: WT-5479)",
        _wt("data-handle", "connection data handles currently active"),
    ),
    _m("conn.current", Unit.COUNT, G, "client connections", Field(("connections", "current"))),
    # mongod's own CPU time (getrusage), beside the host's (systemMetrics, /proc/stat): the CPUs
    # other processes took are the host's less these; Linux servers from 4.2
    *(
        Metric(
            f"process.{part}_us",
            Unit.US,
            C,
            f"CPU time mongod spent in {where} (Linux)",
            (Field(("extra_info", f"{part}_time_us"), since=V42),),
            linux_only=True,
        )
        for part, where in (("user", "user mode"), ("system", "the kernel"))
    ),
    _m("uptime_ms", Unit.MS, C, "server uptime (a decrease marks a restart)", Field(("uptimeMillis",))),
)
# fmt: on

CATALOGUE: dict[str, Metric] = {m.name: m for m in METRICS}

# The metrics without which there is no checkpoint analysis at all: a server lacking any of them
# (for its version) is reported, not silently analysed.
CORE: tuple[str, ...] = (
    "ckpt.generation",
    "ckpt.recent_ms",
    "ckpt.total_ms",
    "ckpt.bytes_written",
    "block.bytes_written",
    "cache.max_bytes",
    "cache.bytes",
    "cache.dirty_bytes",
    "cache.app_evicted_pages",
    "cache.app_wait_time_us",
    "cache.eviction_state",
    "journal.bytes_written",
    "ops.insert",
    "ops.query",
    "ops.update",
    "ops.delete",
    "uptime_ms",
)


def sections() -> frozenset[str]:
    """The top-level serverStatus sections the catalogue reads."""
    out: set[str] = set()
    for metric in METRICS:
        out |= metric.sections
    return frozenset(out)


# The parts of a serverStatus reply read beside the metrics, each whole: the version (coverage),
# restarts (uptimeMillis, pid), the server's clock (localTime), the member's place in its set
# (repl: replica_state), the latency histograms (opLatencies: the recording's ``hist``).
READ_WHOLE: tuple[tuple[str, ...], ...] = (
    ("version",),
    ("uptimeMillis",),
    ("pid",),
    ("localTime",),
    ("repl",),
    ("opLatencies",),
)


def metric_paths() -> frozenset[tuple[str, ...]]:
    """Every serverStatus path a metric is read from, in every version's spelling."""
    return frozenset(f.path for metric in METRICS for source in metric.sources for f in source_fields(source))


def reply_paths() -> frozenset[tuple[str, ...]]:
    """Every path of a serverStatus reply that a sample reads: :func:`metric_paths` and
    :data:`READ_WHOLE`. The rest of a reply is never decoded."""
    return metric_paths() | frozenset(READ_WHOLE)


def extract(doc: Mapping[str, Any], metrics: Iterable[Metric] = METRICS) -> dict[str, Number]:
    """Every catalogue metric the document holds, by canonical name."""
    out: dict[str, Number] = {}
    for metric in metrics:
        found = metric.resolve(doc)
        if found is not None:
            out[metric.name] = found[0]
    return out


@dataclass(frozen=True, slots=True)
class Coverage:
    """What one serverStatus document gives, against what its version should give."""

    version: Version | None
    resolved: dict[str, str]  # metric -> the source that held it
    not_in_version: tuple[str, ...]  # absent, as expected for this version
    missing: tuple[str, ...]  # absent although the version should have it
    not_on_this_server: tuple[str, ...] = ()  # replica-set metrics a standalone lacks, Linux ones other platforms

    @property
    def complete(self) -> bool:
        return not self.missing


def coverage(doc: Mapping[str, Any], version: Version | None = None) -> Coverage:
    """Which catalogue metrics ``doc`` resolves, and exactly what its version lacks."""
    if version is None:
        raw = doc.get("version")
        version = parse_version(raw if isinstance(raw, str) else None)
    resolved: dict[str, str] = {}
    not_in_version: list[str] = []
    missing: list[str] = []
    standalone: list[str] = []
    for metric in METRICS:
        found = metric.resolve(doc)
        if found is not None:
            resolved[metric.name] = found[1].describe()
        elif not metric.applies_to(version):
            not_in_version.append(metric.name)
        elif metric.replica_set_only or metric.linux_only:
            standalone.append(metric.name)
        else:
            missing.append(metric.name)
    return Coverage(version, resolved, tuple(not_in_version), tuple(missing), tuple(standalone))


# --- replica-set membership ------------------------------------------------------------------
# Not metrics (names and lists, not numbers): who the member is in its set, read by the sampler
# to record role changes and by the cluster recorder to follow the membership.


@dataclass(frozen=True, slots=True)
class ReplicaState:
    """A member's place in its replica set, as its serverStatus ``repl`` section gives it."""

    set_name: str
    role: str  # primary, secondary, arbiter, or other (starting up, recovering, rolling back)
    me: str | None
    primary: str | None
    hosts: tuple[str, ...]  # data-bearing members it lists (hosts and passives; hidden ones are not)
    set_version: int | None


def replica_state(doc: Mapping[str, Any]) -> ReplicaState | None:
    """The member's replica-set state from ``repl`` (None: a standalone server or no section).

    ``repl.ismaster`` was renamed ``repl.isWritablePrimary`` in 5.0 (4.4.2 kept both).

    >>> replica_state({"repl": {"setName": "rs0", "isWritablePrimary": True, "hosts": ["a:1"]}}).role
    'primary'
    """
    repl = doc.get("repl")
    if not isinstance(repl, Mapping) or not isinstance(repl.get("setName"), str):
        return None
    if repl.get("isWritablePrimary", repl.get("ismaster")) is True:
        role = "primary"
    elif repl.get("secondary") is True:
        role = "secondary"
    elif repl.get("arbiterOnly") is True:
        role = "arbiter"
    else:
        role = "other"
    listed = [h for key in ("hosts", "passives") for h in (repl.get(key) or ()) if isinstance(h, str)]
    version = repl.get("setVersion")
    return ReplicaState(
        set_name=repl["setName"],
        role=role,
        me=repl["me"] if isinstance(repl.get("me"), str) else None,
        primary=repl["primary"] if isinstance(repl.get("primary"), str) else None,
        hosts=tuple(listed),
        set_version=int(version) if isinstance(version, (int, float)) and not isinstance(version, bool) else None,
    )


LAG_METRIC = "repl.lag_ms"  # a member's replication lag (ms), from replSetGetStatus rather than serverStatus


def replset_lag_ms(status: Mapping[str, Any]) -> int | None:
    """A member's replication lag from its ``replSetGetStatus`` reply: the primary's
    ``optimeDate`` less this member's (0 on the primary), -1 when no member is primary (an
    election), None when the reply does not say (FTDC's columns follow the same rule).

    >>> import datetime as dt
    >>> t = dt.datetime(2026, 1, 1)
    >>> replset_lag_ms({"members": [{"self": True, "state": 2, "optimeDate": t},
    ...                             {"state": 1, "optimeDate": t + dt.timedelta(seconds=3)}]})
    3000
    """
    members = [m for m in status.get("members") or () if isinstance(m, Mapping)]
    mine = [m["optimeDate"] for m in members if m.get("self") and isinstance(m.get("optimeDate"), datetime)]
    primary = [m["optimeDate"] for m in members if m.get("state") == 1 and isinstance(m.get("optimeDate"), datetime)]
    if len(mine) != 1:
        return None
    if not primary:
        return -1
    behind: float = (primary[0] - mine[0]).total_seconds()
    return max(round(behind * 1000), 0)


# --- eviction state ----------------------------------------------------------------------------
# WT_CACHE_EVICT_* bits in src/include/cache.h: the layout moved in 7.0 (mongodb-facts.md §3a).
_EVICTION_BITS_OLD = {
    0x001: "clean",
    0x002: "clean_hard",
    0x008: "dirty",
    0x010: "dirty_hard",
    0x080: "updates",
    0x100: "updates_hard",
}
_EVICTION_BITS_70 = {
    0x001: "clean",
    0x002: "clean_hard",
    0x004: "dirty",
    0x008: "dirty_hard",
    0x040: "updates",
    0x080: "updates_hard",
}


def eviction_state_flags(state: int, version: Version | None) -> tuple[str, ...]:
    """Decode ``cache.eviction_state`` into the eviction modes it has set, per version.

    ``*_hard`` means the trigger was crossed and application threads are evicting.

    >>> eviction_state_flags(0x00c, (7, 0))
    ('dirty', 'dirty_hard')
    >>> eviction_state_flags(0x018, (4, 2))
    ('dirty', 'dirty_hard')
    """
    bits = _EVICTION_BITS_70 if version is not None and version >= V70 else _EVICTION_BITS_OLD
    names = [name for bit, name in sorted(bits.items()) if state & bit]
    if version is not None and version < V44:
        # The updates modes arrived with 4.4; before it those bits meant other things.
        names = [n for n in names if not n.startswith("updates")]
    return tuple(names)


def checkpoint_running(sample: Mapping[str, Number]) -> bool | None:
    """Whether a checkpoint is running, from whichever flag this version has (``None``: unknown)."""
    if "ckpt.running" in sample:
        return bool(sample["ckpt.running"])
    if "ckpt.progress_state" in sample:
        return sample["ckpt.progress_state"] != 0
    return None


def source_fields(source: Source) -> tuple[Field, ...]:
    """The serverStatus fields a source reads (one, or the two/several it combines)."""
    if isinstance(source, Field):
        return (source,)
    if isinstance(source, Difference):
        return (source.minuend, source.subtrahend)
    return source.parts


def version_range(source: Source) -> str:
    since = ".".join(map(str, source.since)) if source.since else ""
    before = getattr(source, "before", None)
    if isinstance(source, Difference):
        before = source.minuend.before
    elif isinstance(source, Total):
        before = source.parts[0].before
    if since and before:
        return f"{since} to before {'.'.join(map(str, before))}"
    if since:
        return f"{since}+"
    if before:
        return f"before {'.'.join(map(str, before))}"
    return "all"


def markdown_table() -> str:
    """The catalogue as a Markdown table (docs/metrics.md is this, kept in sync by a test)."""
    rows = ["| metric | kind | unit | versions | serverStatus path | meaning |", "|---|---|---|---|---|---|"]
    for metric in METRICS:
        for i, source in enumerate(metric.sources):
            first = i == 0
            rows.append(
                f"| {'`' + metric.name + '`' if first else ''} | {metric.kind.value if first else ''} "
                f"| {metric.unit.value if first else ''} | {version_range(source)} "
                f"| `{source.describe()}` | {metric.description if first else ''} |"
            )
    return "\n".join(rows) + "\n"
