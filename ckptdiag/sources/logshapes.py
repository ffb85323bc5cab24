"""What of a slow operation's log line may leave it: shapes only. Names from the sets MongoDB
has ("other" else), a namespace that is one, plan summaries whose key patterns hold only index
types, and, in the legacy text format, the fields read past the operation's own documents with
every string blanked: a card number in a filter, or the words "command:" inside a value, never
become a command's name, a plan or anything else a report shows."""

from __future__ import annotations

import re

QUOTED = re.compile(r'"(?:[^"\\]|\\.)*"|\'(?:[^\'\\]|\\.)*\'')
_BRACE = re.compile(r"[{}]")
_LEADING_DOCUMENT = re.compile(r"\s*(?!planSummary\b)(?:\w+:\s*)?(?:\w+\s+)?\{")

# What a slow operation may keep of its line: names from these sets, or "other"; a namespace
# that is one; a plan summary whose key patterns hold only index types (1, -1, "hashed", ...).
KINDS = frozenset({"command", "insert", "update", "remove", "delete", "query", "getmore"})
COMMANDS = frozenset(
    {
        "abortTransaction",
        "aggregate",
        "applyOps",
        "authenticate",
        "buildInfo",
        "bulkWrite",
        "collMod",
        "collStats",
        "commitTransaction",
        "compact",
        "count",
        "create",
        "createIndexes",
        "currentOp",
        "dbStats",
        "delete",
        "distinct",
        "drop",
        "dropDatabase",
        "dropIndexes",
        "endSessions",
        "explain",
        "find",
        "findAndModify",
        "findandmodify",
        "geoNear",
        "getLastError",
        "getMore",
        "getmore",
        "hello",
        "insert",
        "isMaster",
        "ismaster",
        "killCursors",
        "killOp",
        "listCollections",
        "listDatabases",
        "listIndexes",
        "mapReduce",
        "mapreduce",
        "ping",
        "query",
        "refreshSessions",
        "remove",
        "renameCollection",
        "replSetGetStatus",
        "replSetHeartbeat",
        "replSetUpdatePosition",
        "serverStatus",
        "update",
        "validate",
    }
)
_NAMESPACE = re.compile(r"[^\s\"'$/\\.]{1,64}(?:\.[^\s\"']{1,255})?")
_PLAN_VALUE = re.compile(r'"([^"]*)"|-?\d+(?:\.\d+)?')
_INDEX_TYPES = frozenset({"hashed", "text", "2d", "2dsphere", "geoHaystack", "columnstore"})
_PLAN_MAX = 300


def shape_name(name: str, known: frozenset[str]) -> str:
    """A command's or an operation's name if it is one MongoDB has, else "other" (a line's
    crafted or damaged name is never copied)."""
    return name if name in known else "other"


def shape_ns(ns: str) -> str:
    """A namespace (``db.collection``) as it was written, or "" when it is not one."""
    return ns if _NAMESPACE.fullmatch(ns) else ""


def shape_plan(plan: str | None) -> str | None:
    """A plan summary with every value in its key patterns that is not an index type replaced
    (``IXSCAN { a: 1, b: "hashed" }`` stays; a string or number planted there does not)."""
    if plan is None:
        return None

    def value(m: re.Match[str]) -> str:
        if m.group(1) is not None:
            return m.group() if m.group(1) in _INDEX_TYPES else '"?"'
        return m.group() if m.group() in ("1", "-1") else "?"

    return _PLAN_VALUE.sub(value, plan[:_PLAN_MAX])


def past_documents(text: str) -> int:
    """Where ``text`` (strings blanked) goes on past its leading ``field: {...}`` documents,
    which hold the operation's values; its end when one is not closed (nothing after it can be
    told from a value)."""
    at = 0
    while (m := _LEADING_DOCUMENT.match(text, at)) is not None:
        depth = 0
        for brace in _BRACE.finditer(text, m.end() - 1):  # braces only: a long document is a few steps
            depth += 1 if brace.group() == "{" else -1
            if depth == 0:
                at = brace.end()
                break
        else:
            return len(text)
    return at
