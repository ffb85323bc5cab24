"""A real WiredTiger engine, opened and driven the way mongod drives it.

mongod opens WiredTiger with ``statistics=(fast)``, a journal, ``eviction=(threads_min=4,
threads_max=4)`` and a cache size, flushes the journal every ``commitIntervalMs`` (100 ms), and
since 3.6 runs its own checkpoint thread every ``syncdelay`` seconds (3.4 passed
``checkpoint=(wait=N)`` to WiredTiger instead). The lab does the same, with a paced workload of
incompressible ~340-byte documents written to a collection table and a random-key index table
from worker threads (the binding releases the GIL inside the engine).

Once a second it can answer serverStatus (the statistics cursor shaped exactly as
``serverStatus().wiredTiger``, with opcounters and opLatencies from its own workload). It keeps
its own ground truth: per-second write throughput and latency, and every checkpoint's start and
end (timed by the checkpoint thread, or polled from the engine at 20 Hz when
WiredTiger checkpoints on its own).
"""

from __future__ import annotations

import datetime as dt
import os
import random
import resource
import shutil
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from ckptdiag.lab.client import HIST_BOUNDS, Worker, bucket, paced
from ckptdiag.lab.collection import NewCollections, create_collections, hold_snapshot, preload, update_key
from ckptdiag.lab.config import (
    LAB_VERSION,
    LabConfig,
    check_space,
    estimated_bytes,
    import_wiredtiger,
    open_files_for,
)
from ckptdiag.lab.slices import short_slices

HALT_S = 20.0  # how long the threads get to stop (a thread blocked in the engine is left running)


@dataclass
class Checkpoint:
    """One checkpoint seen by the lab: monotonic and wall start/end."""

    start_mono: float
    start_wall: float
    end_mono: float | None = None
    end_wall: float | None = None

    @property
    def duration_s(self) -> float | None:
        return None if self.end_mono is None else self.end_mono - self.start_mono


@dataclass
class SecondTruth:
    """The workload's own view of one second."""

    t: float  # wall time at the start of the second
    ops: int
    p50_ms: float | None
    p99_ms: float | None
    max_ms: float | None


def _cpu_times() -> dict[str, int]:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return {"user_time_us": int(usage.ru_utime * 1e6), "system_time_us": int(usage.ru_stime * 1e6)}


class LabEngine:
    """A running WiredTiger engine with mongod's threads and a paced write workload."""

    def __init__(self, config: LabConfig, base_dir: Path | None = None) -> None:
        self.config = config
        self.base_dir = Path(base_dir or tempfile.gettempdir())
        self.home: Path | None = None
        self.checkpoints: list[Checkpoint] = []
        self.seconds: list[SecondTruth] = []
        self.start_mono = 0.0
        self.start_wall = 0.0
        self.pid = os.getpid()
        self._wt: Any = None
        self._conn: Any = None
        self._stop = threading.Event()
        self._pause = threading.Event()
        self._threads: list[threading.Thread] = []
        self._workers: list[Worker] = []
        self._stats_lock = threading.Lock()
        self._stats_session: Any = None
        self._config_lock = threading.Lock()
        self._next_key = 0
        self._key_lock = threading.Lock()
        self.errors: list[str] = []
        self._old_switch = sys.getswitchinterval()
        self._busy: list[str] = []  # threads still running when halted (see close)
        self._restore_slices: Callable[[], None] | None = None  # set by start, undone by halt
        self._new_collections = 0  # how many the writes may create (the open files left)

    # -- life cycle ------------------------------------------------------------------------
    def start(self, duration_hint_s: float = 180.0) -> LabEngine:
        """Open the engine in a fresh directory and start mongod's threads and the workload."""
        self._wt = import_wiredtiger()
        self.base_dir.mkdir(parents=True, exist_ok=True)
        check_space(self.base_dir, estimated_bytes(self.config, duration_hint_s))
        self._new_collections = open_files_for(self.config)  # beyond it, WiredTiger would panic
        self.home = Path(tempfile.mkdtemp(prefix="ckptdiag-lab-", dir=self.base_dir))
        # before the engine starts its threads: they, and the workload's, inherit the short slices
        self._restore_slices = short_slices()
        try:
            self._conn = self._wt.wiredtiger_open(str(self.home), self.config.open_config())
            session = self._conn.open_session()
            session.create("table:collection", "key_format=q,value_format=u,block_compressor=")
            session.create("table:index", "key_format=u,value_format=q,block_compressor=")
            if self.config.preload_docs:
                preload(session, self.config.preload_docs, self.config.value_bytes)
            create_collections(session, self.config.collections)
            session.close()
            self._stats_session = self._conn.open_session()
        except Exception:
            self.close()
            raise
        # Python's default 5 ms GIL switch interval would put up to 5 ms of scheduling noise into
        # every latency the workload measures; the engine itself runs without the GIL.
        self._old_switch = sys.getswitchinterval()
        sys.setswitchinterval(0.0005)
        self.start_mono, self.start_wall = time.monotonic(), time.time()
        rate = self.config.write_rate / max(self.config.threads, 1)
        for i in range(self.config.threads):
            worker = Worker()
            self._workers.append(worker)
            self._spawn(f"writer-{i}", self._write_loop, worker, rate)
        self._spawn("journal", self._journal_loop)
        if self.config.checkpoint_mode == "mongod":
            self._spawn("checkpointer", self._checkpoint_loop)
        else:
            self._spawn("checkpoint-poll", self._poll_loop)
        self._spawn("truth", self._truth_loop)
        if self.config.snapshot_after_s > 0:
            self._spawn("snapshot", hold_snapshot, self._conn, self.config.snapshot_after_s, self._stop)
        return self

    def _spawn(self, name: str, target: Callable[..., None], *args: Any) -> None:
        def guarded() -> None:
            try:
                target(*args)
            except Exception as exc:  # noqa: BLE001 - a dying lab thread must be reported, not lost
                if not self._stop.is_set():
                    self.errors.append(f"{name}: {type(exc).__name__}: {exc}")

        thread = threading.Thread(target=guarded, name=f"lab-{name}", daemon=True)
        thread.start()
        self._threads.append(thread)

    def halt(self) -> None:
        """Stop every thread (the workload's included): the ground truth is final from here on."""
        self._stop.set()
        deadline = time.monotonic() + HALT_S  # one wait for all: the parent waits no longer for the truth
        for thread in self._threads:
            thread.join(timeout=max(deadline - time.monotonic(), 0.0))
        self._busy += [t.name for t in self._threads if t.is_alive()]  # halted twice: still busy
        self._threads.clear()
        sys.setswitchinterval(self._old_switch)
        if self._restore_slices is not None:
            self._restore_slices()
            self._restore_slices = None

    def close(self) -> None:
        """Stop every thread, close the engine (unless a thread is still in it) and remove its
        directory (always)."""
        self.halt()
        if self._conn is not None:
            # a thread still in the engine (a long checkpoint) would make close abort the process
            conn, self._conn = self._conn, None
            if self._busy:
                self.errors.append(f"closed with {', '.join(self._busy)} still running: the engine was left open")
            else:
                conn.close()
        if self.home is not None:
            shutil.rmtree(self.home, ignore_errors=True)
            self.home = None

    def __enter__(self) -> LabEngine:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- threads -------------------------------------------------------------------------------
    def _keys(self, n: int) -> int:
        with self._key_lock:
            first = self._next_key
            self._next_key += n
        return first

    def _write_loop(self, worker: Worker, rate: float) -> None:
        session = self._conn.open_session()
        coll = session.open_cursor("table:collection")
        index = session.open_cursor("table:index")
        interval = 1.0 / rate
        size = self.config.value_bytes
        # Incompressible values without a syscall per insert: slices of one random pool.
        pool = os.urandom(4 * 2**20)
        rng = random.Random()
        span = len(pool) - size
        # j:true: the commit returns once the journal holds it on disk; WiredTiger groups the
        # syncs of concurrent commits as mongod's journal flusher groups its waiters
        commit = "sync=on" if self.config.journaled else None
        budget = self._new_collections // max(self.config.threads, 1)
        fresh = NewCollections(session, self.config.new_collection_share, str(id(worker)), budget)
        next_at = time.monotonic()
        batch_keys = 0
        key = 0
        while not self._stop.is_set():
            if self._pause.is_set():
                time.sleep(0.05)
                next_at = time.monotonic()
                continue
            due_ns, next_at = paced(next_at, interval)
            if batch_keys == 0:
                key, batch_keys = self._keys(1000), 1000
            if self.config.updates and self.config.preload_docs:
                key = update_key(rng, self.config.preload_docs)
            elif self.config.preload_docs:
                key = rng.getrandbits(62)  # anywhere in the established collection
            offset = rng.randrange(span)
            value = pool[offset : offset + size]
            index_key = rng.getrandbits(96).to_bytes(12, "big")
            new = fresh.cursor(rng)  # created before its transaction, as mongod creates a collection
            while True:  # as mongod retries a write conflict (two clients updating one document)
                session.begin_transaction()
                try:
                    (coll if new is None else new)[key] = value
                    index[index_key] = key  # a random-key index scatters dirty pages like an _id index
                except self._wt.WiredTigerRollbackError:
                    session.rollback_transaction()
                    continue
                session.commit_transaction(commit)
                break
            if new is not None:
                new.close()
            us = (time.perf_counter_ns() - due_ns) // 1000
            key += 1
            batch_keys -= 1
            worker.ops += 1
            worker.latency_us_total += us
            worker.hist[bucket(us)] += 1
            worker.latencies.append(us)
        session.close()

    def _journal_loop(self) -> None:
        # mongod's journal flusher: log_flush(sync=on) every commitIntervalMs
        session = self._conn.open_session()
        period = self.config.journal_commit_ms / 1000
        while not self._stop.wait(period):
            session.log_flush("sync=on")
        session.close()

    def _checkpoint_loop(self) -> None:
        # mongod 3.6+: its own checkpoint thread sleeps syncdelay seconds, then checkpoints
        # Its own timing is exact ground truth (the poller below can miss a 20 ms checkpoint).
        session = self._conn.open_session()
        while not self._stop.wait(self.config.checkpoint_s):
            cp = Checkpoint(time.monotonic(), time.time())
            self.checkpoints.append(cp)
            session.checkpoint()
            cp.end_mono, cp.end_wall = time.monotonic(), time.time()
        session.close()

    def _poll_loop(self) -> None:
        # Ground truth when WiredTiger checkpoints on its own (3.4 style): the engine's checkpoint
        # state 20 times a second, and its generation counter for checkpoints shorter than a poll.
        stat = self._wt.stat.conn
        session = self._conn.open_session()
        current: Checkpoint | None = None
        last_gen: int | None = None
        last_m, last_w = time.monotonic(), time.time()
        while not self._stop.wait(0.05):
            cursor = session.open_cursor("statistics:", None, None)
            values = []
            for key in (stat.checkpoint_state, stat.checkpoint_generation):
                cursor.set_key(key)
                cursor.search()
                values.append(cursor.get_value()[2])
            cursor.close()
            state, gen = values
            now_m, now_w = time.monotonic(), time.time()
            if state and current is None:
                current = Checkpoint(now_m, now_w)
                self.checkpoints.append(current)
            elif not state and current is not None:
                current.end_mono, current.end_wall = now_m, now_w
                current = None
            elif not state and last_gen is not None and gen > last_gen:
                # begun and finished between two polls: place it in that interval
                self.checkpoints.append(Checkpoint(last_m, last_w, now_m, now_w))
            last_gen, last_m, last_w = gen, now_m, now_w
        session.close()

    def _truth_loop(self) -> None:
        import numpy as np

        next_at = self.start_mono + 1.0
        wall = self.start_wall
        while not self._stop.is_set():
            time.sleep(max(next_at - time.monotonic(), 0))
            batch: list[int] = []
            for w in self._workers:
                taken, w.latencies = w.latencies, []
                batch.extend(taken)
            if batch:
                arr = np.asarray(batch, dtype=np.float64) / 1000
                p50, p99 = np.percentile(arr, [50, 99])
                self.seconds.append(SecondTruth(wall, len(batch), float(p50), float(p99), float(arr.max())))
            else:
                self.seconds.append(SecondTruth(wall, 0, None, None, None))
            next_at += 1.0
            wall += 1.0

    # -- what a mongod would answer ------------------------------------------------------------
    def wiredtiger_stats(self) -> dict[str, dict[str, int]]:
        """The statistics cursor as serverStatus().wiredTiger: {category: {name: value}}."""
        out: dict[str, dict[str, int]] = {}
        with self._stats_lock:
            cursor = self._stats_session.open_cursor("statistics:", None, None)
            while cursor.next() == 0:
                desc, _text, value = cursor.get_value()
                category, _, name = desc.partition(": ")
                if category != "LSM":  # mongod drops the LSM category
                    out.setdefault(category, {})[name] = int(value)
            cursor.close()
        return out

    def server_status(self, histograms: bool = False) -> dict[str, Any]:
        """A serverStatus document for this engine and its workload."""
        ops = sum(w.ops for w in self._workers)
        latency = sum(w.latency_us_total for w in self._workers)
        writes: dict[str, Any] = {"latency": latency, "ops": ops}
        if histograms:
            counts = [sum(w.hist[i] for w in self._workers) for i in range(len(HIST_BOUNDS))]
            writes["histogram"] = [{"micros": b, "count": c} for b, c in zip(HIST_BOUNDS, counts, strict=True) if c]
        uptime = time.monotonic() - self.start_mono
        threads = self.config.threads
        return {
            "host": f"ckptdiag-lab:{self.pid}",
            "version": LAB_VERSION,
            "process": "mongod",
            "pid": self.pid,
            "uptime": int(uptime),
            "uptimeMillis": int(uptime * 1000),
            "localTime": dt.datetime.now(dt.timezone.utc).replace(tzinfo=None),
            "storageEngine": {"name": "wiredTiger", "supportsCommittedReads": True, "persistent": True},
            # as a Linux mongod gives its own CPU time (getrusage): the engine's and the workload's
            "extra_info": {"note": "fields vary by platform", **_cpu_times()},
            "connections": {"current": threads + 1, "available": 1000, "totalCreated": threads + 1},
            "globalLock": {"currentQueue": {"total": 0, "readers": 0, "writers": 0}},
            "opcounters": {"insert": ops, "query": 0, "update": 0, "delete": 0, "getmore": 0, "command": 0},
            "opLatencies": {"reads": {"latency": 0, "ops": 0}, "writes": writes, "commands": {"latency": 0, "ops": 0}},
            # a standalone mongod reports its (idle) replication counters too
            "opcountersRepl": {"insert": 0, "query": 0, "update": 0, "delete": 0, "getmore": 0, "command": 0},
            "metrics": {
                "repl": {
                    "apply": {"batchSize": 0, "batches": {"num": 0, "totalMillis": 0}, "ops": 0},
                    "buffer": {"apply": {"count": 0, "sizeBytes": 0, "maxSizeBytes": 0}},
                },
                # no write waits for a write concern on a standalone server
                "getLastError": {"wtime": {"num": 0, "totalMillis": 0}, "wtimeouts": 0},
            },
            "queues": {
                "execution": {rw: {"out": 0, "available": 128, "totalTickets": 128} for rw in ("read", "write")}
            },
            "wiredTiger": self.wiredtiger_stats(),
        }

    def cmdline(self) -> dict[str, Any]:
        """What getCmdLineOpts would return for a mongod configured like this lab."""
        c = self.config
        storage: dict[str, Any] = {
            "dbPath": str(self.home),
            "wiredTiger": {
                "engineConfig": {"cacheSizeGB": round(c.cache_mb / 1024, 3), "configString": c.engine_config()}
            },
            "journal": {"commitIntervalMs": c.journal_commit_ms},
        }
        if c.checkpoint_mode == "mongod":
            storage["syncPeriodSecs"] = c.checkpoint_s
        argv = [
            "mongod",
            "--dbpath",
            str(self.home),
            "--wiredTigerCacheSizeGB",
            str(storage["wiredTiger"]["engineConfig"]["cacheSizeGB"]),
            "--wiredTigerEngineConfigString",
            c.engine_config(),
        ]
        return {"argv": argv, "parsed": {"storage": storage}}

    def reconfigure(self, **changes: Any) -> None:
        """Apply settings at runtime, as wiredTigerEngineRuntimeConfig / setParameter syncdelay do."""
        new = self.config.with_overrides(**changes)
        with self._config_lock:
            if self._conn is not None:
                # total=0 is WiredTiger's "off", said outright: left out, a throttle in force would stay
                throttle = "" if new.io_capacity_mb else ",io_capacity=(total=0)"
                self._conn.reconfigure(new.engine_config() + throttle + f",cache_size={new.cache_mb}M")
            self.config = new

    def truth(self) -> dict[str, Any]:
        """The lab's ground truth, JSON-ready."""
        return {
            "config": asdict(self.config),
            "start": self.start_wall,
            "checkpoints": [
                {"start": c.start_wall, "end": c.end_wall, "duration_s": c.duration_s} for c in self.checkpoints
            ],
            "seconds": [asdict(s) for s in self.seconds],
            "errors": list(self.errors),
        }
