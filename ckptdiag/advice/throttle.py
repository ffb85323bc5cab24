"""WiredTiger's own write throttle: io_capacity holding checkpoints back."""

from __future__ import annotations

from dataclasses import dataclass

from ckptdiag.advice.cause import IO_THROTTLED
from ckptdiag.advice.changes import EngineChange
from ckptdiag.advice.recommendation import Recommendation
from ckptdiag.advice.text import mb
from ckptdiag.analysis.results import Diagnosis
from ckptdiag.engine_config import Setting


@dataclass(frozen=True)
class ThrottleDecision:
    """io_capacity to lift: the throttle in force and what the disk has shown it writes."""

    cap: Setting
    disk_peak_mb_s: float | None


def decide_io_capacity(dx: Diagnosis, causes: frozenset[str] = frozenset()) -> ThrottleDecision | None:
    """The decision of the io_capacity rule: where the throttle is the cause the evidence shows."""
    cap = dx.settings.io_capacity
    if IO_THROTTLED not in causes or not cap.value:
        return None
    return ThrottleDecision(cap, dx.disk_peak_mb_s)


def io_capacity_rule(dx: Diagnosis, causes: frozenset[str] = frozenset()) -> Recommendation | None:
    """Where io_capacity throttles the checkpoint, name it and give the change that lifts it.

    A check, not a setting, until the lab proves it (docs/lab.md): the throttle may have been set
    on purpose (a shared disk), and lifting it moves the burst onto the disk.
    """
    d = decide_io_capacity(dx, causes)
    return None if d is None else _worded(d)


def _worded(d: ThrottleDecision) -> Recommendation:
    """The decision, worded for the DBA who applies it."""
    cap = d.cap
    peak = f"{d.disk_peak_mb_s:.0f} MB/s" if d.disk_peak_mb_s else "unknown"
    return Recommendation(
        id="io-capacity",
        kind="note",
        setting="io_capacity=(total)",
        title=f"io_capacity holds WiredTiger's writes to {mb(cap.value)}/s: lift it (total=0) or raise it",
        current={"io_capacity_total": mb(cap.value)},
        current_source=cap.source,
        recommended={"io_capacity_total": "0 (off)"},
        evidence=(
            f"io_capacity=(total={mb(cap.value)}) ({cap.source}) throttles checkpoint, eviction and journal writes",
            f"the disk has shown {peak} in this window",
        ),
        predicted={},
        predicted_text="checkpoints write at the disk's own rate: shorter, without the throttle's waits",
        tradeoffs=(
            "the checkpoint's burst reaches the disk unthrottled: if the throttle was set to protect a shared "
            "disk, raise it to what that disk can spare instead of removing it",
        ),
        confidence="medium",
        confidence_why="the throttle is in the settings in force; not yet verified in the lab",
        change=EngineChange({"io_capacity": "(total=0)"}, {"io_capacity": f"(total={int(cap.number)})"}),
    )
