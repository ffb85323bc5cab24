"""Causes read from the engine's own gauges beyond the checkpoints' figures: history pinned for
a reader (or a history store that grows), very many data handles, a checkpoint stuck for
intervals, another process writing to the data disk."""

from __future__ import annotations

from ckptdiag.advice.kinds import HANDLES, HISTORY_PINNED, OTHER_WRITER, STUCK, Cause
from ckptdiag.advice.model import median, typical_share
from ckptdiag.advice.text import mb
from ckptdiag.analysis.episode import Episode
from ckptdiag.analysis.results import Diagnosis

# history kept by design: from 5.0, minSnapshotHistoryWindowInSeconds (300 s by default, SERVER-47672)
SNAPSHOT_WINDOW_SINCE, SNAPSHOT_WINDOW_S = (5, 0), 300.0
PINNED_EXCESS_S = 600.0  # history pinned this much longer than the server keeps by design
# the history store growing in the window by this much, or by this share of the cache where that is
# less (a 512 MB cache fills with a quarter of a GB of history), and by half its size or more
HS_GROWTH_BYTES, HS_GROWTH_CACHE = float(1 << 30), 0.25
# a transaction or snapshot open this long (transactionLifetimeLimitSeconds' default: a transaction
# older is aborted), with the history store growing this much meanwhile (and by half)
LONG_READER_S, HS_GROWTH_WITH_READER = 60.0, float(64 << 20)


def history(dx: Diagnosis, hurting: list[Episode]) -> Cause | None:
    """History pinned far back, a reader that stayed open while the history store grew, or a
    history store that grew by itself: checkpoints (and eviction) write it (WT-6681)."""
    p = dx.pinning
    if p is None:
        return None
    version = dx.settings.version
    kept = SNAPSHOT_WINDOW_S if version is not None and version >= SNAPSHOT_WINDOW_SINCE else 0.0
    pinned = p.pinned_s_max is not None and p.pinned_s_max >= kept + PINNED_EXCESS_S
    # transaction IDs pinned, in seconds of this server's writes (a write is a transaction)
    writes = dx.writes_s_mean
    held_s = p.pinned_ids_max / writes if p.pinned_ids_max and writes else None
    reader = held_s is not None and held_s >= LONG_READER_S
    first, last = p.hs_first_bytes, p.hs_last_bytes
    growth = last - first if first is not None and last is not None else 0.0
    cache = dx.settings.cache_bytes.value
    enough = min(HS_GROWTH_BYTES, HS_GROWTH_CACHE * cache) if cache else HS_GROWTH_BYTES
    grew = first is not None and growth >= max(enough, 0.5 * first)
    grew_some = first is not None and growth >= max(HS_GROWTH_WITH_READER, 0.5 * first)
    if not (pinned or grew or (reader and grew_some)):
        return None
    evidence = []
    if pinned and p.pinned_s_max is not None:
        by_design = (
            f"; from 5.0 the server keeps {kept:.0f} s by design (minSnapshotHistoryWindowInSeconds)" if kept else ""
        )
        evidence.append(
            f"history was pinned up to {_span(p.pinned_s_max)} back (median {_span(p.pinned_s_p50 or 0.0)})"
            f"{by_design}: every version written since is kept for the oldest reader"
        )
    if reader and held_s is not None and p.pinned_ids_max is not None and writes is not None:
        evidence.append(
            f"a transaction or snapshot stayed open about {_span(held_s)}: {p.pinned_ids_max:,.0f} transaction IDs "
            f"pinned at the ~{writes:,.0f} writes a second here"
        )
    if (grew or grew_some) and first is not None and last is not None:
        evidence.append(
            f"the history store grew from {mb(first)} to {mb(last)} (on disk and in the cache) in "
            f"{_span(p.hs_span_s)}: old versions moved there, which checkpoints write (WT-6681)"
        )
    evidence += _history_phase(hurting)
    return Cause(
        HISTORY_PINNED,
        "history is pinned: the server keeps old versions, and checkpoints write them",
        tuple(evidence),
        *_history_share(dx, hurting, growth),
    )


def _history_share(dx: Diagnosis, hurting: list[Episode], growth: float) -> tuple[float | None, str]:
    """How much of the stall the history explains: the larger of the checkpoints' time on the
    history store file (4.4+) and the history store's growth against mongod's own writes over the
    window (what eviction moved there, which the checkpoints' syncs then flush; its growth is the
    least it wrote)."""
    timed = typical_share(hurting, lambda e: None if e.phases is None else e.phases.history_store_s)
    p, writes = dx.pinning, dx.disk_writes_b_s
    grown = None
    if p is not None and p.hs_span_s > 0 and writes is not None and writes[1] > 0 and growth > 0:
        grown = min(1.0, growth / p.hs_span_s / writes[1])
    if grown is not None and (timed is None or grown > timed):
        return grown, "of mongod's own writes over the window (data files and journal): the history store's growth"
    if timed is not None:
        return timed, "of the typical checkpoint's time that hurt: on the history store file"
    return None, ""


def _history_phase(hurting: list[Episode]) -> list[str]:
    """What the checkpoints that hurt spent on the history store file, where the version times it."""
    timed = [e for e in hurting if e.phases is not None and e.phases.history_store_s is not None]
    typical = median([e.phases.history_store_s or 0.0 for e in timed if e.phases is not None]) if timed else None
    if typical is None or typical < 0.1:  # under a tenth of a second it explains nothing
        return []
    took = median([float(e.duration_s or 0.0) for e in timed]) or 0.0
    return [f"the typical checkpoint that hurts spent {typical:.1f} s of {took:.1f} s on the history store file"]


def stuck(dx: Diagnosis) -> Cause | None:
    """A checkpoint that ran several intervals: none other begins meanwhile, and the dirty data of
    all that time waits for the next."""
    ran = [o for o in dx.overdue if o.running]
    if not ran:
        return None
    worst = max(ran, key=lambda o: o.seconds)
    more = f" ({len(ran)} such)" if len(ran) > 1 else ""
    return Cause(
        STUCK,
        "a checkpoint ran far past its interval",
        (
            f"a checkpoint ran {_span(worst.seconds)}, {worst.seconds / worst.interval_s:.1f}x the "
            f"{worst.interval_s:g} s interval{more}: no other begins while it runs, so the dirty data of all "
            "that time waits for the next",
        ),
        1 - worst.interval_s / worst.seconds if worst.seconds > worst.interval_s else None,
        "of the longest checkpoint's time: past its interval",
    )


def _span(seconds: float) -> str:
    """``45 s``, ``2.5 min``, ``12 min``, ``3.5 h``, ``2.0 days``."""
    if seconds < 120:
        return f"{seconds:.0f} s"
    if seconds < 7200:
        return f"{seconds / 60:.1f} min" if seconds < 600 else f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h" if seconds < 172_800 else f"{seconds / 86_400:.1f} days"


HANDLES_MANY = 20_000  # data handles open: a server with this many is at risk of WT-5479's stalls


def handles_counted(dx: Diagnosis, phased: list[Cause]) -> Cause | None:
    """Very many data handles open where the server does not time the checkpoint's walk over
    them (before 4.2.12 and 4.4.3), or where it does and the walk is not what took the time: then
    the count alone is evidence, not the cause. Named only in the first case."""
    handles = dx.pinning.data_handles_max if dx.pinning is not None else None
    timed = bool((dx.episodes.flags("phases") & dx.episodes.known("phases.handles_s")).any())
    if handles is None or handles < HANDLES_MANY or timed or any(c.kind == HANDLES for c in phased):
        return None
    return Cause(
        HANDLES,
        "very many collections and indexes: each checkpoint walks every one",
        (
            f"{handles:,.0f} data handles open at most; this version does not time the checkpoint's walk "
            "over them (4.2.12+ and 4.4.3+ do)",
            "a checkpoint walks every table and index under the schema lock; servers with tens of "
            "thousands of them stall on it (WT-5479)",
        ),
    )


OTHER_WRITER_FACTOR = 2.0  # the data disk wrote this many times what mongod wrote
OTHER_WRITER_MIN_B_S = float(5 << 20)  # and this much more a second


def other_writer(dx: Diagnosis, disk: Cause | None) -> Cause | None:
    """The data disk writing far more than mongod's data files and journal together: another
    process (or another mongod) writes to it, and the checkpoints share the disk with it."""
    if dx.disk_writes_b_s is None:
        return None
    disk_b_s, own_b_s = dx.disk_writes_b_s
    if disk_b_s < OTHER_WRITER_FACTOR * own_b_s or disk_b_s - own_b_s < OTHER_WRITER_MIN_B_S:
        return None
    saturated = " and is saturated in the checkpoints that hurt" if disk is not None else ""
    return Cause(
        OTHER_WRITER,
        f"another process writes to the data disk ({dx.disk}){saturated}",
        (
            f"{dx.disk} wrote {mb(disk_b_s)}/s over the window, mongod's data files and journal "
            f"{mb(own_b_s)}/s: {mb(disk_b_s - own_b_s)}/s came from elsewhere",
        ),
        1 - own_b_s / disk_b_s,
        "of the data disk's writes: not mongod's",
    )
