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
