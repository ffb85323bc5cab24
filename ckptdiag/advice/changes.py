"""What a recommendation changes, as data: engine-config keys or a mongod parameter, with the
values to revert to. :mod:`ckptdiag.advice.commands` turns them into mongosh and mongod.conf."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field


@dataclass(frozen=True)
class EngineChange:
    """WiredTiger engine-config keys to set (``wiredTigerEngineRuntimeConfig`` at runtime, the
    configString persistently; ``cache_size`` persistently as ``cacheSizeGB``), and their values now."""

    set: Mapping[str, str]
    revert: Mapping[str, str]


@dataclass(frozen=True)
class ParameterChange:
    """A mongod server parameter (``setParameter`` at runtime) and its mongod.conf option."""

    parameter: str  # e.g. syncdelay
    config_path: tuple[str, ...]  # e.g. ("storage", "syncPeriodSecs")
    new: float
    old: float
    old_inferred: bool = False  # the old value is the version default: revert removes the option
    extra: Mapping[str, str] = field(default_factory=dict)


Change = EngineChange | ParameterChange
