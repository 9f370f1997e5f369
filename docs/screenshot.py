"""Produce docs/images/html-report.png: the HTML report of the example benchmarks, as headless chromium draws it.

    .venv/bin/python docs/screenshot.py          # runs the examples 10 times, then screenshots the page

Needs Debian's chromium (.ci/run installs it). The page is the one `make demo`
writes (demo-output/report.html); this script writes its own copy first so the
picture always matches the code.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--hide-scrollbars",
)


def main() -> int:
    browser = shutil.which("chromium") or shutil.which("chromium-browser")
    if browser is None:
        print("chromium is missing: apt-get install chromium", file=sys.stderr)
        return 2
    out = ROOT / "demo-output"
    out.mkdir(exist_ok=True)
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "examples",
            "-p",
            "no:cacheprovider",
            "-q",
            "--tb=no",
            "--prob-runs=10",
            f"--prob-html={out / 'report.html'}",
        ],
        cwd=ROOT,
        check=False,
        capture_output=True,
        timeout=600,
    )
    target = ROOT / "docs" / "images" / "html-report.png"
    target.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="prob-chromium-") as profile:
        subprocess.run(
            [
                browser,
                *FLAGS,
                f"--user-data-dir={profile}",
                "--window-size=1280,1400",
                f"--screenshot={target}",
                (out / "report.html").as_uri(),
            ],
            check=True,
            capture_output=True,
            timeout=120,
        )
    print(f"wrote {target.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
