"""Command-line conventions: one-line errors with a hint, documented exit codes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "ckptdiag", *args], capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL
    )


@pytest.mark.parametrize(
    ("args", "text"),
    [
        (("record", "-d", "soon"), "is not a duration"),
        (("report",), "Missing argument"),
        (("nope",), "No such command"),
        (("record", "--port", "99999"), "--port"),
        (("record", "--source", "diagnostic", "--device", "vda"), "--source diagnostic"),
    ],
)
def test_usage_errors_are_one_line_with_a_hint_and_exit_2(args: tuple[str, ...], text: str) -> None:
    proc = run(*args)
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("ckptdiag: error: ") and text in lines[0]
    assert "(hint: see 'ckptdiag" in lines[0] and proc.stdout == ""


def test_version_and_help() -> None:
    assert run("--version").stdout.startswith("ckptdiag, version ")
    assert run("-h").returncode == 0 and "record" in run("-h").stdout


def test_serving_runs_a_signal_handler_even_when_another_thread_takes_the_signal() -> None:
    # the kernel may deliver Ctrl-C to any of the lab's threads; the main thread runs the Python
    # handler only once it wakes, so serving must never block without a timeout
    import signal
    import threading
    import time

    from ckptdiag.workflows.lab import _wait

    stop = threading.Event()
    previous = signal.signal(signal.SIGUSR1, lambda signum, frame: stop.set())
    try:
        worker = threading.Thread(
            target=lambda: (time.sleep(0.2), signal.pthread_kill(threading.get_ident(), signal.SIGUSR1))
        )
        began = time.monotonic()
        worker.start()
        _wait(stop, 10.0)
        worker.join()
        assert stop.is_set() and time.monotonic() - began < 2.0
    finally:
        signal.signal(signal.SIGUSR1, previous)


def test_a_source_checkout_without_kernels_says_so_once(tmp_path: Path) -> None:
    """Run from a copy of the source tree without the compiled kernels: one note, on stderr,
    and the report is still made (by the Python paths)."""
    import shutil

    from synth import Server, write_recording

    checkout = tmp_path / "checkout"
    shutil.copytree(
        Path(__file__).resolve().parents[1] / "ckptdiag",
        checkout / "ckptdiag",
        ignore=shutil.ignore_patterns("*.so", "*.pyd", "__pycache__"),
    )
    rec = write_recording(Server(seconds=200).frame(), tmp_path / "r.jsonl.gz")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    # not installed: without the editable install's finder, which would find the built kernels
    not_installed = (
        "import runpy, sys; sys.meta_path = [f for f in sys.meta_path if 'editable' not in repr(f).lower()]; "
        "runpy.run_module('ckptdiag', run_name='__main__')"
    )
    proc = subprocess.run(
        [sys.executable, "-c", not_installed, "report", str(rec), "-f", "json"],
        cwd=checkout,
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert proc.returncode in (0, 3, 4), proc.stderr
    notes = [line for line in proc.stderr.splitlines() if "compiled kernels not built" in line]
    assert len(notes) == 1 and "_ftdc_kernel, _jsonl, _bsonpick" in notes[0] and "pip install -e ." in notes[0]
    assert json.loads(proc.stdout)["checkpoints"]["count"] > 0
    # as installed here: where the kernels were built, nothing is said
    from ckptdiag import fastpath

    proc = subprocess.run(
        [sys.executable, "-m", "ckptdiag", "report", str(rec), "-f", "json"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert ("compiled kernels" in proc.stderr) == bool(fastpath.missing())


@pytest.mark.parametrize(
    ("signal_exc", "status", "line"),
    [("Terminated", 143, "stopped by SIGTERM"), ("KeyboardInterrupt", 130, "interrupted")],
)
def test_a_signal_that_a_cleanup_turned_into_another_error_still_stops_as_the_signal(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], signal_exc: str, status: int, line: str
) -> None:
    """SIGTERM landing in a library's lock handling came out as "release unlocked lock" (the
    lock's ``finally``); the exit is the signal's, not an "unexpected" error's."""
    import ckptdiag.cli as cli_module
    from ckptdiag.errors import Terminated

    stop = Terminated() if signal_exc == "Terminated" else KeyboardInterrupt()

    def interrupted_cleanup(**_kwargs: object) -> None:
        try:
            raise stop
        finally:
            raise RuntimeError("release unlocked lock")

    monkeypatch.setattr(cli_module.cli, "main", interrupted_cleanup)
    with pytest.raises(SystemExit) as exited:
        cli_module.main(["report", "x"])
    assert exited.value.code == status
    err = capsys.readouterr().err
    assert line in err and "unexpected" not in err
