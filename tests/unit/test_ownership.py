"""State owned by the stage that writes it: no field of the session's state is written outside its owner's module.

The session's state lives in a few objects, each owned by one module (``OWNERS``):
the frozen configuration (``Session``, with its ``Scope``, ``Notes`` and the
``Registry`` of extension points), collection's scratch, the run stage, the
intake (the records), the decision book, the results and the signal flags.
Only the owner's own methods change them: any other module asks the owner
(``intake.learn(case)``, ``book.stop_case(key, reason)``, ``parts.add(...)``).

:func:`writes` reads every module of the package and lists each write to an
attribute of one of those objects made from outside its owner's module: an
assignment (``x.field = ...``, ``x.field += ...``, ``x.field[key] = ...``,
``del x.field[key]``) or a mutating call on it (``x.field.append(...)``),
where ``x`` is not ``self``. The list must be empty; a write put into a copy
of a module must appear in it.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import pytest_probability
from pytest_probability.config.settings import Settings, StatsConfig
from pytest_probability.config.spec import Specs
from pytest_probability.protocols import Registry
from pytest_probability.session import Session

PACKAGE = Path(pytest_probability.__file__).resolve().parent

#: class -> (the module, relative to the package, that owns its fields; the names the package gives a
#: reference to one: a variable, a parameter or an attribute, checked by
#: ``test_every_reference_to_an_owner_is_named_for_it``).
OWNERS = {
    "Session": ("session.py", ("session",)),
    "Scope": ("session.py", ("scope",)),
    "Notes": ("session.py", ("notes",)),
    "Registry": ("protocols.py", ("parts",)),
    "Scratch": ("collect/scratch.py", ("collecting", "scratch")),
    "RunPhases": ("run/phases.py", ("runs", "local")),
    "Intake": ("record/intake.py", ("intake",)),
    "DecisionBook": ("decide/book.py", ("book",)),
    "Results": ("decide/results.py", ("results",)),
    "Interrupts": ("roles/interrupts.py", ("interrupts",)),
}
MUTATORS = {
    "append",
    "extend",
    "add",
    "update",
    "pop",
    "popitem",
    "clear",
    "setdefault",
    "insert",
    "remove",
    "discard",
    "sort",
    "reverse",
}


CONTAINERS = ("list", "dict", "set", "deque")


def _container(annotation: ast.AST | None, value: ast.AST | None) -> bool:
    """Whether a field holds a builtin container (whose mutators write it), by its annotation or its value."""
    if annotation is not None and any(
        ast.unparse(annotation).startswith(c + "[") or ast.unparse(annotation) == c for c in CONTAINERS
    ):
        return True
    if isinstance(value, (ast.List, ast.Dict, ast.Set, ast.ListComp, ast.DictComp, ast.SetComp)):
        return True
    if isinstance(value, ast.Call):
        called = ast.unparse(value.func)
        factory = next((k.value for k in value.keywords if k.arg == "default_factory"), None)
        return called in CONTAINERS or (factory is not None and ast.unparse(factory) in CONTAINERS)
    return False


def fields_of(tree: ast.Module, name: str) -> dict[str, bool]:
    """A class's fields (its class-level annotations and assignments, and every ``self.x = ...`` in its
    methods), each with whether it holds a builtin container."""
    found: dict[str, bool] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef) and node.name == name:
            for item in node.body:
                if isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name):
                    found[item.target.id] = found.get(item.target.id, False) or _container(item.annotation, item.value)
                elif isinstance(item, ast.Assign):
                    for t in item.targets:
                        if isinstance(t, ast.Name):
                            found[t.id] = found.get(t.id, False) or _container(None, item.value)
            for sub in ast.walk(node):
                if isinstance(sub, ast.Assign):
                    pairs = [(t, None, sub.value) for t in sub.targets]
                elif isinstance(sub, (ast.AnnAssign, ast.AugAssign)):
                    pairs = [(sub.target, getattr(sub, "annotation", None), sub.value)]
                else:
                    continue
                for target, annotation, value in pairs:
                    if (
                        isinstance(target, ast.Attribute)
                        and isinstance(target.value, ast.Name)
                        and target.value.id == "self"
                    ):
                        found[target.attr] = found.get(target.attr, False) or _container(annotation, value)
    return found


def owned(package: Path) -> dict[str, tuple[str, str, dict[str, bool]]]:
    """A reference's name -> (the owner class, its module, its fields with whether each holds a container)."""
    owners: dict[str, tuple[str, str, dict[str, bool]]] = {}
    for cls, (module, names) in OWNERS.items():
        tree = ast.parse((package / module).read_text(encoding="utf-8"))
        fields = fields_of(tree, cls)
        assert fields, f"{cls} has no fields in {module}: is OWNERS out of date?"
        for name in names:
            owners[name] = (cls, module, fields)
    return owners


def _receiver(attribute: ast.Attribute) -> str | None:
    """The name of what an attribute is read off: ``book`` of ``book.x``, ``self.book.x``, ``wiring.book.x``."""
    value = attribute.value
    if isinstance(value, ast.Name):
        return value.id
    if isinstance(value, ast.Attribute):
        return value.attr
    return None


def _written(node: ast.AST) -> ast.Attribute | None:
    """The attribute a target writes into: ``x.field``, or ``x.field`` of ``x.field[key]``."""
    if isinstance(node, ast.Subscript):
        node = node.value
    return node if isinstance(node, ast.Attribute) else None


def _outside(attribute: ast.Attribute) -> bool:
    """Whether the attribute is reached through something other than ``self`` (or ``cls``) directly."""
    return not (isinstance(attribute.value, ast.Name) and attribute.value.id in ("self", "cls"))


def writes(package: Path) -> list[str]:
    owners = owned(package)
    found = []
    for path in sorted(package.rglob("*.py")):
        module = path.relative_to(package).as_posix()
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            targets: list[ast.AST] = []
            mutated = False
            if isinstance(node, ast.Assign):
                targets = list(node.targets)
            elif isinstance(node, (ast.AugAssign, ast.AnnAssign)):
                targets = [node.target]
            elif isinstance(node, ast.Delete):
                targets = [t for t in node.targets if isinstance(t, ast.Subscript)]
            elif (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr in MUTATORS
                and isinstance(node.func.value, ast.Attribute)
            ):
                targets, mutated = [node.func.value], True
            for target in targets:
                attribute = _written(target)
                if attribute is None or not _outside(attribute):
                    continue
                owner = owners.get(_receiver(attribute) or "")
                if owner is None or attribute.attr not in owner[2]:
                    continue
                cls, home, fields = owner
                if mutated and not fields[attribute.attr]:
                    continue  # a method of an owner object (parts.add, notes.append): the owner writes itself
                if module != home:
                    found.append(f"{module}:{node.lineno}: {ast.unparse(target)} ({cls}'s, owned by {home})")
    return found


def test_no_field_of_the_sessions_state_is_written_outside_its_owner() -> None:
    assert writes(PACKAGE) == []


def references(package: Path) -> list[str]:
    """Every annotated parameter or attribute typed by an owner class but not named for it."""
    names = {cls: wanted for cls, (_, wanted) in OWNERS.items()}
    found = []
    for path in sorted(package.rglob("*.py")):
        module = path.relative_to(package).as_posix()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            pairs: list[tuple[str, ast.AST]] = []
            if isinstance(node, ast.arg) and node.annotation is not None:
                pairs = [(node.arg, node.annotation)]
            elif isinstance(node, ast.AnnAssign):
                target = node.target
                name = (
                    target.id
                    if isinstance(target, ast.Name)
                    else target.attr
                    if isinstance(target, ast.Attribute)
                    else ""
                )
                pairs = [(name, node.annotation)]
            for name, annotation in pairs:
                text = ast.unparse(annotation).replace("'", "").replace('"', "")
                for cls, wanted in names.items():
                    typed = (
                        text == cls
                        or text.startswith(cls + " |")
                        or text.endswith("| " + cls)
                        or text.endswith("." + cls)
                    )
                    if typed and name.lstrip("_") not in wanted and name not in ("self", "cls"):
                        found.append(f"{module}:{node.lineno}: {name}: {text} (name it {' or '.join(wanted)})")
    return found


def test_every_reference_to_an_owner_is_named_for_it() -> None:
    """What makes the write check sound: it finds an owner object by the name it is reached by."""
    assert references(PACKAGE) == []


@pytest.mark.parametrize(
    ("module", "added", "shown"),
    [
        ("roles/serial.py", "def _bad(intake):\n    intake.records = []\n", "intake.records"),
        ("features/spend/feature.py", "def _bad(book, key):\n    book.stopped[key] = 'x'\n", "book.stopped"),
        ("run/context.py", "def _bad(runs):\n    runs._shipped.add('x')\n", "runs._shipped"),
        (
            "features/journal/feature.py",
            "def _bad(wiring):\n    wiring.intake.cases.setdefault('k', None)\n",
            "wiring.intake.cases",
        ),
        ("collect/benchmark.py", "def _bad(scratch):\n    scratch.runs += 1\n", "scratch.runs"),
    ],
    ids=["assigned", "subscript", "a list's mutator", "through a chain", "augmented"],
)
def test_a_write_from_outside_is_found(tmp_path: Path, module: str, added: str, shown: str) -> None:
    import shutil

    copy = tmp_path / "pytest_probability"
    shutil.copytree(PACKAGE, copy, ignore=shutil.ignore_patterns("__pycache__"))
    with open(copy / module, "a", encoding="utf-8") as handle:
        handle.write("\n\n" + added)
    found = writes(copy)
    assert len(found) == 1 and found[0].startswith(module) and shown in found[0], found


def test_the_configuration_is_frozen() -> None:
    """Fields set once: the Session refuses an assignment, and the registry refuses parts once frozen."""
    session = Session(
        Settings(cli_runs=None, ini_runs=1, transpose=False, delay=0.0, json_path=None, pattern="bench_*.py"),
        Specs(StatsConfig()),
    )
    with pytest.raises(AttributeError, match="the session's settings is set once"):
        session.settings = session.settings
    parts = Registry()
    parts.add(facets=object())
    parts.freeze()
    with pytest.raises(RuntimeError, match="frozen"):
        parts.add(facets=object())
    with pytest.raises(AttributeError):
        Registry().add(facet=object())
