"""Replaying real serverStatus documents over the wire, on the lab's command server."""

from __future__ import annotations

import copy
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from ckptdiag.lab.wire import HANGUP, CommandServer, filter_sections

Doc = dict[str, Any]


class ReplayServer:
    """hello, buildInfo, getCmdLineOpts, hostInfo, getParameter and a scripted serverStatus.

    ``status(n, base)`` builds the n-th serverStatus reply; it may return ``"hangup"`` to drop the
    connection (a lost server), or a document without ``wiredTiger``. ``fail`` maps a command name
    to an error reply.
    """

    def __init__(
        self,
        base: Doc,
        status: Callable[[int, Doc], Doc | str] | None = None,
        cmdline: Doc | None = None,
        host_info: Doc | None = None,
        hello_extra: Doc | None = None,
        fail: dict[str, Doc] | None = None,
        system_metrics: Callable[[int], Doc] | None = None,
        hello: Callable[[], Doc] | None = None,
        handlers: dict[str, Callable[[Doc], Doc | str]] | None = None,
        honour_filter: bool = True,
    ) -> None:
        self.base = base
        self.status = status or (lambda n, b: b)
        self.honour_filter = honour_filter  # False: every section, as a server that ignores the filter
        self.calls = 0
        self.requests: list[Doc] = []
        self.auth: list[Doc] = []  # saslStart requests: what credentials and authSource reached the server
        self.lock = threading.Lock()
        cmdline = cmdline or {"argv": ["mongod"], "parsed": {"storage": {"dbPath": "/data/db"}}}
        host_info = host_info or {"system": {"hostname": "replay", "memSizeMB": 16384, "numCores": 4}}
        commands: dict[str, Callable[[Doc], Doc | str]] = {
            "serverstatus": self._server_status,
            "buildinfo": lambda d: {"version": self.base.get("version", "7.0.0")},
            "getcmdlineopts": lambda d: dict(cmdline),
            "hostinfo": lambda d: dict(host_info),
            "getparameter": lambda d: {"syncdelay": 60.0, "wiredTigerEngineRuntimeConfig": ""},
            "getdiagnosticdata": self._diagnostic_data,
            # PLAIN is a single step: accepting it lets tests carry real credentials end to end
            "saslstart": self._sasl_start,
        }
        for name, reply in (fail or {}).items():
            commands[name] = lambda d, r=reply: dict(r)
        commands.update({k.lower(): v for k, v in (handlers or {}).items()})
        self.server = CommandServer(commands, hello_extra=hello_extra, hello=hello)
        self.system_metrics: Callable[[int], Doc] = system_metrics or (lambda n: {})

    def _diagnostic_data(self, doc: Doc) -> Doc | str:
        # the same scripted serverStatus, wrapped as getDiagnosticData wraps its last FTDC sample
        status = self._server_status({"serverStatus": 1})
        if status == HANGUP:
            return HANGUP
        assert isinstance(status, dict)
        return {
            "data": {
                "start": status.get("localTime"),
                "serverStatus": status,
                "systemMetrics": self.system_metrics(self.calls),
                "end": status.get("localTime"),
            }
        }

    def _sasl_start(self, doc: Doc) -> Doc:
        with self.lock:
            self.auth.append(doc)
        return {"conversationId": 1, "done": True, "payload": b""}

    def _server_status(self, doc: Doc) -> Doc | str:
        with self.lock:
            self.requests.append(doc)
            n = self.calls
            self.calls += 1
        reply = self.status(n, self.base)
        if reply == HANGUP or not self.honour_filter:
            return reply
        return filter_sections(reply, doc)  # type: ignore[arg-type]

    @property
    def uri(self) -> str:
        return self.server.uri

    def start(self) -> ReplayServer:
        self.server.start()
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
