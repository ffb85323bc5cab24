"""Keep credentials out of everything ckptdiag prints or writes."""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import parse_qsl, quote, urlencode

REDACTED = "<redacted>"
# Option and field names that carry secrets: passwords, tokens, keys (but not file *paths* to keys,
# which the DBA needs to see, and which mongod itself prints).
_SECRET = re.compile(
    r"pass(word|wd|phrase)?|secret|token|credential|^key$|kmsproviders|"
    r"authmechanismproperties|clientkey|privatekey|keyid|keyidentifier|accesskey|apikey",
    re.I,
)
# ``name=value`` inside a WiredTiger config string (encryption=(name=...,keyid=...,secretkey=...))
# or a setParameter argument whose name is a secret's: the value, quoted, parenthesised or bare
_ASSIGNED = re.compile(r"""([A-Za-z_][\w.]*)(\s*=\s*)("(?:[^"\\]|\\.)*"|\([^()]*\)|[^,()\s]*)""")


def is_secret_name(name: str) -> bool:
    """Whether an option or field called ``name`` holds a secret.

    >>> is_secret_name("tlsCertificateKeyFilePassword"), is_secret_name("tlsCertificateKeyFile")
    (True, False)
    """
    return bool(_SECRET.search(name))


def redact_assignments(text: str) -> str:
    """``text`` with the value of every ``name=value`` whose name is a secret's replaced: a
    WiredTiger config string's ``secretkey=``/``keyid=``, a ``setParameter`` such as
    ``ldapQueryPassword=``.

    >>> redact_assignments('cache_size=1G,encryption=(name=AES256-CBC,keyid="k1",secretkey=abc)')
    'cache_size=1G,encryption=(name=AES256-CBC,keyid=<redacted>,secretkey=<redacted>)'
    """
    if "=" not in text:
        return text

    def one(m: re.Match[str]) -> str:
        name, eq, value = m.groups()
        if is_secret_name(name):
            return f"{name}{eq}{REDACTED}"
        if value.startswith("("):  # a nested group: its own assignments, one level in
            return f"{name}{eq}({redact_assignments(value[1:-1])})"
        return m.group(0)

    return _ASSIGNED.sub(one, text)


def redact_uri(uri: str) -> str:
    """A MongoDB URI with its password and secret options replaced.

    The credentials run from ``://`` to the last ``@``, whatever they hold: a password typed with
    an unescaped ``/``, ``?``, ``#`` or ``@`` is still the password, never a host, path or
    fragment to print.

    >>> redact_uri("mongodb://admin:s3cr%40t@db1:27017/?authSource=admin&tlsCertificateKeyFilePassword=x")
    'mongodb://admin:<redacted>@db1:27017/?authSource=admin&tlsCertificateKeyFilePassword=%3Credacted%3E'
    >>> redact_uri("mongodb://u:pa/ss?w#x@y@db1/?w=1")
    'mongodb://u:<redacted>@db1/?w=1'
    """
    scheme, credentials, at, rest = _split(uri)
    if not scheme:
        return REDACTED  # not a URI we can take apart: show nothing of it rather than a secret
    userinfo = ""
    if at:
        user, colon, _password = credentials.partition(":")
        userinfo = f"{_first_part(user)}:{REDACTED}@" if colon else f"{_first_part(user)}@"
    match = re.match(r"^([^/?#]*)(/[^?#]*)?(\?[^#]*)?(#.*)?$", rest)
    if not match:
        return REDACTED
    hosts, path, query, _frag = match.groups()
    if query:
        pairs = [(k, REDACTED if is_secret_name(k) else v) for k, v in parse_qsl(query[1:], keep_blank_values=True)]
        query = "?" + urlencode(pairs, quote_via=quote, safe=",:")
    return f"{scheme}{userinfo}{hosts}{path or ''}{query or ''}"


def scrub(text: str, uri: str, *passwords: str | None) -> str:
    """``text`` (a driver's message) with the URI's password and any other given ones replaced:
    a driver may quote the part of a URI it could not parse.

    >>> scrub("bad port 'pa/ss@h'", "mongodb://u:pa/ss@h")
    "bad port '<redacted>@h'"
    """
    found = [_split(uri)[1].partition(":")[2], *(p or "" for p in passwords)]
    for secret in sorted({s for s in found if s}, key=len, reverse=True):
        text = text.replace(secret, REDACTED)
    return text


def unescaped_credentials(uri: str) -> bool:
    """Do the URI's user name or password hold a character the URI grammar reserves (``/ ? # @``,
    or a second ``:``)? The driver then parses part of the password as host or options, and quotes
    pieces of it (even lower-cased) in its messages, which no replacement can find.

    >>> unescaped_credentials("mongodb://u:pa/ss@h"), unescaped_credentials("mongodb://u:pa%2Fss@h")
    (True, False)
    """
    credentials = _split(uri)[1]
    return bool(re.search(r"[/?#@]", credentials) or ":" in credentials.partition(":")[2])


def _split(uri: str) -> tuple[str, str, str, str]:
    """-> (scheme with ``://`` or "", the credentials up to the last ``@``, that ``@`` or "", the rest)."""
    scheme = re.match(r"^mongodb(?:\+srv)?://", uri)
    if not scheme:
        return "", "", "", uri
    credentials, at, rest = uri[scheme.end() :].rpartition("@")
    return scheme.group(0), credentials, at, rest


def _first_part(user: str) -> str:
    """A user name as it may be shown: cut at the first character that cannot be in one unescaped
    (what follows could be a password typed without its ``:``)."""
    return re.split(r"[/?#]", user, maxsplit=1)[0]


def redact_doc(obj: Any) -> Any:
    """A copy of a document (getCmdLineOpts, a config) with secret values and argv secrets replaced."""
    if isinstance(obj, dict):
        return {
            k: (REDACTED if is_secret_name(str(k)) and not isinstance(v, (dict, list)) else redact_doc(v))
            for k, v in obj.items()
        }
    if isinstance(obj, list):
        if all(isinstance(x, str) for x in obj):
            return _redact_argv(obj)
        return [redact_doc(x) for x in obj]
    if isinstance(obj, str) and "://" in obj and "@" in obj:
        return redact_uri(obj)
    if isinstance(obj, str):
        return redact_assignments(obj)
    return obj


def _redact_argv(argv: list[str]) -> list[str]:
    out: list[str] = []
    hide_next = False
    for arg in argv:
        if hide_next:
            out.append(REDACTED)
            hide_next = False
            continue
        if arg.startswith("-"):
            option, eq, value = arg.partition("=")
            if is_secret_name(option.lstrip("-")):
                if eq:
                    arg = f"{option}={REDACTED}"
                else:
                    hide_next = True
            elif eq:  # --setParameter=ldapQueryPassword=..., --wiredTigerEngineConfigString=...
                arg = f"{option}={redact_assignments(value)}"
        elif "://" in arg and "@" in arg:
            arg = redact_uri(arg)
        else:  # the value after --setParameter, a config string given as its own argument
            arg = redact_assignments(arg)
        out.append(arg)
    return out
