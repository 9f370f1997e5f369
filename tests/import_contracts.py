"""An import-linter contract the built-in ones lack: no module uses another module's private names.

``lint-imports`` (run by ``make test``) loads it from ``pyproject.toml``
(``contract_types``; the repository root is on its path). A private name is
one that starts with an underscore and is not a dunder (``_attached``,
``_log_ibeta``; ``__version__`` is public). The contract is broken by

* an import of one: ``from .html_report import _e``;
* an attribute read of one on a module of the package bound by an import:
  ``stats._lbeta(...)`` after ``from . import stats``.

A module's own private names, and third-party ones (pytest's
``_genfunctions``, the SDK exporters' ``_export``: see the developer guide,
"The SDK seams"), are not its business.
"""

from __future__ import annotations

import ast
import importlib.util
from dataclasses import dataclass

import grimp
from importlinter.application import output
from importlinter.domain import fields
from importlinter.domain.contract import Contract, ContractCheck


def _private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


@dataclass(frozen=True, order=True)
class Use:
    module: str
    line: int
    text: str


def _absolute(module: str, is_package: bool, target: str | None, level: int) -> str:
    """The absolute name ``from <level dots><target>`` means inside ``module``."""
    if level == 0:
        return target or ""
    parts = module.split(".")
    base = parts if is_package else parts[:-1]
    base = base[: len(base) - (level - 1)]
    return ".".join(base + ([target] if target else []))


def private_uses(module: str, root: str) -> list[Use]:
    """The uses of other modules' private names in ``module`` (a module of package ``root``)."""
    spec = importlib.util.find_spec(module)
    if spec is None or not spec.origin or not spec.origin.endswith(".py"):
        return []
    source = open(spec.origin, encoding="utf-8").read()
    tree = ast.parse(source, spec.origin)
    lines = source.splitlines()
    is_package = spec.submodule_search_locations is not None
    uses: list[Use] = []
    modules: dict[str, str] = {}  # local name -> module of the package it is bound to

    def within(name: str) -> bool:
        return name == root or name.startswith(root + ".")

    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            target = _absolute(module, is_package, node.module, node.level)
            if not within(target) or target == module:
                continue
            for alias in node.names:
                if _private(alias.name):
                    uses.append(Use(module, node.lineno, lines[node.lineno - 1].strip()))
                child = f"{target}.{alias.name}"
                if _is_module(child):  # ``from . import stats`` binds a module
                    modules[alias.asname or alias.name] = child
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if within(alias.name):
                    if any(_private(part) for part in alias.name.split(".")):
                        uses.append(Use(module, node.lineno, lines[node.lineno - 1].strip()))
                    if alias.asname:
                        modules[alias.asname] = alias.name
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Attribute)
            and isinstance(node.value, ast.Name)
            and node.value.id in modules
            and _private(node.attr)
            and modules[node.value.id] != module
        ):
            uses.append(Use(module, node.lineno, lines[node.lineno - 1].strip()))
    return sorted(set(uses))


def _is_module(name: str) -> bool:
    try:
        return importlib.util.find_spec(name) is not None
    except (ImportError, ValueError):
        return False


class PrivateNamesContract(Contract):
    """No module of ``root_package`` imports, or reads off an imported module, another module's private name."""

    type_name = "private_names"
    root_package = fields.StringField()

    def check(self, graph: grimp.ImportGraph, verbose: bool) -> ContractCheck:
        root = str(self.root_package)
        internal = sorted(m for m in graph.modules if m == root or m.startswith(root + "."))
        uses = [use for module in internal for use in private_uses(module, root)]
        return ContractCheck(kept=not uses, warnings=[], metadata={"uses": uses})

    def render_broken_contract(self, check: ContractCheck) -> None:
        for use in check.metadata["uses"]:
            output.print_error(f"{use.module}:{use.line}: {use.text}", bold=False)
            output.new_line()
