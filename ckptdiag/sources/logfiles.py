"""Whether an input is a mongod log: a file (plain or gzip) one of whose first lines is one, in
either of mongod's formats, or a directory of them (``mongod.log`` and its rotations)."""

from __future__ import annotations

from pathlib import Path

from ckptdiag.guard.inputs import open_maybe_gzip
from ckptdiag.sources.mongodlog import MAX_LINE, parse_line

LOG_LINES_PEEKED = 20  # the first lines that may tell a mongod log (any one of them will)
LOG_PEEK_BYTES = 64 << 20  # read at most this much to find them (a first line may be a 2 MB query)


def is_log(path: Path) -> bool:
    """Whether ``path`` is a mongod log (plain or gzip): one of its first lines is one, in either
    format (the first may be longer than any peek: a huge slow query)."""
    import zlib

    try:
        with open_maybe_gzip(path) as fh:
            budget = LOG_PEEK_BYTES
            for _ in range(LOG_LINES_PEEKED):
                line = fh.readline(MAX_LINE + 1)
                budget -= len(line)
                if not line:
                    return False
                if len(line) > MAX_LINE:  # too long to be a log line: past its end, to the next
                    while not line.endswith(b"\n") and budget > 0 and line:
                        line = fh.readline(1 << 20)
                        budget -= len(line)
                    continue
                if parse_line(line) is not None:
                    return True
                if budget <= 0:
                    return False
    except (OSError, EOFError, zlib.error):
        return False
    return False


def is_log_dir(path: Path) -> bool:
    """A directory of mongod logs (``mongod.log`` and its rotations), not of FTDC or recordings."""
    entries = [e for e in path.iterdir() if e.is_file()]
    return not any(e.name.startswith("metrics.") for e in entries) and any(
        ".log" in e.name and is_log(e) for e in entries
    )


def is_log_input(path: Path) -> bool:
    """Whether an input is a mongod log: a log file, or a directory of them."""
    return is_log_dir(path) if path.is_dir() else is_log(path)
