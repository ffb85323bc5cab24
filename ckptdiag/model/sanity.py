"""What a number read from a file may be. Times outside 1970-2255 and values no counter can hold
(infinite, or beyond 64 bits) are damage: rejected one by one and counted, never computed with."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import numpy as np

EARLIEST_S = 0.0
LATEST_S = 9_000_000_000.0  # 2255: pandas' nanosecond times end in 2262
MONGOD_EARLIEST_S = 1_230_768_000.0  # 2009-01-01: no mongod logged a line before (a clock not yet set at boot did)
CLOCK_AHEAD_S = 366 * 86_400.0  # a line stamped further ahead of now than this: a clock set wrong
ABSURD = 2.0**64  # no serverStatus counter or gauge goes beyond 64 bits


def is_number(value: Any) -> bool:
    """Whether a value parsed from JSON or BSON is a number: an int or a float, never a bool."""
    return isinstance(value, int | float) and not isinstance(value, bool)


def as_float(value: Any) -> float | None:
    """``value`` as a float when it is a number (:func:`is_number`), else None."""
    return float(value) if is_number(value) else None


def plausible_times(t: np.ndarray) -> np.ndarray:
    """Which times (seconds since the epoch) could be a sample's: finite, 1970-2255."""
    import numpy as np

    with np.errstate(invalid="ignore"):
        ok: np.ndarray = np.isfinite(t) & (t >= EARLIEST_S) & (t <= LATEST_S)
    return ok


def reject_absurd(values: np.ndarray) -> int:
    """Set infinite values and values of 2**64 or more (either sign) to NaN, in place; how many."""
    import numpy as np

    with np.errstate(invalid="ignore"):
        bad = np.isinf(values) | (np.abs(values) >= ABSURD)
    count = int(np.count_nonzero(bad))
    if count:
        values[bad] = np.nan
    return count
