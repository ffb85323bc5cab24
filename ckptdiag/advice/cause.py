"""The cause the evidence shows, named before anything is prescribed.

Each diagnosis whose checkpoints hurt is classified into the bottlenecks its figures show:
WiredTiger throttled by its own configuration (``io_capacity``); the data disk saturated during
checkpoints; writes waiting for the journal behind the checkpoint's sync (only where the
journal's syncs show that writes wait for it); another process writing to the data disk; a
checkpoint stuck for intervals; history pinned for a reader; the checkpoint's own phases
(handles, scrub, prepare); eviction unable to keep up while the disk is not saturated;
checkpoints as big as a raised dirty target lets them be; a cache larger than the host can spare.

Each carries the share of the stall its own counters explain, and they are ranked by it (those
no counter measures after them, most specific first); the host's busy CPUs lead where named.
The shares overlap rather than add up: a saturated disk explains every stall it is saturated in,
and the history the checkpoints write explains part of what saturated it. The summary and the
advice lead with the first, and the rules follow them (a rule that would feed a bottleneck the
evidence shows is not given).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from ckptdiag.advice.cause_gauges import handles_counted, history, other_writer, stuck
from ckptdiag.advice.kinds import (
    CACHE_OVERSIZED,
    CPU_BUSY,
    DIRTY_RAISED,
    DISK_SATURATED,
    EVICTION_BEHIND,
    HANDLES,
    IO_THROTTLED,
    JOURNAL_BEHIND,
    PREPARE,
    SCRUB,
    Cause,
    ranked,
)
from ckptdiag.advice.model import (
    KERNEL_EXPIRE_S,
    cuts_enough,
    flush_at_target,
    held_bytes,
    median,
    prepare_bound,
    typical_share,
)
from ckptdiag.advice.text import mb
from ckptdiag.analysis.episode import Episode, Phases
from ckptdiag.analysis.results import Diagnosis
from ckptdiag.analysis.thresholds import HOST_BUSY_PCT
from ckptdiag.analysis.verdict import hurting_checkpoints
from ckptdiag.model.engine_config import DEFAULT_COMMIT_MS, DEFAULT_DIRTY_TARGET, default_cache_bytes, percent_of_cache

SATURATED_UTIL_PCT = 90.0  # %util a disk shows when it takes no more
STOPPED_OPS_RATIO = 0.1  # writes stop: at most 10 % of the usual in the typical checkpoint
CACHE_OVER_DEFAULT = 1.05
# mongod's journal flusher syncs once every commit interval; writes that wait for the journal
# (j:true, w:majority) force syncs of their own, so a server whose writes wait syncs far more often
JOURNALED_SYNCS_FACTOR = 3.0


def _hurting(dx: Diagnosis) -> list[Episode]:
    return list(dx.episodes.take(hurting_checkpoints(dx.episodes)))


def _throttled(dx: Diagnosis, hurting: list[Episode]) -> Cause | None:
    cap = dx.settings.io_capacity
    waited = sum(e.impact.throttled_ms or 0.0 for e in hurting) / 1000
    if not (cap.value and cap.value > 0) and waited <= 0:
        return None
    evidence = []
    if cap.value:
        evidence.append(
            f"io_capacity=(total={mb(cap.value)}) a second ({cap.source}): WiredTiger holds its writes to it"
        )
    if waited > 0:
        evidence.append(f"checkpoints waited {waited:.1f} s for it in the {len(hurting)} that hurt")
    rates = [e.impact.write_mb_s_peak for e in hurting if e.impact.write_mb_s_peak is not None]
    if rates and dx.disk_peak_mb_s:
        evidence.append(
            f"checkpoints wrote at most {max(rates):.0f} MB/s; the disk has shown {dx.disk_peak_mb_s:.0f} MB/s "
            "in this window"
        )
    share = typical_share(hurting, lambda e: None if e.impact.throttled_ms is None else e.impact.throttled_ms / 1000)
    return Cause(
        IO_THROTTLED,
        "WiredTiger throttles its own writes (io_capacity)",
        tuple(evidence),
        share,
        "of the typical checkpoint's time that hurt: waiting for the throttle",
    )


def _disk(dx: Diagnosis, hurting: list[Episode]) -> Cause | None:
    saturated = [e for e in hurting if (e.impact.util_pct_peak or 0) >= SATURATED_UTIL_PCT]
    if not dx.disk or not saturated or len(saturated) * 2 < len(hurting):
        return None
    awaits = [e.impact.await_ms_peak for e in saturated if e.impact.await_ms_peak is not None]
    evidence = [
        f"{dx.disk} {SATURATED_UTIL_PCT:.0f} %+ busy in {len(saturated)} of {len(hurting)} checkpoints that hurt"
    ]
    if dx.disk_peak_mb_s:
        evidence.append(f"it writes at most {dx.disk_peak_mb_s:.0f} MB/s (its highest second in this window)")
    if awaits:
        evidence.append(f"write await up to {max(awaits):,.0f} ms during them")
    held = _held_by_kernel(dx, saturated)
    if held:
        evidence.append(held)
    return Cause(
        DISK_SATURATED,
        f"the data disk ({dx.disk}) is saturated during checkpoints",
        tuple(evidence),
        len(saturated) / len(hurting),
        "of the checkpoints that hurt: the disk saturated in them",
    )


HELD_SHARE = 0.25  # eviction's held writes worth naming beside a checkpoint's own bytes


def _held_by_kernel(dx: Diagnosis, saturated: list[Episode]) -> str | None:
    """What a checkpoint's sync flushes besides its own bytes: eviction's writes of the kernel's
    last 30 s (:func:`~ckptdiag.advice.model.held_bytes`), where they are a quarter of them or more."""
    own = median([float(e.bytes_written) for e in saturated if e.bytes_written])
    other, period = dx.other_writes_b_s, dx.checkpoint_period_s or dx.settings.interval.value
    if not own or not other or not period:
        return None
    held = held_bytes(other, period)
    if held < HELD_SHARE * own:
        return None
    return (
        f"each checkpoint's sync also sends what eviction wrote in the {KERNEL_EXPIRE_S:.0f} s before it, "
        f"which Linux can hold that long (vm.dirty_expire_centisecs): ~{mb(held)} at the {other / 2**20:.1f} MB/s "
        f"eviction writes here, beside the checkpoint's own {mb(own)}"
    )


def journal_evidence(dx: Diagnosis) -> str | None:
    """The evidence that writes wait for the journal: None where the journal's syncs say they do
    not (no more than mongod's flusher makes), a caveat where the syncs were not recorded."""
    syncs, commit_ms = dx.journal_syncs_s, dx.settings.commit_ms.value or DEFAULT_COMMIT_MS
    flusher = 1000 / commit_ms
    if syncs is None:
        return "journal syncs not recorded: whether writes wait for the journal is not known"
    if syncs < JOURNALED_SYNCS_FACTOR * flusher:
        return None
    return (
        f"the journal syncs {syncs:.0f} times a second, where mongod's flusher alone syncs {flusher:.0f} "
        "(every commit interval): writes wait for it (j:true, or w:majority)"
    )


def slowed_while_writing(hurting: Sequence[Episode]) -> list[Episode]:
    """The checkpoints in which write latency rose 2x or more while they wrote: not those that
    spent half their time or more preparing, which held the schema lock, not the disk (what
    waited for them waited for the lock)."""
    return [e for e in hurting if (e.impact.write_latency_ratio or 0) >= 2 and not prepare_bound(e)]


def _journal(dx: Diagnosis, hurting: list[Episode]) -> Cause | None:
    kept = median([e.impact.ops_ratio for e in hurting if e.impact.ops_ratio is not None])
    slow = slowed_while_writing(hurting)
    evicting = dx.eviction.app_evicted_pages > 0 or dx.eviction.app_wait_s > 0
    if kept is None or kept > STOPPED_OPS_RATIO or not slow or evicting:
        return None
    journaled = journal_evidence(dx)
    if journaled is None:  # unjournaled writes do not wait for the journal's sync
        return None
    return Cause(
        JOURNAL_BEHIND,
        "writes wait for the journal behind the checkpoint's sync",
        (
            f"writes stop while a checkpoint runs ({100 * kept:.0f} % of usual in the typical one) and their "
            f"latency rises in {len(slow)} of {len(hurting)}",
            journaled,
            "no application-thread eviction and no cache wait: the writes wait for I/O, not for the cache",
        ),
        len(slow) / len(hurting),
        "of the checkpoints that hurt: writes slowed in them, waiting for the journal",
    )


def _dirty_raised(dx: Diagnosis, hurting: list[Episode], held: bool) -> Cause | None:
    """A dirty target above mongod's default: each checkpoint writes what it let build up, and
    the default would cut it (``held``: with the kernel's hold of eviction's writes, see
    :func:`~ckptdiag.advice.model.flush_at_target`)."""
    target, cache = dx.settings.eviction.dirty_target, dx.settings.cache_bytes.value
    pct = percent_of_cache(f"{target.value:g}", cache) if target.value is not None else None
    written = median([float(e.bytes_written) for e in hurting if e.bytes_written])
    if target.inferred or pct is None or pct <= DEFAULT_DIRTY_TARGET or not cache or written is None:
        return None
    at_default = cache * DEFAULT_DIRTY_TARGET / 100
    if written <= at_default:  # the raised target did not make the checkpoints bigger
        return None
    flush = flush_at_target(dx, DEFAULT_DIRTY_TARGET, held)
    if flush is None or not cuts_enough(flush):
        return None  # at the default, eviction's writes would still go with the checkpoint's sync
    return Cause(
        DIRTY_RAISED,
        "checkpoints write what a raised dirty target lets build up",
        (
            f"eviction_dirty_target {pct:g} % ({target.source}); mongod's default is {DEFAULT_DIRTY_TARGET:g} %",
            f"the typical checkpoint that hurts wrote {mb(written)}; {DEFAULT_DIRTY_TARGET:g} % of this cache is "
            f"{mb(at_default)}",
        ),
        1 - flush[1] / flush[0],
        "of what the typical checkpoint that hurts sends to the disk: what the raised target adds",
    )


def _eviction(dx: Diagnosis, hurting: list[Episode], disk_saturated: bool) -> Cause | None:
    ev = dx.eviction
    # the evidence that eviction is behind is application threads made to do it: dirty data over
    # the trigger while they evicted nothing and waited for nothing is not that cause
    if disk_saturated or not (ev.app_evicted_pages > 0 or ev.app_wait_s > 0):
        return None
    evidence = [f"application threads evicted {ev.app_evicted_pages:,.0f} pages and waited {ev.app_wait_s:.1f} s"]
    if ev.dirty_pct_p90 is not None:
        settings = dx.settings.eviction
        evidence.append(
            f"dirty data at {ev.dirty_pct_p90:.0f} % of the cache or less 90 % of the time "
            f"(target {settings.dirty_target.number:g} %, trigger {settings.dirty_trigger.number:g} %)"
        )
    utils = [e.impact.util_pct_peak for e in hurting if e.impact.util_pct_peak is not None]
    if utils:
        evidence.append(
            f"the disk was at most {max(utils):.0f} % busy in the checkpoints that hurt: not the bottleneck"
        )
    waited = [e for e in hurting if (e.impact.app_wait_ms or 0) > 0 or (e.impact.app_evicted_pages or 0) > 0]
    return Cause(
        EVICTION_BEHIND,
        "eviction cannot keep up with the writes (the disk is not saturated)",
        tuple(evidence),
        len(waited) / len(hurting) if hurting else None,
        "of the checkpoints that hurt: application threads evicted or waited for the cache in them",
    )


def _cache(dx: Diagnosis) -> Cause | None:
    cache, ram = dx.settings.cache_bytes.value, dx.facts.ram_bytes
    default = default_cache_bytes(ram)
    if not cache or not ram or not default or cache <= default * CACHE_OVER_DEFAULT:
        return None
    return Cause(
        CACHE_OVERSIZED,
        "the cache is larger than this host can spare",
        (
            f"cache {mb(cache)} of {mb(ram)} RAM ({100 * cache / ram:.0f} %); mongod's default here is {mb(default)}",
            f"{mb(ram - cache)} left to the page cache, connections and the file system's dirty data",
        ),
    )


def _cpu(dx: Diagnosis, disk: Cause | None) -> Cause | None:
    """The host's CPUs busy with work of all processes: the server waited for a CPU, and what a
    checkpoint setting would change cannot be told from what the CPUs took.

    Not where the figures say otherwise: the data disk saturated in the checkpoints that hurt, and
    at the same load the server had no stall while no checkpoint ran. Then the checkpoints' writes
    explain the stalls and the busy CPUs stay a note beside them (the stall lab beside two CPU hogs
    kept its 600 writes/s and its 16 ms p99 between checkpoints and stalled in each one, as on an
    idle host)."""
    busy = dx.host_cpu_pct_p50
    if busy is None or busy < HOST_BUSY_PCT:
        return None
    if disk is not None and not dx.other_stalls:
        return None
    evidence = [f"the host's CPUs were {busy:.0f} % busy at the median over the window (all processes)"]
    others = dx.other_cpu_pct_p50
    if others is not None:
        evidence.append(
            f"other processes than mongod took ~{others:.0f} % of the host's CPU time, mongod ~{busy - others:.0f} % "
            "(mongod's own CPU time beside the host's)"
        )
    return Cause(
        CPU_BUSY,
        {
            None: "the host's CPUs were busy: the server waited for a CPU, not only for the disk",
            True: "other processes kept the host's CPUs busy: the server waited for a CPU, not only for the disk",
            False: "the host's CPUs were busy with mongod's own work: it waited for a CPU, not only for the disk",
        }[others_lead(dx)],
        tuple(evidence),
    )


def others_lead(dx: Diagnosis) -> bool | None:
    """Whether other processes than mongod took half or more of the busy CPUs' time (None: mongod's
    own CPU time not recorded: before 4.2, or not Linux)."""
    busy, others = dx.host_cpu_pct_p50, dx.other_cpu_pct_p50
    if busy is None or others is None:
        return None
    return others >= busy / 2


PHASE_SHARE = 0.25  # a phase that takes this share of the checkpoints that hurt (and PHASE_MIN_S) is a cause
PHASE_MIN_S = 0.5


def _phases(hurting: list[Episode]) -> list[Cause]:
    """The phases that take a large share of the checkpoints that hurt, where the server times them."""
    timed = [e for e in hurting if e.phases is not None and e.duration_s]
    if not timed:
        return []
    duration = median([float(e.duration_s or 0) for e in timed]) or 0.0

    def typical(get: Callable[[Phases], float | None]) -> float | None:
        values = [v for e in timed if e.phases is not None and (v := get(e.phases)) is not None]
        return median(values) if values else None

    out = []
    handles, walked = typical(lambda p: p.handles_s), typical(lambda p: p.handles)
    if _large(handles, duration):
        out.append(
            Cause(
                HANDLES,
                "checkpoints spend their time gathering data handles (every collection and index)",
                (
                    f"the typical checkpoint that hurts spent {handles:.1f} s of {duration:.1f} s gathering "
                    + (f"{walked:,.0f} handles" if walked else "its handles"),
                    "a checkpoint walks every table and index under the schema lock; servers with tens of "
                    "thousands of them stall on it (WT-5479)",
                ),
                _of(handles, duration),
                PHASE_SHARE_OF + "gathering handles",
            )
        )
    scrub = typical(lambda p: p.scrub_s)
    if _large(scrub, duration):
        out.append(
            Cause(
                SCRUB,
                "checkpoints wait for eviction to bring dirty data down before they begin (scrub)",
                (f"the typical checkpoint that hurts spent {scrub:.1f} s of {duration:.1f} s in its scrub",),
                _of(scrub, duration),
                PHASE_SHARE_OF + "its scrub",
            )
        )
    prepare = typical(lambda p: None if p.prepare_s is None else p.prepare_s - (p.handles_s or 0.0))
    if _large(prepare, duration):
        out.append(
            Cause(
                PREPARE,
                "checkpoints wait in their prepare (the schema lock: collections and indexes created or dropped)",
                (
                    f"the typical checkpoint that hurts spent {prepare:.1f} s of {duration:.1f} s preparing, "
                    "beyond gathering its handles",
                ),
                _of(prepare, duration),
                PHASE_SHARE_OF + "preparing, beyond the handles",
            )
        )
    return out


PHASE_SHARE_OF = "of the typical checkpoint's time that hurt: "


def _of(seconds: float | None, duration: float) -> float | None:
    return min(1.0, seconds / duration) if seconds is not None and duration > 0 else None


def _large(seconds: float | None, duration: float) -> bool:
    return seconds is not None and seconds >= PHASE_MIN_S and seconds >= PHASE_SHARE * duration


def classify(dx: Diagnosis) -> tuple[Cause, ...]:
    """The bottlenecks this diagnosis shows, by how much of the stall each explains (see
    :func:`~ckptdiag.advice.kinds.ranked`; none for a server judged ok)."""
    if dx.severity == "ok":
        return ()
    hurting = _hurting(dx)
    disk = _disk(dx, hurting)
    phased = _phases(hurting)
    # the host's busy CPUs lead where named: the other causes' figures are then the host's load as
    # much as the server's, and no share of the stall can be told apart from it
    cpu = _cpu(dx, disk)
    found: list[Cause | None] = [
        _throttled(dx, hurting),
        disk,
        _journal(dx, hurting),
        other_writer(dx, disk),
        stuck(dx),
        history(dx, hurting),
        *phased,
        handles_counted(dx, phased),
        _eviction(dx, hurting, disk is not None),
        _dirty_raised(dx, hurting, disk is not None),
        _cache(dx),
    ]
    return (cpu, *ranked(found)) if cpu is not None else ranked(found)
