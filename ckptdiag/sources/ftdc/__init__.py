"""MongoDB's own FTDC files (``<dbPath>/diagnostic.data/metrics.*``), decoded exactly and fast.

Format (mongo ``src/mongo/db/ftdc``): a file is a sequence of BSON documents ``{_id: Date, type,
doc | data}``. Type 0 is metadata (buildInfo, getCmdLineOpts, hostInfo), type 2 periodic metadata,
type 1 a metric chunk: ``data`` holds ``uint32 uncompressed size`` + a zlib stream of a reference
BSON document, ``uint32 metric count``, ``uint32 delta count``, then metric-major deltas as
unsigned LEB128 varints in which a 0 is followed by the number of further zeros (runs may
continue into the next metric). Metric values are extracted as mongod's ``util.cpp`` does:
numbers as 64-bit integers (doubles truncated toward zero, Decimal128 too), bool 0/1, Date in
ms, Timestamp as two slots (seconds, increment); strings, ObjectIds, null and binary are not
metrics; documents and arrays recurse in field order.

The delta stream is decoded with numpy, vectorised (varints, zero runs, cumulative sums), so a
chunk costs a few array passes; memory is bounded by one chunk.

The package: :mod:`.reference` (a reference document's slots), :mod:`.deltas` (the delta stream),
:mod:`.files` (files and directories), :mod:`.frames` (chunks to samples, a window or a piece at a
time), :mod:`.assemble` (chunk blocks into a frame or a block in time order).
"""

from __future__ import annotations

from ckptdiag.sources.ftdc.assemble import block_of, frame_of, mark_block, mark_continuity
from ckptdiag.sources.ftdc.deltas import decode_chunk, decode_deltas
from ckptdiag.sources.ftdc.files import Chunk, FileReport, FtdcError, Metadata, metric_files, read_file
from ckptdiag.sources.ftdc.frames import FrameLayout, FtdcData, file_pieces, read_ftdc
from ckptdiag.sources.ftdc.kernel import compiled as _ftdc_kernel
from ckptdiag.sources.ftdc.reference import (
    INT64_MIN,
    Schema,
    Selection,
    reference_metrics,
    reference_schema,
    walk_metrics,
)

__all__ = [
    "INT64_MIN",
    "Chunk",
    "FileReport",
    "FrameLayout",
    "FtdcData",
    "FtdcError",
    "Metadata",
    "Schema",
    "Selection",
    "_ftdc_kernel",
    "block_of",
    "decode_chunk",
    "decode_deltas",
    "file_pieces",
    "frame_of",
    "mark_block",
    "mark_continuity",
    "metric_files",
    "read_file",
    "read_ftdc",
    "reference_metrics",
    "reference_schema",
    "walk_metrics",
]
