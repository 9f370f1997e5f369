"""pytest hooks of pytest-probability that every process has: options, configure, collection, each run's phases.

Each hook is a line or two that hands over to the stage that owns the
concern. The hooks of one role only (taking records in, the session's end,
the table, xdist's controller and worker hooks) are on the role's plugin
object (:mod:`pytest_probability.roles`), which :mod:`pytest_probability.configure`
registers once. Each hook reaches the stage that owns its concern through
``config.stash``: the session's configuration (``session.get``) and the run
stage (``run.key.RUNS``).
"""

from __future__ import annotations

from collections.abc import Generator
from pathlib import Path
from typing import Any

import pytest

from .collect import benchfiles, order
from .config import options
from .config import otel as otel_options
from .run.key import RUNS
from .session import get

# The composition root, and with it every stage, is imported at configure: importing the plugin
# (at every pytest start-up, in every project where it is installed) declares the options only.


def pytest_addoption(parser: pytest.Parser) -> None:
    options.add_options(parser)
    otel_options.add_options(parser)


@pytest.hookimpl(tryfirst=True)
def pytest_configure(config: pytest.Config) -> None:
    from . import configure  # at configure: the plugin's import declares the options only

    configure.configure(config)


@pytest.hookimpl(tryfirst=True)
def pytest_pycollect_makemodule(module_path: Path, parent: pytest.Collector) -> Any:
    return benchfiles.make_module(module_path, parent, get(parent.config).settings.pattern)


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> Any:
    return benchfiles.collect_file(file_path, parent, get(parent.config).settings.pattern)


@pytest.hookimpl(tryfirst=True)
def pytest_pycollect_makeitem(collector: pytest.Collector, name: str, obj: object) -> Any:
    return benchfiles.make_item(collector, name, obj)


@pytest.hookimpl(tryfirst=True)
def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    benchfiles.before_generate(metafunc)


@pytest.hookimpl(wrapper=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> Generator[None, None, None]:
    order.select(items)  # before -k, -m, --deselect and other plugins
    yield
    order.modified(config, items, get(config))  # after them


@pytest.hookimpl(tryfirst=True)
def pytest_collection_finish(session: pytest.Session) -> None:
    order.finished(session.items)  # gate items after their runs, whatever reordered them


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item: pytest.Item) -> Generator[None, object, object]:
    runs = item.config.stash[RUNS]
    runs.start(item)
    try:
        return (yield)
    finally:
        runs.end(item)


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    item.config.stash[RUNS].before_setup(item)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Generator[None, Any, Any]:
    report = yield
    item.config.stash[RUNS].after_phase(item, call, report)
    return report


@pytest.hookimpl(tryfirst=True)
def pytest_pyfunc_call(pyfuncitem: pytest.Function) -> None:
    __tracebackhide__ = True
    pyfuncitem.config.stash[RUNS].check_callable(pyfuncitem)


# Plain priority, on purpose: after every tryfirst impl (anyio's runs the coroutine), before pytest's
# own trylast one; pytest-asyncio and pytest-trio have swapped ``obj`` for a plain function by then.
@pytest.hookimpl(specname="pytest_pyfunc_call")
def pytest_pyfunc_call_unrun(pyfuncitem: pytest.Function) -> None:
    __tracebackhide__ = True
    pyfuncitem.config.stash[RUNS].check_unrun(pyfuncitem)
