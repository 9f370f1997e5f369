"""Fixtures of tests/deploy (see deploy_tools.py for the skip-or-fail rule on
missing tools, backends.py for the stack's programs)."""

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
def one_session(tmp_path_factory: pytest.TempPathFactory) -> dict:
    """A real nightly session of the plugin (real_export.BENCH) and one whose runs
    were all skipped, exported through the real Collector into the real
    Prometheus 3 with deploy/'s files: what Prometheus then holds
    (stack_runs.run_one_session), once per test session."""
    require_tool("git")
    from alert_path import shared
    from backends import require_backends
    from stack_runs import run_one_session

    backends = require_backends()
    return shared(tmp_path_factory, "one_session", lambda d: run_one_session(d, backends))


@pytest.fixture(scope="session")
def nightly_session(one_session: dict) -> Path:
    """The folder of that nightly session: otlp.jsonl, report.json (see real_export.py)."""
    return Path(one_session["session_dir"])


@pytest.fixture(scope="session")
def real_export(one_session: dict):
    """That session's series as Prometheus 3 stored them (stored.Stored), with its OTLP file's instruments."""
    from stored import Stored

    series = [s for s in one_session["series"] if s["labels"].get("test_suite_name") == "nightly-demo"]
    return Stored.from_json(series, Path(one_session["otlp_file"]))


@pytest.fixture(scope="session")
def skipped_export(one_session: dict):
    """The session whose runs were all skipped, as Prometheus 3 stored it."""
    from stored import Stored

    series = [s for s in one_session["series"] if s["labels"].get("test_suite_name") == "nightly-skipped"]
    return Stored.from_json(series, Path(one_session["skipped_otlp_file"]))
