"""Number formatting, and the phrases built of numbers, shared by every terminal and text report."""

from __future__ import annotations

from typing import Any

from ckptdiag.advice.text import fmt_ms

__all__ = ["fmt", "fmt_ms", "unplaced"]


def fmt(value: Any, spec: str, unit: str = "") -> str:
    """``value`` in ``spec`` followed by ``unit``; ``-`` when it is not known (None)."""
    return "-" if value is None else format(value, spec) + unit


def unplaced(count: int) -> str:
    """What follows a count of checkpoints when ``count`` more were counted and not placed
    (analysis/event_counts.py): "" when none were.

    >>> unplaced(333), unplaced(0)
    (' (and 333 not placed: see the evidence)', '')
    """
    return f" (and {count:,} not placed: see the evidence)" if count else ""
