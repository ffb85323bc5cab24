"""Test doubles: a clock that only moves when told, and a scripted server."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ckptdiag.errors import ConnectError
from ckptdiag.sources.mongo import ServerInfo, SourceLost


class FakeClock:
    """Monotonic time that advances only through sleep() and advance(); wall = epoch + monotonic."""

    def __init__(self, start: float = 1000.0, epoch: float = 1_795_000_000.0) -> None:
        self.now = start
        self.epoch = epoch - start
        self.sleeps: list[float] = []

    def monotonic(self) -> float:
        return self.now

    def wall(self) -> float:
        return self.epoch + self.now

    def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.now += max(seconds, 0.0)

    def advance(self, seconds: float) -> None:
        self.now += seconds


def server_info(pid: int = 42, version: str = "7.0.21") -> ServerInfo:
    return ServerInfo(
        version=version,
        host="fake:27017",
        process="mongod",
        pid=pid,
        storage_engine="wiredTiger",
        dbpath="/data/db",
        dbpath_inferred=False,
        cmdline={},
        build={"version": version},
        host_info={},
        address="127.0.0.1:27017",
        is_local=True,
    )


class ScriptedSource:
    """sample() plays ``script(n)``: a doc, or ("lost", reason), taking ``rtt(n)`` seconds."""

    kind = "serverStatus"

    def __init__(
        self,
        clock: FakeClock,
        script: Callable[[int], Any],
        rtt: Callable[[int], float] = lambda n: 0.002,
        connect_script: Callable[[int], ServerInfo | str] = lambda n: server_info(),
    ) -> None:
        self.clock = clock
        self.script = script
        self.rtt = rtt
        self.connect_script = connect_script
        self.n = 0
        self.connects = 0
        self.sample_times: list[float] = []

    def connect(self) -> ServerInfo:
        result = self.connect_script(self.connects)
        self.connects += 1
        self.clock.advance(0.01)
        if isinstance(result, str):
            raise ConnectError(result, retryable=True)
        return result

    def sample(self) -> dict[str, Any]:
        n = self.n
        self.n += 1
        self.sample_times.append(self.clock.monotonic())
        self.clock.advance(self.rtt(n))
        out = self.script(n)
        if isinstance(out, tuple) and out[0] == "lost":
            raise SourceLost(out[1])
        return dict(out)

    def close(self) -> None:
        pass


def status_doc(n: int, *, uptime0: int = 100_000, pid: int = 42, wt: bool = True) -> dict[str, Any]:
    """A small serverStatus-shaped document whose counters move with n."""
    doc: dict[str, Any] = {
        "pid": pid,
        "uptimeMillis": uptime0 + 1000 * n,
        "opcounters": {"insert": 100 * n, "query": 10 * n, "update": 0, "delete": 0, "getmore": 0, "command": n},
    }
    if wt:
        doc["wiredTiger"] = {
            "cache": {
                "maximum bytes configured": 1 << 30,
                "tracked dirty bytes in the cache": 1 << 20,
                "bytes currently in the cache": 1 << 28,
            },
            "transaction": {
                "transaction checkpoint currently running": int(n % 60 < 2),
                "transaction checkpoint generation": n // 60,
            },
        }
    return doc
