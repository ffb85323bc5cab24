"""The HTML report as a browser shows it: screenshots of an OK, a WARN and a CRITICAL server, of a
cluster, and of three hours opened zoomed to one checkpoint's seconds, taken with headless
Chromium, for docs/screenshots/ (looked at, then committed).

Each report is of synthetic FTDC (tests/ftdc_writer.py: mongod's own encoding, checkpoints at
known times), so that the pictures are the same on any machine. Needs Chromium
(Debian: `apt-get install chromium`; or give its path with --chromium).

    python benchmarks/html_screenshots.py [--out docs/screenshots] [--chromium /usr/bin/chromium]
"""

from __future__ import annotations

import argparse
import json
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

# three hours (buckets of 18 s), three of its 180 checkpoints stalling: the timeline zoomed to one
HOURS_CHECKPOINTS = [(30.0 + 60 * i, 32.5 + 60 * i) for i in range(180)]
HOURS = SimServer(HOURS_CHECKPOINTS, stall_ops=40.0, stall_latency_ms=80.0, stall_in=HOURS_CHECKPOINTS[20::60])
HOURS_TIMES = [float(t) for t in range(3 * 3600)]

SERVERS = {
    "ok": SimServer(CHECKPOINTS, stall_ops=1000.0, stall_latency_ms=1.2),
    "warn": SimServer(CHECKPOINTS, stall_ops=300.0, stall_latency_ms=8.0, stall_in=CHECKPOINTS[::8]),
    "critical": SimServer(CHECKPOINTS, stall_ops=40.0, stall_latency_ms=80.0),
}


def _ftdc(
    root: Path, name: str, server: SimServer, host: str = "db1", port: int = 27017, times: list[float] = TIMES
) -> Path:
    d = root / name / "diagnostic.data"
    d.mkdir(parents=True)
    write_ftdc(d / "metrics.2026-11-27T00-00-00Z-00000", server, times, host=f"{host}.example.net", port=port)
    return d


def _report(inputs: list[Path], page: Path) -> None:
    cmd = [sys.executable, "-m", "ckptdiag", "report", *map(str, inputs), "-o", str(page), "--fail-on", "never"]
    subprocess.run(cmd, check=True, capture_output=True, timeout=300)


def _shot(chromium: str, page: Path, png: Path, profile: Path, fragment: str = "") -> None:
    size = "--window-size=1280,1700"
    cmd = [chromium, *FLAGS, f"--user-data-dir={profile}", size, f"--screenshot={png}", page.as_uri() + fragment]
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
        pages["zoomed"] = ([_ftdc(root, "zoomed", HOURS, times=HOURS_TIMES)], root / "zoomed.html")
        for name, (inputs, page) in pages.items():
            _report(inputs, page)
            png = args.out / f"report-{name}.png"
            # three hours in 600 buckets, opened zoomed to every second of the first stall
            fragment = f"#closeup-{_first_stalled(page)}" if name == "zoomed" else ""
            _shot(args.chromium, page, png, root / "profile", fragment)
            print(f"{png} ({png.stat().st_size:,} bytes)")


def _first_stalled(page: Path) -> int:
    """The index of the page's first close-up of a stalled checkpoint."""
    text = page.read_text()
    raw = text.split('id="ckptdiag-timeline-data">', 1)[1].split("</script>", 1)[0]
    closeups = json.loads(raw)["closeups"]
    return next(i for i, (_, _, label) in enumerate(closeups) if label.endswith("stalled"))


if __name__ == "__main__":
    main()
