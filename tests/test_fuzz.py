"""Property tests with a fixed budget (Hypothesis): the FTDC delta decoder's two paths agree on
every stream, damaged chunks and recordings give a result or a named error, redaction never lets
a planted secret through. ``benchmarks/fuzz_inputs.py`` runs the same properties far longer."""

from __future__ import annotations

import json
import struct
import zlib
from pathlib import Path

import bson
import numpy as np
import pytest
from ftdc_writer import _varint
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ckptdiag.errors import CkptdiagError
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

    from ckptdiag.redact import REDACTED, redact_uri

    typed = quote(password, safe="") if escape else password
    shown = redact_uri(f"mongodb://{user}:{typed}@db1.example.net:27017{tail}")
    assert password not in shown and typed not in shown
    assert shown == REDACTED or shown.startswith(f"mongodb://{user}:{REDACTED}@")


@BUDGET
@given(
    _secret.filter(lambda s: not set(s) & set(',()="\\ ')), st.sampled_from(["secretkey", "keyid", "ldapQueryPassword"])
)
def test_no_config_or_argv_redaction_ever_shows_the_secret(secret: str, name: str) -> None:
    from ckptdiag.redact import redact_doc

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
