"""The HTML report as a browser shows it: screenshots of an OK, a WARN and a CRITICAL server and
of a cluster, taken with headless Chromium, for docs/screenshots/ (looked at, then committed).

Each report is of synthetic FTDC (tests/ftdc_writer.py: mongod's own encoding, checkpoints at
known times), so that the pictures are the same on any machine. Needs Chromium
(Debian: `apt-get install chromium`; or give its path with --chromium).

    python benchmarks/html_screenshots.py [--out docs/screenshots] [--chromium /usr/bin/chromium]
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))

from ftdc_writer import SimServer, write_ftdc  # noqa: E402  (the tests' FTDC writer)

CHECKPOINTS = [(30.0 + 60 * i, 32.5 + 60 * i) for i in range(24)]
TIMES = [float(t) for t in range(0, 1500)]
# Chromium, as the reference machine's closed network wants it: no background connections
FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--hide-scrollbars",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
)

SERVERS = {
    "ok": SimServer(CHECKPOINTS, stall_ops=1000.0, stall_latency_ms=1.2),
    "warn": SimServer(CHECKPOINTS, stall_ops=300.0, stall_latency_ms=8.0, stall_in=CHECKPOINTS[::8]),
    "critical": SimServer(CHECKPOINTS, stall_ops=40.0, stall_latency_ms=80.0),
}


def _ftdc(root: Path, name: str, server: SimServer, host: str = "db1", port: int = 27017) -> Path:
    d = root / name / "diagnostic.data"
    d.mkdir(parents=True)
    write_ftdc(d / "metrics.2026-11-27T00-00-00Z-00000", server, TIMES, host=f"{host}.example.net", port=port)
    return d


def _report(inputs: list[Path], page: Path) -> None:
    cmd = [sys.executable, "-m", "ckptdiag", "report", *map(str, inputs), "-o", str(page), "--fail-on", "never"]
    subprocess.run(cmd, check=True, capture_output=True, timeout=300)


def _shot(chromium: str, page: Path, png: Path, profile: Path) -> None:
    size = "--window-size=1280,1700"
    cmd = [chromium, *FLAGS, f"--user-data-dir={profile}", size, f"--screenshot={png}", page.as_uri()]
    subprocess.run(cmd, check=True, capture_output=True, timeout=120)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", type=Path, default=REPO / "docs" / "screenshots")
    parser.add_argument("--chromium", default=shutil.which("chromium") or shutil.which("chromium-browser"))
    args = parser.parse_args()
    if not args.chromium:
        raise SystemExit("no Chromium: apt-get install chromium, or give --chromium PATH")
    args.out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        pages = {name: ([_ftdc(root, name, server)], root / f"{name}.html") for name, server in SERVERS.items()}
        members = [
            _ftdc(
                root / "cluster",
                f"db{i + 1}",
                SimServer(CHECKPOINTS, primary=i == 0, secondary=i > 0, stall_ops=ops),
                host=f"db{i + 1}",
                port=27017 + i,
            )
            for i, ops in enumerate((1000.0, 60.0, 1000.0))
        ]
        pages["cluster"] = (members, root / "cluster.html")
        for name, (inputs, page) in pages.items():
            _report(inputs, page)
            png = args.out / f"report-{name}.png"
            _shot(args.chromium, page, png, root / "profile")
            print(f"{png} ({png.stat().st_size:,} bytes)")


if __name__ == "__main__":
    main()
