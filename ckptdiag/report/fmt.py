"""Number formatting, and the phrases built of numbers, shared by every terminal and text report."""

from __future__ import annotations

from typing import Any


def fmt(value: Any, spec: str, unit: str = "") -> str:
    """``value`` in ``spec`` followed by ``unit``; ``-`` when it is not known (None)."""
    return "-" if value is None else format(value, spec) + unit


def fmt_ms(value: float | None) -> str:
    """A latency in ms to the digits that matter at its size: ``1.59 ms``, ``24.2 ms``, ``4,071 ms``;
    ``-`` when it is not known.

    >>> fmt_ms(1.587), fmt_ms(24.17), fmt_ms(4070.95), fmt_ms(None)
    ('1.59 ms', '24.2 ms', '4,071 ms', '-')
    """
    if value is None:
        return "-"
    size = abs(value)
    return format(value, ".2f" if size < 10 else ".1f" if size < 1000 else ",.0f") + " ms"


def unplaced(count: int) -> str:
    """What follows a count of checkpoints when ``count`` more were counted and not placed
    (analysis/event_counts.py): "" when none were.

    >>> unplaced(333), unplaced(0)
    (' (and 333 not placed: see the evidence)', '')
    """
    return f" (and {count:,} not placed: see the evidence)" if count else ""
