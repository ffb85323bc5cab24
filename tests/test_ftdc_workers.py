"""FTDC windows derived in worker processes are exactly those one process derives."""

from __future__ import annotations

import json
import os
import re
import shutil
from pathlib import Path

import pandas as pd
import pytest
from conftest import SHARED_DATA, run_cli, shared_path
from ftdc_writer import SimServer, write_ftdc

from ckptdiag.model.window import WHOLE, TimeWindow
from ckptdiag.sources.ftdc import FtdcError
from ckptdiag.workflows import ftdc_window
from ckptdiag.workflows.ftdc_window import DerivedWindow, derive_ftdc

FTDC = SHARED_DATA / "ftdc"
LARGEST = (  # three servers' files, of 2018, 2022 and 2023
    ("MrJamesFeng+shuoshuo", "253ca704e5__diagnostic.data__metrics.2018-04-29T07-31-12Z-00000"),
    ("CryptoShaker+degenland-backend", "5780f1d9ad__db__diagnostic.data__metrics.2022-11-16T03-49-22Z-00000"),
    ("Ataxia123+mementoBackend", "a5454c75cf__db__diagnostic.data__metrics.2023-12-29T05-35-47Z-00000"),
)


def assert_same(one: DerivedWindow, many: DerivedWindow) -> None:
    pd.testing.assert_frame_equal(one.derived, many.derived, check_exact=True)
    assert (one.gaps, one.restarts) == (many.gaps, many.restarts)
    assert one.data.reports == many.data.reports
    assert one.data.metadata == many.data.metadata
    assert one.data.mongod == many.data.mongod


def both(paths: list[Path], window: TimeWindow = WHOLE) -> DerivedWindow:
    one = derive_ftdc(paths, window, jobs=1)
    many = derive_ftdc(paths, window, jobs=2)
    assert_same(one, many)
    return one


def as_directory(files: list[Path], into: Path) -> Path:
    """Files named as mongod names them (the shared copies carry a prefix), in a directory."""
    into.mkdir()
    for i, f in enumerate(files):
        match = re.search(r"metrics\.(.*)$", f.name)
        name = f"metrics.{match.group(1)}" if match else f"metrics.2026-01-01T00-00-{i:02d}Z-00000"
        shutil.copyfile(f, into / name)
    return into


def shared_directories() -> list[Path]:
    root = FTDC / "public-datadirs"
    if not root.is_dir():
        return []
    return [d for d in sorted(root.iterdir()) if d.is_dir() and len(list(d.glob("*metrics.*"))) >= 2]


@pytest.mark.parametrize("directory", shared_directories(), ids=lambda d: d.name[:30])
def test_every_shared_directory_is_the_same_in_workers(directory: Path, tmp_path: Path) -> None:
    files = sorted(directory.glob("*metrics.*"), key=lambda f: f.name.split("metrics.")[-1])
    try:
        both([as_directory(files, tmp_path / "diagnostic.data")])
    except FtdcError as exc:  # a directory of another producer's files: the same error both ways
        with pytest.raises(FtdcError, match=re.escape(exc.message)):
            derive_ftdc([tmp_path / "diagnostic.data"], WHOLE, jobs=2)


def test_archives_and_an_interim_file_that_repeats_their_end(tmp_path: Path) -> None:
    more = FTDC / "more"
    files = sorted(more.glob("jorge__*")) if more.is_dir() else []
    if len(files) < 3:
        pytest.skip("../shared/data/ftdc/more is absent")
    window = both([as_directory(files, tmp_path / "diagnostic.data")])
    assert window.derived["t"].is_monotonic_increasing and window.derived["t"].is_unique


def test_files_out_of_time_order_are_the_same_in_workers(tmp_path: Path) -> None:
    # copies of three servers' files, not in time order (as the benchmark's directory): files
    # wholly before the samples already read are dropped, as one process drops them
    real = [shared_path("ftdc", "public-datadirs", *name) for name in LARGEST]
    order = [real[1], real[2], real[0], real[1], real[0], real[2]]
    d = tmp_path / "diagnostic.data"
    d.mkdir()
    for i, f in enumerate(order):
        shutil.copyfile(f, d / f"metrics.2026-01-01T00-00-{i:02d}Z-00000")
    window = both([d])
    assert window.derived["t"].is_monotonic_increasing


def one_server(d: Path, seconds: int, files: int = 3) -> SimServer:
    """``files`` metrics files of one synthetic server, ``seconds`` of 1 Hz samples each, in ``d``."""
    server = SimServer(checkpoints=[(s, s + 5) for s in range(30, files * seconds, 60)])
    d.mkdir()
    for k in range(files):
        times = [float(t) for t in range(k * seconds, (k + 1) * seconds)]
        write_ftdc(d / f"metrics.2026-01-01T00-0{k}-00Z-00000", server, times)
    return server


def test_a_window_that_cuts_through_files(tmp_path: Path) -> None:
    d = tmp_path / "diagnostic.data"
    server = one_server(d, 1000)
    t0_ms = int(server.t0 * 1000)
    window = both([d], TimeWindow(t0_ms + 600_000, t0_ms + 2_400_000))
    assert window.derived["t"].min() == pytest.approx(server.t0 + 600)
    assert window.derived["t"].max() == pytest.approx(server.t0 + 2400)


def restarted(d: Path, after_s: float) -> SimServer:
    """A file of 1,000 samples, then one of the server started again ``after_s`` after its start."""
    d.mkdir()
    first = SimServer(checkpoints=[(s, s + 5) for s in range(30, 1200, 60)])
    again = SimServer(checkpoints=[(s, s + 5) for s in range(30, 1200, 60)], t0=first.t0 + after_s, uptime0_ms=1000)
    write_ftdc(d / "metrics.2026-01-01T00-00-00Z-00000", first, [float(t) for t in range(1000)])
    write_ftdc(d / "metrics.2026-01-01T00-30-00Z-00000", again, [float(t) for t in range(1000)])
    return again


def test_a_restart_and_a_gap_between_files_count_once(tmp_path: Path) -> None:
    d = tmp_path / "diagnostic.data"
    again = restarted(d, 2000)
    write_ftdc(d / "metrics.2026-01-01T01-00-00Z-00000", again, [float(t) for t in range(1000, 1100)])
    window = both([d])
    assert (window.gaps, window.restarts) == (1, 1)


def test_a_damaged_file_in_the_middle_is_its_note_both_ways(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    d = tmp_path / "diagnostic.data"
    server = one_server(d, 900)
    middle = d / "metrics.2026-01-01T00-01-00Z-00000"
    middle.write_bytes(middle.read_bytes()[:-50])  # its last chunk cut short
    (d / "metrics.2026-01-01T00-01-30Z-00000").write_bytes(b"not FTDC at all" * 10)
    # a clock set back inside a file: its last chunk (1000-1299 s) ends before its latest sample
    # (1499 s), so the next file's worker joins it to the wrong row; the parent derives that
    # file again after the right one
    times = [float(t) for t in [*range(2700, 3300), *range(2800, 3100)]]
    write_ftdc(d / "metrics.2026-01-01T00-03-00Z-00000", server, times)
    write_ftdc(d / "metrics.2026-01-01T00-04-00Z-00000", server, [float(t) for t in range(3300, 3600)])
    # every derivation, in the workers (forked with the patch) and here, one line each
    log = tmp_path / "derived.log"
    derive_file = ftdc_window.derive_file

    def counted(file: Path, *args: object, **kwargs: object) -> object:
        with log.open("a") as out:
            out.write(file.name + "\n")
        return derive_file(file, *args, **kwargs)  # type: ignore[arg-type]

    one = derive_ftdc([d], WHOLE, jobs=1)
    monkeypatch.setattr(ftdc_window, "derive_file", counted)
    many = derive_ftdc([d], WHOLE, jobs=2)
    assert_same(one, many)
    derived = log.read_text().split()
    files = sorted(f.name for f in d.iterdir())
    # each file once, by a worker or by this process; only the one joined to the wrong row twice
    assert sorted(derived) == sorted([*files, "metrics.2026-01-01T00-04-00Z-00000"])
    errors = [r.error for r in many.data.reports if r.error]
    assert len(errors) == 2 and "truncated" in errors[0] and "not an FTDC file" in errors[1]


def test_a_file_given_alone_that_is_not_ftdc_raises_both_ways(tmp_path: Path) -> None:
    good = shared_path("ftdc", "public-datadirs", *LARGEST[0])
    bad = tmp_path / "metrics.bad"
    bad.write_bytes(b"\x05\x00\x00\x00\x00" + b"x" * 100)
    for jobs in (1, 2):
        with pytest.raises(FtdcError, match=r"metrics\.bad"):
            derive_ftdc([good, bad], WHOLE, jobs=jobs)


def test_report_with_workers_is_byte_for_byte_one_processs(tmp_path: Path) -> None:
    real = [shared_path("ftdc", "public-datadirs", *name) for name in LARGEST]
    d = tmp_path / "diagnostic.data"
    d.mkdir()
    for i, f in enumerate([*real, *real]):  # over the size that calls for workers
        shutil.copyfile(f, d / f"metrics.2026-01-01T00-00-{i:02d}Z-00000")
    assert sum(f.stat().st_size for f in d.iterdir()) >= ftdc_window.PARALLEL_BYTES
    texts = {}
    for jobs in ("1", "2"):
        env = {**os.environ, "CKPTDIAG_JOBS": jobs}
        out = tmp_path / f"r{jobs}.json"
        proc = run_cli("report", str(d), "-f", "json", "-o", str(out), env=env, timeout=120)
        assert proc.returncode in (0, 3, 4), proc.stderr
        doc = json.loads(out.read_text())
        doc.pop("generated")
        texts[jobs] = json.dumps(doc, sort_keys=True)
    assert texts["1"] == texts["2"]


@pytest.mark.parametrize("directory", shared_directories()[:4], ids=lambda d: d.name[:30])
def test_only_the_metrics_the_derivation_reads_are_decoded_and_the_figures_are_the_same(
    directory: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # a report decodes ~70 % of the metrics a chunk holds (those the derivation reads, and the
    # uptime that marks restarts): the same derived figures as decoding every catalogue metric
    from ckptdiag.analysis import series
    from ckptdiag.sources.ftdc import frames

    kept = frames._wanted(series.reads)
    every = frames._wanted(None)
    paths = sorted(directory.glob("*metrics.*"))
    assert sum(map(kept, _paths_of(paths[0]))) < sum(map(every, _paths_of(paths[0])))
    few = derive_ftdc(paths, WHOLE, jobs=1)
    monkeypatch.setattr(ftdc_window, "reads", None)  # every catalogue metric
    assert_same(derive_ftdc(paths, WHOLE, jobs=1), few)


def _paths_of(file: Path) -> list[str]:
    """The metric paths of a file's first metric chunk."""
    from ckptdiag.sources.ftdc.files import FileReport, read_selected
    from ckptdiag.sources.ftdc.reference import Selection

    for item in read_selected(file, False, FileReport(str(file)), None, {}, WHOLE):
        selection = getattr(item, "selection", None)
        if isinstance(selection, Selection):
            return list(selection.paths)
    return []


def test_a_restart_is_found_with_only_the_derivations_metrics_decoded(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the uptime is no figure the derivation reads, but marking restarts does: it is decoded
    d = tmp_path / "diagnostic.data"
    restarted(d, 1001)  # no gap: only the uptime going back shows the restart
    few = both([d])
    assert few.restarts == 1
    monkeypatch.setattr(ftdc_window, "reads", None)  # every catalogue metric
    assert_same(derive_ftdc([d], WHOLE, jobs=1), few)


def _dies_on_the_third_file(task: ftdc_window.Task, k: int) -> object:
    if k == 2:
        os._exit(9)  # as the OOM killer leaves a worker: no result, no word
    return _REAL_WORKER(task, k)


_REAL_WORKER = ftdc_window._worker_file


def test_a_worker_killed_costs_only_time_this_process_derives_the_rest(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    d = tmp_path / "diagnostic.data"
    one_server(d, 600, files=6)
    one = derive_ftdc([d], WHOLE, jobs=1)
    monkeypatch.setattr(ftdc_window, "_worker_file", _dies_on_the_third_file)
    assert_same(one, derive_ftdc([d], WHOLE, jobs=2))


def test_files_lying_outside_a_window_are_read_here_not_by_workers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # a window of two files' span out of six: the others give it only their first and last
    # chunks, read in this process (a worker took them one task at a time: 4 s for 2 days of 47)
    d = tmp_path / "diagnostic.data"
    server = one_server(d, 3000, files=6)
    t0_ms = int(server.t0 * 1000)
    window = TimeWindow(t0_ms + 6_100_000, t0_ms + 11_900_000)  # inside the third and fourth files
    sizes = [f.stat().st_size for f in sorted(d.iterdir())]
    monkeypatch.setattr(ftdc_window, "LIGHT_BYTES", min(sizes) // 2)
    monkeypatch.setattr(ftdc_window, "PARALLEL_BYTES", 0)
    from ckptdiag.sources.ftdc import files as ftdc_files_module

    monkeypatch.setattr(ftdc_files_module, "FAR_MS", 60_000)  # a minute: these files are short
    seen: list[list[bool]] = []
    real = ftdc_window._in_workers

    def spy(files: list[tuple[Path, bool]], w: TimeWindow, jobs: int, heavy: list[bool]) -> object:
        seen.append(heavy)
        return real(files, w, jobs, heavy)

    monkeypatch.setattr(ftdc_window, "_in_workers", spy)
    monkeypatch.setattr(ftdc_window, "workers_for", lambda jobs: 2)
    monkeypatch.setattr(ftdc_window, "may_fork", lambda: True)
    assert_same(derive_ftdc([d], window, jobs=1), derive_ftdc([d], window))
    assert seen == [[False, False, True, True, False, False]]
