"""NaN-tolerant summaries of numpy arrays, as Python floats (None where nothing is known)."""

from __future__ import annotations

import numpy as np


def sums_before(values: np.ndarray) -> np.ndarray:
    """The sum of ``values`` before each position, and of all of them at the end (one longer):
    any span's sum is the difference of two.

    >>> sums_before(np.array([1.0, 2.0, 3.0]))
    array([0., 1., 3., 6.])
    """
    out: np.ndarray = np.concatenate(([0], np.cumsum(values)))
    return out


def nanmedian(values: np.ndarray) -> float | None:
    """The median of the finite values (of an even count, the mean of the middle two, as
    ``np.median``), or None. Without np.median's dispatch: a day's episodes ask for ~7,000."""
    finite = values[np.isfinite(values)]
    n = finite.size
    if not n:
        return None
    half = n // 2
    if n % 2:
        return float(np.partition(finite, half)[half])
    part = np.partition(finite, (half - 1, half))
    return float((part[half - 1] + part[half]) / 2)


def nanmean(values: np.ndarray) -> float | None:
    """The mean of the finite values, or None."""
    finite = values[np.isfinite(values)]
    return float(finite.mean()) if finite.size else None


def time_weighted_mean(rates: np.ndarray, dt: np.ndarray) -> float | None:
    """The mean of per-interval rates weighted by each interval's length: the operations done over
    the time they were done in (samples 0.1 s apart while busy and 10 s apart while idle, as FTDC
    spaces them, would otherwise count the busy tenth-seconds a hundred times over).

    >>> time_weighted_mean(np.array([1000.0] * 100 + [0.0] * 10), np.array([0.1] * 100 + [10.0] * 10))
    90.9090909090909
    """
    ok = np.isfinite(rates) & np.isfinite(dt) & (dt > 0)
    if not ok.any():
        return None
    return float(np.sum(rates[ok] * dt[ok]) / np.sum(dt[ok]))


def nanmax(values: np.ndarray) -> float | None:
    """The largest finite value, or None."""
    finite = values[np.isfinite(values)]
    return float(finite.max()) if finite.size else None


def max_so_far(known: float | None, values: np.ndarray) -> float | None:
    """The larger of ``known`` and the finite ``values``' highest (``known`` when none is finite):
    a maximum kept as a window streams."""
    peak = nanmax(values)
    if peak is None:
        return known
    return peak if known is None else max(known, peak)


def nanmin(values: np.ndarray) -> float | None:
    """The smallest finite value, or None."""
    finite = values[np.isfinite(values)]
    return float(finite.min()) if finite.size else None


def nansum(values: np.ndarray) -> float:
    """The sum with NaN as 0, as ``np.nansum`` (without its dispatch: a day's episodes ask ~6,000 times)."""
    return float(np.where(np.isnan(values), 0.0, values).sum())


def ratio(value: float | None, base: float | None) -> float | None:
    """``value / base``, or None when either is unknown or the base is not positive."""
    if value is None or base is None or base <= 0:
        return None
    return value / base


def ratios(value: np.ndarray, base: np.ndarray) -> np.ndarray:
    """:func:`ratio` of arrays: ``value / base``, NaN where either is unknown or the base is not positive.

    >>> ratios(np.array([1.0, 1.0, np.nan, 3.0]), np.array([2.0, 0.0, 1.0, np.nan])).tolist()
    [0.5, nan, nan, nan]
    """
    out = np.full(np.shape(value), np.nan)
    np.divide(value, base, out=out, where=base > 0)
    return out


def p99_bound_ms(bounds_us: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """For each row of per-bucket operation counts (an interval's, by histogram bucket lower bound
    in us, ascending): the lower bound of the bucket holding the 99th percentile, in ms; NaN for a
    row without operations."""
    cum = np.cumsum(counts, axis=1)
    total = cum[:, -1]
    at = (cum >= 0.99 * total[:, None]).argmax(axis=1)
    p99: np.ndarray = (bounds_us / 1000)[at]
    p99[total <= 0] = np.nan
    return p99


SPACING_SHARE = 0.01  # a spacing is named when it covers this share of the time, or of the samples, or more


class SpacingTally:
    """The samples' spacings, rounded as :func:`spacings` names them, counted a block at a time."""

    def __init__(self) -> None:
        self.time: dict[float, float] = {}
        self.count: dict[float, int] = {}

    def add(self, dt: np.ndarray) -> None:
        """Count the spacings ``dt`` (NaN and 0: none)."""
        spacing = dt[np.isfinite(dt) & (dt > 0)]
        if not spacing.size:
            return
        # one significant digit: a spacing's decade and its digit (1-10) make a small integer key
        decade = np.floor(np.log10(spacing))
        digit = np.round(spacing / 10.0**decade).astype(np.int64)
        key = (decade.astype(np.int64) - int(decade.min())) * 11 + digit
        time = np.bincount(key, weights=spacing)
        count = np.bincount(key)
        for k in np.flatnonzero(count).tolist():
            at = int(np.argmax(key == k))  # any spacing of the key: they all round alike
            v = float(_rounded(spacing[at : at + 1])[0])
            self.time[v] = self.time.get(v, 0.0) + float(time[k])
            self.count[v] = self.count.get(v, 0) + int(count[k])

    def named(self) -> tuple[tuple[float, float], ...]:
        """Each spacing covering ``SPACING_SHARE`` of the time or of the samples or more, with its
        share of the time, shortest first."""
        total, n = sum(self.time.values()), sum(self.count.values())
        if not n:
            return ()
        return tuple(
            (round(v, 6), round(self.time[v] / total, 6))
            for v in sorted(self.time)
            if self.time[v] / total >= SPACING_SHARE or self.count[v] / n >= SPACING_SHARE
        )


def _rounded(spacing: np.ndarray) -> np.ndarray:
    """Spacings to one significant digit."""
    magnitude = 10.0 ** np.floor(np.log10(spacing))
    rounded: np.ndarray = np.round(spacing / magnitude) * magnitude
    return rounded


def spacings(dt: np.ndarray) -> tuple[tuple[float, float], ...]:
    """Each spacing of the samples (to one significant digit: 0.1, 1, 10, 0.5 s) that covers
    ``SPACING_SHARE`` of the time or of the samples or more (a burst's 0.1 s samples may be a tenth
    of them in under 1 % of the time), with its share of the time, shortest first.

    >>> spacings(np.array([0.1] * 100 + [1.0] * 90 + [10.0] * 10))
    ((0.1, 0.05), (1.0, 0.45), (10.0, 0.5))
    """
    tally = SpacingTally()
    tally.add(dt)
    return tally.named()


def sampling_text(named: tuple[tuple[float, float], ...]) -> str:
    """How often the samples came, for a sentence: "every 1 s", or every spacing with its share.

    >>> sampling_text(((1.0, 1.0),)), sampling_text(((0.1, 0.05), (1.0, 0.45), (10.0, 0.5)))
    ('every 1 s', 'every 0.1 s (5 % of the time), 1 s (45 %) and 10 s (50 %)')
    """
    if not named:
        return "at no steady spacing"
    if len(named) == 1:
        return f"every {named[0][0]:g} s"
    parts = [f"{v:g} s ({100 * p:.0f} %{' of the time' if i == 0 else ''})" for i, (v, p) in enumerate(named)]
    return "every " + ", ".join(parts[:-1]) + f" and {parts[-1]}"
