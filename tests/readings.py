"""Two readings of one recording compared: the tests and the fuzz run check the compiled scanner,
the Python path and the dict per sample against each other with these."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from ckptdiag.recording import Recording, read_recording


def python_path(path: Path, mp: pytest.MonkeyPatch, block_bytes: int, split: int) -> Recording:
    """``path`` read with columns as a machine without the compiled scanner reads it: blocks of
    ``block_bytes``, and two halves (the second by a forked child) from ``split`` bytes on."""
    from ckptdiag.recording import reader

    mp.setattr(reader, "_jsonl", None)
    mp.setattr(reader, "BLOCK_BYTES", block_bytes)
    mp.setattr(reader, "PARSE_SPLIT", split)
    return read_recording(path, columns=True)


def same_reading(a: Recording, b: Recording) -> None:
    """Two readings of one file: the same samples, events, damage and truncation, and the same
    frame value for value (AssertionError where they differ)."""
    assert (a.sample_count, a.events, a.damaged_lines, a.damaged_at, a.truncated) == (
        b.sample_count,
        b.events,
        b.damaged_lines,
        b.damaged_at,
        b.truncated,
    )
    fa, fb = a.to_frame(), b.to_frame()
    assert sorted(fa.columns) == sorted(fb.columns)
    pd.testing.assert_frame_equal(fa, fb[fa.columns], check_exact=True)
