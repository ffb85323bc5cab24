"""Support downloads as archives: damage costs only the part it touches, and what is written to
the scratch folder is bounded by the archive's own size."""

from __future__ import annotations

import io
import tarfile
import zipfile
from pathlib import Path

import pytest
from conftest import run_cli
from ftdc_writer import SimServer, write_ftdc

from ckptdiag.errors import InputError
from ckptdiag.sources import archives

NAME = "host{n}/diagnostic.data/metrics.2026-11-01T0{n}-00-00Z-00000"


def _ftdc_bytes(tmp_path: Path, n: int) -> bytes:
    path = tmp_path / f"m{n}"
    write_ftdc(path, SimServer(checkpoints=[(30, 32)]), [float(i) for i in range(200)])
    return path.read_bytes()


def _tar(tmp_path: Path, members: list[tuple[str, bytes]]) -> Path:
    path = tmp_path / "support.tar.gz"
    with tarfile.open(path, "w:gz") as tar:
        for name, body in members:
            info = tarfile.TarInfo(name)
            info.size = len(body)
            tar.addfile(info, io.BytesIO(body))
    return path


def test_an_archive_cut_short_is_read_up_to_the_cut(tmp_path: Path) -> None:
    members = [(NAME.format(n=n), _ftdc_bytes(tmp_path, n)) for n in range(3)]
    whole = _tar(tmp_path, members)
    cut = tmp_path / "cut.tar.gz"
    cut.write_bytes(whole.read_bytes()[: int(whole.stat().st_size * 0.95)])
    out = archives.unpack(cut, tmp_path / "scratch")
    assert out.taken >= 2 and any("read up to there" in n or "cannot be read whole" in n for n in out.notes)
    proc = run_cli("report", str(cut), "-f", "json", "--fail-on", "never")
    assert proc.returncode == 0, proc.stderr
    assert "ckptdiag: note:" in proc.stderr and "unexpected" not in proc.stderr


def test_a_name_given_twice_is_read_once_and_named(tmp_path: Path) -> None:
    body = _ftdc_bytes(tmp_path, 0)
    path = _tar(tmp_path, [(NAME.format(n=0), body), (NAME.format(n=0), b"\0" * 100)])
    out = archives.unpack(path, tmp_path / "scratch")
    assert out.taken == 1 and any("appears more than once: the first copy was read" in n for n in out.notes)
    assert (out.root / NAME.format(n=0)).read_bytes() == body


def _zip_with_flag(tmp_path: Path, *, encrypted: bool = False, method: int | None = None) -> Path:
    """A zip of two FTDC files whose first member is marked encrypted, or compressed by an
    unknown method (99: AES), in both its local header and the central directory."""
    path = tmp_path / "support.zip"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_STORED) as z:
        for n in range(2):
            z.writestr(NAME.format(n=n), _ftdc_bytes(tmp_path, n))
    raw = bytearray(path.read_bytes())
    for sig, flag_at, method_at in ((b"PK\x03\x04", 6, 8), (b"PK\x01\x02", 8, 10)):
        at = raw.find(sig)  # the first member's headers
        if encrypted:
            raw[at + flag_at] |= 1
        if method is not None:
            raw[at + method_at : at + method_at + 2] = method.to_bytes(2, "little")
    path.write_bytes(bytes(raw))
    return path


@pytest.mark.parametrize(("encrypted", "method"), [(True, None), (False, 99)], ids=["encrypted", "method-99"])
def test_an_unreadable_zip_member_is_skipped_with_a_note(tmp_path: Path, encrypted: bool, method: int | None) -> None:
    path = _zip_with_flag(tmp_path, encrypted=encrypted, method=method)
    out = archives.unpack(path, tmp_path / "scratch")
    assert out.taken == 1 and any("cannot be read whole" in n for n in out.notes)
    proc = run_cli("report", str(path), "-f", "json", "--fail-on", "never")
    assert proc.returncode == 0 and "unexpected" not in proc.stderr, proc.stderr


def test_a_damaged_zip_is_a_one_line_error(tmp_path: Path) -> None:
    path = tmp_path / "support.zip"
    path.write_bytes(b"PK\x03\x04" + b"\xff" * 200)
    proc = run_cli("report", str(path))
    assert proc.returncode == 1 and proc.stderr.startswith("ckptdiag: error:") and "unexpected" not in proc.stderr
    assert proc.stderr.count("\n") == 1


def test_what_an_archive_writes_is_bounded_by_its_own_size(tmp_path: Path) -> None:
    """A small zip of zeros (a bomb) is stopped at RATIO times its size (at least the floor),
    never gigabytes written to the scratch folder."""
    path = tmp_path / "bomb.zip"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z, z.open(NAME.format(n=0), "w", force_zip64=True) as m:
        for _ in range(256):
            m.write(b"\0" * (1 << 20))  # 256 MiB of zeros in a ~250 KB zip
    budget = max(archives.FLOOR_BYTES, archives.RATIO * path.stat().st_size)
    assert budget < 256 << 20
    with pytest.raises(InputError, match="limit"):
        archives.unpack(path, tmp_path / "scratch")
    written = sum(p.stat().st_size for p in (tmp_path / "scratch").rglob("*") if p.is_file())
    assert written <= budget


def test_a_zip_cut_short_is_read_up_to_the_cut(tmp_path: Path) -> None:
    """A .zip download cut at 95 %: its directory (at the end) is gone; the members before the
    cut are read from their own headers, the cut one as far as it goes."""
    path = tmp_path / "support.zip"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        for n in range(3):
            z.writestr(NAME.format(n=n), _ftdc_bytes(tmp_path, n))
    cut = tmp_path / "cut.zip"
    cut.write_bytes(path.read_bytes()[: int(path.stat().st_size * 0.95)])
    out = archives.unpack(cut, tmp_path / "scratch")
    assert out.taken >= 2
    assert (out.root / NAME.format(n=0)).read_bytes() == _ftdc_bytes(tmp_path, 0)
    proc = run_cli("report", str(cut), "-f", "json", "--fail-on", "never")
    assert proc.returncode == 0 and "unexpected" not in proc.stderr, proc.stderr
