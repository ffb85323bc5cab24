"""Writing recordings: the header, one line a sample, flushed so a reader sees it at once."""

from __future__ import annotations

import contextlib
import datetime as dt
import gzip
import json
import math
import zlib
from collections.abc import Mapping
from pathlib import Path
from typing import IO, Any, Protocol

from ckptdiag import __version__
from ckptdiag.errors import OutputError
from ckptdiag.guard.outputs import StagedFile, check_target
from ckptdiag.guard.redact import redact_text
from ckptdiag.model import catalogue
from ckptdiag.model.disk import DiskCounters

FORMAT = "ckptdiag-recording"
FORMAT_VERSION = 1
FLUSH_EVERY_S = 2.0  # a crash loses at most this much
# every minute the gzip stream is flushed in full (its window forgotten): a recording whose start
# or middle is damaged is read again from the next minute on (recording/gzipped.py), ~1 % larger
FULL_FLUSH_EVERY_S = 60.0


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
    host: Mapping[str, float] | None = None,
    extra: Mapping[str, float] | None = None,
) -> dict[str, Any]:
    """One recording line from a serverStatus reply and the disk counters (and the host's CPU
    time, ``host.cpu.*`` metrics; ``extra`` metrics from other replies, e.g. the replication lag)
    read beside it."""
    sample: dict[str, Any] = {
        "type": "sample",
        "seq": seq,
        "t": round(wall, 3),
        "mono": round(mono, 4),
        "rtt_ms": round(rtt_ms, 2),
        "m": _finite({**catalogue.extract(doc), **(host or {}), **(extra or {})}),
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


def _finite(metrics: dict[str, Any]) -> dict[str, Any]:
    """The metrics without a NaN or infinite value (a damaged reply's: JSON cannot hold them, and
    no counter is either); each is left out, as a metric the reply lacked."""
    return {k: v for k, v in metrics.items() if not (isinstance(v, float) and not math.isfinite(v))}


class LineSink(Protocol):
    """Where streamed lines go: stdout, or stdout shared by a cluster's members."""

    def write(self, text: str, /) -> int:
        """Write text."""

    def flush(self) -> None:
        """Push it on."""


class RecordingWriter:
    """Appends header, samples and events to a file and/or a stream. The file is written beside
    its name and takes the name only once it holds its first sample (:class:`StagedFile`): an
    existing recording is never overwritten, unless ``overwrite``, and even then it is replaced
    only by a recording that holds a sample."""

    def __init__(
        self,
        path: Path | None,
        stream: LineSink | None = None,
        *,
        flush_every_s: float = FLUSH_EVERY_S,
        overwrite: bool = False,
        stream_fields: Mapping[str, Any] | None = None,
        inputs: tuple[Path, ...] = (),
    ) -> None:
        """``stream_fields`` are added to every line streamed (not to the file): the member a
        line comes from when a cluster's members share stdout. ``inputs`` are files this run
        reads (a log): the recording is never one of them."""
        self.path = path
        self.stream = stream
        self.stream_fields = dict(stream_fields or {})
        self.flush_every_s = flush_every_s
        self.overwrite = overwrite
        self.samples = 0
        self.flushed = 0  # samples known to be in the file: those written before the last good flush
        self._last_flush: float | None = None
        self._last_full: float | None = None
        self._staged: StagedFile | None = None
        self._raw: IO[bytes] | None = None
        self._gz: gzip.GzipFile | None = None
        if path is not None:
            target = check_target(path, inputs, replace=overwrite, what="the recording")
            if target.is_stream:
                raise OutputError(
                    f"{path} is this process's {target.stream}: a recording is a file",
                    "stream the samples with --ndjson - instead",
                )
            self._staged = StagedFile(target)
            self._raw = self._staged.file
            if path.name.endswith(".gz"):
                self._gz = gzip.GzipFile(filename=path.name[:-3], mode="wb", fileobj=self._raw, mtime=0)

    @property
    def published(self) -> bool:
        """Whether the file has its name yet (it does from its first sample on)."""
        return self._staged is not None and self._staged.published

    def discard(self) -> None:
        """Remove a file that holds no sample (it never took its name: nothing is deleted but
        the temporary file)."""
        if self._staged is not None and not self._staged.published:
            with contextlib.suppress(OutputError):
                self._close_streams()
            self._staged.abandon()

    def write(self, obj: Mapping[str, Any], now: float) -> None:
        """Write one line; flush when ``flush_every_s`` has passed since the last flush."""
        line = redact_text(json.dumps(obj, separators=(",", ":"), allow_nan=False, default=_json_default)) + "\n"
        try:
            if self._gz is not None:
                self._gz.write(line.encode())
            elif self._raw is not None:
                self._raw.write(line.encode())
        except OSError as exc:
            raise self._failed(exc) from None
        if self.stream is not None:
            if self.stream_fields:
                line = redact_text(
                    json.dumps({**obj, **self.stream_fields}, separators=(",", ":"), default=_json_default)
                )
                line += "\n"
            try:
                self.stream.write(line)
                self.stream.flush()  # pipes get every sample at once
            except BrokenPipeError:
                self.stream = None  # the reader went away (| head): keep recording to the file
        if obj.get("type") == "sample":
            self.samples += 1
        if self._last_flush is None or now - self._last_flush >= self.flush_every_s:
            full = self._last_full is None or now - self._last_full >= FULL_FLUSH_EVERY_S
            self.flush(full=full)
            self._last_flush = now
            self._last_full = now if full else self._last_full
        if self.samples and self._staged is not None and not self._staged.published:
            self.flush()
            self._staged.publish(replace=self.overwrite)  # its first sample: now it is a recording

    def flush(self, *, full: bool = False) -> None:
        """Push everything written so far to the OS, readable by another process (``full``: the
        compressor's window forgotten too, a point a damaged file is read again from)."""
        try:
            if self._gz is not None:
                self._gz.flush(zlib.Z_FULL_FLUSH if full else zlib.Z_SYNC_FLUSH)
            if self._raw is not None:
                self._raw.flush()
        except OSError as exc:
            raise self._failed(exc) from None
        self.flushed = self.samples

    def close(self) -> None:
        """Finish the gzip member and close the file (idempotent). A file whose end cannot be
        written (disk full) is closed all the same: every line flushed before stays readable. A
        file that never held a sample never takes its name."""
        try:
            self._close_streams()
        finally:
            if self._staged is not None:
                self._staged.abandon()  # published: only closed; else the temporary file goes

    def _close_streams(self) -> None:
        gz, raw = self._gz, self._raw
        self._gz = self._raw = None
        try:
            if gz is not None:
                gz.close()
        except OSError as exc:
            raise self._failed(exc) from None
        finally:
            if raw is not None:
                with contextlib.suppress(OSError):  # its buffer may be unwritable too: nothing more to save
                    raw.close()

    def _failed(self, exc: OSError) -> OutputError:
        """A write that failed (disk full, quota, I/O error) as the one-line error the user sees."""
        kept = f"the {self.flushed} sample{'s' if self.flushed != 1 else ''} flushed before it stay readable"
        return OutputError(
            f"cannot write {self.path}: {exc.strerror or exc} ({kept})",
            "free space on that filesystem (or write elsewhere with -o), then record again",
        )


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
