"""Fixtures for the static checks of deploy/ (see deploy_tools.py for the
skip-or-fail rule on missing tools)."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from deploy_tools import require_tool  # noqa: E402


@pytest.fixture(scope="session")
def promtool() -> str:
    return require_tool("promtool")


@pytest.fixture(scope="session")
def amtool() -> str:
    return require_tool("amtool")


@pytest.fixture(scope="session")
def nightly_session(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The folder of a real nightly session of the plugin: otlp.jsonl, report.json (see real_export.py)."""
    require_tool("git")
    from real_export import run_session

    _, otlp = run_session(tmp_path_factory.mktemp("nightly") / "bench")
    return otlp.parent


@pytest.fixture(scope="session")
def real_export(nightly_session: Path):
    """That session's export as Prometheus 3 stores it (otlp_to_prometheus.Translation)."""
    from real_export import translate_file

    return translate_file(nightly_session / "otlp.jsonl")
