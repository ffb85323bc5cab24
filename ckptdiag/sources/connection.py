"""How to reach a server: a URI plus the mongostat-style options that amend it (no pymongo here:
the options are built and checked before anything connects)."""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ckptdiag.errors import UsageError
from ckptdiag.guard.redact import redact_uri

DEFAULT_URI = "mongodb://localhost:27017"


@dataclass(frozen=True, slots=True)
class ConnectOptions:
    """How to reach the server: a URI plus the mongostat-style options that amend it."""

    uri: str = DEFAULT_URI
    host: str | None = None
    port: int | None = None
    username: str | None = None
    password: str | None = None
    auth_db: str | None = None
    auth_mechanism: str | None = None
    tls: bool | None = None
    tls_ca_file: str | None = None
    tls_cert_key_file: str | None = None
    tls_allow_invalid: bool = False
    timeout_s: float = 5.0
    member: str | None = None  # host:port of the one member of a cluster these options reach
    resolved: tuple[tuple[str, str], ...] = ()  # options a mongodb+srv:// name's DNS records gave

    def client_uri(self) -> str:
        """The URI with --host/--port replacing only its host list (as mongostat does): credentials,
        authSource, TLS and every other option stay as they were; for one member of a cluster,
        the URI that reaches it directly (:func:`member_uri`)."""
        uri = replace_hosts(self.uri, self.host, self.port) if self.host or self.port else self.uri
        return member_uri(uri, self.member, dict(self.resolved)) if self.member else uri

    def for_member(self, member: str, resolved: tuple[tuple[str, str], ...] = ()) -> ConnectOptions:
        """These options, aimed at one member of the cluster they reach."""
        return dataclasses.replace(self, member=member, resolved=resolved)

    def client_kwargs(self) -> dict[str, Any]:
        """Keyword options for MongoClient; credentials travel here, never in the logged URI."""
        kw: dict[str, Any] = {
            "serverSelectionTimeoutMS": int(self.timeout_s * 1000),
            "connectTimeoutMS": int(self.timeout_s * 1000),
            "socketTimeoutMS": int(max(self.timeout_s, 10) * 1000),
            "appname": "ckptdiag",
            "retryReads": False,  # a retried serverStatus would hide the very gap we record
        }
        if self.username is not None:
            kw["username"] = self.username
        if self.password is not None:
            kw["password"] = self.password
        if self.auth_db:
            kw["authSource"] = self.auth_db
        if self.auth_mechanism:
            kw["authMechanism"] = self.auth_mechanism
        if self.tls is not None:
            kw["tls"] = self.tls
        if self.tls_ca_file:
            kw["tlsCAFile"] = self.tls_ca_file
        if self.tls_cert_key_file:
            kw["tlsCertificateKeyFile"] = self.tls_cert_key_file
        if self.tls_allow_invalid:
            kw["tlsAllowInvalidCertificates"] = True
        return kw

    def display(self) -> str:
        """The target as it may be printed or recorded: no password, no secret option."""
        return redact_uri(self.client_uri())


_URI = re.compile(r"^(mongodb(?:\+srv)?)://([^/?#]*@)?([^/?#]*)(/[^?#]*)?(\?[^#]*)?$")


def _split_host(host: str) -> tuple[str, str | None]:
    """``host[:port]`` (``[v6]:port`` too) -> (host, port or None).

    >>> _split_host("db1:27018"), _split_host("[::1]:27017"), _split_host("db1")
    (('db1', '27018'), ('[::1]', '27017'), ('db1', None))
    """
    if host.startswith("["):
        end = host.find("]")
        rest = host[end + 1 :]
        return host[: end + 1], rest[1:] if rest.startswith(":") else None
    name, colon, port = host.partition(":")
    return (name, port) if colon else (host, None)


def replace_hosts(uri: str, host: str | None, port: int | None) -> str:
    """``uri`` with its host list replaced by ``host`` (``h[:p]``, ``h1,h2`` or mongostat's
    ``set/h1,h2``, which adds replicaSet) and/or every host's port set to ``port``.

    >>> replace_hosts("mongodb://u:p%40ss@db1:27017/admin?authSource=admin&tls=true", None, 27018)
    'mongodb://u:p%40ss@db1:27018/admin?authSource=admin&tls=true'
    >>> replace_hosts("mongodb://u:p@db1/?authSource=admin", "rs0/db2:1,db3", None)
    'mongodb://u:p@db2:1,db3/?authSource=admin&replicaSet=rs0'
    """
    match = _URI.match(uri)
    if not match:
        raise UsageError("invalid MongoDB URI (it is not shown: it may hold a password)", "see mongodb://host:port/")
    scheme, userinfo, hosts, path, query = match.groups()
    if scheme == "mongodb+srv" and not host:
        raise UsageError("--port cannot be used with a mongodb+srv:// URI", "give --host too, or a mongodb:// URI")
    if host and "/" in host:  # mongostat's replica-set form: set/host1,host2
        name, host = host.split("/", 1)
        query = (query or "?") + ("&" if query and query != "?" else "") + f"replicaSet={name}"
    listed = (host or hosts).split(",")
    if port is not None:
        listed = [f"{_split_host(h)[0]}:{port}" for h in listed]
    return f"mongodb://{userinfo or ''}{','.join(listed)}{path or ('/' if query else '')}{query or ''}"


def _option_name(param: str) -> str:
    return param.split("=", 1)[0].lower()


def member_uri(uri: str, member: str, resolved: Mapping[str, str] | None = None) -> str:
    """The URI that reaches one member of a cluster directly, whatever its role: ``member`` as
    its only host, ``directConnection=true`` and no ``replicaSet``; from a ``mongodb+srv://`` URI
    it keeps what the SRV name implied (TLS on) and ``resolved`` (the options its TXT record gave,
    e.g. authSource), unless the URI sets them itself.

    >>> member_uri("mongodb://u:p@db1,db2/admin?replicaSet=rs0&w=majority", "db2:27018")
    'mongodb://u:p@db2:27018/admin?w=majority&directConnection=true'
    >>> member_uri("mongodb+srv://u:p@c0.example.net/", "c0-s1.example.net:27017", {"authSource": "admin"})
    'mongodb://u:p@c0-s1.example.net:27017/?tls=true&authSource=admin&directConnection=true'
    """
    match = _URI.match(uri)
    if not match:
        raise UsageError("invalid MongoDB URI (it is not shown: it may hold a password)", "see mongodb://host:port/")
    scheme, userinfo, _hosts, path, query = match.groups()
    params = [
        p for p in (query or "?")[1:].split("&") if p and _option_name(p) not in ("replicaset", "directconnection")
    ]
    given = {_option_name(p) for p in params}
    if scheme == "mongodb+srv" and not given & {"tls", "ssl"}:
        params.append("tls=true")
    params += [f"{k}={v}" for k, v in (resolved or {}).items() if k.lower() not in given | {"replicaset"}]
    params.append("directConnection=true")
    return f"mongodb://{userinfo or ''}{member}{path or '/'}?{'&'.join(params)}"


def names_a_cluster(uri: str) -> bool:
    """Whether a URI names a replica set or a cluster rather than one server: several hosts, a
    ``replicaSet`` option, or a ``mongodb+srv://`` name (which resolves to a set's members).

    >>> names_a_cluster("mongodb://db1:27017"), names_a_cluster("mongodb://db1/?replicaSet=rs0")
    (False, True)
    >>> names_a_cluster("mongodb://db1,db2/"), names_a_cluster("mongodb+srv://c0.example.net/")
    (True, True)
    """
    match = _URI.match(uri)
    if not match:
        return False  # the connection says what is wrong with it, with its hint
    scheme, _userinfo, hosts, _path, query = match.groups()
    params = {_option_name(p) for p in (query or "?")[1:].split("&")}
    return scheme == "mongodb+srv" or "," in hosts or "replicaset" in params
