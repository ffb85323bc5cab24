"""The dirty data a checkpoint finds, read from the server's own cache between its checkpoints
(#30: predictions within 25 %, the per-checkpoint floor from the server's own history)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from synth import Server

from ckptdiag.advice.rules import recommend
from ckptdiag.analysis.diagnosis import diagnose
from ckptdiag.analysis.dirty_curve import MAX_OFFSET_S, DirtyCurveTally
from ckptdiag.analysis.episode_table import Episodes
from ckptdiag.analysis.series import derive
from ckptdiag.model.facts import ServerFacts

MB = 2**20


def _server(seconds: float = 1800.0) -> Server:
    return Server(seconds=seconds, period=60, duration=1.8, mb_per_s=80 / 1.8, ops=2000, stall_ops=20)


def _with_floor(frame: pd.DataFrame, floor: float) -> None:
    """Dirty data that no checkpoint clears: ``floor`` of what each one finds is there all along."""
    dirty = frame["cache.dirty_bytes"]
    frame["cache.dirty_bytes"] = floor * dirty.max() + (1 - floor) * dirty


def test_the_share_a_checkpoint_would_find_is_read_from_the_cache_between_checkpoints() -> None:
    # dirty data builds up evenly from each checkpoint's start (its snapshot) to the next one's
    dx = diagnose(derive(_server().frame()), ServerFacts(version="7.0.21"))
    curve = dx.dirty_curve
    assert curve is not None
    cycles = len(dx.episodes) - 1  # each checkpoint with the one before it
    for offset in (5, 10, 30, 50):
        share = curve.share(offset)
        assert share is not None and share.cycles == cycles
        # offset s after the end is s + 1.8 s of the 60 s build-up; 1 Hz samples read it within a second
        assert share.mid == pytest.approx((offset + 1.8) / 60, abs=1.2 / 60)
        assert share.low <= share.mid <= share.high and share.high - share.low < 0.02  # every cycle alike
    assert curve.share(59) is None  # no cycle reaches 59 s after an end: the next checkpoint began


def test_what_no_checkpoint_clears_is_the_floor_of_every_prediction() -> None:
    # 40 % of the dirty data stays whatever the interval: at 10 s a checkpoint finds 40 % plus
    # 60 % of 11.8 / 60, not 10 / 60 of it
    frame = _server().frame()
    _with_floor(frame, 0.4)
    dx = diagnose(derive(frame), ServerFacts(version="7.0.21"))
    share = dx.dirty_curve.share(10) if dx.dirty_curve is not None else None
    assert share is not None and share.mid == pytest.approx(0.4 + 0.6 * 11.8 / 60, abs=0.02)
    rec = next(r for r in recommend(dx).recommendations if r.id == "checkpoint-interval")
    after, now = rec.predicted["after"], rec.predicted["now"]
    assert after["bytes_per_checkpoint"] == pytest.approx(now["bytes_per_checkpoint"] * share.mid, rel=1e-6)


def test_dirty_data_held_at_the_target_gets_no_shorter_interval() -> None:
    # the cache holds as much dirty data right after a checkpoint as at the next one (eviction
    # keeps it at the target): a checkpoint every 10 s would find as much and take as long
    frame = _server().frame()
    frame["cache.dirty_bytes"] = float(2**25)
    dx = diagnose(derive(frame), ServerFacts(version="7.0.21"))
    share = dx.dirty_curve.share(10) if dx.dirty_curve is not None else None
    assert share is not None and share.mid == pytest.approx(1.0)
    assert dx.stalls and "checkpoint-interval" not in {r.id for r in recommend(dx).recommendations}


def test_a_gap_inside_a_cycle_leaves_that_cycle_out() -> None:
    tally = DirtyCurveTally()
    t = np.arange(0.0, 130.0)
    dirty = ((t + 0.5) % 60) * MB  # the most at each start
    seam = np.zeros(t.size)
    seam[75] = 1.0  # the collector was off before t=75: the pair from 61.5 to 119.5 is cut
    episodes = _episodes([(-0.5, 1.5), (59.5, 61.5), (119.5, 121.5)])
    tally.block(t, dirty, seam, episodes)
    curve = tally.result()
    assert curve is not None and int(curve.count[10]) == 1  # -0.5 -> 59.5 only
    assert curve.count.size == MAX_OFFSET_S + 1  # whatever the window's length


def test_the_curve_crosses_the_window_s_day_blocks_whole() -> None:
    # two and a half days of checkpoints every 10 minutes, judged a day at a time: every cycle is
    # counted once, those that span a block's seam included
    server = Server(seconds=2.5 * 86_400, sample_s=10.0, period=600, duration=20, mb_per_s=4, ops=2000, stall_ops=20)
    dx = diagnose(derive(server.frame()), ServerFacts(version="7.0.21"))
    curve = dx.dirty_curve
    assert curve is not None
    share = curve.share(300)  # sampled every 10 s: read over 10 s around it
    assert share is not None and share.cycles == len(dx.episodes) - 1
    assert share.mid == pytest.approx((300 + 20) / 600, abs=12 / 600)


def _episodes(spans: list[tuple[float, float]]) -> Episodes:
    """Episodes with these (start, end) times, as the finder gives them."""
    from ckptdiag.analysis.episode import Episode

    return Episodes.of(
        [
            Episode(start=s, end=e, duration_s=e - s, bytes_written=None, evidence="counters", rows=(int(s), int(e)))
            for s, e in spans
        ]
    )


def test_a_pair_of_checkpoints_far_apart_across_blocks_reads_the_level_the_second_found() -> None:
    # a checkpoint ends at 10 s; the next starts at 2,000 s, in a later block: the samples past 901 s
    # after the end are let go of, but the level found at 2,000 s is still the one at 2,000 s
    t = np.arange(0.0, 2_100.0)
    dirty = np.where(t <= 2_000, t, 1.0) * MB  # builds up to 2,000 MB, then the checkpoint clears it
    whole, split = DirtyCurveTally(), DirtyCurveTally()
    first, second = _episodes([(8.0, 10.0)]), _episodes([(2_000.5, 2_003.0)])
    both = _episodes([(8.0, 10.0), (2_000.5, 2_003.0)])
    whole.block(t, dirty, np.zeros(t.size), both)
    cut = 2_001  # the second block's samples begin after the start: the level found is the first block's last
    split.block(t[:cut], dirty[:cut], np.zeros(cut), first)
    split.block(t[cut:], dirty[cut:], np.zeros(t.size - cut), second)
    one, two = whole.result(), split.result()
    assert one is not None and two is not None
    assert np.array_equal(one.count, two.count) and np.allclose(one.total, two.total)
    share = two.share(500)
    assert share is not None and share.mid == pytest.approx(510 / 2_000, abs=0.002)
    # a gap among the samples let go of cuts that pair out, as it does read whole
    seam = np.zeros(t.size)
    seam[1_200] = 1.0
    gapped = DirtyCurveTally()
    gapped.block(t[:cut], dirty[:cut], seam[:cut], first)
    gapped.block(t[cut:], dirty[cut:], seam[cut:], second)
    assert gapped.result() is None
