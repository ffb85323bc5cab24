"""What is in force on the server, knob by knob, and how each knob is set on its version.

There is no API that returns WiredTiger's effective eviction settings, and the checkpoint
interval moved from WiredTiger to mongod in 3.6, so each value is reconstructed from the best
source at hand, and says which: ``getParameter`` (what a running server answers now), then
``getCmdLineOpts`` (its configuration file and command line), then the version's defaults
(inferred). The version traps (``docs/advice.md``):

* up to 3.4 mongod handed the interval to WiredTiger as ``checkpoint=(wait=N,log_size=2GB)``;
  from 3.6 (3.5.9) mongod's own checkpoint thread sleeps ``syncdelay`` seconds
  (``storage.syncPeriodSecs``), and ``checkpoint=(wait=N)`` would start a second checkpointer;
* ``wiredTigerEngineRuntimeConfig`` is runtime-only and lost on restart: a persistent change
  goes into ``storage.wiredTiger.engineConfig.configString``;
* ``eviction_updates_*`` exist from 4.4; eviction threads are limited to 20.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ckptdiag import catalogue
from ckptdiag.analysis.diagnosis import EvictionSettings, ServerFacts, parse_config

DEFAULT_INTERVAL_S = 60.0
DEFAULT_COMMIT_MS = 100.0
EVICTION_THREADS_LIMIT = 20  # WiredTiger's limit up to 8.0 (64 after WT-15039: version unverified)
UPDATES_SINCE = (4, 4)
MONGOD_CHECKPOINT_THREAD_SINCE = (3, 6)


@dataclass(frozen=True)
class Value:
    """A setting's value and where it came from."""

    value: float | None
    source: str
    inferred: bool = False

    def to_json(self) -> dict[str, Any]:
        """JSON form."""
        return {"value": self.value, "source": self.source, "inferred": self.inferred}


@dataclass
class Current:
    """The settings in force on the diagnosed server."""

    version: catalogue.Version | None
    interval: Value
    commit_ms: Value
    cache_bytes: Value
    ram_bytes: float | None
    cores: int | None
    eviction: EvictionSettings
    config_string: str  # the persistent configString as configured ("" if none)
    filesystem: str | None
    notes: list[str] = field(default_factory=list)

    @property
    def wt_checkpoint_knob(self) -> bool:
        """Is the interval WiredTiger's ``checkpoint=(wait=N)`` (3.4 and older)?"""
        return self.version is not None and self.version < MONGOD_CHECKPOINT_THREAD_SINCE

    @property
    def has_updates_knobs(self) -> bool:
        """Does this version have ``eviction_updates_target/trigger``?"""
        return self.version is None or self.version >= UPDATES_SINCE

    @property
    def default_cache_bytes(self) -> float | None:
        """mongod's default cache for this RAM: max(50 % of (RAM - 1 GB), 256 MB)."""
        if not self.ram_bytes:
            return None
        return max(0.5 * (self.ram_bytes - 2**30), 256 * 2**20)


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


def _first(default: float, *candidates: tuple[Any, str]) -> Value:
    """The first candidate that is a number, with its source; else the version default."""
    for raw, source in candidates:
        value = _number(raw)
        if value is not None:
            return Value(value, source)
    return Value(default, "version default", inferred=True)


def current_settings(facts: ServerFacts) -> Current:
    """Reconstruct the settings in force from what the recording or FTDC kept."""
    version = catalogue.parse_version(facts.version)
    parsed = (facts.cmdline or {}).get("parsed") or {}
    storage = parsed.get("storage") or {}
    set_parameter = parsed.get("setParameter") or {}
    params = facts.parameters or {}
    config_string = str(facts.config_string or "")
    notes: list[str] = []
    if version is None:
        notes.append("server version unknown: the 3.6+ knobs are assumed")

    # the checkpoint interval
    wait = parse_config(config_string).get("checkpoint")
    wt_wait = _number(wait.get("wait")) if isinstance(wait, dict) else None
    wt_knob = version is not None and version < MONGOD_CHECKPOINT_THREAD_SINCE
    if wt_knob:
        interval = _first(
            DEFAULT_INTERVAL_S,
            (wt_wait, "configString checkpoint=(wait)"),
            (storage.get("syncPeriodSecs"), "getCmdLineOpts storage.syncPeriodSecs"),
        )
    else:
        interval = _first(
            DEFAULT_INTERVAL_S,
            (params.get("syncdelay"), "getParameter syncdelay"),
            (storage.get("syncPeriodSecs"), "getCmdLineOpts storage.syncPeriodSecs"),
            (set_parameter.get("syncdelay"), "getCmdLineOpts setParameter.syncdelay"),
        )
    if wt_wait and not wt_knob:
        notes.append(
            f"configString has checkpoint=(wait={wt_wait:g}): on 3.6+ that starts WiredTiger's own "
            "checkpoint thread beside mongod's (remove it; use syncdelay)"
        )

    # journal commit interval
    commit = _first(
        DEFAULT_COMMIT_MS,
        (params.get("journalCommitInterval"), "getParameter journalCommitInterval"),
        ((storage.get("journal") or {}).get("commitIntervalMs"), "getCmdLineOpts storage.journal.commitIntervalMs"),
    )

    # the cache: what the server reports wins over what was configured
    cache_gb = _number(((storage.get("wiredTiger") or {}).get("engineConfig") or {}).get("cacheSizeGB"))
    if facts.cache_max_bytes and not (cache_gb and abs(cache_gb * 2**30 - facts.cache_max_bytes) < 2**20):
        cache = Value(facts.cache_max_bytes, "serverStatus cache maximum bytes configured")
    elif cache_gb:
        cache = Value(cache_gb * 2**30, "getCmdLineOpts cacheSizeGB")
    else:
        cache = Value(None, "unknown", inferred=True)

    # eviction: configString, then what was last set at runtime (both WiredTiger syntax)
    runtime = str(params.get("wiredTigerEngineRuntimeConfig") or "")
    eviction = EvictionSettings.from_config_string(
        ",".join(s for s in (config_string, runtime) if s), cache.value or facts.cache_max_bytes
    )
    if runtime and eviction.source == "configString":
        eviction.source = "configString + wiredTigerEngineRuntimeConfig" if config_string else "getParameter"
    return Current(
        version=version,
        interval=interval,
        commit_ms=commit,
        cache_bytes=cache,
        ram_bytes=facts.ram_bytes,
        cores=facts.cores,
        eviction=eviction,
        config_string=config_string,
        filesystem=facts.filesystem,
        notes=notes,
    )


def merge_config(config_string: str, changes: dict[str, str]) -> str:
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


def render_config(parsed: dict[str, Any]) -> str:
    """A parsed WiredTiger configuration back to its string form."""
    parts = []
    for key, value in parsed.items():
        if isinstance(value, dict):
            parts.append(f"{key}=({render_config(value)})")
        elif value == "":
            parts.append(key)
        else:
            parts.append(f"{key}={value}")
    return ",".join(parts)
