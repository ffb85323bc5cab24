"""Counters of events (checkpoints begun, their total time, the bytes they wrote): how much each
rose in each interval, read across gaps and changes of sampling period (the server's counter is
the truth for what happened, whatever the spacing), and which of the checkpoints begun the
samples can place one by one."""

from __future__ import annotations

import numpy as np
import pandas as pd

from ckptdiag.model.samples import Samples

MAX_CHECKPOINTS_PER_S = 100.0  # WiredTiger cannot begin more (each takes its own sync)
# of those begun and ended inside one interval, how many are placed one by one: what a second holds
MAX_PLACED_INSIDE = 100.0
RESET_FRACTION = 0.5  # an event counter that falls below half its highest value was reset


def event_counter(frame: Samples, column: str, restarts: np.ndarray) -> np.ndarray:
    """How much a counter of events (checkpoints begun, their total time, their bytes) rose in each
    interval, read across gaps and changes of sampling period: the server's counter is the truth
    for what happened, whatever the spacing. A sample that lacks the counter (a reply without the
    wiredTiger section) adds nothing and the next one carries the rise. A counter that goes back
    a little is held at its highest value (real FTDC interleaves samples whose counters differ by
    one); one that falls below ``RESET_FRACTION`` of it was reset, and, like a restart and the first
    row, gives NaN."""
    if column not in frame:
        return np.full(len(frame), np.nan)
    values = frame.values(column)
    seam = _resets(values, restarts)
    # the highest value so far within each stretch between seams (a missing one is carried)
    held = running_max(values, seam)
    delta: np.ndarray = np.empty_like(held)
    delta[0] = np.nan
    np.subtract(held[1:], held[:-1], out=delta[1:])
    delta[seam] = np.nan
    return delta


MAX_RESETS = 64  # resets of one counter found one by one; past this many, the rest in one pass


def _resets(values: np.ndarray, restarts: np.ndarray) -> np.ndarray:
    """``restarts`` and the rows where the counter fell below ``RESET_FRACTION`` of its highest
    value since the last of them, found in turn: the highest value starts again at a reset, so the
    rows after it are compared with the counter's new run, not with the old one's highest (a
    counter reset without a restart, or a file that follows another server's, read every row
    after it as a reset again, until the new run passed half the old highest). A missing value
    is no highest value (the row after it is not compared)."""
    seam: np.ndarray = restarts.copy()
    at = 0
    for found in range(MAX_RESETS + 1):
        high = running_max(values[at:], seam[at:])
        high[np.isnan(values[at:])] = np.nan
        with np.errstate(invalid="ignore"):
            fell = (values[at + 1 :] < RESET_FRACTION * high[:-1]) & ~seam[at + 1 :]
        hits = np.flatnonzero(fell)
        if not hits.size:
            break
        if found == MAX_RESETS:  # a counter reset this often: each of the rest against the highest before it
            seam[at + 1 + hits] = True
            break
        at += 1 + int(hits[0])
        seam[at] = True
    return seam


def running_max(values: np.ndarray, starts: np.ndarray) -> np.ndarray:
    """The highest value so far within each stretch that begins where ``starts`` is set (and at
    row 0); a missing value is skipped and the highest before it carried (NaN before any value).

    >>> running_max(np.array([1.0, np.nan, 0.5, 3.0, 2.0, np.nan]), np.array([0, 0, 0, 0, 1, 0], dtype=bool)).tolist()
    [1.0, 1.0, 1.0, 3.0, 2.0, 2.0]
    """
    bounds = np.flatnonzero(starts[1:]) + 1
    if bounds.size > 64:  # many stretches: one grouped pass rather than a loop over them
        grouped = pd.Series(values).groupby(np.cumsum(starts)).cummax()
        held: np.ndarray = grouped.groupby(np.cumsum(starts)).ffill().to_numpy(dtype="float64")
        return held
    out = np.empty_like(values)
    for lo, hi in zip(np.r_[0, bounds], np.r_[bounds, values.size], strict=True):
        np.fmax.accumulate(values[lo:hi], out=out[lo:hi])
    return out


def checkpoints_begun(
    frame: Samples, restarts: np.ndarray, dt: np.ndarray, gaps: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(checkpoints begun in each interval that are placed one by one; the count where it rose by
    more than a server can begin: a reset or damage, not events, and never a loop bound; and the
    checkpoints begun *and ended* inside an interval that are counted, not placed: every one but
    the last across a gap between samples, where hours of checkpoints would all sit at one
    moment, and past ``MAX_PLACED_INSIDE`` in any other interval). What is placed is at most a
    few per sample, so the episodes the finder builds follow the samples, never the time between
    them (three samples 20,000 s apart whose counter rose by 2,000,000 made as many episodes and
    3 GB)."""
    starts = "ckpt.count" if "ckpt.count" in frame else "ckpt.generation"
    begun = event_counter(frame, starts, restarts)
    with np.errstate(invalid="ignore"):
        jumped = begun > MAX_CHECKPOINTS_PER_S * np.nan_to_num(dt, nan=0.0) + MAX_CHECKPOINTS_PER_S
    jump = np.where(jumped, begun, np.nan)
    begun[jumped] = np.nan
    # at most one is still running after a sample (WiredTiger runs one at a time): all but the
    # last begun in an interval ended inside it
    inside = np.maximum(np.floor(np.nan_to_num(begun, nan=0.0)) - 1.0, 0.0)
    unplaced = np.maximum(inside - np.where(gaps, 0.0, MAX_PLACED_INSIDE), 0.0)
    return begun - unplaced, jump, unplaced
