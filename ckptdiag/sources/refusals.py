"""A server's refusals and failures as errors a DBA can act on: unreachable, authentication,
missing privileges, a mongos where a mongod was expected, a server older than the driver. Each
message is one line without the topology dump the driver appends, and never a password."""

from __future__ import annotations

from pymongo.errors import OperationFailure, PyMongoError, ServerSelectionTimeoutError

from ckptdiag.errors import ConnectError
from ckptdiag.guard.redact import scrub
from ckptdiag.sources.connection import ConnectOptions

UNAUTHORIZED = 13
AUTH_FAILED = 18


class MongosTarget(ConnectError):
    """The server is a mongos (no storage engine of its own): a cluster's members are recorded
    through it instead (:mod:`ckptdiag.sources.discovery`)."""


def mongos_error(target: str) -> ConnectError:
    """A mongos where a mongod was expected, with how to record its cluster instead."""
    return MongosTarget(
        f"{target} is a mongos; checkpoints happen on each mongod",
        "add --discover to record its shards' members through it, or point --uri at a shard member (mongod)",
    )


def clean_message(exc: BaseException) -> str:
    """A driver message on one line, without the topology dump pymongo appends."""
    text = str(exc).split(", Timeout:")[0].split(", full error:")[0]
    return " ".join(text.split())[:300]


def operation_error(exc: OperationFailure, target: str) -> ConnectError:
    """A refused command as the error a DBA can act on (authentication, privileges)."""
    if exc.code == AUTH_FAILED:
        return ConnectError(
            f"authentication failed for {target}",
            "check --username/--password and --authenticationDatabase (often admin)",
        )
    if exc.code == UNAUTHORIZED:
        hint = (
            "the clusterMonitor role is enough: db.grantRolesToUser('<user>', [{role: 'clusterMonitor', db: 'admin'}])"
        )
        if "getDiagnosticData" in str(exc) or "oplog" in str(exc):
            hint = (
                "getDiagnosticData needs clusterMonitor and read on local: db.grantRolesToUser('<user>', "
                "[{role: 'clusterMonitor', db: 'admin'}, {role: 'read', db: 'local'}])"
            )
        return ConnectError(f"not authorized on {target}: {clean_message(exc)}", hint)
    return ConnectError(f"{target} refused a command: {clean_message(exc)}", "run with --debug for details")


def unreachable(exc: ServerSelectionTimeoutError, options: ConnectOptions) -> ConnectError:
    """A server that did not answer in time, with what the driver saw (no password)."""
    text = scrub(clean_message(exc), options.client_uri(), options.password)
    if "wire version" in text:
        return driver_too_new(exc, options.display())
    return ConnectError(
        f"cannot reach {options.display()} within {options.timeout_s:g} s: {text}",
        "check that mongod is running, the host and port, firewalls, and TLS options (--tls)",
        retryable=True,
    )


def driver_too_new(exc: PyMongoError, target: str) -> ConnectError:
    """A server older than this driver reaches, with the driver that does (or FTDC instead)."""
    import pymongo

    return ConnectError(
        f"{target}: {clean_message(exc)}",
        f"pymongo {pymongo.version} needs MongoDB {'.'.join(map(str, _min_server()))}+; for older servers "
        "install an older driver (pip install 'pymongo>=4,<4.11' reaches 3.6-4.2) "
        "or analyse the server's FTDC files (diagnostic.data), which need no connection",
    )


def _min_server() -> tuple[int, ...]:
    try:
        from pymongo.common import MIN_SUPPORTED_SERVER_VERSION

        return tuple(int(x) for x in str(MIN_SUPPORTED_SERVER_VERSION).split("."))
    except ImportError:  # pragma: no cover - very old drivers
        return (3, 6)
