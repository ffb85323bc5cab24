"""The one-sentence summary of a diagnosis, for a ticket."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ckptdiag.analysis.episode_table import Episodes, FloatField
from ckptdiag.analysis.thresholds import HURT_LATENCY_RATIO, HURT_OPS_RATIO
from ckptdiag.analysis.verdict import GONE, hurting
from ckptdiag.recording import utc_iso


def fmt_bytes(value: float | None) -> str:
    """Bytes as KB, MB or GB for a sentence.

    >>> fmt_bytes(3 * 2**20), fmt_bytes(1536 * 2**20), fmt_bytes(None)
    ('3 MB', '1.5 GB', '?')
    """
    if value is None:
        return "?"
    mb = value / 2**20
    if mb >= 1024:
        return f"{mb / 1024:.1f} GB"
    return f"{mb:.0f} MB" if mb >= 1 else f"{value / 2**10:.0f} KB"


def _fmt_s(seconds: float) -> str:
    return f"{seconds:.1f} s" if seconds >= 0.1 else f"{seconds * 1000:.0f} ms"


def figure(episodes: Episodes, name: FloatField, which: np.ndarray | None = None, finite: bool = True) -> list[float]:
    """A float field of the episodes ``which`` marks (None: every one), where it is known and,
    with ``finite``, a number (an impact figure of each episode that has one), read from the columns."""
    values = episodes.floats(name)
    kept = episodes.known(name) if which is None else which & episodes.known(name)
    out: list[float] = values[kept & np.isfinite(values) if finite else kept].tolist()
    return out


def summary_sentence(
    episodes: Episodes,
    severity: str,
    findings: Sequence[str],
    checkpoint_period_s: float | None,
    disk: str | None,
) -> str:
    """One sentence: how often, how long, how much, what it cost."""
    done = episodes.known("end")
    if not done.any():
        return "no checkpoint finished in the window" + (
            "" if severity == "ok" else f"; {findings[-1]}" if findings else ""
        )
    # the first clause is the usual checkpoint, of them all; the cost is of those that hurt (all
    # of them when judged ok): a few 8 s checkpoints among a hundred of 28 ms are named as such,
    # never "every 60 s an 8 s checkpoint"
    durations = figure(episodes, "duration_s", done, finite=False)
    written = figure(episodes, "bytes_written", done, finite=False)
    every = f"every {checkpoint_period_s:.0f} s " if checkpoint_period_s else ""
    what = "disk write burst" if episodes[int(np.argmax(done))].evidence == "disk-burst" else "checkpoint"
    first = f"{every}a {_fmt_s(float(np.median(durations)))} {what}" if durations else f"{every}a {what}"
    if written:
        first += f" writes {fmt_bytes(float(np.median(written)))}"
    stall = episodes.flags("impact.stall")
    focus = done
    if severity != "ok":
        focus = next((m for m in (done & stall, done & hurting(episodes)) if m.any()), done)
    parts = [first, *_cost(episodes, focus, severity, int(stall.sum()))]
    util = figure(episodes, "impact.util_pct_peak", focus)
    if disk and util:
        parts.append(f"disk {disk} at {float(np.median(util)):.0f} % util")
    worst = _worst(episodes, done, durations, written)
    if worst:
        parts.append(worst)
    return "; ".join(parts)


WORST_FACTOR = 2.0  # the longest checkpoint is named when it took or wrote this much more than the usual


def _worst(episodes: Episodes, done: np.ndarray, durations: list[float], written: list[float]) -> str | None:
    """The longest checkpoint of those ``done``, when it is far from the usual one the sentence
    describes (a headline never hides an 8 s checkpoint behind the usual 28 ms): how long, how
    much, what it cost, and when."""
    timed = np.flatnonzero(done & episodes.known("duration_s"))
    if not timed.size or not durations:
        return None
    longest = episodes[int(timed[np.argmax(episodes.floats("duration_s")[timed])])]  # the first of the longest
    longest_s = float(longest.duration_s or 0.0)
    usual_s, usual_b = float(np.median(durations)), float(np.median(written)) if written else None
    far = longest_s >= WORST_FACTOR * usual_s or (
        usual_b is not None and longest.bytes_written is not None and longest.bytes_written >= WORST_FACTOR * usual_b
    )
    if not far or longest_s < 0.1:
        return None
    m = longest.impact
    text = f"the longest, {_fmt_s(longest_s)}"
    if longest.bytes_written is not None:
        text += f", wrote {fmt_bytes(longest.bytes_written)}"
    costs = []
    if m.util_pct_peak is not None:
        costs.append(f"disk {m.util_pct_peak:.0f} % util")
    if m.ops_ratio is not None:
        costs.append(f"{100 * m.ops_ratio:.0f} % of usual operations")
    if m.write_latency_ratio is not None:
        costs.append(f"{m.write_latency_kind or 'mean'} write latency {m.write_latency_ratio:.1f}x")
    when = utc_iso(longest.start)[11:19]
    return f"{text} ({', '.join(costs)}) at {when} UTC" if costs else f"{text} at {when} UTC"


def _cost(episodes: Episodes, focus: np.ndarray, severity: str, stalls: int) -> list[str]:
    """What the ``focus`` episodes cost, as phrases (those whose load went away cost nothing)."""
    n = len(episodes)
    judged = focus & ~episodes.matching("impact.reasons", lambda reasons: GONE in reasons)
    ops = figure(episodes, "impact.ops_ratio", judged)
    lats = figure(episodes, "impact.write_latency_ratio", judged)
    kind = episodes[int(np.argmax(focus))].impact.write_latency_kind or "mean"
    lat_up = bool(lats) and float(np.median(lats)) >= HURT_LATENCY_RATIO
    parts = []
    if severity == "ok" or not hurting(episodes)[focus].any():
        dipped = sum(r <= HURT_OPS_RATIO for r in ops)
        if not ops:
            parts.append("no stall")
        elif dipped:  # never "throughput holds" beside checkpoints that cost it
            parts += ["no stall", f"{dipped:,} of {n:,} cost throughput ({100 * min(ops):.0f} % of usual in the worst)"]
        else:
            parts.append(f"throughput holds ({100 * float(np.median(ops)):.0f} % of usual)")
        if lat_up:
            parts.append(f"{kind} write latency peaks {float(np.median(lats)):.1f}x")
        return parts
    cost = []
    if ops:
        cost.append(f"operations drop {100 * (1 - float(np.median(ops))):.0f} %")
    if lat_up:
        cost.append(f"{'p99' if kind == 'p99' else 'mean'} write latency rises {float(np.median(lats)):.1f}x")
    told = " and ".join(cost)
    if stalls and 2 * stalls < n:  # a few stalled: say so first, their cost after
        parts.append(f"{stalls:,} of {n:,} stalled" + (f": {told}" if told else ""))
        return parts
    if told:
        parts.append(told)
    if stalls:
        parts.append(f"{stalls:,} of {n:,} stalled")
    return parts
