"""The server's counters are the truth for what happened; the samples only place it in time.

On every real FTDC file: as many episodes as the start counter rose, durations that add up to
the rise of total time. On synthetic FTDC written by mongod's encoding rules with 0.1, 1 and
10 s spacing (and a period change inside a chunk): every checkpoint, its exact duration, and a
start window that holds the true start.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from conftest import SHARED_DATA
from ftdc_writer import SimServer, write_ftdc

from ckptdiag.errors import CkptdiagError
from ckptdiag.sources.ftdc import read_ftdc
from ckptdiag.workflows.report import diagnose_window

_NOT_FTDC = {".npz", ".paths", ".md", ".json", ".tsv", ".txt", ".csv", ".gz"}


def _real_files() -> list[Path]:
    folder = SHARED_DATA / "ftdc"
    if not folder.is_dir():
        return []
    return sorted(p for p in folder.rglob("*") if p.is_file() and p.suffix not in _NOT_FTDC)


def _segments_truth(frame: object) -> tuple[float, float]:
    """Checkpoints begun and ms spent in checkpoints, by the raw counters, over each restart-free
    stretch: the counters are monotone there, so their rise is highest minus first."""
    import pandas as pd

    assert isinstance(frame, pd.DataFrame)
    starts = "ckpt.count" if "ckpt.count" in frame else "ckpt.generation"
    begun = spent = 0.0
    for _, part in frame.groupby("segment"):
        for name, into in ((starts, "begun"), ("ckpt.total_ms", "spent")):
            if name not in part:
                continue
            values = part[name].to_numpy(dtype="float64")
            values = values[np.isfinite(values)]
            if values.size:
                rise = float(values.max() - values[0])
                if into == "begun":
                    begun += rise
                else:
                    spent += rise
    return begun, spent


@pytest.mark.parametrize("path", _real_files(), ids=lambda p: p.name[:60])
def test_every_real_file_has_one_episode_per_checkpoint_its_counters_record(path: Path) -> None:
    try:
        report = diagnose_window((path,))
    except CkptdiagError:
        pytest.skip("not a mongod FTDC file with samples (a named error, covered by test_corpus)")
    frame = read_ftdc([path]).frame
    if "ckpt.total_ms" not in frame:
        pytest.skip("no checkpoint statistics in this file")
    begun, spent = _segments_truth(frame)
    episodes = report.dx.episodes
    assert sum(not e.truncated for e in episodes) == begun
    ended = [e for e in episodes if e.end is not None and e.duration_s is not None]
    assert sum(e.duration_s or 0.0 for e in ended) * 1000 == pytest.approx(spent, abs=max(1.0, len(ended)))
    spacing = np.diff(frame["t"].to_numpy())
    total = frame["ckpt.total_ms"].to_numpy(dtype="float64")
    for e in ended:
        if e.exact_duration and e.rows[1] > 0:
            k = e.rows[1]
            ms = (e.duration_s or 0.0) * 1000
            # an exact duration is the counters' own figure (whole ms), never a sample spacing ...
            assert ms == pytest.approx(round(ms), abs=1e-6)
            if abs(ms - 1000 * float(spacing[k - 1])) < 1:
                # ... unless the counters say so: total time rose by at least that much there
                assert total[k] - total[k - 1] >= ms - 1


def _checkpoints(n: int, every: float, first: float) -> list[tuple[float, float]]:
    lengths = [1.234, 2.5, 0.8, 3.1, 0.45, 6.2, 1.9, 0.3, 2.2, 4.4, 1.1, 0.7, 2.8, 1.6, 0.9, 3.3, 2.0, 1.5, 0.6, 2.4]
    return [(first + i * every, first + i * every + lengths[i % len(lengths)]) for i in range(n)]


def _check_exact(path: Path, server: SimServer) -> list[float]:
    report = diagnose_window((path,))
    episodes = report.dx.episodes
    assert len(episodes) == len(server.checkpoints)
    for (start, end), e in zip(server.checkpoints, episodes, strict=True):
        assert e.exact_duration and e.duration_s == pytest.approx(end - start, abs=5e-4)
        assert e.start_earliest is not None and e.start_latest is not None
        assert e.start_earliest - 1e-6 <= server.t0 + start <= e.start_latest + 1e-6
        assert e.end is not None and e.end - e.start == pytest.approx(end - start, abs=5e-4)
    return [e.start_latest - e.start_earliest for e in episodes if e.start_latest and e.start_earliest]


def test_mixed_spacing_loses_no_checkpoint_and_keeps_the_servers_durations(tmp_path: Path) -> None:
    # 0.1 s, then 1 s, then 10 s (a busy server's collector falling behind), then 1 s again;
    # several checkpoints lie entirely inside one 10 s interval
    times = [
        *np.round(np.arange(0, 60, 0.1), 3),
        *np.arange(60, 360, 1.0),
        *np.arange(360, 960, 10.0),
        *np.arange(960, 1200, 1.0),
    ]
    server = SimServer(_checkpoints(20, 61.7, 7.3), stall_ops=100)
    path = tmp_path / "metrics.mixed"
    write_ftdc(path, server, [float(t) for t in times])
    widths = _check_exact(path, server)
    assert max(widths) <= 10.0  # placed within a 10 s interval at worst
    report = diagnose_window((path,))
    assert report.dx.gaps == 0  # a slower collector is not a gap: rates over the real time
    inside_10s = [
        e for e in report.dx.episodes if e.start_latest and e.start_earliest and e.start_latest - e.start_earliest > 1.5
    ]
    assert inside_10s and all(e.impact.ops_ratio is not None for e in inside_10s)


def test_a_period_change_inside_a_chunk(tmp_path: Path) -> None:
    times = [*np.arange(0, 200, 1.0), *np.arange(200, 800, 10.0), *np.round(np.arange(800, 830, 0.1), 3)]
    server = SimServer(_checkpoints(13, 60.0, 25.5))
    path = tmp_path / "metrics.change"
    write_ftdc(path, server, [float(t) for t in times], chunk=400)  # one chunk spans the 1 s -> 10 s change
    _check_exact(path, server)


def test_several_checkpoints_inside_one_interval_share_its_total_time(tmp_path: Path) -> None:
    # every 3 s for 0.5 s, sampled every 10 s: three or four begin and end in each interval
    server = SimServer([(2.0 + 3 * i, 2.5 + 3 * i) for i in range(60)])
    path = tmp_path / "metrics.dense"
    write_ftdc(path, server, [float(t) for t in np.arange(0, 190, 10.0)])
    report = diagnose_window((path,))
    episodes = report.dx.episodes
    assert len(episodes) == 60
    assert sum(e.duration_s or 0 for e in episodes) == pytest.approx(30.0, abs=1e-3)
    for (start, _), e in zip(server.checkpoints, episodes, strict=True):
        assert e.start_earliest is not None and e.start_latest is not None
        assert e.start_earliest - 1e-6 <= server.t0 + start <= e.start_latest + 1e-6


def test_a_flag_still_up_after_a_short_checkpoint_does_not_move_its_end(tmp_path: Path) -> None:
    # real FTDC: a 108 ms checkpoint begun and ended between two samples, the flag still up at
    # the second (the server records the time before it clears the flag)
    server = SimServer([(10.3, 10.408), (70.2, 72.2)], flag_lag_s=0.8)
    path = tmp_path / "metrics.lag"
    write_ftdc(path, server, [float(t) for t in np.arange(0, 120, 1.0)])
    episodes = diagnose_window((path,)).dx.episodes
    assert [round(e.duration_s or 0, 3) for e in episodes] == [0.108, 2.0]


def test_back_to_back_checkpoints_under_load_get_the_load_as_their_baseline(tmp_path: Path) -> None:
    # idle for a minute, then 1,000 ops/s with checkpoints back to back (6 s every 6 s), each
    # slowing the first 1.5 s to 15 %: no sample under load lies away from a checkpoint
    checkpoints = [(60.0 + 6 * i, 66.0 + 6 * i) for i in range(90)]
    server = SimServer(checkpoints, load_from=60.0, stall_ops=150.0, stall_in=[(s, s + 1.5) for s, _ in checkpoints])
    path = tmp_path / "metrics.backtoback"
    write_ftdc(path, server, [float(t) for t in np.arange(0, 600, 1.0)])
    dx = diagnose_window((path,)).dx
    assert dx.baseline.estimated and dx.baseline.ops_s == pytest.approx(server.ops, rel=0.10)  # not the idle 0
    assert any("back to back" in note for note in dx.evidence)
    loaded = [e for e in dx.episodes if e.start > server.t0 + 62 and e.end is not None]
    assert loaded and all(e.impact.ops_ratio is not None and e.impact.write_latency_ratio is not None for e in loaded)
    assert sum(e.stall for e in loaded) >= 0.9 * len(loaded) and dx.severity == "critical"
    # the reports say what the baseline was made from, as the evidence does (never "N samples away
    # from checkpoints" beside a note that none lies away from one)
    from ckptdiag.report.markdown import render_markdown
    from ckptdiag.report.terminal import render_text

    report = diagnose_window((path,))
    for text in (render_markdown(report), render_text(report)):
        assert "baseline (estimated from" in text and "samples away from checkpoints" not in text


def test_a_secondary_that_falls_behind_in_its_checkpoints(tmp_path: Path) -> None:
    # FTDC of a secondary: apply slows to 10 % in each checkpoint and replication lag grows by the
    # checkpoint's length (replSetGetStatus: the primary's optime less this member's)
    checkpoints = [(30.0 + 60 * i, 33.0 + 60 * i) for i in range(9)]
    server = SimServer(checkpoints, stall_ops=100.0, secondary=True)
    path = tmp_path / "metrics.secondary"
    write_ftdc(path, server, [float(t) for t in np.arange(0, 570, 1.0)])
    report = diagnose_window((path,))
    dx = report.dx
    assert dx.role == "secondary" and dx.severity == "critical" and dx.stalls == len(checkpoints)
    growth = [e.impact.repl_lag_growth_s for e in dx.episodes]
    assert all(g is not None and 2.5 <= g <= 3.6 for g in growth), growth
    assert any(f.startswith("replication lag grew through 9 of 9 checkpoints") for f in dx.findings)
    # the same server as primary: no lag, no secondary
    primary = diagnose_window((_primary_twin(tmp_path, checkpoints),)).dx
    assert primary.role is None and not any("replication lag" in f for f in primary.findings)
    assert primary.stalls == len(checkpoints)


def _primary_twin(tmp_path: Path, checkpoints: list[tuple[float, float]]) -> Path:
    path = tmp_path / "metrics.primary"
    write_ftdc(path, SimServer(checkpoints, stall_ops=100.0), [float(t) for t in np.arange(0, 570, 1.0)])
    return path
