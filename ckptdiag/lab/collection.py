"""The lab's collection: loaded before a run, the documents its updates pick, and a long-running
reader that holds one snapshot of it open while the workload writes (the pinned history)."""

from __future__ import annotations

import os
import random
import threading
from typing import Any


def preload(session: Any, n: int, size: int) -> None:
    """``n`` documents of ``size`` bytes, checkpointed: an established collection.

    They are spread over the whole key space, so that the workload's writes land on leaf pages all
    over the tree, as updates and random _id inserts do, and every checkpoint has to rewrite much
    of it. Bulk-loaded in key order."""
    pool = os.urandom(4 * 2**20)
    cursor = session.open_cursor("table:collection", None, "bulk")
    for i in range(n):
        offset = (i * 7919) % (len(pool) - size)
        cursor[_key(i, n)] = pool[offset : offset + size]
    cursor.close()
    session.checkpoint()


def update_key(rng: random.Random, n: int) -> int:
    """The key of one of the ``n`` preloaded documents, at random."""
    return _key(rng.randrange(n), n)


def _key(i: int, n: int) -> int:
    """The ``i``th of ``n`` documents' key: evenly spread over the key space."""
    return i * (2**62 // n)


def hold_snapshot(conn: Any, after_s: float, stop: threading.Event) -> None:
    """From ``after_s`` seconds on, hold one snapshot of the collection open until ``stop``.

    As a long-running transaction or cursor on a server does, it pins every version written after
    it: WiredTiger keeps them (pinned transaction IDs), in the cache and, once evicted or
    checkpointed, in the history store, until it ends."""
    if stop.wait(after_s):
        return
    session = conn.open_session()
    session.begin_transaction("isolation=snapshot")
    cursor = session.open_cursor("table:collection")
    cursor.next()  # the snapshot is taken at the first read
    stop.wait()
    cursor.close()
    session.rollback_transaction()
    session.close()
