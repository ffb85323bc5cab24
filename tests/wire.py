"""A loopback MongoDB wire endpoint (mockupdb) that replays real serverStatus documents."""

from __future__ import annotations

import copy
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from mockupdb import MockupDB, OpMsg, OpQuery

Doc = dict[str, Any]


class ReplayServer:
    """Serves hello/buildInfo/getCmdLineOpts/hostInfo/getParameter and a scripted serverStatus.

    ``status(n)`` builds the n-th serverStatus reply; it may return the string ``"hangup"``
    to drop the connection (a lost server), or a document without ``wiredTiger``.
    """

    def __init__(
        self,
        base: Doc,
        status: Callable[[int, Doc], Doc | str] | None = None,
        cmdline: Doc | None = None,
        host_info: Doc | None = None,
        wire_version: int = 21,
        hello_extra: Doc | None = None,
        fail: dict[str, Doc] | None = None,
    ) -> None:
        self.base = base
        self.status = status or (lambda n, base: base)
        self.calls = 0
        self.requests: list[Doc] = []
        self.lock = threading.Lock()
        self.cmdline = cmdline or {"argv": ["mongod"], "parsed": {"storage": {"dbPath": "/data/db"}}}
        self.host_info = host_info or {"system": {"hostname": "replay", "memSizeMB": 16384, "numCores": 4}}
        self.fail = fail or {}
        hello = {
            "ismaster": True,
            "isWritablePrimary": True,
            "maxWireVersion": wire_version,
            "minWireVersion": 0,
            **(hello_extra or {}),
        }
        self.server = MockupDB(auto_ismaster=hello)
        self.server.autoresponds(self._handle)

    def _command(self, request: Any) -> tuple[str, Doc]:
        doc = dict(request.doc)
        name = next(iter(doc))
        return name, doc

    def _handle(self, request: Any) -> bool:
        if not isinstance(request, (OpMsg, OpQuery)):
            return False
        name, doc = self._command(request)
        lname = name.lower()
        if lname in self.fail:
            request.reply(self.fail[lname])
            return True
        if lname == "serverstatus":
            with self.lock:
                self.requests.append(doc)
                n = self.calls
                self.calls += 1
            reply = self.status(n, self.base)
            if reply == "hangup":
                request.hangup()
                return True
            assert isinstance(reply, dict)
            # as mongod does: {section: 0} leaves an optional section out of the reply
            excluded = {k for k, v in doc.items() if k != "serverStatus" and v in (0, False)}
            request.reply({**{k: v for k, v in reply.items() if k not in excluded}, "ok": 1})
            return True
        if lname == "buildinfo":
            request.reply({"version": self.base.get("version", "7.0.0"), "ok": 1})
            return True
        if lname == "getcmdlineopts":
            request.reply({**self.cmdline, "ok": 1})
            return True
        if lname == "hostinfo":
            request.reply({**self.host_info, "ok": 1})
            return True
        if lname == "getparameter":
            request.reply({"syncdelay": 60.0, "wiredTigerEngineRuntimeConfig": "", "ok": 1})
            return True
        if lname == "saslstart":
            # PLAIN is a single step: accepting it lets tests carry real credentials end to end
            request.reply({"conversationId": 1, "done": True, "payload": b"", "ok": 1})
            return True
        if lname in ("ping", "endsessions"):
            request.reply({"ok": 1})
            return True
        return False

    @property
    def uri(self) -> str:
        return f"mongodb://127.0.0.1:{self.server.port}"

    def start(self) -> ReplayServer:
        self.server.run()
        return self

    def stop(self) -> None:
        self.server.stop()


@contextmanager
def replay(base: Doc, **kwargs: Any) -> Iterator[ReplayServer]:
    """Run a ReplayServer for the duration of a ``with`` block."""
    server = ReplayServer(base, **kwargs).start()
    try:
        yield server
    finally:
        server.stop()


def advancing(step: Callable[[Doc, int], None]) -> Callable[[int, Doc], Doc]:
    """A status script that deep-copies the base document and lets ``step`` move its counters."""

    def status(n: int, base: Doc) -> Doc:
        doc = copy.deepcopy(base)
        step(doc, n)
        return doc

    return status
