"""Synthetic FTDC files written by mongod's encoding rules, from a simulated server (7.0 unless said) whose
checkpoints are known exactly: the ground truth the counters-as-truth tests compare against.

A file is BSON documents ``{_id, type, doc|data}``: a type 0 metadata document, then type 1
chunks whose ``data`` is ``uint32 size`` + zlib(reference document, ``uint32`` metric count,
``uint32`` delta count, metric-major deltas as varints with zero runs). The encoder is written
here from the format, independently of ckptdiag's decoder.
"""

from __future__ import annotations

import datetime as dt
import struct
import zlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import bson
import numpy as np


@dataclass
class SimServer:
    """A 7.0 server: checkpoints at known times, throughput that dips while ``stall`` says."""

    checkpoints: Sequence[tuple[float, float]]  # (start, end), seconds from t0
    ops: float = 1000.0
    stall_ops: float = 1000.0  # throughput while a stalling checkpoint runs
    stall_in: Sequence[tuple[float, float]] = ()  # spans of slow throughput (else: every checkpoint)
    latency_ms: float = 1.0
    stall_latency_ms: float = 40.0
    t0: float = 1_700_000_000.0
    uptime0_ms: int = 5_000_000
    flag_lag_s: float = 0.0  # the running flag stays up this long after the end (as real servers do)
    load_from: float = 0.0  # no operations before this (an idle server before the load began)
    dirty_bytes: int = 1 << 24  # of a 1 GiB cache
    # the dirty data builds up from each checkpoint's start to ``dirty_bytes`` at the next one's
    # (else it stays at ``dirty_bytes``: a cache held at a dirty target, or frozen figures)
    dirty_builds: bool = False
    written: Sequence[int] = ()  # bytes each checkpoint writes (else 64 MiB each)
    cpu_busy_pct: float | None = None  # the host's 8 CPUs this busy (all processes), as systemMetrics keeps it
    bursts: Sequence[tuple[float, float]] = ()  # when given, load runs only in these spans (batch jobs)
    secondary: bool = False  # a replica-set secondary: its writes are replication's, and it can lag
    primary: bool = False  # a replica-set primary (serverStatus.repl says so)
    # every write waits for w: majority this long (ms), and stall_wc_wait_ms while stall_in says
    wc_wait_ms: float | None = None
    stall_wc_wait_ms: float = 0.0
    version: str = "7.0.0"  # 7.1+: the checkpoint statistics in their own category (WT-11171), 7.3+ split
    # each checkpoint's phase statistics as the server names them ((category, name) -> value), the
    # "most recent" gauges every sample after it ends reads
    phases: Sequence[dict[tuple[str, str], float]] = ()
    # any other WiredTiger gauge, (category, name) -> (its value at the first sample, at the last):
    # a straight line between them (a history store growing, the range of timestamps pinned)
    gauges: dict[tuple[str, str], tuple[float, float]] = field(default_factory=dict)
    _fine: float = field(default=0.01, repr=False)

    def _dirty(self, t: float, starts: np.ndarray) -> int:
        """The tracked dirty bytes at ``t``: ``dirty_bytes``, or the share of it built up since the
        last checkpoint began (``dirty_builds``), at the pace of the periods between them."""
        if not self.dirty_builds or starts.size < 2:
            return self.dirty_bytes
        k = int(np.searchsorted(starts, t, side="right")) - 1
        period = float(np.median(np.diff(starts)))
        since = t - starts[k] if k >= 0 else t - (starts[0] - period)
        return round(self.dirty_bytes * min(max(since / period, 0.0), 1.0))

    def _stalled(self, t: np.ndarray) -> np.ndarray:
        spans = sorted(self.stall_in if self.stall_in else self.checkpoints)
        if not spans:
            return np.zeros(t.shape, dtype=bool)
        starts = np.array([s for s, _ in spans], dtype=np.float64)
        reach = np.maximum.accumulate(np.array([e for _, e in spans], dtype=np.float64))  # overlaps too
        at = np.searchsorted(starts, t, side="right") - 1  # the last span begun by t (weeks of them)
        return (at >= 0) & (t < reach[np.maximum(at, 0)])

    def _checkpoint_stats(self, begun: int, running: bool, recent_ms: int, total_ms: int) -> dict[str, Any]:
        """The checkpoint counters as this version names them."""
        major, minor = (int(x) for x in self.version.split(".")[:2])
        if (major, minor) < (7, 1):
            return {
                "transaction": {
                    "transaction checkpoints": begun,
                    "transaction checkpoint currently running": int(running),
                    "transaction checkpoint generation": begun,
                    "transaction checkpoint most recent time (msecs)": recent_ms,
                    "transaction checkpoint total time (msecs)": total_ms,
                }
            }
        started = (
            {"number of checkpoints started by api": begun, "number of checkpoints started by compaction": 0}
            if (major, minor) >= (7, 3)
            else {"number of checkpoints started": begun}
        )
        return {
            "checkpoint": {
                **started,
                "progress state": 5 if running else 0,
                "generation": begun,
                "most recent time (msecs)": recent_ms,
                "total time (msecs)": total_ms,
            }
        }

    def documents(self, times: Sequence[float]) -> list[dict[str, Any]]:
        """serverStatus documents (inside FTDC's sample document) at ``times`` (s from t0)."""
        horizon = max(times) + 1.0
        fine = np.arange(0.0, horizon, self._fine)
        stalled = self._stalled(fine)
        ops_rate = np.where(fine < self.load_from, 0.0, np.where(stalled, self.stall_ops, self.ops))
        if self.bursts:
            busy = np.zeros(fine.shape, dtype=bool)
            for s, e in self.bursts:
                busy |= (fine >= s) & (fine < e)
            ops_rate = np.where(busy, ops_rate, 0.0)
        lat_rate = ops_rate * np.where(stalled, self.stall_latency_ms, self.latency_ms) * 1000
        ops_cum = np.concatenate(([0.0], np.cumsum(ops_rate) * self._fine))
        lat_cum = np.concatenate(([0.0], np.cumsum(lat_rate) * self._fine))
        wait_rate = ops_rate * np.where(stalled, self.stall_wc_wait_ms, self.wc_wait_ms or 0.0)
        wait_cum = np.concatenate(([0.0], np.cumsum(wait_rate) * self._fine))
        # a stalled secondary falls behind 1 s a second and catches up 2 s a second
        lag = np.zeros(fine.size + 1)
        for j, slow in enumerate(stalled if self.secondary else ()):
            lag[j + 1] = lag[j] + self._fine if slow else max(lag[j] - 2 * self._fine, 0.0)
        docs = []
        # the checkpoints in time order, one after another: counts by binary search (weeks of them)
        starts = np.array([s for s, _ in self.checkpoints], dtype=np.float64)
        ends = np.array([e for _, e in self.checkpoints], dtype=np.float64)
        spent = np.concatenate(([0], np.cumsum([round((e - s) * 1000) for s, e in self.checkpoints])))
        wrote = np.concatenate(([0], np.cumsum(self.written or [64 << 20] * len(self.checkpoints))))
        for t in times:
            i = min(round(t / self._fine), ops_cum.size - 1)
            begun = range(int(np.searchsorted(starts, t, side="right")))
            finished = int(np.searchsorted(ends, t, side="right"))
            last = len(begun) - 1
            running = last >= 0 and t < ends[last] + self.flag_lag_s
            total_ms = int(spent[finished])
            recent_ms = round((ends[finished - 1] - starts[finished - 1]) * 1000) if finished else 0
            done = range(finished)
            inserts = int(ops_cum[i])
            when = dt.datetime.fromtimestamp(self.t0 + t, dt.timezone.utc)
            status = {
                "host": "synthetic:27017",
                "version": self.version,
                "pid": 4242,
                "uptimeMillis": self.uptime0_ms + round(t * 1000),
                "localTime": when,
                "opcounters": {"insert": inserts, "query": 0, "update": 0, "delete": 0, "getmore": 0, "command": 0},
                "opLatencies": {"writes": {"latency": int(lat_cum[i]), "ops": inserts}},
                "wiredTiger": {
                    "cache": {
                        "maximum bytes configured": 1 << 30,
                        "bytes currently in the cache": 1 << 28,
                        "tracked dirty bytes in the cache": self._dirty(t, starts),
                    },
                    **self._checkpoint_stats(len(begun), running, recent_ms, total_ms),
                    "block-manager": {"bytes written for checkpoint": int(wrote[len(done)])},
                },
            }
            # every sample carries them (0 before the first checkpoint ends, as a server reports them)
            for (category, name), value in (self.phases[max(finished - 1, 0)] if self.phases else {}).items():
                status["wiredTiger"].setdefault(category, {})[name] = value if finished else 0
            along = (t - times[0]) / max(times[-1] - times[0], 1e-9)
            for (category, name), (at_first, at_last) in self.gauges.items():
                status["wiredTiger"].setdefault(category, {})[name] = int(
                    np.rint(at_first + (at_last - at_first) * along)
                )
            doc: dict[str, Any] = {"start": when, "serverStatus": status}
            if self.cpu_busy_pct is not None:
                cpu_ms = 8 * 1000 * (t + 1000.0)
                busy = round(cpu_ms * self.cpu_busy_pct / 100)
                doc["systemMetrics"] = {"cpu": {"user_ms": busy, "idle_ms": round(cpu_ms) - busy}}
            if self.primary:
                status["repl"] = {"isWritablePrimary": True, "secondary": False}
            if self.wc_wait_ms is not None:
                status["metrics"] = {"getLastError": {"wtime": {"num": inserts, "totalMillis": int(wait_cum[i])}}}
            if self.secondary:
                _as_secondary(status, inserts, int(lat_cum[i]))
                behind = dt.timedelta(seconds=float(lag[i]))
                doc["replSetGetStatus"] = {
                    "members": [
                        {"_id": 0, "optimeDate": when - behind, "self": True, "state": 2},
                        {"_id": 1, "optimeDate": when, "state": 1},
                    ]
                }
            doc["end"] = when
            docs.append(doc)
        return docs


def _as_secondary(status: dict[str, Any], applied: int, latency_us: int) -> None:
    """A secondary's serverStatus: writes applied by replication in batches of ~100, no client writes."""
    status["opcounters"]["insert"] = 0
    status["opLatencies"]["writes"] = {"latency": 0, "ops": 0}
    status["opcountersRepl"] = {"insert": applied, "update": 0, "delete": 0}
    batches = {"num": applied // 100, "totalMillis": latency_us // 1000 // 100}
    status["metrics"] = {"repl": {"apply": {"ops": applied, "batches": batches}}}
    status["repl"] = {"isWritablePrimary": False, "secondary": True}


def _flatten(doc: Any, out: list[int]) -> None:
    """Metric values in mongod's extraction order (numbers, bools and dates; strings skipped)."""
    for value in doc.values():
        if isinstance(value, list):  # a BSON array is a document keyed "0", "1", ...
            _flatten({str(i): v for i, v in enumerate(value)}, out)
        elif isinstance(value, dict):
            _flatten(value, out)
        elif isinstance(value, bool):
            out.append(int(value))
        elif isinstance(value, int):
            out.append(value)
        elif isinstance(value, dt.datetime):
            out.append(int(value.timestamp() * 1000))


def _varint(n: int) -> bytes:
    """An unsigned LEB128 varint of ``n`` (a negative delta as its 64-bit two's complement)."""
    n &= (1 << 64) - 1
    out = bytearray()
    while True:
        byte = n & 0x7F
        n >>= 7
        out.append(byte | (0x80 if n else 0))
        if not n:
            return bytes(out)


def _chunk(docs: Sequence[dict[str, Any]]) -> bytes:
    ref = bson.encode(docs[0])
    rows = []
    for d in docs:
        values: list[int] = []
        _flatten(d, values)
        rows.append(values)
    matrix = np.array(rows, dtype=np.int64).T  # metric-major
    deltas = np.diff(matrix, axis=1).ravel().tolist()
    stream = bytearray()
    i = 0
    while i < len(deltas):
        if deltas[i] != 0:
            stream += _varint(deltas[i])
            i += 1
            continue
        run = 1
        while i + run < len(deltas) and deltas[i + run] == 0:
            run += 1
        stream += _varint(0) + _varint(run - 1)
        i += run
    body = ref + struct.pack("<II", matrix.shape[0], matrix.shape[1] - 1) + bytes(stream)
    return struct.pack("<I", len(body)) + zlib.compress(body)


def write_ftdc(
    path: Path,
    server: SimServer,
    times: Sequence[float],
    chunk: int = 300,
    *,
    host: str = "synthetic",
    port: int | None = None,
) -> None:
    """An FTDC file of ``server`` sampled at ``times`` (s from its t0), ``chunk`` samples a chunk,
    its metadata naming ``host`` (and ``port``, as getCmdLineOpts' net.port, when given)."""
    docs = server.documents(times)
    start = dt.datetime.fromtimestamp(server.t0, dt.timezone.utc)
    meta = {
        "buildInfo": {"version": server.version},
        "getCmdLineOpts": {
            "argv": ["mongod"],
            "parsed": {"storage": {"dbPath": "/data/db"}, **({"net": {"port": port}} if port else {})},
        },
        "hostInfo": {"system": {"hostname": host, "memSizeMB": 16384, "numCores": 8}},
    }
    out = bytearray(bson.encode({"_id": start, "type": 0, "doc": meta}))
    for at in range(0, len(docs), chunk):
        part = docs[at : at + chunk]
        out += bson.encode({"_id": part[0]["start"], "type": 1, "data": bson.Binary(_chunk(part))})
    path.write_bytes(bytes(out))


def support_archive(root: Path, kind: str) -> bytes:
    """A support download of two hosts' diagnostic.data (one FTDC file each), as .zip or .tar.gz."""
    import io
    import tarfile
    import zipfile

    ftdc = root / "metrics.2026-11-01T00-00-00Z-00000"
    if not ftdc.exists():
        write_ftdc(ftdc, SimServer(checkpoints=[(30, 32)]), [float(i) for i in range(80)])
    body = ftdc.read_bytes()
    out = io.BytesIO()
    if kind == "zip":
        with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as z:
            z.writestr("h1/diagnostic.data/" + ftdc.name, body)
            z.writestr("h2/diagnostic.data/" + ftdc.name, body)
    else:
        with tarfile.open(fileobj=out, mode="w:gz") as t:
            for host in ("h1", "h2"):
                info = tarfile.TarInfo(f"{host}/diagnostic.data/{ftdc.name}")
                info.size = len(body)
                t.addfile(info, io.BytesIO(body))
    return out.getvalue()
