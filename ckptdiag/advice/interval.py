"""The checkpoint-interval rule: a shorter interval means less dirty data per checkpoint and a
shorter burst (syncdelay / storage.syncPeriodSecs on 3.6+, checkpoint=(wait=N) on 3.4)."""

from __future__ import annotations

from dataclasses import dataclass

from ckptdiag.advice.changes import Change, EngineChange, ParameterChange
from ckptdiag.advice.kinds import IO_THROTTLED
from ckptdiag.advice.model import CheckpointShape, at_interval, checkpoint_shape, finished, median
from ckptdiag.advice.recommendation import Recommendation
from ckptdiag.advice.text import fmt_ms, mb
from ckptdiag.analysis.results import Diagnosis
from ckptdiag.analysis.summary import figure
from ckptdiag.analysis.verdict import hurting_checkpoints
from ckptdiag.model.engine_config import DEFAULT_INTERVAL_S, EngineSettings

TARGET_CHECKPOINT_S = 1.0  # aim for checkpoints the disk writes in about a second
# ... but where writes stop outright while a checkpoint runs (the typical one keeps at most 10 %
# of them: writes waiting on the journal behind the checkpoint's sync), every checkpoint is a
# pause as long as itself: aim for under a third of a second, a pause that leaves each second
# most of its writes (the interval floor below still applies)
STOPPED_OPS_RATIO = 0.1
TARGET_STOPPED_CHECKPOINT_S = 0.3
MIN_INTERVAL_S = 10.0  # shorter: root pages of every table rewritten several times a minute
INTERVAL_HEADROOM = 3.0  # the interval stays >= 3x the predicted checkpoint
NICE_INTERVALS = (300, 240, 180, 120, 90, 60, 45, 30, 20, 15, 10)
# The model scales bytes with the interval; a page touched by scattered writes (random index keys)
# is written whole at every checkpoint, so a much shorter interval saves less than that: in the
# lab (60 -> 10 s) checkpoints wrote 2x and took 2x what the model predicted (docs/advice.md).
SCATTER_RATIO = 4.0
SCATTER_CAVEAT = (
    " (a floor, not a promise: pages touched by scattered writes are written whole at every checkpoint, "
    "so at a much shorter interval each checkpoint writes more than its share; check with 'ckptdiag compare')"
)


@dataclass(frozen=True)
class IntervalDecision:
    """A shorter interval, and the checkpoints measured now and predicted after it."""

    interval_s: float  # as measured (else as configured)
    configured_s: float  # the setting in force (else as measured): what the title replaces
    new_s: float
    now: CheckpointShape
    after: CheckpointShape
    aim_s: float  # the checkpoint duration aimed for
    stopped_ratio: float | None  # throughput kept in the typical checkpoint, when writes stop
    hurting: int


def decide(dx: Diagnosis) -> IntervalDecision | None:
    """The interval to recommend, or None when a shorter one would not help enough."""
    hurting = int(hurting_checkpoints(dx.episodes).sum())
    if not hurting:
        return None
    interval = dx.checkpoint_period_s or dx.settings.interval.value or DEFAULT_INTERVAL_S
    now = checkpoint_shape(dx, interval)
    if now is None or not now.duration_s:
        return None
    if now.prepare_bound:
        # most of it is the walk over every handle, the same at any interval: a shorter one would
        # repeat that freeze more often (the handles cause says what to do instead)
        return None
    kept = median(figure(finished(dx), "impact.ops_ratio"))
    stopped = kept is not None and kept <= STOPPED_OPS_RATIO
    aim = TARGET_STOPPED_CHECKPOINT_S if stopped else TARGET_CHECKPOINT_S
    # the longest interval, at most half the one now, whose checkpoints the model puts at the aim
    # (eviction's held writes do not shrink with it below 30 s), else the shortest
    new = next(
        (n for n in NICE_INTERVALS if n <= interval / 2 and (at_interval(now, n).duration_s or 0) <= aim),
        MIN_INTERVAL_S,
    )
    after = at_interval(now, new)
    # below what is configured too: mongod sleeps the interval after each checkpoint ends, so the
    # period measured start to start is the setting plus a checkpoint (10.5 s at syncdelay=10,
    # where "every 10 s instead of 10 s" was printed)
    configured = dx.settings.interval.value or interval
    if new >= min(interval, configured) or (after.duration_s or 0) * INTERVAL_HEADROOM > new:
        return None
    return IntervalDecision(interval, configured, new, now, after, aim, kept if stopped else None, hurting)


def _evidence(dx: Diagnosis, d: IntervalDecision) -> tuple[str, ...]:
    cur = dx.settings.interval
    now = d.now
    out = [
        f"checkpoints every {d.interval_s:.0f} s"
        + (f" (configured {cur.value:g} s, {cur.source})" if cur.value else ""),
        f"{d.hurting} of {len(dx.episodes)} checkpoints cost throughput or stalled; typical one "
        f"{now.duration_s or 0:.1f} s writing {mb(now.bytes_written)}" + _flushed(now),
    ]
    if d.stopped_ratio is not None:
        out.append(
            f"writes stop while a checkpoint runs ({100 * d.stopped_ratio:.0f} % of usual in the typical one): aiming "
            f"for checkpoints of {d.aim_s:g} s, not {TARGET_CHECKPOINT_S:g} s"
        )
    if now.p99_inside_ms is not None:
        out.append(
            f"write p99 {fmt_ms(now.p99_inside_ms)} inside checkpoints vs {fmt_ms(now.p99_between_ms)} between them"
        )
    return tuple(out)


def _flushed(now: CheckpointShape) -> str:
    """The rate the typical checkpoint's sync flushed at, with eviction's held writes where they count."""
    if not now.disk_rate:
        return ""
    if now.held_bytes:
        return (
            f" (its sync flushed {mb((now.bytes_written or 0) + now.held_bytes)} with eviction's held writes, "
            f"at {now.disk_rate / 2**20:.0f} MB/s)"
        )
    return f" at {now.disk_rate / 2**20:.0f} MB/s"


def _change(settings: EngineSettings, new: float) -> tuple[str, Change, str]:
    """The knob this version uses, its change, and the trade-off that goes with it."""
    old = settings.interval.value or DEFAULT_INTERVAL_S
    if settings.wt_checkpoint_knob:  # 3.4: mongod handed the interval to WiredTiger
        change = EngineChange(
            {"checkpoint": f"(wait={new:.0f},log_size=2GB)"}, {"checkpoint": f"(wait={int(old)},log_size=2GB)"}
        )
        return (
            "checkpoint=(wait=N)",
            change,
            "MongoDB 3.4: WiredTiger's own checkpoint=(wait=N), set through the engine config",
        )
    delay = ParameterChange("syncdelay", ("storage", "syncPeriodSecs"), new, old, settings.interval.inferred)
    note = "at runtime mongod's checkpoint thread picks the new value up after its current sleep (SERVER-48486)"
    return "syncdelay / storage.syncPeriodSecs", delay, note


def interval_rule(dx: Diagnosis, causes: frozenset[str] = frozenset()) -> Recommendation | None:
    """Checkpoint more often when checkpoints hurt and a shorter one would be short enough.

    Not where WiredTiger's own io_capacity throttle is the cause: the checkpoints' durations are
    the throttle's, so the model's disk rate would be too, and the io-capacity rule lifts it."""
    if IO_THROTTLED in causes:
        return None
    d = decide(dx)
    if d is None:
        return None
    after, dirty_p50 = d.after, dx.eviction.dirty_pct_p50
    dirty_capped = dirty_p50 is not None and dirty_p50 >= 0.9 * dx.settings.eviction.dirty_target.number
    confidence, why = (
        ("medium", "dirty data sits at the eviction target: it, not the interval, caps part of each burst")
        if dirty_capped
        else ("high", "the dirty data a checkpoint writes builds up between checkpoints at this run's write rate")
    )
    setting, change, knob_note = _change(dx.settings, d.new_s)
    return Recommendation(
        id="checkpoint-interval",
        kind="setting",
        setting=setting,
        # the setting in force, not the period measured start to start (62 s at syncdelay=60)
        title=f"Checkpoint every {d.new_s:.0f} s instead of {d.configured_s:.0f} s",
        current=dx.settings.interval.value,
        current_source=dx.settings.interval.source,
        recommended=d.new_s,
        evidence=_evidence(dx, d),
        predicted=_shape_json(d.now, after),
        predicted_text=(
            f"every {d.new_s:.0f} s: ~{mb(after.bytes_written)} per checkpoint"
            + (f" and ~{mb(after.held_bytes)} of eviction's writes with its sync" if after.held_bytes else "")
            + f" in ~{after.duration_s or 0:.1f} s"
            + (f", write p99 inside ~{after.p99_inside_ms:,.0f} ms" if after.p99_inside_ms is not None else "")
            + "; the same total checkpoint I/O per hour, in smaller bursts"
            + (SCATTER_CAVEAT if d.new_s * SCATTER_RATIO <= d.interval_s else "")
        ),
        tradeoffs=(
            f"twice or more the checkpoints ({3600 / d.new_s:.0f} an hour instead of {3600 / d.interval_s:.0f}): "
            "more metadata writes (each table's root page); negligible on SSD",
            f"crash recovery replays at most {d.new_s:.0f} s of journal instead of {d.interval_s:.0f} s (faster)",
            knob_note,
        ),
        confidence=confidence,
        confidence_why=why,
        change=change,
        lab={"checkpoint_s": d.new_s},
    )


def _shape_json(now: CheckpointShape, new: CheckpointShape) -> dict[str, dict[str, float | None]]:
    def side(s: CheckpointShape) -> dict[str, float | None]:
        return {
            "interval_s": s.interval_s,
            "bytes_per_checkpoint": s.bytes_written,
            "duration_s": s.duration_s,
            "write_p99_inside_ms": s.p99_inside_ms,
            "throughput_dip": s.ops_dip,
        }

    return {"now": side(now), "after": side(new)}
