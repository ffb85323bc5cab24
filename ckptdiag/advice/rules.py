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

from ckptdiag.advice.commands import combined, commands
from ckptdiag.advice.dirty import cache_size_rule, dirty_rule
from ckptdiag.advice.eviction import eviction_targets_rule, threads_rule, updates_target_rule, updates_trigger_rule
from ckptdiag.advice.interval import interval_rule
from ckptdiag.advice.model import checkpoint_shape
from ckptdiag.advice.notes import notes
from ckptdiag.advice.recommendation import Advice, Recommendation
from ckptdiag.analysis.results import Diagnosis

Rule = Callable[[Diagnosis], Recommendation | None]
RULES: tuple[Rule, ...] = (
    interval_rule,
    dirty_rule,
    cache_size_rule,
    eviction_targets_rule,
    threads_rule,
    updates_trigger_rule,
)


def recommend(dx: Diagnosis) -> Advice:
    """The recommendations for a diagnosed window (none when its verdict is ``ok``)."""
    settings = dx.settings
    if dx.severity == "ok":
        return Advice((), "no change: checkpoints do not hurt this server", settings, dx.facts.filesystem)
    recs = [r for r in (rule(dx) for rule in RULES) if r is not None]
    if not any(r.id == "eviction-dirty" for r in recs):  # a dirty target back at 5 % halves to 2.5 % anyway
        rec = updates_target_rule(dx)
        if rec is not None:
            recs.append(rec)
    recs.extend(notes(dx))
    recs = [r if r.change is None else replace(r, commands=commands(r.change, settings)) for r in recs]
    together = combined((r.change for r in recs if r.kind == "setting" and r.change is not None), settings)
    return Advice(tuple(recs), _summary(recs), settings, dx.facts.filesystem, together)


def _summary(recs: list[Recommendation]) -> str:
    settings = [r for r in recs if r.kind == "setting"]
    if not settings:
        return "no setting to change" + (f"; {len(recs)} things to check" if recs else "")
    return "; ".join(r.title[0].lower() + r.title[1:] for r in settings)


__all__ = ["Advice", "Recommendation", "checkpoint_shape", "recommend"]
