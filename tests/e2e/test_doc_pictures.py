"""The documentation's picture of the CI summary shows its emoji, not missing-glyph boxes (issue 46, item 14).

The summary's icons are emoji (``features.nightly.attention.ICONS``, the heading's ✅ and ❌). Drawn without
an emoji font, each is an outlined box in the text's grey, and the picture has no colour but the links' blue;
Noto Color Emoji draws ❌ red and 🔒 gold. The committed picture is read pixel by pixel (a PNG decoder of the
standard library's zlib, below), and ``docs/summary_screenshot.py`` is run end to end into a temporary folder
(real sessions, markdown-it-py, headless chromium): its picture has those colours, and it refuses a character
no installed font has rather than drawing a box.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import struct
import subprocess
import sys
import zlib
from pathlib import Path

import pytest

from pytest_probability.features.nightly.attention import ICONS

ROOT = Path(__file__).resolve().parents[2]
PICTURE = ROOT / "docs" / "images" / "ci-summary.png"
SCRIPT = ROOT / "docs" / "summary_screenshot.py"


def read_png(data: bytes) -> tuple[int, int, int, list[bytes]]:
    """(width, height, channels, rows) of an 8-bit RGB or RGBA, non-interlaced PNG (what chromium writes)."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pos, compressed, header = 8, [], None
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos : pos + 8])
        body = data[pos + 8 : pos + 8 + length]
        pos += 12 + length
        if kind == b"IHDR":
            header = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            compressed.append(body)
        elif kind == b"IEND":
            break
    assert header is not None
    width, height, depth, colour, _, _, interlace = header
    assert depth == 8 and colour in (2, 6) and interlace == 0, header
    channels = 3 if colour == 2 else 4
    raw, stride = zlib.decompress(b"".join(compressed)), width * channels
    rows, previous, at = [], bytearray(stride), 0
    for _ in range(height):
        kind, line = raw[at], bytearray(raw[at + 1 : at + 1 + stride])
        at += 1 + stride
        for x in range(stride):
            a = line[x - channels] if x >= channels else 0
            b = previous[x]
            c = previous[x - channels] if x >= channels else 0
            if kind == 1:
                line[x] = (line[x] + a) & 255
            elif kind == 2:
                line[x] = (line[x] + b) & 255
            elif kind == 3:
                line[x] = (line[x] + (a + b) // 2) & 255
            elif kind == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[x] = (line[x] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append(bytes(line))
        previous = line
    return width, height, channels, rows


def emoji_colours(path: Path) -> dict[str, int]:
    """Pixels of ❌'s red and of 🔒's gold: the page itself has neither (grey text, blue links)."""
    width, _, channels, rows = read_png(path.read_bytes())
    found = {"red": 0, "gold": 0}
    for row in rows:
        for x in range(0, width * channels, channels):
            r, g, b = row[x], row[x + 1], row[x + 2]
            found["red"] += r > 180 and g < 100 and b < 100
            found["gold"] += r > 200 and 120 < g < 220 and b < 90
    return found


def test_the_committed_ci_summary_picture_shows_its_emoji() -> None:
    colours = emoji_colours(PICTURE)
    assert colours["red"] >= 50 and colours["gold"] >= 50, colours  # ❌ in the heading, 🔒 in the table


def summary_screenshot():
    spec = importlib.util.spec_from_file_location("summary_screenshot", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def require(program: str, package: str) -> None:
    if shutil.which(program) is None:
        message = f"{program} is missing (Debian package {package}; .ci/run installs it)"
        if os.environ.get("CI"):
            pytest.fail(message, pytrace=False)
        pytest.skip(message)


def test_the_summary_screenshot_draws_every_icon_and_refuses_a_missing_glyph(tmp_path: Path) -> None:
    require("chromium", "chromium")
    require("fc-list", "fontconfig")
    script = summary_screenshot()
    icons = "".join(ICONS.values()) + "✅❌"
    missing = script.missing_glyphs(icons)
    if missing and not os.environ.get("CI"):
        pytest.skip(f"no installed font has {missing}: apt-get install fonts-noto-color-emoji")
    assert missing == [], "no installed font has these icons: .ci/run installs fonts-noto-color-emoji"
    assert script.missing_glyphs("private use: \ue000 \U0010fffd") == ["\ue000", "\U0010fffd"]
    done = subprocess.run(
        [sys.executable, str(SCRIPT), "--output", str(tmp_path)], capture_output=True, text=True, timeout=600
    )
    assert done.returncode == 0, done.stderr
    markdown = (tmp_path / "ci-summary.md").read_text(encoding="utf-8")
    assert "❌" in markdown and "🔒" in markdown
    colours = emoji_colours(tmp_path / "ci-summary.png")
    assert colours["red"] >= 50 and colours["gold"] >= 50, colours
