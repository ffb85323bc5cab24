"""The report and its JSON document: the contract scripts and cron jobs read (docs/report-json.md).

The terminal, Markdown and HTML reports show the same facts from the same :class:`Report`.
"""

from __future__ import annotations

import datetime as dt
import json
import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from ckptdiag import __version__
from ckptdiag.advice.recommendation import Advice
from ckptdiag.analysis.episode import Episode
from ckptdiag.analysis.phases import breakdown
from ckptdiag.analysis.results import Diagnosis, History, OtherStall
from ckptdiag.analysis.verdict import listed_count, worst_episodes
from ckptdiag.model.engine_config import EngineSettings
from ckptdiag.recording import utc_iso

if TYPE_CHECKING:  # a report without a log never loads the log's modules
    from ckptdiag.report.logsection import LogSection

SCHEMA_VERSION = 3
OTHER_STALLS_LISTED = 100  # a window full of them lists this many (and counts them all)


@dataclass(frozen=True)
class ReportSource:
    """Where a diagnosis' samples came from, and the damage found reading them."""

    kind: str  # "recording" or "ftdc"
    path: str
    damaged: tuple[str, ...] = ()
    files: int | None = None  # FTDC files read

    def to_json(self) -> dict[str, Any]:
        """The JSON report's ``source`` object."""
        out: dict[str, Any] = {"kind": self.kind, "path": self.path, "damaged": list(self.damaged)}
        if self.files is not None:
            out["files"] = self.files
        return out


@dataclass(frozen=True)
class Report:
    """Everything a report shows: the diagnosis (with the server's facts and settings), where it
    came from, and the advice."""

    dx: Diagnosis
    source: ReportSource
    advice: Advice | None = None
    log: LogSection | None = None  # what mongod's log added, when one was given


def iso(ts: float | None) -> str | None:
    """Epoch seconds as ISO 8601 UTC with milliseconds."""
    return None if ts is None or not math.isfinite(ts) else utc_iso(float(ts))


def num(value: Any, digits: int = 3) -> Any:
    """A figure for JSON: rounded, NaN and infinities as null, numpy scalars as Python numbers."""
    if value is None:
        return None
    if isinstance(value, bool | str):
        return value
    if isinstance(value, int | np.integer):
        return int(value)
    value = float(value)
    return round(value, digits) if math.isfinite(value) else None


def _episode_json(e: Episode, disk: str | None) -> dict[str, Any]:
    m = e.impact
    return {
        "start": iso(e.start),
        "end": iso(e.end),
        "duration_s": num(e.duration_s),
        "exact_duration": e.exact_duration,
        "shared_interval": e.shared,
        "start_window": {"earliest": iso(e.start_earliest), "latest": iso(e.start_latest)},
        "bytes_written": num(e.bytes_written, 0),
        "evidence": e.evidence,
        "truncated": e.truncated,
        "stall": e.stall,
        "stall_reasons": list(e.reasons if e.stall else []),
        "reasons": list(e.reasons),  # why it is a stall, or why not: every episode says
        "ops_ratio": num(m.ops_ratio),
        "ops_s_min": num(m.ops_s_min, 1),
        "ops_s_baseline": num(m.ops_s_baseline, 1),
        "write_latency_ratio": num(m.write_latency_ratio),
        "write_latency_kind": m.write_latency_kind,
        "write_p99_ms_peak": num(m.write_p99_ms_peak),
        "write_latency_ms_peak": num(m.write_latency_ms_peak),
        "read_latency_ratio": num(m.read_latency_ratio),
        "disk": {
            "device": disk,
            "write_mb_s_peak": num(m.write_mb_s_peak, 2),
            "w_s_peak": num(m.w_s_peak, 1),
            "util_pct_peak": num(m.util_pct_peak, 1),
            "await_ms_peak": num(m.await_ms_peak, 2),
            "aqu_sz_peak": num(m.aqu_sz_peak, 2),
            "throttled_ms": num(m.throttled_ms, 1),
        },
        "eviction": {
            "app_evicted_pages": num(m.app_evicted_pages, 0),
            "app_wait_ms": num(m.app_wait_ms, 1),
            "dirty_pct_peak": num(m.dirty_pct_peak, 2),
        },
        "tickets": {
            "write_available_min": num(m.write_tickets_available_min, 0),
            "queued_writers_max": num(m.queued_writers_max, 0),
        },
        "replication": {"lag_growth_s": num(m.repl_lag_growth_s)},
        "phases": _phases_json(e),
    }


def _phases_json(e: Episode) -> dict[str, Any] | None:
    """Where its time went, as the server timed it; null where this version does not (or the
    sample after it belongs to a later checkpoint)."""
    p = e.phases
    if p is None:
        return None
    return {
        "scrub_s": num(p.scrub_s, 4),
        "prepare_s": num(p.prepare_s, 4),
        "handles_s": num(p.handles_s, 6),
        "handles": num(p.handles, 0),
        "trees_s": num(p.trees_s, 4),
        "history_store_s": num(p.history_store_s, 6),
        "sync_s": num(p.sync_s, 4),
        "untimed_s": num(max((e.duration_s or 0.0) - p.timed(), 0.0), 4),
        "text": breakdown(e),
    }


def _other_stall_json(o: OtherStall) -> dict[str, Any]:
    return {
        "start": iso(o.start),
        "end": iso(o.end),
        "duration_s": num(o.duration_s),
        "ops_ratio": num(o.ops_ratio),
        "write_latency_ratio": num(o.write_latency_ratio),
        "write_latency_kind": o.write_latency_kind,
        "app_evicted_pages": num(o.app_evicted_pages),
        "app_wait_ms": num(o.app_wait_ms),
        "dirty_pct_peak": num(o.dirty_pct_peak),
        "updates_pct_peak": num(o.updates_pct_peak),
        "updates_at_target": o.updates_at_target,
        "queued_writers_max": num(o.queued_writers_max),
        "seen": list(o.seen),
    }


def _settings_json(s: EngineSettings) -> dict[str, Any]:
    """The eviction settings in force, as the ``eviction.settings`` object (each with its source)."""
    ev = s.eviction
    values = {
        "eviction_target": ev.target,
        "eviction_trigger": ev.trigger,
        "eviction_dirty_target": ev.dirty_target,
        "eviction_dirty_trigger": ev.dirty_trigger,
        "eviction_updates_target": ev.updates_target,
        "eviction_updates_trigger": ev.updates_trigger,
        "threads_min": ev.threads_min,
        "threads_max": ev.threads_max,
    }
    out: dict[str, Any] = {name: num(setting.value) for name, setting in values.items()}
    out["source"] = ev.source
    out["sources"] = {name: setting.described for name, setting in values.items()}
    return out


def _stats(values: list[float]) -> dict[str, Any]:
    if not values:
        return {"p50": None, "max": None}
    return {"p50": num(float(np.median(values))), "max": num(max(values))}


JSON_TOP = 2000  # episodes the JSON lists by default: every one up to this, else the worst (a day at 1/min)


def _checkpoints_json(dx: Diagnosis, top: int | None) -> dict[str, Any]:
    listed = worst_episodes(dx.episodes, listed_count(top, JSON_TOP, len(dx.episodes)))
    return {
        "count": len(dx.episodes),
        # counted by the server's start counter inside intervals too long or crowded to place each one
        "unplaced": dx.unplaced_checkpoints,
        "stalls": dx.stalls,
        "period_s": num(dx.checkpoint_period_s, 1),
        "period_cv": num(dx.checkpoint_period_cv),
        "duration_s": _stats(dx.episodes.present("duration_s").tolist()),
        "bytes_written": _stats(dx.episodes.present("bytes_written").tolist()),
        "disk": dx.disk,
        "disk_peak_mb_s": num(dx.disk_peak_mb_s, 2),
        # what eviction writes to the data files besides the checkpoints: the kernel holds its last
        # 30 s for each checkpoint's sync
        "other_writes_mb_s": num(dx.other_writes_b_s / 2**20 if dx.other_writes_b_s is not None else None, 2),
        # a long window's 70,000 episodes are its history's aggregates and its worst, not a 60 MB list
        "listed": "all" if len(listed) == len(dx.episodes) else "worst",
        "episodes": [_episode_json(e, dx.disk) for e in listed],
    }


def _eviction_json(dx: Diagnosis) -> dict[str, Any]:
    ev = dx.eviction
    return {
        "settings": _settings_json(dx.settings),
        "dirty_pct_p50": num(ev.dirty_pct_p50),
        "dirty_pct_max": num(ev.dirty_pct_max),
        "used_pct_max": num(ev.used_pct_max),
        "dirty_pct_p90": num(ev.dirty_pct_p90),
        "seconds_over_dirty_target": num(ev.seconds_over_dirty_target),
        "seconds_over_dirty_trigger": num(ev.seconds_over_dirty_trigger),
        "seconds_over_eviction_trigger": num(ev.seconds_over_eviction_trigger),
        "seconds_over_updates_trigger": num(ev.seconds_over_updates_trigger),
        "app_evicted_pages": num(ev.app_evicted_pages),
        "app_wait_s": num(ev.app_wait_s),
        "state_samples": dict(ev.state_samples),
    }


def head() -> dict[str, Any]:
    """The keys every JSON document of ckptdiag's starts with: its schema, the tool, when."""
    return {
        "schema_version": SCHEMA_VERSION,
        "tool": {"name": "ckptdiag", "version": __version__},
        "generated": iso(dt.datetime.now(dt.timezone.utc).timestamp()),
    }


def to_document(r: Report, top: int | None = None) -> dict[str, Any]:
    """The versioned JSON report as a dict (times ISO 8601 UTC, no NaN), listing every episode
    up to ``JSON_TOP`` (else the worst; ``top``: that many, 0 all)."""
    dx, advice = r.dx, r.advice
    b = dx.baseline
    facts = dx.facts
    return {
        **head(),
        "source": r.source.to_json(),
        "server": {
            "version": facts.version,
            "host": facts.host,
            "cache_max_bytes": num(dx.settings.cache_bytes.value),
            "ram_bytes": num(facts.ram_bytes),
            "cores": facts.cores,
            "dbpath": facts.dbpath,
            "devices": list(facts.devices),
            "role": dx.role,
        },
        "window": {
            "start": iso(dx.start),
            "end": iso(dx.end),
            "samples": dx.samples,
            "period_s": num(dx.period_s),
            "sampling": [{"every_s": num(every, 6), "time_share": num(share, 4)} for every, share in dx.spacings],
            "gaps": dx.gaps,
            "restarts": dx.restarts,
            "samples_without_wiredtiger": dx.samples_without_wiredtiger,
        },
        "verdict": {
            "severity": dx.severity,
            "summary": dx.summary,
            "findings": list(dx.findings),
            "evidence": list(dx.evidence),
        },
        "baseline": {
            "samples": b.samples,
            "ops_s": num(b.ops_s, 1),
            "writes_s": num(b.writes_s, 1),
            "write_latency_ms": num(b.write_lat_ms),
            "write_p99_ms": num(b.write_p99_ms),
            "read_latency_ms": num(b.read_lat_ms),
            "disk_write_mb_s": num(b.disk_write_mb_s, 2),
            "disk_util_pct": num(b.disk_util_pct, 1),
            "estimated": b.estimated,
        },
        "throughput": {"ops_s_mean": num(dx.ops_s_mean, 1), "writes_s_mean": num(dx.writes_s_mean, 1)},
        "checkpoints": _checkpoints_json(dx, top),
        "history": history_json(dx.history),
        "eviction": _eviction_json(dx),
        "other_stalls": {
            "count": len(dx.other_stalls),
            "listed": [_other_stall_json(o) for o in dx.other_stalls[:OTHER_STALLS_LISTED]],
        },
        "log": clean(r.log.to_json()) if r.log else None,
        "advice": clean(advice.to_json()) if advice else None,
        "recommendations": [clean(x.to_json()) for x in advice.recommendations] if advice else [],
    }


def clean(value: Any) -> Any:
    """Figures rounded, NaN as null, all the way down."""
    if isinstance(value, dict):
        return {k: clean(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [clean(v) for v in value]
    if isinstance(value, float | np.floating):
        return num(value)
    return value


def render_json(doc: dict[str, Any]) -> str:
    """The JSON report text (no NaN: every figure is a number or null)."""
    try:
        import orjson
    except ImportError:  # pragma: no cover - orjson is a dependency
        return json.dumps(doc, indent=2, allow_nan=False, ensure_ascii=False) + "\n"
    return orjson.dumps(doc, option=orjson.OPT_INDENT_2 | orjson.OPT_APPEND_NEWLINE).decode()


def history_json(h: History | None) -> dict[str, Any] | None:
    """The JSON ``history``: the periods' rows and the trends (null for a window under 3 periods)."""
    if h is None:
        return None
    return {
        "period": h.period,
        "rows": [
            {
                "start": iso(r.start),
                "checkpoints": r.checkpoints,
                "stalls": r.stalls,
                "duration_p50_s": num(r.duration_p50_s),
                "duration_max_s": num(r.duration_max_s),
                "bytes_p50": num(r.bytes_p50, 0),
                "write_p99_ms_max": num(r.write_p99_ms_max, 1),
            }
            for r in h.rows
        ],
        "trends": [
            {
                "figure": t.figure,
                "first": num(t.first, 4),
                "last": num(t.last, 4),
                "per_day": num(t.per_day, 6),
                "days": num(t.days, 2),
                "significant": t.significant,
                "reaches_interval_days": num(t.reaches_interval_days, 1),
            }
            for t in h.trends
        ],
    }
