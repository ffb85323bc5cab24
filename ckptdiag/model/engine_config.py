"""The WiredTiger settings in force: the config grammar, and *one* resolution of every setting.

There is no command that returns WiredTiger's effective eviction settings, and the checkpoint
interval moved from WiredTiger to mongod in 3.6, so each value is reconstructed from the best
source at hand and carries that source:

* ``wiredTigerEngineRuntimeConfig`` (getParameter): what was last set at runtime; it applies on
  top of the open configuration and is lost at restart;
* ``storage.wiredTiger.engineConfig.configString`` and ``cacheSizeGB`` (getCmdLineOpts): the
  configuration mongod was started with;
* ``syncdelay`` (getParameter, ``storage.syncPeriodSecs``, ``setParameter.syncdelay``) for the
  interval from 3.6 (3.5.9) on; up to 3.4 mongod handed it to WiredTiger as
  ``checkpoint=(wait=N,log_size=2GB)``, and from 3.6 that key would start a second checkpointer;
* the version's defaults (inferred) for anything no source sets.

The diagnosis, the advice and every report read the same :class:`EngineSettings`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ckptdiag.model import catalogue
from ckptdiag.model.facts import ServerFacts

DEFAULT_INTERVAL_S = 60.0
DEFAULT_COMMIT_MS = 100.0
DEFAULT_EVICTION_TARGET = 80.0
DEFAULT_EVICTION_TRIGGER = 95.0
DEFAULT_DIRTY_TARGET = 5.0
DEFAULT_DIRTY_TRIGGER = 20.0
DEFAULT_EVICTION_THREADS = 4  # mongod opens WiredTiger with eviction=(threads_min=4,threads_max=4)
UPDATES_SINCE = (4, 4)  # eviction_updates_target/trigger exist from 4.4
MONGOD_CHECKPOINT_THREAD_SINCE = (3, 6)

SOURCE_DEFAULT = "version default"
SOURCE_CONFIG_STRING = "configString"
SOURCE_RUNTIME = "runtime config (wiredTigerEngineRuntimeConfig)"
SOURCE_SERVER_STATUS = "serverStatus cache maximum bytes configured"

_UNITS = {"b": 1, "k": 2**10, "kb": 2**10, "m": 2**20, "mb": 2**20, "g": 2**30, "gb": 2**30, "t": 2**40, "tb": 2**40}


# -- the grammar ---------------------------------------------------------------------------------


def parse_config(text: str) -> dict[str, Any]:
    """A WiredTiger configuration string as nested dicts of strings.

    >>> parse_config("eviction=(threads_min=4,threads_max=8),eviction_dirty_target=10,statistics=(fast)")
    {'eviction': {'threads_min': '4', 'threads_max': '8'}, 'eviction_dirty_target': '10', 'statistics': {'fast': ''}}
    """
    out: dict[str, Any] = {}
    depth = start = 0
    items: list[str] = []
    for i, ch in enumerate(text):
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        elif ch == "," and depth == 0:
            items.append(text[start:i])
            start = i + 1
    items.append(text[start:])
    for item in (x.strip() for x in items if x.strip()):
        key, _, value = item.partition("=")
        value = value.strip()
        if value.startswith("(") and value.endswith(")"):
            out[key.strip()] = parse_config(value[1:-1])
        else:
            out[key.strip()] = value
    return out


# the open config's keys that bear on checkpoints, in the order a DBA reads them
CHECKPOINT_KEYS = (
    "cache_size",
    "checkpoint",
    "eviction",
    "eviction_target",
    "eviction_trigger",
    "eviction_dirty_target",
    "eviction_dirty_trigger",
    "eviction_updates_target",
    "eviction_updates_trigger",
    "io_capacity",
    "log",
    "history_store",
)


def checkpoint_settings(config: str) -> tuple[str, tuple[str, ...]]:
    """The keys of a WiredTiger config string that bear on checkpoints (``CHECKPOINT_KEYS``),
    as a string, and the names of the others (folded where a report shows it).

    >>> checkpoint_settings("create,cache_size=512M,session_max=20000,eviction=(threads_min=4),statistics=(fast)")
    ('cache_size=512M,eviction=(threads_min=4)', ('create', 'session_max', 'statistics'))
    """
    parsed = parse_config(config)
    kept = {key: parsed[key] for key in CHECKPOINT_KEYS if key in parsed}
    return render_config(kept), tuple(key for key in parsed if key not in kept)


def render_config(parsed: Mapping[str, Any]) -> str:
    """A parsed WiredTiger configuration back to its string form.

    >>> render_config({"eviction": {"threads_max": "8"}, "statistics": {"fast": ""}, "log": "x"})
    'eviction=(threads_max=8),statistics=(fast),log=x'
    """
    parts = []
    for key, value in parsed.items():
        if isinstance(value, Mapping):
            parts.append(f"{key}=({render_config(value)})")
        elif value == "":
            parts.append(key)
        else:
            parts.append(f"{key}={value}")
    return ",".join(parts)


def merge_config(config_string: str, changes: Mapping[str, str]) -> str:
    """``config_string`` with ``changes`` set (``eviction`` merged key by key), order kept."""
    parsed = parse_config(config_string) if config_string else {}
    for key, value in changes.items():
        if key == "eviction" and isinstance(parsed.get("eviction"), dict):
            sub = dict(parsed["eviction"])
            sub.update(parse_config(value.strip("()")))
            parsed["eviction"] = sub
        else:
            parsed[key] = parse_config(value.strip("()")) if value.startswith("(") else value
    return render_config(parsed)


def percent_of_cache(value: str, cache_bytes: float | None) -> float | None:
    """A WiredTiger eviction value as % of the cache: up to 100 a percentage, above it (or with a
    unit) a size in bytes.

    >>> percent_of_cache("10", None), percent_of_cache("512MB", 2**30), percent_of_cache("x", 1.0)
    (10.0, 50.0, None)
    """
    text = value.strip().lower()
    size = _size(text)
    if size is None:
        return None
    if text.rstrip("kmgtb") == text and size <= 100:  # no unit and at most 100: a percentage
        return size
    return 100 * size / cache_bytes if cache_bytes else None


# -- the settings in force -----------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Setting:
    """A setting's value and where it came from."""

    value: float | None
    source: str
    inferred: bool = False
    derived: str = ""  # how the value follows from another setting (e.g. "half the dirty target")

    @property
    def described(self) -> str:
        """The source, with how the value was derived from it (``configString (half the dirty target)``)."""
        return f"{self.source} ({self.derived})" if self.derived else self.source

    @property
    def number(self) -> float:
        """The value as a float, NaN when unknown (so that no threshold compares true on it)."""
        return float("nan") if self.value is None else float(self.value)

    def to_json(self) -> dict[str, Any]:
        """JSON form."""
        out: dict[str, Any] = {"value": self.value, "source": self.source, "inferred": self.inferred}
        if self.derived:
            out["derived"] = self.derived
        return out


def _default(value: float | None) -> Setting:
    return Setting(value, SOURCE_DEFAULT, inferred=True)


@dataclass(frozen=True, slots=True)
class EvictionSettings:
    """The eviction targets and triggers in force (% of the cache) and the eviction threads."""

    target: Setting
    trigger: Setting
    dirty_target: Setting
    dirty_trigger: Setting
    updates_target: Setting
    updates_trigger: Setting
    threads_min: Setting
    threads_max: Setting

    @classmethod
    def defaults(cls) -> EvictionSettings:
        """mongod's defaults, each marked inferred."""
        return cls(
            target=_default(DEFAULT_EVICTION_TARGET),
            trigger=_default(DEFAULT_EVICTION_TRIGGER),
            dirty_target=_default(DEFAULT_DIRTY_TARGET),
            dirty_trigger=_default(DEFAULT_DIRTY_TRIGGER),
            updates_target=_default(DEFAULT_DIRTY_TARGET / 2),
            updates_trigger=_default(DEFAULT_DIRTY_TRIGGER / 2),
            threads_min=_default(DEFAULT_EVICTION_THREADS),
            threads_max=_default(DEFAULT_EVICTION_THREADS),
        )

    @property
    def source(self) -> str:
        """Where the values came from, together (``version defaults (inferred)`` if nowhere)."""
        sources = []
        for name in _EVICTION_KEYS.values():
            setting: Setting = getattr(self, name)
            if not setting.inferred and setting.source not in sources:
                sources.append(setting.source)
        return " + ".join(sources) if sources else "version defaults (inferred)"


# WiredTiger's key -> EvictionSettings' field
_EVICTION_KEYS = {
    "eviction_target": "target",
    "eviction_trigger": "trigger",
    "eviction_dirty_target": "dirty_target",
    "eviction_dirty_trigger": "dirty_trigger",
    "eviction_updates_target": "updates_target",
    "eviction_updates_trigger": "updates_trigger",
    "threads_min": "threads_min",
    "threads_max": "threads_max",
}


@dataclass(frozen=True)
class EngineSettings:
    """Every setting in force on the diagnosed server that ckptdiag reads or changes."""

    version: catalogue.Version | None
    interval: Setting  # seconds between checkpoints
    commit_ms: Setting  # journal commit interval
    cache_bytes: Setting
    eviction: EvictionSettings
    config_string: str  # the persistent configString as configured ("" if none)
    runtime_config: str  # wiredTigerEngineRuntimeConfig as last set ("" if never)
    notes: tuple[str, ...] = ()
    io_capacity: Setting = Setting(0.0, SOURCE_DEFAULT, inferred=True)  # bytes/s WiredTiger may write (0: off)

    @property
    def wt_checkpoint_knob(self) -> bool:
        """Is the interval WiredTiger's ``checkpoint=(wait=N)`` (3.4 and older)?"""
        return _wt_knob(self.version)

    @property
    def has_updates_knobs(self) -> bool:
        """Does this version have ``eviction_updates_target/trigger``?"""
        return self.version is None or self.version >= UPDATES_SINCE


def default_cache_bytes(ram_bytes: float | None) -> float | None:
    """mongod's default cache for this RAM: max(50 % of (RAM - 1 GB), 256 MB).

    >>> default_cache_bytes(16 * 2**30) / 2**30
    7.5
    """
    if not ram_bytes:
        return None
    return max(0.5 * (ram_bytes - 2**30), 256 * 2**20)


def _number(value: Any) -> float | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return float(value)
    if isinstance(value, str):
        try:
            return float(value)
        except ValueError:
            return None
    return None


def _first(default: float, *candidates: tuple[Any, str]) -> Setting:
    """The first candidate that is a number, with its source; else the version default."""
    for raw, source in candidates:
        value = _number(raw)
        if value is not None:
            return Setting(value, source)
    return _default(default)


def _eviction(layers: list[tuple[str, str]], cache_bytes: float | None) -> EvictionSettings:
    """Eviction settings from WiredTiger config strings, later layers over earlier ones."""
    found: dict[str, Setting] = {}
    for text, source in layers:
        for key, value in parse_config(text).items():
            if key == "eviction" and isinstance(value, dict):
                for sub in ("threads_min", "threads_max"):
                    if str(value.get(sub, "")).isdigit():
                        found[sub] = Setting(float(value[sub]), source)
            elif key in _EVICTION_KEYS and isinstance(value, str):
                pct = percent_of_cache(value, cache_bytes)
                if pct is not None:
                    found[_EVICTION_KEYS[key]] = Setting(pct, source)
    base = EvictionSettings.defaults()
    dirty_target = found.get("dirty_target", base.dirty_target)
    dirty_trigger = found.get("dirty_trigger", base.dirty_trigger)
    # unset (or 0) updates values are half the dirty ones: WiredTiger's own derivation
    for name, dirty in (("updates_target", dirty_target), ("updates_trigger", dirty_trigger)):
        if name not in found or not found[name].value:
            half = (dirty.value or 0) / 2
            found[name] = Setting(half, dirty.source, dirty.inferred, derived=f"half the dirty {name.split('_')[1]}")
    return EvictionSettings(**{**{k: getattr(base, k) for k in _EVICTION_KEYS.values()}, **found})


def _wt_knob(version: catalogue.Version | None) -> bool:
    """Is the interval WiredTiger's ``checkpoint=(wait=N)`` on this version (3.4 and older)?"""
    return version is not None and version < MONGOD_CHECKPOINT_THREAD_SINCE


def _wt_wait(config_string: str) -> float | None:
    """``checkpoint=(wait=N)`` in a configString, if set."""
    wait = parse_config(config_string).get("checkpoint")
    return _number(wait.get("wait")) if isinstance(wait, dict) else None


def _interval(version: catalogue.Version | None, facts: ServerFacts, wt_wait: float | None) -> Setting:
    parsed = _mapping(facts.cmdline.get("parsed"))
    storage = _mapping(parsed.get("storage"))
    if _wt_knob(version):
        return _first(
            DEFAULT_INTERVAL_S,
            (wt_wait, "configString checkpoint=(wait)"),
            (storage.get("syncPeriodSecs"), f"{facts.cmdline_source} storage.syncPeriodSecs"),
        )
    return _first(
        DEFAULT_INTERVAL_S,
        (facts.parameters.get("syncdelay"), "getParameter syncdelay"),
        (storage.get("syncPeriodSecs"), f"{facts.cmdline_source} storage.syncPeriodSecs"),
        (_mapping(parsed.get("setParameter")).get("syncdelay"), f"{facts.cmdline_source} setParameter.syncdelay"),
    )


def _cache(facts: ServerFacts, observed_bytes: float | None) -> Setting:
    """The cache: what the server reports wins over what was configured."""
    storage = _mapping(_mapping(facts.cmdline.get("parsed")).get("storage"))
    cache_gb = _number(_mapping(_mapping(storage.get("wiredTiger")).get("engineConfig")).get("cacheSizeGB"))
    if observed_bytes and not (cache_gb and abs(cache_gb * 2**30 - observed_bytes) < 2**20):
        return Setting(observed_bytes, SOURCE_SERVER_STATUS)
    if cache_gb:
        return Setting(cache_gb * 2**30, f"{facts.cmdline_source} cacheSizeGB")
    logged = parse_config(facts.open_config or "").get("cache_size")
    if isinstance(logged, str) and (size := _size(logged)):
        return Setting(size, facts.open_config_source or "log")
    return Setting(None, "unknown", inferred=True)


def resolve(facts: ServerFacts, observed_cache_bytes: float | None = None) -> EngineSettings:
    """The settings in force, from every source the recording or FTDC kept (see the module doc);
    ``observed_cache_bytes`` is serverStatus's own cache size, which wins over the configured one."""
    version = catalogue.parse_version(facts.version)
    parsed = _mapping(facts.cmdline.get("parsed"))
    storage = _mapping(parsed.get("storage"))
    config_string = str(facts.config_string or "")
    runtime = facts.parameters.get("wiredTigerEngineRuntimeConfig")
    runtime = runtime if isinstance(runtime, str) else ""
    notes: list[str] = []
    if version is None:
        notes.append("server version unknown: the 3.6+ knobs are assumed")
    wt_wait = _wt_wait(config_string)
    interval = _interval(version, facts, wt_wait)
    if wt_wait and not _wt_knob(version):
        notes.append(
            f"configString has checkpoint=(wait={wt_wait:g}): on 3.6+ that starts WiredTiger's own "
            "checkpoint thread beside mongod's (remove it; use syncdelay)"
        )
    journal = _mapping(storage.get("journal"))
    commit = _first(
        DEFAULT_COMMIT_MS,
        (facts.parameters.get("journalCommitInterval"), "getParameter journalCommitInterval"),
        (journal.get("commitIntervalMs"), f"{facts.cmdline_source} storage.journal.commitIntervalMs"),
    )
    cache = _cache(facts, observed_cache_bytes)
    # what WiredTiger was opened with (the log), then what the DBA declared, then runtime changes
    logged = (facts.open_config or "", facts.open_config_source or "log")
    layers = [
        (text, source)
        for text, source in (logged, (config_string, SOURCE_CONFIG_STRING), (runtime, SOURCE_RUNTIME))
        if text
    ]
    eviction = _eviction(layers, cache.value)
    return EngineSettings(
        version=version,
        interval=interval,
        commit_ms=commit,
        cache_bytes=cache,
        eviction=eviction,
        config_string=config_string,
        runtime_config=runtime,
        notes=tuple(notes),
        io_capacity=_io_capacity(layers),
    )


def _io_capacity(layers: list[tuple[str, str]]) -> Setting:
    """WiredTiger's own write throttle, ``io_capacity=(total=N)`` (bytes a second; 0 or unset: off)."""
    found = Setting(0.0, SOURCE_DEFAULT, inferred=True)
    for text, source in layers:
        value = parse_config(text).get("io_capacity")
        total = value.get("total") if isinstance(value, dict) else None
        if isinstance(total, str):
            size = _size(total)
            if size is not None:
                found = Setting(size, source)
    return found


def _size(text: str) -> float | None:
    """A WiredTiger size (``60MB``, ``1G``, ``1048576``) in bytes.

    >>> _size("60MB"), _size("1g"), _size("512"), _size("x")
    (62914560.0, 1073741824.0, 512.0, None)
    """
    low = text.strip().lower()
    digits = low.rstrip("kmgtb")
    try:
        number = float(digits)
    except ValueError:
        return None
    return number * _UNITS.get(low[len(digits) :] or "b", 1)


def _mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}
