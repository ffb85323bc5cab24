"""Command-line conventions: one-line errors with a hint, documented exit codes."""

from __future__ import annotations

import subprocess
import sys

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
