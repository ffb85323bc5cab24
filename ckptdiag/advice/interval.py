"""The checkpoint-interval rule: a shorter interval means less dirty data per checkpoint and a
shorter burst (syncdelay / storage.syncPeriodSecs on 3.6+, checkpoint=(wait=N) on 3.4)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from ckptdiag.advice.changes import Change, EngineChange, ParameterChange
from ckptdiag.advice.kinds import IO_THROTTLED
from ckptdiag.advice.model import MIN_GAIN, CheckpointShape, at_interval, checkpoint_shape, finished, median
from ckptdiag.advice.recommendation import Recommendation
from ckptdiag.advice.text import fmt_ms, mb
from ckptdiag.analysis.dirty_curve import Share
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
# Without the server's own dirty-data curve the model scales bytes with the interval; a page
# touched by scattered writes (random index keys) is written whole at every checkpoint, so a much
# shorter interval saves less than that: in the lab (60 -> 10 s) checkpoints wrote 2x and took 2x
# what that predicted (docs/advice.md#predictions). Read from the curve, it came within 25 %.
SCATTER_RATIO = 4.0
SCATTER_CAVEAT = (
    " (a floor, not a promise: pages touched by scattered writes are written whole at every checkpoint, "
    "so at a much shorter interval each checkpoint writes more than its share; check with 'ckptdiag compare')"
)


@dataclass(frozen=True)
class Predicted:
    """The checkpoint predicted at an interval, with its range where the server's own dirty-data
    curve gave it (the cycles' spread), else none (the bytes in proportion to the interval)."""

    mid: CheckpointShape
    low: CheckpointShape | None = None
    high: CheckpointShape | None = None
    share: Share | None = None  # what the curve read at that interval (None: not from the curve)


def predicted_at(dx: Diagnosis, now: CheckpointShape, interval_s: float) -> Predicted:
    """The checkpoint at ``interval_s``: from the dirty data this server's cache held that long
    after its checkpoints ended (:mod:`~ckptdiag.analysis.dirty_curve`) where it had checkpoints
    that far apart, else in proportion to the interval."""
    share = dx.dirty_curve.share(interval_s) if dx.dirty_curve is not None else None
    if share is None:
        return Predicted(at_interval(now, interval_s))
    return Predicted(
        at_interval(now, interval_s, share.mid),
        at_interval(now, interval_s, share.low),
        at_interval(now, interval_s, share.high),
        share,
    )


@dataclass(frozen=True)
class IntervalDecision:
    """A shorter interval, and the checkpoints measured now and predicted after it."""

    interval_s: float  # as measured (else as configured)
    configured_s: float  # the setting in force (else as measured): what the title replaces
    new_s: float
    now: CheckpointShape
    after: Predicted
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
        (n for n in NICE_INTERVALS if n <= interval / 2 and (predicted_at(dx, now, n).mid.duration_s or 0) <= aim),
        MIN_INTERVAL_S,
    )
    after = predicted_at(dx, now, new)
    # below what is configured too: mongod sleeps the interval after each checkpoint ends, so the
    # period measured start to start is the setting plus a checkpoint (10.5 s at syncdelay=10,
    # where "every 10 s instead of 10 s" was printed)
    configured = dx.settings.interval.value or interval
    if new >= min(interval, configured) or (after.mid.duration_s or 0) * INTERVAL_HEADROOM > new:
        return None
    if (after.mid.duration_s or 0) > (1 - MIN_GAIN) * now.duration_s:
        # the server's cache holds as much dirty data soon after a checkpoint as at the next one
        # (its dirty data sits at the eviction target): more checkpoints, none of them shorter
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
    dirty_p50 = dx.eviction.dirty_pct_p50
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
        predicted=_shape_json(d.now, d.after),
        predicted_text=_predicted_text(d),
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


def _predicted_text(d: IntervalDecision) -> str:
    """What the new interval is predicted to give, with its range and where it comes from."""
    after, low, high = d.after.mid, d.after.low, d.after.high

    def span(get: Callable[[CheckpointShape], float | None], say: Callable[[float], str]) -> str:
        """The range as " (6-8 MB)", where there is one that reads as two figures."""
        lo, hi = (get(low), get(high)) if low is not None and high is not None else (None, None)
        if lo is None or hi is None or say(lo) == say(hi):
            return ""
        (lo_n, _, lo_unit), hi_text = say(lo).rpartition(" "), say(hi)
        return f" ({lo_n if hi_text.endswith(' ' + lo_unit) else say(lo)}-{hi_text})"

    text = (
        f"every {d.new_s:.0f} s: ~{mb(after.bytes_written)}"
        + span(lambda s: s.bytes_written, mb)
        + " per checkpoint"
        + (f" and ~{mb(after.held_bytes)} of eviction's writes with its sync" if after.held_bytes else "")
        + f" in ~{after.duration_s or 0:.1f} s"
        + span(lambda s: s.duration_s, lambda x: f"{x:.1f} s")
        + (f", write p99 inside ~{after.p99_inside_ms:,.0f} ms" if after.p99_inside_ms is not None else "")
        + "; the same total checkpoint I/O per hour, in smaller bursts"
    )
    share = d.after.share
    if share is not None:
        pairs = f"{share.cycles} pair{'s' if share.cycles != 1 else ''} of checkpoints"
        return text + (
            f" (from this server's own cache: {d.new_s:.0f} s after a checkpoint ended it held {100 * share.mid:.0f} % "
            f"of the dirty data the next one found, over {pairs}"
            + ("; the range is their spread)" if share.high > share.low else ")")
        )
    return text + (SCATTER_CAVEAT if d.new_s * SCATTER_RATIO <= d.interval_s else "")


def _shape_json(now: CheckpointShape, new: Predicted) -> dict[str, dict[str, float | None] | None]:
    def side(s: CheckpointShape | None) -> dict[str, float | None] | None:
        if s is None:
            return None
        return {
            "interval_s": s.interval_s,
            "bytes_per_checkpoint": s.bytes_written,
            "duration_s": s.duration_s,
            "write_p99_inside_ms": s.p99_inside_ms,
            "throughput_dip": s.ops_dip,
        }

    return {"now": side(now), "after": side(new.mid), "after_low": side(new.low), "after_high": side(new.high)}
