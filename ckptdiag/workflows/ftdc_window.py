"""An FTDC window derived a file at a time, in workers on the cores the parent's judging leaves:
the same figures one process gives.

A metrics file is read and derived whole by one worker (its pieces never span files), joined to
the sample before it: the latest of the files before. A worker cannot know that sample without
reading every file before its own, so it takes the one its neighbour ends on (that file's last
chunk, decoded alone) and says so; the parent, reading the results in file order, keeps each one
whose row before was the real one, drops a file that lies wholly before the samples already read
(as one process would), and derives any other again itself with the right row. Files in time
order (every server's own diagnostic.data) are never derived twice.

Only the derived figures cross back from a worker (float32, a few dozen columns), through memory
shared with it (:class:`~ckptdiag.forking.Slots`): the decoded samples are ~10x the FTDC bytes
and sending them cost as much as decoding them. Only the metrics the derivation reads are
decoded. A worker that dies (the OOM killer) costs only time: the parent derives the rest.
"""

from __future__ import annotations

import itertools
import multiprocessing
import sys
from collections import deque
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from ckptdiag.analysis.pieces import PieceChain, same_row
from ckptdiag.analysis.series import reads
from ckptdiag.forking import Handed, Slots, may_fork
from ckptdiag.model.samples import SampleBlock
from ckptdiag.model.window import TimeWindow
from ckptdiag.sources.ftdc import FtdcData, FtdcError, mark_block
from ckptdiag.sources.ftdc.files import bytes_in_window, ftdc_files
from ckptdiag.sources.ftdc.frames import check_read, file_pieces, last_row
from ckptdiag.workflows.workers import workers_for

Task = tuple[Path, bool, Path | None, TimeWindow]  # a file, whether in a directory, the file before, the window
ROWS_PER_PIECE = 16_384  # FTDC is derived a piece at a time: 16k rows bound a worker's memory (and fit its caches)
# less FTDC than this in the window decodes faster than worker processes start (and a window of
# two days out of 47 took 4 s in a worker, files passed over one task at a time; 1.2 s here)
PARALLEL_BYTES = 8 << 20
LIGHT_BYTES = 1 << 20  # a file giving the window less than this is read here, not by a worker
# a file's derived figures handed back through shared memory up to this size (a 10 MB file of
# ~130,000 samples derives to ~25 MB; more goes back through the pool's pipe): address space
# only, pages are taken as a result is written
SLOT_BYTES = 64 << 20


@dataclass(frozen=True)
class FileWindow:
    """One metrics file derived after a given row: what a worker sends back."""

    seam: SampleBlock | None  # the row it was joined to (None: the window's first)
    parts: tuple[pd.DataFrame, ...]  # derived figures, float32
    gaps: int
    restarts: int
    last: SampleBlock | None  # the latest row after this file (the next file's seam)
    latest: float | None  # the file's latest sample in the window (s), None if it has none
    produced: bool  # it gave samples in the window
    data: FtdcData  # its metadata, its report, whether it was mongod's
    error: tuple[str, str] | None = None  # a file given alone that is not FTDC: (message, hint)


@dataclass(frozen=True)
class DerivedWindow:
    """The whole window's derived figures (None: each part was given to a sink as it came), with
    what reading the files found."""

    derived: pd.DataFrame | None
    gaps: int
    restarts: int
    data: FtdcData


Sink = Callable[[pd.DataFrame, FtdcData], None]


def derive_ftdc(
    paths: list[Path],
    window: TimeWindow,
    jobs: int | None = None,
    sink: Sink | None = None,
) -> DerivedWindow:
    """FTDC files or directories derived into one window, a file at a time, in worker processes
    where there are cores, memory and enough FTDC for them (``jobs`` overrides the choice: that
    many workers; 1: none). With a ``sink``, each derived part goes to it in time order, with
    what the files read so far said (their metadata), and is not kept: the window is never held
    whole. Raises what reading the files in one process raises."""
    files = ftdc_files(paths)
    # what each file gives the window: a file whose chunks nearly all lie far outside it is
    # read here (its first and last chunks only: milliseconds), not sent to a worker
    weights = [bytes_in_window(file, window) for file, _ in files]
    if jobs is not None:
        workers = jobs if jobs > 1 else 0
    elif sum(w for w in weights if w >= LIGHT_BYTES) >= PARALLEL_BYTES and may_fork():
        # this process judges what the workers derive: it keeps a core of its own (on two
        # cores, one worker is as fast as two, which took the parent's core half the time,
        # and ~45 MB less)
        workers = workers_for(len(files) + 1) - 1
    else:
        workers = 0
    heavy = [w >= LIGHT_BYTES or jobs is not None for w in weights]
    windows = _in_workers(files, window, workers, heavy) if workers and sum(heavy) > 1 else None
    return _joined(files, window, windows, sink)


def _joined(
    files: list[tuple[Path, bool]],
    window: TimeWindow,
    windows: Iterator[FileWindow | None] | None,
    sink: Sink | None,
) -> DerivedWindow:
    """The files' windows in file order, each checked against the row really before it."""
    chain = PieceChain(mark_block)
    data = FtdcData(None, [], [])
    produced = False
    cache: dict[str, Any] = {}
    for file, in_dir in files:
        got = next(windows) if windows is not None else None
        joined = got is not None and same_row(got.seam, chain.last)
        if got is None or not (joined or _wholly_before(got, chain.last)):
            got, joined = derive_file(file, in_dir, window, chain.last, cache), True
        if got.error is not None:
            raise FtdcError(*got.error)
        data.metadata += got.data.metadata
        data.reports += got.data.reports
        data.mongod |= got.data.mongod
        produced |= got.produced
        # derived after the very row before it (else it lies wholly before it: nothing to add)
        if joined and got.latest is not None:
            if sink is None:
                chain.parts += got.parts
            else:
                for part in got.parts:
                    sink(part, data)
            chain.gaps += got.gaps
            chain.restarts += got.restarts
            chain.last = got.last
    check_read(data, produced)
    if sink is not None:
        return DerivedWindow(None, chain.gaps, chain.restarts, data)
    derived, gaps, restarts = chain.result()
    return DerivedWindow(derived, gaps, restarts, data)


def _wholly_before(window: FileWindow, last: SampleBlock | None) -> bool:
    """Whether a worker's file has no sample after ``last`` (none in the window, or all at or
    before it): this process would drop every row of it, whatever row it was joined to."""
    return window.latest is None or (last is not None and window.latest <= float(last.t[0]))


def derive_file(
    file: Path,
    in_dir: bool,
    window: TimeWindow,
    seam: SampleBlock | None,
    cache: dict[str, Any],
) -> FileWindow:
    """One metrics file read in pieces and derived after ``seam`` (the latest row before it)."""
    data = FtdcData(None, [], [])
    chain = PieceChain(mark_block, seam)
    latest: float | None = None
    produced = False
    try:
        for piece in file_pieces(file, in_dir, window, ROWS_PER_PIECE, data, cache, reads):
            produced = True
            top = float(piece.t[-1])
            latest = top if latest is None else max(latest, top)
            chain.add(piece)
    except FtdcError as exc:
        return FileWindow(seam, (), 0, 0, seam, None, False, data, (exc.message, exc.hint))
    return FileWindow(seam, tuple(chain.parts), chain.gaps, chain.restarts, chain.last, latest, produced, data)


# -- workers --------------------------------------------------------------------------------

_CACHE: dict[str, Any] = {}  # a worker's chunk shapes, kept across the files it is given
_SLOTS: Slots | None = None  # set in the parent before the workers are forked: they inherit it


def _worker_file(task: Task, k: int) -> Handed:
    """In a worker: one file, joined to the row the file before it ends on, handed back in
    slot ``k``."""
    file, in_dir, before, window = task
    seam = None if before is None else last_row(before, window, _CACHE, reads)
    assert _SLOTS is not None
    return _SLOTS.put(k, derive_file(file, in_dir, window, seam, _CACHE))


def _latest_before(files: list[Path]) -> list[Path | None]:
    """For each file, the file before it that ends latest (by its last chunk's start): the one
    whose last row is most likely the row before it, whatever order the files are in (copies, a
    clock set back). Only a guess, checked by the parent: it saves work, never changes a figure."""
    from ckptdiag.sources.ftdc.files import last_chunk_start

    out: list[Path | None] = []
    best: tuple[int, Path] | None = None
    for k, file in enumerate(files):
        out.append(best[1] if best is not None else files[k - 1] if k else None)
        end = last_chunk_start(file)
        if end is not None and (best is None or end >= best[0]):
            best = (end, file)
    return out


def _quiet() -> None:
    """A worker leaves Ctrl-C to the parent (which stops the pool) instead of printing a trace."""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)


AHEAD = 2  # files derived beyond one a worker: a day is ~2 files, judged at once while workers go on


def _taken(slots: Slots, k: int, future: Future[Handed]) -> FileWindow | None:
    """Task ``k``'s result, or None when the pool broke (a worker was killed: the OOM killer, a
    signal), which costs only time: the caller derives the file itself."""
    try:
        handed = future.result()
    except BrokenProcessPool:
        return None
    window: FileWindow = slots.take(k, handed)
    return window


def _in_workers(
    files: list[tuple[Path, bool]], window: TimeWindow, jobs: int, heavy: list[bool]
) -> Iterator[FileWindow | None]:
    """Every file's window, in file order: the ``heavy`` ones' from ``jobs`` forked workers,
    None for the others (the caller derives those itself, as every file from the first a dead
    worker took on)."""
    before = _latest_before([file for file, _ in files])
    tasks = [(k, (file, in_dir, before[k], window)) for k, (file, in_dir) in enumerate(files) if heavy[k]]
    global _SLOTS
    sys.stdout.flush()  # a forked worker must not write the parent's buffered output again
    context = multiprocessing.get_context("fork")
    # at most ``jobs`` + AHEAD tasks not yet taken, each with a slot: the n-th task is given the
    # slot of the (n - jobs - AHEAD - 1)-th, taken (copied out) before it is submitted
    limit = jobs + AHEAD
    _SLOTS = slots = Slots(limit + 1, SLOT_BYTES)
    pool = ProcessPoolExecutor(max_workers=min(jobs, len(tasks)), mp_context=context, initializer=_quiet)
    try:
        # a file a task (a worker holds a task's results until all are done: two files a task
        # cost 30 MB more a worker, and time), and only AHEAD results beyond the workers' own:
        # results not taken yet are held in memory
        ahead: deque[tuple[int, Future[Handed]]] = deque()
        given, broken = 0, False
        for k in range(len(files)):
            while not broken and given < len(tasks) and len(ahead) <= limit:
                try:
                    ahead.append((given, pool.submit(_worker_file, tasks[given][1], given)))
                except BrokenProcessPool:  # a worker died since a result was last taken
                    broken = True
                    break
                given += 1
            if not heavy[k] or not ahead:  # read here (a light file, or one never given out)
                yield None
                continue
            got = _taken(slots, *ahead.popleft())
            yield got
            if got is None:
                break
        yield from itertools.repeat(None)  # a worker died: this process derives the rest
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
        _SLOTS = None
        slots.close()
