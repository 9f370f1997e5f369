"""Async benchmarks: each run made an item the active async plugin runs, as it runs an ordinary async test.

Imported when the first ``async def`` benchmark is collected. The three plugins
decide in different ways, and a benchmark's runs are built by its
:class:`~.benchmark.Benchmark`, never by pytest's python plugin, so none of
them would see a run the way it sees a ``test_*`` function:

- **pytest-asyncio** (1.x) runs only instances of its ``PytestAsyncioFunction``:
  it converts a ``Function`` in a ``pytest_pycollect_makeitem`` wrapper, which
  sees the ``Benchmark`` collector, not the runs. So the runs of a case it would
  own (an ``asyncio`` marker, or ``asyncio_mode = auto``) are built from a class
  deriving from both ``Run`` and the leaf class it picks for the function
  (:func:`run_class`). Its ``setup``/``runtest`` choose the loop and run the
  coroutine; its fixture hook handles async fixtures for any item.
- **anyio** runs any coroutine item whose fixtures include ``anyio_backend``; its
  collection hook adds that only to names matching ``python_functions``, and
  since 4.13 it replaces marked items without it by plain ``Function`` items.
  So a marked benchmark gets ``usefixtures("anyio_backend")`` here, as a test
  would (:func:`use_anyio_backend`).
- **pytest-trio** wraps ``item.obj`` at call time for any item with the ``trio``
  marker (``trio_mode`` adds it): nothing to do here.

pytest-asyncio's module is imported only when its plugin is active.
"""

from __future__ import annotations

import functools
import inspect
from typing import Any

import pytest

#: pytest-asyncio's, anyio's and pytest-trio's plugin names (``-p no:NAME``).
ASYNCIO, ANYIO = "asyncio", "anyio"


def inner(function: Any) -> Any:
    """The function a hypothesis ``@given`` wraps, else ``function``."""
    hypothesis = getattr(function, "hypothesis", None)
    return getattr(hypothesis, "inner_test", function)


def is_async(function: Any) -> bool:
    """Whether a benchmark is an ``async def`` (possibly under ``@given``)."""
    return inspect.iscoroutinefunction(inner(function))


def asyncio_auto(config: pytest.Config) -> bool:
    """pytest-asyncio's auto mode, read as it reads it (the option first, then the ini key)."""
    mode = config.getoption("asyncio_mode", None)
    return (mode if mode is not None else config.getini("asyncio_mode")) == "auto"


def asyncio_leaf(probe: pytest.Function) -> type | None:
    """The pytest-asyncio class it would build ``probe``'s item from, or None (not active, not a
    coroutine, or an async generator: that stays our own error, not pytest-asyncio's xfail)."""
    if not probe.config.pluginmanager.hasplugin(ASYNCIO):
        return None
    from pytest_asyncio.plugin import AsyncGenerator, PytestAsyncioFunction  # an optional plugin: only when active

    leaf = PytestAsyncioFunction.item_subclass_for(probe)
    return None if leaf is None or leaf is AsyncGenerator else leaf


@functools.cache
def run_class(base: type, leaf: type) -> type:
    """``base`` (``Run``) first, then pytest-asyncio's *leaf* class: ``Run.__init__`` reaches
    ``Function.__init__``, ``setup``/``runtest`` are pytest-asyncio's, ``_getobj`` stays ours.
    Never ``PytestAsyncioFunction`` itself: its ``item_subclass_for`` walks its direct
    subclasses, and would call ours."""
    return type(
        base.__name__,
        (base, leaf),
        {"__module__": base.__module__, "__qualname__": f"{base.__qualname__}[{leaf.__name__}]"},
    )


def use_anyio_backend(collector: pytest.Collector, function: Any) -> None:
    """What anyio's ``pytest_pycollect_makeitem`` does for an async test function, for a benchmark:
    marked ``anyio`` (itself or a parent) or anyio's auto mode → ``usefixtures("anyio_backend")``."""
    config = collector.config
    if not config.pluginmanager.hasplugin(ANYIO):
        return
    try:
        auto = config.getoption("anyio_mode", None) == "auto" or config.getini("anyio_mode") == "auto"
    except ValueError:  # an anyio without the setting
        auto = False
    marks = getattr(function, "pytestmark", ())
    if (
        auto
        or collector.get_closest_marker(ANYIO) is not None
        or any(getattr(mark, "name", None) == ANYIO for mark in marks)
    ):
        pytest.mark.usefixtures("anyio_backend")(function)
