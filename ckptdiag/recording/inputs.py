"""What each input is: a recording, FTDC, or a mongod log, told apart once for every command, at
the level that knows all three (the recording format here, FTDC and the log below).

A directory holding recordings and no ``metrics.*`` files stands for its recordings, one holding
mongod logs for its logs, any other for FTDC (``diagnostic.data``); a file is a recording by its
first line, a log by one of its first lines, else FTDC (whose reader names what it is not).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ckptdiag.guard.inputs import check_readable
from ckptdiag.recording.header import is_recording
from ckptdiag.sources.logfiles import is_log, is_log_dir


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
                found = [e for e in entries if not e.name.startswith("metrics.") and is_recording(e)]
                if found and not any(e.name.startswith("metrics.") for e in entries):
                    recordings += found
                elif is_log_dir(path):
                    logs.append(path)
                else:
                    ftdc.append(path)
            elif is_recording(path):
                recordings.append(path)
            elif is_log(path):
                logs.append(path)
            else:
                ftdc.append(path)
        return cls(tuple(recordings), tuple(ftdc), tuple(logs))
