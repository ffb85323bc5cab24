"""The lab as a sampling source: the same Source protocol the sampler uses for a live mongod."""

from __future__ import annotations

import os
from typing import Any

from ckptdiag.lab.engine import LAB_VERSION, LabEngine
from ckptdiag.sources.mongo import ServerInfo


def lab_server_info(engine: LabEngine) -> ServerInfo:
    """The identity a mongod configured like the lab would report."""
    import psutil

    return ServerInfo(
        version=LAB_VERSION,
        host=f"ckptdiag-lab:{engine.pid}",
        process="mongod",
        pid=engine.pid,
        storage_engine="wiredTiger",
        dbpath=str(engine.home),
        dbpath_inferred=False,
        cmdline=engine.cmdline(),
        build={"version": LAB_VERSION, "storageEngines": ["wiredTiger"], "lab": True},
        host_info={"hostname": os.uname().nodename, "mem_size_mb": psutil.virtual_memory().total // 2**20,
                   "num_cores": psutil.cpu_count(logical=True), "os": {"type": "Linux"}},
        parameters={"syncdelay": engine.config.checkpoint_s, "wiredTigerEngineRuntimeConfig": ""},
        address="in-process",
        is_local=True,
    )


class LabSource:
    """Samples a running :class:`LabEngine` in-process."""

    kind = "lab"

    def __init__(self, engine: LabEngine) -> None:
        self.engine = engine

    def connect(self) -> ServerInfo:
        """The lab's identity (it is always there)."""
        return lab_server_info(self.engine)

    def sample(self) -> dict[str, Any]:
        """A serverStatus document, histograms included."""
        return self.engine.server_status(histograms=True)

    def close(self) -> None:
        """Nothing to release: the engine is closed by its owner."""
