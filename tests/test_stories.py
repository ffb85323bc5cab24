"""The story a report tells, exact for each shape of server that misled it before (#28).

Each test writes synthetic FTDC by mongod's encoding rules (tests/ftdc_writer.py) for one shape,
with its exact expected story: the headline, every episode's verdict and reasons, the figures
beside them.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from ftdc_writer import SimServer, write_ftdc

from ckptdiag.analysis.results import Diagnosis
from ckptdiag.analysis.verdict import NO_LOAD
from ckptdiag.workflows.report import diagnose_window

BURSTS = ((600.0, 620.0), (3000.0, 3020.0), (6000.0, 6015.0))
LONG = ((610.0, 618.0), (3010.0, 3018.0))  # 8 s checkpoints inside the first two bursts
HOURS_2 = 7200


def _bursty(tmp_path: Path) -> tuple[Path, SimServer, list[float]]:
    """A 7.0 server idle but for three batch bursts of 110,000 writes/s (sampled every 0.1 s
    while busy, as FTDC does, every second else): a 28 ms checkpoint every 60 s, and two 8 s
    checkpoints inside bursts, each stopping writes for 0.5 s (latency 27x) then running on."""
    short = [(30.0 + 60 * k, 30.028 + 60 * k) for k in range(HOURS_2 // 60)]
    server = SimServer(
        sorted([*short, *LONG]),
        ops=110_000.0,
        stall_ops=1000.0,
        stall_in=[(s + 2, s + 2.5) for s, _ in LONG],
        latency_ms=0.2,
        stall_latency_ms=5.4,
        bursts=BURSTS,
    )
    times: list[float] = []
    t = 0.0
    while t < HOURS_2:
        times.append(round(t, 3))
        t += 0.1 if any(s - 1 <= t < e + 1 for s, e in BURSTS) else 1.0
    path = tmp_path / "metrics.2023-11-14T22-13-20Z-00000"
    write_ftdc(path, server, times)
    return path, server, times


def test_intermittent_bursts_are_judged_against_the_load_they_interrupted(tmp_path: Path) -> None:
    """Busy ~1 % of two hours: the baseline is the bursts' (never the idle hours' 0 ops/s), the
    two 8 s checkpoints inside bursts are the stalls, every 28 ms one between bursts says it had no
    load to interrupt, and the headline names the usual checkpoint, the stalls and the longest."""
    path, server, times = _bursty(tmp_path)
    report = diagnose_window((path,), None, None)
    dx = report.dx
    assert isinstance(dx, Diagnosis)
    assert len(dx.episodes) == HOURS_2 // 60 + len(LONG)
    assert dx.baseline.ops_s == pytest.approx(110_000, rel=1e-3)
    stalled = [e for e in dx.episodes if e.stall]
    assert [round(e.start - server.t0) for e in stalled] == [610, 3010]
    for e in stalled:
        assert e.duration_s == pytest.approx(8.0) and e.reasons == ("throughput and latency",)
        assert e.impact.ops_ratio is not None and e.impact.ops_ratio <= 0.02
        assert e.impact.write_latency_ratio == pytest.approx(27.0, rel=0.02)
    in_burst = [e for e in dx.episodes if any(s <= e.start - server.t0 < end for s, end in BURSTS)]
    assert in_burst == stalled
    for e in dx.episodes:
        if not e.stall:  # between bursts, and 15 s after the last one ended
            assert e.reasons == (NO_LOAD,), (e.start - server.t0, e.reasons)
    assert dx.severity == "warn"
    assert dx.summary.startswith("every 60 s a 28 ms checkpoint writes 64 MB; 2 of 122 stalled: operations drop 99 %")
    assert "the longest, 8.0 s, wrote 64 MB (1 % of usual operations, mean write latency 27.0x)" in dx.summary
    # the mean throughput is the operations done over the time: the counters' own rise
    docs = server.documents([times[0], times[-1]])
    done = docs[1]["serverStatus"]["opcounters"]["insert"] - docs[0]["serverStatus"]["opcounters"]["insert"]
    assert dx.ops_s_mean == pytest.approx(done / (times[-1] - times[0]), rel=1e-3)
    # how the samples came: every spacing named, in the header's words and the JSON's
    (every, share), (every_2, share_2) = dx.spacings
    assert (every, every_2) == (0.1, 1.0) and share + share_2 == pytest.approx(1.0, abs=0.01)
    assert any(n.startswith("samples every 0.1 s (1 % of the time) and 1 s (99 %)") for n in dx.evidence)


def test_intermittent_bursts_draw_the_mean_line_and_their_peak(tmp_path: Path) -> None:
    """The lowest ops/s in each column of a bursty server is 0 throughout: the terminal draws
    the time-weighted mean, and its figure is the highest second's, never "max 0"."""
    from ckptdiag.analysis.timeline import ops_line
    from ckptdiag.report.terminal import timeline_text

    path, _, _ = _bursty(tmp_path)
    dx = diagnose_window((path,), None, None).dx
    assert isinstance(dx, Diagnosis) and dx.timeline is not None
    assert ops_line(dx.timeline) == ("ops/s (mean)", "ops_s_mean")
    line = next(row for row in timeline_text(dx).plain.splitlines() if row.startswith("ops/s"))
    assert line.startswith("ops/s (mean)") and line.endswith("max 110,000")
    assert np.nanmax(dx.timeline["ops_s_mean"].to_numpy(dtype="float64")) > 1000
