"""The vectorised episode finder against the one-row-at-a-time finder it replaced
(tests/episodes_loop.py), on every shape of the counters: several checkpoints begun in one
interval, a flag missing or absent, restarts, damaged counts, total time without a flag."""

from __future__ import annotations

import numpy as np
import pandas as pd
from episodes_loop import _from_counters as one_at_a_time
from hypothesis import given, settings
from hypothesis import strategies as st

from ckptdiag.analysis.episodes import _Counters, _from_counters


def counters(
    starts: list[float],
    running: list[float],
    total: list[float],
    recent: list[float],
    written: list[float],
    dt: list[float],
    placed: list[float] | None = None,
) -> _Counters:
    """The finder's columns; ``placed``: how many of those begun and ended inside each interval are
    placed (0: a gap; as analysis/series.py counts the rest as unplaced; None: all)."""
    t = 1_700_000_000.0 + np.cumsum(dt)
    begun = np.asarray(starts, dtype=np.float64)
    inside = np.maximum(np.floor(np.nan_to_num(begun, nan=0.0)) - 1.0, 0.0)
    unplaced = np.zeros(begun.size) if placed is None else np.maximum(inside - np.asarray(placed), 0.0)
    frame = pd.DataFrame(
        {
            "t": t,
            "ckpt_starts": begun - unplaced,
            "ckpt_unplaced": unplaced,
            "ckpt_running": running,
            "ckpt_total_ms": total,
            "ckpt_recent_ms": recent,
            "ckpt_bytes": written,
        }
    )
    return _Counters.of(frame)


NAN = float("nan")
STARTS = st.sampled_from([0.0, 0.0, 0.0, 1.0, 1.0, 2.0, 3.0, 5.0, 4.5, NAN, -1.0, 0.5])
PLACED = st.sampled_from([100.0, 100.0, 0.0, 1.0])  # a gap places none of those inside it
FLAG = st.sampled_from([0.0, 0.0, 1.0, 1.0, NAN, 2.0])
TOTAL = st.sampled_from([0.0, 0.0, 0.0, 1.0, 250.0, 1_500.0, 61_000.0, NAN, -3.0])
RECENT = st.sampled_from([0.0, 100.0, 250.0, 1_400.0, 2_000.0, NAN, -1.0])
WRITTEN = st.sampled_from([0.0, 1.0e6, 3.5e7, NAN])
DT = st.sampled_from([1.0, 1.0, 1.0, 0.1, 10.0, 300.0])


@st.composite
def shapes(draw: st.DrawFn) -> _Counters:
    n = draw(st.integers(1, 40))
    column = lambda s: draw(st.lists(s, min_size=n, max_size=n))  # noqa: E731
    starts = column(STARTS)
    if draw(st.booleans()):
        starts[0] = NAN  # the window's first sample
    flag = column(FLAG) if draw(st.booleans()) else [NAN] * n  # without a flag at all
    placed = column(PLACED) if draw(st.booleans()) else None
    return counters(starts, flag, column(TOTAL), column(RECENT), column(WRITTEN), column(DT), placed)


def same(c: _Counters) -> None:
    assert list(_from_counters(c)) == one_at_a_time(c)


@settings(max_examples=3000, deadline=None)
@given(shapes())
def test_the_vectorised_finder_is_the_one_at_a_time_finder(c: _Counters) -> None:
    same(c)


def test_a_day_of_60_s_checkpoints_with_restarts_and_a_missing_flag() -> None:
    rng = np.random.default_rng(7)
    n = 86_400
    starts = np.zeros(n)
    starts[30::60] = 1.0
    running = np.zeros(n)
    for s in range(30, n, 60):
        running[s : s + rng.integers(0, 4)] = 1.0
    total = np.zeros(n)
    total[31::60] = rng.integers(100, 3_000, total[31::60].size)
    starts[[0, 40_000, 40_001]] = NAN  # the first sample and a restart
    running[rng.integers(0, n, 50)] = NAN
    c = counters(list(starts), list(running), list(total), list(total), list(rng.random(n) * 1e6), [1.0] * n)
    found = _from_counters(c)
    assert len(found) > 1_400
    assert list(found) == one_at_a_time(c)
