"""The long view's tables (terminal, Markdown): the window's checkpoints by day (or hour)."""

from __future__ import annotations

from ckptdiag.analysis.history import History
from ckptdiag.report.document import iso
from ckptdiag.report.fmt import fmt


def history_rows(h: History) -> tuple[str, list[str], list[list[str]]]:
    """A title, the columns and a row per period, for the terminal and Markdown tables."""
    day = h.period == "day"
    head = ["day UTC" if day else "hour UTC", "ckpts", "stalls", "p50 s", "max s", "p50 MB", "max p99 w ms"]
    rows = [
        [
            (iso(r.start) or "")[:10] if day else (iso(r.start) or "")[5:16].replace("T", " "),
            f"{r.checkpoints:,}",
            f"{r.stalls:,}",
            fmt(r.duration_p50_s, ".2f"),
            fmt(r.duration_max_s, ".2f"),
            fmt(None if r.bytes_p50 is None else r.bytes_p50 / 2**20, ",.1f"),
            fmt(r.write_p99_ms_max, ",.1f"),
        ]
        for r in h.rows
    ]
    return f"by {h.period}", head, rows
