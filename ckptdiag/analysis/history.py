"""The long view: the window's checkpoints day by day (hour by hour below two days), and whether
they grow: the trend of their duration and bytes, its rate, and, only where the fit is
significant, when it would reach the checkpoint interval. "When did this start?" is answered by
the rows; "is it getting worse?" by the trend."""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence

import numpy as np

from ckptdiag.analysis.episode_table import Episodes
from ckptdiag.analysis.results import History, PeriodRow, Trend
from ckptdiag.analysis.summary import fmt_bytes

DAY_S = 86_400.0
HOUR_S = 3_600.0
DAYS_FOR_DAILY = 2.0  # a window of two days or more is told by day, a shorter one by hour
MIN_PERIODS = 3  # fewer periods than this: no table, no trend
MIN_TREND_PERIODS = 5  # a trend is fitted over this many periods with checkpoints or more
MIN_CHANGE = 0.2  # and named only when the fit moves the figure by 20 % or more over the window
FORECAST_MAX_DAYS = 365.0  # a forecast further out than a year is not one

# Student's t at p = 0.01 (two-sided), by degrees of freedom: the slope is significant when its
# t statistic reaches this (no statistics library needed for 30 numbers)
_T_CRIT_01 = (
    63.657, 9.925, 5.841, 4.604, 4.032, 3.707, 3.499, 3.355, 3.250, 3.169,
    3.106, 3.055, 3.012, 2.977, 2.947, 2.921, 2.898, 2.878, 2.861, 2.845,
    2.831, 2.819, 2.807, 2.797, 2.787, 2.779, 2.771, 2.763, 2.756, 2.750,
)  # fmt: skip
_T_CRIT_01_LARGE = 2.576


def history(
    episodes: Episodes, start: float, end: float, interval_s: float | None, sampled_hours: Iterable[int] = ()
) -> History | None:
    """The window's checkpoints by day (by hour under ``DAYS_FOR_DAILY`` days), and the trend of
    their duration and bytes; None when fewer than ``MIN_PERIODS`` periods hold samples.

    A row is a period that holds samples (``sampled_hours``: the hours since the epoch that do)
    or a checkpoint: a period without either is unknown, not "0 checkpoints", and is left out, so
    the rows follow the data, never the span (a window of 300 samples whose clock jumped 190 years
    made 69,446 day rows)."""
    step = DAY_S if end - start >= DAYS_FOR_DAILY * DAY_S else HOUR_S
    base = math.floor(start / step)
    last = math.floor(end / step) - base  # the window's last period, counted from its first
    # a full directory holds ~70,000 checkpoints: each one's period read from the columns
    period = np.floor_divide(episodes.floats("start"), step) - base
    counted = episodes.known("end") & (period >= 0) & (period <= last)
    hours = np.fromiter(sampled_hours, dtype=np.float64)
    held = np.union1d(np.floor_divide(hours * HOUR_S, step) - base, period[counted])
    held = held[(held >= 0) & (held <= last)]
    if held.size < MIN_PERIODS:
        return None
    at = np.flatnonzero(counted)
    at = at[np.argsort(period[at], kind="stable")]  # by period, each in time order
    lo, hi = np.searchsorted(period[at], held), np.searchsorted(period[at], held + 1)
    rows = tuple(
        _row((base + k) * step, step, episodes.take(at[a:b]))
        for k, a, b in zip(held.astype(np.int64).tolist(), lo.tolist(), hi.tolist(), strict=True)
    )
    days = (end - start) / DAY_S
    trends = tuple(
        t
        for t in (
            _trend("duration_s", rows, lambda r: r.duration_p50_s, days, interval_s),
            _trend("bytes_written", rows, lambda r: r.bytes_p50, days, None),
        )
        if t is not None
    )
    return History("day" if step == DAY_S else "hour", rows, trends)


def _row(at: float, step: float, eps: Episodes) -> PeriodRow:
    durations: list[float] = eps.present("duration_s").tolist()
    written: list[float] = eps.present("bytes_written").tolist()
    p99: list[float] = eps.present("impact.write_p99_ms_peak").tolist()
    return PeriodRow(
        start=at,
        at=float(np.median(eps.floats("start"))) if len(eps) else at + step / 2,
        checkpoints=len(eps),
        stalls=int(eps.flags("impact.stall").sum()),
        duration_p50_s=float(np.median(durations)) if durations else None,
        duration_max_s=max(durations) if durations else None,
        bytes_p50=float(np.median(written)) if written else None,
        write_p99_ms_max=max(p99) if p99 else None,
    )


def _trend(
    figure: str,
    rows: Sequence[PeriodRow],
    pick: Callable[[PeriodRow], float | None],
    days: float,
    interval_s: float | None,
) -> Trend | None:
    """The least-squares line of ``pick(row)`` over the rows that have it, or None with fewer than
    ``MIN_TREND_PERIODS``; its slope significant at p = 0.01 (Student's t) and moving the figure
    by ``MIN_CHANGE`` or more; the days until it reaches ``interval_s`` when it rises so."""
    # each period's median at its checkpoints' median time: a partial first day (a window that
    # starts at 22:13) sits where its checkpoints are, not at midnight
    points = [(r.at, float(v)) for r in rows if (v := pick(r)) is not None]
    if len(points) < MIN_TREND_PERIODS:
        return None
    x = np.array([p[0] for p in points]) / DAY_S
    y = np.array([p[1] for p in points])
    x0 = x - x.mean()
    sxx = float(np.sum(x0**2))
    if sxx <= 0:
        return None
    slope = float(np.sum(x0 * (y - y.mean())) / sxx)
    intercept = float(y.mean() - slope * x.mean())
    residuals = y - (intercept + slope * x)
    dof = len(points) - 2
    spread = float(np.sqrt(np.sum(residuals**2) / dof / sxx)) if dof > 0 else math.inf
    t_stat = abs(slope) / spread if spread > 0 else math.inf
    critical = _T_CRIT_01[dof - 1] if dof <= len(_T_CRIT_01) else _T_CRIT_01_LARGE
    fit_first, fit_last = intercept + slope * x[0], intercept + slope * x[-1]
    moved = abs(fit_last - fit_first) >= MIN_CHANGE * max(abs(fit_first), abs(fit_last), 1e-12)
    significant = t_stat >= critical and moved
    reaches = None
    if significant and slope > 0 and interval_s and fit_last < interval_s:
        ahead = float((interval_s - fit_last) / slope)
        reaches = ahead if ahead <= FORECAST_MAX_DAYS else None
    return Trend(figure, float(fit_first), float(fit_last), slope, float(days), bool(significant), reaches)


def trend_text(t: Trend, fmt_value: Callable[[float], str]) -> str:
    """A trend for a sentence: "checkpoint duration 0.4 s -> 1.9 s over 21 days, +0.07 s/day"."""
    name = "checkpoint duration" if t.figure == "duration_s" else "bytes a checkpoint writes"
    over = f"{t.days:.0f} days" if t.days >= 2 else f"{t.days * 24:.0f} hours"
    sign = "+" if t.per_day >= 0 else "-"
    text = f"{name} {fmt_value(t.first)} -> {fmt_value(t.last)} over {over}, {sign}{fmt_value(abs(t.per_day))}/day"
    if not t.significant:
        return text + " (no significant trend)"
    if t.reaches_interval_days is not None:
        text += f"; at this rate it reaches the checkpoint interval in ~{t.reaches_interval_days:.0f} days"
    return text


def growth_findings(h: History | None) -> list[str]:
    """A finding for each figure that grows significantly over the window (a shrinking one is
    good news, left to the history table)."""
    if h is None:
        return []
    return [trend_text(t, _value_text(t.figure)) for t in h.trends if t.significant and t.per_day > 0]


def _value_text(figure: str) -> Callable[[float], str]:
    """How a trend's values read: seconds, or bytes as KB/MB/GB."""
    if figure == "duration_s":
        return lambda v: f"{v:.2f} s" if v < 1 else f"{v:.1f} s"
    return fmt_bytes
