"""Private names of other distributions, used outside ``compat/`` (issue 33): the list must be empty.

A private name is one that starts with an underscore and is not a dunder. Read with :mod:`ast`, a use of
another distribution's private name (pytest's, pytest-xdist's, OpenTelemetry's, grpc's, protobuf's,
requests') in a module of the package outside ``compat/`` is

* an import from one of its private modules (``from _pytest.nodeid import NodeId``,
  ``from opentelemetry.exporter.otlp.proto.common._log_encoder import encode_logs``), or of a private name
  from any of its modules (``from opentelemetry.exporter.otlp.proto.grpc.exporter import _load_credentials``).
  The logs signal's documented homes are public: ``opentelemetry._logs``, ``opentelemetry.sdk._logs`` (not its
  ``_internal``) and the exporters' ``_log_exporter`` modules;
* a private attribute of an imported module of it (``context._SUPPRESS_INSTRUMENTATION_KEY``);
* a private attribute of any other object (``exporter._client``, ``node._id``, ``getattr(x, "_calls")``,
  ``cls.__dict__.get("_instance")``) whose name the package does not define itself outside ``compat/``, or
  whose name one of those distributions defines too (their sources, read once: :func:`foreign_names`) and the
  module making the access does not (``other._values()`` in the module defining ``_values`` is the package's;
  ``item._obj`` anywhere else is pytest's, even if some module of the package has an ``_obj`` of its own);
* in a class derived from one of its classes (``class Run(pytest.Function)``), a private attribute of ``self``
  or a private method whose name that distribution defines (``self._instance``, ``def _getobj``): a
  subclass that reads, writes or overrides its base's private names uses them as surely as a caller does.

The standard library's own names are not another distribution's (``os._exit``), and neither are the
documented methods of a named tuple (``_replace``, ``_asdict``, ``_fields``, ``_make``).
"""

from __future__ import annotations

import ast
import importlib
import importlib.util
import inspect
import sys
import textwrap
from dataclasses import dataclass
from functools import cache
from pathlib import Path

#: The distributions whose private names count, by their top-level import names.
FOREIGN = ("pytest", "_pytest", "pluggy", "xdist", "execnet", "opentelemetry", "grpc", "google", "requests")
#: Public despite the underscore: the logs signal's homes (opentelemetry-python keeps the logs API and SDK
#: in ``_logs`` packages while the signal is in development; they are its documented modules).
PUBLIC_MODULES = (
    "opentelemetry._logs",
    "opentelemetry.sdk._logs",
    "opentelemetry.sdk._logs.export",
    "opentelemetry.exporter.otlp.proto.http._log_exporter",
    "opentelemetry.exporter.otlp.proto.grpc._log_exporter",
)
#: Documented names of the standard library's named tuples.
DOCUMENTED = frozenset({"_replace", "_asdict", "_fields", "_make", "_field_defaults"})
#: Private names of the standard library's that the package reads and that other distributions define too:
#: ``threading.Thread._target`` (run/context.py: whether a thread is a pool's worker, to carry the run into it).
STANDARD = frozenset({"_target"})
GETTERS = ("getattr", "hasattr", "setattr", "delattr")


def private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


@dataclass(frozen=True, order=True)
class Use:
    path: str
    line: int
    text: str

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {self.text}"


@cache
def foreign_names() -> frozenset[str]:
    """The private names the installed foreign distributions define: their functions' and methods' names and
    the attributes their code assigns (read from their sources, about a second)."""
    names: set[str] = set()
    for top in FOREIGN:
        spec = importlib.util.find_spec(top)
        for base in (spec.submodule_search_locations or []) if spec else []:
            for path in Path(base).rglob("*.py"):
                try:
                    tree = ast.parse(path.read_bytes())
                except (SyntaxError, ValueError, OSError):
                    continue
                for node in ast.walk(tree):
                    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and private(node.name):
                        names.add(node.name)
                    elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store) and private(node.attr):
                        names.add(node.attr)
    return frozenset(names)


def _foreign(module: str) -> bool:
    return module.split(".")[0] in FOREIGN


def _private_module(module: str) -> bool:
    if any(
        module == public or module.startswith(public + ".") and "._internal" not in module[len(public) :]
        for public in PUBLIC_MODULES
    ):
        return False
    return any(private(part) for part in module.split("."))


def _defined(tree: ast.AST, own_objects: bool = False) -> set[str]:
    """The names a module defines: functions, classes, assignment targets (names and attributes), parameters,
    ``__slots__`` entries and import aliases. ``own_objects``: an attribute assigned counts only on ``self``
    or ``cls`` (``node._id = ...`` sets another object's attribute; it defines nothing of the package's)."""
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.arg):
            names.add(node.arg)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
        elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store):
            if not own_objects or (isinstance(node.value, ast.Name) and node.value.id in ("self", "cls")):
                names.add(node.attr)
        elif isinstance(node, ast.alias):
            names.add((node.asname or node.name).split(".")[0])
        elif isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == "__slots__" for t in node.targets
        ):
            names |= {c.value for c in ast.walk(node.value) if isinstance(c, ast.Constant) and isinstance(c.value, str)}
    return names


def _imports(tree: ast.AST, module: str, is_package: bool) -> dict[str, str]:
    """Local name -> the absolute module or object it is bound to, for every import in the module (at any
    depth: the package imports OpenTelemetry inside functions)."""
    bound: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                bound[alias.asname or alias.name.split(".")[0]] = (
                    alias.name if alias.asname else alias.name.split(".")[0]
                )
        elif isinstance(node, ast.ImportFrom):
            base = _absolute(module, is_package, node.module, node.level)
            for alias in node.names:
                bound[alias.asname or alias.name] = f"{base}.{alias.name}"
    return bound


def _absolute(module: str, is_package: bool, target: str | None, level: int) -> str:
    if level == 0:
        return target or ""
    parts = module.split(".")
    base = parts if is_package else parts[:-1]
    base = base[: len(base) - (level - 1)]
    return ".".join(base + ([target] if target else []))


def _root(node: ast.AST) -> str | None:
    while isinstance(node, ast.Attribute):
        node = node.value
    return node.id if isinstance(node, ast.Name) else None


def _resolve(target: str) -> object | None:
    """The object a dotted import target names (``pytest.Function``), imported; None if it cannot be."""
    parts = target.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            obj: object = importlib.import_module(".".join(parts[:cut]))
        except Exception:
            continue
        try:
            for part in parts[cut:]:
                obj = getattr(obj, part)
        except AttributeError:
            return None
        return obj
    return None


@cache
def class_attributes(klass: type) -> frozenset[str]:
    """The names of a class and its bases: their attributes and methods, and what their methods set on
    ``self`` (read from their source)."""
    names: set[str] = set()
    for base in klass.__mro__:
        names |= set(vars(base))
        try:
            tree = ast.parse(textwrap.dedent(inspect.getsource(base)))
        except (OSError, TypeError, SyntaxError):
            continue
        names |= {
            n.attr
            for n in ast.walk(tree)
            if isinstance(n, ast.Attribute)
            and isinstance(n.ctx, ast.Store)
            and isinstance(n.value, ast.Name)
            and n.value.id == "self"
        }
    return frozenset(names)


@cache
def class_privates(klass: type) -> frozenset[str]:
    """The private names of a class's foreign bases (and the class itself when it is foreign)."""
    names: set[str] = set()
    for base in klass.__mro__:
        if _foreign(base.__module__):
            names |= {name for name in class_attributes(base) if private(name)}
    return frozenset(names)


def _foreign_privates_of(node: ast.ClassDef, bound: dict[str, str]) -> frozenset[str] | None:
    """The private names a class's foreign bases define (directly, or through a base of the package's:
    ``class Run(OwnedFunction)``); None when none of its bases is foreign."""
    found: set[str] | None = None
    for base in node.bases:
        text = ast.unparse(base)
        root, _, rest = text.partition(".")
        target = bound.get(root, "")
        if not target:
            continue
        klass = _resolve(f"{target}.{rest}" if rest else target)
        if _foreign(target) or (isinstance(klass, type) and any(_foreign(k.__module__) for k in klass.__mro__)):
            found = set() if found is None else found
            if isinstance(klass, type):
                found |= class_privates(klass)
    return None if found is None else frozenset(found)


def _attribute_uses(tree: ast.AST) -> list[tuple[ast.AST, ast.AST, str]]:
    """(node, the object, the private name) of every attribute use: ``x._n``, ``getattr(x, "_n")``,
    ``x.__dict__.get("_n")``, ``x.__dict__["_n"]``."""
    uses = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and private(node.attr):
            uses.append((node, node.value, node.attr))
        elif isinstance(node, ast.Call) and len(node.args) >= 2 and isinstance(node.args[1], ast.Constant):
            name = node.args[1].value
            if isinstance(name, str) and private(name) and isinstance(node.func, ast.Name) and node.func.id in GETTERS:
                uses.append((node, node.args[0], name))
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "get"
            and isinstance(node.func.value, ast.Attribute)
            and node.func.value.attr == "__dict__"
            and node.args
            and isinstance(node.args[0], ast.Constant)
            and isinstance(node.args[0].value, str)
            and private(node.args[0].value)
        ):
            uses.append((node, node.func.value.value, node.args[0].value))
        if (
            isinstance(node, ast.Subscript)
            and isinstance(node.value, ast.Attribute)
            and node.value.attr == "__dict__"
            and isinstance(node.slice, ast.Constant)
            and isinstance(node.slice.value, str)
            and private(node.slice.value)
        ):
            uses.append((node, node.value.value, node.slice.value))
    return uses


def _modules(package: Path) -> list[tuple[Path, str, bool]]:
    found = []
    for path in sorted(package.rglob("*.py")):
        relative = path.relative_to(package.parent).with_suffix("")
        parts = list(relative.parts)
        is_package = parts[-1] == "__init__"
        if is_package:
            parts = parts[:-1]
        found.append((path, ".".join(parts), is_package))
    return found


def uses(package: Path) -> list[Use]:
    """Every use of another distribution's private name in ``package`` outside its ``compat/``."""
    modules = _modules(package)
    compat = package / "compat"
    trees = {path: ast.parse(path.read_text(encoding="utf-8"), str(path)) for path, _, _ in modules}
    own: set[str] = set()
    for path, tree in trees.items():
        if compat not in path.parents:
            own |= {name for name in _defined(tree, own_objects=True) if private(name)}
    for path, module, is_package in modules:  # what a subclass sets of its foreign base's is not the package's
        if compat in path.parents:
            continue
        bound = _imports(trees[path], module, is_package)
        for node in ast.walk(trees[path]):
            if isinstance(node, ast.ClassDef):
                own -= _foreign_privates_of(node, bound) or frozenset()
    found: set[Use] = set()
    for path, module, is_package in modules:
        if compat in path.parents:
            continue
        tree = trees[path]
        shown = str(path.relative_to(package.parent))
        lines = path.read_text(encoding="utf-8").splitlines()

        def use(node: ast.AST, why: str) -> None:
            line = getattr(node, "lineno", 0)
            found.add(Use(shown, line, f"{why}: {lines[line - 1].strip() if line else ''}"))  # noqa: B023 - called in this iteration only

        bound = _imports(tree, module, is_package)
        local = {name for name in _defined(tree, own_objects=True) if private(name)}
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module and _foreign(node.module):
                if _private_module(node.module):
                    use(node, f"import from the private module {node.module}")
                for alias in node.names:
                    if private(alias.name) and f"{node.module}.{alias.name}" not in PUBLIC_MODULES:
                        use(node, f"import of the private name {node.module}.{alias.name}")
            elif isinstance(node, ast.Import):
                for alias in node.names:
                    if _foreign(alias.name) and _private_module(alias.name):
                        use(node, f"import of the private module {alias.name}")
        inside: dict[int, frozenset[str]] = {}  # id of a node in a class with foreign bases -> their privates
        in_class: set[int] = set()  # ids of the nodes of every class body: where self and cls are the class's
        for node in ast.walk(tree):
            if isinstance(node, ast.ClassDef):
                in_class.update(id(item) for item in ast.walk(node))
                theirs = _foreign_privates_of(node, bound)
                if theirs is None:
                    continue
                for item in node.body:
                    if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)) and item.name in theirs:
                        use(item, f"override of its foreign base's private method {item.name}")
                for item in ast.walk(node):
                    inside[id(item)] = theirs
        for node, obj, name in _attribute_uses(tree):
            if name in DOCUMENTED:
                continue
            root = _root(obj) if isinstance(obj, (ast.Name, ast.Attribute)) else None
            if isinstance(obj, ast.Name) and obj.id in ("self", "cls") and id(obj) in in_class:
                if name in inside.get(id(obj), frozenset()):
                    use(node, f"its foreign base's private attribute {name} of self")
                continue
            target = bound.get(root or "", "")
            if target and target.split(".")[0] in sys.stdlib_module_names:
                continue
            if target and _foreign(target) and isinstance(obj, (ast.Name, ast.Attribute)):
                use(node, f"private attribute {name} of {target}")
            elif name not in own:
                use(node, f"private attribute {name} of an object the package does not define")
            elif name in foreign_names() and name not in local and name not in STANDARD:
                use(
                    node,
                    f"private attribute {name}, a name other distributions define, of an object this module "
                    "does not define",
                )
    return sorted(found)


if __name__ == "__main__":  # pragma: no cover - a developer's tool
    here = Path(__file__).resolve().parent.parent / "src" / "pytest_probability"
    for found in uses(here):
        print(found)
