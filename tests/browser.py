"""A page in a real headless chromium: the DOM after its scripts ran, and chromium's log.

Without chromium a test that needs it skips, naming the Debian package; with ``CI`` set it fails instead.
"""

from __future__ import annotations

import html.parser
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

CHROMIUM_FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-default-apps",
    "--disable-extensions",
)


def chromium() -> str:
    for name in ("chromium", "chromium-browser"):
        path = shutil.which(name)
        if path:
            return path
    if os.environ.get("CI"):
        pytest.fail("chromium is missing (Debian package chromium; .ci/run installs it)")
    pytest.skip("chromium is missing: apt-get install chromium (Debian package chromium)")


def dump_dom(page: Path) -> tuple[str, str]:
    """The DOM after scripts ran, and chromium's log (console messages go to it)."""
    binary = chromium()
    with tempfile.TemporaryDirectory(prefix="prob-chromium-") as profile:
        done = subprocess.run(
            [
                binary,
                *CHROMIUM_FLAGS,
                f"--user-data-dir={profile}",
                "--enable-logging=stderr",
                "--v=0",
                "--virtual-time-budget=2000",
                "--dump-dom",
                page.as_uri(),
            ],
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout, done.stderr


class Body(html.parser.HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.body: dict[str, str] = {}
        self.tags: list[tuple[str, dict[str, str]]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = {k: v or "" for k, v in attrs}
        self.tags.append((tag, values))
        if tag == "html":
            self.body = values


def parse(text: str) -> Body:
    parser = Body()
    parser.feed(text)
    return parser
