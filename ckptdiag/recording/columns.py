"""A recording's samples as columns: one per metric, disk field and histogram bucket, then a frame."""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable
from functools import partial
from operator import itemgetter, methodcaller
from typing import TYPE_CHECKING, Any

from ckptdiag.model.sanity import is_number

if TYPE_CHECKING:
    import numpy as np
    import pandas as pd

_BASE = ("t", "mono", "seq", "rtt_ms", "skipped", "server_ms")


def _columns(samples: list[dict[str, Any]]) -> dict[str, np.ndarray]:
    """The samples' figures as float columns, built a run of same-shaped samples at a time.

    Samples of one recording nearly always have the same metrics, disks and histogram buckets in
    the same order: such a run becomes one 2-D array in one pass over its values (C loops),
    instead of a dict per row that pandas then takes apart (a day of samples: 1 s -> 0.2 s).
    """
    import numpy as np

    store = _Columns(len(samples))
    columns = store.data
    for name in _BASE:
        columns[name] = _floats(list(map(methodcaller("get", name, 0 if name == "skipped" else None), samples)))
    missing = map(bool, map(methodcaller("get", "wt_missing", False), samples))
    columns["wt_missing"] = np.fromiter(missing, dtype=bool, count=len(samples))
    try:
        _fill(samples, store)
    except (TypeError, AttributeError, KeyError, IndexError, ValueError):
        # a sample whose parts are not the shapes the writer gives them: again, those parts
        # dropped (checked only here, so that well-formed recordings pay nothing for it)
        store.data = columns = {k: columns[k] for k in (*_BASE, "wt_missing")}
        _fill([_tidy(s) for s in samples], store)
    return store.data


def joined_columns(parts: list[dict[str, np.ndarray]]) -> dict[str, np.ndarray]:
    """Columns of consecutive batches of samples, one after another: a column some batches lack
    is NaN there (``skipped`` 0, ``wt_missing`` false, as in :class:`_Columns`); no batch at all,
    the columns of no sample. The batches are emptied as they are read."""
    import numpy as np

    parts = [p for p in parts if len(p["t"])] or parts[:1]
    if not parts:
        return _columns([])
    if len(parts) == 1:
        return parts[0]
    sizes = [len(p["t"]) for p in parts]
    names = list(dict.fromkeys(name for p in parts for name in p))
    out: dict[str, np.ndarray] = {}
    for name in names:
        fill: Any = False if name == "wt_missing" else 0.0 if name == "skipped" else np.nan
        out[name] = np.concatenate(
            [
                p.pop(name) if name in p else np.full(n, fill, dtype=bool if fill is False else float)
                for p, n in zip(parts, sizes, strict=True)
            ]
        )  # each batch's column let go of once copied: the columns are held once, not twice
    return out


def _fill(samples: list[dict[str, Any]], store: _Columns) -> None:
    """The metric, disk and histogram columns of ``samples`` into ``store``, a run of
    same-shaped samples at a time (same metric names in the same order, same devices and
    widths, same histogram kinds and bucket counts; bucket bounds are checked per run)."""
    from ckptdiag.model.disk import FIELD_NAMES

    column = store.column
    ms = list(map(methodcaller("get", "m"), samples))
    disks = list(map(methodcaller("get", "disk"), samples))
    hists = list(map(methodcaller("get", "hist"), samples))
    shapes = zip(_names(ms), *_names_and_lengths(disks), *_names_and_lengths(hists), strict=True)
    start = 0
    for (metrics, devices, widths, kinds, buckets), run in itertools.groupby(shapes):
        end = start + len(list(run))
        if metrics:
            block = _block(list(map(dict.values, ms[start:end])), len(metrics))
            for j, name in enumerate(metrics):
                column(name)[start:end] = block[:, j]
        for dev, width in zip(devices, widths, strict=True):
            block = _block(list(map(itemgetter(dev), disks[start:end])), width)
            for j, name in enumerate(FIELD_NAMES[:width]):
                column(f"disk.{dev}.{name}")[start:end] = block[:, j]
        for kind, count in zip(kinds, buckets, strict=True):
            _fill_histogram(kind, count, hists, start, end, column)
        start = end


def _names(mappings: list[Any]) -> list[tuple[Any, ...]]:
    """The names in each of ``mappings`` (metrics, disks or histograms), in order; () for None."""
    try:
        return list(map(tuple, mappings))  # each sample has them: no Python call per sample
    except TypeError:
        return [tuple(m) if m else () for m in mappings]


def _names_and_lengths(mappings: list[Any]) -> tuple[list[tuple[Any, ...]], list[tuple[int, ...]]]:
    """The names in each of ``mappings`` (disks or histograms) and the lengths of their values
    (a disk's fields, a histogram's buckets); () for None."""
    if not any(mappings):  # a recording without histograms: nothing to look at
        none: list[tuple[Any, ...]] = [()] * len(mappings)
        return none, none
    try:
        lengths = list(map(tuple, map(partial(map, len), map(dict.values, mappings))))
    except TypeError:
        lengths = [tuple(map(len, m.values())) if m else () for m in mappings]
    return _names(mappings), lengths


def _block(rows: list[Any], width: int) -> np.ndarray:
    """Rows of ``width`` values each as a float64 (rows x width) block, in one pass when every
    value is a number (else as :func:`_floats` reads them)."""
    import numpy as np

    try:
        flat = np.fromiter(itertools.chain.from_iterable(rows), dtype="float64", count=len(rows) * width)
    except (ValueError, TypeError, OverflowError):
        return _floats([list(r) for r in rows])
    return flat.reshape(len(rows), width)


def _fill_histogram(
    kind: str, count: int, hists: list[Any], start: int, end: int, column: Callable[[str], np.ndarray]
) -> None:
    """Histogram ``kind``'s bucket counts of samples ``start:end`` (``count`` [bound, count]
    pairs each) into their columns, which the bounds name. The bounds are the same in every
    sample of a run nearly always: checked at once, else followed sample by sample."""
    import numpy as np

    run = list(map(itemgetter(kind), hists[start:end]))
    try:
        pairs = np.array(run)
    except (ValueError, TypeError, OverflowError):  # buckets of different lengths
        pairs = np.array(())
    bounds = pairs[:, :, 0] if pairs.shape == (len(run), count, 2) and pairs.dtype.kind in "biuf" else None
    # numbers only (a string bound names its column as it is spelled), and where the bounds
    # are floats, none past 2**53 (two ints that one double stands for are two bounds)
    if (
        bounds is None
        or not np.all(bounds == bounds[0])
        or (bounds.dtype.kind == "f" and not np.all(np.abs(bounds[0]) <= 2**53))
    ):
        _fill_histogram_by_sample(kind, run, start, column)
        return
    counts = pairs[:, :, 1].astype("float64")
    for j, bucket in enumerate(run[0]):
        column(f"hist.{kind}.{bucket[0]}")[start:end] = counts[:, j]


def _fill_histogram_by_sample(kind: str, run: list[Any], start: int, column: Callable[[str], np.ndarray]) -> None:
    """As :func:`_fill_histogram`, the bounds read sample by sample (a run of samples whose
    bounds are the same is still placed at once)."""
    bounds = [tuple(b[0] for b in buckets) for buckets in run]
    at = start
    for key, same in itertools.groupby(bounds):
        n = sum(1 for _ in same)
        block = _floats([[c for _, c in buckets] for buckets in run[at - start : at - start + n]])
        for j, micros in enumerate(key):
            column(f"hist.{kind}.{micros}")[at : at + n] = block[:, j]
        at += n


def _tidy(sample: dict[str, Any]) -> dict[str, Any]:
    """A sample whose ``m``, ``disk`` and ``hist`` have the shapes the writer gives them (a
    mapping of names to values, of devices to lists, of kinds to [bound, count] pairs): itself
    when it has, else a copy with the parts that do not dropped (their values are lost as damage)."""
    m, disk, hist = sample.get("m"), sample.get("disk"), sample.get("hist")
    ok_m = m is None or isinstance(m, dict)
    ok_disk = disk is None or (isinstance(disk, dict) and all(isinstance(v, list) for v in disk.values()))
    ok_hist = hist is None or (
        isinstance(hist, dict)
        and all(
            isinstance(v, list) and all(isinstance(b, list) and len(b) == 2 and is_number(b[0]) for b in v)
            for v in hist.values()
        )
    )
    if ok_m and ok_disk and ok_hist:
        return sample
    return {
        **sample,
        "m": m if ok_m else None,
        "disk": disk if ok_disk else None,
        "hist": hist if ok_hist else None,
    }


def _floats(rows: list[Any]) -> np.ndarray:
    """Values (a list, or a list of equal-length lists) as float64, at C speed when they are all
    numbers; otherwise one at a time, a bool 0 or 1, anything else not a number (a string, a
    list) NaN. Impossible numbers are left to :func:`checked`, which counts what it rejects."""
    import numpy as np

    try:
        return np.array(rows, dtype="float64")
    except (ValueError, TypeError, OverflowError):
        pass

    def number(v: Any) -> float:
        if isinstance(v, bool):  # 0 or 1, as the one-pass conversion and the scanner read it
            return float(v)
        return _as_float(v) if is_number(v) else float("nan")

    if rows and isinstance(rows[0], list):
        width = len(rows[0])
        return np.array(
            [[number(v) for v in r] if isinstance(r, list) and len(r) == width else [np.nan] * width for r in rows]
        )
    return np.array([number(v) for v in rows], dtype="float64")


def _as_float(value: Any) -> float:
    """A parsed number as a float: an int beyond a double's range (damage) as infinite, with
    its sign, then rejected and counted by :func:`checked`."""
    try:
        return float(value)
    except OverflowError:
        return math.inf if value > 0 else -math.inf


def checked(columns: dict[str, np.ndarray]) -> tuple[dict[str, np.ndarray], tuple[int, int, int]]:
    """The columns with damage taken out -> (columns, (values rejected, samples dropped for an
    impossible time, samples out of time order)): values no counter can hold become NaN, samples
    whose time is not 1970-2255 are dropped, the rest are put in time order (stable)."""
    import numpy as np

    from ckptdiag.model.sanity import plausible_times, reject_absurd

    if not columns or not len(columns["t"]):
        return columns, (0, 0, 0)
    rejected = sum(reject_absurd(v) for k, v in columns.items() if k != "t" and v.dtype.kind == "f")
    t = columns["t"]
    keep = plausible_times(t)
    bad_times = int(t.size - np.count_nonzero(keep))
    if bad_times:
        columns = {k: v[keep] for k, v in columns.items()}
        t = columns["t"]
    unordered = 0
    if t.size > 1 and bool(np.any(t[1:] < t[:-1])):
        unordered = int(np.count_nonzero(t < np.maximum.accumulate(t)))
        order = np.argsort(t, kind="stable")
        columns = {k: v[order] for k, v in columns.items()}
    return columns, (rejected, bad_times, unordered)


def kept(columns: dict[str, np.ndarray], keep: Callable[[str], bool] | None) -> tuple[dict[str, np.ndarray], int]:
    """The columns ``keep`` names (and ``t`` and ``seq``, which order and mark the samples), with
    how many values of the others :func:`checked` would have rejected (the damage is counted
    whatever is kept)."""
    from ckptdiag.model.sanity import reject_absurd

    if keep is None:
        return columns, 0
    out: dict[str, np.ndarray] = {}
    rejected = 0
    for name, values in columns.items():
        if name in ("t", "seq") or keep(name):
            out[name] = values
        elif values.dtype.kind == "f":
            rejected += reject_absurd(values)
    return out, rejected


LEAF_DEPTH = 32  # a sample nests 4 deep; anything deeper is damage, never recursed into


def _leaves(obj: Any, path: tuple[Any, ...] = ()) -> list[tuple[tuple[Any, ...], Any]]:
    """Every number, bool and null of a parsed line with its path, in document order (nothing
    below :data:`LEAF_DEPTH`: a line nested 900 deep costs its own values, not the run)."""
    if len(path) > LEAF_DEPTH:
        return []
    if isinstance(obj, dict):
        return [leaf for key, value in obj.items() for leaf in _leaves(value, (*path, key))]
    if isinstance(obj, list):
        return [leaf for i, value in enumerate(obj) for leaf in _leaves(value, (*path, i))]
    if obj is None or isinstance(obj, bool | int | float):
        return [(path, obj)]
    return []


def _column_name(path: tuple[Any, ...], obj: dict[str, Any]) -> str | None:
    """The column a leaf of a sample goes to (as :func:`_columns` names it), or None."""
    from ckptdiag.model.disk import FIELD_NAMES

    match path:
        case (str(name),) if name in _BASE:
            return name
        case ("m", str(name)):
            return name
        case ("disk", str(dev), int(j)) if j < len(FIELD_NAMES):
            return f"disk.{dev}.{FIELD_NAMES[j]}"
        case ("hist", str(kind), int(i), 1):
            return f"hist.{kind}.{obj['hist'][kind][i][0]}"
    return None


class _Columns:
    """Float columns of ``n`` samples, created on first use (NaN where a sample lacks them)."""

    def __init__(self, n: int) -> None:
        import numpy as np

        self.n = n
        self.data: dict[str, np.ndarray] = {name: np.full(n, np.nan) for name in _BASE}
        self.data["skipped"][:] = 0
        self.data["wt_missing"] = np.zeros(n, dtype=bool)

    def column(self, name: str) -> np.ndarray:
        import numpy as np

        found = self.data.get(name)
        if found is None:
            found = self.data[name] = np.full(self.n, np.nan)
        return found

    def place(self, rows: np.ndarray | slice, obj: dict[str, Any], block: np.ndarray | None) -> bool:
        """Samples shaped like ``obj`` at ``rows`` (row numbers, or a slice of them): their numbers
        in ``block`` (one row each, in document order) or, without a block, obj's own. False when
        they do not line up."""
        import numpy as np

        leaves = _leaves(obj)
        numbers = [(path, v) for path, v in leaves if v is not None and not isinstance(v, bool)]
        if block is not None:
            if block.shape[1] != len(numbers):
                return False
            # histogram bounds name their columns: every line of the shape must have the same ones
            for j, (path, value) in enumerate(numbers):
                if path[:1] == ("hist",) and path[-1] == 0 and not np.all(block[:, j] == _as_float(value)):
                    return False
        self.data["wt_missing"][rows] = bool(obj.get("wt_missing", False))
        j = 0
        for path, value in leaves:
            name = _column_name(path, obj)
            is_number = value is not None and not isinstance(value, bool)
            if name is not None:
                target = self.column(name)
                if is_number and block is not None:
                    target[rows] = block[:, j]
                else:
                    target[rows] = np.nan if value is None else _as_float(value)
            j += is_number
        return True


def samples_frame(samples: list[dict[str, Any]], events: list[dict[str, Any]] | None = None) -> pd.DataFrame:
    """Samples as a DataFrame indexed by UTC time, one column per metric, disk field and bucket.

    ``gap_before`` is True on the first sample after a recorded gap; ``segment`` counts server
    restarts, so rates are never taken across one.
    """
    return _frame(checked(_columns(samples))[0] if samples else {}, events)


def seq_of(event: dict[str, Any]) -> int | None:
    """An event's ``next_seq`` as an int, or None when it has none that could be a sample's."""
    seq = event.get("next_seq")
    if isinstance(seq, bool) or not isinstance(seq, int | float) or seq != seq or abs(seq) > 2**62:
        return None
    return int(seq)


def _frame(columns: dict[str, np.ndarray], events: list[dict[str, Any]] | None) -> pd.DataFrame:
    import pandas as pd

    frame: pd.DataFrame = pd.DataFrame(columns) if columns and len(columns["t"]) else pd.DataFrame()
    if frame.empty:
        return frame
    frame.index = pd.to_datetime(frame["t"], unit="s", utc=True)
    frame.index.name = "time"
    frame["gap_before"], frame["segment"] = marks(frame["seq"].to_numpy(), events)
    return frame


def marks(seq: np.ndarray, events: list[dict[str, Any]] | None) -> tuple[np.ndarray, np.ndarray]:
    """The samples' continuity marks from the recorder's events -> (``gap_before``: True on the
    first sample after a recorded gap; ``segment``: the server restarts before each sample, so
    that rates are never taken across one)."""
    import numpy as np

    found = [(e.get("kind"), seq_of(e)) for e in events or ()]
    gap_seqs = {s for kind, s in found if kind == "gap" and s is not None}
    restart_seqs = sorted(s for kind, s in found if kind == "restart" and s is not None)
    gap_before = np.isin(seq, np.array(sorted(gap_seqs), dtype=np.float64)) if gap_seqs else np.zeros(seq.size, bool)
    segment = np.zeros(seq.size, dtype=np.int64)
    for first in restart_seqs:
        segment += (seq >= first).astype(np.int64)
    return gap_before, segment


def join_frames(frames: list[pd.DataFrame]) -> pd.DataFrame:
    """Several recordings' frames as one, in time order, each seam a gap and a new segment, so
    that no rate or checkpoint is ever taken between two recordings."""
    import pandas as pd

    if len(frames) == 1:
        return frames[0]
    parts: list[pd.DataFrame] = []
    next_segment = 0
    for frame in sorted((f for f in frames if not f.empty), key=lambda f: float(f["t"].iloc[0])):
        part = frame.copy()
        part["segment"] = part["segment"] + next_segment
        if parts:
            part.iloc[0, part.columns.get_loc("gap_before")] = True
        next_segment = int(part["segment"].max()) + 1
        parts.append(part)
    joined: pd.DataFrame = pd.concat(parts)
    return joined
