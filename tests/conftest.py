"""Shared fixtures of the test suite.

Plugin behaviour is tested end to end with ``pytester``; tests that depend on
process state (OpenTelemetry, xdist) run pytest in a subprocess.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest
from sessions import CONFTEST, alarm, clean_export_env

pytest_plugins = ["otlp_fixtures"]

# A CI job of this suite on GitHub Actions must not reach its own job summary or annotations through the
# thousands of sessions the tests run (every one of them would append to $GITHUB_STEP_SUMMARY, and GitHub
# refuses a summary over 1 MiB): the tests that check them set these variables themselves.
for _name in ("GITHUB_STEP_SUMMARY", "GITHUB_ACTIONS"):
    os.environ.pop(_name, None)

#: The warm-up session's plugin: it imports every module pytest rewrites (the packages of the
#: installed pytest plugins, this one's included), so that each gets its rewritten bytecode on disk.
WARM_CONFTEST = textwrap.dedent(
    """
    import importlib
    import pkgutil


    def pytest_configure(config):
        hook = getattr(config.pluginmanager, "rewrite_hook", None)
        names = set(getattr(hook, "_must_rewrite", ())) | {"pytest_probability"}
        for name in sorted(names):
            try:
                package = importlib.import_module(name)
            except Exception:
                continue
            for module in pkgutil.walk_packages(getattr(package, "__path__", []), name + "."):
                if module.name.rsplit(".", 1)[-1] == "__main__":
                    continue
                try:
                    importlib.import_module(module.name)
                except Exception:
                    pass
    """
)


def warm_bytecode() -> None:
    """Write the bytecode that sessions in subprocesses would otherwise compile on every start.

    With ``PYTHONDONTWRITEBYTECODE=1`` (this project's machines set it) no process writes ``.pyc``
    files, so each of the suite's hundreds of subprocess sessions compiled this package and
    assertion-rewrote every installed pytest plugin's modules anew: 1.35 s per trivial session
    against 0.67 s with the bytecode on disk. One session with writing on leaves it there; the
    others keep ``PYTHONDONTWRITEBYTECODE`` and only read it (Python and pytest check each file's
    bytecode against its source, so an edited module is compiled again, never run stale). The
    benchmark files the tests write are not touched: they are compiled as before."""
    if not os.environ.get("PYTHONDONTWRITEBYTECODE"):
        return  # every process writes its own bytecode already
    env = {key: value for key, value in os.environ.items() if key != "PYTHONDONTWRITEBYTECODE"}
    env.pop("PYTEST_ADDOPTS", None)
    with tempfile.TemporaryDirectory(prefix="prob-warm-") as folder:
        Path(folder, "conftest.py").write_text(WARM_CONFTEST)
        Path(folder, "pytest.ini").write_text("[pytest]\n")
        try:
            subprocess.run(
                [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--co", folder],
                cwd=folder,
                env=env,
                capture_output=True,
                timeout=300,
                check=False,
            )
        except (OSError, subprocess.TimeoutExpired):  # only slower sessions, never a different result
            pass


@pytest.fixture
def clean_env(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch, pytester: pytest.Pytester) -> None:
    """A known environment for the test's sessions: ``sessions.clean_export_env``, with the module's
    ``CLEAN_ENV`` as its keyword arguments if it has one. A module uses it with
    ``pytestmark = pytest.mark.usefixtures("clean_env")``, or from a fixture of its own that adds to it."""
    clean_export_env(monkeypatch, pytester, **getattr(request.module, "CLEAN_ENV", {}))


@pytest.fixture
def bench(clean_env: None, request: pytest.FixtureRequest, pytester: pytest.Pytester):
    """A benchmark session's folder, with the sessions' conftest (``sessions.CONFTEST``: fixture ``n``, exact
    durations). ``bench(source, ini, name)`` writes ``pytest.ini`` (``ini`` under ``[pytest]``, else the
    module's ``BENCH_INI``) and the benchmark file ``name`` (``bench_x``), ``source`` else the module's ``BENCH``."""
    pytester.makeconftest(CONFTEST)

    def make(source: str | None = None, ini: str | None = None, name: str = "bench_x") -> None:
        pytester.makeini("[pytest]\n" + (getattr(request.module, "BENCH_INI", "") if ini is None else ini))
        pytester.makepyfile(**{name: request.module.BENCH if source is None else source})

    return make


#: How long a test under ``no_hang`` may take, in seconds, unless its module sets ``HANG_LIMIT``.
HANG_LIMIT = 120


@pytest.fixture
def no_hang(request: pytest.FixtureRequest) -> Iterator[None]:
    """Turn a hang (e.g. a gate item waiting for a verdict that never comes) into a TimeoutError in this
    test rather than a stall of the whole suite: after the module's ``HANG_LIMIT`` seconds, else 120."""
    with alarm(getattr(request.module, "HANG_LIMIT", HANG_LIMIT)):
        yield


# -- test-only oracles: each test that asks for one is skipped when it is not installed --------------------


@pytest.fixture(scope="session")
def sp_stats():
    return pytest.importorskip("scipy.stats")


@pytest.fixture(scope="session")
def sp_special():
    return pytest.importorskip("scipy.special")


@pytest.fixture(scope="session")
def proportion_confint():
    return pytest.importorskip("statsmodels.stats.proportion").proportion_confint


@pytest.fixture(scope="session")
def np():
    return pytest.importorskip("numpy")


def pytest_configure(config: pytest.Config) -> None:
    if not hasattr(config, "workerinput"):  # once, in the controller (or the serial session)
        warm_bytecode()
