"""WiredTiger's own write throttle: io_capacity holding checkpoints back.

Not yet proven in the lab (advice/proof.py says why: WiredTiger's throttle holds checkpoints
back irregularly on the lab's ``io-throttled`` scenario), so it is given as a check. The
prediction keeps the bytes per checkpoint (the interval is unchanged) and writes them at what
this disk has shown it writes in the window, never at the throttled checkpoint's own rate.
"""

from __future__ import annotations

from dataclasses import dataclass

from ckptdiag.advice.changes import EngineChange
from ckptdiag.advice.kinds import IO_THROTTLED
from ckptdiag.advice.model import CheckpointShape, checkpoint_shape
from ckptdiag.advice.recommendation import Recommendation
from ckptdiag.advice.text import mb
from ckptdiag.analysis.results import Diagnosis
from ckptdiag.model.engine_config import DEFAULT_INTERVAL_S, Setting


@dataclass(frozen=True)
class ThrottleDecision:
    """io_capacity to lift: the throttle in force, the checkpoints it shaped, and the disk's own rate."""

    cap: Setting
    disk_peak_mb_s: float | None
    now: CheckpointShape | None
    after_duration_s: float | None  # the typical checkpoint's bytes at the disk's demonstrated rate


def decide_io_capacity(dx: Diagnosis, causes: frozenset[str] = frozenset()) -> ThrottleDecision | None:
    """The decision of the io_capacity rule: where the throttle is the cause the evidence shows."""
    cap = dx.settings.io_capacity
    if IO_THROTTLED not in causes or not cap.value:
        return None
    now = checkpoint_shape(dx, dx.checkpoint_period_s or dx.settings.interval.value or DEFAULT_INTERVAL_S)
    after = None
    # the disk's rate counts only where it beat the throttle: a disk that never wrote faster than
    # the cap in this window has not shown what it can do unthrottled
    if now and now.bytes_written and dx.disk_peak_mb_s and dx.disk_peak_mb_s * 2**20 > cap.value:
        after = now.bytes_written / (dx.disk_peak_mb_s * 2**20)
    return ThrottleDecision(cap, dx.disk_peak_mb_s, now, after)


def io_capacity_rule(dx: Diagnosis, causes: frozenset[str] = frozenset()) -> Recommendation | None:
    """Where io_capacity throttles the checkpoint, name it and give the change that lifts it."""
    d = decide_io_capacity(dx, causes)
    return None if d is None else _worded(d)


def _predicted(d: ThrottleDecision) -> tuple[dict[str, float | None], str]:
    now = d.now
    figures: dict[str, float | None] = {
        "bytes_per_checkpoint": now.bytes_written if now else None,
        "duration_s_now": now.duration_s if now else None,
        "duration_s_after": d.after_duration_s,
    }
    if now is None or now.bytes_written is None or d.after_duration_s is None:
        return figures, "checkpoints write at the disk's own rate, without the throttle's waits"
    return figures, (
        f"the same ~{mb(now.bytes_written)} per checkpoint, written at the disk's {d.disk_peak_mb_s:.0f} MB/s: "
        f"~{max(d.after_duration_s, 0.1):.1f} s instead of ~{now.duration_s or 0:.0f} s; no throughput cap "
        "(the throttle was the cap)"
    )


def _worded(d: ThrottleDecision) -> Recommendation:
    """The decision, worded for the DBA who applies it."""
    cap = d.cap
    peak = f"{d.disk_peak_mb_s:.0f} MB/s" if d.disk_peak_mb_s else "an unknown rate"
    predicted, text = _predicted(d)
    evidence = [f"io_capacity=(total={mb(cap.value)}) ({cap.source}) holds checkpoint and eviction writes to it"]
    if d.now and d.now.duration_s:
        evidence.append(
            f"the typical checkpoint wrote {mb(d.now.bytes_written or 0)} in {d.now.duration_s:.0f} s "
            f"({(d.now.disk_rate or 0) / 2**20:.0f} MB/s)"
        )
    evidence.append(f"the disk has shown {peak} in this window")
    return Recommendation(
        id="io-capacity",
        kind="setting",
        setting="io_capacity=(total)",
        title=f"Lift WiredTiger's write throttle (io_capacity total {mb(cap.value)}/s → off)",
        current={"io_capacity_total": mb(cap.value)},
        current_source=cap.source,
        recommended={"io_capacity_total": "0 (off)"},
        evidence=tuple(evidence),
        predicted=predicted,
        predicted_text=text,
        tradeoffs=(
            "the checkpoint's burst reaches the disk unthrottled: if the throttle was set to protect a shared "
            "disk, raise it to what that disk can spare instead of removing it",
        ),
        confidence="medium",
        confidence_why="the throttle is in the settings in force and checkpoints waited for it",
        change=EngineChange({"io_capacity": "(total=0)"}, {"io_capacity": f"(total={int(cap.number)})"}),
        lab={"io_capacity_mb": 0},
    )
