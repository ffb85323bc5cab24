"""Sample frames of a server whose checkpoints we place exactly: counters that move as mongod's do.

The start counter moves in the interval in which a checkpoint begins, the running flag is up at
the samples taken while it runs, total time and "most recent time" move in the interval in
which it ends (as real 4.2 FTDC shows). During a stalling checkpoint operations slow to
``stall_ops`` a second and take ``stall_latency_ms``; the disk writes the checkpoint's bytes.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd


@dataclass
class Server:
    seconds: float = 600.0
    sample_s: float = 1.0
    first_start: float = 30.3  # checkpoint starts: first_start + k * period
    period: float = 60.0
    duration: float = 2.0
    ops: float = 1000.0
    latency_ms: float = 1.0
    stall: bool = True
    stall_ops: float = 50.0
    stall_latency_ms: float = 40.0
    mb_per_s: float = 200.0  # disk writes while a checkpoint runs
    base_mb_s: float = 5.0
    counters: bool = True  # checkpoint statistics exist (False: MMAPv1-like)
    load_stops_at: float | None = None
    pauses: tuple[tuple[float, float], ...] = ()  # stalls of their own, checkpoint or not
    flag_lag_s: float = 0.0  # the running flag/progress state stays up this long after the end

    def checkpoints(self) -> list[tuple[float, float]]:
        out = []
        s = self.first_start
        while s < self.seconds:
            out.append((s, s + self.duration))
            s += self.period
        return out

    def frame(self) -> pd.DataFrame:
        t = np.arange(0.0, self.seconds + 1e-9, self.sample_s) + 1_700_000_000.0
        rel = t - t[0]
        cps = self.checkpoints()
        n = t.size
        # integrate per 10 ms so that partial overlaps of a sample interval count exactly
        fine = np.arange(0.0, self.seconds + self.sample_s, 0.01)
        running_fine = np.zeros(fine.size, dtype=bool)
        for s, e in cps:
            running_fine |= (fine >= s) & (fine < e)
        stalled = running_fine & self.stall
        for s, e in self.pauses:
            stalled |= (fine >= s) & (fine < e)
        ops_fine = np.where(stalled, self.stall_ops, self.ops) * 0.01
        if self.load_stops_at is not None:
            ops_fine[fine >= self.load_stops_at] = 0
        lat_fine = ops_fine * np.where(stalled, self.stall_latency_ms, self.latency_ms) * 1000
        mb_fine = np.where(running_fine, self.mb_per_s, self.base_mb_s) * 0.01
        idx = np.searchsorted(fine, rel, side="right")
        cum = lambda x: np.concatenate(([0.0], np.cumsum(x)))[idx]  # noqa: E731
        ops = cum(ops_fine)
        frame = pd.DataFrame(
            {
                "t": t,
                "seq": np.arange(n),
                "segment": 0,
                "gap_before": False,
                "wt_missing": False,
                "ops.insert": np.floor(ops * 0.9),
                "ops.query": np.floor(ops * 0.1),
                "lat.writes.ops": np.floor(ops * 0.9),
                "lat.writes.latency_us": np.floor(cum(lat_fine) * 0.9),
                "cache.max_bytes": float(2**30),
                "cache.bytes": float(2**29),
                # dirty data builds up from each checkpoint's start (its snapshot) to the next one's,
                # 32 MB at most: a checkpoint finds what the period's writes dirtied
                "cache.dirty_bytes": float(2**25) * (((rel - self.first_start) % self.period) / self.period),
                "disk.vda.wr_sectors": np.floor(cum(mb_fine) * 2**20 / 512),
                "disk.vda.wr_ios": np.floor(cum(mb_fine) * 10),
                "disk.vda.wr_ticks": np.floor(cum(mb_fine) * 5),
                "disk.vda.tot_ticks": np.floor(cum(np.where(running_fine, 10.0, 1.0))),
                "disk.vda.rq_ticks": np.floor(cum(mb_fine) * 5),
            },
            index=pd.to_datetime(t, unit="s", utc=True),
        )
        if self.counters:
            starts = np.array([s for s, _ in cps])
            ends = np.array([e for _, e in cps])
            durations = 1000 * (ends - starts)
            begun = np.searchsorted(starts, rel, side="right").astype("float64")
            done = np.searchsorted(ends, rel, side="right")
            total = np.concatenate(([0.0], np.cumsum(durations)))[done]
            recent = np.concatenate(([0.0], durations))[done]
            running = (begun > np.searchsorted(ends + self.flag_lag_s, rel, side="right")).astype("float64")
            written = cum(np.where(running_fine, self.mb_per_s * 0.01 * 2**20, 0.0))
            frame["ckpt.count"] = begun
            frame["ckpt.running"] = running
            frame["ckpt.total_ms"] = np.round(total)
            frame["ckpt.recent_ms"] = np.round(recent)
            frame["ckpt.bytes_written"] = np.floor(written)
        return frame


def disk_busy(frame: pd.DataFrame, pct: float) -> None:
    """Make the synthetic data disk ``pct`` % busy throughout (one that keeps up, under 90 %)."""
    frame["disk.vda.tot_ticks"] = np.floor((frame["t"] - frame["t"].iloc[0]) * 10 * pct)


def write_recording(frame: pd.DataFrame, path: Path, version: str = "7.0.21") -> Path:
    """``frame`` as a recording file, as ``ckptdiag record`` writes one (samples with disk lines)."""
    from ckptdiag.recording import RecordingWriter, header

    w = RecordingWriter(path)
    w.write(header(source={"kind": "serverStatus"}, server={"version": version}, options={}, disks={}, created=0.0), 0)
    metrics = [c for c in frame.columns if c.startswith(("ops.", "lat.", "cache.", "ckpt."))]
    disk_fields = ["rd_ios", "rd_merges", "rd_sectors", "rd_ticks", "wr_ios", "wr_merges", "wr_sectors", "wr_ticks"]
    for i, (_, row) in enumerate(frame.iterrows()):
        disk = [int(row.get(f"disk.vda.{f}", 0)) for f in disk_fields] + [
            0,
            int(row["disk.vda.tot_ticks"]),
            int(row["disk.vda.rq_ticks"]),
        ]
        line = {
            "type": "sample",
            "seq": i,
            "t": float(row["t"]),
            "mono": float(i),
            "rtt_ms": 1.0,
            "m": {c: float(row[c]) for c in metrics},
            "disk": {"vda": disk},
        }
        w.write(line, float(i))
    w.close()
    return path
