"""A window's checkpoint episodes kept in columns, read as :class:`~ckptdiag.analysis.episode.Episode`\\ s.

A long window has tens of thousands of checkpoints (a 47-day FTDC directory: 68,232). As objects
(an ``Episode``, its ``Impact`` and ``Phases``, each figure a boxed float) they held 55 MB over 47
days even with equal figures sharing one float (68 MB without), and grew the report's memory with
the window; in columns they hold 17.5 MB (~260 bytes each), and a figure that no episode has (a
version that does not time a phase) holds nothing. :class:`Episodes` is a
read-only sequence of ``Episode``: indexing or iterating builds the objects (a few thousand at a
time), and the columns themselves (:meth:`Episodes.floats`, :meth:`Episodes.flags`) serve the
readers that need one figure of every episode.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, fields
from operator import attrgetter
from typing import Any, Final, Literal, overload

import numpy as np

from ckptdiag.analysis.episode import Episode, Impact, Phases

FLOAT: Final = "float"  # a float64 column
OPTIONAL: Final = "optional"  # a float64 column, None as NaN (with a mask where a NaN is a value)
FLAG: Final = "flag"  # a bool column
LABEL: Final = "label"  # a few distinct values (strings, reasons): a code each, and the values once
PAIR: Final = "pair"  # two ints (an episode's first and last row)
# each field's annotation, as its dataclass spells it, and the column that holds it
KINDS: Final = {
    "float": FLOAT,
    "float | None": OPTIONAL,
    "bool": FLAG,
    "str": LABEL,
    "str | None": LABEL,
    "tuple[str, ...]": LABEL,
    "tuple[int, int]": PAIR,
}
CHUNK: Final = 4096  # episodes built at a time when iterating


def _layout(cls: type) -> tuple[tuple[str, str], ...]:
    """(field, kind) of a dataclass whose fields are all plain values."""
    return tuple((f.name, KINDS[str(f.type)]) for f in fields(cls))


IMPACT: Final = _layout(Impact)
PHASES: Final = _layout(Phases)
# Episode's own fields; ``impact`` and ``phases`` are the two tables above (phases, where present)
EPISODE: Final = tuple(
    (f.name, "impact" if f.name == "impact" else "phases" if f.name == "phases" else KINDS[str(f.type)])
    for f in fields(Episode)
)

# the columns by name, for mypy to check a reader's (a test holds them equal to the layouts above)
FloatField = Literal[
    "start", "end", "duration_s", "bytes_written", "start_earliest", "start_latest",
    "impact.ops_s_baseline", "impact.ops_s_min", "impact.ops_ratio", "impact.ops_s_after",
    "impact.write_latency_ratio", "impact.write_p99_ms_peak", "impact.write_latency_ms_peak",
    "impact.read_latency_ratio", "impact.write_mb_s_peak", "impact.w_s_peak", "impact.util_pct_peak",
    "impact.await_ms_peak", "impact.aqu_sz_peak", "impact.app_evicted_pages", "impact.app_wait_ms",
    "impact.dirty_pct_peak", "impact.write_tickets_available_min", "impact.queued_writers_max",
    "impact.repl_lag_growth_s", "impact.throttled_ms",
    "phases.scrub_s", "phases.prepare_s", "phases.handles_s", "phases.handles", "phases.trees_s",
    "phases.history_store_s", "phases.sync_s",
]  # fmt: skip
FlagField = Literal["exact_duration", "truncated", "shared", "phases", "impact.stall"]  # "phases": timed
LabelField = Literal["evidence", "impact.write_latency_kind", "impact.reasons"]


@dataclass(frozen=True, slots=True)
class Column:
    """One field of every episode."""

    kind: str
    values: np.ndarray | None  # None: every value None (an OPTIONAL field no episode has)
    labels: tuple[Any, ...] = ()  # LABEL: the distinct values, which ``values`` (codes) index
    none: np.ndarray | None = None  # OPTIONAL: where the value is None, if NaN alone does not say

    @classmethod
    def of(cls, kind: str, values: list[Any]) -> Column:
        """The column of ``values`` (Python values, one per episode)."""
        if kind == LABEL:
            codes: dict[Any, int] = {}
            coded = np.array([codes.setdefault(v, len(codes)) for v in values], dtype=np.int32)
            return cls(kind, coded, tuple(codes))
        if kind == FLAG:
            return cls(kind, np.array(values, dtype=bool))
        if kind == PAIR:
            return cls(kind, np.array(values, dtype=np.int64).reshape(-1, 2))
        if kind == FLOAT:
            return cls(kind, np.array(values, dtype=np.float64))
        data = np.array(values, dtype=np.float64)  # None becomes NaN
        nones = values.count(None)
        if nones == len(values):
            return cls(kind, None)
        if nones == int(np.isnan(data).sum()):  # every NaN a None: NaN alone says it
            return cls(kind, data)
        return cls.optional(data, np.array([v is None for v in values], dtype=bool))

    @classmethod
    def optional(cls, values: np.ndarray, none: np.ndarray) -> Column:
        """The OPTIONAL column of float64 ``values``, None where ``none`` (as :meth:`of` makes it)."""
        if none.all():
            return cls(OPTIONAL, None)
        data = np.where(none, np.nan, values)
        return cls(OPTIONAL, data, none=None if np.array_equal(none, np.isnan(data)) else none)

    def repeated(self, n: int) -> Column:
        """This column of one episode, as the column of ``n`` episodes with its value."""
        if self.values is None:
            return self
        return Column(
            self.kind,
            np.repeat(self.values, n, axis=0),
            self.labels,
            None if self.none is None else np.repeat(self.none, n),
        )

    def listed(self, rows: slice, n: int) -> list[Any]:
        """The Python values of ``rows`` (``n`` of them)."""
        if self.values is None:
            return [None] * n
        part = self.values[rows]
        if self.kind == LABEL:
            labels = self.labels
            return [labels[c] for c in part.tolist()]
        if self.kind == PAIR:
            return [(a, b) for a, b in part.tolist()]
        out: list[Any] = part.tolist()
        if self.kind != OPTIONAL:
            return out
        if self.none is None:
            return [None if v != v else v for v in out]
        return [None if gone else v for v, gone in zip(out, self.none[rows].tolist(), strict=True)]

    def floats(self, n: int) -> np.ndarray:
        """Every value as a float64 (None: NaN)."""
        if self.values is None:
            return np.full(n, np.nan)
        if self.none is None:
            return self.values
        return np.where(self.none, np.nan, self.values)

    def known(self, n: int) -> np.ndarray:
        """Where the value is not None."""
        if self.values is None:
            return np.zeros(n, dtype=bool)
        if self.kind == LABEL:  # a label may be None ("str | None")
            named = np.array([label is not None for label in self.labels], dtype=bool)
            out: np.ndarray = named[self.values] if named.size else np.zeros(n, dtype=bool)
            return out
        if self.kind != OPTIONAL:
            return np.ones(n, dtype=bool)
        return ~np.isnan(self.values) if self.none is None else ~self.none

    def __getitem__(self, rows: slice | np.ndarray) -> Column:
        if self.values is None:
            return self
        return Column(self.kind, self.values[rows], self.labels, None if self.none is None else self.none[rows])


def _given(kind: str, values: Any) -> Column:
    """The column of a judged field: an array as it is (float64; for an OPTIONAL field NaN is
    None), a list as :meth:`Column.of` takes it."""
    if isinstance(values, list):
        return Column.of(kind, values)
    if kind == FLAG:
        return Column(kind, np.asarray(values, dtype=bool))
    data = np.asarray(values, dtype=np.float64)
    if kind == OPTIONAL and np.isnan(data).all():
        return Column(kind, None)
    return Column(kind, data)


@dataclass(frozen=True)
class PhaseArrays:
    """Every episode's phases as the judge reads them: where each has a breakdown (``timed``),
    and each :class:`Phases` field's values by name (NaN: not timed; a field not read: None)."""

    timed: np.ndarray
    values: Mapping[str, np.ndarray]


def _phases(phases: Sequence[Phases | None] | PhaseArrays) -> dict[str, Column]:
    """Whether each episode's phases were timed, and each phase's column."""
    if isinstance(phases, PhaseArrays):
        timed = np.asarray(phases.timed, dtype=bool)
        if set(phases.values) - {f for f, _ in PHASES}:
            raise ValueError(f"not Phases fields: {sorted(set(phases.values) - {f for f, _ in PHASES})}")
        missing = np.full(timed.size, np.nan)
        return {
            "phases": Column(FLAG, timed),
            **{f"phases.{f}": _given(k, np.where(timed, phases.values.get(f, missing), np.nan)) for f, k in PHASES},
        }
    columns = {"phases": Column.of(FLAG, [p is not None for p in phases])}
    for f, k in PHASES:
        columns[f"phases.{f}"] = Column.of(k, [None if p is None else getattr(p, f) for p in phases])
    return columns


def _joined(parts: Sequence[Column], sizes: Sequence[int]) -> Column:
    """One column of ``parts`` (of ``sizes`` episodes each) one after the other."""
    kind = parts[0].kind
    if kind == LABEL:
        merged: dict[Any, int] = {}
        codes = [np.array([merged.setdefault(v, len(merged)) for v in p.labels], dtype=np.int32) for p in parts]
        return Column(kind, np.concatenate([own[p.values] for own, p in zip(codes, parts, strict=True)]), tuple(merged))
    if kind != OPTIONAL:
        return Column(kind, np.concatenate([p.values for p in parts if p.values is not None]))
    if all(p.values is None for p in parts):
        return parts[0]
    data = np.concatenate([p.floats(n) for p, n in zip(parts, sizes, strict=True)])
    none = np.concatenate(
        [
            np.ones(n, bool) if p.values is None else np.isnan(p.values) if p.none is None else p.none
            for p, n in zip(parts, sizes, strict=True)
        ]
    )
    return Column(kind, data, none=None if np.array_equal(none, np.isnan(data)) else none)


class Episodes(Sequence[Episode]):
    """A window's episodes in time order, in columns (see the module's docstring). Immutable."""

    __slots__ = ("_columns", "_n")

    def __init__(self, columns: dict[str, Column], n: int) -> None:
        self._columns = columns  # "start", "impact.stall", "phases", "phases.sync_s", ...
        self._n = n

    @classmethod
    def of(cls, episodes: Iterable[Episode]) -> Episodes:
        """The columns of ``episodes``."""
        found = list(episodes)
        columns: dict[str, Column] = {}
        for name, kind in EPISODE:
            if kind == "impact":
                impacts = [e.impact for e in found]
                columns.update({f"impact.{f}": Column.of(k, list(map(attrgetter(f), impacts))) for f, k in IMPACT})
            elif kind == "phases":
                columns.update(_phases([e.phases for e in found]))
            else:
                columns[name] = Column.of(kind, list(map(attrgetter(name), found)))
        return cls(columns, len(found))

    @classmethod
    def unjudged(cls, own: Mapping[str, Column], n: int) -> Episodes:
        """``n`` episodes of their own fields' columns (``own``: every field of :class:`Episode`
        but ``impact`` and ``phases``), not judged yet: no impact, no phases."""
        blank = cls.of([Episode(0.0, None, None, None, "")])
        mine = {name for name, kind in EPISODE if kind not in ("impact", "phases")}
        if set(own) != mine:
            raise ValueError(f"an episode's own fields are {sorted(mine)}, not {sorted(own)}")
        return cls({name: own[name] if name in own else col.repeated(n) for name, col in blank._columns.items()}, n)

    @classmethod
    def judged(
        cls,
        found: Episodes,
        rows: np.ndarray,
        impact: Mapping[str, Any],
        phases: Sequence[Phases | None] | PhaseArrays,
    ) -> Episodes:
        """The episodes ``found`` (their own fields' columns) judged: at ``rows`` (first and last, one pair
        each), with ``impact`` by :class:`Impact` field (a float field as an array, NaN for None;
        a flag as a bool array; the others as lists) and their ``phases``. No ``Impact`` object is
        built: the judge's arrays are the columns."""
        if set(impact) != {name for name, _ in IMPACT}:
            raise ValueError(f"an impact's fields are {[name for name, _ in IMPACT]}, not {sorted(impact)}")
        columns: dict[str, Column] = {}
        for name, kind in EPISODE:
            if kind == "impact":
                columns.update({f"impact.{f}": _given(k, impact[f]) for f, k in IMPACT})
            elif kind == "phases":
                columns.update(_phases(phases))
            elif name == "rows":
                columns[name] = Column(PAIR, np.asarray(rows, dtype=np.int64).reshape(-1, 2))
            else:
                columns[name] = found._columns[name]
        return cls(columns, len(found))

    @classmethod
    def join(cls, parts: Sequence[Episodes]) -> Episodes:
        """``parts`` one after the other (the blocks of a window)."""
        parts = [p for p in parts if p._n]
        if len(parts) == 1:
            return parts[0]
        if not parts:
            return cls.of(())
        sizes = [p._n for p in parts]
        columns = {name: _joined([p._columns[name] for p in parts], sizes) for name in parts[0]._columns}
        return cls(columns, sum(sizes))

    @property
    def nbytes(self) -> int:
        """The bytes its columns hold (a view shares its parent's, counted here all the same)."""
        held = [c.values for c in self._columns.values()] + [c.none for c in self._columns.values()]
        return sum(a.nbytes for a in held if a is not None)

    def floats(self, name: FloatField) -> np.ndarray:
        """A float field of every episode as float64, None as NaN: ``"duration_s"``,
        ``"impact.ops_ratio"``, ``"phases.sync_s"``; read-only."""
        column = self._columns[name]
        if column.kind not in (FLOAT, OPTIONAL):
            raise TypeError(f"{name} is not a float field")
        out = column.floats(self._n)
        out.flags.writeable = False
        return out

    def flags(self, name: FlagField) -> np.ndarray:
        """A bool field of every episode: ``"impact.stall"``, ``"truncated"``; read-only."""
        column = self._columns[name]
        if column.kind != FLAG or column.values is None:
            raise TypeError(f"{name} is not a bool field")
        out: np.ndarray = column.values.view()
        out.flags.writeable = False
        return out

    def rows(self) -> np.ndarray:
        """Every episode's first and last row, an (n, 2) int64 array; read-only."""
        values = self._columns["rows"].values
        assert values is not None  # a pair column always holds its pairs
        out: np.ndarray = values.view()
        out.flags.writeable = False
        return out

    def values(self, name: FloatField | FlagField | LabelField) -> list[Any]:
        """A field of every episode as its Python values (``"end"``: a float or None each)."""
        return self._columns[name].listed(slice(None), self._n)

    def present(self, name: FloatField) -> np.ndarray:
        """A float field's values where it is not None, in time order."""
        out: np.ndarray = self.floats(name)[self.known(name)]
        return out

    def known(self, name: FloatField | FlagField | LabelField) -> np.ndarray:
        """Where a field is not None (a float field's NaN may be a value)."""
        return self._columns[name].known(self._n)

    def matching(self, name: LabelField, test: Callable[[Any], bool]) -> np.ndarray:
        """Where a field's value passes ``test`` (``"impact.reasons"``, ``lambda r: GONE in r``):
        each distinct value tested once."""
        column = self._columns[name]
        if column.kind != LABEL or column.values is None:
            raise TypeError(f"{name} is not a labelled field")
        passed = np.array([bool(test(v)) for v in column.labels], dtype=bool)
        out: np.ndarray = passed[column.values] if passed.size else np.zeros(self._n, dtype=bool)
        return out

    def take(self, rows: np.ndarray) -> Episodes:
        """The episodes at ``rows`` (indices, or a bool mask), in that order."""
        index = np.flatnonzero(rows) if rows.dtype == bool else np.asarray(rows, dtype=np.int64)
        return Episodes({k: col[index] for k, col in self._columns.items()}, int(index.size))

    def _built(self, start: int, stop: int) -> list[Episode]:
        """The episodes ``start`` to ``stop`` as objects."""
        rows, n = slice(start, stop), stop - start
        if n <= 0:
            return []
        c = self._columns

        def listed(prefix: str, layout: tuple[tuple[str, str], ...]) -> list[list[Any]]:
            return [c[f"{prefix}{name}"].listed(rows, n) for name, _ in layout]

        impacts = [Impact(*row) for row in zip(*listed("impact.", IMPACT), strict=True)]
        timed = c["phases"].listed(rows, n)
        phases = (
            [
                Phases(*row) if has else None
                for has, row in zip(timed, zip(*listed("phases.", PHASES), strict=True), strict=True)
            ]
            if any(timed)
            else [None] * n
        )
        own = {"impact": impacts, "phases": phases}
        values = [own[name] if kind in ("impact", "phases") else c[name].listed(rows, n) for name, kind in EPISODE]
        return [Episode(*row) for row in zip(*values, strict=True)]

    def __len__(self) -> int:
        return self._n

    @overload
    def __getitem__(self, index: int) -> Episode: ...

    @overload
    def __getitem__(self, index: slice) -> Episodes: ...

    def __getitem__(self, index: int | slice) -> Episode | Episodes:
        if isinstance(index, slice):
            rows = slice(*index.indices(self._n))
            return Episodes({k: col[rows] for k, col in self._columns.items()}, len(range(self._n)[rows]))
        k = index + self._n if index < 0 else index
        if not 0 <= k < self._n:
            raise IndexError("episode index out of range")
        return self._built(k, k + 1)[0]

    def __iter__(self) -> Iterator[Episode]:
        for start in range(0, self._n, CHUNK):
            yield from self._built(start, min(start + CHUNK, self._n))

    def __reversed__(self) -> Iterator[Episode]:
        for stop in range(self._n, 0, -CHUNK):
            yield from reversed(self._built(max(stop - CHUNK, 0), stop))

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Sequence):
            return NotImplemented
        return len(other) == self._n and all(a == b for a, b in zip(self, other, strict=True))

    def __hash__(self) -> int:
        return hash(tuple(self))

    def __repr__(self) -> str:
        return f"Episodes({self._n} checkpoints)"
