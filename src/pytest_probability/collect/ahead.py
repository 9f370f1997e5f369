"""Which runs may execute ahead of their items (``--prob-concurrency``), and which may execute together.

A run executes ahead of its item (before its own setup, beside other runs in flight) only when that is the
same as executing it in its call. So every fixture it uses is wider than a function, whose value is the
one already set up for the run executing now, or is a parametrized argument, whose value is the case's
own. A run using a function-scoped fixture (``tmp_path``, ``monkeypatch``, ``capsys``, ``request``, an
autouse fixture of a conftest) is set up for itself alone, in its own item: it executes one at a time,
and its benchmark is named, with the fixture, in one warning (:func:`~.eligible.blocker`).

Runs execute together (one *group*) when they would get the same fixture values and are awaited the same
way: the same module and class, the same definition of each fixture, the same parameter of each
parametrized fixture, the same async plugin and, for pytest-asyncio, the same loop scope
(:func:`plan_of`). A group whose event loop outlives each call (pytest-asyncio with a loop scope wider
than the function) *slides*: a run starts as soon as another ends, across items. Any other group (sync
benchmarks in threads, a loop made per call, anyio, pytest-trio) runs in *windows*: the first run of a
window starts the window's runs and returns when they have all ended.

Pure reading of what collection made: imported by the run stage only when a case asks for more than one
run in flight (the benchmark collector's warning needs only :mod:`.eligible`).
"""

from __future__ import annotations

import inspect
import sys
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..compat.pytest import fixtureinfo, is_direct_parameter
from .asyncplugins import ASYNCIO, inner
from .eligible import blocker

if TYPE_CHECKING:
    import pytest

#: How a group's runs are awaited: in threads, as tasks of a loop that outlives each call, or as tasks of
#: the first run's own call.
SYNC, ASYNCIO_KIND, ANYIO_KIND, TRIO_KIND = "sync", "asyncio", "anyio", "trio"
#: A group that slides over items (its loop outlives each call), or one executed in windows.
SLIDE, WINDOWS = "slide", "windows"


@dataclass(frozen=True)
class Plan:
    """How a case's runs execute ahead: its group's key, how they are awaited, and whether the group slides."""

    key: tuple[Any, ...]
    kind: str
    mode: str


def plan_of(item: pytest.Item) -> Plan | str:
    """The plan of ``item``'s case, or why its runs execute one at a time (:func:`blocker`'s fixture; ""
    for a coroutine no async plugin awaits, which errors in its own call)."""
    why = blocker(item)
    if why is not None:
        return why
    kind, loop_scope = _kind(item)
    if not kind:
        return ""
    info = fixtureinfo(item)
    callspec = getattr(item, "callspec", None)
    indices = getattr(callspec, "indices", {}) if callspec is not None else {}
    fixtures = []
    for name in info.names_closure:
        definitions = info.name2fixturedefs.get(name)
        if not definitions or is_direct_parameter(definitions[-1]):
            continue
        fixtures.append((name, id(definitions[-1]), indices.get(name)))
    cls = getattr(item, "cls", None)
    module = getattr(item, "module", None)
    key = (getattr(module, "__name__", ""), id(cls), kind, loop_scope, tuple(fixtures))
    return Plan(key, kind, SLIDE if kind == ASYNCIO_KIND and loop_scope != "function" else WINDOWS)


def _kind(item: pytest.Item) -> tuple[str, str]:
    """(how the run is awaited, pytest-asyncio's loop scope for it): ``sync``, ``asyncio``, ``anyio`` or
    ``trio``; ("", "") for a coroutine function that no async plugin runs."""
    function = inner(getattr(item, "obj", None))
    if not inspect.iscoroutinefunction(function):
        return SYNC, ""
    asyncio_plugin = sys.modules.get("pytest_asyncio.plugin")
    base = getattr(asyncio_plugin, "PytestAsyncioFunction", None)
    if base is not None and isinstance(item, base):
        return ASYNCIO_KIND, _asyncio_loop_scope(item)
    if "anyio_backend" in fixtureinfo(item).names_closure:
        return ANYIO_KIND, ""
    if item.get_closest_marker(TRIO_KIND) is not None:
        return TRIO_KIND, ""
    return "", ""


def _asyncio_loop_scope(item: pytest.Item) -> str:
    """The loop scope pytest-asyncio runs ``item`` in, read as it reads it: its closest ``asyncio`` marker's
    ``loop_scope``, else ini ``asyncio_default_test_loop_scope`` (default: function)."""
    marker = item.get_closest_marker(ASYNCIO)
    if marker is not None:
        scope = marker.kwargs.get("loop_scope") or marker.kwargs.get("scope")
        if scope:
            return str(scope)
    try:
        scope = item.config.getini("asyncio_default_test_loop_scope")
    except ValueError:  # a pytest-asyncio without the key: a loop per test
        return "function"
    return str(scope or "function")
