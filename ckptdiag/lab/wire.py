"""A loopback MongoDB wire endpoint that answers commands from plain Python handlers.

Built on mockupdb (the wire protocol: OP_MSG and legacy OP_QUERY, hello/isMaster), so pymongo and
``ckptdiag record`` talk to it exactly as to mongod. The lab serves its engine through it; the
tests replay real serverStatus documents through it.
"""

from __future__ import annotations

import datetime as dt
import socket
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from typing import Any

Handler = Callable[[dict[str, Any]], "dict[str, Any] | str"]
HANGUP = "hangup"  # a handler's way to drop the connection, as a crashing server would


LOW_DESCRIPTORS = 8


@contextmanager
def low_descriptors() -> Iterator[None]:
    """Hold a few low file descriptors while the block runs, and give them back at its end, for
    the server started right after it: mockupdb watches its listening socket with select(), which
    cannot watch a descriptor over 1023, and an engine with thousands of collections opens a file
    for each of them first."""
    held = [socket.socket() for _ in range(LOW_DESCRIPTORS)]
    try:
        yield
    finally:
        for s in held:
            s.close()


def filter_sections(status: Mapping[str, Any], request: Mapping[str, Any]) -> dict[str, Any]:
    """serverStatus as mongod filters it: ``{section: 0}`` leaves an optional section out."""
    excluded = {k for k, v in request.items() if k != "serverStatus" and v in (0, False)}
    return {k: v for k, v in status.items() if k not in excluded}


def wants_histograms(request: Mapping[str, Any]) -> bool:
    """Whether a serverStatus request asked for opLatencies histograms."""
    option = request.get("opLatencies")
    return isinstance(option, Mapping) and bool(option.get("histograms"))


def diskstats_to_system_metrics(disks: Mapping[str, tuple[Any, int]]) -> dict[str, Any]:
    """/proc/diskstats counters in FTDC's ``systemMetrics.disks.<dev>`` shape (procparser names)."""
    return {name: counters.to_ftdc() for name, (counters, _n) in disks.items()}


class CommandServer:
    """Serves ``handlers`` (lower-case command name -> handler) on 127.0.0.1."""

    def __init__(
        self,
        handlers: Mapping[str, Handler],
        *,
        port: int = 0,
        wire_version: int = 21,
        hello_extra: Mapping[str, Any] | None = None,
        hello: Callable[[], Mapping[str, Any]] | None = None,
    ) -> None:
        """``hello_extra`` amends the fixed handshake reply; ``hello`` (called on every handshake
        and heartbeat) makes it change over time, as a replica-set member's does in a failover."""
        from mockupdb import MockupDB

        self.handlers = {k.lower(): v for k, v in handlers.items()}
        self._hello = hello
        hello_reply = {
            "ismaster": True,
            "isWritablePrimary": True,
            "maxWireVersion": wire_version,
            "minWireVersion": 0,
            "maxBsonObjectSize": 16 * 2**20,
            "maxMessageSizeBytes": 48 * 2**20,
            "localTime": dt.datetime.now(dt.timezone.utc),
            **(hello_extra or {}),
        }
        self._hello_reply = hello_reply
        self._server = MockupDB(port=port or None, auto_ismaster=hello_reply)
        self._server.autoresponds(self._handle)

    def _handle(self, request: Any) -> bool:
        from mockupdb import OpMsg, OpQuery

        if not isinstance(request, (OpMsg, OpQuery)) or not request.doc:
            return False
        doc = dict(request.doc)
        name = next(iter(doc)).lower()
        if name in ("ismaster", "hello"):
            if self._hello is None:
                return False  # mockupdb's own auto_ismaster answers the handshake
            request.reply({**self._hello_reply, "localTime": dt.datetime.now(dt.timezone.utc), **self._hello()})
            return True
        handler = self.handlers.get(name)
        if handler is None:
            if name in ("ping", "endsessions"):
                request.reply({"ok": 1})
                return True
            request.reply(
                {"ok": 0, "code": 59, "codeName": "CommandNotFound", "errmsg": f"no such command: '{next(iter(doc))}'"}
            )
            return True
        reply = handler(doc)
        if reply == HANGUP:
            request.hangup()
        else:
            assert isinstance(reply, dict)
            request.reply({"ok": 1, **reply})
        return True

    @property
    def port(self) -> int:
        """The TCP port it listens on."""
        return int(self._server.port)

    @property
    def uri(self) -> str:
        """A URI pymongo (and ckptdiag record) can use."""
        return f"mongodb://127.0.0.1:{self.port}"

    def start(self) -> CommandServer:
        """Listen (returns at once; requests are served from mockupdb's threads)."""
        self._server.run()
        return self

    def stop(self) -> None:
        """Stop listening and close every connection."""
        self._server.stop()
