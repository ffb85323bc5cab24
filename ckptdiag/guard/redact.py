"""Keep credentials out of everything ckptdiag prints or writes.

:func:`redact_text` is the one function every string that leaves the process passes through
(the guarded writer for files, :mod:`ckptdiag.boundary` for stdout and stderr). It knows every
spelling a secret comes in: a URI's userinfo however malformed, ``name=value`` and ``name:value``
with the name bare, quoted, JSON-escaped or HTML-escaped (WiredTiger's config grammar accepts
all of them), a nested group (``kmsProviders=(...)``), ``--password VALUE``, and the literal
passwords this process was given (:func:`remember`). The structural helpers (:func:`redact_doc`,
:func:`redact_uri`) keep secrets out of the data itself: a recording's header, a report's facts.
"""

from __future__ import annotations

import re
import threading
from typing import Any
from urllib.parse import parse_qsl, quote, urlencode

REDACTED = "<redacted>"
HTML_REDACTED = "&lt;redacted&gt;"  # the same marker inside an HTML page already escaped

# A name holds a secret when, lower-cased with its separators dropped, it contains one of these
# (``ldapQueryPassword``, ``secret_key``, ``awsSessionToken``) ...
_SECRET_WORDS = (
    "password",
    "passwd",
    "passphrase",
    "secret",
    "token",
    "credential",
    "privatekey",
    "clientkey",
    "accesskey",
    "apikey",
    "kmsproviders",
    "authmechanismproperties",
)
# ... ends with one of these (``dbpass``, ``keyid``, ``kmipKeyIdentifier``) or is ``key``. Paths
# to key files (``keyFile``, ``tlsCertificateKeyFile``) are not secrets: mongod prints them too.
_SECRET_ENDINGS = ("pass", "pwd", "keyid", "keyidentifier")
_NORMAL = re.compile(r"[^a-z0-9]")

# Where a secret may be: a word a secret's name ends in (found by plain substring search on the
# lower-cased text, ~20x a regular expression's speed: a report of tens of MB without a secret
# costs tens of ms), then the whole name around it, which ``is_secret_name`` decides; then ``=``
# or ``:`` (the name's closing quote bare, plain, JSON-escaped ``\"`` or HTML-escaped
# ``&quot;`` before it: WiredTiger's grammar accepts ``"key"="value"``), then the value in the
# same spellings, a group, or a bare word. ``--name value`` counts too.
_NAME_WORDS = ("pass", "pwd", "secret", "token", "credential", "key", "kmsproviders", "authmechanismproperties")
_NAME_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-")
_NAME_MAX = 200
_OP = re.compile(r"(\\?[\"']|&quot;|&\#x27;|&\#39;)?(\s*[=:]\s*)")
_SPACE_VALUE = re.compile(r"\s+(?=[^\s=:\-])")
_VALUE = re.compile(
    r"""\\"(?:[^"\\]|\\[^"])*\\"|"(?:[^"\\]|\\.)*"|'[^']*'|&quot;.*?&quot;|&\#x27;.*?&\#x27;|&\#39;.*?&\#39;|"""
    r"""[^\s,;&()"'{}\[\]\\<>]+|<redacted>""",
    re.S,
)
_ANGLED = re.compile(r"""(?:&(?:lt|gt|amp|\#\d+|\#x[0-9a-fA-F]+);|<(?!/)|>|[^\s,;&()"'{}\[\]\\<>])+""")
# a URI runs to whitespace, <, >, a backtick, or a quote that closes a string (one followed by a
# separator): a quote inside a typed password is still the password
_URI_TOKEN = re.compile(r"""(?:[^\s"'<>`]|["'](?![\s,;:})\].]|$))*""")
_WORD = re.compile(r"\S*")
_STRUCTURE = re.compile(r"""["'][,:}\]]|</?[A-Za-z]+>|><""")
_GROUP_MAX = 4096  # a nested group longer than this is not a config group: the rest of the line goes
_MIN_REMEMBERED = 6  # shorter literals would blank ordinary words; the grammars still catch them

_remembered: set[str] = set()
_lock = threading.Lock()


def is_secret_name(name: str) -> bool:
    """Whether an option or field called ``name`` holds a secret.

    >>> is_secret_name("tlsCertificateKeyFilePassword"), is_secret_name("tlsCertificateKeyFile")
    (True, False)
    >>> is_secret_name("secret_key"), is_secret_name("passes"), is_secret_name("key")
    (True, False, True)
    """
    norm = _NORMAL.sub("", name.lower())
    return norm == "key" or any(w in norm for w in _SECRET_WORDS) or norm.endswith(_SECRET_ENDINGS)


def remember(*secrets: str | None) -> None:
    """Literal secrets this process was handed (a password from ``-p`` or a URI, a hosts file's):
    :func:`redact_text` replaces them wherever they appear, as given or lower-cased (a driver
    quotes pieces of a URI it could not parse, sometimes lower-cased)."""
    with _lock:
        for secret in secrets:
            if secret and len(secret) >= _MIN_REMEMBERED:
                _remembered.update({secret, secret.lower()})


def redact_text(text: str, marker: str = REDACTED) -> str:
    """``text`` with every secret it holds replaced by ``marker``: the boundary every string
    that leaves ckptdiag crosses (``marker`` is :data:`HTML_REDACTED` in an HTML page).

    >>> redact_text('encryption=(name=AES256-CBC,keyid="k1",secretkey:abc),"secretkey"="x"')
    'encryption=(name=AES256-CBC,keyid="<redacted>",secretkey:<redacted>),"secretkey"="<redacted>"'
    >>> redact_text("connect to mongodb://u:pa/ss?w#x@y@db1/?w=1 failed")
    'connect to mongodb://u:<redacted>@db1/?w=1 failed'
    """
    lower = text.lower()
    edits = sorted(_uri_edits(text, lower, marker) + _name_edits(text, lower, marker))
    if edits:
        parts: list[str] = []
        pos = 0
        for start, end, replacement in edits:
            if start < pos:
                continue  # inside a value already replaced (a group's own names)
            parts.append(text[pos:start])
            parts.append(replacement)
            pos = end
        parts.append(text[pos:])
        text = "".join(parts)
    if _remembered:
        with _lock:
            secrets = sorted(_remembered, key=len, reverse=True)
        for secret in secrets:
            if secret in text:
                text = text.replace(secret, marker)
    return text


def _uri_edits(text: str, lower: str, marker: str) -> list[tuple[int, int, str]]:
    """The credentials of every ``mongodb://`` or ``mongodb+srv://`` URI: from the scheme to the
    URI's last ``@``, whatever they hold."""
    edits: list[tuple[int, int, str]] = []
    at = lower.find("mongodb")
    while at >= 0:
        after = at + 7
        if lower.startswith("+srv", after):
            after += 4
        if lower.startswith("://", after):
            start = after + 3
            token = _URI_TOKEN.match(text, start)
            end = token.end() if token else start
            if "@" not in text[start:end]:  # a password typed with a < or a quote: to its @, if it is near
                end = _credentials_end(text, start, end)
            credentials, sign, _rest = text[start:end].rpartition("@")
            if sign:
                user, colon, _password = credentials.partition(":")
                shown = f"{_first_part(user)}:{marker}" if colon else _first_part(user)
                if shown != credentials:
                    edits.append((start, start + len(credentials), shown))
            at = lower.find("mongodb", end)
        else:
            at = lower.find("mongodb", at + 1)
    return edits


def _credentials_end(text: str, start: int, end: int) -> int:
    """Past a URI's ``@`` that the token before ``end`` did not reach: the next ``@`` in the same
    word, unless what lies between closes a string, a field or a tag (JSON, HTML)."""
    word = _WORD.match(text, start)
    at = text.find("@", end, word.end() if word else end)
    if at < 0 or _STRUCTURE.search(text, end, at):
        return end
    token = _URI_TOKEN.match(text, at)
    return token.end() if token else at + 1


def _name_edits(text: str, lower: str, marker: str) -> list[tuple[int, int, str]]:
    """The value of every ``name=value``, ``name:value`` or ``--name value`` whose name is a
    secret's, in any of its quotings (a group ``(...)`` whole)."""
    edits: list[tuple[int, int, str]] = []
    seen: set[int] = set()
    for word in _NAME_WORDS:
        at = lower.find(word)
        while at >= 0:
            edit = _name_edit(text, at, len(word), marker, seen)
            if edit is not None:
                edits.append(edit)
            at = lower.find(word, at + len(word))
    return edits


def _name_edit(text: str, at: int, size: int, marker: str, seen: set[int]) -> tuple[int, int, str] | None:
    start = at
    while start > 0 and at - start < _NAME_MAX and text[start - 1] in _NAME_CHARS:
        start -= 1
    end = at + size
    while end < len(text) and end - at < _NAME_MAX and text[end] in _NAME_CHARS:
        end += 1
    dashes = len(text[start:end]) - len(text[start:end].lstrip("-"))
    start += dashes
    if start in seen:
        return None
    seen.add(start)
    name = text[start:end].rstrip(".-")
    if not name or not (name[0].isalpha() or name[0] == "_") or not is_secret_name(name):
        return None
    end = start + len(name)
    op = _OP.match(text, end)
    if op is not None:
        close, value_at = op.group(1) or "", op.end()
    elif dashes:
        space = _SPACE_VALUE.match(text, end)
        if space is None:
            return None
        close, value_at = "", space.end()
    else:
        return None
    value_end = _value_end(text, value_at)
    quote = _quote(text[value_at:value_end])
    inner = text[value_at + len(quote) : value_end - len(quote)]
    if not inner or inner in (marker, REDACTED, HTML_REDACTED):
        return None
    if not quote and close == '"' and op is not None and ":" in op.group(2):
        quote = '"'  # a JSON key's value: still a JSON string
    return value_at, value_end, f"{quote}{marker}{quote}"


def _quote(value: str) -> str:
    """The quote a value is written in (kept around the marker: JSON stays JSON), or ""."""
    for mark in ('\\"', '"', "'", "&quot;", "&#x27;", "&#39;"):
        if len(value) >= 2 * len(mark) and value.startswith(mark) and value.endswith(mark):
            return mark
    return ""


def _value_end(text: str, start: int) -> int:
    """Where the value that begins at ``start`` ends: a balanced group, a quoted string, a word."""
    if start < len(text) and text[start] == "(":
        depth = 0
        for i in range(start, min(len(text), start + _GROUP_MAX)):
            c = text[i]
            if c == "(":
                depth += 1
            elif c == ")":
                depth -= 1
                if depth == 0:
                    return i + 1
        # unbalanced or too long: hide the rest of the line rather than guess where it ends
        newline = text.find("\n", start)
        return len(text) if newline < 0 else newline
    m = _VALUE.match(text, start)
    if m is not None and m.end() > start:
        return m.end()
    # a value that begins with what the grammar stops at: a typed <password>, or its HTML
    # spelling &lt;password&gt; (a closing tag after it is the page's, not the value's)
    m = _ANGLED.match(text, start)
    return m.end() if m else start


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


def uri_hosts(uri: str) -> str | None:
    """The hosts of a MongoDB URI (never its credentials, however malformed), or None.

    >>> uri_hosts("mongodb://mon:S41/fleet@db1:27017,db2/?replicaSet=rs0")
    'db1:27017,db2'
    """
    scheme, _credentials, _at, rest = _split(uri)
    hosts = re.match(r"^([^/?#]+)", rest) if scheme else None
    return hosts.group(1) if hosts else None


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


def uri_password(uri: str) -> str:
    """The password part of a URI's credentials ("" when none), for :func:`remember`."""
    return _split(uri)[1].partition(":")[2]


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


DOC_DEPTH = 64  # getCmdLineOpts nests 5 deep; a damaged or crafted document is cut here


def redact_doc(obj: Any, depth: int = 0) -> Any:
    """A copy of a document (getCmdLineOpts, getParameter, a config) with secret values and argv
    secrets replaced; anything nested deeper than :data:`DOC_DEPTH` is left out (None)."""
    if depth > DOC_DEPTH:
        return None
    if isinstance(obj, dict):
        return {
            k: (REDACTED if is_secret_name(str(k)) and not isinstance(v, (dict, list)) else redact_doc(v, depth + 1))
            for k, v in obj.items()
        }
    if isinstance(obj, list):
        if all(isinstance(x, str) for x in obj):
            return _redact_argv(obj)
        return [redact_doc(x, depth + 1) for x in obj]
    if isinstance(obj, str):
        return redact_text(obj)
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
                arg = f"{option}={redact_text(value)}"
        else:  # the value after --setParameter, a config string given as its own argument, a URI
            arg = redact_text(arg)
        out.append(arg)
    return out
