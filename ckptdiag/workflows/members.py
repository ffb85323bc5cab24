"""Which replica-set member (or server) each input belongs to: several members' diagnostic.data
given at once, or a support bundle's folder per host, become one report per member and a
cluster view, never one window mixing two servers' counters."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ckptdiag import recording
from ckptdiag.sources.logfiles import is_log_dir, is_log_input


@dataclass(frozen=True)
class Member:
    """One server's inputs."""

    name: str  # host:port from the files' own metadata, else the folder the files are in
    paths: tuple[Path, ...]


def _has_ftdc(path: Path) -> bool:
    return any(p.name.startswith("metrics.") for p in path.iterdir() if p.is_file())


def expand_bundles(paths: tuple[Path, ...], scratch: Path | None = None, notes: list[str] | None = None) -> list[Path]:
    """The inputs with every bundle folder (no metrics.* of its own, but folders that hold them,
    directly or in a ``diagnostic.data`` below: a support or Atlas download) replaced by those
    folders; an archive of one (``.tar.gz``, ``.zip``) is unpacked into ``scratch`` first (what
    unpacking met goes to ``notes``)."""
    from ckptdiag.errors import InputError
    from ckptdiag.guard.inputs import check_readable
    from ckptdiag.sources.archives import is_archive, unpack

    out: list[Path] = []
    for given in paths:
        check_readable(given)  # before anything opens it: a FIFO would block the first read
        path = given
        if is_archive(given):
            if scratch is None:
                raise InputError(f"{given} is an archive", "unpack it, or give it to 'ckptdiag report'")
            unpacked = unpack(given, scratch)
            path, taken = unpacked.root, unpacked.taken
            if notes is not None:
                notes += unpacked.notes
            if not taken:
                raise InputError(
                    f"{given} holds no FTDC file or recording", "give a support download of diagnostic.data"
                )
        if not path.is_dir() or _has_ftdc(path) or is_log_dir(path):
            out.append(path)
            continue
        out += _ftdc_folders(path) or [path]
    return out


def _ftdc_folders(path: Path, depth: int = 3) -> list[Path]:
    """The folders under ``path`` (a few levels down, as downloads nest them) that hold FTDC."""
    found: list[Path] = []
    for sub in sorted(p for p in path.iterdir() if p.is_dir()):
        if _has_ftdc(sub):
            found.append(sub)
        elif depth > 1:
            found += _ftdc_folders(sub, depth - 1)
    return found


def member_name(path: Path) -> str | None:
    """``host:port`` as the input's own metadata gives it (FTDC's hostInfo and getCmdLineOpts, a
    recording's header), or None when it does not (a mongod log is told apart before)."""
    if path.is_file() and recording.is_recording(path):
        try:
            server = recording.read_header(path).get("server")
        except Exception:  # noqa: BLE001 - an unreadable header is the report's error to give, not ours
            return None
        host = server.get("host") if isinstance(server, dict) else None
        return host if isinstance(host, str) and host else None
    return _ftdc_member(path)


def _ftdc_member(path: Path) -> str | None:
    from ckptdiag.errors import CkptdiagError
    from ckptdiag.sources.ftdc import Metadata, metric_files, read_file

    try:
        first = metric_files(path)[0]
        for item in read_file(first):
            if isinstance(item, Metadata) and item.kind == 0:
                return _host_port(item.doc)
            if not isinstance(item, Metadata):
                return None  # a chunk before any metadata: the file does not say
    except (CkptdiagError, OSError):
        return None
    return None


def _host_port(doc: dict[str, Any]) -> str | None:
    info = doc.get("hostInfo")
    system = info.get("system") if isinstance(info, dict) else None
    host = system.get("hostname") if isinstance(system, dict) else None
    if not isinstance(host, str) or not host:
        return None
    opts = doc.get("getCmdLineOpts")
    parsed = opts.get("parsed") if isinstance(opts, dict) else None
    net = parsed.get("net") if isinstance(parsed, dict) else None
    port = net.get("port") if isinstance(net, dict) else None
    return f"{host}:{port if isinstance(port, int) else 27017}"


def group_members(paths: tuple[Path, ...], scratch: Path | None = None, notes: list[str] | None = None) -> list[Member]:
    """The inputs by member, in the order they were given: a member is a server's host:port as its
    files name it, and every metrics file of one ``diagnostic.data`` folder is the member its first
    file names (a glob of the folder is the folder). Inputs that do not name their member (mongod
    logs, files without metadata) belong to the one member when there is one, else each is named
    by its folder."""
    from ckptdiag.errors import UsageError

    named: dict[str, list[Path]] = {}
    unnamed: list[Path] = []
    logs: list[Path] = []
    folders: dict[Path, str] = {}  # a diagnostic.data folder -> the member its first file named
    for path in expand_bundles(paths, scratch, notes):
        folder = _diagnostic_folder(path)
        if is_log_input(path):
            logs.append(path)
        elif folder is not None and folder in folders:  # one dbPath's files: one server, however renamed
            named[folders[folder]].append(path)
        elif (name := member_name(path)) is not None:
            named.setdefault(name, []).append(path)
            if folder is not None:
                folders[folder] = name
        else:
            unnamed.append(path)
    for path in unnamed:  # no metadata (metrics.interim, a file cut before it): its folder's member
        named.setdefault(_member_in_folder(path, named) or _folder_name(path), []).append(path)
    if len(named) <= 1:
        only = next(iter(named), _folder_name(paths[0]))
        return [Member(only, (*named.get(only, []), *logs))]
    if logs:
        raise UsageError(
            f"mongod logs given with {len(named)} members' data: which member's they are is not known",
            "report one member at a time with its own log, or the members without logs",
        )
    return [Member(name, tuple(p)) for name, p in named.items()]


def _diagnostic_folder(path: Path) -> Path | None:
    """The ``diagnostic.data`` folder a metrics file lies in (resolved), or None. mongod writes
    one server's FTDC there, under its dbPath: the files of one such folder are one member, whatever
    hostname each start of the server carried (a container gets a new one every restart), and its
    restarts are events of that member's window."""
    if not path.is_file() or not path.name.startswith("metrics."):
        return None
    folder = path.parent.resolve()
    return folder if folder.name == "diagnostic.data" else None


def _member_in_folder(path: Path, named: dict[str, list[Path]]) -> str | None:
    """The one named member whose files lie in ``path``'s folder (a glob of diagnostic.data gives
    metrics.interim, which carries no metadata, beside the files that name the server), or None."""
    folder = (path if path.is_dir() else path.parent).resolve()
    owners = {
        name for name, files in named.items() for f in files if (f if f.is_dir() else f.parent).resolve() == folder
    }
    return owners.pop() if len(owners) == 1 else None


def _folder_name(path: Path) -> str:
    parts = [p for p in path.resolve().parts if p not in ("diagnostic.data", "/")]
    return parts[-2] if path.is_file() and len(parts) > 1 else (parts[-1] if parts else str(path))
