"""Property tests with a fixed budget (Hypothesis): the FTDC delta decoder's two paths agree on
every stream, damaged chunks and recordings give a result or a named error, redaction never lets
a planted secret through. ``benchmarks/fuzz_inputs.py`` runs the same properties far longer."""

from __future__ import annotations

import contextlib
import json
import struct
import zlib
from pathlib import Path

import bson
import numpy as np
import pytest
from ftdc_writer import _varint, support_archive
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from ckptdiag.errors import CkptdiagError
from ckptdiag.model.window import WHOLE
from ckptdiag.recording import read_recording
from ckptdiag.sources.ftdc import decode_chunk, decode_deltas
from ckptdiag.sources.ftdc.kernel import compiled

# derandomized and without an example database: the same cases on every CI run, no files
# written into the checkout (the long, random exploration is benchmarks/fuzz_inputs.py)
BUDGET = settings(
    max_examples=300, deadline=None, derandomize=True, database=None, suppress_health_check=[HealthCheck.too_slow]
)

needs_kernel = pytest.mark.skipif(compiled is None, reason="the compiled FTDC kernel is not built")


# streams shaped like FTDC's (varints, zero runs with counts of any size) with damage mixed in:
# raw bytes, over-long varints, counts far past the chunk, streams cut anywhere
_token = st.one_of(
    st.integers(0, 3).map(_varint),
    st.integers(0, 2**64 - 1).map(_varint),
    st.tuples(st.just(b"\x00"), st.integers(0, 2**64 - 1).map(_varint)).map(b"".join),
    st.binary(min_size=1, max_size=14),
    st.integers(10, 16).map(lambda n: b"\xff" * n),
)
_stream = st.tuples(st.lists(_token, max_size=40).map(b"".join), st.integers(0, 64)).map(
    lambda pair: pair[0][: len(pair[0]) - pair[1]] if pair[1] < len(pair[0]) else pair[0]
)


def _decode(stream: bytes, metrics: int, deltas: int, compiled_path: bool, rows: np.ndarray | None) -> object:
    try:
        out = decode_deltas(np.frombuffer(stream, dtype=np.uint8), metrics, deltas, compiled=compiled_path, rows=rows)
    except ValueError as exc:
        return ("error", str(exc))
    return out.tobytes()


@needs_kernel
@BUDGET
@given(_stream, st.integers(0, 6), st.integers(0, 8), st.data())
def test_numpy_and_kernel_decode_every_stream_alike(
    stream: bytes, metrics: int, deltas: int, data: st.DataObject
) -> None:
    rows = None
    if metrics and data.draw(st.booleans()):
        rows = np.array(sorted(data.draw(st.sets(st.integers(0, metrics - 1), max_size=metrics))), dtype=np.int64)
    assert _decode(stream, metrics, deltas, True, rows) == _decode(stream, metrics, deltas, False, rows)


REF = bson.encode({"start": 1, "serverStatus": {"a": 1, "b": {"c": 2.5, "d": True}, "s": "x"}})


@BUDGET
@given(st.binary(max_size=200), st.integers(0, 2**32 - 1), st.integers(0, 2**32 - 1), st.booleans())
def test_any_chunk_payload_decodes_or_is_a_value_error(
    tail: bytes, n_metrics: int, n_deltas: int, kernel: bool
) -> None:
    body = REF + struct.pack("<II", n_metrics, n_deltas) + tail
    for payload in (struct.pack("<I", len(body)) + zlib.compress(body), tail):
        try:
            _, values = decode_chunk(payload, compiled=kernel)
        except (ValueError, zlib.error, struct.error):
            continue
        assert values.shape == (5, n_deltas + 1)


@BUDGET
@given(st.binary(min_size=5, max_size=120))
def test_any_reference_document_walks_or_is_a_value_error(raw: bytes) -> None:
    from ckptdiag.sources.ftdc import walk_metrics

    raw = struct.pack("<i", len(raw)) + raw[4:]  # a plausible length prefix, so the walk goes in
    try:
        paths, values = walk_metrics(raw)
    except ValueError:
        return
    assert len(paths) == len(values) <= len(raw)


_LINE = st.one_of(
    st.just('{"type":"sample","seq":1,"t":1700000001.0,"mono":1.0,"m":{"ckpt.count":1.0}}'),
    st.just('{"type":"event","t":1700000002.0,"event":"gap"}'),
    st.text(max_size=60),
    st.builds(
        lambda t, v: json.dumps({"type": "sample", "t": t, "m": {"ckpt.count": v, "ops.insert": v}}),
        st.one_of(st.floats(allow_nan=False), st.integers(-(10**20), 10**20)),
        st.one_of(st.floats(allow_nan=False), st.integers(-(10**20), 10**20), st.text(max_size=3)),
    ),
)
HEADER = '{"type":"header","format":"ckptdiag-recording","format_version":1}'


@settings(
    max_examples=150,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(st.lists(_LINE, max_size=12), st.booleans(), st.booleans())
def test_any_recording_reads_or_is_a_named_error(tmp_path: Path, lines: list[str], gz: bool, columns: bool) -> None:
    import gzip

    text = "\n".join([HEADER, *lines]) + "\n"
    raw = gzip.compress(text.encode()) if gz else text.encode()
    path = tmp_path / "fuzz.jsonl"
    path.write_bytes(raw)
    try:
        rec = read_recording(path, columns=columns)
        rec.to_frame()
    except CkptdiagError as exc:
        assert exc.message


# a password of any characters, typed escaped or not; a user name likewise
# (marked, so that no secret is by chance a piece of the text around it, such as "<redacted>")
_secret = st.text(alphabet=st.characters(min_codepoint=33, max_codepoint=0x2FF), min_size=4, max_size=24).map(
    lambda s: "Q7" + s
)


@BUDGET
@given(
    st.from_regex(r"[a-z][a-z0-9._-]{0,10}", fullmatch=True),
    _secret,
    st.booleans(),
    st.sampled_from(["", "/", "/?w=1", "/admin?authSource=admin&tls=true"]),
)
def test_no_uri_redaction_ever_shows_the_password(user: str, password: str, escape: bool, tail: str) -> None:
    from urllib.parse import quote

    from ckptdiag.guard.redact import REDACTED, redact_uri

    typed = quote(password, safe="") if escape else password
    shown = redact_uri(f"mongodb://{user}:{typed}@db1.example.net:27017{tail}")
    assert password not in shown and typed not in shown
    assert shown == REDACTED or shown.startswith(f"mongodb://{user}:{REDACTED}@")


@BUDGET
@given(
    _secret.filter(lambda s: not set(s) & set(',()="\\ ')), st.sampled_from(["secretkey", "keyid", "ldapQueryPassword"])
)
def test_no_config_or_argv_redaction_ever_shows_the_secret(secret: str, name: str) -> None:
    from ckptdiag.guard.redact import redact_doc

    config = f"cache_size=1G,encryption=(name=AES256-CBC,{name}={secret}),eviction_target=80"
    doc = {
        "argv": [
            "mongod",
            "--setParameter",
            f"{name}={secret}",
            f"--setParameter={name}={secret}",
            f"--wiredTigerEngineConfigString={config}",
        ],
        "parsed": {
            "setParameter": {name: secret},
            "storage": {"wiredTiger": {"engineConfig": {"configString": config}}},
        },
    }
    assert secret not in repr(redact_doc(doc))


# every spelling a secret comes in, as a format string over the name and the value
_SPELLINGS = (
    "{n}={v}",
    "{n}:{v}",
    "{n} = {v}",
    '"{n}"="{v}"',
    '"{n}":"{v}"',
    '"{n}": "{v}"',
    "'{n}'='{v}'",
    '\\"{n}\\"=\\"{v}\\"',  # inside a JSON string
    '{n}=\\"{v}\\"',
    "&quot;{n}&quot;=&quot;{v}&quot;",  # inside an HTML page
    "{n}=&quot;{v}&quot;",
    "--{n} {v}",
    "--{n}={v}",
    "encryption=({n}={v},name=AES256-CBC)",
    "{n}=(local=(key={v}))",
    "{n}:\n  {v}",
)
_NAMES = st.sampled_from(
    [
        "secretkey",
        "keyid",
        "SecretKey",
        "ldapQueryPassword",
        "ldapBindPassword",
        "tlsCertificateKeyFilePassword",
        "kmipClientCertificatePassword",
        "password",
        "pwd",
        "awsSessionToken",
        "kmsProviders",
        "security.kmip.clientCertificatePassword",
    ]
)
_AROUND = st.text(alphabet=st.characters(codec="utf-8", exclude_characters="\x00"), max_size=40)


@BUDGET
@given(
    _NAMES,
    _secret.filter(lambda s: not set(s) & set(",()=\"\\' \n\t&;{}[]<>:=") and len(s) >= 3),
    st.sampled_from(_SPELLINGS),
    _AROUND,
    _AROUND,
    st.sampled_from(["<redacted>", "&lt;redacted&gt;"]),
)
def test_the_boundary_redactor_hides_every_spelling_of_a_secret(
    name: str, secret: str, spelling: str, before: str, after: str, marker: str
) -> None:
    """Property: whatever surrounds it, a secret written in any of WiredTiger's, MongoDB's, JSON's,
    HTML's or a command line's spellings never passes redact_text; and redacting twice changes
    nothing more."""
    from ckptdiag.guard.redact import redact_text

    text = f"{before} {spelling.format(n=name, v=secret)} {after}"
    shown = redact_text(text, marker)
    assert secret not in shown.replace(before, "").replace(after, ""), (text, shown)
    assert redact_text(shown, marker) == shown


@pytest.mark.parametrize(
    "spelling",
    ["{n}=<{v}>", "{n}: <{v}>", "--{n} <{v}>", "--{n}=<{v}>", "--{n} &lt;{v}&gt;", "<td>{n}=&lt;{v}&gt;</td>"],
)
@pytest.mark.parametrize("marker", ["<redacted>", "&lt;redacted&gt;"])
def test_a_secret_typed_in_angle_brackets_is_hidden_too(spelling: str, marker: str) -> None:
    """A password that begins with < (or its HTML spelling &lt;) is still the password: the value
    grammar stops at < for the pages' tags, so such a value was passed over whole."""
    from ckptdiag.guard.redact import redact_text

    text = "ckptdiag record -u mon " + spelling.format(n="password", v="hunter2x") + " -d 10m"
    shown = redact_text(text, marker)
    assert "hunter2x" not in shown and marker in shown, shown
    assert redact_text(shown, marker) == shown
    assert shown.endswith(("</td> -d 10m", " -d 10m"))


@BUDGET
@given(_secret, st.sampled_from(["/", "?", "#", "@", ":", "%", " x"]), _AROUND)
def test_the_boundary_redactor_hides_a_uris_password_however_malformed(secret: str, bad: str, around: str) -> None:
    from ckptdiag.guard.redact import redact_text

    password = f"{secret}{bad}{secret[::-1]}"
    if any(c.isspace() for c in password):
        password = password.split()[0]
    text = f"{around} connect to mongodb://mon:{password}@db1:27017,db2/?authSource=admin failed {around}"
    shown = redact_text(text)
    assert password not in shown.replace(around, "")


def test_the_boundary_redactor_changes_no_real_report() -> None:
    """No false secret: every report ckptdiag renders of the shared real data, in every format,
    is the same text before and after the redactor (a field called "passes", a word "token", a
    metric's name, an index's key pattern are not secrets); the JSON stays JSON."""
    from conftest import SHARED_DATA

    from ckptdiag.guard.redact import HTML_REDACTED, REDACTED, redact_text
    from ckptdiag.report.document import render_json, to_document
    from ckptdiag.report.formats import render
    from ckptdiag.report.html_page import render_html
    from ckptdiag.report.markdown import render_markdown
    from ckptdiag.workflows.logs import log_only_report
    from ckptdiag.workflows.report import diagnose_window

    ftdc = sorted((SHARED_DATA / "ftdc").glob("*metrics.*"))[:3]
    logs = sorted((SHARED_DATA / "logs" / "mtools").glob("*.log"))[:3]
    if not ftdc and not logs:
        pytest.skip("shared data not available")
    texts: list[tuple[str, str]] = []
    for path in ftdc:
        with contextlib.suppress(CkptdiagError):
            report = diagnose_window((path,))
            texts += [(render_json(to_document(report)), REDACTED), (render_markdown(report), REDACTED)]
            texts.append((render_html(report), HTML_REDACTED))
    for path in logs:
        with contextlib.suppress(CkptdiagError):
            log_report = log_only_report((path,), WHOLE)
            texts += [(render(log_report, "json"), REDACTED), (render(log_report, "md"), REDACTED)]
            texts.append((render(log_report, "html"), HTML_REDACTED))
    assert texts
    for text, marker in texts:
        assert redact_text(text, marker) == text
    for text, _ in texts[::3]:
        json.loads(text)


# ---- every other input kind: logs, archives, hosts files, live replies ----------------------------

_LOG_LINES = (
    b'{"t":{"$date":"2026-11-01T00:00:01.000Z"},"s":"I","c":"STORAGE","id":22430,"ctx":"Checkpointer",'
    b'"msg":"WiredTiger message","attr":{"message":"saving checkpoint snapshot min: 1"}}',
    b'{"t":{"$date":"2026-11-01T00:00:02.000Z"},"s":"I","c":"COMMAND","id":51803,"ctx":"conn1",'
    b'"msg":"Slow query","attr":{"type":"command","ns":"a.b","command":{"insert":"b"},"durationMillis":150,'
    b'"locks":{"Global":{"timeAcquiringMicros":{"w":1000}}},"planSummary":"IXSCAN { a: 1 }"}}',
    b'2019-06-18T11:58:58.391+0100 I COMMAND  [conn1] command a.b command: find { find: "b", filter: '
    b'{ x: "command: 4111" } } planSummary: IXSCAN { a: 1 } locks:{ Global: { timeAcquiringMicros: { r: 9 } } } 150ms',
    b"2019-06-18T11:58:59.391+0100 I STORAGE  [WTCheckpointThread] Checkpoint took 3 seconds",
)


@settings(max_examples=120, deadline=None, derandomize=True, database=None, suppress_health_check=list(HealthCheck))
@given(
    st.lists(st.sampled_from(_LOG_LINES), min_size=1, max_size=30),
    st.lists(st.tuples(st.integers(0, 10_000), st.integers(0, 255)), max_size=6),
    st.booleans(),
    st.floats(0.1, 1.0),
)
def test_any_log_reads_or_is_a_named_error(
    tmp_path_factory: pytest.TempPathFactory, lines: list[bytes], flips: list[tuple[int, int]], gz: bool, keep: float
) -> None:
    """Logs of either format with bytes changed, and gzip logs cut anywhere: a report or a
    named error, never anything else."""
    import gzip

    from ckptdiag.workflows.logs import log_only_report

    blob = bytearray(b"\n".join(lines) + b"\n")
    for at, value in flips:
        blob[at % len(blob)] = value
    data = gzip.compress(bytes(blob)) if gz else bytes(blob)
    path = tmp_path_factory.mktemp("log") / ("mongod.log.gz" if gz else "mongod.log")
    path.write_bytes(data[: max(1, int(len(data) * keep))])
    with contextlib.suppress(CkptdiagError):
        log_only_report((path,), WHOLE)


@settings(max_examples=80, deadline=None, derandomize=True, database=None, suppress_health_check=list(HealthCheck))
@given(
    st.sampled_from(["zip", "tar.gz"]),
    st.lists(st.tuples(st.integers(0, 100_000), st.integers(0, 255)), max_size=8),
    st.floats(0.05, 1.0),
)
# a byte in a zip member's name set to NUL: no file system takes the name (found by a newer hypothesis)
@example(kind="zip", flips=[(30, 0)], keep=0.5)
@example(kind="zip", flips=[(14633, 0)], keep=0.5)
def test_any_archive_unpacks_or_is_a_named_error(
    tmp_path_factory: pytest.TempPathFactory, kind: str, flips: list[tuple[int, int]], keep: float
) -> None:
    """A support download with bytes changed or cut anywhere: what can be read is taken out (within
    the bound), or a named error."""
    from ckptdiag.errors import InputError
    from ckptdiag.sources import archives

    d = tmp_path_factory.mktemp("arch")
    blob = bytearray(support_archive(d, kind))
    for at, value in flips:
        blob[at % len(blob)] = value
    path = d / f"support.{kind}"
    path.write_bytes(bytes(blob[: max(1, int(len(blob) * keep))]))
    try:
        out = archives.unpack(path, d / "scratch")
    except InputError:
        return
    written = sum(p.stat().st_size for p in (d / "scratch").rglob("*") if p.is_file())
    assert written <= max(archives.FLOOR_BYTES, archives.RATIO * path.stat().st_size)
    assert out.taken <= 2


@BUDGET
@given(st.text(max_size=300))
def test_any_hosts_file_reads_or_is_a_named_error(tmp_path_factory: pytest.TempPathFactory, text: str) -> None:
    from ckptdiag.workflows.fleet import read_hosts

    path = tmp_path_factory.mktemp("hosts") / "hosts.txt"
    path.write_text(text, encoding="utf-8")
    try:
        hosts = read_hosts(path)
    except CkptdiagError:
        return
    for host in hosts:
        assert "@" not in host.name  # never the credentials


_JSONISH = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**70), 2**70)
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text(max_size=8),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4),
    max_leaves=30,
)
_SECTIONS = st.sampled_from(["opcounters", "wiredTiger", "opLatencies", "metrics", "connections", "localTime", "repl"])


@BUDGET
@given(st.dictionaries(_SECTIONS, _JSONISH, max_size=6), st.data())
def test_any_reply_is_a_sample_or_a_gap(reply: dict, data: st.DataObject) -> None:  # type: ignore[type-arg]
    """Property: a serverStatus reply of any shape (sections of the wrong type, NaN, 70-bit
    integers, deep nesting) becomes a sample that is valid JSON, or raises only what the sampler
    turns into a gap with its reason."""
    from fakes import status_doc

    from ckptdiag.recording import build_sample

    doc = {**status_doc(3), **reply}
    try:
        sample = build_sample(doc, seq=0, wall=1.0, mono=1.0, rtt_ms=1.0)
    except (ValueError, TypeError, KeyError, OverflowError, RecursionError):
        return  # the sampler's gap (recorder._take)
    json.dumps(sample, allow_nan=False, default=str)
