"""The streaming diagnosis: a window fed a piece at a time is judged exactly as the same window
given whole, whatever the pieces; a long window is judged a day at a time, never held whole."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from conftest import SHARED_DATA
from ftdc_writer import SimServer, write_ftdc
from synth import Server

from ckptdiag.analysis import window as window_module
from ckptdiag.analysis.diagnosis import diagnose, diagnosis
from ckptdiag.analysis.distribution import EXACT_VALUES, Distribution
from ckptdiag.analysis.episode import Impact
from ckptdiag.analysis.results import Diagnosis
from ckptdiag.analysis.series import derive
from ckptdiag.analysis.verdict import hurting
from ckptdiag.analysis.window import WindowDiagnoser
from ckptdiag.model.facts import ServerFacts
from ckptdiag.model.window import WHOLE, TimeWindow
from ckptdiag.workflows.ftdc_window import derive_ftdc
from ckptdiag.workflows.report import diagnose_window

DAY = 86_400


def _in_pieces(d: pd.DataFrame, facts: ServerFacts, rows: int) -> Diagnosis:
    w = WindowDiagnoser(facts)
    for at in range(0, len(d), rows):
        w.add(d.iloc[at : at + rows])
    return diagnosis(w)


def _same(one: Diagnosis, many: Diagnosis) -> None:
    assert one == many  # every figure, episode, note and verdict (the timeline is not compared by ==)
    assert one.timeline is not None and many.timeline is not None
    pd.testing.assert_frame_equal(one.timeline, many.timeline)


def _ten_days(tmp: Path) -> Path:
    """A 7.0 server over ten days, a file a day, sampled every 10 s: a checkpoint every 60 s,
    every tenth one running 4 s and slowing writes, and the load halved every other day."""
    folder = tmp / "diagnostic.data"
    folder.mkdir()
    for day in range(10):
        starts = 30.0 + 60.0 * np.arange(1440)
        server = SimServer(
            [(float(s), float(s) + (4.0 if k % 10 == 0 else 0.05)) for k, s in enumerate(starts)],
            ops=1000.0 if day % 2 else 500.0,
            stall_ops=20.0,
            stall_in=[(float(s), float(s) + 4.0) for s in starts[::10]],
            t0=1_700_000_000.0 + day * DAY,
            uptime0_ms=5_000_000 + day * DAY * 1000,
            _fine=1.0,
        )
        name = dt.datetime.fromtimestamp(server.t0, dt.timezone.utc).strftime("metrics.%Y-%m-%dT%H-%M-%SZ-00000")
        write_ftdc(folder / name, server, [10.0 * i for i in range(DAY // 10)], chunk=300)
    return folder


@pytest.fixture(scope="module")
def ten_days(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _ten_days(tmp_path_factory.mktemp("ten-days"))


def test_a_ten_day_directory_is_judged_a_day_at_a_time_the_same_in_any_pieces(ten_days: Path) -> None:
    whole = derive_ftdc([ten_days], WHOLE, jobs=1)
    assert whole.derived is not None
    facts = ServerFacts(version="7.0.0")
    one = diagnose(whole.derived, facts)
    for rows in (997, 8640, 50_000):
        _same(one, _in_pieces(whole.derived, facts, rows))
    assert len(one.episodes) == 10 * 1440  # every checkpoint the server counted, once
    assert one.history is not None and len(one.history.rows) == 11  # ten days from 22:13 UTC: eleven UTC days
    # the streamed report (files on both cores, never the whole window) is the same diagnosis
    streamed = diagnose_window((ten_days,)).dx
    assert streamed.episodes == one.episodes and streamed.severity == one.severity
    assert streamed.baseline == one.baseline and streamed.evidence == one.evidence


def test_a_long_windows_episodes_are_kept_in_columns_not_objects(ten_days: Path) -> None:
    """What grows with the window is its checkpoints, a few hundred bytes each (an Episode with
    its Impact and Phases as objects held ~800), and no Impact is made until a report reads one."""
    made = []
    original = Impact.__init__

    def counting(self: Impact, *args: object, **kwargs: object) -> None:
        made.append(1)
        original(self, *args, **kwargs)  # type: ignore[arg-type]

    with pytest.MonkeyPatch.context() as m:
        m.setattr(Impact, "__init__", counting)
        dx = diagnose_window((ten_days,)).dx
        assert len(dx.episodes) == 14_400 and dx.episodes.nbytes / len(dx.episodes) <= 300
        # objects only for the checkpoints that hurt (the advice classifies them and writes its notes
        # from them: two reads of 1,440) and a few a day (the close-ups' candidates, the checkpoints
        # a block's context holds), never one per checkpoint
        hurt = int(hurting(dx.episodes).sum())
        assert hurt == 1_439 and len(made) < 2 * hurt + 20 * 10


def test_the_derived_window_is_the_same_in_pieces_of_any_size(ten_days: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each day's file starts its checkpoint counters again without a restart (as a file that
    follows another server's, or a statistics reset): a reset at that row alone, and every figure
    the same whether a file is read in one piece or in pieces of 2,000 rows."""
    from ckptdiag.workflows import ftdc_window

    monkeypatch.setattr(ftdc_window, "ROWS_PER_PIECE", 100_000)
    one = derive_ftdc([ten_days], WHOLE, jobs=1).derived
    monkeypatch.setattr(ftdc_window, "ROWS_PER_PIECE", 2_000)
    many = derive_ftdc([ten_days], WHOLE, jobs=1).derived
    assert one is not None and many is not None
    pd.testing.assert_frame_equal(one, many)
    total = one["ckpt_total_ms"].to_numpy()
    assert int(np.isnan(total).sum()) <= 10  # the window's first row and each day's first


def test_a_window_is_cut_only_where_no_checkpoint_runs(ten_days: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Blocks of an hour: every block ends at a sample whose running flag is down, so no
    checkpoint is cut in two, and every episode is found once."""
    monkeypatch.setattr(window_module, "BLOCK_S", 3600.0)
    whole = derive_ftdc([ten_days], WHOLE, jobs=1)
    assert whole.derived is not None
    short = diagnose(whole.derived, ServerFacts(version="7.0.0"))
    assert len(short.episodes) == 10 * 1440
    starts = [e.start for e in short.episodes]
    assert starts == sorted(starts) and len(set(starts)) == len(starts)
    _same(short, _in_pieces(whole.derived, ServerFacts(version="7.0.0"), 4321))


def test_each_day_ends_at_its_own_mark_whatever_the_blocks_before_it(
    ten_days: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A block ends at the first quiet sample from each whole day after the window's first sample
    (its mark), not a day after the block before ended: blocks cut early (``BLOCK_ROWS``) leave
    every day's end where it was, so a day can be judged knowing only its own rows."""
    whole = derive_ftdc([ten_days], WHOLE, jobs=1)
    assert whole.derived is not None
    t = whole.derived["t"].to_numpy()

    def ends(rows: int) -> list[float]:
        judged: list[float] = []
        real = WindowDiagnoser._judge

        def judge(self: WindowDiagnoser, d: pd.DataFrame, first: int, last: int, final: bool) -> None:
            judged.append(float(d["t"].iloc[last]))
            real(self, d, first, last, final)

        with monkeypatch.context() as mp:
            mp.setattr(window_module, "BLOCK_ROWS", rows)
            mp.setattr(WindowDiagnoser, "_judge", judge)
            _in_pieces(whole.derived, ServerFacts(version="7.0.0"), 5000)
        return judged

    days = ends(1 << 18)
    marks = [float(t[0]) + k * DAY for k in range(1, 10)]
    assert len(days) == 10 and all(0 <= end - mark < 60 for end, mark in zip(days, marks, strict=False))
    early = ends(3000)  # ~8 h of 10 s samples: two cuts more in every day
    assert len(early) > 20 and set(days) <= set(early)


SHARED_FTDC = sorted(
    p for p in (SHARED_DATA / "ftdc").rglob("*metrics.*") if p.is_file() and p.stat().st_size > 1_000_000
)[:6]


@pytest.mark.parametrize("path", SHARED_FTDC, ids=lambda p: p.name[:40])
def test_every_shared_input_in_pieces_and_blocks_is_the_same(path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Real FTDC, cut into blocks of two hours and fed in pieces of 1,013 rows, against the same
    blocks fed whole (the shared inputs are a few days: one block by default, as always judged)."""
    monkeypatch.setattr(window_module, "BLOCK_S", 7200.0)
    whole = derive_ftdc([path], WHOLE, jobs=1)
    assert whole.derived is not None
    facts = ServerFacts(version="4.2.0")
    _same(diagnose(whole.derived, facts), _in_pieces(whole.derived, facts, 1013))


def test_the_distribution_is_exact_then_binned_and_never_depends_on_the_pieces() -> None:
    rng = np.random.default_rng(7)
    small = rng.lognormal(3, 1, 5000)
    d = Distribution()
    d.add(small)
    assert d.median() == float(np.median(small)) and d.quantile(90) == float(np.percentile(small, 90))
    big = rng.lognormal(3, 2, EXACT_VALUES + 1000).astype(np.float32)
    one, many = Distribution(), Distribution()
    one.add(big)
    for part in np.array_split(big, 13):
        many.add(part)
    exact = float(np.median(big.astype(np.float64)))
    assert one.median() == many.median()
    assert one.median() == pytest.approx(exact, rel=5e-4)  # bins 2**-12 of the value wide
    assert one.quantile(10) == pytest.approx(float(np.percentile(big.astype(np.float64), 10)), rel=5e-4)


def test_bins_counted_by_position_or_by_sorting_are_the_same() -> None:
    """Values spanning a few octaves are counted into bins by position, values with far outliers
    by sorting their keys: fed in pieces either way, the quantiles are those of one go."""
    rng = np.random.default_rng(5)
    near = rng.lognormal(3, 0.5, EXACT_VALUES + 3000)
    far = near.copy()
    far[::5000] = 1e30  # a span of bins far wider than the values: sorted
    for values in (near, far):
        one, many = Distribution(), Distribution()
        one.add(values)
        for part in np.array_split(values, 29):
            many.add(part)
        for q in (1.0, 50.0, 99.0):
            assert one.quantile(q) == many.quantile(q)
            assert one.quantile(q) == pytest.approx(float(np.percentile(values, q)), rel=5e-4)


def test_chunks_far_outside_the_window_are_passed_over_and_change_nothing_in_it(
    ten_days: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A window of a day in ten: the chunks an hour or more outside it are not decoded (their
    ``_id`` says so), and the window's figures are exactly those read with every chunk decoded;
    the empty-window error still names the files' whole range."""
    from ckptdiag.errors import InputError
    from ckptdiag.sources.ftdc import files as ftdc_files

    t0_ms = 1_700_000_000_000
    window = TimeWindow(t0_ms + 3 * DAY * 1000 + 3_600_000, t0_ms + 4 * DAY * 1000)
    passed = derive_ftdc([ten_days], window, jobs=1)
    assert passed.derived is not None
    assert sum(r.skipped for r in passed.data.reports) > 200
    monkeypatch.setattr(ftdc_files, "FAR_MS", 10**15)
    every = derive_ftdc([ten_days], window, jobs=1)
    assert every.derived is not None and sum(r.skipped for r in every.data.reports) == 0
    pd.testing.assert_frame_equal(passed.derived, every.derived, check_exact=True)
    assert (passed.gaps, passed.restarts) == (every.gaps, every.restarts)
    monkeypatch.undo()
    with pytest.raises(InputError, match="the files hold 2023-11-14T22:13:20Z to 2023-11-24T22:13:10Z"):
        derive_ftdc([ten_days], TimeWindow(t0_ms - 10 * DAY * 1000, t0_ms - 9 * DAY * 1000), jobs=1)


def test_a_source_without_a_running_flag_is_never_joined_again_at_every_part(
    ten_days: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Checkpoint counters but no running flag: no quiet sample, so no block ends before the
    window does; the rows held are joined once at the end, not at every part (that was
    quadratic in the window), and the window is judged whole, as one block."""
    whole = derive_ftdc([ten_days], WHOLE, jobs=1)
    assert whole.derived is not None
    flagless = whole.derived.assign(ckpt_running=np.nan)
    joins = []
    held = WindowDiagnoser._held

    def counted(self: WindowDiagnoser) -> pd.DataFrame:
        joins.append(len(self._parts))
        return held(self)

    monkeypatch.setattr(WindowDiagnoser, "_held", counted)
    facts = ServerFacts(version="7.0.0")
    streamed = _in_pieces(flagless, facts, 5000)
    assert len(joins) == 1  # once, at the end
    monkeypatch.undo()
    assert streamed == diagnose(flagless, facts)


def test_every_checkpoint_before_a_block_keeps_its_samples_out_of_the_baselines(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Checkpoints every 15 s (a short interval, as ckptdiag may advise), each 9 s with writes 40x
    slower: twenty of them lie in the five minutes before a block, and every one keeps its
    seconds out of the baselines of the block's first checkpoints (were only the last eight kept
    out, the slow seconds before them would make the usual second a slow one). Judged in blocks
    of an hour, every checkpoint (each has samples of its own to be judged against) reads as in one."""
    starts = 30.0 + 15.0 * np.arange(3 * 240)
    server = SimServer([(float(s), float(s) + 9.0) for s in starts], _fine=0.1)
    path = tmp_path / "metrics.2023-11-14T22-13-20Z-00000"
    write_ftdc(path, server, [float(i) for i in range(3 * 3600 + 60)])
    whole = derive_ftdc([path], WHOLE, jobs=1)
    assert whole.derived is not None
    facts = ServerFacts(version="7.0.0")
    one = diagnose(whole.derived, facts)
    monkeypatch.setattr(window_module, "BLOCK_S", 3600.0)
    hourly = diagnose(whole.derived, facts)
    assert len(hourly.episodes) == len(one.episodes) == starts.size
    judged = [(e.impact.ops_s_baseline, e.impact.write_latency_ratio, e.stall) for e in one.episodes]
    assert [(e.impact.ops_s_baseline, e.impact.write_latency_ratio, e.stall) for e in hourly.episodes] == judged
    assert {ratio for _, ratio, _ in judged} != {None}


def test_a_window_without_checkpoint_statistics_finds_its_disk_bursts_in_every_block(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """MMAPv1-like samples (no checkpoint counters) over two hours cut into half-hour blocks: the
    write bursts of every block are found, as in the window judged whole (a block after the
    first was read as if it had counters, and found none)."""
    d = derive(Server(counters=False, stall=False, seconds=7200).frame())
    whole = diagnose(d, ServerFacts())
    monkeypatch.setattr(window_module, "BLOCK_S", 1800.0)
    blocks = _in_pieces(d, ServerFacts(), 600)
    assert len(whole.episodes) == 120 and {e.evidence for e in whole.episodes} == {"disk-burst"}
    assert list(blocks.episodes) == list(whole.episodes)
