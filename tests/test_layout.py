"""The layout stays readable: a module holds one concept, a function one job (docs/architecture.md)."""

from __future__ import annotations

import ast

from conftest import REPO

MODULE_LINES = 450
FUNCTION_LINES = 60
DATA_TABLES = {"ckptdiag/model/catalogue.py"}  # the metric catalogue: one entry per metric and version


def _modules() -> list[tuple[str, str]]:
    return [(str(p.relative_to(REPO)), p.read_text()) for p in sorted((REPO / "ckptdiag").rglob("*.py"))]


def test_no_module_is_longer_than_one_concept_needs() -> None:
    long = [f"{name}: {text.count(chr(10))}" for name, text in _modules() if name not in DATA_TABLES]
    assert [x for x in long if int(x.rsplit(": ", 1)[1]) > MODULE_LINES] == []


def test_no_function_is_longer_than_one_job_needs() -> None:
    long = [
        f"{name}:{node.lineno} {node.name} ({(node.end_lineno or node.lineno) - node.lineno + 1} lines)"
        for name, text in _modules()
        for node in ast.walk(ast.parse(text))
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
        and (node.end_lineno or node.lineno) - node.lineno + 1 > FUNCTION_LINES
    ]
    assert long == []


def _package_imports(text: str) -> list[str]:
    """The ckptdiag packages a module's ``from ckptdiag.X... import`` and ``from ckptdiag import X``
    lines name (X), anywhere in it."""
    found = []
    for node in ast.walk(ast.parse(text)):
        if not isinstance(node, ast.ImportFrom) or not node.module:
            continue
        target = node.module.split(".")
        if target[0] != "ckptdiag":
            continue
        found += [target[1]] if len(target) > 1 else [alias.name for alias in node.names]
    return found


def test_the_pipeline_never_imports_back_up() -> None:
    """sources -> recording -> analysis -> advice -> report: no module imports a later stage."""
    order = ["sources", "recording", "analysis", "advice", "report"]
    found = []
    for name, text in _modules():
        parts = name.split("/")
        stage = next((s for s in order if len(parts) > 2 and parts[1] == s), None)
        if stage is None:
            continue
        later = order[order.index(stage) + 1 :]
        found += [f"{name} imports ckptdiag.{p}" for p in _package_imports(text) if p in later]
    assert found == []


def test_analysis_advice_and_report_read_what_the_sources_made_never_the_sources() -> None:
    """The figures, advice and reports depend on the shared vocabulary (``ckptdiag.model``: a
    disk's counters and iostat's maths, the host CPU names, mongod's log events), never on the
    sources that read them; and the vocabulary and the guards import no stage (#29)."""
    stages = ("sources", "recording", "analysis", "advice", "report", "workflows", "cli", "lab")
    found = []
    for name, text in _modules():
        parts = name.split("/")
        if len(parts) < 3 or parts[1] not in ("analysis", "advice", "report", "model", "guard"):
            continue
        banned = stages if parts[1] in ("model", "guard") else ("sources",)
        found += [f"{name} imports ckptdiag.{p}" for p in _package_imports(text) if p in banned]
    assert found == []


def test_no_import_cycle() -> None:
    """No module imports one that imports it back, however indirectly — counting imports inside
    functions and under TYPE_CHECKING too (sources/ftdc had deltas -> reference -> frames -> files
    -> deltas; #29)."""
    names = {}
    for name, _ in _modules():
        module = name[:-3].replace("/", ".")
        names[module[: -len(".__init__")] if module.endswith(".__init__") else module] = name
    texts = dict(_modules())
    graph: dict[str, set[str]] = {m: set() for m in names}
    for module, path in names.items():
        for node in ast.walk(ast.parse(texts[path])):
            if isinstance(node, ast.ImportFrom) and node.module and node.module in names:
                graph[module].add(node.module)
                graph[module] |= {f"{node.module}.{a.name}" for a in node.names if f"{node.module}.{a.name}" in names}
    cycles = []
    state: dict[str, int] = {}  # 1: on the path, 2: done

    def visit(m: str, path: list[str]) -> None:
        state[m] = 1
        for n in sorted(graph[m]):
            if state.get(n) == 1:
                cycles.append(" -> ".join([*path[path.index(n) :], n]))
            elif n not in state:
                visit(n, [*path, n])
        state[m] = 2

    for m in sorted(graph):
        if m not in state:
            visit(m, [m])
    assert cycles == []


def test_the_time_window_is_cut_in_one_place_and_inputs_told_apart_in_one() -> None:
    """``--since``/``--until`` reach every source as one ``TimeWindow`` and are compared only in
    ``model/window.py`` (FTDC, recordings and logs cut by one rule); what an input is, is decided
    only in ``recording/inputs.py``."""
    import re

    compared = re.compile(r"(since|until)_(ms|s)\s*(<=|>=|<|>)|(<=|>=|<|>)\s*(since|until)_(ms|s)\b")
    cuts = [name for name, text in _modules() if compared.search(text) and name != "ckptdiag/model/window.py"]
    assert cuts == []
    deciders = [name for name, text in _modules() if re.search(r"^    def classify\(", text, re.M)]
    assert deciders == ["ckptdiag/recording/inputs.py"]
    logs = [name for name, text in _modules() if re.search(r"^def (is_log|is_log_dir|is_log_input)\(", text, re.M)]
    assert logs == ["ckptdiag/sources/logfiles.py"]


def test_the_window_keeps_both_ends() -> None:
    import numpy as np

    from ckptdiag.model.window import TimeWindow

    window = TimeWindow(1_000, 2_000)
    assert window.keep_ms(np.array([999, 1_000, 1_500, 2_000, 2_001])).tolist() == [False, True, True, True, False]
    assert window.keep_s(np.array([0.999, 1.0, 2.0, 2.0005])).tolist() == [False, True, True, False]
    assert TimeWindow().whole and TimeWindow().keep_s(np.array([0.0, 1e12])).all()
    error = window.empty("samples", "recordings", 0.0, 86_400.0)
    assert (
        error.message
        == "no samples in the given window: the recordings hold 1970-01-01T00:00:00Z to 1970-01-02T00:00:00Z"
    )
