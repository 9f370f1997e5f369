"""Unit tests are named after the modules they test: ``tests/unit/test_X.py`` tests ``X.py`` (or the package ``X/``)
of ``src/pytest_probability``, so that a module's tests are found by its name.

The few files that are not are listed below, each with what it covers instead: the checks of the
package's shape (layers, sizes, names, ownership), and a handful of topics that cross modules, each
stated in the file's docstring. ``test_habits_*`` files check a habit of the whole code base.
"""

from __future__ import annotations

from pathlib import Path

import pytest_probability

PACKAGE = Path(pytest_probability.__file__).resolve().parent
UNIT = Path(__file__).resolve().parent

#: Unit files named after what they check rather than one module (keep this list short).
ALLOWED = {
    # the package's shape, checked as a whole
    "test_architecture.py": "the import-linter contracts, each shown to break",
    "test_ownership.py": "no field of the session's state written outside its owner",
    "test_module_names.py": "no two modules share a name but the parallel ones",
    "test_sizes.py": "the sizes of the package's modules and of the test files",
    "test_docstring_references.py": "every dotted name in a docstring resolves",
    # topics across modules (each file's docstring says which)
    "test_planning.py": "--prob-plan: a gate's run budget (maths/run_budget.py) and an A/B's (maths/ab_planning.py)",
    "test_shard_rule.py": "the shard rule (model/case.py), --prob-shard's parser and the merged exit status",
    "test_safe_output.py": "what issue 12 found unsafe, across the JSON report, the table and the analysis",
    "test_plugin_import.py": "what importing the plugin loads, the public names, the words modules share",
    "test_otlp_receiver_and_codec.py": "the suite's own OTLP receiver (tests/otlp_receiver.py) and the OTLP codec",
    # a module's tests split by topic to stay within the test files' size (test_sizes.py)
    "test_stats_quantiles.py": "maths/stats.py's quantiles, pass^k and metrics (the rest: test_stats.py)",
}


def module_names() -> set[str]:
    """Every module's and every package's name in the package."""
    names = {path.stem for path in PACKAGE.rglob("*.py") if path.stem != "__init__"}
    return names | {path.name for path in PACKAGE.rglob("*") if path.is_dir() and (path / "__init__.py").exists()}


def misnamed(files: list[str], modules: set[str]) -> list[str]:
    """The unit test files whose ``X`` in ``test_X.py`` names no module, and that are not allowed."""
    return [
        name
        for name in sorted(files)
        if name not in ALLOWED
        and not name.startswith("test_habits_")
        and name[len("test_") : -len(".py")] not in modules
    ]


def test_every_unit_test_file_is_named_after_a_module_or_allowed() -> None:
    files = [path.name for path in UNIT.glob("test_*.py")]
    assert misnamed(files, module_names()) == []


def test_the_allow_list_names_only_files_that_exist_and_need_it() -> None:
    modules = module_names()
    for name in ALLOWED:
        assert (UNIT / name).exists(), f"{name} is allowed but does not exist: drop it from ALLOWED"
        assert name[len("test_") : -len(".py")] not in modules, f"{name} is named after a module: drop it from ALLOWED"


def test_a_file_named_after_nothing_is_found() -> None:
    modules = module_names()
    assert {"stats", "terminal", "compat", "maths"} <= modules  # modules, and packages
    assert misnamed(["test_stats.py", "test_maths.py", "test_habits_x.py", "test_sizes.py"], modules) == []
    assert misnamed(["test_report_terminal.py", "test_stats_more.py"], modules) == [
        "test_report_terminal.py",
        "test_stats_more.py",
    ]
