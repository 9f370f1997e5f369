"""Every dotted name a docstring of the package cites resolves: a module, a class, a function or an attribute.

A docstring names the code it leans on: a Sphinx role (``:class:`~.book.DecisionBook```,
``:mod:`.pairs```, ``:func:`maths.scores.welch_test```) or a dotted name in double
backticks that starts with one of the package's own packages
(````decide.gates.evaluate_gate````). When the code moves, the docstring goes
stale; this test reads every docstring of the package and resolves each such
name as Sphinx would: relative to the module (``.x``), then to each package
above it, then from the package's root, then as an absolute import.
"""

from __future__ import annotations

import ast
import importlib
import inspect
import pkgutil
import re
from pathlib import Path

import pytest

import pytest_probability

PACKAGE = Path(pytest_probability.__file__).parent
ROLE = re.compile(r":(?:mod|class|func|meth|attr|data|exc|obj):`~?([.\w]+)`")
LITERAL = re.compile(r"``([A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+)``")
#: The package's own packages (folders): a literal starting with one is a reference.
PACKAGES = {p.name for p in PACKAGE.iterdir() if p.is_dir() and (p / "__init__.py").exists()}


def modules() -> list[str]:
    names = ["pytest_probability"]
    for info in pkgutil.walk_packages([str(PACKAGE)], "pytest_probability."):
        names.append(info.name)
    return sorted(names)


def docstrings(path: Path) -> list[tuple[int, str, str]]:
    """Every docstring of the module: (line, text, the class it is in, or "")."""
    found: list[tuple[int, str, str]] = []

    def visit(node: ast.AST, owner: str) -> None:
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            text = ast.get_docstring(node, clean=False)
            inside = f"{owner}.{node.name}".lstrip(".") if isinstance(node, ast.ClassDef) else owner
            if text:
                found.append((getattr(node, "lineno", 1), text, inside))
            for child in ast.iter_child_nodes(node):
                visit(child, inside if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) else owner)
        else:
            for child in ast.iter_child_nodes(node):
                visit(child, owner)

    visit(ast.parse(path.read_text(encoding="utf-8")), "")
    return found


def _has(value: object, name: str) -> bool:
    if hasattr(value, name):
        return True
    fields = getattr(value, "__dataclass_fields__", None) or {}
    annotations = getattr(value, "__annotations__", {}) if isinstance(value, type) else {}
    slots = getattr(value, "__slots__", ()) if isinstance(value, type) else ()
    if name in fields or name in annotations or name in slots:
        return True
    if isinstance(value, type):  # an attribute its methods set (``self.partial = ...``)
        try:
            source = inspect.getsource(value)
        except (OSError, TypeError):
            return False
        return re.search(rf"self\.{re.escape(name)}\s*[:=]", source) is not None
    return False


def resolves(dotted: str) -> bool:
    """Whether ``dotted`` names a module, or an attribute (at any depth) of one."""
    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            value: object = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        for name in parts[cut:]:
            if not _has(value, name):
                return False
            value = getattr(value, name, None)
        return True
    return False


def candidates(name: str, module: str, is_package: bool, owner: str = "") -> list[str]:
    """Where ``name``, cited in ``module`` (in its class ``owner``), may be: relative (``.x``), in the class, in
    the module, each package above it, the package's root, the builtins, absolute."""
    here = module if is_package else module.rpartition(".")[0]
    if name.startswith("."):
        dots = len(name) - len(name.lstrip("."))
        base = here.split(".")
        base = base[: len(base) - (dots - 1)]
        return [".".join([*base, name.lstrip(".")])]
    found = [f"{module}.{owner}.{name}"] if owner else []
    found.append(f"{module}.{name}")
    parts = module.split(".")
    for cut in range(len(parts), 0, -1):
        found.append(".".join([*parts[:cut], name]))
    found += [f"builtins.{name}", name]
    return found


def cited(text: str) -> set[str]:
    """The names a docstring cites: every role's, and the double-backtick names that start with one of the
    package's own packages and name a module of it, or go deeper than a package's attribute."""
    found = set(ROLE.findall(text))
    for name in LITERAL.findall(text):
        parts = name.split(".")
        if (
            parts[0] == "pytest_probability"
            or parts[0] in PACKAGES
            and (
                len(parts) > 2
                or (PACKAGE / parts[0] / f"{parts[1]}.py").exists()
                or (PACKAGE / parts[0] / parts[1]).is_dir()
            )
        ):
            found.add(name)
    return found


def stale() -> list[str]:
    problems = []
    for module in modules():
        spec = importlib.util.find_spec(module)
        assert spec is not None and spec.origin is not None
        path = Path(spec.origin)
        for line, text, owner in docstrings(path):
            for name in sorted(cited(text)):
                if not any(resolves(c) for c in candidates(name, module, path.name == "__init__.py", owner)):
                    problems.append(f"{path.relative_to(PACKAGE.parent)}:{line}: {name}")
    return problems


def test_every_dotted_name_in_a_docstring_resolves() -> None:
    assert stale() == []


@pytest.mark.parametrize(
    "name, module, good",
    [
        (".book.DecisionBook", "pytest_probability.decide.settle", True),
        (".book.State", "pytest_probability.decide.settle", False),
        ("decide.gates.evaluate_gate", "pytest_probability.report.statistics", True),
        ("maths.clusters", "pytest_probability.aggregate.benchmarks", False),
        ("pytest_probability.measures.score.MeanScore.name", "pytest_probability", True),
        ("Comparison.margin_points", "pytest_probability.features.compare.comparisons", True),
        ("Comparison.nothing", "pytest_probability.features.compare.comparisons", False),
    ],
)
def test_the_check_finds_stale_names_and_takes_good_ones(name: str, module: str, good: bool) -> None:
    assert any(resolves(c) for c in candidates(name, module, False)) is good


def test_literals_of_other_objects_are_not_references() -> None:
    """``config.stash`` (pytest's config object) and ``record.run`` (a record's field) are no package paths."""
    assert cited("``config.stash`` and ``record.run``, but ``decide.gates.evaluate_gate``") == {
        "decide.gates.evaluate_gate"
    }
    assert cited("``report.json_report`` and :mod:`.pairs`") == {"report.json_report", ".pairs"}
