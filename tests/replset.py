"""A replica set (and a sharded cluster) of loopback wire servers replaying a real member's documents.

The documents are a real 3-member set's (``exporter__testdata__get_diagnostic_data.json``: a
4.2.8 primary's serverStatus with its ``repl`` section, and the set's replSetGetStatus); each
member gets them with its own address, its role, and counters that advance with every sample.
The set's state (which member is primary, which are in the configuration, which are down) can be
changed while ckptdiag records it: a failover, members joining and leaving, a member lost.
"""

from __future__ import annotations

import copy
import datetime as dt
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from conftest import shared_path
from wire import ReplayServer

from ckptdiag.lab.wire import HANGUP, CommandServer

Doc = dict[str, Any]


def real_member_documents() -> tuple[Doc, Doc]:
    """(serverStatus of a real primary, replSetGetStatus of its set)."""
    from bson import json_util

    doc = json_util.loads(shared_path("server-status", "exporter__testdata__get_diagnostic_data.json").read_text())
    data = doc.get("data") or doc
    return dict(data["serverStatus"]), dict(data["replSetGetStatus"])


@dataclass
class SetState:
    """What the set looks like now; the test changes it while recording."""

    name: str
    primary: int = 0
    config: list[int] = field(default_factory=list)  # member indices in the configuration
    version: int = 1
    down: set[int] = field(default_factory=set)  # members that drop every connection
    behind: dict[int, float] = field(default_factory=dict)  # seconds a member's optime is behind the primary's
    lock: threading.Lock = field(default_factory=threading.Lock)


class ReplicaSetReplay:
    """``n`` members (``spare`` more, started but not in the configuration, to join later)."""

    def __init__(
        self, n: int = 3, spare: int = 0, name: str = "rs1", step: Callable[[Doc, int, int], None] | None = None
    ) -> None:
        self.status, self.rs_status = real_member_documents()
        self.state = SetState(name, config=list(range(n)))
        self.step = step
        self.members = [self._member(i) for i in range(n + spare)]
        self.addresses: list[str] = []

    def _member(self, i: int) -> ReplayServer:
        return ReplayServer(
            self.status,
            status=lambda calls, base, i=i: self._server_status(i, calls),
            hello=lambda i=i: self._hello(i),
            handlers={"replSetGetStatus": lambda doc, i=i: self._rs_status(i)},
            cmdline={
                "argv": ["mongod", "--replSet", self.state.name],
                "parsed": {"replication": {"replSetName": self.state.name}},
            },
            host_info={"system": {"hostname": f"member{i}", "memSizeMB": 16384, "numCores": 4}},
        )

    def start(self) -> ReplicaSetReplay:
        for m in self.members:
            m.start()
        self.addresses = [f"127.0.0.1:{m.server.port}" for m in self.members]
        return self

    def stop(self) -> None:
        for m in self.members:
            m.stop()

    @property
    def seed_uri(self) -> str:
        """A replica-set URI naming the first member only (the others are discovered)."""
        return f"mongodb://{self.addresses[0]}/?replicaSet={self.state.name}"

    # -- what each member answers ------------------------------------------------------------
    def role(self, i: int) -> str:
        if i not in self.state.config:
            return "removed"
        return "primary" if i == self.state.primary else "secondary"

    def _hello(self, i: int) -> Doc:
        with self.state.lock:
            role = self.role(i)
            return {
                "setName": self.state.name,
                "setVersion": self.state.version,
                "hosts": [self.addresses[j] for j in self.state.config],
                "primary": self.addresses[self.state.primary],
                "me": self.addresses[i],
                "ismaster": role == "primary",
                "isWritablePrimary": role == "primary",
                "secondary": role == "secondary",
            }

    def _server_status(self, i: int, calls: int) -> Doc | str:
        with self.state.lock:
            if i in self.state.down:
                return HANGUP
            doc = copy.deepcopy(self.status)
            role = self.role(i)
            doc["host"] = self.addresses[i]
            doc["pid"] = 1000 + i
            doc["repl"].update(
                hosts=[self.addresses[j] for j in self.state.config],
                primary=self.addresses[self.state.primary],
                me=self.addresses[i],
                ismaster=role == "primary",
                secondary=role == "secondary",
                setVersion=self.state.version,
            )
        doc["uptimeMillis"] = int(self.status["uptimeMillis"]) + 1000 * calls
        doc["opcounters"]["insert"] = int(self.status["opcounters"]["insert"]) + 500 * calls
        if self.step is not None:
            self.step(doc, i, calls)
        return doc

    def _rs_status(self, i: int) -> Doc:
        with self.state.lock:
            members = []
            for j in self.state.config:
                member = copy.deepcopy(self.rs_status["members"][j % len(self.rs_status["members"])])
                optime = dt.datetime.fromisoformat(member["optimeDate"]) - dt.timedelta(
                    seconds=self.state.behind.get(j, 0.0)
                )
                member.update(
                    name=self.addresses[j],
                    stateStr=self.role(j).upper(),
                    state=1 if self.role(j) == "primary" else 2,
                    _id=j,
                    optimeDate=optime,
                    self=j == i,
                )
                members.append(member)
            return {"set": self.state.name, "members": members, "myState": 1 if self.role(i) == "primary" else 2}

    # -- changes a test makes while recording -------------------------------------------------
    def fail_over(self, to: int) -> None:
        with self.state.lock:
            self.state.primary = to

    def reconfigure(self, members: list[int]) -> None:
        with self.state.lock:
            self.state.config = list(members)
            self.state.version += 1


@contextmanager
def replica_set(n: int = 3, **kwargs: Any) -> Iterator[ReplicaSetReplay]:
    """A started replica set for the duration of a ``with`` block."""
    rs = ReplicaSetReplay(n, **kwargs).start()
    try:
        yield rs
    finally:
        rs.stop()


@contextmanager
def sharded(shards: int = 2, members: int = 2) -> Iterator[tuple[CommandServer, list[ReplicaSetReplay]]]:
    """A mongos (isdbgrid, listShards) in front of ``shards`` replica sets."""
    sets = [ReplicaSetReplay(members, name=f"shard{k}rs").start() for k in range(shards)]
    mongos = CommandServer(
        {
            "listShards": lambda doc: {
                "shards": [
                    {"_id": f"shard{k}", "host": f"{rs.state.name}/{','.join(rs.addresses)}", "state": 1}
                    for k, rs in enumerate(sets)
                ]
            },
            "serverStatus": lambda doc: {"process": "mongos", "host": "router:27017"},
        },
        hello_extra={"msg": "isdbgrid"},
    ).start()
    try:
        yield mongos, sets
    finally:
        mongos.stop()
        for rs in sets:
            rs.stop()
