"""Number formatting shared by every terminal and text report."""

from __future__ import annotations

from typing import Any


def fmt(value: Any, spec: str, unit: str = "") -> str:
    """``value`` in ``spec`` followed by ``unit``; ``-`` when it is not known (None)."""
    return "-" if value is None else format(value, spec) + unit
