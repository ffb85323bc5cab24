"""The metric catalogue against real serverStatus documents from MongoDB 3.2 to 8.2."""

from __future__ import annotations

from pathlib import Path

import pytest
from bson import json_util
from conftest import load_status, status_files

from ckptdiag.model import catalogue
from ckptdiag.model.catalogue import CATALOGUE, CORE, Kind, coverage, eviction_state_flags, parse_version


def _doc(path: Path) -> dict:
    return dict(json_util.loads(path.read_text()))


def _wt(doc: dict) -> bool:
    return doc.get("storageEngine", {}).get("name") == "wiredTiger"


@pytest.mark.parametrize("path", status_files(), ids=lambda p: p.name.split("__")[0])
def test_every_core_metric_resolves_in_every_wiredtiger_document(path: Path) -> None:
    doc = _doc(path)
    if not _wt(doc):
        pytest.skip("not WiredTiger (covered by test_mmapv1_lacks_every_wiredtiger_metric)")
    cov = coverage(doc)
    assert cov.missing == (), f"{doc['version']} lacks metrics its version should have: {cov.missing}"
    version = parse_version(doc["version"])
    assert version is not None
    for name in CORE:
        if CATALOGUE[name].applies_to(version):
            assert name in cov.resolved, name
    # what is absent is exactly what the version is documented to lack
    for name in cov.not_in_version:
        assert not CATALOGUE[name].applies_to(version)


def test_status_documents_are_there_when_shared_data_is() -> None:
    files = status_files()
    if not files:
        pytest.skip("shared data not available")
    versions = {parse_version(_doc(p)["version"])[:2] for p in files}  # type: ignore[index]
    assert {(3, 4), (4, 4), (7, 0), (8, 0), (8, 2)} <= versions


def test_version_specific_absences() -> None:
    v70 = coverage(load_status("serverStatus_7.0.21__EP-UnaHur-2025C1+anti-social-mongo-edp.json"))
    v80 = coverage(load_status("serverStatus_8.0.10__ISEP-1190402+SEGPRD-2025.json"))
    v34 = coverage(load_status("serverStatus_3.4.6__DatabaseMasters+CrowdFundingWebsite.json"))
    # the checkpoint's per-tree work: 7.3+; its final syncs timed: 7.1+
    assert v70.not_in_version == ("ckpt.progress_state", "ckpt.trees_us", "ckpt.sync_us")
    assert v80.not_in_version == ("ckpt.running",)
    assert set(v34.not_in_version) == {
        "ckpt.progress_state",
        "ckpt.prepare_ms",  # 4.4+
        "ckpt.handles_us",  # 4.2.12+, 4.4.3+
        "ckpt.handles_walked",
        "ckpt.trees_us",
        "ckpt.hs_us",  # the history store: 4.4+
        "ckpt.sync_us",
        "cache.updates_bytes",
        "cache.hs_bytes",
        "cache.hs_disk_bytes",  # 4.2+ (the cache overflow table's), 4.4+ the history store's
        "txn.pinned_ts",  # timestamps: 3.6+
        "cache.timed_out_ops",
        "capacity.ckpt_wait_us",  # WiredTiger's capacity statistics: 4.2+
        "capacity.total_wait_us",
        "process.user_us",  # mongod's own CPU time (extra_info, getrusage): 4.2+ on Linux
        "process.system_us",
    }
    # the 7.1 move of checkpoint statistics (WT-11171) is followed
    assert v70.resolved["ckpt.recent_ms"].startswith("wiredTiger.transaction")
    assert v80.resolved["ckpt.recent_ms"] == 'wiredTiger.checkpoint["most recent time (msecs)"]'
    # tickets moved to queues.execution in 8.0
    assert v70.resolved["tickets.write.out"].startswith("wiredTiger.concurrentTransactions")
    assert v80.resolved["tickets.write.out"].startswith("queues.execution")


def test_82_app_thread_evictions_are_attempts_minus_failures() -> None:
    doc = load_status("serverStatus_8.2.10__AdilEnaanai+iwa2026.json")
    cache = doc["wiredTiger"]["cache"]
    values = catalogue.extract(doc)
    assert values["cache.app_evicted_pages"] == (
        cache["page evict attempts by application threads"] - cache["page evict failures by application threads"]
    )
    assert "pages evicted by application threads" not in cache
    assert coverage(doc).resolved["cache.app_evicted_pages"].count(" - ") == 1


def test_73_checkpoint_count_sums_api_and_compaction() -> None:
    doc = load_status("serverStatus_8.0.13__Hazimleets+AI-News-Summarizer-Sentiment-Analyzer.json")
    ck = doc["wiredTiger"]["checkpoint"]
    assert catalogue.extract(doc)["ckpt.count"] == (
        ck["number of checkpoints started by api"] + ck["number of checkpoints started by compaction"]
    )


def test_mmapv1_lacks_every_wiredtiger_metric() -> None:
    doc = load_status("serverStatus_3.2.4-mmapv1__cotramarko+exjobb.json")
    assert doc["storageEngine"]["name"] == "mmapv1"
    cov = coverage(doc)
    assert "cache.dirty_bytes" in cov.missing and "ckpt.generation" in cov.missing
    assert "ops.insert" in cov.resolved


def test_values_are_plain_numbers() -> None:
    doc = {
        "wiredTiger": {
            "cache": {"maximum bytes configured": 1.5e9, "tracked dirty bytes in the cache": 7.25},
            "transaction": {"transaction checkpoint currently running": True},
        }
    }
    values = catalogue.extract(doc)
    assert values == {"cache.max_bytes": 1500000000, "cache.dirty_bytes": 7.25, "ckpt.running": 1}
    assert type(values["cache.max_bytes"]) is int


def test_every_metric_has_unit_kind_and_description() -> None:
    names = [m.name for m in catalogue.METRICS]
    assert len(names) == len(set(names))
    for metric in catalogue.METRICS:
        assert metric.description and metric.sources
        assert isinstance(metric.kind, Kind)
    assert CATALOGUE["ckpt.total_ms"].kind is Kind.COUNTER
    assert CATALOGUE["cache.dirty_bytes"].kind is Kind.GAUGE
    assert CATALOGUE["ckpt.running"].kind is Kind.FLAG
    assert CATALOGUE["cache.eviction_state"].kind is Kind.ENUM


def test_sections_needed() -> None:
    assert catalogue.sections() == {
        "wiredTiger",
        "opcounters",
        "opLatencies",
        "globalLock",
        "connections",
        "queues",
        "uptimeMillis",
        "opcountersRepl",  # a secondary's writes
        "metrics",  # repl.apply and repl.buffer: a secondary's apply path
        "repl",  # the member's role
        "extra_info",  # mongod's own CPU time
    }


@pytest.mark.parametrize(
    ("state", "version", "flags"),
    [
        (0x000, (8, 0), ()),
        (0x004, (7, 0), ("dirty",)),
        (0x008, (8, 2), ("dirty_hard",)),
        (0x0C0, (8, 0), ("updates", "updates_hard")),
        (0x008, (6, 0), ("dirty",)),
        (0x010, (4, 4), ("dirty_hard",)),
        (0x180, (5, 0), ("updates", "updates_hard")),
        (0x180, (4, 2), ()),  # no updates modes before 4.4
        (0x003, (4, 0), ("clean", "clean_hard")),
    ],
)
def test_eviction_state_bit_layout_per_version(state: int, version: tuple[int, int], flags: tuple[str, ...]) -> None:
    assert eviction_state_flags(state, version) == flags


def test_checkpoint_running_across_versions() -> None:
    assert catalogue.checkpoint_running({"ckpt.running": 1}) is True
    assert catalogue.checkpoint_running({"ckpt.progress_state": 0}) is False
    assert catalogue.checkpoint_running({"ckpt.progress_state": 6}) is True
    assert catalogue.checkpoint_running({}) is None
