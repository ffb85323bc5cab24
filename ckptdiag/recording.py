"""Recordings: line-oriented JSON, written as samples arrive and readable while still growing.

Format (docs/recording-format.md): the first line is a header object (``"type": "header"``),
then one object per line, each a ``"sample"`` (raw cumulative counters; rates are derived at
analysis time) or an ``"event"`` (gap, reconnect, restart, coverage, end). A name ending in
``.gz`` is gzip, flushed with Z_SYNC_FLUSH so a reader sees every flushed line before the file
is closed. Readers tolerate a torn last line and a missing gzip trailer: whatever was flushed
before a crash is read back.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import gzip
import json
import os
import zlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from ckptdiag import __version__, catalogue
from ckptdiag.errors import InputError, OutputError
from ckptdiag.sources.diskstats import DiskCounters

if TYPE_CHECKING:
    import numpy as np
    import pandas as pd

FORMAT = "ckptdiag-recording"
FORMAT_VERSION = 1
FLUSH_EVERY_S = 2.0  # a crash loses at most this much


def utc_iso(epoch_s: float) -> str:
    """ISO 8601 UTC with milliseconds, e.g. ``2026-11-22T14:03:05.250Z``."""
    stamp = dt.datetime.fromtimestamp(epoch_s, tz=dt.timezone.utc)
    return stamp.strftime("%Y-%m-%dT%H:%M:%S.") + f"{stamp.microsecond // 1000:03d}Z"


def _epoch_ms(value: Any) -> int | None:
    if isinstance(value, dt.datetime):
        if value.tzinfo is None:  # pymongo decodes BSON dates as naive UTC
            value = value.replace(tzinfo=dt.timezone.utc)
        return int(value.timestamp() * 1000)
    return None


def _histograms(doc: Mapping[str, Any]) -> dict[str, list[list[int]]]:
    out: dict[str, list[list[int]]] = {}
    latencies = doc.get("opLatencies")
    if not isinstance(latencies, Mapping):
        return out
    for kind in ("reads", "writes", "commands"):
        buckets = (latencies.get(kind) or {}).get("histogram")
        if isinstance(buckets, list) and buckets:
            out[kind] = [
                [int(b["micros"]), int(b["count"])]
                for b in buckets
                if isinstance(b, Mapping) and "micros" in b and "count" in b
            ]
    return out


def build_sample(
    doc: Mapping[str, Any],
    *,
    seq: int,
    wall: float,
    mono: float,
    rtt_ms: float,
    skipped: int = 0,
    disks: Mapping[str, tuple[DiskCounters, int]] | None = None,
) -> dict[str, Any]:
    """One recording line from a serverStatus reply and the disk counters read beside it."""
    sample: dict[str, Any] = {
        "type": "sample",
        "seq": seq,
        "t": round(wall, 3),
        "mono": round(mono, 4),
        "rtt_ms": round(rtt_ms, 2),
        "m": catalogue.extract(doc),
    }
    server_ms = _epoch_ms(doc.get("localTime"))
    if server_ms is not None:
        sample["server_ms"] = server_ms
    if skipped:
        sample["skipped"] = skipped
    if "wiredTiger" not in doc or not doc.get("wiredTiger"):
        # mongod omits the section under checkpoint contention (SERVER-58026 audit): evidence, keep it
        sample["wt_missing"] = True
    hist = _histograms(doc)
    if hist:
        sample["hist"] = hist
    if disks:
        sample["disk"] = {name: counters.as_list(n) for name, (counters, n) in disks.items()}
    return sample


class RecordingWriter:
    """Appends header, samples and events to a new file (never overwrites) and/or a stream."""

    def __init__(
        self,
        path: Path | None,
        stream: IO[str] | None = None,
        *,
        flush_every_s: float = FLUSH_EVERY_S,
        overwrite: bool = False,
    ) -> None:
        self.path = path
        self.stream = stream
        self.flush_every_s = flush_every_s
        self.lines = 0
        self.samples = 0
        self._last_flush: float | None = None
        self._raw: IO[bytes] | None = None
        self._gz: gzip.GzipFile | None = None
        if path is not None:
            try:
                self._raw = open(path, "wb" if overwrite else "xb")  # noqa: SIM115 - closed in close()
            except FileExistsError:
                raise OutputError(
                    f"{path} already exists; ckptdiag never overwrites a recording",
                    "choose another -o name, or pass --overwrite",
                ) from None
            except OSError as exc:
                raise OutputError(
                    f"cannot write {path}: {exc.strerror}", "check the directory exists and is writable"
                ) from None
            if path.name.endswith(".gz"):
                self._gz = gzip.GzipFile(filename=path.name[:-3], mode="wb", fileobj=self._raw, mtime=0)

    def discard(self) -> None:
        """Remove a file that never received a header (nothing was recorded in it)."""
        if self.path is not None and self.lines == 0:
            self.close()
            with contextlib.suppress(OSError):
                os.unlink(self.path)

    def write(self, obj: Mapping[str, Any], now: float) -> None:
        """Write one line; flush when ``flush_every_s`` has passed since the last flush."""
        line = json.dumps(obj, separators=(",", ":"), allow_nan=False, default=_json_default) + "\n"
        if self._gz is not None:
            self._gz.write(line.encode())
        elif self._raw is not None:
            self._raw.write(line.encode())
        if self.stream is not None:
            try:
                self.stream.write(line)
                self.stream.flush()  # pipes get every sample at once
            except BrokenPipeError:
                self.stream = None  # the reader went away (| head): keep recording to the file
        self.lines += 1
        if obj.get("type") == "sample":
            self.samples += 1
        if self._last_flush is None or now - self._last_flush >= self.flush_every_s:
            self.flush()
            self._last_flush = now

    def flush(self) -> None:
        """Push everything written so far to the OS, readable by another process."""
        if self._gz is not None:
            self._gz.flush(zlib.Z_SYNC_FLUSH)
        if self._raw is not None:
            self._raw.flush()

    def close(self) -> None:
        """Finish the gzip member and close the file (idempotent)."""
        if self._gz is not None:
            self._gz.close()
            self._gz = None
        if self._raw is not None:
            self._raw.close()
            self._raw = None


def _json_default(value: Any) -> Any:
    if isinstance(value, dt.datetime):
        return utc_iso(value.replace(tzinfo=value.tzinfo or dt.timezone.utc).timestamp())
    if isinstance(value, bytes):
        return value.hex()
    return str(value)  # ObjectId, Timestamp, Decimal128 in header documents


def header(
    *,
    source: Mapping[str, Any],
    server: Mapping[str, Any],
    options: Mapping[str, Any],
    disks: Mapping[str, Any],
    created: float,
) -> dict[str, Any]:
    """The first line of a recording."""
    return {
        "type": "header",
        "format": FORMAT,
        "format_version": FORMAT_VERSION,
        "tool": {"name": "ckptdiag", "version": __version__},
        "created": utc_iso(created),
        "source": dict(source),
        "server": dict(server),
        "options": dict(options),
        "disks": dict(disks),
    }


# --- reading -------------------------------------------------------------------------------------


@dataclass
class Recording:
    """A recording read back: header, samples and events, in file order."""

    path: str
    header: dict[str, Any]
    samples: list[dict[str, Any]] = field(default_factory=list)
    events: list[dict[str, Any]] = field(default_factory=list)
    truncated: bool = False  # the file ended inside a line or without its gzip trailer
    damaged_lines: int = 0  # lines that were not JSON (skipped)
    columns: dict[str, np.ndarray] | None = None  # read with columns=True: the samples, as columns

    @property
    def sample_count(self) -> int:
        """How many samples were read (as dicts or as columns)."""
        if self.columns is not None:
            return len(self.columns["t"])
        return len(self.samples)

    def to_frame(self) -> pd.DataFrame:
        """The samples as a DataFrame (see :func:`samples_frame`)."""
        if self.columns is not None:
            return _frame(self.columns, self.events)
        return samples_frame(self.samples, self.events)


def _decompressed(raw: bytes, gz: bool) -> tuple[bytes, int, bool]:
    """The text, where its last complete line ends, and whether it was cut short."""
    truncated = False
    if gz:
        pieces: list[bytes] = []
        data = raw
        while data:
            decomp = zlib.decompressobj(wbits=31)
            try:
                pieces.append(decomp.decompress(data))
            except zlib.error:
                truncated = True
                break
            if not decomp.eof:
                truncated = True  # still being written, or the writer died: keep what inflated
                break
            data = decomp.unused_data  # concatenated gzip members
        # one member (the usual case) is used as it is: a day inflates to ~150 MB, not worth a copy
        text = pieces[0] if len(pieces) == 1 else b"".join(pieces)
    else:
        text = raw
    end = text.rfind(b"\n") + 1
    if text[end:].strip():
        truncated = True  # a torn final line: the writer stopped mid-line
    return text, end, truncated


def is_recording(path: Path) -> bool:
    """Whether ``path`` starts like a ckptdiag recording."""
    try:
        with open(path, "rb") as fh:
            head = fh.read(4096)
    except OSError:
        return False
    if head[:2] == b"\x1f\x8b":
        try:
            head = zlib.decompressobj(wbits=31).decompress(head)
        except zlib.error:
            return False
    return head.lstrip().startswith(b'{"type":"header"') or b'"format":"ckptdiag-recording"' in head[:2048]


try:  # a day of samples is 86,400 lines: orjson parses them ~4x faster than json
    from orjson import loads as _loads
except ImportError:  # pragma: no cover - orjson is a dependency; json is the same, slower
    _loads = json.loads  # type: ignore[assignment]

try:  # the compiled scanner (setup.py); without it every line is parsed (same results, slower)
    from ckptdiag import _jsonl
except ImportError:  # pragma: no cover - depends on the build
    _jsonl = None  # type: ignore[assignment]


def read_recording(path: Path | str, *, columns: bool = False) -> Recording:
    """Load a recording, complete or still being written.

    ``columns=True`` reads the samples straight into float columns (``Recording.columns``, what
    :meth:`Recording.to_frame` needs) instead of a dict per sample: several times faster on long
    recordings when the compiled scanner is there.
    """
    path = Path(path)
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise InputError(f"cannot read {path}: {exc.strerror}", "check the path and its permissions") from None
    if not raw:
        raise InputError(
            f"{path} is empty", "a recording starts with a header line; was it written by 'ckptdiag record'?"
        )
    text, end, truncated = _decompressed(raw, raw[:2] == b"\x1f\x8b")
    if columns and _jsonl is not None:
        return _read_columns(path, text, end, truncated)
    lines = [ln for ln in text[:end].split(b"\n") if ln.strip()]
    rec = Recording(str(path), _header(path, lines[0] if lines else None), truncated=truncated)
    for line in lines[1:]:
        obj = _parse(line, rec)
        if obj is not None and obj.get("type") == "sample":
            rec.samples.append(obj)
    if columns:
        rec.columns, rec.samples = _columns(rec.samples), []
    return rec


def _header(path: Path, line: bytes | None) -> dict[str, Any]:
    try:
        head = json.loads(line) if line else None
    except ValueError:
        head = None
    if not isinstance(head, dict) or head.get("format") != FORMAT:
        raise InputError(
            f"{path} is not a ckptdiag recording",
            "give a file written by 'ckptdiag record -o', or an FTDC metrics file",
        )
    if int(head.get("format_version", 0)) > FORMAT_VERSION:
        raise InputError(
            f"{path} uses recording format {head['format_version']}, newer than this ckptdiag",
            "upgrade ckptdiag: pip install -U ckptdiag",
        )
    return head


def _parse(line: bytes, rec: Recording) -> dict[str, Any] | None:
    """One line as an object; events are kept on ``rec``, damaged lines counted and skipped."""
    try:
        obj = _loads(line)
    except ValueError:  # orjson.JSONDecodeError is a ValueError too
        rec.damaged_lines += 1  # skip it: every other line is still good
        return None
    if not isinstance(obj, dict):
        return None
    if obj.get("type") == "event":
        rec.events.append(obj)
    return obj


_BASE = ("t", "mono", "seq", "rtt_ms", "skipped", "server_ms")


def _columns(samples: list[dict[str, Any]]) -> dict[str, np.ndarray]:
    """The samples' figures as float columns, built a run of same-shaped samples at a time.

    Samples of one recording nearly always have the same metrics, disks and histogram buckets in
    the same order: such a run becomes one 2-D array from the values lists (C loops), instead of a
    dict per row that pandas then takes apart (a day of samples: 1 s -> 0.2 s).
    """
    import numpy as np

    from ckptdiag.sources.diskstats import _FIELD_NAMES

    n = len(samples)
    store = _Columns(n)
    columns, column = store.data, store.column
    for name in _BASE:
        columns[name] = np.array([s.get(name, 0 if name == "skipped" else None) for s in samples], dtype="float64")
    columns["wt_missing"] = np.array([bool(s.get("wt_missing", False)) for s in samples])

    def shape(s: dict[str, Any]) -> tuple[Any, ...]:
        disk = s.get("disk")
        hist = s.get("hist")
        return (
            tuple(s.get("m") or ()),
            tuple((d, len(v)) for d, v in disk.items()) if disk else (),
            tuple((k, tuple(b[0] for b in v)) for k, v in hist.items()) if hist else (),
        )

    start = 0
    while start < n:
        key = shape(samples[start])
        end = start + 1
        while end < n and shape(samples[end]) == key:
            end += 1
        run = samples[start:end]
        metrics, disks, hists = key
        if metrics:
            block = np.array([list(s["m"].values()) for s in run], dtype="float64")
            for j, name in enumerate(metrics):
                column(name)[start:end] = block[:, j]
        for dev, width in disks:
            block = np.array([s["disk"][dev] for s in run], dtype="float64")
            for j, name in enumerate(_FIELD_NAMES[:width]):
                column(f"disk.{dev}.{name}")[start:end] = block[:, j]
        for kind, bounds in hists:
            block = np.array([[c for _, c in s["hist"][kind]] for s in run], dtype="float64")
            for j, micros in enumerate(bounds):
                column(f"hist.{kind}.{micros}")[start:end] = block[:, j]
        start = end
    return columns


def _leaves(obj: Any, path: tuple[Any, ...] = ()) -> list[tuple[tuple[Any, ...], Any]]:
    """Every number, bool and null of a parsed line with its path, in document order."""
    if isinstance(obj, dict):
        return [leaf for key, value in obj.items() for leaf in _leaves(value, (*path, key))]
    if isinstance(obj, list):
        return [leaf for i, value in enumerate(obj) for leaf in _leaves(value, (*path, i))]
    if obj is None or isinstance(obj, bool | int | float):
        return [(path, obj)]
    return []


def _column_name(path: tuple[Any, ...], obj: dict[str, Any]) -> str | None:
    """The column a leaf of a sample goes to (as :func:`_columns` names it), or None."""
    from ckptdiag.sources.diskstats import _FIELD_NAMES

    match path:
        case (str(name),) if name in _BASE:
            return name
        case ("m", str(name)):
            return name
        case ("disk", str(dev), int(j)) if j < len(_FIELD_NAMES):
            return f"disk.{dev}.{_FIELD_NAMES[j]}"
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

    def place(self, rows: np.ndarray, obj: dict[str, Any], block: np.ndarray | None) -> bool:
        """Samples shaped like ``obj`` at ``rows``: their numbers in ``block`` (one row each, in
        document order) or, without a block, obj's own. False when they do not line up."""
        import numpy as np

        leaves = _leaves(obj)
        numbers = [(path, v) for path, v in leaves if v is not None and not isinstance(v, bool)]
        if block is not None:
            if block.shape[1] != len(numbers):
                return False
            # histogram bounds name their columns: every line of the shape must have the same ones
            for j, (path, value) in enumerate(numbers):
                if path[:1] == ("hist",) and path[-1] == 0 and not np.all(block[:, j] == value):
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
                    target[rows] = np.nan if value is None else float(value)
            j += is_number
        return True


def _read_columns(path: Path, text: bytes, end: int, truncated: bool) -> Recording:
    """The fast reader: the compiled scanner's numbers, named once per line shape."""
    import numpy as np

    values_raw, lines_raw = _jsonl.scan(text, end)
    values = np.frombuffer(values_raw, dtype=np.float64)
    lines = np.frombuffer(lines_raw, dtype=np.int64).reshape(-1, 5)
    if not len(lines):
        _header(path, None)
    rec = Recording(str(path), _header(path, text[lines[0, 0] : lines[0, 1]]), truncated=truncated)
    lines = lines[1:]
    # one representative line per shape (hash, count); lines the scanner could not read
    # (count -1) are shapes of their own
    keys = np.where(lines[:, 3] < 0, -1 - np.arange(len(lines)), 0)
    shapes: dict[tuple[int, int, int], list[int]] = {}
    for i, key in enumerate(zip(lines[:, 2].tolist(), lines[:, 3].tolist(), keys.tolist(), strict=True)):
        shapes.setdefault(key, []).append(i)
    kinds = np.zeros(len(lines), dtype=np.int8)  # 1: sample
    sample_shapes: list[tuple[list[int], dict[str, Any]]] = []
    events: list[tuple[int, dict[str, Any]]] = []
    for members in shapes.values():
        start, stop = lines[members[0], 0], lines[members[0], 1]
        try:
            obj = _loads(text[start:stop])
        except ValueError:
            rec.damaged_lines += len(members)  # same shape, same fate: none of them is JSON
            continue
        if not isinstance(obj, dict):
            continue
        if obj.get("type") == "sample":
            kinds[members] = 1
            sample_shapes.append((members, obj))
        elif obj.get("type") == "event":
            events += [(i, _loads(text[lines[i, 0] : lines[i, 1]])) for i in members]  # few: each
    rows_of = np.cumsum(kinds) - 1
    cols = _Columns(int(kinds.sum()))
    for members, obj in sample_shapes:
        idx = np.asarray(members)
        rows = rows_of[idx]
        count = int(lines[members[0], 3])
        block = None
        if count >= 0:
            block = values[lines[idx, 4][:, None] + np.arange(count)]
        if block is None or not cols.place(rows, obj, block):
            for i, row in zip(members, rows.tolist(), strict=True):  # parse them one by one
                cols.place(np.asarray([row]), _loads(text[lines[i, 0] : lines[i, 1]]), None)
    rec.columns = cols.data
    rec.events = [event for _, event in sorted(events, key=lambda item: item[0])]  # file order
    return rec


def samples_frame(samples: list[dict[str, Any]], events: list[dict[str, Any]] | None = None) -> pd.DataFrame:
    """Samples as a DataFrame indexed by UTC time, one column per metric, disk field and bucket.

    ``gap_before`` is True on the first sample after a recorded gap; ``segment`` counts server
    restarts, so rates are never taken across one.
    """
    return _frame(_columns(samples) if samples else {}, events)


def _frame(columns: dict[str, np.ndarray], events: list[dict[str, Any]] | None) -> pd.DataFrame:
    import numpy as np
    import pandas as pd

    frame: pd.DataFrame = pd.DataFrame(columns) if columns and len(columns["t"]) else pd.DataFrame()
    if frame.empty:
        return frame
    frame.index = pd.to_datetime(frame["t"], unit="s", utc=True)
    frame.index.name = "time"
    seq = frame["seq"]
    gap_seqs = {int(e["next_seq"]) for e in events or () if e.get("kind") == "gap"}
    restart_seqs = sorted(int(e["next_seq"]) for e in events or () if e.get("kind") == "restart")
    frame["gap_before"] = seq.isin(gap_seqs)
    segment = np.zeros(len(frame), dtype=np.int64)
    for first in restart_seqs:
        segment += (seq.to_numpy() >= first).astype(np.int64)
    frame["segment"] = segment
    return frame


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
