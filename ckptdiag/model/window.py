"""Where a report looks: one time window, in one unit, cut by one rule for every kind of input.

FTDC, recordings and mongod's logs are all cut here (``--since``/``--until``, both inclusive, in
whole milliseconds since the epoch, as FTDC stamps its samples): a sample or a log line at the
very second given is inside. The error for a window that holds nothing names the inputs' own
range, whatever they are.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ckptdiag.errors import InputError


@dataclass(frozen=True)
class TimeWindow:
    """``since_ms`` to ``until_ms`` (None: open on that side), both inclusive."""

    since_ms: int | None = None
    until_ms: int | None = None

    @property
    def since_s(self) -> float | None:
        """The start in seconds since the epoch (None: open)."""
        return None if self.since_ms is None else self.since_ms / 1000

    @property
    def until_s(self) -> float | None:
        """The end in seconds since the epoch (None: open)."""
        return None if self.until_ms is None else self.until_ms / 1000

    @property
    def whole(self) -> bool:
        """Nothing cut on either side."""
        return self.since_ms is None and self.until_ms is None

    def keep_ms(self, ms: np.ndarray) -> np.ndarray:
        """Which of the times ``ms`` (milliseconds since the epoch) lie inside."""
        keep = np.ones(ms.shape, dtype=bool)
        if self.since_ms is not None:
            keep &= ms >= self.since_ms
        if self.until_ms is not None:
            keep &= ms <= self.until_ms
        return keep

    def keep_s(self, t: np.ndarray) -> np.ndarray:
        """Which of the times ``t`` (seconds since the epoch) lie inside."""
        return self.keep_ms(np.asarray(t, dtype=np.float64) * 1000)

    def holds_s(self, t: float) -> bool:
        """Whether the time ``t`` (seconds) lies inside."""
        return bool(self.keep_s(np.array([t]))[0])

    def empty(
        self,
        what: str,
        inputs: str,
        first_s: float | None,
        last_s: float | None,
        error: type[InputError] = InputError,
        damage: Sequence[str] = (),
    ) -> InputError:
        """The error (an ``error``) for a window in which ``what`` ("FTDC samples", "samples")
        of the ``inputs`` ("files", "recordings") held nothing, naming their own range
        (``first_s`` to ``last_s``) where known; where they held none at all, the first lines of ``damage``
        (what reading them found) instead."""
        known = first_s is not None and last_s is not None
        if not known and self.since_ms is None and self.until_ms is None:  # no window: nothing was read
            found = ": " + "; ".join(damage[:2]) if damage else ""
            return error(f"no {what} in the {inputs}{found}", f"were the {inputs} cut short or damaged?")
        held = f": the {inputs} hold {when(first_s)} to {when(last_s)}" if known else ""
        return error(f"no {what} in the given window{held}", f"give --since/--until inside the {inputs}' times")


WHOLE = TimeWindow()  # no --since or --until


def when(t: float | None) -> str:
    """A time for an error line, to the second (UTC)."""
    return dt.datetime.fromtimestamp(t or 0.0, dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
