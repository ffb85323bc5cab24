"""compare: two windows (or JSON reports) side by side."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ckptdiag.model.window import WHOLE, TimeWindow
from ckptdiag.status import ExitStatus
from ckptdiag.workflows import Warn
from ckptdiag.workflows.report import Destination, check_outputs, diagnose_window, write_text_output


@dataclass(frozen=True)
class CompareSide:
    """One side of ``ckptdiag compare``: a recording, FTDC, or a JSON report, and a window."""

    path: Path
    window: TimeWindow = WHOLE


def load_side(side: CompareSide) -> dict[str, Any]:
    """The report document of one side: read from a JSON report, else diagnosed from the data."""
    import json

    from ckptdiag.errors import InputError, UsageError
    from ckptdiag.report.document import to_document

    if side.path.suffix.lower() == ".json" and side.path.is_file():
        if not side.window.whole:
            raise UsageError(f"{side.path} is a finished report: its window is fixed", "drop --since/--until for it")
        try:
            doc = json.loads(side.path.read_text())
        except (OSError, ValueError) as exc:
            raise InputError(
                f"cannot read {side.path} as a JSON report: {exc}", "pass a 'report -f json' file"
            ) from None
        if not isinstance(doc, dict) or "schema_version" not in doc or "checkpoints" not in doc:
            raise InputError(f"{side.path} is not a ckptdiag JSON report", "write one with 'ckptdiag report -f json'")
        return doc
    if not side.path.exists():
        raise InputError(f"{side.path} does not exist", "pass a recording, a diagnostic.data directory or a report")
    return to_document(diagnose_window((side.path,), side.window))


@dataclass(frozen=True)
class CompareRequest:
    """``ckptdiag compare A B``."""

    before: CompareSide
    after: CompareSide
    outputs: tuple[Destination, ...]  # the table's files (or stdout), all from one comparison
    fail_on: str = "never"  # "regress": exit 3 when a figure got worse


def run_compare(request: CompareRequest, warn: Warn) -> ExitStatus:
    """Diagnose (or read) both sides, write the before/after table in the requested format, and
    return the exit status: 3 when a figure got worse and ``--fail-on regress`` asked it, else 0."""

    from rich.console import Console

    from ckptdiag.report import compare as render
    from ckptdiag.report import formats

    protect = (request.before.path, request.after.path)  # never written over
    check_outputs(request.outputs, protect)  # before the work
    comparison = render.compare(load_side(request.before), load_side(request.after))
    status = ExitStatus.WARN if request.fail_on == "regress" and comparison.worse else ExitStatus.OK
    for out in request.outputs:
        if out.fmt == "table" and out.path is None:
            Console().print(render.render_compare_table(comparison))
            continue
        write_text_output(formats.render(comparison, out.fmt), out.path, protect, warn)
    return status
