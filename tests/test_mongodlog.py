"""mongod logs as evidence: both formats read, slow operations, checkpoint messages and the open
config extracted with exact counts from real logs; damaged input counted, never fatal."""

from __future__ import annotations

import gzip
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
from conftest import mongod_line, shared_path

from ckptdiag.model.logevents import LogReport
from ckptdiag.sources.logevents import extract, scan_logs
from ckptdiag.sources.mongodlog import log_files, parse_line, parse_time


def _events(path: Path):  # type: ignore[no-untyped-def]
    report = LogReport()
    return scan_logs([path], report), report


def test_a_legacy_4_0_log_gives_every_slow_operation() -> None:
    events, report = _events(shared_path("logs", "keyhole-mongod-4.0.3.log"))
    assert report.lines == 2426 and report.unparsed == 0
    # every line ending in "<n>ms": 1,969 COMMAND, and 59 WRITE: 35 remove, 24 update (grep)
    assert len(events.slow_ops) == 2028
    ops = events.slow_ops
    assert Counter(ops.names[k] for k in ops.kind) == {"command": 1969, "remove": 35, "update": 24}
    first = events.slow_ops[0]
    assert (first.command, first.ns, first.duration_ms) == ("createIndexes", "config.$cmd", 191.0)
    assert first.t == pytest.approx(1543711067.988)  # 19:37:47.988-0500 in UTC
    assert len(events.engine_opens) == 1 and len(events.starts) == 1


def test_legacy_checkpoint_durations_and_the_open_config() -> None:
    events, _ = _events(shared_path("logs", "mtools", "mtools__test__logfiles__mongod_4.0.10_slowcheckpoints.log"))
    assert [(c.kind, c.seconds) for c in events.checkpoints] == [("took", s) for s in (10.0, 9.0, 8.0, 7.0)]
    assert len(events.engine_opens) == 1 and "cache_size=7680M" in events.engine_opens[0].config
    assert len(events.slow_ops) == 72


def test_a_json_log_gzip_gives_every_slow_query_with_its_waits() -> None:
    events, report = _events(shared_path("logs", "hatchet", "logs__sample-mongod.log.gz"))
    assert report.lines == 27995 and report.unparsed == 0
    assert len(events.slow_ops) == 27429  # zcat | grep -c 'Slow query'
    assert len(events.engine_opens) == 2 and len(events.starts) == 1
    locks = events.slow_ops.waits_ms[:, 0]
    assert (~np.isnan(locks)).sum() > 0 and np.nanmin(locks) >= 0


def test_a_replica_sets_rotated_json_logs_give_checkpoint_messages_in_time_order() -> None:
    d = shared_path("logs", "public", "mew-sathita+Assignment2_ReplSet")
    files = log_files([d])
    assert [p.name.split("__")[-1] for p in files][-1] == "mongod.log"  # the live log after its rotations
    events, report = _events(d)
    assert report.lines == 1470 and report.unparsed == 0
    assert Counter(c.kind for c in events.checkpoints) == {"saving": 439}  # grep -c 'saving checkpoint snapshot'
    assert len(events.slow_ops) == 11 and len(events.engine_opens) == 3 and len(events.starts) == 3
    find = events.slow_ops[0]
    assert (find.command, find.plan, find.duration_ms) == ("find", "EOF", 447.0)
    assert find.waits.locks_ms == pytest.approx(447.216)


def test_times_with_any_offset_are_utc() -> None:
    assert parse_time("2021-12-11T06:18:10.106+07:00") == parse_time("2021-12-10T23:18:10.106Z")
    assert parse_time("2018-12-01T19:37:46.767-0500") == parse_time("2018-12-02T00:37:46.767+00:00")
    assert parse_time("yesterday") is None


def test_values_never_leave_the_line() -> None:
    attr = {
        "type": "command",
        "ns": "shop.orders",
        "command": {"find": "orders", "filter": {"email": "alice@example.com"}},
        "planSummary": "IXSCAN { email: 1 }",
        "durationMillis": 1200,
        "storage": {"data": {"timeWaitingMicros": 900000}},
        "waitForWriteConcernDurationMillis": 3,
    }
    line = mongod_line("2026-11-01T00:00:00.000Z", "COMMAND", 51803, "conn7", "Slow query", attr)
    events = extract([parse_line(line.encode())])  # type: ignore[list-item]
    assert len(events.slow_ops) == 1
    op = events.slow_ops[0]
    assert "alice" not in repr(op)
    assert (op.command, op.ns, op.plan, op.waits.storage_ms, op.waits.write_concern_ms) == (
        "find",
        "shop.orders",
        "IXSCAN { email: 1 }",
        900.0,
        3.0,
    )


def test_secrets_in_the_open_config_are_redacted(tmp_path: Path) -> None:
    path = tmp_path / "mongod.log"
    path.write_text(
        "2019-06-18T11:58:58.391+0100 I STORAGE  [initandlisten] wiredtiger_open config: "
        "create,cache_size=1G,encryption=(name=AES256-CBC,keyid=k1,secretkey=Zs3cr3t)\n"
    )
    events, _ = _events(path)
    assert "Zs3cr3t" not in events.engine_opens[0].config and "cache_size=1G" in events.engine_opens[0].config


def test_damaged_input_is_counted_never_fatal(tmp_path: Path) -> None:
    good = (
        b'{"t":{"$date":"2026-11-01T00:00:01.000Z"},"s":"I","c":"STORAGE","id":4615611,"ctx":"main",'
        b'"msg":"MongoDB starting","attr":{}}\n'
    )
    legacy = b"2026-11-01T00:00:02.000+0000 I COMMAND  [conn1] command a.b command: insert { x: 1 } 150ms\n"
    mixed = tmp_path / "mongod.log"
    mixed.write_bytes(
        good + b"\x00\xff\xfe binary junk\n" + b"x" * (10 << 20) + b"\n" + legacy + "caf\xe9\n".encode("latin-1")
    )
    events, report = _events(mixed)
    assert report.too_long == 1 and report.unparsed == 2 and report.lines == 4  # the long one is not a line
    assert len(events.starts) == 1 and len(events.slow_ops) == 1 and events.slow_ops[0].duration_ms == 150.0
    cut = tmp_path / "mongod.log.2026-11-01T00-00-00.gz"
    blob = gzip.compress(b"".join(good.replace(b"01.000Z", f"{i % 60:02d}.{i:03d}Z".encode()) for i in range(1000)))
    cut.write_bytes(blob[: len(blob) // 2])
    events, report = _events(cut)
    assert report.damaged and "read up to there" in report.damaged[0]
    assert len(events.starts) >= 100  # everything before the cut is kept


def test_startup_options_are_kept_redacted_and_rotations_come_first_in_any_order(tmp_path: Path) -> None:
    options = {"storage": {"dbPath": "/data"}, "security": {"ldap": {"bind": {"queryPassword": "Zpw9"}}}}

    def line(date: str) -> str:
        return mongod_line(date, "CONTROL", 21951, "initandlisten", "Options set by command line", {"options": options})

    live = tmp_path / "mongod.log"
    live.write_text(line("2021-12-11T06:18:08.787+07:00") + "\n")
    old = tmp_path / "mongod.log.2021-12-10T00-00-00"
    old.write_text(line("2021-12-10T00:00:00.000Z") + "\n")
    events = scan_logs([live, old])  # given live first: read rotation first all the same
    assert [t for t, _ in events.options] == sorted(t for t, _ in events.options)
    parsed = events.options[-1][1]
    assert parsed["storage"]["dbPath"] == "/data" and "Zpw9" not in repr(parsed)


def test_the_open_config_is_shown_as_the_settings_that_bear_on_checkpoints() -> None:
    """#32: ~600 characters of open config in a report line: the keys that bear on checkpoints
    are shown, the others named (statistics, verbose, ...) and kept whole in the JSON."""
    import json
    import subprocess
    import sys

    log = shared_path("logs", "keyhole-mongod-4.0.3.log")
    run = [sys.executable, "-m", "ckptdiag", "report", str(log), "--fail-on", "never", "-f"]
    text = subprocess.run([*run, "md"], capture_output=True, text=True, timeout=120).stdout
    line = next(x for x in text.splitlines() if "WiredTiger opened at" in x)
    assert "with: cache_size=512M,eviction=(threads_min=4,threads_max=4),log=(enabled=true," in line
    assert "(and 7 more: create, session_max, config_base, statistics, file_manager, statistics_log, verbose;" in line
    assert "statistics_log=(wait=0)" not in line
    doc = json.loads(subprocess.run([*run, "json"], capture_output=True, text=True, timeout=120).stdout)
    assert "statistics_log=(wait=0)" in json.dumps(doc)
