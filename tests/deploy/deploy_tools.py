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
from pathlib import Path

import pytest
import yaml

#: tool -> the Debian package that has it. The servers the tests run are not
#: here: they are the releases of compose.yaml, built by `make backends`
#: (backends.py).
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
    msg = f"{name} is not installed (Debian: apt-get install -y --no-install-recommends {package})"
    if in_ci():
        pytest.fail(f"{msg}; CI is set, so this is an error, not a skip", pytrace=False)
    pytest.skip(msg)


def run(cmd, cwd=None, timeout=300) -> subprocess.CompletedProcess:
    return subprocess.run([str(c) for c in cmd], cwd=cwd, capture_output=True, text=True, timeout=timeout)


def tool_version(path: str) -> str:
    out = run([path, "--version"])
    m = re.search(r"version (\S+)", out.stdout + out.stderr)
    return m.group(1) if m else "unknown"


# Keys that only Prometheus 3's configuration knows. An older promtool (Debian
# 12 ships 2.42) rejects them; the config check then runs on a copy without
# them, and a Prometheus 2.x server is started with that copy. Everything else
# must pass as written.
PROMETHEUS3_ONLY_SECTIONS = ("otlp",)


def _find_key(tree, key, path=()):
    if isinstance(tree, dict):
        for k, v in tree.items():
            if k == key:
                yield path + (k,)
            yield from _find_key(v, key, path + (k,))
    elif isinstance(tree, list):
        for i, v in enumerate(tree):
            yield from _find_key(v, key, path + (i,))


def accepted_prometheus_config(promtool: str, cfg: dict, path: Path) -> tuple[dict, list[str], str]:
    """Write ``cfg`` to ``path`` and run `promtool check config` on it.

    If this promtool predates Prometheus 3 and rejects a Prometheus-3-only key
    (under PROMETHEUS3_ONLY_SECTIONS), that key is removed and the check runs
    again; any other rejection fails the test. Returns the accepted config (as
    written to ``path``), the dotted paths removed, and promtool's output.
    """
    stripped: list[str] = []
    for _ in range(20):
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(yaml.safe_dump(cfg, sort_keys=False))
        out = run([promtool, "check", "config", path])
        text = out.stdout + out.stderr
        if out.returncode == 0:
            return cfg, stripped, text
        unknown = re.findall(r"field (\w+) not found in type [\w.]+", text)
        assert unknown, text
        for key in unknown:
            paths = [p for p in _find_key(cfg, key) if p[0] in PROMETHEUS3_ONLY_SECTIONS]
            assert paths, (
                f"promtool {tool_version(promtool)} rejects {key!r}, which is not a Prometheus-3-only setting:\n{text}"
            )
            for p in paths:
                parent = cfg
                for k in p[:-1]:
                    parent = parent[k]
                del parent[p[-1]]
                stripped.append(".".join(map(str, p)))
    pytest.fail(f"promtool check config kept failing:\n{text}")
