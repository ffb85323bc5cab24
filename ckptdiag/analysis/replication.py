"""Replication lag through checkpoints: a secondary that falls behind while it checkpoints."""

from __future__ import annotations

import numpy as np

from ckptdiag.analysis.episode_table import Episodes

LAG_GROWTH_S = 1.0  # lag that grows a second or more through a checkpoint is worth a finding


def lag_finding(episodes: Episodes) -> str | None:
    """A finding when replication lag grew through most checkpoints (where FTDC recorded it)."""
    growth: list[float] = episodes.present("impact.repl_lag_growth_s").tolist()
    if not growth:
        return None
    grew = [g for g in growth if g >= LAG_GROWTH_S]
    if len(grew) * 2 < len(growth):
        return None
    return (
        f"replication lag grew through {len(grew)} of {len(growth)} checkpoints "
        f"(median +{float(np.median(grew)):.1f} s, at most +{max(grew):.1f} s): the secondary falls behind "
        "while it checkpoints"
    )
