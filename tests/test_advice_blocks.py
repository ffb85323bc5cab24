"""The commands a DBA copies (#32): one language a block, each pasteable as it is: the mongosh
blocks parse as JavaScript, the mongod.conf blocks as YAML (never an empty ``storage:``, which is
null), the WiredTiger config string as one; in the terminal, the Markdown and the JSON alike."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
from synth import Server, disk_busy

from ckptdiag.advice import proof
from ckptdiag.advice.commands import Commands
from ckptdiag.advice.rules import Advice, recommend
from ckptdiag.analysis.diagnosis import diagnose
from ckptdiag.analysis.series import derive
from ckptdiag.model.engine_config import parse_config
from ckptdiag.model.facts import ServerFacts
from ckptdiag.report.advice import advice_markdown

yaml = pytest.importorskip("yaml")
GB = 2**30


def _advice(monkeypatch: pytest.MonkeyPatch, version: str, **facts: Any) -> Advice:
    """A stalling server whose dirty target was raised at runtime, on a disk that keeps up: an
    interval and a dirty-target change (both made settings here, so that the combined block holds
    a parameter and an engine change)."""
    monkeypatch.setitem(proof.PROVEN, "eviction-dirty", "test")  # as if proven: none is today (proof.py)
    monkeypatch.setitem(proof.PROVEN, "checkpoint-interval", "test")
    frame = Server(seconds=900, period=60, duration=1.8, mb_per_s=80 / 1.8, ops=2000, stall_ops=600).frame()
    frame["cache.max_bytes"] = float(GB)
    # checkpoints find 30 % of the cache dirty, built up since the last one began (a shorter
    # interval would find less: held there all the time, no interval is offered)
    frame["cache.dirty_bytes"] *= 0.3 * GB / frame["cache.dirty_bytes"].max()
    disk_busy(frame, 30)
    raised = {"wiredTigerEngineRuntimeConfig": "eviction_dirty_target=20,eviction_dirty_trigger=40"}
    advice = recommend(diagnose(derive(frame), ServerFacts(version=version, parameters=raised, **facts)))
    assert {"checkpoint-interval", "eviction-dirty"} <= {r.id for r in advice.recommendations if r.kind == "setting"}
    return advice


CASES = [
    ("7.0.21", {}),  # no configString: its revert is a line to remove
    ("7.0.21", {"config_string": "eviction=(threads_min=4,threads_max=4)"}),  # the other keys kept
    ("3.4.24", {"config_string": "checkpoint=(wait=60,log_size=2GB)"}),  # the interval is an engine key
]


def _every(advice: Advice) -> list[Commands]:
    return [advice.combined, *(r.commands for r in advice.recommendations)]


def _javascript_parses(code: str, tmp_path: Path) -> None:
    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not installed: the mongosh blocks cannot be parsed here")
    script = tmp_path / "block.js"
    script.write_text(code + "\n")
    proc = subprocess.run([node, "--check", str(script)], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, (code, proc.stderr)


def _yaml_block_is_whole(code: str) -> None:
    doc = yaml.safe_load(code)
    if doc is None:  # only comments: lines to remove, each saying which
        assert all(line.startswith("# storage.") and "remove the line" in line for line in code.splitlines())
        return
    assert isinstance(doc, dict) and isinstance(doc["storage"], dict), code  # never `storage:` alone (null)


@pytest.mark.parametrize(("version", "facts"), CASES)
def test_every_block_is_one_language_and_pastes_as_it_is(
    version: str, facts: dict[str, Any], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    advice = _advice(monkeypatch, version, **facts)
    for commands in _every(advice):
        for code in ("\n".join(commands.apply_runtime), "\n".join(commands.revert_runtime)):
            if code:
                assert all(line.startswith("db.adminCommand({") for line in code.splitlines()), code
                _javascript_parses(code, tmp_path)
        for code in (commands.apply_config, commands.revert_config):
            if code:
                _yaml_block_is_whole(code)
        if commands.engine:
            assert parse_config(commands.engine) and "\n" not in commands.engine and '"' not in commands.engine
    assert advice.combined.engine  # the dirty target is an engine change


def test_the_markdown_fences_each_language_apart(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    md = "\n".join(advice_markdown(_advice(monkeypatch, "7.0.21")))
    fences = re.findall(r"```(\w*)\n(.*?)\n```", md, flags=re.S)
    assert {lang for lang, _ in fences} == {"js", "yaml", "text"}
    for lang, code in fences:
        if lang == "js":
            _javascript_parses(code, tmp_path)
        elif lang == "yaml":
            _yaml_block_is_whole(code)
        else:
            assert parse_config(code)
    together = md.split("### All together", 1)[1]
    labels = [line for line in together.splitlines() if line.endswith(":") and line[:1].isupper()]
    assert labels == [
        "Apply now, in mongosh (lost at restart):",
        "Apply for good, in mongod.conf:",
        "The same engine change as a WiredTiger config string:",
        "Revert now, in mongosh:",
        "Revert in mongod.conf:",
    ]
