"""The lab's collection: loaded before a run, the documents its updates pick, and a long-running
reader that holds one snapshot of it open while the workload writes (the pinned history); very
many other collections, and writes that create theirs (the data handles a checkpoint walks)."""

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


def create_collections(session: Any, n: int) -> None:
    """``n`` more collections, checkpointed: a server with very many collections and indexes, each a
    data handle that every checkpoint gathers and walks under the schema lock (WT-5479)."""
    if n <= 0:
        return
    for i in range(n):
        session.create(f"table:coll-{i}", "key_format=q,value_format=u,block_compressor=")
    session.checkpoint()


class NewCollections:
    """Writes that go to a collection they create first, ``share`` of them: as mongod's insert into
    a collection that does not exist creates it. The create takes the schema lock, which a
    checkpoint holds while it gathers its handles: such a write waits for the walk. At most
    ``budget`` of them (the files the host lets the process open), then the usual collection."""

    def __init__(self, session: Any, share: float, name: str, budget: int) -> None:
        self.session, self.share, self.name, self.budget = session, share, name, budget
        self.created = 0

    def cursor(self, rng: random.Random) -> Any | None:
        """A new collection's cursor for this write, or None: the usual collection."""
        if self.share <= 0 or self.created >= self.budget or rng.random() >= self.share:
            return None
        self.created += 1
        table = f"table:new-{self.name}-{self.created}"
        self.session.create(table, "key_format=q,value_format=u,block_compressor=")
        return self.session.open_cursor(table)


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
