"""Reading recordings back: the header, samples and events; a torn tail and damaged lines
are counted and skipped, never fatal."""

from __future__ import annotations

import json
import zlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ckptdiag.errors import InputError

if TYPE_CHECKING:
    import numpy as np
    import pandas as pd
from ckptdiag.recording.columns import _Columns, _columns, _frame, samples_frame
from ckptdiag.recording.writer import FORMAT, FORMAT_VERSION


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
    from ckptdiag import _jsonl as _jsonl
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
