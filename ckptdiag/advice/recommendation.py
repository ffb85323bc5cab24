"""A recommendation and the advice that gathers them: the typed results of the rules."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ckptdiag.advice.changes import Change
from ckptdiag.advice.commands import Commands
from ckptdiag.advice.kinds import Cause
from ckptdiag.model.engine_config import EngineSettings


@dataclass(frozen=True)
class Recommendation:
    """One recommended change (or, ``kind == "note"``, one thing to check), with its proof."""

    id: str
    kind: str  # "setting" or "note"
    setting: str
    title: str
    current: Any
    current_source: str
    recommended: Any
    evidence: tuple[str, ...]
    predicted: Mapping[str, Any]
    predicted_text: str
    tradeoffs: tuple[str, ...]
    confidence: str  # "low", "medium" or "high"
    confidence_why: str
    change: Change | None = None  # what it sets, as data
    commands: Commands = field(default_factory=Commands)  # filled in from ``change``
    lab: Mapping[str, Any] = field(default_factory=dict)  # the same change as lab overrides

    @property
    def apply_runtime(self) -> str | None:
        """The mongosh command that applies it now (lost at restart)."""
        return "\n".join(self.commands.apply_runtime) or None

    @property
    def revert_runtime(self) -> str | None:
        """The mongosh command that reverts it."""
        return "\n".join(self.commands.revert_runtime) or None

    @property
    def apply_config(self) -> str | None:
        """The mongod.conf lines that make it persistent."""
        return self.commands.apply_config

    @property
    def revert_config(self) -> str | None:
        """The mongod.conf lines that revert it (a YAML comment where a line is to be removed)."""
        return self.commands.revert_config

    def to_json(self) -> dict[str, Any]:
        """The JSON report's ``recommendations[]`` item."""
        return {
            "id": self.id,
            "kind": self.kind,
            "setting": self.setting,
            "title": self.title,
            "current": {"value": self.current, "source": self.current_source},
            "recommended": self.recommended,
            "evidence": list(self.evidence),
            "predicted": {**self.predicted, "text": self.predicted_text},
            "tradeoffs": list(self.tradeoffs),
            "confidence": {"level": self.confidence, "why": self.confidence_why},
            "apply": {
                "runtime": self.apply_runtime,
                "mongod_conf": self.apply_config,
                "wiredtiger_config": self.commands.engine,
            },
            "revert": {"runtime": self.revert_runtime, "mongod_conf": self.revert_config},
        }


@dataclass(frozen=True)
class Advice:
    """All recommendations for one diagnosis, and the combined commands."""

    recommendations: tuple[Recommendation, ...]
    summary: str
    settings: EngineSettings
    filesystem: str | None = None
    combined: Commands = field(default_factory=Commands)
    causes: tuple[Cause, ...] = ()  # the bottlenecks the evidence shows, by the share of the stall they explain

    @property
    def lab_overrides(self) -> dict[str, Any]:
        """Every recommended setting as lab overrides (for ``demo --verify``); a check is not applied."""
        out: dict[str, Any] = {}
        for r in self.recommendations:
            if r.kind == "setting":
                out.update(r.lab)
        return out

    def to_json(self) -> dict[str, Any]:
        """The JSON report's ``advice`` object."""
        s = self.settings
        return {
            "summary": self.summary,
            "causes": [
                {
                    "kind": c.kind,
                    "title": c.title,
                    "evidence": list(c.evidence),
                    "share": None if c.share is None else round(c.share, 2),
                    "share_of": c.share_of or None,
                }
                for c in self.causes
            ],
            "current": {
                "checkpoint_interval_s": s.interval.to_json(),
                "journal_commit_interval_ms": s.commit_ms.to_json(),
                "cache_bytes": s.cache_bytes.to_json(),
                "eviction_source": s.eviction.source,
                "config_string": s.config_string,
                "runtime_config": s.runtime_config,
                "filesystem": self.filesystem,
                "notes": list(s.notes),
            },
            "apply": {
                "runtime": list(self.combined.apply_runtime),
                "mongod_conf": self.combined.apply_config,
                "wiredtiger_config": self.combined.engine,
            },
            "revert": {"runtime": list(self.combined.revert_runtime), "mongod_conf": self.combined.revert_config},
        }
