"""The baseline: the server's usual second under the load its checkpoints interrupt.

Candidates are the samples at least ``BASELINE_CLEAR_BEFORE_S`` before and
``BASELINE_CLEAR_AFTER_S`` after every episode, under load: where the window has load at all
(``BASELINE_MIN_SAMPLES`` samples doing ``MIN_BASELINE_OPS`` or more, however brief its bursts), a
sample doing fewer is an idle stretch (before the load began, after it stopped, between batches)
and never a baseline. Each episode is
measured against the candidates of the ``BASELINE_WINDOW_S`` before it, else around it, else the
whole window's. When no checkpoint-free sample exists under load (checkpoints back to back), the
baseline is an estimate of the undisturbed load from the loaded samples themselves: the
``ESTIMATE_HIGH_QUANTILE`` of throughput and the ``ESTIMATE_LOW_QUANTILE`` of latency, and the
evidence says so.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ckptdiag.analysis.columns import Columns
from ckptdiag.analysis.distribution import Distribution
from ckptdiag.analysis.episode_table import Episodes
from ckptdiag.analysis.results import Baseline
from ckptdiag.analysis.stats import sums_before
from ckptdiag.analysis.thresholds import (
    BASELINE_MIN_SAMPLES,
    BASELINE_WINDOW_S,
    MIN_BASELINE_OPS,
)

ESTIMATE_HIGH_QUANTILE = 90.0
ESTIMATE_LOW_QUANTILE = 10.0


def near_episodes(t: np.ndarray, episodes: Episodes, before: float, after: float) -> np.ndarray:
    """Samples whose interval comes within ``before``/``after`` seconds of an episode."""
    mark = np.zeros(t.size + 1, dtype=np.int64)
    if len(episodes) and t.size:
        starts = episodes.floats("start")
        ends = np.where(episodes.known("end"), episodes.floats("end"), t[-1])
        lo = np.searchsorted(t, starts - before, side="right")
        hi = np.searchsorted(t, ends + after, side="left")
        np.add.at(mark, lo, 1)
        np.add.at(mark, np.minimum(hi + 1, t.size), -1)
    near: np.ndarray = np.cumsum(mark[:-1]) > 0
    return near


def baseline(cols: Columns, rows: np.ndarray) -> Baseline:
    """The median second over ``rows`` (a boolean mask)."""
    figures = _Figures()
    figures.add(cols, rows)
    return figures.median()


LOCAL_FIGURES = ("ops_s", "write_lat_ms", "write_p99_ms", "read_lat_ms")  # what an episode is judged by
GATHER_LIMIT = 1 << 20  # values gathered at once for the medians of episodes with as many rows


@dataclass(frozen=True)
class LocalFigures:
    """Each episode's local baseline as arrays (NaN: the figure is the whole window's where it
    has one): the samples, and the medians an episode is judged by (:data:`LOCAL_FIGURES`)."""

    samples: np.ndarray
    enough: np.ndarray  # BASELINE_MIN_SAMPLES or more: a local baseline at all
    ops_s: np.ndarray
    write_lat_ms: np.ndarray
    write_p99_ms: np.ndarray
    read_lat_ms: np.ndarray


def local_figures(
    cols: Columns, base_rows: np.ndarray, whole: Baseline, starts: np.ndarray, ends: np.ndarray
) -> LocalFigures:
    """The load each episode interrupted: the baseline samples of the ``BASELINE_WINDOW_S`` before
    it, else of the window around it; a figure those samples do not give is the ``whole``
    window's, as are all of them with fewer than ``BASELINE_MIN_SAMPLES`` samples. The medians of
    the episodes with the same number of samples (most of a regular server's) are taken together."""
    t = cols.t
    counted = sums_before(base_rows)
    a = np.searchsorted(t, starts - BASELINE_WINDOW_S)
    b = np.searchsorted(t, starts)
    short = counted[b] - counted[a] < BASELINE_MIN_SAMPLES
    b = np.where(short, np.searchsorted(t, ends + BASELINE_WINDOW_S), b)
    first, stop = counted[a], counted[b]  # each episode's samples: candidates first to stop - 1
    size = stop - first
    enough = size >= BASELINE_MIN_SAMPLES
    rows = np.flatnonzero(base_rows)

    def figure(name: str) -> np.ndarray:
        local = _medians(getattr(cols, name)[rows], first, size, enough)
        fallback = getattr(whole, name)
        return np.where(np.isnan(local), np.nan if fallback is None else fallback, local)

    return LocalFigures(size, enough, *(figure(name) for name in LOCAL_FIGURES))


def local_baselines(
    cols: Columns, base_rows: np.ndarray, whole: Baseline, starts: np.ndarray, ends: np.ndarray
) -> list[Baseline]:
    """:func:`local_figures` as each episode's :class:`Baseline` (the rest of its figures, disk and
    writes, the whole window's)."""
    f = local_figures(cols, base_rows, whole, starts, ends)
    listed = [[None if v != v else v for v in getattr(f, name).tolist()] for name in LOCAL_FIGURES]
    out = []
    for k in range(starts.size):
        if not f.enough[k]:
            out.append(whole)
            continue
        ops, lat, p99, read = (column[k] for column in listed)
        out.append(
            Baseline(
                samples=int(f.samples[k]),
                ops_s=ops,
                writes_s=whole.writes_s,
                write_lat_ms=lat,
                write_p99_ms=p99,
                read_lat_ms=read,
                disk_write_mb_s=whole.disk_write_mb_s,
                disk_util_pct=whole.disk_util_pct,
                estimated=whole.estimated,
            )
        )
    return out


def _medians(values: np.ndarray, first: np.ndarray, size: np.ndarray, wanted: np.ndarray) -> np.ndarray:
    """The median of the finite ``values[first[k] : first[k] + size[k]]`` for each wanted ``k``
    (NaN: none finite, or not wanted), as :func:`ckptdiag.analysis.stats.nanmedian` takes it."""
    out = np.full(first.size, np.nan)
    # the finite values alone, in order: each episode's finite ones are still one run of them
    # (NaN among them: a reply without the figure; taking each such median alone cost 10x)
    known = np.isfinite(values)
    finite = sums_before(known)
    values = values[known]
    first, size = finite[first], finite[first + size] - finite[first]
    clean = wanted & (size > 0)
    for n in np.unique(size[clean]).tolist():
        group = np.flatnonzero(clean & (size == n))
        step = max(1, GATHER_LIMIT // n)
        for at in range(0, group.size, step):
            ks = group[at : at + step]
            block = values[first[ks][:, None] + np.arange(n)]
            low, high = (n - 1) // 2, n // 2
            part = np.partition(block, (low, high), axis=1)
            out[ks] = (part[:, low] + part[:, high]) / 2
    return out


def loaded(cols: Columns, own: slice = slice(None), seen: int = 0) -> np.ndarray:
    """Samples under load: doing at least ``MIN_BASELINE_OPS`` operations a second, where the
    window has ``BASELINE_MIN_SAMPLES`` such samples or more (else every sample with a rate: an
    idle server's usual second is its idle one). A server busy a few minutes of a day, in bursts
    sampled every 0.1 s, is judged against its bursts, never against the idle hours between them.
    The count is taken over the ``own`` rows (a block's), with the ``seen`` before them."""
    ops = cols.ops_s
    with np.errstate(invalid="ignore"):
        busy: np.ndarray = ops >= MIN_BASELINE_OPS
    if seen + int(busy[own].sum()) < BASELINE_MIN_SAMPLES:
        busy = np.isfinite(cols.dt)
    return busy


def estimated(cols: Columns, rows: np.ndarray) -> Baseline:
    """The undisturbed load when every loaded sample is inside a checkpoint: the high quantile of
    throughput and the low quantile of latency over ``rows``, the median of the disk's figures."""
    figures = _Figures()
    figures.add(cols, rows)
    return figures.estimate()


def estimate_note(busy: int) -> str:
    """What the evidence says of a baseline estimated from ``busy`` loaded samples."""
    return (
        f"no sample under load lies away from a checkpoint (checkpoints back to back): the baseline is "
        f"an estimate of the undisturbed load, the {ESTIMATE_HIGH_QUANTILE:g}th percentile of throughput "
        f"and the {ESTIMATE_LOW_QUANTILE:g}th of latency over the {busy:,} loaded samples"
    )


def whole_baseline(
    cols: Columns, clear: np.ndarray, episodes: bool, own: slice = slice(None), seen: int = 0
) -> tuple[np.ndarray, Baseline]:
    """The candidate rows (``clear`` of every checkpoint, under load) and the baseline of the
    ``own`` rows (a block of a long window; the others are context around it; ``seen``: the
    samples under load before them; ``episodes``: any checkpoint in them, else no estimate)."""
    under_load = loaded(cols, own, seen)
    candidates = clear & np.isfinite(cols.dt) & under_load
    rows = np.zeros_like(candidates)
    rows[own] = candidates[own]
    if int(rows.sum()) < BASELINE_MIN_SAMPLES and episodes:
        busy = np.zeros_like(candidates)
        busy[own] = (under_load & np.isfinite(cols.ops_s))[own]
        if int(busy.sum()) >= BASELINE_MIN_SAMPLES:
            return candidates, estimated(cols, busy)
    return candidates, baseline(cols, rows)


class BaselineTally:
    """The whole window's baseline, from the candidate rows of each block of it in turn. Which
    rows are candidates follows the window's load, as :func:`loaded` says of a whole window: the
    loaded ones where the window has ``BASELINE_MIN_SAMPLES`` loaded samples, else every one; both
    are tallied until the window is known to have them."""

    FIGURES = ("ops_s", "writes_s", "write_lat_ms", "write_p99_ms", "read_lat_ms", "disk_wmb_s", "disk_util_pct")

    def __init__(self) -> None:
        self.loaded = 0  # samples under load, so far
        self.usual = _Figures()  # candidates under load
        self.idle: _Figures | None = _Figures()  # every candidate: only while too few are loaded
        # the loaded samples (any with a rate, in an idle window), for an estimate: only while
        # too few candidates are known
        self.busy: _Figures | None = _Figures()
        self.busy_idle: _Figures | None = _Figures()

    def block(self, cols: Columns, clear: np.ndarray, own: slice) -> None:
        """A block's ``own`` rows, ``clear`` of every checkpoint (a boolean mask over ``cols``)."""
        with np.errstate(invalid="ignore"):
            under = cols.ops_s >= MIN_BASELINE_OPS
        mine = np.zeros_like(clear)
        mine[own] = True
        rows = clear & np.isfinite(cols.dt) & mine
        self.loaded += int(under[own].sum())
        self.usual.add(cols, rows & under)
        rated = np.isfinite(cols.ops_s) & mine
        if self.idle is not None:
            self.idle.add(cols, rows)
            if self.busy_idle is not None:
                self.busy_idle.add(cols, rated & np.isfinite(cols.dt))
            if self.loaded >= BASELINE_MIN_SAMPLES:
                self.idle = self.busy_idle = None  # the window has load: idle samples are never its baseline
            elif self.idle.rows >= BASELINE_MIN_SAMPLES:
                self.busy_idle = None
        if self.usual.rows >= BASELINE_MIN_SAMPLES:
            self.busy = None  # never an estimate now: candidates only grow
        if self.busy is not None:
            self.busy.add(cols, under & rated)

    def baseline(self, episodes: bool) -> tuple[Baseline, list[str]]:
        """The baseline (an estimate where too few candidates and enough loaded samples, with
        ``episodes`` in the window), and the evidence about how it was made."""
        usual, busy = (self.usual, self.busy) if self.idle is None else (self.idle, self.busy_idle)
        if usual.rows < BASELINE_MIN_SAMPLES and episodes and busy is not None and busy.rows >= BASELINE_MIN_SAMPLES:
            return busy.estimate(), [estimate_note(busy.rows)]
        return usual.median(), []


class _Figures:
    """The distributions of the baseline's figures over some rows (those of one block, or of a
    whole window fed a block at a time): their medians are the baseline, their high and low
    quantiles its estimate."""

    def __init__(self) -> None:
        self.rows = 0
        self.values = {name: Distribution() for name in BaselineTally.FIGURES}

    def add(self, cols: Columns, rows: np.ndarray) -> None:
        """The figures of ``rows`` (a boolean mask over ``cols``)."""
        self.rows += int(rows.sum())
        for name, values in self.values.items():
            values.add(getattr(cols, name)[rows])

    def median(self) -> Baseline:
        """The median second."""
        v = self.values
        return Baseline(
            samples=self.rows,
            ops_s=v["ops_s"].median(),
            writes_s=v["writes_s"].median(),
            write_lat_ms=v["write_lat_ms"].median(),
            write_p99_ms=v["write_p99_ms"].median(),
            read_lat_ms=v["read_lat_ms"].median(),
            disk_write_mb_s=v["disk_wmb_s"].median(),
            disk_util_pct=v["disk_util_pct"].median(),
        )

    def estimate(self) -> Baseline:
        """The undisturbed load: throughput's high quantile, latency's low, the disk's medians."""
        hi, lo, v = ESTIMATE_HIGH_QUANTILE, ESTIMATE_LOW_QUANTILE, self.values
        return Baseline(
            samples=self.rows,
            ops_s=v["ops_s"].quantile(hi),
            writes_s=v["writes_s"].quantile(hi),
            write_lat_ms=v["write_lat_ms"].quantile(lo),
            write_p99_ms=v["write_p99_ms"].quantile(lo),
            read_lat_ms=v["read_lat_ms"].quantile(lo),
            disk_write_mb_s=v["disk_wmb_s"].median(),
            disk_util_pct=v["disk_util_pct"].median(),
            estimated=True,
        )
