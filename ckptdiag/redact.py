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
    r"authmechanismproperties|clientkey|privatekey",
    re.I,
)


def is_secret_name(name: str) -> bool:
    """Whether an option or field called ``name`` holds a secret.

    >>> is_secret_name("tlsCertificateKeyFilePassword"), is_secret_name("tlsCertificateKeyFile")
    (True, False)
    """
    return bool(_SECRET.search(name))


def redact_uri(uri: str) -> str:
    """A MongoDB URI with its password and secret options replaced.

    >>> redact_uri("mongodb://admin:s3cr%40t@db1:27017/?authSource=admin&tlsCertificateKeyFilePassword=x")
    'mongodb://admin:<redacted>@db1:27017/?authSource=admin&tlsCertificateKeyFilePassword=%3Credacted%3E'
    """
    match = re.match(r"^(mongodb(?:\+srv)?://)([^/?#]*@)?([^/?#]*)(/[^?#]*)?(\?[^#]*)?(#.*)?$", uri)
    if not match:
        return REDACTED  # not a URI we can take apart: show nothing of it rather than a secret
    scheme, userinfo, hosts, path, query, _frag = match.groups()
    if userinfo:
        user = userinfo[:-1].split(":", 1)[0]
        userinfo = f"{user}:{REDACTED}@" if ":" in userinfo else userinfo
    if query:
        pairs = [(k, REDACTED if is_secret_name(k) else v) for k, v in parse_qsl(query[1:], keep_blank_values=True)]
        query = "?" + urlencode(pairs, quote_via=quote, safe=",:")
    return f"{scheme}{userinfo or ''}{hosts}{path or ''}{query or ''}"


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
            name, eq, _value = arg.lstrip("-").partition("=")
            if is_secret_name(name):
                if eq:
                    arg = f"{arg.split('=', 1)[0]}={REDACTED}"
                else:
                    hide_next = True
        elif "://" in arg and "@" in arg:
            arg = redact_uri(arg)
        out.append(arg)
    return out
