"""Small formatters the recommendations' prose shares."""

from __future__ import annotations


def mb(n: float | None) -> str:
    """Bytes as MB, or GB from 1 GB.

    >>> mb(512 * 2**20), mb(3 * 2**30), mb(None)
    ('512 MB', '3.0 GB', '?')
    """
    if n is None:
        return "?"
    return f"{n / 2**30:.1f} GB" if n >= 2**30 else f"{n / 2**20:.0f} MB"


def plural(n: int, word: str) -> str:
    """``1 time``, ``2 times``.

    >>> plural(1, "time"), plural(3, "time")
    ('1 time', '3 times')
    """
    return f"{n} {word}{'s' if n != 1 else ''}"
