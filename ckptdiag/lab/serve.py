"""The lab behind the MongoDB wire protocol: what ``ckptdiag lab serve`` answers."""

from __future__ import annotations

import datetime as dt
import os
from typing import Any

from ckptdiag.lab import modeldisk
from ckptdiag.lab.config import LAB_VERSION
from ckptdiag.lab.engine import LabEngine
from ckptdiag.lab.wire import CommandServer, diskstats_to_system_metrics, filter_sections, wants_histograms
from ckptdiag.sources.devices import map_local_path
from ckptdiag.sources.diskstats import read_diskstats


def lab_server(engine: LabEngine, port: int) -> CommandServer:
    """A command server answering for ``engine`` as a mongod would."""
    import psutil

    disks = set(map_local_path(str(engine.home)).disks)
    model = modeldisk.active()  # the process's own environment: it does not change while serving

    def server_status(cmd: dict[str, Any]) -> dict[str, Any]:
        return filter_sections(engine.server_status(histograms=wants_histograms(cmd)), cmd)

    def diagnostic_data(cmd: dict[str, Any]) -> dict[str, Any]:
        now = dt.datetime.now(dt.timezone.utc)
        if model is not None and model.loaded:
            physical = modeldisk.read_counters(model.state)
        else:
            physical = {k: v for k, v in read_diskstats().items() if k in disks}
        return {
            "data": {
                "start": now,
                "serverStatus": engine.server_status(histograms=False),
                "systemMetrics": {
                    "start": now,
                    "cpu": {"num_cpus": psutil.cpu_count()},
                    "disks": diskstats_to_system_metrics(physical),
                    "end": now,
                },
                "end": now,
            }
        }

    handlers = {
        "serverStatus": server_status,
        "getDiagnosticData": diagnostic_data,
        "buildInfo": lambda cmd: {
            "version": LAB_VERSION,
            "gitVersion": "ckptdiag-lab",
            "storageEngines": ["wiredTiger"],
            "bits": 64,
        },
        "hostInfo": lambda cmd: {
            "system": {
                "hostname": os.uname().nodename,
                "memSizeMB": psutil.virtual_memory().total // 2**20,
                "numCores": psutil.cpu_count(),
            },
            "os": {"type": "Linux", "name": "ckptdiag lab"},
        },
        "getCmdLineOpts": lambda cmd: engine.cmdline(),
        "getParameter": lambda cmd: {
            "syncdelay": engine.config.checkpoint_s,
            "journalCommitInterval": engine.config.journal_commit_ms,
            "wiredTigerEngineRuntimeConfig": "",
        },
    }
    return CommandServer(handlers, port=port)
