"""The architecture's contracts (``[tool.importlinter]`` in pyproject.toml): kept by the code, and able to break.

``make test`` runs ``lint-imports`` before the suite; these tests check that
each contract is configured to catch what it forbids, by running
``lint-imports`` with the repository's configuration on a copy of the package
with one violation put in.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import pytest_probability

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = Path(pytest_probability.__file__).resolve().parent
LINT = Path(sys.executable).with_name("lint-imports")

pytestmark = pytest.mark.skipif(
    not LINT.exists(), reason="import-linter is a test dependency: pip install -e '.[test]'"
)


def lint(package_parent: Path | None = None) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, COLUMNS="240")  # wide enough that no module path is wrapped in the report
    if package_parent is not None:
        env["PYTHONPATH"] = str(package_parent)  # before the editable install's src/ on sys.path
    return subprocess.run(
        [str(LINT), "--no-cache", str(ROOT / "pyproject.toml")],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_the_code_keeps_every_contract() -> None:
    result = lint()
    assert result.returncode == 0, result.stdout + result.stderr
    assert "5 kept, 0 broken" in result.stdout


@pytest.mark.parametrize(
    ("module", "added", "contract", "shown"),
    [
        (
            "decide/book.py",
            "from ..report import terminal\n",
            "Stages in the order data flows",
            "pytest_probability.decide.book -> pytest_probability.report.terminal",
        ),
        (
            "run/context.py",
            "def _late_import():\n    from . import phases\n",
            "No import circles",
            ".context -> .phases",
        ),
        (
            "decide/analysis.py",
            "from ..otel import resource\n",
            "The core never imports the exporter",
            "pytest_probability.decide.analysis -> pytest_probability.otel.resource",
        ),
        (
            "report/history.py",
            "from .json_report import _compact\n",
            "No module uses another module's private names",
            "pytest_probability.report.history:",
        ),
        (
            "report/history.py",
            "def _peek():\n    return html_report._unused\n",
            "No module uses another module's private names",
            "return html_report._unused",
        ),
        (
            "features/shards/merge.py",
            "def _compare():\n    from ..compare import comparisons\n",
            "Feature packages are independent",
            "pytest_probability.features.shards is not allowed to import",
        ),
        (
            "decide/results.py",
            "def _journal():\n    from ..features.journal import journal_file\n",
            "Stages in the order data flows",
            "pytest_probability.decide.results -> pytest_probability.features.journal.journal_file",
        ),
        (
            "roles/serial.py",
            "def _export():\n    from ..otel import feature\n",
            "Stages in the order data flows",
            "pytest_probability.roles.serial -> pytest_probability.otel.feature",
        ),
        (
            "features/spend/facet.py",
            "def _sdk():\n    import opentelemetry.trace\n",
            "The core never imports the exporter",
            "pytest_probability.features.spend.facet -> opentelemetry",
        ),
    ],
    ids=[
        "upward import",
        "circle by a function-level import",
        "the exporter from the core",
        "a private name imported",
        "a private name read off a module",
        "a feature importing another",
        "the core importing a feature",
        "a role importing the exporter",
        "a feature importing OpenTelemetry",
    ],
)
def test_each_contract_breaks_on_what_it_forbids(
    tmp_path: Path, module: str, added: str, contract: str, shown: str
) -> None:
    copy = tmp_path / "pytest_probability"
    shutil.copytree(PACKAGE, copy, ignore=shutil.ignore_patterns("__pycache__"))
    with open(copy / module, "a", encoding="utf-8") as handle:
        handle.write("\n\n" + added)
    result = lint(tmp_path)
    assert result.returncode == 1, result.stdout + result.stderr
    broken = result.stdout.split("Broken contracts", 1)[1]
    assert contract in broken and shown in broken, broken  # (an upward import makes a circle too)
