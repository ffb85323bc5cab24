"""Who the server is: version, host, cache, RAM, cores, disks and its configuration documents.

Built once from a recording's header or FTDC's metadata (getCmdLineOpts, hostInfo, getParameter)
and never changed afterwards: every later stage reads the same facts.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ckptdiag.model.sanity import as_float


@dataclass(frozen=True)
class ServerFacts:
    """Who the server is, from a recording's header or FTDC's metadata."""

    version: str | None = None
    host: str | None = None
    cache_max_bytes: float | None = None  # as configured (cacheSizeGB); serverStatus's own figure wins
    ram_bytes: float | None = None
    cores: int | None = None
    dbpath: str | None = None
    devices: tuple[str, ...] = ()
    config_string: str | None = None
    cmdline: Mapping[str, Any] = field(default_factory=dict)
    os: str | None = None
    parameters: Mapping[str, Any] = field(default_factory=dict)  # getParameter's answer, when recorded
    filesystem: str | None = None  # dbPath's file system, when recorded on the server's host
    cmdline_source: str = "getCmdLineOpts"  # or "log options, <time>": the startup options mongod logged
    # the WiredTiger open config mongod logged at its last start, and where ("log, <time>")
    open_config: str | None = None
    open_config_source: str | None = None

    @classmethod
    def from_documents(
        cls,
        *,
        version: str | None,
        host: str | None,
        cmdline: Mapping[str, Any] | None,
        host_info: Mapping[str, Any] | None,
        devices: list[str] | tuple[str, ...] | None = None,
        dbpath: str | None = None,
        parameters: Mapping[str, Any] | None = None,
        filesystem: str | None = None,
    ) -> ServerFacts:
        """From getCmdLineOpts and hostInfo replies (a recording's header, FTDC's metadata), with
        every secret they hold redacted (FTDC keeps getCmdLineOpts as mongod answered it: an
        ``ldapQueryPassword`` or an encryption ``secretkey=`` must never reach a report)."""
        from ckptdiag.guard.redact import redact_doc

        cmdline = redact_doc(dict(_mapping(cmdline)))
        parameters = redact_doc(dict(_mapping(parameters)))
        parsed = _mapping(_mapping(cmdline).get("parsed"))
        storage = _mapping(parsed.get("storage"))
        engine = _mapping(_mapping(storage.get("wiredTiger")).get("engineConfig"))
        # hostInfo as mongod answers it (FTDC), or as a recording's header keeps it
        info = _mapping(host_info)
        system = _mapping(info.get("system")) or {
            "hostname": info.get("hostname"),
            "memSizeMB": info.get("mem_size_mb"),
            "numCores": info.get("num_cores"),
        }
        cache_gb = as_float(engine.get("cacheSizeGB"))
        mem_mb = as_float(system.get("memSizeMB"))
        cores = as_float(system.get("numCores"))
        config = engine.get("configString")
        name = _mapping(info.get("os")).get("name")
        return cls(
            version=version if isinstance(version, str) else None,
            host=host or (str(system["hostname"]) if isinstance(system.get("hostname"), str) else None),
            cache_max_bytes=cache_gb * 2**30 if cache_gb is not None else None,
            ram_bytes=mem_mb * 2**20 if mem_mb is not None else None,
            cores=int(cores) if cores is not None else None,
            dbpath=dbpath or (storage["dbPath"] if isinstance(storage.get("dbPath"), str) else None),
            devices=tuple(devices or ()),
            config_string=config if isinstance(config, str) else None,
            cmdline=dict(_mapping(cmdline)),
            os=name if isinstance(name, str) else None,
            parameters=dict(_mapping(parameters)),
            filesystem=filesystem,
        )


def from_header(head: Mapping[str, Any]) -> ServerFacts:
    """The server's facts from a recording's header; parts of the wrong type (a damaged or
    hand-edited header) are left out, as if not recorded."""

    def text(value: Any) -> str | None:
        return value if isinstance(value, str) else None

    server, disks = _mapping(head.get("server")), _mapping(head.get("disks"))
    devices = disks.get("devices")
    return ServerFacts.from_documents(
        version=text(server.get("version")),
        host=text(server.get("host")),
        cmdline=_mapping(server.get("cmdline")),
        host_info=_mapping(server.get("host_info")),
        devices=[d for d in devices if isinstance(d, str)] if isinstance(devices, list) else [],
        dbpath=text(server.get("dbpath")),
        parameters=_mapping(server.get("parameters")),
        filesystem=text(disks.get("filesystem")),
    )


def from_ftdc_metadata(metadata: list[dict[str, Any]]) -> ServerFacts:
    """The server's facts from the first metadata document of FTDC files (buildInfo,
    getCmdLineOpts, hostInfo)."""
    meta = _mapping(next((m["doc"] for m in metadata if m["type"] == 0), {}))
    build = _mapping(meta.get("buildInfo"))
    version = build.get("version")
    return ServerFacts.from_documents(
        version=version if isinstance(version, str) else None,
        host=None,
        cmdline=_mapping(meta.get("getCmdLineOpts")),
        host_info=_mapping(meta.get("hostInfo")),
    )


def _mapping(value: Any) -> Mapping[str, Any]:
    """``value`` if it is a document, else an empty one (metadata of the wrong type is no metadata)."""
    return value if isinstance(value, Mapping) else {}
