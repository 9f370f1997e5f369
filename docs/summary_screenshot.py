"""Produce docs/images/ci-summary.png: a night's CI summary (--prob-summary) as GitHub renders its Markdown.

    .venv/bin/python docs/summary_screenshot.py [--output DIR]    # default docs/images

Runs a small night (a failing gate, an undecided one, a flaky case, a case that dropped against last night,
a quarantined one, a case newly flaky across nights), renders the summary with markdown-it-py (CommonMark and
GFM tables, as GitHub does) into a page styled like GitHub's job summary, and screenshots it with headless
chromium (Debian's, as docs/screenshot.py).

The summary's icons are emoji, which chromium draws with the installed emoji font (Debian's
``fonts-noto-color-emoji``; naming it in the page's fonts would draw the digits and spaces with it too). A
character no installed font has (fontconfig's ``fc-list``) would be drawn as a box: the script then refuses
to draw the picture, naming the characters and the package.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
import unicodedata
from pathlib import Path

from markdown_it import MarkdownIt

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
BENCH = """
import os
import pytest

NIGHT = int(os.environ["NIGHT"])


@pytest.mark.probability(runs=20, min_rate=0.9)
@pytest.mark.parametrize("ticket", ["refund", "outage"])
def bench_triage(ticket, request):
    assert ticket == "outage" or request.node.prob_run % 4 or NIGHT < 3


@pytest.mark.probability(runs=20, min_rate=0.6)
def bench_summarise(request):
    assert request.node.prob_run <= 15


@pytest.mark.probability(runs=20)
@pytest.mark.parametrize("doc", ["invoice", "contract", "letter"])
def bench_extract(doc, request):
    if NIGHT == 3 and doc == "contract":
        assert request.node.prob_run % 3
    if doc == "letter":
        assert request.node.prob_run % 5
"""
QUARANTINE = """
[[quarantine]]
pattern = "bench_nightly.py::bench_extract::letter"
owner = "alice@example.org"
reason = "OCR fixture is flaky (PROJ-123)"
until = 2999-12-31
"""
STYLE = """body{font-family:-apple-system,BlinkMacSystemFont,"Segoe UI","Noto Sans",Helvetica,Arial,sans-serif;
font-size:14px;line-height:1.5;color:#1f2328;margin:24px;max-width:1180px}
.box{border:1px solid #d1d9e0;border-radius:6px;padding:16px 24px}
h2{font-size:1.5em;border-bottom:1px solid #d1d9e0;padding-bottom:.3em}h3{font-size:1.25em}
table{border-collapse:collapse;display:block;overflow:auto}th,td{border:1px solid #d1d9e0;padding:6px 13px}
tr:nth-child(2n){background:#f6f8fa}th{font-weight:600}a{color:#0969da;text-decoration:none}"""


def missing_glyphs(text: str) -> list[str]:
    """The characters of ``text`` that no installed font has (fontconfig's ``fc-list :charset=…``), each once:
    chromium would draw each as a box. Marks and format characters (the emoji variation selector) are left
    out: they are drawn with the character before them."""
    fc_list = shutil.which("fc-list")
    if fc_list is None:
        raise FileNotFoundError("fc-list is missing: apt-get install fontconfig")
    missing = []
    for char in sorted({c for c in text if ord(c) > 127 and unicodedata.category(c) not in ("Mn", "Me", "Cf")}):
        listed = subprocess.run(
            [fc_list, f":charset={ord(char):x}", "family"], capture_output=True, text=True, check=True, timeout=60
        )
        if not listed.stdout.strip():
            missing.append(char)
    return missing


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--output", type=Path, default=ROOT / "docs" / "images", help="where ci-summary.png and .md go")
    output = parser.parse_args(argv).output
    browser = shutil.which("chromium") or shutil.which("chromium-browser")
    if browser is None:
        print("chromium is missing: apt-get install chromium", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory(prefix="prob-summary-") as work:
        folder = Path(work)
        (folder / "bench_nightly.py").write_text(BENCH, encoding="utf-8")
        (folder / "quarantine.toml").write_text(QUARANTINE, encoding="utf-8")
        for night in (1, 2, 3):
            subprocess.run(
                [
                    sys.executable,
                    "-m",
                    "pytest",
                    "bench_nightly.py",
                    "-p",
                    "no:cacheprovider",
                    "-q",
                    "--tb=no",
                    "--prob-history=history",
                    "--prob-quarantine=quarantine.toml",
                    "--prob-otel-file=otlp.jsonl",
                    "-o",
                    "prob_trace_url=https://jaeger.example.org/trace/{trace_id}",
                    "--prob-suite=nightly",
                    "--prob-summary=summary.md",
                ],
                cwd=folder,
                check=False,
                capture_output=True,
                timeout=600,
                env={**__import__("os").environ, "NIGHT": str(night)},
            )
        text = (folder / "summary.md").read_text(encoding="utf-8")
        missing = missing_glyphs(text)
        if missing:
            shown = ", ".join(f"{c} (U+{ord(c):04X} {unicodedata.name(c, '?')})" for c in missing)
            print(
                f"no installed font has {shown}: the picture would show boxes; apt-get install fonts-noto-color-emoji",
                file=sys.stderr,
            )
            return 2
        html = MarkdownIt("commonmark").enable("table").render(text)
        page = folder / "summary.html"
        page.write_text(
            f"<!doctype html><meta charset=utf-8><style>{STYLE}</style><div class=box>{html}</div>", encoding="utf-8"
        )
        output.mkdir(parents=True, exist_ok=True)
        target = output / "ci-summary.png"
        with tempfile.TemporaryDirectory(prefix="prob-chromium-") as profile:
            subprocess.run(
                [
                    browser,
                    *FLAGS,
                    f"--user-data-dir={profile}",
                    "--window-size=1240,760",
                    f"--screenshot={target}",
                    page.as_uri(),
                ],
                check=True,
                capture_output=True,
                timeout=120,
            )
        (output / "ci-summary.md").write_text(text, encoding="utf-8")
    print(f"wrote {target}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
