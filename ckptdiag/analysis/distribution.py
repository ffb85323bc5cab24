"""One figure's values over a window read in pieces: its median and percentiles, in memory that
does not grow with the window.

Up to ``EXACT_VALUES`` finite values are kept as they are (as float32 where that loses nothing,
as the derived figures of a long window are, else as float64) and every quantile is exact (the
same as numpy's over the whole window: a day at 1 Hz has 86,400 samples). Past that the values are
counted in bins ``2**-BIN_BITS`` of their magnitude wide (a relative error under 0.05 %, far
below the three figures any report shows), so that seven weeks of samples cost a few MB, not
hundreds. The result never depends on how the window was cut into pieces.
"""

from __future__ import annotations

import numpy as np

from ckptdiag.analysis.stats import nanmedian

EXACT_VALUES = 1 << 19  # ~6 days at 1 Hz, 2 MB a figure
BIN_BITS = 12  # mantissa bits a bin keeps: 2**-12 of the value (float32 has 23)
MERGE_KEYS = 1 << 18  # bins of pieces held before they are added into the window's (2 MB each way)


class Distribution:
    """The finite values of one figure, fed a piece at a time (see the module doc)."""

    def __init__(self) -> None:
        self._parts: list[np.ndarray] = []  # the values, while exact
        self.count = 0
        self._binned = False  # past EXACT_VALUES: counted in bins
        # the bins counted so far (keys ascending, one count each), and those of the pieces since
        self._keys = np.zeros(0, dtype=np.int64)
        self._counts = np.zeros(0, dtype=np.int64)
        self._pending: list[tuple[np.ndarray, np.ndarray]] = []
        self._pending_keys = 0

    def add(self, values: np.ndarray) -> None:
        """Count the finite ``values`` (NaN and infinities are not values)."""
        wide = np.asarray(values, dtype=np.float64)
        wide = wide[np.isfinite(wide)]
        if not wide.size:
            return
        narrow = wide.astype(np.float32)
        finite: np.ndarray = narrow if np.array_equal(narrow, wide) else wide  # half the memory, not one bit less
        self.count += int(finite.size)
        if not self._binned:
            self._parts.append(finite)
            if self.count > EXACT_VALUES:
                self._binned = True
                parts, self._parts = self._parts, []
                for part in parts:
                    self._bin(part)
            return
        self._bin(finite)

    def _bin(self, values: np.ndarray) -> None:
        all_keys = _keys(values)
        low = int(all_keys.min())
        span = int(all_keys.max()) - low + 1
        if span <= 4 * all_keys.size:  # a few octaves of values: counted by position, not sorted
            tally = np.bincount(all_keys - low, minlength=span)
            held = np.flatnonzero(tally)
            keys, counts = held + low, tally[held]
        else:
            keys, counts = np.unique(all_keys, return_counts=True)
        self._pending.append((keys, counts))
        self._pending_keys += keys.size
        if self._pending_keys > MERGE_KEYS:  # merged in bulk: the memory held stays that of the distinct bins
            self._merge()

    def _merge(self) -> None:
        """The pieces' bins added into the bins counted so far."""
        if not self._pending:
            return
        keys = np.concatenate([self._keys, *(k for k, _ in self._pending)])
        counts = np.concatenate([self._counts, *(c for _, c in self._pending)])
        self._keys, at = np.unique(keys, return_inverse=True)
        self._counts = np.zeros(self._keys.size, dtype=np.int64)
        np.add.at(self._counts, at, counts)
        self._pending, self._pending_keys = [], 0

    def quantile(self, q: float) -> float | None:
        """The ``q``th percentile (0-100, numpy's linear rule), or None without a value."""
        if not self.count:
            return None
        if not self._binned:
            values = self._parts[0] if len(self._parts) == 1 else np.concatenate(self._parts)
            if q == 50.0:  # the median as nanmedian takes it: the mean of the middle two in float64
                return nanmedian(values.astype(np.float64))
            return float(np.percentile(values.astype(np.float64), q))
        self._merge()
        keys = self._keys
        ends = np.cumsum(self._counts)
        rank = q / 100 * (self.count - 1)
        lo = _value(keys[int(np.searchsorted(ends, np.floor(rank), side="right"))])
        hi = _value(keys[int(np.searchsorted(ends, np.ceil(rank), side="right"))])
        return float(lo + (hi - lo) * (rank - np.floor(rank)))

    def median(self) -> float | None:
        """The 50th percentile."""
        return self.quantile(50.0)


_SHIFT = 23 - BIN_BITS


def _keys(values: np.ndarray) -> np.ndarray:
    """Bins that sort as the values do: float32 bits (negatives flipped), low mantissa bits dropped."""
    bits = values.astype(np.float32).view(np.int32).astype(np.int64)
    ordered = np.where(bits < 0, -(bits & 0x7FFFFFFF) - 1, bits)
    keys: np.ndarray = ordered >> _SHIFT
    return keys


def _value(key: np.int64) -> float:
    """The middle of a bin."""
    ordered = (int(key) << _SHIFT) + (1 << (_SHIFT - 1))
    bits = ordered if ordered >= 0 else -(ordered + 1) | -0x80000000
    return float(np.array([bits], dtype=np.int64).astype(np.int32).view(np.float32)[0])
