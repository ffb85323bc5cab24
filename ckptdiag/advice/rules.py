"""Recommendations: rules over a diagnosis that pick the knobs for the server in front of us.

Every rule, its evidence threshold and its source are in ``docs/advice.md``. A server whose
checkpoints do not hurt it (verdict ``ok``) gets no change at all: tuning a healthy server is
how the seeds' readers ended up with 20 eviction threads and 1 % dirty targets.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ckptdiag.advice.model import CheckpointShape, at_interval
from ckptdiag.advice.settings import (
    DEFAULT_COMMIT_MS,
    EVICTION_THREADS_LIMIT,
    Current,
    current_settings,
    merge_config,
    render_config,
)
from ckptdiag.analysis.diagnosis import Diagnosis, ServerFacts, hurts

# checkpoint interval
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
# dirty targets
DEFAULT_DIRTY_TARGET = 5.0
DEFAULT_DIRTY_TRIGGER = 20.0
DIRTY_BURST_S = 2.0  # dirty data at the target should be writable in ~2 s of this disk's checkpoint rate
# ... where dirty data reaches the target at all (80 % of it); below it the interval sets the burst
DIRTY_NEAR_TARGET = 0.8
MIN_DIRTY_TARGET_PCT = 1.0  # below 1 % of the cache: say it in bytes (WiredTiger takes > 100 as bytes)
# cache size
CACHE_OVER_DEFAULT = 1.05  # configured above mongod's default formula by more than 5 %
# eviction target/trigger (seed 003)
RECOMMENDED_EVICTION_TARGET = 75.0
RECOMMENDED_EVICTION_TRIGGER = 97.0
# disk note
SATURATED_UTIL_PCT = 90.0

CONFIDENCE = ("low", "medium", "high")


@dataclass
class Recommendation:
    """One recommended change (or, ``kind == "note"``, one thing to check), with its proof."""

    id: str
    kind: str  # "setting" or "note"
    setting: str
    title: str
    current: Any
    current_source: str
    recommended: Any
    evidence: list[str]
    predicted: dict[str, Any]
    predicted_text: str
    tradeoffs: list[str]
    confidence: str
    confidence_why: str
    apply_runtime: str | None = None
    apply_config: str | None = None
    revert_runtime: str | None = None
    revert_config: str | None = None
    lab: dict[str, Any] = field(default_factory=dict)  # the same change as lab overrides
    wt_change: dict[str, str] = field(default_factory=dict)  # engine-config keys it sets ...
    wt_revert: dict[str, str] = field(default_factory=dict)  # ... and their values now

    def to_json(self) -> dict[str, Any]:
        """The JSON report's ``recommendations[]`` item."""
        return {
            "id": self.id,
            "kind": self.kind,
            "setting": self.setting,
            "title": self.title,
            "current": {"value": self.current, "source": self.current_source},
            "recommended": self.recommended,
            "evidence": self.evidence,
            "predicted": {**self.predicted, "text": self.predicted_text},
            "tradeoffs": self.tradeoffs,
            "confidence": {"level": self.confidence, "why": self.confidence_why},
            "apply": {"runtime": self.apply_runtime, "mongod_conf": self.apply_config},
            "revert": {"runtime": self.revert_runtime, "mongod_conf": self.revert_config},
        }


@dataclass
class Advice:
    """All recommendations for one diagnosis, and the combined commands."""

    recommendations: list[Recommendation]
    summary: str
    current: Current
    apply_runtime: list[str] = field(default_factory=list)
    apply_config: str | None = None
    revert_runtime: list[str] = field(default_factory=list)
    revert_config: str | None = None

    @property
    def lab_overrides(self) -> dict[str, Any]:
        """Every recommended setting as lab overrides (for ``demo --verify``)."""
        out: dict[str, Any] = {}
        for r in self.recommendations:
            out.update(r.lab)
        return out

    def to_json(self) -> dict[str, Any]:
        """The JSON report's ``advice`` object."""
        return {
            "summary": self.summary,
            "current": {
                "checkpoint_interval_s": self.current.interval.to_json(),
                "journal_commit_interval_ms": self.current.commit_ms.to_json(),
                "cache_bytes": self.current.cache_bytes.to_json(),
                "eviction_source": self.current.eviction.source,
                "config_string": self.current.config_string,
                "filesystem": self.current.filesystem,
                "notes": self.current.notes,
            },
            "apply": {"runtime": self.apply_runtime, "mongod_conf": self.apply_config},
            "revert": {"runtime": self.revert_runtime, "mongod_conf": self.revert_config},
        }


# -- helpers ------------------------------------------------------------------------------------


def _mb(n: float | None) -> str:
    if n is None:
        return "?"
    return f"{n / 2**30:.1f} GB" if n >= 2**30 else f"{n / 2**20:.0f} MB"


def _median(values: list[float]) -> float | None:
    return float(np.median(values)) if values else None


def _episode_figures(dx: Diagnosis, name: str, *, focus: bool = True) -> list[float]:
    episodes = [e for e in dx.episodes if e.end is not None]
    if focus:
        episodes = [e for e in episodes if hurts(e)] or episodes
    return [float(v) for e in episodes if isinstance(v := e.impact.get(name), int | float) and math.isfinite(v)]


def checkpoint_shape(dx: Diagnosis, interval_s: float) -> CheckpointShape | None:
    """The measured typical checkpoint (the ones that hurt, else all) at ``interval_s``."""
    done = [e for e in dx.episodes if e.end is not None and e.evidence != "disk-burst"]
    focus = [e for e in done if hurts(e)] or done
    durations = [float(e.duration_s) for e in focus if e.duration_s]
    written = [float(e.bytes_written) for e in focus if e.bytes_written]
    if not durations:
        return None
    ratios = _episode_figures(dx, "ops_ratio")
    return CheckpointShape(
        interval_s=interval_s,
        bytes_written=_median(written),
        duration_s=_median(durations),
        p99_inside_ms=_median(_episode_figures(dx, "write_p99_ms_peak")),
        p99_between_ms=dx.baseline.write_p99_ms,
        ops_dip=1 - float(np.median(ratios)) if ratios else None,
    )


def _nice_interval(limit: float) -> float:
    return float(next((n for n in NICE_INTERVALS if n <= limit), NICE_INTERVALS[-1]))


def _runtime_wt(config: str) -> str:
    return f'db.adminCommand({{setParameter: 1, wiredTigerEngineRuntimeConfig: "{config}"}})'


def _config_yaml(config_string: str) -> str:
    return f'storage:\n  wiredTiger:\n    engineConfig:\n      configString: "{config_string}"'


def _engine(cur: Current, change: dict[str, str], revert: dict[str, str]) -> dict[str, Any]:
    """The commands of an engine-config change (runtime and mongod.conf, apply and revert)."""
    return {
        "apply_runtime": _runtime_wt(render_config(change)),
        "apply_config": _config_yaml(merge_config(cur.config_string, change)),
        "revert_runtime": _runtime_wt(render_config(revert)),
        "revert_config": (
            _config_yaml(cur.config_string) if cur.config_string else "remove configString (back to the defaults)"
        ),
        "wt_change": change,
        "wt_revert": revert,
    }


# -- the rules ----------------------------------------------------------------------------------


def recommend(dx: Diagnosis, facts: ServerFacts) -> Advice:
    """The recommendations for a diagnosed window (none when its verdict is ``ok``)."""
    cur = current_settings(facts)
    if dx.severity == "ok":
        return Advice([], "no change: checkpoints do not hurt this server", cur)
    recs: list[Recommendation] = []
    for rule in (_interval, _dirty, _cache_size, _eviction_targets, _threads, _updates):
        rec = rule(dx, cur)
        if rec is not None:
            recs.append(rec)
    if not any(r.id == "eviction-dirty" for r in recs):  # a dirty target back at 5 % halves to 2.5 % anyway
        rec = _update_bursts(dx, cur)
        if rec is not None:
            recs.append(rec)
    recs.extend(_notes(dx, cur))
    advice = Advice(recs, _summary(recs), cur)
    _combine(advice)
    return advice


def _interval(dx: Diagnosis, cur: Current) -> Recommendation | None:
    """Shorter checkpoint interval: less dirty data per checkpoint, a shorter burst (seed 004)."""
    hurting = [e for e in dx.episodes if hurts(e) and e.evidence != "disk-burst"]
    if not hurting:
        return None
    measured = dx.checkpoint_period_s
    interval = measured or cur.interval.value or 60.0
    now = checkpoint_shape(dx, interval)
    if now is None or not now.duration_s:
        return None
    stopped = _median(_episode_figures(dx, "ops_ratio"))
    aim = TARGET_STOPPED_CHECKPOINT_S if stopped is not None and stopped <= STOPPED_OPS_RATIO else TARGET_CHECKPOINT_S
    limit = interval * min(0.5, aim / now.duration_s)
    new = max(_nice_interval(limit), MIN_INTERVAL_S)
    predicted = at_interval(now, new)
    if new >= interval or (predicted.duration_s or 0) * INTERVAL_HEADROOM > new:
        return None
    evidence = [
        f"checkpoints every {interval:.0f} s"
        + (f" (configured {cur.interval.value:g} s, {cur.interval.source})" if cur.interval.value else ""),
        f"{len(hurting)} of {len(dx.episodes)} checkpoints cost throughput or stalled; typical one "
        f"{now.duration_s:.1f} s writing {_mb(now.bytes_written)}"
        + (f" at {now.disk_rate / 2**20:.0f} MB/s" if now.disk_rate else ""),
    ]
    if aim == TARGET_STOPPED_CHECKPOINT_S:
        evidence.append(
            f"writes stop while a checkpoint runs ({stopped:.0%} of usual in the typical one): aiming for "
            f"checkpoints of {aim:g} s, not {TARGET_CHECKPOINT_S:g} s"
        )
    if now.p99_inside_ms is not None:
        evidence.append(
            f"write p99 {now.p99_inside_ms:.0f} ms inside checkpoints vs "
            f"{(now.p99_between_ms or 0):.1f} ms between them"
        )
    predicted_text = (
        f"every {new:.0f} s: ~{_mb(predicted.bytes_written)} per checkpoint in ~{predicted.duration_s:.1f} s"
        + (f", write p99 inside ~{predicted.p99_inside_ms:.0f} ms" if predicted.p99_inside_ms is not None else "")
        + "; the same total checkpoint I/O per hour, in smaller bursts"
    )
    dirty_capped = (
        dx.eviction.get("dirty_pct_p50") is not None and dx.eviction["dirty_pct_p50"] >= 0.9 * cur.eviction.dirty_target
    )
    confidence, why = (
        ("medium", "dirty data sits at the eviction target: it, not the interval, caps part of each burst")
        if dirty_capped
        else ("high", "bytes per checkpoint grow with the interval on this server; model checked on seed 004")
    )
    tradeoffs = [
        f"twice or more the checkpoints ({3600 / new:.0f} an hour instead of {3600 / interval:.0f}): "
        "more metadata writes (each table's root page); negligible on SSD",
        f"crash recovery replays at most {new:.0f} s of journal instead of {interval:.0f} s (faster)",
    ]
    commands: dict[str, Any]
    if cur.wt_checkpoint_knob:
        # 3.4: mongod handed the interval to WiredTiger
        wait = int(cur.interval.value or 60)
        setting = "checkpoint=(wait=N)"
        tradeoffs.append("MongoDB 3.4: WiredTiger's own checkpoint=(wait=N), set through the engine config")
        commands = _engine(
            cur, {"checkpoint": f"(wait={new:.0f},log_size=2GB)"}, {"checkpoint": f"(wait={wait},log_size=2GB)"}
        )
    else:
        old = cur.interval.value or 60.0
        setting = "syncdelay / storage.syncPeriodSecs"
        tradeoffs.append(
            "at runtime mongod's checkpoint thread picks the new value up after its current sleep (SERVER-48486)"
        )
        commands = {
            "apply_runtime": f"db.adminCommand({{setParameter: 1, syncdelay: {new:.0f}}})",
            "apply_config": f"storage:\n  syncPeriodSecs: {new:.0f}",
            "revert_runtime": f"db.adminCommand({{setParameter: 1, syncdelay: {old:g}}})",
            "revert_config": (
                f"storage:\n  syncPeriodSecs: {old:g}" if not cur.interval.inferred else "remove storage.syncPeriodSecs"
            ),
        }
    return Recommendation(
        id="checkpoint-interval",
        kind="setting",
        setting=setting,
        title=f"Checkpoint every {new:.0f} s instead of {interval:.0f} s",
        current=cur.interval.value,
        current_source=cur.interval.source,
        recommended=new,
        evidence=evidence,
        predicted=_shape_json(now, predicted),
        predicted_text=predicted_text,
        tradeoffs=tradeoffs,
        confidence=confidence,
        confidence_why=why,
        lab={"checkpoint_s": new},
        **commands,
    )


def _shape_json(now: CheckpointShape, new: CheckpointShape) -> dict[str, Any]:
    def side(s: CheckpointShape) -> dict[str, Any]:
        return {
            "interval_s": s.interval_s,
            "bytes_per_checkpoint": s.bytes_written,
            "duration_s": s.duration_s,
            "write_p99_inside_ms": s.p99_inside_ms,
            "throughput_dip": s.ops_dip,
        }

    return {"now": side(now), "after": side(new)}


def _pct_or_bytes(pct: float, cache: float | None) -> tuple[str, float]:
    """A dirty setting as WiredTiger takes it: whole % of the cache, or MB when under 1 %."""
    if pct >= MIN_DIRTY_TARGET_PCT or not cache:
        value = max(round(pct), 1)
        return str(value), float(value)
    mb = max(int(pct / 100 * cache / 2**20), 1)
    return f"{mb}MB", 100 * mb * 2**20 / cache


def _shown(setting: str) -> str:
    """A dirty setting for people: ``5`` is 5 %, ``512MB`` stays as it is."""
    return setting if setting.endswith("MB") else f"{setting} %"


def _dirty(dx: Diagnosis, cur: Current) -> Recommendation | None:
    """Dirty target/trigger: how much dirty data a checkpoint can find (seeds 000, 003)."""
    ev = cur.eviction
    cache = cur.cache_bytes.value
    hurting = [e for e in dx.episodes if hurts(e)]
    if not hurting or not cache:
        return None
    now = checkpoint_shape(dx, dx.checkpoint_period_s or cur.interval.value or 60.0)
    rate = now.disk_rate if now else None
    target_pct = min(ev.dirty_target, DEFAULT_DIRTY_TARGET)
    why: list[str] = []
    if ev.dirty_target > DEFAULT_DIRTY_TARGET:
        why.append(f"eviction_dirty_target is {ev.dirty_target:g} % (default {DEFAULT_DIRTY_TARGET:g} %)")
    dirty_max = dx.eviction.get("dirty_pct_max")
    reaches_target = dirty_max is not None and dirty_max >= DIRTY_NEAR_TARGET * target_pct
    if rate and reaches_target:
        # the dirty data at the target should fit in DIRTY_BURST_S of this disk's checkpoint rate
        fit = 100 * rate * DIRTY_BURST_S / cache
        if fit < target_pct * 0.8:
            why.append(
                f"{target_pct:g} % of a {_mb(cache)} cache is {_mb(target_pct / 100 * cache)} of dirty data: "
                f"{target_pct / 100 * cache / rate:.1f} s of this disk's checkpoint rate ({rate / 2**20:.0f} MB/s)"
            )
            target_pct = fit
    if not why:
        return None
    target_text, target_value = _pct_or_bytes(target_pct, cache)
    # the default 1:4 spacing between target and trigger, never above the current or default trigger
    trigger_pct = min(ev.dirty_trigger, DEFAULT_DIRTY_TRIGGER, max(4 * target_value, target_value + 1))
    trigger_text, trigger_value = _pct_or_bytes(trigger_pct, cache)
    if target_value >= ev.dirty_target and trigger_value >= ev.dirty_trigger:
        return None
    change = {"eviction_dirty_target": target_text, "eviction_dirty_trigger": trigger_text}
    revert = {"eviction_dirty_target": f"{ev.dirty_target:g}", "eviction_dirty_trigger": f"{ev.dirty_trigger:g}"}
    peak = _median(_episode_figures(dx, "dirty_pct_peak"))
    evidence = [*why]
    if peak is not None:
        evidence.append(f"dirty cache peaks at {peak:.0f} % ({_mb(peak / 100 * cache)}) in the checkpoints that hurt")
    bytes_after = target_value / 100 * cache
    predicted: dict[str, Any] = {"dirty_bytes_at_target": bytes_after}
    text = (
        f"at most ~{_mb(bytes_after)} of dirty data waits for a checkpoint (now {_mb(ev.dirty_target / 100 * cache)})"
    )
    if rate:
        predicted["checkpoint_s_upper_bound"] = bytes_after / rate
        text += f", ~{bytes_after / rate:.1f} s at this disk's {rate / 2**20:.0f} MB/s"
    return Recommendation(
        id="eviction-dirty",
        kind="setting",
        setting="eviction_dirty_target / eviction_dirty_trigger",
        title=f"Evict dirty data earlier: dirty target {_shown(target_text)}, trigger {_shown(trigger_text)}",
        current={"eviction_dirty_target": ev.dirty_target, "eviction_dirty_trigger": ev.dirty_trigger},
        current_source=ev.source,
        recommended={"eviction_dirty_target": target_text, "eviction_dirty_trigger": trigger_text},
        evidence=evidence,
        predicted=predicted,
        predicted_text=text,
        tradeoffs=[
            "eviction threads write dirty pages continuously instead of the checkpoint writing them at once: "
            "the same bytes, spread out",
            "a page updated again after eviction is written again: more total writes on update-heavy loads",
            f"application threads evict when dirty data reaches the trigger ({_shown(trigger_text)}): "
            "keep it well above the target",
        ],
        confidence="high" if ev.dirty_target > DEFAULT_DIRTY_TARGET else "medium",
        confidence_why=(
            "dirty targets above the defaults let checkpoints find that much dirty data"
            if ev.dirty_target > DEFAULT_DIRTY_TARGET
            else "sized from this run's checkpoint write rate; eviction must keep up with the write load"
        ),
        **_engine(cur, change, revert),
        lab={
            "eviction_dirty_target": max(round(target_value), 1),
            "eviction_dirty_trigger": max(round(trigger_value), 2),
        },
    )


def _cache_size(dx: Diagnosis, cur: Current) -> Recommendation | None:
    """A cache above mongod's default squeezes the page cache and holds more dirty data (seed 003)."""
    cache, default, ram = cur.cache_bytes.value, cur.default_cache_bytes, cur.ram_bytes
    if not cache or not default or not ram or cache <= default * CACHE_OVER_DEFAULT:
        return None
    gb = max(math.floor(default / 2**30), 1)
    ev = cur.eviction
    evidence = [
        f"cache {_mb(cache)} of {_mb(ram)} RAM ({100 * cache / ram:.0f} %); mongod's default for this host is "
        f"{_mb(default)} (50 % of RAM - 1 GB)",
        f"{_mb(ram - cache)} left to the OS page cache, connections and the filesystem's own dirty data",
        f"dirty target {ev.dirty_target:g} % of it is {_mb(ev.dirty_target / 100 * cache)} per checkpoint at worst",
    ]
    return Recommendation(
        id="cache-size",
        kind="setting",
        setting="storage.wiredTiger.engineConfig.cacheSizeGB",
        title=f"Cache {gb} GB instead of {cache / 2**30:.0f} GB",
        current=cache / 2**30,
        current_source=cur.cache_bytes.source,
        recommended=gb,
        evidence=evidence,
        predicted={"dirty_bytes_at_target": ev.dirty_target / 100 * gb * 2**30, "page_cache_bytes": ram - gb * 2**30},
        predicted_text=(
            f"dirty data at the target {_mb(ev.dirty_target / 100 * gb * 2**30)} instead of "
            f"{_mb(ev.dirty_target / 100 * cache)}; {_mb(ram - gb * 2**30)} left to the page cache"
        ),
        tradeoffs=[
            "a smaller cache holds a smaller working set: more reads from disk (or the page cache) "
            "if it no longer fits",
            "a runtime cache_size change is lost at restart; shrink it at a quiet time "
            "(eviction works to get under it)",
        ],
        confidence="medium",
        confidence_why=(
            "the default formula is MongoDB's; the right size depends on the working set, which one run cannot see"
        ),
        **{
            **_engine(cur, {"cache_size": f"{gb}G"}, {"cache_size": f"{int(cache / 2**20)}M"}),
            # persistently the cache is mongod's own option, not part of configString
            "apply_config": f"storage:\n  wiredTiger:\n    engineConfig:\n      cacheSizeGB: {gb}",
            "revert_config": f"storage:\n  wiredTiger:\n    engineConfig:\n      cacheSizeGB: {cache / 2**30:g}",
        },
        lab={"cache_mb": gb * 1024},
    )


def _eviction_targets(dx: Diagnosis, cur: Current) -> Recommendation | None:
    """Clean-page eviction: application threads evict when the cache reaches eviction_trigger."""
    ev = cur.eviction
    over = float(dx.eviction.get("seconds_over_eviction_trigger") or 0)
    used = dx.eviction.get("used_pct_max")
    app = float(dx.eviction.get("app_evicted_pages") or 0)
    if not (over > 0 or (app > 0 and used is not None and used >= ev.trigger - 2)):
        return None
    target, trigger = min(ev.target, RECOMMENDED_EVICTION_TARGET), max(ev.trigger, RECOMMENDED_EVICTION_TRIGGER)
    if target == ev.target and trigger == ev.trigger:
        return None
    return Recommendation(
        id="eviction-target",
        kind="setting",
        setting="eviction_target / eviction_trigger",
        title=f"Start background eviction at {target:g} % and application-thread eviction at {trigger:g} %",
        current={"eviction_target": ev.target, "eviction_trigger": ev.trigger},
        current_source=ev.source,
        recommended={"eviction_target": target, "eviction_trigger": trigger},
        evidence=[
            f"cache used peaked at {used:.0f} %" if used is not None else "cache use unknown",
            f"{over:.0f} s at or over the eviction trigger ({ev.trigger:g} %); "
            f"application threads evicted {app:,.0f} pages",
        ],
        predicted={"eviction_target": target, "eviction_trigger": trigger},
        predicted_text=(
            "background threads start earlier and application threads later: fewer operations pulled into eviction"
        ),
        tradeoffs=[
            "a lower target keeps less data cached; a trigger near 100 % leaves little room if eviction falls behind"
        ],
        confidence="medium",
        confidence_why=(
            "seed 003's values; helps when clean-page pressure, not dirty data, pulls in application threads"
        ),
        **_engine(
            cur,
            {"eviction_target": f"{target:g}", "eviction_trigger": f"{trigger:g}"},
            {"eviction_target": f"{ev.target:g}", "eviction_trigger": f"{ev.trigger:g}"},
        ),
        lab={"eviction_target": int(target), "eviction_trigger": int(trigger)},
    )


def _threads(dx: Diagnosis, cur: Current) -> Recommendation | None:
    """More eviction threads when application threads are made to evict, bounded by cores and version."""
    ev = cur.eviction
    app = float(dx.eviction.get("app_evicted_pages") or 0)
    wait = float(dx.eviction.get("app_wait_s") or 0)
    over = float(dx.eviction.get("seconds_over_dirty_trigger") or 0)
    if not (app > 0 or wait > 0 or over > 0):
        return None
    cur_min, cur_max = ev.threads_min or 4, ev.threads_max or 4
    bound = min(EVICTION_THREADS_LIMIT, max(cur.cores or 0, 4))
    new_max = min(bound, max(cur_max * 2, 8))
    if new_max <= cur_max:
        return None
    new_min = max(cur_min, new_max // 2)
    return Recommendation(
        id="eviction-threads",
        kind="setting",
        setting="eviction=(threads_min,threads_max)",
        title=f"Eviction threads {new_min}-{new_max} instead of {cur_min}-{cur_max}",
        current={"threads_min": cur_min, "threads_max": cur_max},
        current_source=ev.source,
        recommended={"threads_min": new_min, "threads_max": new_max},
        evidence=[
            f"application threads evicted {app:,.0f} pages and waited {wait:.1f} s for the cache",
            f"{over:.0f} s at or over the dirty trigger ({ev.dirty_trigger:g} %)",
            f"{cur.cores} cores" if cur.cores else "core count unknown (bounded by the version's limit only)",
        ],
        predicted={"threads_min": new_min, "threads_max": new_max},
        predicted_text="background eviction keeps up with more of the load, so fewer operations evict pages themselves",
        tradeoffs=[
            f"eviction threads take CPU and I/O from the workload; bounded by cores ({cur.cores or '?'}) and "
            f"WiredTiger's limit ({EVICTION_THREADS_LIMIT})",
        ],
        confidence="medium" if cur.cores else "low",
        confidence_why="helps only when eviction, not the disk, is the bottleneck",
        **_engine(
            cur,
            {"eviction": f"(threads_min={new_min},threads_max={new_max})"},
            {"eviction": f"(threads_min={cur_min},threads_max={cur_max})"},
        ),
        lab={"eviction_threads_min": new_min, "eviction_threads_max": new_max},
    )


def _updates(dx: Diagnosis, cur: Current) -> Recommendation | None:
    """4.4+: when the updates trigger (half the dirty trigger by default) is what pulls threads in."""
    if not cur.has_updates_knobs:
        return None
    ev = cur.eviction
    over = float(dx.eviction.get("seconds_over_updates_trigger") or 0)
    app = float(dx.eviction.get("app_evicted_pages") or 0)
    if over <= 0 or app <= 0 or ev.updates_trigger >= ev.dirty_trigger:
        return None
    return Recommendation(
        id="eviction-updates",
        kind="setting",
        setting="eviction_updates_trigger",
        title=f"Updates trigger {ev.dirty_trigger:g} % (as the dirty trigger) instead of {ev.updates_trigger:g} %",
        current={"eviction_updates_trigger": ev.updates_trigger},
        current_source=ev.source,
        recommended={"eviction_updates_trigger": ev.dirty_trigger},
        evidence=[
            f"updates in the cache at or over the updates trigger ({ev.updates_trigger:g} %) for {over:.0f} s",
            f"application threads evicted {app:,.0f} pages",
        ],
        predicted={"eviction_updates_trigger": ev.dirty_trigger},
        predicted_text=(
            "application threads are no longer pulled in by update chains before dirty data reaches its trigger"
        ),
        tradeoffs=["more update chains stay in memory; WiredTiger itself later made this the default (WT-15843)"],
        confidence="medium",
        confidence_why="WT-15843 changed this default for the same symptom (its release is unverified)",
        **_engine(
            cur,
            {"eviction_updates_trigger": f"{ev.dirty_trigger:g}"},
            {"eviction_updates_trigger": f"{ev.updates_trigger:g}"},
        ),
        lab={"eviction_updates_trigger": int(ev.dirty_trigger)},
    )


def _update_bursts(dx: Diagnosis, cur: Current) -> Recommendation | None:
    """4.4+: writes stall while no checkpoint runs, as the updates in cache reach their eviction
    target (half the dirty target unless set): lower it, so updates are evicted a little at a time."""
    if not cur.has_updates_knobs:
        return None
    ev = cur.eviction
    cache = cur.cache_bytes.value
    hit = [o for o in dx.other_stalls if o.get("updates_at_target")]
    new = math.floor(DEFAULT_DIRTY_TARGET / 2)  # WiredTiger takes whole percents
    # at or under WiredTiger's default ratio already: the pauses are not this setting's doing
    if not hit or ev.updates_target <= DEFAULT_DIRTY_TARGET / 2 or new >= ev.updates_trigger:
        return None
    first = hit[0]
    size = f" ({_mb(ev.updates_target / 100 * cache)} of a {_mb(cache)} cache)" if cache else ""
    derived = ev.updates_target == ev.dirty_target / 2  # WiredTiger's own derivation (or set alike)
    return Recommendation(
        id="eviction-updates-target",
        kind="setting",
        setting="eviction_updates_target",
        title=f"Evict updates earlier: updates target {new} % instead of {ev.updates_target:g} %",
        current={"eviction_updates_target": ev.updates_target},
        current_source=ev.source + (" (half the dirty target)" if derived else ""),
        recommended={"eviction_updates_target": new},
        evidence=[
            f"writes stalled {len(hit)} time{'s' if len(hit) != 1 else ''} while no checkpoint ran, with the updates "
            f"in cache at their eviction target {ev.updates_target:g} %{size}",
            f"the first: {first['duration_s']:.0f} s, writes at {100 * (first['ops_ratio'] or 0):.0f} % of the "
            f"baseline, write latency {first['write_latency_ratio'] or 0:.0f}x",
        ],
        predicted={"eviction_updates_target": new},
        predicted_text=(
            "eviction takes update chains a few pages at a time from "
            f"{new} % of the cache instead of in a burst at {ev.updates_target:g} %: no second-long page-lock waits"
        ),
        tradeoffs=[
            "eviction threads work on update chains continuously: more CPU, and pages updated again are rewritten",
            f"it stays below the updates trigger ({ev.updates_trigger:g} %), where application threads evict",
        ],
        confidence="medium",
        confidence_why="the stalls coincide with the updates reaching the target in this run's counters",
        **_engine(
            cur,
            {"eviction_updates_target": f"{new}"},
            {"eviction_updates_target": f"{ev.updates_target:g}"},
        ),
        lab={"eviction_updates_target": new},
    )


def _notes(dx: Diagnosis, cur: Current) -> list[Recommendation]:
    """Things to check that are not a knob of this server: the disk, its file system, the journal."""
    notes: list[Recommendation] = []
    hurting = [e for e in dx.episodes if hurts(e)]
    saturated = [e for e in hurting if (e.impact.get("util_pct_peak") or 0) >= SATURATED_UTIL_PCT]
    if hurting and dx.disk and len(saturated) * 2 >= len(hurting):
        peak = max(float(e.impact.get("write_mb_s_peak") or 0) for e in saturated)
        notes.append(
            _note(
                "disk",
                "disk",
                f"Disk {dx.disk} cannot absorb the checkpoint burst",
                [
                    f"{dx.disk} {SATURATED_UTIL_PCT:.0f} %+ busy in {len(saturated)} of {len(hurting)} "
                    "checkpoints that hurt; "
                    f"peak {peak:.0f} MB/s"
                ],
                "smaller bursts (above) spread the same writes; otherwise a disk with more write throughput "
                "(seed 003: a 2 GB/s disk took the same bursts that stalled a 500 MB/s one)",
            )
        )
    if cur.filesystem and cur.filesystem.lower() == "ext4" and hurting:
        notes.append(
            _note(
                "filesystem",
                "file system",
                "dbPath is on ext4: MongoDB recommends XFS for WiredTiger",
                ["dbPath's file system is ext4", f"{len(hurting)} of {len(dx.episodes)} checkpoints cost throughput"],
                "on ext4 a data file's fdatasync can hold up the journal's writes (SERVER-18314); XFS avoids it",
            )
        )
    commit = cur.commit_ms.value
    if commit is not None and commit < DEFAULT_COMMIT_MS and hurting:
        notes.append(
            Recommendation(
                id="journal-commit",
                kind="note",
                setting="storage.journal.commitIntervalMs",
                title=f"Journal commit interval {commit:g} ms: back to {DEFAULT_COMMIT_MS:g} ms",
                current=commit,
                current_source=cur.commit_ms.source,
                recommended=DEFAULT_COMMIT_MS,
                evidence=[f"the journal is synced every {commit:g} ms, competing with each checkpoint's writes"],
                predicted={},
                predicted_text="fewer journal syncs queued behind the checkpoint's data-file sync",
                tradeoffs=["up to 100 ms of unacknowledged (w:1, j:false) writes can be lost in a crash"],
                confidence="low",
                confidence_why="helps only if the journal shares the checkpoint's disk",
                apply_runtime=f"db.adminCommand({{setParameter: 1, journalCommitInterval: {DEFAULT_COMMIT_MS:g}}})",
                apply_config=f"storage:\n  journal:\n    commitIntervalMs: {DEFAULT_COMMIT_MS:g}",
                revert_runtime=f"db.adminCommand({{setParameter: 1, journalCommitInterval: {commit:g}}})",
                revert_config=f"storage:\n  journal:\n    commitIntervalMs: {commit:g}",
            )
        )
    app = float(dx.eviction.get("app_evicted_pages") or 0) + float(dx.eviction.get("app_wait_s") or 0)
    slow_writes = [e for e in hurting if (e.impact.get("write_latency_ratio") or 0) >= 2]
    if slow_writes and not app:
        notes.append(
            _note(
                "journal-disk",
                "journal",
                "Writes wait for the journal behind the checkpoint's sync",
                [
                    f"write latency rose in {len(slow_writes)} of {len(dx.episodes)} checkpoints with no "
                    "application-thread eviction and no cache wait: the writes wait for I/O, not for the cache"
                ],
                "a journal on its own disk (dbPath/journal as a symlink or mount) keeps commits off the "
                "checkpoint's queue",
            )
        )
    return notes


def _note(id_: str, setting: str, title: str, evidence: list[str], text: str) -> Recommendation:
    return Recommendation(
        id=id_,
        kind="note",
        setting=setting,
        title=title,
        current=None,
        current_source="",
        recommended=None,
        evidence=evidence,
        predicted={},
        predicted_text=text,
        tradeoffs=[],
        confidence="medium",
        confidence_why="from this run's disk and latency figures",
    )


def _summary(recs: list[Recommendation]) -> str:
    settings = [r for r in recs if r.kind == "setting"]
    if not settings:
        return "no setting to change" + (f"; {len(recs)} things to check" if recs else "")
    return "; ".join(r.title[0].lower() + r.title[1:] for r in settings)


def _combine(advice: Advice) -> None:
    """One block that applies (and one that reverts) every recommended setting together."""
    cur = advice.current
    wt: dict[str, str] = {}
    wt_revert: dict[str, str] = {}
    storage: list[str] = []
    storage_revert: list[str] = []
    for r in advice.recommendations:
        if r.kind != "setting":
            continue
        if r.wt_change:
            wt.update(r.wt_change)
            wt_revert.update(r.wt_revert)
        elif r.apply_runtime:  # syncdelay (3.6+)
            advice.apply_runtime.append(r.apply_runtime)
            advice.revert_runtime.append(r.revert_runtime or "")
            storage.append(f"  syncPeriodSecs: {r.recommended:.0f}")
            storage_revert.append(
                f"  syncPeriodSecs: {cur.interval.value:g}"
                if not cur.interval.inferred
                else "  # syncPeriodSecs: remove"
            )
    if wt:
        advice.apply_runtime.append(_runtime_wt(render_config(wt)))
        advice.revert_runtime.append(_runtime_wt(render_config(wt_revert)))
        engine, engine_revert = [], []
        if "cache_size" in wt:
            # persistently the cache is mongod's own option
            engine.append(f"      cacheSizeGB: {wt['cache_size'].rstrip('G')}")
            engine_revert.append(f"      cacheSizeGB: {(cur.cache_bytes.value or 0) / 2**30:g}")
        config = {k: v for k, v in wt.items() if k != "cache_size"}
        if config:
            engine.append(f'      configString: "{merge_config(cur.config_string, config)}"')
            engine_revert.append(
                f'      configString: "{cur.config_string}"' if cur.config_string else "      # configString: remove"
            )
        storage += ["  wiredTiger:", "    engineConfig:", *engine]
        storage_revert += ["  wiredTiger:", "    engineConfig:", *engine_revert]
    if storage:
        advice.apply_config = "storage:\n" + "\n".join(storage)
        advice.revert_config = "storage:\n" + "\n".join(storage_revert)


__all__ = ["Advice", "Recommendation", "checkpoint_shape", "recommend"]
