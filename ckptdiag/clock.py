"""Time, behind a protocol so tests drive the sampler with a fake clock instead of sleeping."""

from __future__ import annotations

import time
from typing import Protocol


class Clock(Protocol):
    """What the sampler needs of time."""

    def monotonic(self) -> float:
        """Seconds on a clock that never goes back (deadlines, intervals)."""

    def wall(self) -> float:
        """Seconds since the epoch, UTC (timestamps in recordings)."""

    def sleep(self, seconds: float) -> None:
        """Wait; may be cut short by a signal."""


class SystemClock:
    """The real clocks."""

    def monotonic(self) -> float:
        return time.monotonic()

    def wall(self) -> float:
        return time.time()

    def sleep(self, seconds: float) -> None:
        if seconds > 0:
            time.sleep(seconds)
