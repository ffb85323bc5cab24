"""A window's episodes in columns read back as the very episodes they were made of."""

from __future__ import annotations

import dataclasses
import itertools
import math
from typing import get_args

import numpy as np
import pytest

from ckptdiag.analysis.episode import Episode, Impact, Phases
from ckptdiag.analysis.episode_table import (
    CHUNK,
    EPISODE,
    FLAG,
    IMPACT,
    LABEL,
    PHASES,
    Episodes,
    FlagField,
    FloatField,
    LabelField,
    PhaseArrays,
)
from ckptdiag.analysis.timeline import _touched
from ckptdiag.analysis.verdict import GONE, cost_key, hurting, hurts, worst_episodes


def _episode(k: int) -> Episode:
    """Episodes unlike one another: None and 0.0 in every figure now and then, a few reasons,
    phases on some, one still running."""
    impact = Impact(
        ops_s_baseline=None if k % 5 == 0 else 1000.0 + k,
        ops_ratio=None if k % 3 == 0 else (k % 11) / 10,
        write_latency_ratio=(k % 7) * 1.5 if k % 4 else None,
        write_latency_kind="p99" if k % 2 else ("mean" if k % 3 else None),
        util_pct_peak=0.0 if k % 6 == 0 else 50.0 + k % 50,
        app_evicted_pages=float(k % 2),
        stall=k % 9 == 0,
        reasons=(GONE,) if k % 10 == 1 else ("throughput and latency",) if k % 9 == 0 else (),
    )
    phases = Phases(sync_s=0.5 + k / 1000, handles_s=None if k % 2 else 0.01) if k % 4 == 0 else None
    return Episode(
        start=1_700_000_000.0 + 60 * k,
        end=None if k == 50 else 1_700_000_000.0 + 60 * k + 1.25,
        duration_s=None if k % 13 == 0 else 1.25 + (k % 17),
        bytes_written=float(2**20 * k),
        evidence="disk-burst" if k % 8 == 0 else "counters",
        exact_duration=k % 2 == 0,
        truncated=k == 0,
        rows=(10 * k, 10 * k + 3),
        impact=impact,
        start_earliest=None if k % 2 else 1_700_000_000.0 + 60 * k - 1,
        phases=phases,
    )


EPISODES = [_episode(k) for k in range(120)]


def test_the_columns_read_back_as_the_same_episodes() -> None:
    table = Episodes.of(EPISODES)
    assert len(table) == len(EPISODES)
    assert list(table) == EPISODES
    assert list(reversed(table)) == EPISODES[::-1]
    assert table[7] == EPISODES[7] and table[-1] == EPISODES[-1]
    assert list(table[10:40:3]) == EPISODES[10:40:3] and list(table[200:]) == []
    with pytest.raises(IndexError):
        table[120]
    assert table == EPISODES and table == Episodes.of(EPISODES)


def test_joined_blocks_are_the_whole_window_whatever_each_block_held() -> None:
    """Blocks with different reasons, a figure one block never had (all None), phases in some."""
    cuts = [0, 1, 4, 40, 41, 90, 120]
    blocks = [Episodes.of(EPISODES[a:b]) for a, b in itertools.pairwise(cuts)]
    assert list(Episodes.join(blocks)) == EPISODES
    assert list(Episodes.join([Episodes.of([]), *blocks[:2]])) == EPISODES[:4]
    assert len(Episodes.join([])) == 0


def test_a_nan_that_is_a_value_stays_a_nan_and_none_stays_none() -> None:
    odd = [_episode(1), Episode(1.0, 2.0, math.nan, None, "counters")]
    back = list(Episodes.of(odd))
    assert back[1].bytes_written is None and back[1].duration_s is not None and math.isnan(back[1].duration_s)
    assert back[0] == odd[0]


def test_columns_answer_what_each_reader_asked_of_every_episode() -> None:
    table = Episodes.of(EPISODES)
    durations = table.floats("duration_s")
    assert np.array_equal(table.known("duration_s"), [e.duration_s is not None for e in EPISODES])
    kinds = [e.impact.write_latency_kind is not None for e in EPISODES]
    assert np.array_equal(table.known("impact.write_latency_kind"), kinds) and not all(kinds)
    assert table.present("duration_s").tolist() == [e.duration_s for e in EPISODES if e.duration_s is not None]
    assert np.isnan(durations[0]) and not durations.flags.writeable
    assert table.flags("impact.stall").tolist() == [e.stall for e in EPISODES]
    assert hurting(table).tolist() == [hurts(e) for e in EPISODES]
    assert table.matching("evidence", lambda v: v == "disk-burst").tolist() == [
        e.evidence == "disk-burst" for e in EPISODES
    ]
    assert list(table.take(table.flags("impact.stall"))) == [e for e in EPISODES if e.stall]
    with pytest.raises(TypeError):
        table.floats("evidence")


@pytest.mark.parametrize("limit", [1, 5, 30, 119, 120])
def test_the_worst_are_the_ones_the_cost_key_sorts_first(limit: int) -> None:
    """Read from the columns, the same episodes as sorting the objects (ties in time order)."""
    chosen = sorted(range(len(EPISODES)), key=lambda i: cost_key(EPISODES[i]))[:limit]
    assert worst_episodes(Episodes.of(EPISODES), limit) == tuple(EPISODES[i] for i in sorted(chosen))


def test_iterating_a_long_window_builds_a_chunk_at_a_time() -> None:
    many = [_episode(k % 120) for k in range(CHUNK * 2 + 5)]
    assert list(Episodes.of(many)) == many


def test_the_timeline_marks_the_buckets_each_episode_touches_as_its_slice_did() -> None:
    """Counted at once, the same buckets as marking each episode's slice, those that begin before
    the first bucket or reach past the last included."""
    rng = np.random.default_rng(7)
    n = 40
    first = rng.integers(-5, n, 300)
    last = first + rng.integers(-3, 12, 300)
    which = rng.random(300) < 0.5
    want = np.zeros(n, dtype=bool)
    for a, b, w in zip(first.tolist(), np.minimum(last, n - 1).tolist(), which.tolist(), strict=True):
        if w:
            want[max(a, 0) : b + 1] = True
    assert np.array_equal(_touched(first, np.minimum(last, n - 1), n, which), want)


def test_the_column_names_mypy_checks_are_the_columns_there_are() -> None:
    """FloatField, FlagField and LabelField (what a reader may ask for) name every column of their
    kind, from Episode's, Impact's and Phases' own fields."""
    named = [(n, k) for n, k in EPISODE if k in (FLAG, LABEL, "float", "optional")]
    named += [(f"impact.{n}", k) for n, k in IMPACT] + [(f"phases.{n}", k) for n, k in PHASES] + [("phases", FLAG)]
    assert set(get_args(FloatField)) == {n for n, k in named if k in ("float", "optional")}
    assert set(get_args(FlagField)) == {n for n, k in named if k == FLAG}
    assert set(get_args(LabelField)) == {n for n, k in named if k == LABEL}


def test_the_judges_arrays_make_the_episodes_the_objects_would() -> None:
    """Episodes.judged from the impact's and the phases' arrays (NaN: none) and lists: the same
    episodes as built from objects."""
    found = [Episode(1.0 + k, 2.0 + k, 1.0, None, "counters") for k in range(3)]
    impact: dict[str, object] = {f.name: [getattr(Impact(), f.name)] * 3 for f in dataclasses.fields(Impact)}
    impact["ops_ratio"] = np.array([0.5, np.nan, 0.25])
    impact["stall"] = np.array([True, False, False])
    timed = np.array([True, False, True])
    values = {"sync_s": np.array([0.5, 0.7, np.nan]), "handles_s": np.array([0.01, 0.02, 0.03])}
    rows = np.array([[0, 1], [1, 2], [2, 3]])
    table = Episodes.judged(Episodes.of(found), rows, impact, PhaseArrays(timed, values))
    impacts = [Impact(ops_ratio=0.5, stall=True), Impact(), Impact(ops_ratio=0.25)]
    phases = [Phases(sync_s=0.5, handles_s=0.01), None, Phases(handles_s=0.03)]
    want = [
        dataclasses.replace(e, rows=(a, b), impact=i, phases=p)
        for e, (a, b), i, p in zip(found, rows.tolist(), impacts, phases, strict=True)
    ]
    assert list(table) == want
    with pytest.raises(ValueError):
        Episodes.judged(Episodes.of(found), rows, {**impact, "extra": [None] * 3}, [None] * 3)


def test_unjudged_episodes_take_exactly_their_own_fields() -> None:
    """The finder's columns: every own field of an Episode, no impact yet; a field missing or
    foreign is refused."""
    own = Episodes.of([Episode(1.0, 2.0, 1.0, None, "counters", rows=(3, 4))])
    columns = {name: own._columns[name] for name, kind in EPISODE if kind not in ("impact", "phases")}
    made = Episodes.unjudged(columns, 1)
    assert list(made) == list(own)
    with pytest.raises(ValueError):
        Episodes.unjudged({k: v for k, v in columns.items() if k != "start"}, 1)
    with pytest.raises(ValueError):
        Episodes.unjudged({**columns, "impact.stall": columns["truncated"]}, 1)
