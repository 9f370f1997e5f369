"""Running the external checkers (promtool, amtool) from tests/deploy.

A missing tool is a skip on a developer machine, but a failure when the
environment variable CI is set to anything non-empty: CI installs them
(Debian packages `prometheus` and `prometheus-alertmanager`), so their
absence there is a broken CI image, not a reason to pass silently.
"""
from __future__ import annotations

import os
import re
import shutil
import subprocess

import pytest

TOOLS = {
    "promtool": "prometheus",
    "amtool": "prometheus-alertmanager",
    "git": "git",
}


def in_ci() -> bool:
    return bool(os.environ.get("CI", "").strip())


def require_tool(name: str) -> str:
    path = shutil.which(name)
    if path:
        return path
    package = TOOLS[name]
    msg = (f"{name} is not installed (Debian: apt-get install -y --no-install-recommends {package})")
    if in_ci():
        pytest.fail(f"{msg}; CI is set, so this is an error, not a skip", pytrace=False)
    pytest.skip(msg)


def run(cmd, cwd=None, timeout=300) -> subprocess.CompletedProcess:
    return subprocess.run([str(c) for c in cmd], cwd=cwd, capture_output=True, text=True,
                          timeout=timeout)


def tool_version(path: str) -> str:
    out = run([path, "--version"])
    m = re.search(r"version (\S+)", out.stdout + out.stderr)
    return m.group(1) if m else "unknown"
