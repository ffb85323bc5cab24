"""How much dirty data a checkpoint can find: the dirty target/trigger and the cache size."""

from __future__ import annotations

import math
from dataclasses import dataclass

from ckptdiag.advice.changes import EngineChange
from ckptdiag.advice.kinds import DISK_SATURATED, EVICTION_BEHIND, IO_THROTTLED
from ckptdiag.advice.model import checkpoint_shape, cuts_enough, finished, flush_at_target, median
from ckptdiag.advice.proof import as_check
from ckptdiag.advice.recommendation import Recommendation
from ckptdiag.advice.text import mb
from ckptdiag.analysis.results import Diagnosis
from ckptdiag.analysis.summary import figure
from ckptdiag.analysis.verdict import hurting
from ckptdiag.model.engine_config import (
    DEFAULT_DIRTY_TARGET,
    DEFAULT_DIRTY_TRIGGER,
    DEFAULT_INTERVAL_S,
    default_cache_bytes,
)

DIRTY_BURST_S = 2.0  # dirty data at the target should be writable in ~2 s of this disk's checkpoint rate
# ... where dirty data reaches the target at all (80 % of it); below it the interval sets the burst
DIRTY_NEAR_TARGET = 0.8
MIN_DIRTY_TARGET_PCT = 1.0  # below 1 % of the cache: say it in bytes (WiredTiger takes > 100 as bytes)
# ... and on a cache this large, whole percents are steps of a GB or more of dirty data (4 % of
# 110 GB is 0.9 GB more than 3.2 %): said in MB there too
LARGE_CACHE_BYTES = 100 * 2**30
CACHE_OVER_DEFAULT = 1.05  # configured above mongod's default formula by more than 5 %


TRIGGER_HEADROOM = 1.25  # a trigger stays this far above the dirty level the workload sustains


def same_unit(
    target_pct: float, trigger_pct: float, cache: float | None
) -> tuple[tuple[str, float], tuple[str, float]]:
    """The target and the trigger as WiredTiger takes them, in one unit: whole % of the cache, or
    both in MB when the target is under 1 % or the cache is ``LARGE_CACHE_BYTES`` or more (a
    ``44MB`` target beside a ``1`` % trigger is misread). The trigger is rounded up, never below
    what it was computed to be.

    >>> same_unit(4.4, 17.2, 2**30), same_unit(0.5, 2.0, 100 * 2**20)
    ((('4', 4.0), ('18', 18.0)), (('1MB', 1.0), ('2MB', 2.0)))
    >>> same_unit(3.2, 12.8, 110 * 2**30)[0][0]
    '3604MB'
    """
    if not cache or (target_pct >= MIN_DIRTY_TARGET_PCT and cache < LARGE_CACHE_BYTES):
        target, trigger = max(round(target_pct), 1), max(math.ceil(trigger_pct - 1e-9), 2)
        return (str(target), float(target)), (str(trigger), float(trigger))
    target_mb = max(int(target_pct / 100 * cache / 2**20), 1)
    trigger_mb = max(math.ceil(trigger_pct / 100 * cache / 2**20 - 1e-9), target_mb + 1)
    return (f"{target_mb}MB", 100 * target_mb * 2**20 / cache), (f"{trigger_mb}MB", 100 * trigger_mb * 2**20 / cache)


def shown(setting: str) -> str:
    """A dirty setting for people: ``5`` is 5 %, ``512MB`` stays as it is."""
    return setting if setting.endswith("MB") else f"{setting} %"


def _target_pct(dx: Diagnosis, cache: float, rate: float | None) -> tuple[float, bool, float | None]:
    """The dirty target to aim for (% of the cache) -> (target, whether the one in force is raised
    above the default, the target the disk sizing started from, or None when it did not apply);
    ``rate`` (the disk's demonstrated write rate, bytes/s) only where the disk is what saturates."""
    ev = dx.settings.eviction
    target_pct = min(ev.dirty_target.number, DEFAULT_DIRTY_TARGET)
    raised = ev.dirty_target.number > DEFAULT_DIRTY_TARGET
    dirty_max = dx.eviction.dirty_pct_max
    reaches_target = dirty_max is not None and dirty_max >= DIRTY_NEAR_TARGET * target_pct
    if rate and reaches_target:
        # the dirty data at the target should fit in DIRTY_BURST_S of this disk's rate
        fit = 100 * rate * DIRTY_BURST_S / cache
        if fit < target_pct * 0.8:
            return fit, raised, target_pct
    return target_pct, raised, None


@dataclass(frozen=True)
class DirtyDecision:
    """A lower dirty target (and the trigger beside it, in one unit), and the figures behind it."""

    target: tuple[str, float]  # as WiredTiger takes it, and in % of the cache
    trigger: tuple[str, float]
    cache: float
    raised: bool  # the target in force is above the default
    sized_from: float | None  # the target the disk sizing started from (% of the cache), if it applied
    rate: float | None  # the disk's demonstrated write rate (bytes/s) it was sized by
    found_pct: float  # the most dirty data the window held (% of the cache): what checkpoints find now
    flush: tuple[float, float] | None  # what a typical checkpoint that hurt writes now, and with the target
    held: bool  # the disk saturates: eviction's writes of the kernel's last 30 s go with the sync


def decide_dirty(dx: Diagnosis, causes: frozenset[str]) -> DirtyDecision | None:
    """The dirty target and trigger to recommend, or None: also where the checkpoints never find
    more dirty data than the lower target allows, or where what their sync flushes would fall by
    less than ``MIN_GAIN`` (the kernel still holds what eviction wrote in its last 30 s)."""
    ev = dx.settings.eviction
    cache, found = dx.settings.cache_bytes.value, dx.eviction.dirty_pct_max
    if not hurting(dx.episodes).any() or not cache or not found:
        return None
    rate = _disk_rate(dx, causes)
    target_pct, raised, sized_from = _target_pct(dx, cache, rate)
    if not raised and sized_from is None:
        return None
    target, trigger = same_unit(target_pct, _trigger_pct(dx, target_pct, causes), cache)
    if trigger[1] >= ev.dirty_trigger.number:  # the trigger stays where it is, in the target's unit
        trigger = same_unit(target_pct, ev.dirty_trigger.number, cache)[1]
    if target[1] >= ev.dirty_target.number and trigger[1] >= ev.dirty_trigger.number:
        return None
    held = DISK_SATURATED in causes
    flush = flush_at_target(dx, target[1], held)
    # without checkpoint bytes to scale, the share of the dirty data the target leaves them
    if not cuts_enough(flush or (found, target[1])):
        return None
    return DirtyDecision(target, trigger, cache, raised, sized_from, rate, found, flush, held)


def _dirty_evidence(dx: Diagnosis, d: DirtyDecision) -> tuple[str, ...]:
    ev, cache = dx.settings.eviction, d.cache
    evidence = []
    if d.raised:
        evidence.append(f"eviction_dirty_target is {ev.dirty_target.number:g} % (default {DEFAULT_DIRTY_TARGET:g} %)")
    if d.sized_from is not None and d.rate:
        evidence.append(
            f"{d.sized_from:g} % of a {mb(cache)} cache is {mb(d.sized_from / 100 * cache)} of dirty data: "
            f"{d.sized_from / 100 * cache / d.rate:.1f} s of what this disk has shown it writes "
            f"({d.rate / 2**20:.0f} MB/s)"
        )
    peak = median(figure(finished(dx), "impact.dirty_pct_peak"))
    if peak is not None:
        evidence.append(f"dirty cache peaks at {peak:.0f} % ({mb(peak / 100 * cache)}) in the checkpoints that hurt")
    return tuple(evidence)


def _dirty_effect(dx: Diagnosis, d: DirtyDecision) -> tuple[dict[str, float], str]:
    """The predicted effect of a lower dirty target -> (figures, text)."""
    bytes_after = d.target[1] / 100 * d.cache
    predicted: dict[str, float] = {"dirty_bytes_at_target": bytes_after}
    text = f"checkpoints find at most ~{mb(bytes_after)} of dirty data (now up to {mb(d.found_pct / 100 * d.cache)})"
    if d.flush:
        flush_now, flush_after = d.flush
        predicted["checkpoint_bytes"] = flush_after
        if d.held:
            already = f"; eviction writes {dx.other_writes_b_s / 2**20:.1f} MB/s now" if dx.other_writes_b_s else ""
            text += (
                f"; each checkpoint's sync sends ~{mb(flush_after)} to the disk instead of ~{mb(flush_now)}: "
                "what it writes itself and what eviction wrote in the 30 s before it, which Linux can hold "
                f"that long (vm.dirty_expire_centisecs){already}"
            )
        else:
            text += f": ~{mb(flush_after)} written per checkpoint instead of ~{mb(flush_now)}"
        if d.rate:
            predicted["checkpoint_s"] = flush_after / d.rate
            text += f", ~{flush_after / d.rate:.1f} s at this disk's {d.rate / 2**20:.0f} MB/s"
    return predicted, text


def _disk_rate(dx: Diagnosis, causes: frozenset[str]) -> float | None:
    """The write rate dirty data is sized by: what the disk has shown it can write in this window
    (its highest second), and only where the disk is what saturates; never a throttled or CPU-bound
    checkpoint's average."""
    if DISK_SATURATED not in causes or IO_THROTTLED in causes:
        return None
    if dx.disk_peak_mb_s:
        return dx.disk_peak_mb_s * 2**20
    now = checkpoint_shape(dx, dx.checkpoint_period_s or dx.settings.interval.value or DEFAULT_INTERVAL_S)
    return now.disk_rate if now else None


def _trigger_pct(dx: Diagnosis, target_pct: float, causes: frozenset[str]) -> float:
    """The default 1:4 spacing from the target, never above the current or default trigger, and never
    at or below the dirty level the workload sustains (its 90th percentile, with headroom): a trigger
    there pulls every application thread into eviction, a cap on the workload. Where eviction is
    already behind, the trigger stays where it is: a lower one would pull more threads in."""
    ev = dx.settings.eviction
    if EVICTION_BEHIND in causes:
        return ev.dirty_trigger.number
    spaced = min(ev.dirty_trigger.number, DEFAULT_DIRTY_TRIGGER, max(4 * target_pct, target_pct + 1))
    sustained = dx.eviction.dirty_pct_p90
    floor = TRIGGER_HEADROOM * sustained if sustained is not None else 0.0
    return min(max(spaced, floor), ev.dirty_trigger.number)


def dirty_rule(dx: Diagnosis, causes: frozenset[str] = frozenset()) -> Recommendation | None:
    """Dirty target/trigger: lower them where checkpoints that hurt find too much dirty data."""
    d = decide_dirty(dx, causes)
    return None if d is None else _dirty_worded(dx, d)


def _dirty_worded(dx: Diagnosis, d: DirtyDecision) -> Recommendation:
    """A dirty-target decision, worded for the DBA who applies it."""
    ev = dx.settings.eviction
    (target_text, target_value), (trigger_text, trigger_value) = d.target, d.trigger
    predicted, text = _dirty_effect(dx, d)
    rec = Recommendation(
        id="eviction-dirty",
        kind="setting",
        setting="eviction_dirty_target / eviction_dirty_trigger",
        title=f"Evict dirty data earlier: dirty target {shown(target_text)}, trigger {shown(trigger_text)}",
        current={"eviction_dirty_target": ev.dirty_target.number, "eviction_dirty_trigger": ev.dirty_trigger.number},
        current_source=ev.dirty_target.source,
        recommended={"eviction_dirty_target": target_text, "eviction_dirty_trigger": trigger_text},
        evidence=_dirty_evidence(dx, d),
        predicted=predicted,
        predicted_text=text,
        tradeoffs=(
            "eviction threads write dirty pages continuously instead of the checkpoint writing them at once: "
            "the same bytes, spread out",
            "a page updated again after eviction is written again: more total writes on update-heavy loads",
            f"application threads evict when dirty data reaches the trigger ({shown(trigger_text)}): "
            "keep it well above the target",
        ),
        confidence="high" if d.raised else "medium",
        confidence_why=(
            "dirty targets above the defaults let checkpoints find that much dirty data"
            if d.raised
            else "sized from what this disk has shown it writes; eviction must keep up with the write load"
        ),
        change=EngineChange(
            {"eviction_dirty_target": target_text, "eviction_dirty_trigger": trigger_text},
            {
                "eviction_dirty_target": f"{ev.dirty_target.number:g}",
                "eviction_dirty_trigger": f"{ev.dirty_trigger.number:g}",
            },
        ),
        lab={
            "eviction_dirty_target": max(round(target_value), 1),
            "eviction_dirty_trigger": max(round(trigger_value), 2),
        },
    )
    # where the checkpoint's sync saturates the disk, the reason is the kernel's hold, not the
    # latency the rule's eviction costs elsewhere (advice/proof.py)
    return as_check(rec, HELD_NOT_PROVEN) if d.held else rec


HELD_NOT_PROVEN = (
    "where the checkpoint's sync saturates the disk, as here, Linux holds eviction's writes up to 30 s and they "
    "go with the sync: in the lab a lower target cut the checkpoint's own bytes 6-12x and its duration by "
    "0-40 %, never to no stall"
)


def cache_size_rule(dx: Diagnosis, causes: frozenset[str] = frozenset()) -> Recommendation | None:
    """A cache above mongod's default squeezes the page cache and holds more dirty data."""
    cache, ram = dx.settings.cache_bytes.value, dx.facts.ram_bytes
    default = default_cache_bytes(ram)
    if not cache or not default or not ram or cache <= default * CACHE_OVER_DEFAULT:
        return None
    gb = max(math.floor(default / 2**30), 1)
    dirty = dx.settings.eviction.dirty_target.number
    predicted, text = _cache_effect(dx, causes, cache, gb * 2**30)
    return Recommendation(
        id="cache-size",
        kind="setting",
        setting="storage.wiredTiger.engineConfig.cacheSizeGB",
        title=f"Cache {gb} GB instead of {cache / 2**30:.0f} GB",
        current=cache / 2**30,
        current_source=dx.settings.cache_bytes.source,
        recommended=gb,
        evidence=(
            f"cache {mb(cache)} of {mb(ram)} RAM ({100 * cache / ram:.0f} %); mongod's default for this host is "
            f"{mb(default)} (50 % of RAM - 1 GB)",
            f"{mb(ram - cache)} left to the OS page cache, connections and the filesystem's own dirty data",
            f"dirty target {dirty:g} % of it is {mb(dirty / 100 * cache)} per checkpoint at worst",
        ),
        predicted=predicted,
        predicted_text=text,
        tradeoffs=(
            "a smaller cache holds a smaller working set: more reads from disk (or the page cache) "
            "if it no longer fits",
            "a runtime cache_size change is lost at restart; shrink it at a quiet time "
            "(eviction works to get under it)",
        ),
        confidence="medium",
        confidence_why=(
            "the default formula is MongoDB's; the right size depends on the working set, which one run cannot see"
        ),
        change=EngineChange({"cache_size": f"{gb}G"}, {"cache_size": f"{int(cache / 2**20)}M"}),
        lab={"cache_mb": gb * 1024},
    )


def _cache_effect(dx: Diagnosis, causes: frozenset[str], cache: float, smaller: float) -> tuple[dict[str, float], str]:
    """What a smaller cache changes for checkpoints -> (figures, text): the dirty data its target
    allows, and what a checkpoint would write (on a saturated disk: its sync would flush, eviction's
    held writes counted) where the checkpoints find more than that now."""
    dirty, ram = dx.settings.eviction.dirty_target.number, dx.facts.ram_bytes or 0
    at_target = dirty / 100 * smaller
    predicted = {"dirty_bytes_at_target": at_target, "page_cache_bytes": ram - smaller}
    text = f"dirty data at the target {mb(at_target)} instead of {mb(dirty / 100 * cache)}"
    flush = flush_at_target(dx, dirty * smaller / cache, DISK_SATURATED in causes)
    if flush and cuts_enough(flush):
        predicted["checkpoint_bytes"] = flush[1]
        text += f": ~{mb(flush[1])} a checkpoint instead of ~{mb(flush[0])}"
    elif flush:
        text += f"; checkpoints would write about what they do now (~{mb(flush[0])}): it would not shorten them"
    return predicted, f"{text}; {mb(ram - smaller)} left to the page cache"
