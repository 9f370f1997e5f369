"""At most 40 imports inside function bodies: a feature loads in one place (issue 45, part 5).

A function-level import is for laziness (a session pays only for the features it uses:
docs/developer-guide.md, "Lazy imports"), and each part loads in one place: the composition roots resolve
an entry point by its dotted name (``configure.FEATURES``, ``__main__.COMMANDS``), a feature's
``feature.py`` imports its parts at its top, OpenTelemetry's SDK is imported inside ``otel/``. Each
``import`` or ``from … import`` statement inside a function (at any depth, a nested class or function
included) counts once; ``if TYPE_CHECKING:`` imports at module level do not count.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest_probability

PACKAGE = Path(pytest_probability.__file__).parent
CAP = 40


def function_imports(source: str) -> list[tuple[int, str]]:
    """(line, statement) of each import inside a function body of ``source``."""
    found: list[tuple[int, str]] = []

    def visit(node: ast.AST, in_function: bool) -> None:
        for child in ast.iter_child_nodes(node):
            if in_function and isinstance(child, (ast.Import, ast.ImportFrom)):
                found.append((child.lineno, ast.unparse(child)))
            visit(child, in_function or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)))

    visit(ast.parse(source), False)
    return found


def package_function_imports(package: Path) -> list[str]:
    return [
        f"{path.relative_to(package)}:{line}: {statement}"
        for path in sorted(package.rglob("*.py"))
        for line, statement in function_imports(path.read_text(encoding="utf-8"))
    ]


def test_at_most_40_imports_inside_function_bodies() -> None:
    found = package_function_imports(PACKAGE)
    assert len(found) <= CAP, (
        f"{len(found)} imports inside function bodies (at most {CAP}): load a feature in one place "
        "(docs/developer-guide.md, 'Lazy imports'):\n" + "\n".join(found)
    )
    assert len(found) > 10  # the control: the count reads the package


def test_every_import_inside_a_function_counts_once_at_any_depth() -> None:
    source = """
from __future__ import annotations
import os
from typing import TYPE_CHECKING
if TYPE_CHECKING:
    from pathlib import Path

def top():
    import json
    from . import a, b

class Holder:
    def method(self):
        if True:
            from .c import d
        def inner():
            import re
        class Local:
            import sys
"""
    assert [line for line, _ in function_imports(source)] == [9, 10, 15, 17, 19]
