"""What each input is: a recording, FTDC, or a mongod log, told apart once for every command.

A directory holding recordings and no ``metrics.*`` files stands for its recordings, one holding
mongod logs for its logs, any other for FTDC (``diagnostic.data``); a file is a recording by its
first line, a log by one of its first lines, else FTDC (whose reader names what it is not).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ckptdiag import recording
from ckptdiag.guard.inputs import check_readable, open_maybe_gzip
from ckptdiag.sources.mongodlog import MAX_LINE, parse_line


@dataclass(frozen=True)
class Inputs:
    """A report's inputs by kind."""

    recordings: tuple[Path, ...] = ()
    ftdc: tuple[Path, ...] = ()
    logs: tuple[Path, ...] = ()

    @classmethod
    def classify(cls, paths: tuple[Path, ...]) -> Inputs:
        """The inputs told apart (see the module doc); anything but a file or a directory is
        refused."""
        recordings: list[Path] = []
        ftdc: list[Path] = []
        logs: list[Path] = []
        for path in paths:
            check_readable(path)
            if path.is_dir():
                entries = sorted(e for e in path.iterdir() if e.is_file())
                found = [e for e in entries if not e.name.startswith("metrics.") and recording.is_recording(e)]
                if found and not any(e.name.startswith("metrics.") for e in entries):
                    recordings += found
                elif is_log_dir(path):
                    logs.append(path)
                else:
                    ftdc.append(path)
            elif recording.is_recording(path):
                recordings.append(path)
            elif is_log(path):
                logs.append(path)
            else:
                ftdc.append(path)
        return cls(tuple(recordings), tuple(ftdc), tuple(logs))


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
