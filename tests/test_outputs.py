"""The one guarded writer: every file ckptdiag writes is checked before any work and written
beside its target, renamed over it only once whole; inputs, devices, FIFOs, sockets, links and
directories are refused; stdout named any way is written as a stream."""

from __future__ import annotations

import gzip
import json
import os
import socket
import stat
import threading
import time
from pathlib import Path

import pytest
from conftest import load_status, run_cli
from fakes import status_doc
from ftdc_writer import SimServer, write_ftdc
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from synth import Server, write_recording

from ckptdiag.errors import OutputError
from ckptdiag.guard.outputs import STDOUT, StagedFile, check_target, write_text
from ckptdiag.recording import RecordingWriter, build_sample, header, read_recording


def _recording(tmp_path: Path) -> Path:
    return write_recording(Server(seconds=200).frame(), tmp_path / "r.jsonl.gz")


def _ftdc_dir(root: Path) -> Path:
    d = root / "diagnostic.data"
    d.mkdir(parents=True)
    write_ftdc(
        d / "metrics.2021-03-15T02-21-47Z-00000", SimServer(checkpoints=[(30, 32)]), [float(i) for i in range(120)]
    )
    return d


def test_a_file_two_folders_under_an_input_directory_is_refused_and_untouched(tmp_path: Path) -> None:
    support = tmp_path / "sup"
    data = _ftdc_dir(support / "h1")
    victim = next(data.iterdir())
    before = victim.read_bytes()
    proc = run_cli("report", str(support), "-f", "json", "-o", str(victim))
    assert proc.returncode == 1
    assert "is one of the inputs (inside " in proc.stderr and proc.stderr.count("\n") == 1
    assert victim.read_bytes() == before
    # a new name there too: the data's folder is never written into
    proc = run_cli("report", str(support), "-f", "json", "-o", str(data / "report.json"))
    assert proc.returncode == 1 and "lies inside the input directory" in proc.stderr
    assert not (data / "report.json").exists()
    # the same folder reached through a symlink, and the file through a hard link elsewhere
    link = tmp_path / "via"
    link.symlink_to(support)
    proc = run_cli("report", str(support), "-o", str(link / "h1" / "diagnostic.data" / victim.name))
    assert proc.returncode == 1 and victim.read_bytes() == before
    hard = tmp_path / "hard.json"
    os.link(victim, hard)
    proc = run_cli("report", str(support), "-f", "json", "-o", str(hard))
    assert proc.returncode == 1 and "one of the inputs" in proc.stderr
    assert victim.read_bytes() == before


def _fake_char_device(tmp_path: Path) -> Path:
    """A character device to write to: a node like /dev/null made here when root can (the real
    /dev/null otherwise: a user cannot replace it even if the guard were wrong)."""
    if os.geteuid() == 0:
        node = tmp_path / "null"
        try:
            os.mknod(node, stat.S_IFCHR | 0o666, os.makedev(1, 3))
            return node
        except OSError:
            pass
    return Path("/dev/null")


def test_a_device_is_refused_never_renamed_over(tmp_path: Path) -> None:
    rec = _recording(tmp_path)
    device = _fake_char_device(tmp_path)
    proc = run_cli("report", str(rec), "-f", "json", "-o", str(device))
    assert proc.returncode == 1
    assert "is a character device: ckptdiag writes only regular files" in proc.stderr
    assert stat.S_ISCHR(os.lstat(device).st_mode)
    assert not any(p.name.startswith(f".{device.name}.tmp") for p in device.parent.iterdir())
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    proc = run_cli("report", str(rec), "-o", str(fifo), timeout=20)
    assert proc.returncode == 1 and "is a FIFO" in proc.stderr and stat.S_ISFIFO(os.lstat(fifo).st_mode)
    sock_path = tmp_path / "s.sock"
    with socket.socket(socket.AF_UNIX) as sock:
        sock.bind(str(sock_path))
        proc = run_cli("report", str(rec), "-o", str(sock_path))
    assert proc.returncode == 1 and "is a socket" in proc.stderr
    proc = run_cli("report", str(rec), "-o", str(tmp_path))
    assert proc.returncode == 1 and "is a directory" in proc.stderr


def test_stdout_by_any_name_is_written_as_the_stream(tmp_path: Path) -> None:
    rec = _recording(tmp_path)
    for name in ("-", "/dev/stdout", "/dev/fd/1", "/proc/self/fd/1"):
        proc = run_cli("report", str(rec), "-f", "json", "-o", name, "--fail-on", "never")
        assert proc.returncode == 0, (name, proc.stderr)
        assert json.loads(proc.stdout)["verdict"], name
    assert os.path.islink("/dev/stdout")
    # a link of one's own to this process's stdout: the stream, and the link stays a link
    link = tmp_path / "out"
    link.symlink_to("/proc/self/fd/1")
    proc = run_cli("report", str(rec), "-f", "json", "-o", str(link), "--fail-on", "never")
    assert proc.returncode == 0 and json.loads(proc.stdout)["verdict"]
    assert link.is_symlink() and os.readlink(link) == "/proc/self/fd/1"


def test_a_symlink_is_refused_and_its_target_untouched(tmp_path: Path) -> None:
    rec = _recording(tmp_path)
    precious = tmp_path / "precious.txt"
    precious.write_text("keep me\n")
    link = tmp_path / "report.json"
    link.symlink_to(precious)
    proc = run_cli("report", str(rec), "-o", str(link))
    assert proc.returncode == 1 and "is a symbolic link" in proc.stderr
    assert precious.read_text() == "keep me\n" and link.is_symlink()
    # record --overwrite through a link: refused before connecting, the target intact
    proc = run_cli("record", "--uri", "mongodb://127.0.0.1:1/?serverSelectionTimeoutMS=200", "-d", "2",
                   "-o", str(link), "--overwrite")  # fmt: skip
    assert proc.returncode == 1 and "is a symbolic link" in proc.stderr
    assert precious.read_text() == "keep me\n"


def test_record_overwrite_keeps_the_old_recording_until_the_new_one_has_a_sample(tmp_path: Path) -> None:
    old = write_recording(Server(seconds=200).frame(), tmp_path / "keep.jsonl.gz")
    before = old.read_bytes()
    proc = run_cli("record", "--uri", "mongodb://127.0.0.1:1/?serverSelectionTimeoutMS=300", "-d", "3",
                   "-o", str(old), "--overwrite", "--timeout", "0.5")  # fmt: skip
    assert proc.returncode == 1, proc.stderr
    assert old.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["keep.jsonl.gz"]  # no temporary file left


def test_a_recording_takes_its_name_only_with_its_first_sample(tmp_path: Path) -> None:
    path = tmp_path / "r.jsonl.gz"
    old = b"an old recording"
    path.write_bytes(old)
    w = RecordingWriter(path, overwrite=True, flush_every_s=0)
    w.write(header(source={}, server={}, options={}, disks={}, created=1.0), 0.0)
    assert path.read_bytes() == old  # a header is not a recording
    w.write(build_sample(status_doc(1), seq=0, wall=1.0, mono=1.0, rtt_ms=1.0), 0.0)
    assert w.published and path.read_bytes() != old
    w.write(build_sample(status_doc(2), seq=1, wall=2.0, mono=2.0, rtt_ms=1.0), 0.0)
    w.close()
    assert len(read_recording(path).samples) == 2
    assert [p.name for p in tmp_path.iterdir()] == ["r.jsonl.gz"]
    # never a sample: nothing takes the name, the old file stays
    other = tmp_path / "o.jsonl.gz"
    other.write_bytes(old)
    w = RecordingWriter(other, overwrite=True)
    w.write(header(source={}, server={}, options={}, disks={}, created=1.0), 0.0)
    w.close()
    assert other.read_bytes() == old and sorted(p.name for p in tmp_path.iterdir()) == ["o.jsonl.gz", "r.jsonl.gz"]


def test_a_name_taken_while_recording_is_not_overwritten(tmp_path: Path) -> None:
    path = tmp_path / "r.jsonl"
    w = RecordingWriter(path, flush_every_s=0)
    w.write(header(source={}, server={}, options={}, disks={}, created=1.0), 0.0)
    path.write_text("someone else's\n")
    with pytest.raises(OutputError, match="already exists"):
        w.write(build_sample(status_doc(1), seq=0, wall=1.0, mono=1.0, rtt_ms=1.0), 0.0)
    w.discard()
    assert path.read_text() == "someone else's\n" and [p.name for p in tmp_path.iterdir()] == ["r.jsonl"]


def test_diagnose_checks_its_report_target_before_recording(tmp_path: Path) -> None:
    started = time.monotonic()
    proc = run_cli("diagnose", "--uri", "mongodb://127.0.0.1:1", "-d", "60",
                   "-o", str(tmp_path / "no-such-dir" / "x.html"))  # fmt: skip
    assert proc.returncode == 1 and "cannot write" in proc.stderr
    assert time.monotonic() - started < 30  # not after the minute of recording
    proc = run_cli("diagnose", "--uri", "mongodb://127.0.0.1:1", "-d", "60", "-o", "/proc/x.json")
    assert proc.returncode == 1 and "error: cannot write /proc/x.json" in proc.stderr
    assert "unexpected" not in proc.stderr


def test_a_recording_is_kept_and_named_when_the_report_cannot_be_written(tmp_path: Path) -> None:
    pytest.importorskip("mockupdb")
    from wire import advancing, replay

    base = load_status("serverStatus_7.0.21__EP-UnaHur-2025C1+anti-social-mongo-edp.json")

    def step(doc: dict, n: int) -> None:  # type: ignore[type-arg]
        doc["uptimeMillis"] = int(base["uptimeMillis"]) + 1000 * n

    target = tmp_path / "x.html"
    # once checked, the target becomes a directory while recording: the write must fail
    threading.Timer(1.0, target.mkdir).start()
    with replay(base, status=advancing(step)) as server:
        proc = run_cli("diagnose", "--uri", server.uri, "-d", "3", "-o", str(target))
    assert proc.returncode == 1, proc.stderr
    kept = [line for line in proc.stderr.splitlines() if "the recording is kept:" in line]
    assert kept, proc.stderr
    path = Path(kept[0].split("the recording is kept: ")[1].split(" (")[0])
    try:
        assert len(read_recording(path).samples) >= 2
    finally:
        import shutil

        shutil.rmtree(path.parent, ignore_errors=True)


def test_read_only_targets_are_one_line_errors(tmp_path: Path) -> None:
    rec = _recording(tmp_path)
    for target in ("/proc/ckptdiag.json", "/proc/self/status", "/sys/kernel/x.md"):
        proc = run_cli("report", str(rec), "-o", target)
        assert proc.returncode == 1 and proc.stderr.startswith("ckptdiag: error: ") and "unexpected" not in proc.stderr
        assert proc.stderr.count("\n") == 1, proc.stderr
    if os.geteuid() != 0:
        ro = tmp_path / "ro"
        ro.mkdir()
        ro.chmod(0o500)
        proc = run_cli("report", str(rec), "-o", str(ro / "r.md"))
        assert proc.returncode == 1 and "cannot write" in proc.stderr


def test_a_replaced_report_keeps_its_permissions_and_never_shows_half(tmp_path: Path) -> None:
    target = tmp_path / "r.md"
    target.write_text("old\n")
    target.chmod(0o640)
    write_text(check_target(target), "new " * 100_000)
    assert target.read_text() == "new " * 100_000 and stat.S_IMODE(target.stat().st_mode) == 0o640
    assert [p.name for p in tmp_path.iterdir()] == ["r.md"]


def test_a_failed_write_leaves_the_old_file_whole(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    target = tmp_path / "r.json"
    target.write_text("old\n")
    real_fsync = os.fsync

    def full(fd: int) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "fsync", full)
    with pytest.raises(OutputError, match="No space left"):
        write_text(check_target(target), "new\n")
    monkeypatch.setattr(os, "fsync", real_fsync)
    assert target.read_text() == "old\n" and [p.name for p in tmp_path.iterdir()] == ["r.json"]


def test_staged_files_are_streams_never(tmp_path: Path) -> None:
    with pytest.raises(ValueError):
        StagedFile(STDOUT)


_KIND = st.sampled_from(["new", "file", "symlink-file", "symlink-dangling", "dir", "fifo", "input", "under-input"])


@settings(max_examples=60, deadline=None, database=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(kind=_KIND, replace=st.booleans(), depth=st.integers(0, 3))
def test_writes_never_touch_anything_but_a_new_name_or_a_regular_file(
    tmp_path_factory: pytest.TempPathFactory, kind: str, replace: bool, depth: int
) -> None:
    """Property: whatever the target is, a write either refuses it (and every file and link in
    the tree is as it was) or leaves a regular file with the new content at its name."""
    root = tmp_path_factory.mktemp("w")
    data = root / "data"
    (data / "a" / "b" / "c").mkdir(parents=True)
    deep = data.joinpath(*["a", "b", "c"][:depth])
    (deep / "metrics.1").write_bytes(b"ftdc")
    other = root / "other.txt"
    other.write_text("other")
    target = root / "t"
    if kind == "file":
        target.write_text("old")
    elif kind == "symlink-file":
        target.symlink_to(other)
    elif kind == "symlink-dangling":
        target.symlink_to(root / "nowhere")
    elif kind == "dir":
        target.mkdir()
    elif kind == "fifo":
        os.mkfifo(target)
    elif kind == "input":
        target = deep / "metrics.1"
    elif kind == "under-input":
        target = deep / "report.md"

    def snapshot() -> dict[str, tuple[int, bytes | str]]:
        out: dict[str, tuple[int, bytes | str]] = {}
        for p in sorted(root.rglob("*")):
            st_ = os.lstat(p)
            body: bytes | str = (
                os.readlink(p) if p.is_symlink() else (p.read_bytes() if stat.S_ISREG(st_.st_mode) else b"")
            )
            out[str(p)] = (stat.S_IFMT(st_.st_mode), body)
        return out

    before = snapshot()
    try:
        write_text(check_target(target, (data,), replace=replace), "new")
    except OutputError:
        assert snapshot() == before
        return
    assert kind in ("new", "file") and (replace or kind == "new")
    assert stat.S_ISREG(os.lstat(target).st_mode) and target.read_text() == "new"
    after = snapshot()
    after.pop(str(target))
    before.pop(str(target), None)
    assert after == before


def test_gzip_recording_written_through_the_guard_reads_back(tmp_path: Path) -> None:
    path = tmp_path / "r.jsonl.gz"
    w = RecordingWriter(path, flush_every_s=0)
    w.write(header(source={}, server={}, options={}, disks={}, created=1.0), 0.0)
    for i in range(3):
        w.write(build_sample(status_doc(i), seq=i, wall=1.0 + i, mono=1.0 + i, rtt_ms=1.0), 0.0)
    w.close()
    with gzip.open(path, "rt") as fh:
        assert len(fh.read().splitlines()) == 4


def test_a_hosts_files_terminal_escapes_never_reach_the_terminal(tmp_path: Path) -> None:
    hosts = tmp_path / "hosts.txt"
    hosts.write_text("db1\x1b]0;owned\x07\x1b[2J:27017\n")
    proc = run_cli("diagnose", "--hosts", str(hosts), "-d", "2", "-f", "json", "--timeout", "0.5")
    assert "\x1b" not in proc.stderr and "\x07" not in proc.stderr, proc.stderr
    assert proc.returncode in (1, 2)


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads every file: the suite runs this as a user in CI")
def test_an_unreadable_diagnostic_data_is_one_line_with_the_mongod_users_hint(tmp_path: Path) -> None:
    data = _ftdc_dir(tmp_path / "h")
    for f in data.iterdir():
        f.chmod(0o600)
        f.chmod(0o000)
    proc = run_cli("report", str(data))
    assert proc.returncode == 1 and proc.stderr.count("\n") == 1, proc.stderr
    assert "run ckptdiag as the user mongod runs as" in proc.stderr and "unexpected" not in proc.stderr
    data.chmod(0o000)
    try:
        proc = run_cli("report", str(data))
        assert proc.returncode == 1 and "run ckptdiag as the user mongod runs as" in proc.stderr, proc.stderr
    finally:
        data.chmod(0o755)
