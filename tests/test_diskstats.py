"""/proc/diskstats parsing and the iostat -x formulas, against hand-computed values."""

from __future__ import annotations

from pathlib import Path

import pytest

from ckptdiag.model.disk import DiskCounters, device_was_reset, disk_rates
from ckptdiag.sources.diskstats import parse_diskstats

DATA = Path(__file__).parent / "data" / "diskstats"


def _read(name: str) -> dict[str, tuple[DiskCounters, int]]:
    return parse_diskstats((DATA / name).read_text())


def test_parse_20_18_14_and_7_field_lines() -> None:
    k515 = _read("kernel-5.15-20fields.txt")
    vda, n = k515["vda"]
    assert n == 17
    assert (vda.rd_ios, vda.wr_sectors, vda.tot_ticks, vda.rq_ticks) == (1000, 400000, 1500, 4000)
    assert (vda.dc_ios, vda.dc_sectors, vda.fl_ios, vda.fl_ticks) == (50, 1000, 100, 30)
    assert set(k515) == {"vda", "vda1", "vdb", "loop0", "dm-0"}

    sda, n = _read("kernel-4.18-18fields.txt")["sda"]
    assert n == 15 and sda.dc_ticks == 40 and sda.fl_ios == 0

    xvda, n = _read("kernel-4.4-14fields.txt")["xvda"]
    assert n == 11 and xvda.rq_ticks == 3172752 and xvda.dc_ios == 0

    hda1, n = _read("kernel-2.6-partition-7fields.txt")["hda1"]
    assert n == 4 and (hda1.rd_ios, hda1.rd_sectors, hda1.wr_ios, hda1.wr_sectors) == (35486, 38030, 38030, 38030)


def test_garbage_lines_are_ignored() -> None:
    text = "\n  \nnot a diskstats line\n 8 0 sda x y z 1 2 3 4 5 6 7 8\n 8 0 sdb 1 2 3\n"
    assert parse_diskstats(text) == {}


def test_iostat_figures_match_hand_computation() -> None:
    prev = _read("kernel-5.15-20fields.txt")["vda"][0]
    curr = _read("kernel-5.15-20fields-after-2s.txt")["vda"][0]
    r = disk_rates(prev, curr, 2.0)
    assert r.r_s == 50.0  # 100 reads / 2 s
    assert r.rmb_s == 0.5  # 2048 sectors * 512 B = 1 MiB over 2 s
    assert r.r_await == 0.6  # 60 ms / 100 reads
    assert r.w_s == 200.0
    assert r.wmb_s == 50.0  # 204800 sectors = 100 MiB over 2 s
    assert r.w_await == 2.0  # 800 ms / 400 writes
    assert r.wrqm_s == 25.0
    assert r.d_s == 5.0 and r.f_s == 10.0
    assert r.await_ms == pytest.approx(865 / 510)  # reads+writes+discards; flushes excluded
    assert r.aqu_sz == 1.0  # 2000 ms queue time / 2000 ms
    assert r.util_pct == 50.0  # 1000 ms busy / 2000 ms
    assert r.wareq_sz_kb == 256.0


def test_iostat_gives_the_figures_asked_for_exactly_as_all_of_them() -> None:
    """A long window's disks read five of iostat's fourteen figures: asked for alone, through a
    reset, a wrap and a counter gone back, they are the same arrays bit for bit."""
    import numpy as np

    from ckptdiag.model.disk import FIELD_INDEX, iostat

    rng = np.random.default_rng(11)
    curr = np.cumsum(rng.integers(0, 5000, (200, len(FIELD_INDEX))), axis=0).astype("float64")
    curr[120] = 1.0  # removed and inserted again
    curr[150, FIELD_INDEX["wr_ticks"]] = 2.0**32 + 5  # an unsigned int that wrapped
    curr[170, FIELD_INDEX["wr_merges"]] = 0.0  # one counter gone back
    curr[40, 3] = np.nan
    prev = np.vstack([np.full((1, curr.shape[1]), np.nan), curr[:-1]])
    dt = rng.uniform(0.5, 2.0, 200)
    every = iostat(prev, curr, dt)
    wanted = ("wmb_s", "w_s", "util_pct", "w_await", "aqu_sz")
    some = iostat(prev, curr, dt, wanted=wanted)
    assert set(some) == set(wanted)
    for name in wanted:
        np.testing.assert_array_equal(some[name], every[name])


def test_tick_counters_wrap_at_32_bits() -> None:
    prev = DiskCounters(wr_ios=1000, wr_ticks=2**32 - 100)
    curr = DiskCounters(wr_ios=1100, wr_ticks=300)
    assert disk_rates(prev, curr, 1.0).w_await == 4.0  # 400 ms over 100 writes


def test_a_tick_counter_that_went_back_from_low_did_not_wrap_and_gives_no_await() -> None:
    """A 32-bit tick counter wraps from near 2**32 to near 0; one that went back from 110,876 ms
    (a device's accounting read out of order) read as a wrap gave a 3-hour await in a 150 s run."""
    import math

    prev = DiskCounters(wr_ios=119_276, wr_ticks=110_876)
    curr = DiskCounters(wr_ios=119_277, wr_ticks=110_500)
    r = disk_rates(prev, curr, 1.0)
    assert math.isnan(r.w_await) and r.w_s == 1.0


def test_a_counter_going_back_gives_no_rate() -> None:
    prev = DiskCounters(rd_ios=500, rd_sectors=1000, wr_ios=500, wr_sectors=1000)
    curr = DiskCounters(rd_ios=400, rd_sectors=2000, wr_ios=600, wr_sectors=3000)
    r = disk_rates(prev, curr, 1.0)
    assert r.r_s == 0.0 and r.w_s == 100.0 and r.r_await == 0.0


def test_device_removed_and_inserted_again_counts_from_zero() -> None:
    prev = DiskCounters(rd_ios=5000, rd_sectors=80000, wr_ios=9000, wr_sectors=900000, tot_ticks=70000)
    curr = DiskCounters(rd_ios=10, rd_sectors=160, wr_ios=20, wr_sectors=2048, tot_ticks=500)
    assert device_was_reset(prev, curr)
    r = disk_rates(prev, curr, 1.0)
    assert (r.r_s, r.w_s, r.wmb_s, r.util_pct) == (10.0, 20.0, 1.0, 50.0)


def test_zero_interval_is_treated_as_one_second() -> None:
    r = disk_rates(DiskCounters(), DiskCounters(wr_ios=7), 0.0)
    assert r.w_s == 7.0


def test_no_io_means_zero_averages_not_division_errors() -> None:
    same = DiskCounters(rd_ios=3, wr_ios=4)
    r = disk_rates(same, same, 1.0)
    assert (r.r_await, r.w_await, r.await_ms, r.wareq_sz_kb) == (0.0, 0.0, 0.0, 0.0)


def test_round_trip_through_recording_lists() -> None:
    c, n = _read("kernel-4.18-18fields.txt")["sda"]
    assert DiskCounters.from_list(c.as_list(n)) == c


def _parity_samples() -> list[dict]:
    """A disk through a 32-bit tick wrap and a device reset (removed and inserted again)."""
    from fakes import status_doc

    from ckptdiag.recording import build_sample

    wrap = 2**32
    counters = [
        DiskCounters(wr_ios=1_000, wr_sectors=80_000, wr_ticks=wrap - 300, tot_ticks=5_000, rq_ticks=9_000),
        # wr_ticks wrapped: 300 + 500 = 800 ms over 200 writes
        DiskCounters(wr_ios=1_200, wr_sectors=120_000, wr_ticks=500, tot_ticks=5_400, rq_ticks=9_600),
        # the device was removed and inserted again: everything counts from zero
        DiskCounters(wr_ios=50, wr_sectors=4_000, wr_ticks=100, tot_ticks=300, rq_ticks=450),
        DiskCounters(wr_ios=150, wr_sectors=24_000, wr_ticks=300, tot_ticks=700, rq_ticks=1_050),
    ]
    return [
        build_sample(status_doc(i), seq=i, wall=1_700_000_000.0 + i, mono=100.0 + i, rtt_ms=1.0, disks={"vda": (c, 17)})
        for i, c in enumerate(counters)
    ]


def test_the_live_line_and_the_report_give_the_same_iostat_figures_through_a_wrap_and_a_reset() -> None:
    from ckptdiag.analysis.instant import instant
    from ckptdiag.analysis.series import derive
    from ckptdiag.recording import samples_frame

    samples = _parity_samples()
    d = derive(samples_frame(samples))
    for i in range(1, len(samples)):
        prev = DiskCounters.from_list(samples[i - 1]["disk"]["vda"])
        curr = DiskCounters.from_list(samples[i]["disk"]["vda"])
        live = disk_rates(prev, curr, 1.0)
        row = d.iloc[i]
        got = (row["disk.vda.wmb_s"], row["disk.vda.w_s"], row["disk.vda.util_pct"], row["disk.vda.w_await_ms"])
        assert got == (live.wmb_s, live.w_s, live.util_pct, live.w_await)
        assert row["disk.vda.aqu_sz"] == live.aqu_sz
        shown = instant(samples[i - 1], samples[i])
        assert (shown.disk_write_mb_s, shown.disk_util_pct) == (live.wmb_s, live.util_pct)
    wrapped, reset = d.iloc[1], d.iloc[2]
    assert wrapped["disk.vda.w_await_ms"] == 4.0  # 800 ms over 200 writes
    assert (wrapped["disk.vda.util_pct"], wrapped["disk.vda.aqu_sz"]) == (40.0, 0.6)
    # after the reset the interval counts from zero: 300 ms busy, 450 ms queued, 50 writes
    assert (reset["disk.vda.util_pct"], reset["disk.vda.aqu_sz"], reset["disk.vda.w_s"]) == (30.0, 0.45, 50.0)


def test_a_busy_time_counter_that_jumped_is_no_figure_never_100_percent() -> None:
    """io_ticks rose 30 s in a 1 s interval (a suspend and resume): %util is unknown, never the
    clipped 100 % a saturated disk shows; a little over the interval (clock skew) is 100 %."""
    from ckptdiag.model.disk import DiskCounters, disk_rates

    prev = DiskCounters(wr_ios=100, wr_sectors=2048, wr_ticks=50, tot_ticks=400, rq_ticks=500)
    jumped = DiskCounters(wr_ios=300, wr_sectors=206848, wr_ticks=450, tot_ticks=30_400, rq_ticks=1500)
    skewed = DiskCounters(wr_ios=300, wr_sectors=206848, wr_ticks=450, tot_ticks=1_410, rq_ticks=1500)
    import math

    assert math.isnan(disk_rates(prev, jumped, 1.0).util_pct)
    assert disk_rates(prev, skewed, 1.0).util_pct == 100.0
