"""Exit statuses: the one place that gives them numbers (documented in docs/exit-codes.md)."""

from __future__ import annotations

from enum import IntEnum


class ExitStatus(IntEnum):
    """Process exit codes, stable for cron jobs and scripts."""

    OK = 0
    ERROR = 1  # any runtime failure: connection, auth, privileges, bad file, unwritable output
    USAGE = 2  # bad command line (click's own convention)
    WARN = 3  # a report found something worth a look (gated by --fail-on)
    CRITICAL = 4  # a report found stalls (gated by --fail-on)
    INTERRUPTED = 130  # Ctrl-C / SIGINT, as shells report it
    TERMINATED = 143  # SIGTERM outside sampling (128 + 15, as shells report it); while sampling it ends cleanly: 0
