"""Eviction rules: clean-page targets, eviction threads, and the updates target and trigger (4.4+)."""

from __future__ import annotations

import math
from dataclasses import dataclass

from ckptdiag.advice.changes import EngineChange
from ckptdiag.advice.recommendation import Recommendation
from ckptdiag.advice.text import mb, plural
from ckptdiag.analysis.results import Diagnosis, OtherStall
from ckptdiag.analysis.thresholds import HOST_BUSY_PCT
from ckptdiag.model.engine_config import DEFAULT_DIRTY_TARGET, DEFAULT_EVICTION_THREADS

RECOMMENDED_EVICTION_TARGET = 75.0
RECOMMENDED_EVICTION_TRIGGER = 97.0
EVICTION_THREADS_LIMIT = 20  # WiredTiger's limit up to 8.0 (raised later by WT-15039)


@dataclass(frozen=True)
class TargetsDecision:
    """What the eviction targets rule decided, as figures."""

    target: float
    trigger: float
    used: float | None
    over: float
    app: float


def decide_eviction_targets(dx: Diagnosis, causes: frozenset[str] = frozenset()) -> TargetsDecision | None:
    """Clean-page eviction: application threads evict when the cache reaches eviction_trigger."""
    ev = dx.settings.eviction
    over, used, app = dx.eviction.seconds_over_eviction_trigger, dx.eviction.used_pct_max, dx.eviction.app_evicted_pages
    if not (over > 0 or (app > 0 and used is not None and used >= ev.trigger.number - 2)):
        return None
    target = min(ev.target.number, RECOMMENDED_EVICTION_TARGET)
    trigger = max(ev.trigger.number, RECOMMENDED_EVICTION_TRIGGER)
    if target == ev.target.number and trigger == ev.trigger.number:
        return None
    return TargetsDecision(target, trigger, used, over, app)


def eviction_targets_rule(dx: Diagnosis, causes: frozenset[str] = frozenset()) -> Recommendation | None:
    """Clean-page eviction: application threads evict when the cache reaches eviction_trigger."""
    d = decide_eviction_targets(dx, causes)
    return None if d is None else _eviction_targets_worded(dx, d)


def _eviction_targets_worded(dx: Diagnosis, d: TargetsDecision) -> Recommendation:
    """The decision, worded for the DBA who applies it."""
    ev = dx.settings.eviction
    target, trigger, used, over, app = d.target, d.trigger, d.used, d.over, d.app
    return Recommendation(
        id="eviction-target",
        kind="setting",
        setting="eviction_target / eviction_trigger",
        title=f"Start background eviction at {target:g} % and application-thread eviction at {trigger:g} %",
        current={"eviction_target": ev.target.number, "eviction_trigger": ev.trigger.number},
        current_source=ev.target.source,
        recommended={"eviction_target": target, "eviction_trigger": trigger},
        evidence=(
            f"cache used peaked at {used:.0f} %" if used is not None else "cache use unknown",
            f"{over:.0f} s at or over the eviction trigger ({ev.trigger.number:g} %); "
            f"application threads evicted {app:,.0f} pages",
        ),
        predicted={"eviction_target": target, "eviction_trigger": trigger},
        predicted_text=(
            "background threads start earlier and application threads later: fewer operations pulled into eviction"
        ),
        tradeoffs=(
            "a lower target keeps less data cached; a trigger near 100 % leaves little room if eviction falls behind",
        ),
        confidence="medium",
        confidence_why="helps when clean-page pressure, not dirty data, pulls application threads into eviction",
        change=EngineChange(
            {"eviction_target": f"{target:g}", "eviction_trigger": f"{trigger:g}"},
            {"eviction_target": f"{ev.target.number:g}", "eviction_trigger": f"{ev.trigger.number:g}"},
        ),
        lab={"eviction_target": int(target), "eviction_trigger": int(trigger)},
    )


@dataclass(frozen=True)
class ThreadsDecision:
    """What the threads rule decided, as figures."""

    new_min: int
    new_max: int
    cur_min: int
    cur_max: int
    cores: int | None
    app: float
    wait: float
    over: float


def decide_threads(dx: Diagnosis, causes: frozenset[str] = frozenset()) -> ThreadsDecision | None:
    """More eviction threads when application threads are made to evict, bounded by cores and version."""
    ev = dx.settings.eviction
    app, wait, over = dx.eviction.app_evicted_pages, dx.eviction.app_wait_s, dx.eviction.seconds_over_dirty_trigger
    if not (app > 0 or wait > 0):  # application threads made to evict: the evidence threads would relieve
        return None
    if dx.host_cpu_pct_p50 is not None and dx.host_cpu_pct_p50 >= HOST_BUSY_PCT:
        return None  # more threads on CPUs already busy compete with the application's own
    cur_min = int(ev.threads_min.value or DEFAULT_EVICTION_THREADS)
    cur_max = int(ev.threads_max.value or DEFAULT_EVICTION_THREADS)
    cores = dx.facts.cores
    new_max = min(min(EVICTION_THREADS_LIMIT, max(cores or 0, 4)), max(cur_max * 2, 8))
    if new_max <= cur_max:
        return None
    new_min = max(cur_min, new_max // 2)
    return ThreadsDecision(new_min, new_max, cur_min, cur_max, cores, app, wait, over)


def threads_rule(dx: Diagnosis, causes: frozenset[str] = frozenset()) -> Recommendation | None:
    """More eviction threads when application threads are made to evict, bounded by cores and version."""
    d = decide_threads(dx, causes)
    return None if d is None else _threads_worded(dx, d)


def _threads_worded(dx: Diagnosis, d: ThreadsDecision) -> Recommendation:
    """The decision, worded for the DBA who applies it."""
    ev = dx.settings.eviction
    new_min, new_max, cur_min, cur_max = d.new_min, d.new_max, d.cur_min, d.cur_max
    cores, app, wait, over = d.cores, d.app, d.wait, d.over
    return Recommendation(
        id="eviction-threads",
        kind="setting",
        setting="eviction=(threads_min,threads_max)",
        title=f"Eviction threads {new_min}-{new_max} instead of {cur_min}-{cur_max}",
        current={"threads_min": cur_min, "threads_max": cur_max},
        current_source=ev.threads_max.source,
        recommended={"threads_min": new_min, "threads_max": new_max},
        evidence=(
            _threads_evidence(app, wait),
            f"{over:.0f} s at or over the dirty trigger ({ev.dirty_trigger.number:g} %)",
            f"{cores} cores" if cores else "core count unknown (bounded by the version's limit only)",
        ),
        predicted={"threads_min": new_min, "threads_max": new_max},
        predicted_text="background eviction keeps up with more of the load, so fewer operations evict pages themselves",
        tradeoffs=(
            f"eviction threads take CPU and I/O from the workload; bounded by cores ({cores or '?'}) and "
            f"WiredTiger's limit ({EVICTION_THREADS_LIMIT})",
        ),
        confidence="medium" if cores else "low",
        confidence_why="helps only when eviction, not the disk, is the bottleneck",
        change=EngineChange(
            {"eviction": f"(threads_min={new_min},threads_max={new_max})"},
            {"eviction": f"(threads_min={cur_min},threads_max={cur_max})"},
        ),
        lab={"eviction_threads_min": new_min, "eviction_threads_max": new_max},
    )


def _threads_evidence(app: float, wait: float) -> str:
    """What more eviction threads would relieve, as both threads findings cite it."""
    return f"application threads evicted {app:,.0f} pages and waited {wait:.1f} s for the cache"


def threads_need_cores(dx: Diagnosis) -> Recommendation | None:
    """Where application threads evict but more eviction threads could not run (the host's CPUs
    busy, or no more cores than threads already): say so in this host's terms, as a check, so the
    missing threads advice reads as a finding, not an oversight."""
    ev = dx.settings.eviction
    app, wait = dx.eviction.app_evicted_pages, dx.eviction.app_wait_s
    if not (app > 0 or wait > 0) or decide_threads(dx) is not None:
        return None
    busy, cores = dx.host_cpu_pct_p50, dx.facts.cores
    cur_max = int(ev.threads_max.value or DEFAULT_EVICTION_THREADS)
    if busy is not None and busy >= HOST_BUSY_PCT:
        why = f"this host's CPUs were {busy:.0f} % busy (median, all processes)"
    elif cores is not None and cores <= cur_max:
        why = f"this host has {plural(cores, 'core')} and up to {cur_max} eviction threads already"
    else:
        return None
    return Recommendation(
        id="eviction-threads-cores",
        kind="note",
        setting="eviction=(threads_min,threads_max)",
        title=f"More eviction threads need idle cores: {why}",
        current={"threads_min": int(ev.threads_min.value or DEFAULT_EVICTION_THREADS), "threads_max": cur_max},
        current_source=ev.threads_max.source,
        recommended=None,
        evidence=(_threads_evidence(app, wait), why),
        predicted={},
        predicted_text="more threads would take CPU from the operations they are meant to relieve; free CPU "
        "first (what else runs on this host: top, pidstat), or move to a host with more cores",
        tradeoffs=(),
        confidence="medium",
        confidence_why="from this run's CPU and eviction figures",
    )


@dataclass(frozen=True)
class UpdatesTriggerDecision:
    """What the updates trigger rule decided, as figures."""

    trigger: float
    dirty_trigger: float
    over: float
    app: float


def decide_updates_trigger(dx: Diagnosis, causes: frozenset[str] = frozenset()) -> UpdatesTriggerDecision | None:
    """4.4+: when the updates trigger (half the dirty trigger by default) is what pulls threads in."""
    if not dx.settings.has_updates_knobs:
        return None
    ev = dx.settings.eviction
    over, app = dx.eviction.seconds_over_updates_trigger, dx.eviction.app_evicted_pages
    trigger, dirty_trigger = ev.updates_trigger.number, ev.dirty_trigger.number
    if over <= 0 or app <= 0 or trigger >= dirty_trigger:
        return None
    return UpdatesTriggerDecision(trigger, dirty_trigger, over, app)


def updates_trigger_rule(dx: Diagnosis, causes: frozenset[str] = frozenset()) -> Recommendation | None:
    """4.4+: when the updates trigger (half the dirty trigger by default) is what pulls threads in."""
    d = decide_updates_trigger(dx, causes)
    return None if d is None else _updates_trigger_worded(dx, d)


def _updates_trigger_worded(dx: Diagnosis, d: UpdatesTriggerDecision) -> Recommendation:
    """The decision, worded for the DBA who applies it."""
    ev = dx.settings.eviction
    trigger, dirty_trigger, over, app = d.trigger, d.dirty_trigger, d.over, d.app
    return Recommendation(
        id="eviction-updates",
        kind="setting",
        setting="eviction_updates_trigger",
        title=f"Updates trigger {dirty_trigger:g} % (as the dirty trigger) instead of {trigger:g} %",
        current={"eviction_updates_trigger": trigger},
        current_source=ev.updates_trigger.described,
        recommended={"eviction_updates_trigger": dirty_trigger},
        evidence=(
            f"updates in the cache at or over the updates trigger ({trigger:g} %) for {over:.0f} s",
            f"application threads evicted {app:,.0f} pages",
        ),
        predicted={"eviction_updates_trigger": dirty_trigger},
        predicted_text=(
            "application threads are no longer pulled in by update chains before dirty data reaches its trigger"
        ),
        tradeoffs=("more update chains stay in memory; WiredTiger itself later made this the default (WT-15843)",),
        confidence="medium",
        confidence_why="WiredTiger changed this default for the same symptom (WT-15843)",
        change=EngineChange(
            {"eviction_updates_trigger": f"{dirty_trigger:g}"}, {"eviction_updates_trigger": f"{trigger:g}"}
        ),
        lab={"eviction_updates_trigger": int(dirty_trigger)},
    )


@dataclass(frozen=True)
class UpdatesTargetDecision:
    """What the updates target rule decided, as figures."""

    new: int
    target: float
    trigger: float
    hit: tuple[OtherStall, ...]
    cache: float | None


def decide_updates_target(dx: Diagnosis, causes: frozenset[str] = frozenset()) -> UpdatesTargetDecision | None:
    """4.4+: writes stall while no checkpoint runs, as the updates in cache reach their eviction
    target (half the dirty target unless set): lower it, so updates are evicted a little at a time."""
    if not dx.settings.has_updates_knobs:
        return None
    ev = dx.settings.eviction
    cache = dx.settings.cache_bytes.value
    hit = [o for o in dx.other_stalls if o.updates_at_target]
    target, trigger = ev.updates_target.number, ev.updates_trigger.number
    new = math.floor(DEFAULT_DIRTY_TARGET / 2)  # WiredTiger takes whole percents
    # at or under WiredTiger's default ratio already: the pauses are not this setting's doing
    if not hit or target <= DEFAULT_DIRTY_TARGET / 2 or new >= trigger:
        return None
    return UpdatesTargetDecision(new, target, trigger, tuple(hit), cache)


def updates_target_rule(dx: Diagnosis, causes: frozenset[str] = frozenset()) -> Recommendation | None:
    """4.4+: writes stall while no checkpoint runs, as the updates in cache reach their eviction
    target (half the dirty target unless set): lower it, so updates are evicted a little at a time."""
    d = decide_updates_target(dx, causes)
    return None if d is None else _updates_target_worded(dx, d)


def _updates_target_worded(dx: Diagnosis, d: UpdatesTargetDecision) -> Recommendation:
    """The decision, worded for the DBA who applies it."""
    ev = dx.settings.eviction
    new, target, trigger, hit, cache = d.new, d.target, d.trigger, d.hit, d.cache
    first = hit[0]
    size = f" ({mb(target / 100 * cache)} of a {mb(cache)} cache)" if cache else ""
    return Recommendation(
        id="eviction-updates-target",
        kind="setting",
        setting="eviction_updates_target",
        title=f"Evict updates earlier: updates target {new} % instead of {target:g} %",
        current={"eviction_updates_target": target},
        current_source=ev.updates_target.described,
        recommended={"eviction_updates_target": new},
        evidence=(
            f"writes stalled {plural(len(hit), 'time')} while no checkpoint ran, with the updates "
            f"in cache at their eviction target {target:g} %{size}",
            f"the first: {first.duration_s:.0f} s, writes at {100 * (first.ops_ratio or 0):.0f} % of the "
            f"baseline, write latency {first.write_latency_ratio or 0:.0f}x",
        ),
        predicted={"eviction_updates_target": new},
        predicted_text=(
            "eviction takes update chains a few pages at a time from "
            f"{new} % of the cache instead of in a burst at {target:g} %: no second-long page-lock waits"
        ),
        tradeoffs=(
            "eviction threads work on update chains continuously: more CPU, and pages updated again are rewritten",
            f"it stays below the updates trigger ({trigger:g} %), where application threads evict",
        ),
        confidence="medium",
        confidence_why="the stalls coincide with the updates reaching the target in this run's counters",
        change=EngineChange({"eviction_updates_target": f"{new}"}, {"eviction_updates_target": f"{target:g}"}),
        lab={"eviction_updates_target": new},
    )
