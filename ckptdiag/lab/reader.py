"""A long-running reader: one snapshot held open while the workload writes (the lab's pinned history)."""

from __future__ import annotations

import threading
from typing import Any


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
