"""The diagnosis: every checkpoint episode's cost against the baseline, eviction pressure, and a
verdict a DBA can paste into a ticket.

Thresholds (documented in docs/analysis.md; each is a module constant):

* baseline: samples at least ``BASELINE_CLEAR_BEFORE_S`` before and ``BASELINE_CLEAR_AFTER_S``
  after every episode, within ``BASELINE_WINDOW_S`` before the episode (the load it interrupted:
  the server's load changes over a day), else around it, falling back to the whole window's when
  fewer than ``BASELINE_MIN_SAMPLES`` remain;
* an episode's impact is read over the samples whose interval it touches, plus one (requests it
  delayed complete in the next second): worst throughput, worst latency, disk peaks, evictions;
* a **stall**: throughput in its worst second at most ``STALL_OPS_RATIO`` of the baseline while the
  write latency (p99 when histograms are recorded, else the mean) is at least
  ``STALL_LATENCY_RATIO`` times the baseline (or no write completed at all), on a server doing at
  least ``MIN_BASELINE_OPS`` operations a second; or application threads waited for cache space
  ``STALL_APP_WAIT_MS`` or more during it. The load must come back: if the median throughput of
  the ``RECOVERY_WINDOW_S`` after it stays under ``RECOVERY_RATIO`` of the baseline, the client
  went away (the workload ended), and that is not a stall;
* an episode **hurts** (short of a stall) when throughput falls to ``HURT_OPS_RATIO`` of the
  baseline; a latency rise of ``HURT_LATENCY_RATIO`` times or more is named in the summary but
  does not change the verdict on its own (p99 rises in most checkpoints of a healthy server);
* verdict ``critical``: at least ``CRITICAL_MIN_STALLS`` stalls that are at least
  ``CRITICAL_STALL_SHARE`` of the episodes (a single episode that stalls, when it is the only one);
  ``warn``: any stall, episodes that hurt in ``WARN_HURT_SHARE`` of them, dirty cache at or over the
  dirty trigger, or application threads evicting; else ``ok``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from ckptdiag.analysis.episodes import Episode, find_episodes, period
from ckptdiag.recording import utc_iso

BASELINE_CLEAR_BEFORE_S = 2.0
BASELINE_CLEAR_AFTER_S = 3.0
BASELINE_WINDOW_S = 300.0
BASELINE_MIN_SAMPLES = 10
IMPACT_GRACE_S = 1.0
RECOVERY_WINDOW_S = 10.0
RECOVERY_RATIO = 0.5
MIN_BASELINE_OPS = 20.0
STALL_OPS_RATIO = 0.6
STALL_LATENCY_RATIO = 2.0
STALL_APP_WAIT_MS = 500.0
HURT_OPS_RATIO = 0.8
HURT_LATENCY_RATIO = 1.5
CRITICAL_MIN_STALLS = 2
CRITICAL_STALL_SHARE = 0.25
WARN_HURT_SHARE = 0.25
UTIL_SATURATED_PCT = 90.0
SLOW_REPLY_MS = 1000.0
UPDATES_NEAR_TARGET = 0.95  # eviction starts at the target: the last sample before shows just under it


@dataclass
class EvictionSettings:
    """The eviction targets and triggers in force (% of the cache), and where they came from."""

    target: float = 80.0
    trigger: float = 95.0
    dirty_target: float = 5.0
    dirty_trigger: float = 20.0
    updates_target: float = 2.5
    updates_trigger: float = 10.0
    threads_min: int | None = 4
    threads_max: int | None = 4
    source: str = "version defaults (inferred)"

    @classmethod
    def from_config_string(cls, config: str | None, cache_bytes: float | None) -> EvictionSettings:
        """mongod's defaults, overridden by a WiredTiger configString (``a=b,c=(d=e)``)."""
        settings = cls()
        if not config:
            return settings
        found = False
        for key, value in parse_config(config).items():
            if key == "eviction" and isinstance(value, dict):
                for sub in ("threads_min", "threads_max"):
                    if sub in value and str(value[sub]).isdigit():
                        setattr(settings, sub, int(value[sub]))
                        found = True
            elif key.startswith("eviction_") and isinstance(value, str):
                name = key.removeprefix("eviction_")
                if hasattr(settings, name):
                    pct = _percent(value, cache_bytes)
                    if pct is not None:
                        setattr(settings, name, pct)
                        found = True
        if found:
            settings.source = "configString"
            # 0 (or absent) updates values are derived from the dirty ones
            if "eviction_updates_target" not in config or settings.updates_target == 0:
                settings.updates_target = settings.dirty_target / 2
            if "eviction_updates_trigger" not in config or settings.updates_trigger == 0:
                settings.updates_trigger = settings.dirty_trigger / 2
        return settings


def parse_config(text: str) -> dict[str, Any]:
    """A WiredTiger configuration string (``a=b,c=(d=e)``) as nested dicts of strings."""
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


def _percent(value: str, cache_bytes: float | None) -> float | None:
    """A WiredTiger eviction value as % of the cache: above 100 it is an absolute size."""
    units = {"b": 1, "k": 2**10, "kb": 2**10, "m": 2**20, "mb": 2**20, "g": 2**30, "gb": 2**30, "t": 2**40, "tb": 2**40}
    text = value.strip().lower()
    digits = text.rstrip("kmgtb")
    try:
        number = float(digits)
    except ValueError:
        return None
    unit = text[len(digits) :]
    if not unit and number <= 100:
        return number
    size = number * units.get(unit or "b", 1)
    return 100 * size / cache_bytes if cache_bytes else None


@dataclass
class ServerFacts:
    """Who the server is, from a recording's header or FTDC's metadata."""

    version: str | None = None
    host: str | None = None
    cache_max_bytes: float | None = None
    ram_bytes: float | None = None
    cores: int | None = None
    dbpath: str | None = None
    devices: list[str] = field(default_factory=list)
    config_string: str | None = None
    cmdline: dict[str, Any] = field(default_factory=dict)
    os: str | None = None
    parameters: dict[str, Any] = field(default_factory=dict)  # getParameter's answer, when recorded
    filesystem: str | None = None  # dbPath's file system, when recorded on the server's host

    @classmethod
    def from_documents(
        cls,
        *,
        version: str | None,
        host: str | None,
        cmdline: dict[str, Any] | None,
        host_info: dict[str, Any] | None,
        devices: list[str] | None = None,
        dbpath: str | None = None,
        parameters: dict[str, Any] | None = None,
        filesystem: str | None = None,
    ) -> ServerFacts:
        """From getCmdLineOpts and hostInfo replies (a recording's header, FTDC's metadata)."""
        parsed = (cmdline or {}).get("parsed") or {}
        storage = parsed.get("storage") or {}
        engine = (storage.get("wiredTiger") or {}).get("engineConfig") or {}
        # hostInfo as mongod answers it (FTDC), or as a recording's header keeps it
        info = host_info or {}
        system = info.get("system") or {
            "hostname": info.get("hostname"),
            "memSizeMB": info.get("mem_size_mb"),
            "numCores": info.get("num_cores"),
        }
        cache_gb = engine.get("cacheSizeGB")
        mem_mb = system.get("memSizeMB")
        return cls(
            version=version,
            host=host or system.get("hostname"),
            cache_max_bytes=float(cache_gb) * 2**30 if isinstance(cache_gb, int | float) else None,
            ram_bytes=float(mem_mb) * 2**20 if isinstance(mem_mb, int | float) else None,
            cores=int(system["numCores"]) if isinstance(system.get("numCores"), int | float) else None,
            dbpath=dbpath or storage.get("dbPath"),
            devices=list(devices or []),
            config_string=engine.get("configString"),
            cmdline=dict(cmdline or {}),
            os=((host_info or {}).get("os") or {}).get("name"),
            parameters=dict(parameters or {}),
            filesystem=filesystem,
        )

    def to_json(self) -> dict[str, Any]:
        """The JSON report's ``server`` object."""
        return {
            "version": self.version,
            "host": self.host,
            "cache_max_bytes": self.cache_max_bytes,
            "ram_bytes": self.ram_bytes,
            "cores": self.cores,
            "dbpath": self.dbpath,
            "devices": self.devices,
        }


@dataclass
class Baseline:
    """The server's usual second, away from checkpoints."""

    samples: int
    ops_s: float | None
    writes_s: float | None
    write_lat_ms: float | None
    write_p99_ms: float | None
    read_lat_ms: float | None
    disk_write_mb_s: float | None
    disk_util_pct: float | None


@dataclass
class Diagnosis:
    """Everything the reports show."""

    start: float
    end: float
    samples: int
    period_s: float | None  # sampling period
    gaps: int
    restarts: int
    samples_without_wiredtiger: int
    episodes: list[Episode]
    checkpoint_period_s: float | None
    checkpoint_period_cv: float | None
    baseline: Baseline
    disk: str | None
    eviction: dict[str, Any]
    severity: str
    summary: str
    findings: list[str]
    evidence: list[str]
    settings: EvictionSettings
    ops_s_mean: float | None = None  # over the whole window, checkpoints included
    writes_s_mean: float | None = None
    timeline: pd.DataFrame | None = None
    # stalls while no checkpoint ran (same yardstick): something else held the server up
    other_stalls: list[dict[str, Any]] = field(default_factory=list)

    @property
    def stalls(self) -> int:
        """Episodes that stalled the server."""
        return sum(e.stall for e in self.episodes)


def _nanmedian(values: np.ndarray) -> float | None:
    finite = values[np.isfinite(values)]
    return float(np.median(finite)) if finite.size else None


def _nanmean(values: np.ndarray) -> float | None:
    finite = values[np.isfinite(values)]
    return float(finite.mean()) if finite.size else None


def _nanmax(values: np.ndarray) -> float | None:
    finite = values[np.isfinite(values)]
    return float(finite.max()) if finite.size else None


def _nanmin(values: np.ndarray) -> float | None:
    finite = values[np.isfinite(values)]
    return float(finite.min()) if finite.size else None


def _ratio(value: float | None, base: float | None) -> float | None:
    if value is None or base is None or base <= 0:
        return None
    return value / base


def _affected(t: np.ndarray, episodes: list[Episode], before: float, after: float) -> np.ndarray:
    """Samples whose interval comes within ``before``/``after`` seconds of an episode."""
    mark = np.zeros(t.size + 1, dtype=np.int64)
    for e in episodes:
        end = e.end if e.end is not None else t[-1]
        lo = int(np.searchsorted(t, e.start - before, side="right"))
        hi = int(np.searchsorted(t, end + after, side="left"))
        mark[lo] += 1
        mark[min(hi + 1, t.size)] -= 1
    return np.cumsum(mark[:-1]) > 0


def diagnose(d: pd.DataFrame, facts: ServerFacts, *, gaps: int = 0, restarts: int = 0) -> Diagnosis:
    """Diagnose a derived frame (see :func:`ckptdiag.analysis.series.derive`); ``gaps`` and
    ``restarts`` are the source's own count (the frame's ``gap_before`` and ``segment``)."""
    if d.empty:
        raise ValueError("no samples in the window")
    t = d["t"].to_numpy()
    cache = _nanmax(d["cache_max_bytes"].to_numpy()) or facts.cache_max_bytes
    facts.cache_max_bytes = cache  # what the server reports wins over the configuration
    settings = EvictionSettings.from_config_string(facts.config_string, cache)
    episodes = find_episodes(d)
    disks = [c[len("disk.") : -len(".wmb_s")] for c in d.columns if c.startswith("disk.") and c.endswith(".wmb_s")]
    disk = _pick_disk(d, disks, facts.devices)
    near = _affected(t, episodes, BASELINE_CLEAR_BEFORE_S, BASELINE_CLEAR_AFTER_S)
    base_rows = ~near & np.isfinite(d["dt"].to_numpy())
    cols = {
        "ops_s": d["ops_s"].to_numpy(),
        "writes_s": d["writes_s"].to_numpy(),
        "write_lat_ms": d["write_lat_ms"].to_numpy(),
        "write_p99_ms": d["write_p99_ms"].to_numpy(),
        "read_lat_ms": d["read_lat_ms"].to_numpy(),
        "read_p99_ms": d["read_p99_ms"].to_numpy(),
        "dirty_pct": d["dirty_pct"].to_numpy(),
        "app_evict": d["app_evict"].to_numpy(),
        "app_wait_ms": d["app_wait_ms"].to_numpy(),
        "wtickets_avail": d["wtickets_avail"].to_numpy(),
        "queue_writers": d["queue_writers"].to_numpy(),
    }
    nan = np.full(t.size, np.nan)
    for figure in ("wmb_s", "w_s", "util_pct", "w_await_ms", "aqu_sz"):
        cols["disk_" + figure] = d[f"disk.{disk}.{figure}"].to_numpy() if disk else nan
    whole = Baseline(
        int(base_rows.sum()),
        *(
            _nanmedian(cols[c][base_rows])
            for c in (
                "ops_s",
                "writes_s",
                "write_lat_ms",
                "write_p99_ms",
                "read_lat_ms",
                "disk_wmb_s",
                "disk_util_pct",
            )
        ),
    )
    for e in episodes:
        _impact(e, t, cols, base_rows, whole)
    eviction = _eviction(d, settings, facts.version)
    cols["updates_pct"] = d["updates_pct"].to_numpy()
    others = _other_stalls(t, cols, _affected(t, episodes, 0.0, IMPACT_GRACE_S), whole, settings)
    severity, findings = _verdict(episodes, eviction, settings, others)
    ckpt_period, cv = period(episodes)
    samples_period = _nanmedian(d["dt"].to_numpy())
    evidence = _evidence(d, episodes, gaps, restarts, samples_period)
    if others:
        first = others[0]
        evidence.append(
            f"{len(others)} stall{'s' if len(others) != 1 else ''} while no checkpoint ran (the same "
            f"yardstick: writes at most {STALL_OPS_RATIO * 100:.0f} % of the baseline, write latency "
            f"{STALL_LATENCY_RATIO:g}x or more): not the checkpoints; the first at {utc_iso(first['start'])}, "
            f"{first['duration_s']:.0f} s" + (f" ({'; '.join(first['seen'])})" if first["seen"] else "")
        )
    diagnosis = Diagnosis(
        start=float(t[0]),
        end=float(t[-1]),
        samples=int(t.size),
        period_s=samples_period,
        gaps=gaps,
        restarts=restarts,
        samples_without_wiredtiger=int(np.nansum(d["wt_missing"].to_numpy())),
        episodes=episodes,
        checkpoint_period_s=ckpt_period,
        checkpoint_period_cv=cv,
        baseline=whole,
        disk=disk,
        eviction=eviction,
        severity=severity,
        summary="",
        findings=findings,
        evidence=evidence,
        settings=settings,
        ops_s_mean=_nanmean(cols["ops_s"]),
        writes_s_mean=_nanmean(cols["writes_s"]),
        other_stalls=others,
    )
    diagnosis.summary = summary_sentence(diagnosis)
    diagnosis.timeline = timeline(d, episodes, disk, TIMELINE_POINTS)
    return diagnosis


TIMELINE_POINTS = 600


def timeline(d: pd.DataFrame, episodes: list[Episode], disk: str | None, points: int) -> pd.DataFrame:
    """The window in at most ``points`` equal time buckets: lowest ops/s (dips must show), highest
    dirty %, disk MB/s and write latency, and whether a checkpoint or a stall touched the bucket."""
    t = d["t"].to_numpy()
    span = max(float(t[-1] - t[0]), 1e-9)
    n = int(min(points, max(t.size, 1)))
    bucket = np.minimum(((t - t[0]) / span * n).astype(np.int64), n - 1)
    frame = pd.DataFrame(
        {
            "bucket": bucket,
            "ops_s": d["ops_s"].to_numpy(),
            "dirty_pct": d["dirty_pct"].to_numpy(),
            "disk_mb_s": d[f"disk.{disk}.wmb_s"].to_numpy() if disk else np.nan,
            "write_lat_ms": d["write_lat_ms"].to_numpy(),
        }
    )
    out = frame.groupby("bucket").agg(
        ops_s=("ops_s", "min"),
        ops_s_mean=("ops_s", "mean"),
        dirty_pct=("dirty_pct", "max"),
        disk_mb_s=("disk_mb_s", "max"),
        write_lat_ms=("write_lat_ms", "max"),
    )
    out = out.reindex(range(n))
    out["t"] = t[0] + np.arange(n) * span / n
    ckpt = np.zeros(n, dtype=bool)
    stall = np.zeros(n, dtype=bool)
    for e in episodes:
        end = e.end if e.end is not None else float(t[-1])
        lo = int(min((e.start - t[0]) / span * n, n - 1))
        hi = int(min((end - t[0]) / span * n, n - 1))
        ckpt[max(lo, 0) : hi + 1] = True
        if e.stall:
            stall[max(lo, 0) : hi + 1] = True
    out["checkpoint"] = ckpt
    out["stall"] = stall
    result: pd.DataFrame = out.reset_index(drop=True)
    return result


def _pick_disk(d: pd.DataFrame, disks: list[str], devices: list[str]) -> str | None:
    for dev in devices:  # the recorder's own mapping of dbPath to disks
        if dev in disks:
            return dev
    if not disks:
        return None
    # the disk that wrote the most (FTDC keeps every physical disk of the host)
    return max(disks, key=lambda dev: float(np.nansum(d[f"disk.{dev}.wmb_s"].to_numpy() * d["dt"].to_numpy())))


def _impact(e: Episode, t: np.ndarray, cols: dict[str, np.ndarray], base_rows: np.ndarray, whole: Baseline) -> None:
    end = e.end if e.end is not None else t[-1]
    lo = max(int(np.searchsorted(t, e.start, side="right")), 1)
    hi = min(int(np.searchsorted(t, end + IMPACT_GRACE_S, side="left")), t.size - 1)
    if hi < lo:
        hi = lo = min(lo, t.size - 1)
    rows = slice(lo, hi + 1)
    e.rows = (lo, hi)
    # local baseline: the load of the minutes before it (the load it interrupted), else of the
    # minutes around it, else the whole window's
    a = int(np.searchsorted(t, e.start - BASELINE_WINDOW_S))
    b = int(np.searchsorted(t, e.start))
    if int(base_rows[a:b].sum()) < BASELINE_MIN_SAMPLES:
        b = int(np.searchsorted(t, end + BASELINE_WINDOW_S))
    # only the slice is touched: a day has 1,440 episodes and 86,400 samples
    span, local = slice(a, b), base_rows[a:b]
    use_local = int(local.sum()) >= BASELINE_MIN_SAMPLES
    known: dict[str, float | None] = {}

    def base(name: str) -> float | None:
        if name not in known:
            value = _nanmedian(cols[name][span][local]) if use_local else None
            if value is None:
                value = getattr(whole, name) if hasattr(whole, name) else _nanmedian(cols[name][base_rows])
            known[name] = value
        return known[name]

    base_ops = base("ops_s")
    worst_ops = _nanmin(cols["ops_s"][rows])
    ops_ratio = _ratio(worst_ops, base_ops) if base_ops and base_ops >= MIN_BASELINE_OPS else None
    p99 = _nanmax(cols["write_p99_ms"][rows])
    lat_kind = "p99" if p99 is not None and base("write_p99_ms") else "mean"
    if lat_kind == "p99":
        write_ratio = _ratio(p99, base("write_p99_ms"))
    else:
        write_ratio = _ratio(_nanmax(cols["write_lat_ms"][rows]), base("write_lat_ms"))
    read_ratio = _ratio(_nanmax(cols["read_lat_ms"][rows]), base("read_lat_ms"))
    app_wait = float(np.nansum(cols["app_wait_ms"][rows]))
    e.impact = {
        "ops_s_baseline": base_ops,
        "ops_s_min": worst_ops,
        "ops_ratio": ops_ratio,
        "write_latency_ratio": write_ratio,
        "write_latency_kind": None,
        "write_p99_ms_peak": p99,
        "write_latency_ms_peak": _nanmax(cols["write_lat_ms"][rows]),
        "read_latency_ratio": read_ratio,
        "write_mb_s_peak": _nanmax(cols["disk_wmb_s"][rows]),
        "w_s_peak": _nanmax(cols["disk_w_s"][rows]),
        "util_pct_peak": _nanmax(cols["disk_util_pct"][rows]),
        "await_ms_peak": _nanmax(cols["disk_w_await_ms"][rows]),
        "aqu_sz_peak": _nanmax(cols["disk_aqu_sz"][rows]),
        "app_evicted_pages": float(np.nansum(cols["app_evict"][rows])),
        "app_wait_ms": app_wait,
        "dirty_pct_peak": _nanmax(cols["dirty_pct"][rows]),
        "write_tickets_available_min": _nanmin(cols["wtickets_avail"][rows]),
        "queued_writers_max": _nanmax(cols["queue_writers"][rows]),
    }
    e.impact["write_latency_kind"] = lat_kind  # type: ignore[assignment]
    # the load must come back after it: operations that stop with a checkpoint and stay stopped
    # are a client that went away, not a stall
    after_lo = int(np.searchsorted(t, end + IMPACT_GRACE_S, side="right"))
    after_hi = int(np.searchsorted(t, end + IMPACT_GRACE_S + RECOVERY_WINDOW_S, side="right"))
    after = _nanmedian(cols["ops_s"][after_lo:after_hi])
    recovered = after is None or (base_ops is not None and after >= RECOVERY_RATIO * base_ops)
    e.impact["ops_s_after"] = after
    no_writes = worst_ops is not None and worst_ops == 0
    slow = (write_ratio is not None and write_ratio >= STALL_LATENCY_RATIO) or no_writes
    if ops_ratio is not None and ops_ratio <= STALL_OPS_RATIO and slow:
        if recovered:
            e.stall = True
            e.reasons.append("throughput and latency")
        else:
            e.reasons.append("load stopped with it and did not come back")
    if app_wait >= STALL_APP_WAIT_MS:
        e.stall = True
        e.reasons.append("application threads waited for cache")


def _other_stalls(
    t: np.ndarray, cols: dict[str, np.ndarray], episodes_mask: np.ndarray, whole: Baseline, settings: EvictionSettings
) -> list[dict[str, Any]]:
    """Runs of samples away from every checkpoint that stall by the episodes' own yardstick,
    against the whole window's baseline: writes at most STALL_OPS_RATIO of it with latency up
    STALL_LATENCY_RATIO or nothing completing, and the load back within RECOVERY_WINDOW_S."""
    base_ops = whole.ops_s
    if base_ops is None or base_ops < MIN_BASELINE_OPS or t.size < 3:
        return []
    ops = cols["ops_s"]
    use_p99 = whole.write_p99_ms is not None and np.isfinite(cols["write_p99_ms"]).any()
    lat, base_lat = (
        (cols["write_p99_ms"], whole.write_p99_ms) if use_p99 else (cols["write_lat_ms"], whole.write_lat_ms)
    )
    with np.errstate(invalid="ignore"):
        low = ops <= STALL_OPS_RATIO * base_ops
        slow = (ops == 0) | (lat >= STALL_LATENCY_RATIO * base_lat if base_lat else np.zeros(t.size, dtype=bool))
    flagged = low & slow & ~episodes_mask
    flagged[0] = False  # the first sample has no interval
    edges = np.flatnonzero(np.diff(np.concatenate(([0], flagged.astype(np.int8), [0]))))
    out: list[dict[str, Any]] = []
    for lo, hi in zip(edges[::2], edges[1::2], strict=True):  # rows lo..hi-1
        after = _nanmedian(ops[hi : int(np.searchsorted(t, t[hi - 1] + RECOVERY_WINDOW_S, side="right"))])
        if after is not None and after < RECOVERY_RATIO * base_ops:
            continue  # the load went away: not a stall
        rows = slice(lo, hi)
        # the sample before too: at 1 Hz the eviction that froze writes began in the interval before
        updates_peak = _nanmax(cols["updates_pct"][max(lo - 2, 0) : hi])
        dirty_peak = _nanmax(cols["dirty_pct"][rows])
        app_evicted = float(np.nansum(cols["app_evict"][rows]))
        app_wait = float(np.nansum(cols["app_wait_ms"][rows]))
        queued = _nanmax(cols["queue_writers"][rows])
        seen = []  # what the server's own counters show during it (evidence, not proof of cause)
        at_updates = updates_peak is not None and updates_peak >= UPDATES_NEAR_TARGET * settings.updates_target
        if at_updates:
            seen.append(f"updates in cache at the eviction updates target ({settings.updates_target:g} %)")
        if dirty_peak is not None and dirty_peak >= settings.dirty_trigger:
            seen.append(f"dirty cache at the dirty trigger ({settings.dirty_trigger:g} %)")
        if app_evicted > 0 or app_wait > 0:
            seen.append("application threads evicting or waiting for cache")
        if queued:
            seen.append("writers queued for tickets")
        out.append(
            {
                "start": float(t[lo - 1]),
                "end": float(t[hi - 1]),
                "duration_s": float(t[hi - 1] - t[lo - 1]),
                "ops_ratio": _ratio(_nanmin(ops[rows]), base_ops),
                "write_latency_ratio": _ratio(_nanmax(lat[rows]), base_lat),
                "write_latency_kind": "p99" if use_p99 else "mean",
                "app_evicted_pages": app_evicted,
                "app_wait_ms": app_wait,
                "dirty_pct_peak": dirty_peak,
                "updates_pct_peak": updates_peak,
                "updates_at_target": at_updates,
                "queued_writers_max": queued,
                "seen": seen,
            }
        )
    return out


def hurts(e: Episode) -> bool:
    """Short of a stall, did this episode cost throughput? (A latency spike alone is reported,
    not judged: p99 rises in most checkpoints of a healthy server too.)"""
    ops = e.impact.get("ops_ratio")
    return e.stall or (ops is not None and ops <= HURT_OPS_RATIO)


def _verdict(
    episodes: list[Episode], eviction: dict[str, Any], settings: EvictionSettings, others: list[dict[str, Any]]
) -> tuple[str, list[str]]:
    """The severity and the findings behind it: the episodes' cost, eviction pressure, then stalls
    while no checkpoint ran (at most a warning: they are not the checkpoints')."""
    findings: list[str] = []
    n = len(episodes)
    stalls = sum(e.stall for e in episodes)
    hurt = sum(hurts(e) for e in episodes)
    if n and stalls and (stalls >= max(CRITICAL_MIN_STALLS, CRITICAL_STALL_SHARE * n) or (n == 1 and stalls == 1)):
        severity = "critical"
    elif stalls or (n and hurt >= WARN_HURT_SHARE * n and hurt >= 2):
        severity = "warn"
    else:
        severity = "ok"
    if n:
        findings.append(f"{stalls} of {n} checkpoints stalled the server; {hurt} cost throughput")
    saturated = sum(1 for e in episodes if (e.impact.get("util_pct_peak") or 0) >= UTIL_SATURATED_PCT)
    if saturated:
        findings.append(f"the data disk was {UTIL_SATURATED_PCT:.0f} %+ busy in {saturated} of {n} checkpoints")
    if eviction["seconds_over_dirty_trigger"]:
        findings.append(
            f"dirty cache at or over the dirty trigger ({settings.dirty_trigger:g} %) for "
            f"{eviction['seconds_over_dirty_trigger']:.0f} s: application threads are made to evict"
        )
    if eviction["app_evicted_pages"]:
        findings.append(f"application threads evicted {eviction['app_evicted_pages']:,.0f} pages")
    if severity == "ok" and (eviction["seconds_over_dirty_trigger"] or eviction["app_evicted_pages"]):
        severity = "warn"
    if others:
        at_updates = sum(o["updates_at_target"] for o in others)
        findings.append(
            f"writes stalled {len(others)} time{'s' if len(others) != 1 else ''} while no checkpoint ran"
            + (f"; {at_updates} with the updates in cache at their eviction target" if at_updates else "")
        )
        if severity == "ok":
            severity = "warn"
    return severity, findings


def _eviction(d: pd.DataFrame, settings: EvictionSettings, version: str | None) -> dict[str, Any]:
    from ckptdiag import catalogue

    dirty = d["dirty_pct"].to_numpy()
    used = d["used_pct"].to_numpy()
    dt = np.nan_to_num(d["dt"].to_numpy(), nan=0.0)
    states = d["eviction_state"].to_numpy()
    parsed = catalogue.parse_version(version) if version else None
    flags: dict[str, int] = {}
    for value, count in zip(*np.unique(states[np.isfinite(states)].astype(np.int64), return_counts=True), strict=True):
        for flag in catalogue.eviction_state_flags(int(value), parsed):
            flags[flag] = flags.get(flag, 0) + int(count)
    return {
        "settings": {
            "eviction_target": settings.target,
            "eviction_trigger": settings.trigger,
            "eviction_dirty_target": settings.dirty_target,
            "eviction_dirty_trigger": settings.dirty_trigger,
            "eviction_updates_target": settings.updates_target,
            "eviction_updates_trigger": settings.updates_trigger,
            "threads_min": settings.threads_min,
            "threads_max": settings.threads_max,
            "source": settings.source,
        },
        "dirty_pct_p50": _nanmedian(dirty),
        "dirty_pct_max": _nanmax(dirty),
        "used_pct_max": _nanmax(used),
        "seconds_over_dirty_target": float(np.sum(dt[np.nan_to_num(dirty) >= settings.dirty_target])),
        "seconds_over_dirty_trigger": float(np.sum(dt[np.nan_to_num(dirty) >= settings.dirty_trigger])),
        "seconds_over_eviction_trigger": float(np.sum(dt[np.nan_to_num(used) >= settings.trigger])),
        "seconds_over_updates_trigger": float(
            np.sum(dt[np.nan_to_num(d["updates_pct"].to_numpy()) >= settings.updates_trigger])
        ),
        "app_evicted_pages": float(np.nansum(d["app_evict"].to_numpy())),
        "app_wait_s": float(np.nansum(d["app_wait_ms"].to_numpy())) / 1000,
        "state_samples": flags,
    }


def _evidence(d: pd.DataFrame, episodes: list[Episode], gaps: int, restarts: int, period_s: float | None) -> list[str]:
    notes = []
    if gaps:
        notes.append(f"{gaps} gaps in the samples (no rate or checkpoint is read across one)")
    if restarts:
        notes.append(f"{restarts} server restarts in the window")
    missing = int(np.nansum(d["wt_missing"].to_numpy()))
    if missing:
        notes.append(f"{missing} serverStatus replies without the wiredTiger section (checkpoint contention)")
    if episodes and all(e.evidence == "disk-burst" for e in episodes):
        notes.append("no checkpoint statistics: episodes are disk write bursts")
    if period_s and period_s > 1.5:
        notes.append(
            f"samples every {period_s:.0f} s: checkpoints shorter than that are placed from the server's timings"
        )
    rtt = d["rtt_ms"].to_numpy()
    slow = np.nan_to_num(rtt, nan=0.0) >= SLOW_REPLY_MS
    if slow.any():
        during = sum(
            int(slow[max(e.rows[0] - 1, 0) : e.rows[1] + 1].any()) for e in episodes if e.evidence != "disk-burst"
        )
        notes.append(
            f"{int(slow.sum())} serverStatus replies took {SLOW_REPLY_MS / 1000:g} s or more "
            f"(slowest {np.nanmax(rtt) / 1000:.1f} s); {during} checkpoints had one"
        )
    skipped = float(np.nansum(d["skipped"].to_numpy()))
    if skipped:
        notes.append(f"{skipped:.0f} sampling ticks skipped while a reply was late")
    if d["ops_s"].isna().all():
        notes.append("no opcounters: throughput impact unknown")
    return notes


def _fmt_mb(value: float | None) -> str:
    if value is None:
        return "?"
    mb = value / 2**20
    if mb >= 1024:
        return f"{mb / 1024:.1f} GB"
    return f"{mb:.0f} MB" if mb >= 1 else f"{value / 2**10:.0f} KB"


def _fmt_s(seconds: float) -> str:
    return f"{seconds:.1f} s" if seconds >= 0.1 else f"{seconds * 1000:.0f} ms"


def _figures(episodes: list[Episode], name: str) -> list[float]:
    return [float(v) for e in episodes if isinstance(v := e.impact.get(name), int | float)]


def summary_sentence(dx: Diagnosis) -> str:
    """One sentence for a ticket: how often, how long, how much, what it cost."""
    done = [e for e in dx.episodes if e.end is not None]
    if not done:
        return "no checkpoint finished in the window" + (
            "" if dx.severity == "ok" else f"; {dx.findings[-1]}" if dx.findings else ""
        )
    # a server judged ok is described by its usual checkpoint, one that hurts by those that hurt
    focus = done if dx.severity == "ok" else [e for e in done if e.stall] or [e for e in done if hurts(e)] or done
    durations = [float(e.duration_s) for e in focus if e.duration_s is not None]
    written = [float(e.bytes_written) for e in focus if e.bytes_written is not None]
    every = f"every {dx.checkpoint_period_s:.0f} s " if dx.checkpoint_period_s else ""
    what = "disk write burst" if focus[0].evidence == "disk-burst" else "checkpoint"
    parts = [
        f"{every}a {_fmt_s(float(np.median(durations)))} {what}" if durations else f"{every}a {what}",
    ]
    if written:
        parts[0] += f" writes {_fmt_mb(float(np.median(written)))}"
    ops = _figures(focus, "ops_ratio")
    lats = _figures(focus, "write_latency_ratio")
    if dx.severity == "ok" or not any(hurts(e) for e in focus):
        if not ops:
            parts.append("no stall")
        else:
            worst = f"; {100 * min(ops):.0f} % in the worst" if min(ops) <= HURT_OPS_RATIO else ""
            parts.append(f"throughput holds ({100 * float(np.median(ops)):.0f} % of usual{worst})")
        if lats and float(np.median(lats)) >= HURT_LATENCY_RATIO:
            kind = focus[0].impact.get("write_latency_kind") or "mean"
            parts.append(f"{kind} write latency peaks {float(np.median(lats)):.1f}x")
    else:
        cost = []
        if ops:
            cost.append(f"operations drop {100 * (1 - float(np.median(ops))):.0f} %")
        if lats and float(np.median(lats)) >= HURT_LATENCY_RATIO:
            kind = focus[0].impact.get("write_latency_kind") or "mean"
            cost.append(f"{'p99' if kind == 'p99' else 'mean'} write latency rises {float(np.median(lats)):.1f}x")
        if cost:
            parts.append(" and ".join(cost))
        stalls = dx.stalls
        if stalls:
            parts.append(f"{stalls} of {len(dx.episodes)} stalled")
    util = _figures(focus, "util_pct_peak")
    if dx.disk and util:
        parts.append(f"disk {dx.disk} at {float(np.median(util)):.0f} % util")
    return "; ".join(parts)
