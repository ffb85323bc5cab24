"""Shared fixtures: the real captured data beside the repository (../shared/data), skipped when absent."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).parent))  # tests/wire.py and tests/fakes.py

REPO = Path(__file__).resolve().parents[1]
SHARED_DATA = Path(os.environ.get("CKPTDIAG_SHARED_DATA", REPO.parent / "shared" / "data"))


def run_cli(*args: str, timeout: float = 60, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """``ckptdiag ARGS`` in a child process as a user runs it: no $MONGODB_URI, no terminal
    (``env``: the environment to start from instead of this one)."""
    env = {k: v for k, v in (os.environ if env is None else env).items() if k != "MONGODB_URI"}
    return subprocess.run(
        [sys.executable, "-m", "ckptdiag", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=env,
        stdin=subprocess.DEVNULL,
    )


def shared_path(*parts: str) -> Path:
    """A path under ../shared/data; the calling test is skipped when it does not exist."""
    path = SHARED_DATA.joinpath(*parts)
    if not path.exists():
        pytest.skip(f"shared data not available: {'/'.join(parts)}")
    return path


def load_status(name: str) -> dict[str, Any]:
    """A real serverStatus document (Extended JSON) from ../shared/data/server-status."""
    from bson import json_util

    return dict(json_util.loads(shared_path("server-status", name).read_text()))


def status_files() -> list[Path]:
    """Every per-version serverStatus document, or [] when the shared data is absent."""
    folder = SHARED_DATA / "server-status"
    return sorted(folder.glob("serverStatus_*.json")) if folder.is_dir() else []


@pytest.fixture
def shared() -> Path:
    """The shared data folder (skips when absent)."""
    if not SHARED_DATA.is_dir():
        pytest.skip("shared data not available")
    return SHARED_DATA


def mongod_line(date: str, component: str, msg_id: int, ctx: str, msg: str, attr: dict[str, Any] | None = None) -> str:
    """One line of mongod's JSON log (4.4+), as mongod writes it."""
    line: dict[str, Any] = {"t": {"$date": date}, "s": "I", "c": component, "id": msg_id, "ctx": ctx, "msg": msg}
    if attr is not None:
        line["attr"] = attr
    return json.dumps(line)


@pytest.fixture
def interval_proven(monkeypatch: pytest.MonkeyPatch) -> None:
    """The checkpoint-interval rule as if the lab had proven it: for the tests of what a proven
    setting does (the combined block, busy CPUs turning settings into checks). Which rules are
    proven today is ckptdiag/advice/proof.py's to say (none, since issue #30's yardstick)."""
    from ckptdiag.advice import proof

    monkeypatch.setitem(proof.PROVEN, "checkpoint-interval", "test")


ENGINE_RUNS = "test_lab.py"  # the lab's runs of a real engine: minutes together


@pytest.hookimpl(tryfirst=True)  # before pytest-xdist reads the group marks
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The lab's engine runs first, as one group. ``make test`` runs the suite in two workers
    (``-n 2 --dist loadgroup``): the engine's runs, several minutes in all, go to one worker one at
    a time (two at once would each be the other's noisy neighbour) while the other worker takes
    the quick tests; started first, the longest unit of work does not end the run alone."""
    for item in items:
        if item.path.name == ENGINE_RUNS:
            item.add_marker(pytest.mark.xdist_group("engine"))
    items.sort(key=lambda item: item.path.name != ENGINE_RUNS)
