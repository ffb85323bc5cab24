"""The commands that apply and revert a change: mongosh at runtime, mongod.conf persistently."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from ckptdiag.advice.changes import Change, EngineChange, ParameterChange
from ckptdiag.model.engine_config import EngineSettings, merge_config, render_config

CACHE_KEY = "cache_size"  # persistently the cache is mongod's own option, not part of configString


@dataclass(frozen=True)
class Commands:
    """How to apply a change now (lost at restart) and persistently, and how to revert both: each
    one language, pasteable as it is (mongosh lines; mongod.conf YAML, a comment where a line is
    to be removed); ``engine``: the WiredTiger config string an engine change sets, for tools that
    take one."""

    apply_runtime: tuple[str, ...] = ()
    apply_config: str | None = None
    revert_runtime: tuple[str, ...] = ()
    revert_config: str | None = None
    engine: str | None = None


def _runtime_wt(config: str) -> str:
    return f'db.adminCommand({{setParameter: 1, wiredTigerEngineRuntimeConfig: "{config}"}})'


def _set_parameter(name: str, value: float) -> str:
    return f"db.adminCommand({{setParameter: 1, {name}: {value:g}}})"


def _yaml(path: tuple[str, ...], value: str) -> str:
    """``a: b: c: value`` as indented YAML lines."""
    lines = [f"{'  ' * i}{key}:" for i, key in enumerate(path[:-1])]
    lines.append(f"{'  ' * (len(path) - 1)}{path[-1]}: {value}")
    return "\n".join(lines)


def _engine_yaml(settings: EngineSettings, change: Mapping[str, str], revert: bool) -> list[str]:
    """The ``engineConfig`` lines of an engine change (or of its revert)."""
    lines = []
    if CACHE_KEY in change:
        gb = (settings.cache_bytes.value or 0) / 2**30 if revert else float(change[CACHE_KEY].rstrip("G"))
        lines.append(f"cacheSizeGB: {gb:g}")
    config = {k: v for k, v in change.items() if k != CACHE_KEY}
    if config:
        if not revert:
            lines.append(f'configString: "{merge_config(settings.config_string, config)}"')
        elif settings.config_string:
            lines.append(f'configString: "{settings.config_string}"')
        else:
            lines.append("# configString: remove")
    return lines


def _removed(path: tuple[str, ...], back_to: str = "the default") -> str:
    """A mongod.conf line to remove, as a YAML comment: pasted, it changes nothing by itself."""
    return f"# {'.'.join(path)}: remove the line (back to {back_to})"


def _block(head: tuple[str, ...], lines: list[str]) -> str:
    return "\n".join([_yaml(head, "").rstrip(" ")] + [f"{'  ' * len(head)}{line}" for line in lines])


def commands(change: Change, settings: EngineSettings) -> Commands:
    """The commands of one change."""
    if isinstance(change, ParameterChange):
        revert_config = (
            _removed(change.config_path) if change.old_inferred else _yaml(change.config_path, f"{change.old:g}")
        )
        return Commands(
            (_set_parameter(change.parameter, change.new),),
            _yaml(change.config_path, f"{change.new:g}"),
            (_set_parameter(change.parameter, change.old),),
            revert_config,
        )
    head = ("storage", "wiredTiger", "engineConfig")
    only_cache = set(change.set) == {CACHE_KEY}
    revert_config = (
        _block(head, _engine_yaml(settings, change.set, revert=True))
        if settings.config_string or only_cache
        else _removed((*head, "configString"), "the defaults")
    )
    return Commands(
        (_runtime_wt(render_config(change.set)),),
        _block(head, _engine_yaml(settings, change.set, revert=False)),
        (_runtime_wt(render_config(change.revert)),),
        revert_config,
        render_config(change.set),
    )


def combined(changes: Iterable[Change], settings: EngineSettings) -> Commands:
    """One block that applies (and one that reverts) every change together: the parameters one by
    one, the engine keys in one runtime string and one merged configString."""
    runtime: list[str] = []
    revert_runtime: list[str] = []
    storage: list[str] = []
    storage_revert: list[str] = []
    engine: dict[str, str] = {}
    engine_revert: dict[str, str] = {}
    for change in changes:
        if isinstance(change, EngineChange):
            engine.update(change.set)
            engine_revert.update(change.revert)
            continue
        runtime.append(_set_parameter(change.parameter, change.new))
        revert_runtime.append(_set_parameter(change.parameter, change.old))
        path = change.config_path[1:]  # under storage:
        storage.append(_yaml(path, f"{change.new:g}"))
        storage_revert.append(_removed(change.config_path) if change.old_inferred else _yaml(path, f"{change.old:g}"))
    if engine:
        runtime.append(_runtime_wt(render_config(engine)))
        revert_runtime.append(_runtime_wt(render_config(engine_revert)))
        storage += ["wiredTiger:", "  engineConfig:"] + [
            f"    {line}" for line in _engine_yaml(settings, engine, revert=False)
        ]
        storage_revert += ["wiredTiger:", "  engineConfig:"] + [
            f"    {line}" for line in _engine_yaml(settings, engine, revert=True)
        ]
    if not storage:
        return Commands()
    revert = (
        "\n".join(storage_revert)  # only lines to remove: comments, never an empty `storage:` (null)
        if all(line.startswith("#") for line in storage_revert)
        else "storage:\n" + "\n".join(_indent(storage_revert))
    )
    return Commands(
        tuple(runtime),
        "storage:\n" + "\n".join(_indent(storage)),
        tuple(revert_runtime),
        revert,
        render_config(engine) if engine else None,
    )


def _indent(lines: list[str]) -> list[str]:
    return ["  " + part for line in lines for part in line.split("\n")]
