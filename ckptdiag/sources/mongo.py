"""A live mongod over the wire protocol: identity once, then serverStatus (or getDiagnosticData).

With :mod:`.discovery` (which mongods a URI leads to) and :mod:`.refusals` (failures as errors),
the only modules that import pymongo. Every failure a DBA can meet (unreachable, auth, missing
privileges, mongos, MMAPv1, a server older than the driver) becomes a :class:`ConnectError` with
a hint; a connection lost while sampling becomes :class:`SourceLost` (a gap and a reconnect),
a reply that cannot be read :class:`BadReply` (a gap).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any

import bson
from bson.codec_options import CodecOptions
from bson.raw_bson import RawBSONDocument
from bson.son import SON
from pymongo import MongoClient
from pymongo.errors import (
    AutoReconnect,
    ConfigurationError,
    ConnectionFailure,
    InvalidURI,
    OperationFailure,
    PyMongoError,
    ServerSelectionTimeoutError,
)

from ckptdiag.errors import ConnectError, UsageError
from ckptdiag.guard.redact import redact_doc, scrub, unescaped_credentials
from ckptdiag.model import catalogue
from ckptdiag.sources.connection import ConnectOptions
from ckptdiag.sources.refusals import (
    AUTH_FAILED,
    UNAUTHORIZED,
    clean_message,
    driver_too_new,
    mongos_error,
    operation_error,
    unreachable,
)

_bsonpick: ModuleType | None
try:
    from ckptdiag import _bsonpick
except ImportError:  # built without a C compiler: replies are read as lazy documents
    _bsonpick = None

# serverStatus sections ckptdiag never reads: excluded so each 1 Hz request stays cheap (FTDC's own
# collector excludes some the same way). Unknown names are ignored by the server, so one list fits
# every version. The catalogue decides what is *needed*; this list only trims the rest.
_EXCLUDED_SECTIONS = (
    "asserts",
    "batchedDeletes",
    "bucketCatalog",
    "catalogStats",
    "changeStreamPreImages",
    "collectionCatalog",
    "defaultRWConcern",
    "electionMetrics",
    "encryptionAtRest",
    "extra_info",
    "featureCompatibilityVersion",
    "flowControl",
    "freeMonitoring",
    "health",
    "indexBuilds",
    "indexBulkBuilder",
    "indexStats",
    "internalTransactions",
    "locks",
    "logicalSessionRecordCache",
    "mem",
    "metrics",
    "mirroredReads",
    "network",
    "opReadConcernCounters",
    "opWriteConcernCounters",
    "opcountersRepl",
    "oplogTruncation",
    "planCache",
    "profiler",
    "queryAnalyzers",
    "querySettings",
    "readConcernCounters",
    "readPreferenceCounters",
    "repl",
    "scramCache",
    "security",
    "sharding",
    "shardingStatistics",
    "shardSplits",
    "spillWiredTiger",
    "storageEngine",
    "tcmalloc",
    "tenantMigrations",
    "trafficRecording",
    "transactions",
    "transportSecurity",
    "twoPhaseCommitCoordinator",
    "watchdog",
    "writeBacksQueued",
    "service",
    "admission",
)


@dataclass(frozen=True, slots=True)
class ServerInfo:
    """Who the server is and how it is configured, read once per connection."""

    version: str
    host: str
    process: str
    pid: int | None
    storage_engine: str | None
    dbpath: str
    dbpath_inferred: bool
    cmdline: dict[str, Any]
    build: dict[str, Any]
    host_info: dict[str, Any]
    parameters: dict[str, Any] = field(default_factory=dict)
    address: str = ""
    is_local: bool = False

    def to_json(self) -> dict[str, Any]:
        """The header form of this identity (already redacted)."""
        return {
            "version": self.version,
            "host": self.host,
            "process": self.process,
            "pid": self.pid,
            "storage_engine": self.storage_engine,
            "dbpath": self.dbpath,
            "dbpath_inferred": self.dbpath_inferred,
            "address": self.address,
            "is_local": self.is_local,
            "cmdline": self.cmdline,
            "build": self.build,
            "host_info": self.host_info,
            "parameters": self.parameters,
        }


class SourceLost(Exception):
    """The connection dropped or timed out while sampling; the sampler records a gap."""


class BadReply(Exception):
    """A reply that could not be read (malformed BSON, a value of the wrong kind): a gap, still connected."""


_UNREADABLE = (bson.errors.BSONError, ValueError, TypeError, KeyError, IndexError, OverflowError, RecursionError)


def serverstatus_command(histograms: bool = True) -> SON[str, Any]:
    """The serverStatus request: every section the catalogue needs, the rest excluded."""
    cmd: SON[str, Any] = SON([("serverStatus", 1)])
    needed = catalogue.sections()
    for name in _EXCLUDED_SECTIONS:
        if name not in needed:
            cmd[name] = 0
    if histograms:
        cmd["opLatencies"] = {"histograms": True}
    return cmd


def _is_local_address(host: str) -> bool:
    return (
        host.split(":")[0].strip("[]") in {"localhost", "127.0.0.1", "::1"}
        or host.startswith(("127.", "/"))
        or host.endswith(".sock")
    )


def _subset(doc: Mapping[str, Any], keys: tuple[str, ...]) -> dict[str, Any]:
    return {k: doc[k] for k in keys if k in doc}


# Key under which a sample carries the disk counters that came with it (getDiagnosticData's
# systemMetrics.disks: the server host's own disks); the sampler takes it out of the document.
DISKS_KEY = "_ckptdiag_disks"
# Key under which a replica-set member's sample carries its replication lag (ms, from
# replSetGetStatus: catalogue.replset_lag_ms); the sampler takes it out as well.
LAG_KEY = "_ckptdiag_lag_ms"


def diagnostic_sample(data: Mapping[str, Any]) -> dict[str, Any]:
    """A getDiagnosticData ``data`` document -> serverStatus, with its disks under DISKS_KEY.

    Sharded 8.0+ servers split the document into ``shard``/``router``/``common`` blocks.
    """
    from ckptdiag.model.disk import DiskCounters

    blocks = [data, *(data[k] for k in ("common", "shard") if isinstance(data.get(k), Mapping))]
    status: dict[str, Any] = {}
    disks: dict[str, tuple[DiskCounters, int]] = {}
    for block in blocks:
        if isinstance(block.get("serverStatus"), Mapping) and not status:
            status = dict(block["serverStatus"])
        for name, fields in ((block.get("systemMetrics") or {}).get("disks") or {}).items():
            if isinstance(fields, Mapping):
                disks[name] = DiskCounters.from_ftdc(fields)
    status[DISKS_KEY] = disks
    if isinstance(data.get("replSetGetStatus"), Mapping):
        status[LAG_KEY] = catalogue.replset_lag_ms(data["replSetGetStatus"])
    return status


class MongoSource:
    """One mongod, sampled by serverStatus, or by getDiagnosticData (``kind="diagnostic"``)."""

    def __init__(self, options: ConnectOptions, kind: str = "serverStatus") -> None:
        self.options = options
        self.kind = kind
        self._client: MongoClient[dict[str, Any]] | None = None
        self._command = serverstatus_command()
        # a replica-set member's lag is asked for each tick too (FTDC collects replSetGetStatus
        # each second as well), until the server refuses it
        self._lag = False

    # -- connection ------------------------------------------------------------------------
    def _new_client(self) -> MongoClient[dict[str, Any]]:
        try:
            kwargs = self.options.client_kwargs()
            uri = self.options.client_uri()
            from pymongo.uri_parser import parse_uri

            if not uri.startswith("mongodb+srv://"):
                parsed = parse_uri(uri)
                if len(parsed["nodelist"]) > 1:
                    raise UsageError(
                        "the URI names several hosts; checkpoints are per mongod",
                        "give one member, e.g. --uri mongodb://db1:27017, and run one ckptdiag per node",
                    )
                if "replicaset" not in {str(k).lower() for k in parsed["options"]}:
                    kwargs["directConnection"] = True  # watch this node, even a secondary
            return MongoClient(uri, **kwargs)
        except (InvalidURI, ConfigurationError, ValueError) as exc:
            if unescaped_credentials(self.options.client_uri()):  # the driver's message may quote them
                raise UsageError(
                    f"invalid MongoDB URI {self.options.display()}: its user name or password holds a "
                    "character URIs reserve (/ ? # @ :)",
                    "escape it (%2F %3F %23 %40 %3A), or leave it out of the URI and give it with -p",
                ) from None
            raise UsageError(
                f"invalid MongoDB URI {self.options.display()}: {self._scrubbed(exc)}",
                "see mongodb://[user@]host[:port]/?options",
            ) from None

    def _scrubbed(self, exc: BaseException) -> str:
        """The driver's message, one line, without any password it may quote."""
        return scrub(clean_message(exc), self.options.client_uri(), self.options.password)

    def connect(self) -> ServerInfo:
        """Open the connection, check the server is a WiredTiger mongod, and read its identity."""
        self.close()
        self._client = self._new_client()
        try:
            replies = self._identity()
        except OperationFailure as exc:
            raise operation_error(exc, self.options.display()) from None
        except ServerSelectionTimeoutError as exc:
            raise unreachable(exc, self.options) from None
        except ConfigurationError as exc:
            raise driver_too_new(exc, self.options.display()) from None
        except ConnectionFailure as exc:
            raise ConnectError(
                f"cannot reach {self.options.display()}: {self._scrubbed(exc)}",
                "check that mongod is running and reachable",
                retryable=True,
            ) from None
        address = ",".join(f"{h}:{p}" for h, p in self._client.topology_description.server_descriptions())
        self._lag = self.kind == "serverStatus" and catalogue.replica_state(replies.status) is not None
        return _server_info(replies, address, self.options.display())

    def _identity(self) -> _Identity:
        """The replies that say who the server is (raises what pymongo raises)."""
        assert self._client is not None
        admin = self._client.admin
        if admin.command("ismaster").get("msg") == "isdbgrid":
            raise mongos_error(self.options.display())
        status = dict(admin.command("serverStatus"))
        build = dict(admin.command("buildInfo"))
        cmdline = dict(admin.command("getCmdLineOpts"))
        host_info = self._optional("hostInfo")
        if self.kind == "diagnostic":
            admin.command("getDiagnosticData")  # fail now, with the privilege hint, not later
        parameters = self._optional(SON([("getParameter", 1), *((name, 1) for name in PARAMETERS)]))
        return _Identity(status, build, cmdline, host_info, parameters)

    def _optional(self, command: Any) -> dict[str, Any]:
        assert self._client is not None
        try:
            return dict(self._client.admin.command(command))
        except OperationFailure:
            return {}

    def close(self) -> None:
        """Close the connection if open."""
        if self._client is not None:
            self._client.close()
            self._client = None

    # -- sampling --------------------------------------------------------------------------
    def sample(self) -> dict[str, Any]:
        """One serverStatus reply; raises :class:`SourceLost` on a lost link."""
        if self._client is None:
            raise SourceLost("not connected")
        try:
            if self.kind == "diagnostic":
                reply = self._client.admin.command("getDiagnosticData")
                return diagnostic_sample(reply.get("data") or {})
            try:
                doc = read_reply(self._client.admin.command(self._command, codec_options=_LAZY))
            except OperationFailure as exc:
                if exc.code == UNAUTHORIZED:
                    raise
                # An old server that rejects the histogram option: ask plainly from now on.
                self._command = serverstatus_command(histograms=False)
                doc = read_reply(self._client.admin.command(self._command, codec_options=_LAZY))
            if self._lag:
                doc[LAG_KEY] = self._lag_ms()
            return doc
        except _UNREADABLE as exc:
            raise BadReply(f"unreadable reply: {type(exc).__name__}: {str(exc)[:200]}") from None
        except OperationFailure as exc:
            if exc.code in (UNAUTHORIZED, AUTH_FAILED):
                raise operation_error(exc, self.options.display()) from None
            raise SourceLost(clean_message(exc)) from None
        except (AutoReconnect, ConnectionFailure) as exc:
            raise SourceLost(clean_message(exc)) from None
        except PyMongoError as exc:
            raise SourceLost(clean_message(exc)) from None

    def _lag_ms(self) -> int | None:
        """This member's replication lag (ms), or None once the server refuses replSetGetStatus."""
        assert self._client is not None
        try:
            return catalogue.replset_lag_ms(self._client.admin.command("replSetGetStatus"))
        except OperationFailure:
            self._lag = False
            return None


# serverStatus replies stay raw BSON until read: the catalogue touches a few sections, and a
# server that ignores the section filter (or a section grown large) then costs its bytes only
# (benchmarks/bench_sample_cost.py --unfiltered)
_LAZY: CodecOptions[Mapping[str, Any]] = CodecOptions(document_class=RawBSONDocument)


def _tree(paths: Iterable[tuple[str, ...]]) -> _Tree:
    """Paths as the compiled reader's tree: (key, sub-tree or None: the whole value) pairs."""
    nested: dict[str, Any] = {}
    for path in sorted(paths, key=len):
        node = nested
        for key in path[:-1]:
            node = node.setdefault(key, {})
            if node is None:
                break
        else:
            node[path[-1]] = None

    def pairs(node: dict[str, Any]) -> _Tree:
        return tuple((key.encode(), None if sub is None else pairs(sub)) for key, sub in node.items())

    return pairs(nested)


_Tree = tuple[tuple[bytes, Any], ...]
_READ: _Tree = _tree(catalogue.reply_paths())
_PLAIN: CodecOptions[dict[str, Any]] = CodecOptions()  # as the client decodes: naive UTC datetimes


def _whole(doc: bytes) -> Any:
    return bson.decode(doc, codec_options=_PLAIN)["v"]


def read_reply(reply: Mapping[str, Any]) -> dict[str, Any]:
    """The parts of a raw serverStatus reply that a sample reads (:func:`catalogue.reply_paths`),
    as plain values: by the compiled reader where it was built, else from the lazy document (the
    same values; more CPU a sample)."""
    if _bsonpick is not None and isinstance(reply, RawBSONDocument):
        try:
            picked: dict[str, Any] = _bsonpick.pick(reply.raw, _READ, _whole)
            return picked
        except ValueError as exc:
            raise BadReply(f"unreadable serverStatus reply: {exc}") from None
    return dict(reply)


PARAMETERS = ("syncdelay", "journalCommitInterval", "wiredTigerEngineRuntimeConfig")  # model/engine_config.py reads


@dataclass(frozen=True)
class _Identity:
    """serverStatus, buildInfo, getCmdLineOpts, hostInfo, getParameter (last two: {} if refused)."""

    status: dict[str, Any]
    build: dict[str, Any]
    cmdline: dict[str, Any]
    host_info: dict[str, Any]
    parameters: dict[str, Any]


def _server_info(replies: _Identity, address: str, target: str) -> ServerInfo:
    """The identity in the replies; a mongos or a server without WiredTiger is refused with a hint."""
    status, build, cmdline = replies.status, replies.build, replies.cmdline
    engine = (status.get("storageEngine") or {}).get("name")
    if str(status.get("process", "")).startswith("mongos"):
        raise mongos_error(target)
    if engine and engine != "wiredTiger":
        raise ConnectError(
            f"{target} runs the {engine} storage engine, not WiredTiger",
            "ckptdiag analyses WiredTiger checkpoints; MMAPv1 and in-memory servers have none",
        )
    parsed = cmdline.get("parsed", {})
    storage = parsed.get("storage", {}) if isinstance(parsed, dict) else {}
    dbpath = storage.get("dbPath")
    return ServerInfo(
        version=str(build.get("version") or status.get("version", "")),
        host=str(status.get("host", "")),
        process=str(status.get("process", "mongod")),
        pid=int(status["pid"]) if isinstance(status.get("pid"), int) else None,
        storage_engine=engine,
        dbpath=str(dbpath or "/data/db"),
        dbpath_inferred=dbpath is None,
        cmdline=redact_doc({k: v for k, v in cmdline.items() if k != "ok"}),
        build=_subset(build, ("version", "gitVersion", "allocator", "bits", "modules", "storageEngines", "openssl")),
        host_info=redact_doc(_host_subset(replies.host_info)),
        parameters=redact_doc({k: v for k, v in replies.parameters.items() if k != "ok"}),
        address=address,
        is_local=_is_local_address(address),
    )


def _host_subset(host_info: Mapping[str, Any]) -> dict[str, Any]:
    system, os_ = host_info.get("system", {}) or {}, host_info.get("os", {}) or {}
    return {
        "hostname": system.get("hostname"),
        "mem_size_mb": system.get("memSizeMB"),
        "mem_limit_mb": system.get("memLimitMB"),
        "num_cores": system.get("numCores"),
        "num_physical_cores": system.get("numPhysicalCores"),
        "cpu_arch": system.get("cpuArch"),
        "os": _subset(os_, ("type", "name", "version")),
    }
