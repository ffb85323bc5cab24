"""Which mongods a URI leads to: every data-bearing member of a replica set, and through a mongos
every member of every shard (the mongos itself has no storage engine to watch).

Members come from ``replSetGetStatus`` (which lists hidden and delayed members too; it needs the
clusterMonitor role ckptdiag asks for anyway), else from ``isMaster``'s ``hosts`` and ``passives``,
as mongostat's ``--discover`` reads them. Arbiters hold no data and are left out. Like
:mod:`ckptdiag.sources.mongo`, a module that imports pymongo.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from pymongo import MongoClient
from pymongo.errors import ConfigurationError, ConnectionFailure, OperationFailure, ServerSelectionTimeoutError

from ckptdiag.errors import ConnectError, UsageError
from ckptdiag.sources.connection import ConnectOptions
from ckptdiag.sources.refusals import clean_message, operation_error, unreachable

# member states that hold no data to checkpoint, or are not members at all any more
_NOT_DATA = ("ARBITER", "REMOVED")


@dataclass(frozen=True, slots=True)
class MemberAddress:
    """One mongod to record, as its replica set's configuration names it."""

    host: str  # host:port
    set_name: str | None = None
    shard: str | None = None  # the shard it belongs to, found through a mongos
    state: str | None = None  # PRIMARY, SECONDARY, ... when discovered


@dataclass(frozen=True, slots=True)
class Topology:
    """What a URI leads to."""

    kind: str  # "replica set", "sharded cluster", or "server" (one standalone mongod)
    members: tuple[MemberAddress, ...]
    notes: tuple[str, ...] = ()
    resolved: tuple[tuple[str, str], ...] = ()  # a mongodb+srv:// name's TXT options, for each member

    def describe(self) -> str:
        """One line: what was found."""
        sets = sorted({m.set_name for m in self.members if m.set_name})
        where = f" ({', '.join(sets)})" if sets else ""
        return f"{self.kind}{where}: {len(self.members)} member{'s' if len(self.members) != 1 else ''}"


def _host_port(host: str, port: int) -> str:
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


def _seeds(options: ConnectOptions) -> tuple[list[str], tuple[tuple[str, str], ...]]:
    """The URI's hosts (a mongodb+srv:// name resolved through DNS) and the options its TXT
    record gave (authSource, replicaSet: what each member's own URI needs)."""
    from pymongo.uri_parser import parse_uri

    uri = options.client_uri()
    try:
        parsed = parse_uri(uri)
    except (ConfigurationError, ValueError) as exc:
        raise UsageError(
            f"invalid MongoDB URI {options.display()}: {clean_message(exc)}",
            "see mongodb://[user@]host[:port]/?options",
        ) from None
    seeds = [_host_port(h, p) for h, p in parsed["nodelist"]]
    found = {str(k).lower(): v for k, v in parsed["options"].items()}
    resolved: tuple[tuple[str, str], ...] = ()
    if uri.startswith("mongodb+srv://") and found.get("authsource"):
        resolved = (("authSource", str(found["authsource"])),)
    return seeds, resolved


def _client(options: ConnectOptions, host: str, resolved: tuple[tuple[str, str], ...]) -> MongoClient[dict[str, Any]]:
    one = options.for_member(host, resolved)
    return MongoClient(one.client_uri(), **one.client_kwargs())


Answer = tuple[dict[str, Any], list[dict[str, Any]] | None, dict[str, Any] | None]


def _ask(options: ConnectOptions, hosts: Iterable[str], resolved: tuple[tuple[str, str], ...]) -> tuple[str, Answer]:
    """:func:`_hello_and_members` from the first of ``hosts`` that answers, and which host that
    was (the last failure if none does; a refusal at once: every host would refuse the same
    credentials)."""
    failure: ConnectError | None = None
    for host in hosts:
        client = _client(options, host, resolved)
        target = options.for_member(host, resolved)
        try:
            return host, _hello_and_members(client.admin)
        except OperationFailure as exc:
            raise operation_error(exc, target.display()) from None
        except ServerSelectionTimeoutError as exc:
            failure = unreachable(exc, target)
        except ConnectionFailure as exc:
            failure = ConnectError(
                f"cannot reach {target.display()}: {clean_message(exc)}",
                "check that mongod is running and reachable",
                retryable=True,
            )
        finally:
            client.close()
    assert failure is not None
    raise failure


def _hello_and_members(admin: Any) -> Answer:
    """isMaster, replSetGetStatus's members (None when not allowed or not a set) and, from a
    mongos, listShards."""
    hello = dict(admin.command("isMaster"))
    if hello.get("msg") == "isdbgrid":
        return hello, None, dict(admin.command("listShards"))
    if not hello.get("setName"):
        return hello, None, None
    try:
        status = admin.command("replSetGetStatus")
    except OperationFailure:
        return hello, None, None
    return hello, [dict(m) for m in status.get("members") or () if isinstance(m, Mapping)], None


def discover(options: ConnectOptions, known: tuple[str, ...] = ()) -> Topology:
    """The mongods ``options`` lead to: a replica set's data-bearing members, a sharded
    cluster's shard members (through a mongos), or the one server. ``known`` members are asked
    after the URI's own hosts (the seed given may be the member that went down)."""
    seeds, resolved = _seeds(options)
    seeds += [host for host in known if host not in seeds]
    answered, (hello, members, shards) = _ask(options, seeds, resolved)
    if shards is not None:
        return _sharded(options, shards, resolved)
    if not hello.get("setName"):
        return Topology("server", (MemberAddress(answered),), resolved=resolved)
    found, notes = _set_members(hello, members)
    return Topology("replica set", found, notes, resolved)


def _set_members(
    hello: Mapping[str, Any], members: list[dict[str, Any]] | None, shard: str | None = None
) -> tuple[tuple[MemberAddress, ...], tuple[str, ...]]:
    """A set's data-bearing members, from replSetGetStatus where it answered, else from isMaster."""
    name = str(hello.get("setName"))
    if members is not None:
        return tuple(
            MemberAddress(str(m["name"]), name, shard, str(m.get("stateStr") or "") or None)
            for m in members
            if isinstance(m.get("name"), str) and m.get("stateStr") not in _NOT_DATA
        ), ()
    listed = [h for key in ("hosts", "passives") for h in hello.get(key) or () if isinstance(h, str)]
    note = (
        f"{name}: members from isMaster (replSetGetStatus was refused): hidden and delayed members are not "
        "listed there and are not recorded; the clusterMonitor role lists them"
    )
    return tuple(MemberAddress(h, name, shard) for h in listed), (note,)


def _sharded(options: ConnectOptions, shards: Mapping[str, Any], resolved: tuple[tuple[str, str], ...]) -> Topology:
    """Every shard's members, each shard asked through its own seed list ("rs0/h1:p,h2:p")."""
    found: list[MemberAddress] = []
    notes = ["through a mongos: its shards' members are recorded; the config servers are not (give their URI)"]
    for shard in shards.get("shards") or ():
        if not isinstance(shard, Mapping) or not isinstance(shard.get("host"), str):
            continue
        name = str(shard.get("_id") or shard["host"])
        set_name, _, listed = shard["host"].rpartition("/")
        hosts = [h for h in listed.split(",") if h]
        if not set_name:  # a shard that is one standalone mongod (no longer allowed, still met)
            found += [MemberAddress(h, None, name) for h in hosts]
            continue
        try:
            _, (hello, members, _) = _ask(options, hosts, resolved)
        except ConnectError as exc:
            notes.append(f"shard {name}: {exc.message}; its listed hosts are recorded as they answer")
            found += [MemberAddress(h, set_name, name) for h in hosts]
            continue
        members_found, more = _set_members(hello, members, name)
        found += members_found
        notes += more
    if not found:
        raise ConnectError("the mongos lists no shard", "check listShards on the mongos (sh.status())")
    return Topology("sharded cluster", tuple(found), tuple(notes), resolved)
