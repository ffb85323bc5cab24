"""Recommendations: the rules over a diagnosis that pick the knobs for the server in front of us.

Every rule, its evidence threshold and its source are in ``docs/advice.md``. A server whose
checkpoints do not hurt it (verdict ``ok``) gets no change at all: tuning a healthy server is
how DBAs end up with 20 eviction threads and 1 % dirty targets. Each rule reads the typed
diagnosis and returns a :class:`Recommendation` whose change is data; the commands that apply
and revert it come from :mod:`ckptdiag.advice.commands`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from ckptdiag.advice.cause import classify, others_lead
from ckptdiag.advice.changes import EngineChange
from ckptdiag.advice.commands import combined, commands
from ckptdiag.advice.dirty import cache_size_rule, dirty_rule
from ckptdiag.advice.eviction import (
    eviction_targets_rule,
    threads_need_cores,
    threads_rule,
    updates_target_rule,
    updates_trigger_rule,
)
from ckptdiag.advice.interval import interval_rule
from ckptdiag.advice.kinds import CPU_BUSY, Cause
from ckptdiag.advice.model import checkpoint_shape
from ckptdiag.advice.notes import notes
from ckptdiag.advice.proof import proven
from ckptdiag.advice.recommendation import Advice, Recommendation
from ckptdiag.advice.throttle import io_capacity_rule
from ckptdiag.analysis.results import Diagnosis
from ckptdiag.model.engine_config import percent_of_cache

# a rule reads the diagnosis and the causes it shows (advice/cause.py)
Rule = Callable[[Diagnosis, frozenset[str]], Recommendation | None]
RULES: tuple[Rule, ...] = (
    interval_rule,
    dirty_rule,
    cache_size_rule,
    eviction_targets_rule,
    threads_rule,
    updates_trigger_rule,
    io_capacity_rule,
)
# recommendations whose point is fewer application threads pulled into eviction
KEEPS_THREADS_OUT = frozenset({"eviction-updates", "eviction-target", "eviction-threads"})


def recommend(dx: Diagnosis) -> Advice:
    """The recommendations for a diagnosed window (none when its verdict is ``ok``), led by the
    causes the evidence shows."""
    settings = dx.settings
    if dx.severity == "ok":
        return Advice((), "no change: checkpoints do not hurt this server", settings, dx.facts.filesystem)
    causes = classify(dx)
    kinds = frozenset(c.kind for c in causes)
    recs = [r for r in (rule(dx, kinds) for rule in RULES) if r is not None]
    if not any(r.id == "eviction-dirty" for r in recs):  # a dirty target back at 5 % halves to 2.5 % anyway
        rec = updates_target_rule(dx, kinds)
        if rec is not None:
            recs.append(rec)
    recs = [proven(r) for r in without_contradictions(recs, settings.cache_bytes.value)]
    if CPU_BUSY in kinds:  # what the CPUs took cannot be told from what a setting would change
        recs = [_check_while_cpu_busy(r, dx) for r in recs]
    recs.extend(notes(dx, causes))
    cores = threads_need_cores(dx)
    if cores is not None:
        recs.append(cores)
    recs = [r if r.change is None else replace(r, commands=commands(r.change, settings)) for r in recs]
    together = combined((r.change for r in recs if r.kind == "setting" and r.change is not None), settings)
    return Advice(tuple(recs), _summary(recs, causes), settings, dx.facts.filesystem, together, causes)


def _check_while_cpu_busy(rec: Recommendation, dx: Diagnosis) -> Recommendation:
    """A setting as a check while the host's CPUs were busy with other work."""
    if rec.kind != "setting":
        return rec
    busy = dx.host_cpu_pct_p50 or 0.0
    first = (
        "see what mongod itself runs (db.currentOp(): index builds, collection scans, compression) first"
        if others_lead(dx) is False
        else "find what else runs on the host first (top, pidstat 1)"
    )
    return replace(
        rec,
        kind="note",
        confidence="low",
        confidence_why=f"the host's CPUs were {busy:.0f} % busy (all processes): the stalls may be the CPUs', "
        f"not the checkpoints'; {first}, then record again before changing this",
    )


def lowers_a_trigger(rec: Recommendation, cache: float | None) -> bool:
    """Does ``rec`` set any eviction trigger lower than it is now?"""
    change = rec.change
    if not isinstance(change, EngineChange):
        return False
    for key, new in change.set.items():
        if key.endswith("_trigger") and key in change.revert:
            after, before = percent_of_cache(new, cache), percent_of_cache(change.revert[key], cache)
            if after is not None and before is not None and after < before:
                return True
    return False


def without_contradictions(recs: list[Recommendation], cache: float | None) -> list[Recommendation]:
    """The recommendations with no pair that works against itself: a lower trigger pulls more
    application threads into eviction, so it is dropped beside one whose point is fewer."""
    if not any(r.id in KEEPS_THREADS_OUT for r in recs):
        return recs
    return [r for r in recs if not lowers_a_trigger(r, cache)]


def _summary(recs: list[Recommendation], causes: tuple[Cause, ...]) -> str:
    lead = ""
    if causes:
        lead = causes[0].title + (f" (also: {'; '.join(c.title for c in causes[1:])})" if causes[1:] else "") + ": "
    settings = [r for r in recs if r.kind == "setting"]
    if not settings:
        checks = f"; {len(recs)} thing{'s' if len(recs) != 1 else ''} to check" if recs else ""
        return lead + "no setting to change" + checks
    return lead + "; ".join(r.title[0].lower() + r.title[1:] for r in settings)


__all__ = ["Advice", "Recommendation", "checkpoint_shape", "recommend"]
