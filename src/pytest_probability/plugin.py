"""pytest hooks of pytest-probability: each delegates to the module that owns the concern."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Generator

import pytest

from . import collect, lifecycle, options
from .otel import options as otel_options


def pytest_addoption(parser: pytest.Parser) -> None:
    options.add_options(parser)
    otel_options.add_options(parser)


@pytest.hookimpl(tryfirst=True)
def pytest_configure(config: pytest.Config) -> None:
    state = lifecycle.configure(config)
    config.pluginmanager.register(ConfigHooks(config), "probability-config-hooks")
    if state.settings.retry is not None:
        config.pluginmanager.register(RetryHooks(), "probability-retry-hooks")


@pytest.hookimpl(tryfirst=True)
def pytest_pycollect_makemodule(module_path: Path, parent: pytest.Collector) -> Any:
    return collect.make_module(module_path, parent, lifecycle.get(parent.config).settings.pattern)


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> Any:
    return collect.collect_file(file_path, parent, lifecycle.get(parent.config).settings.pattern)


@pytest.hookimpl(tryfirst=True)
def pytest_pycollect_makeitem(collector: pytest.Collector, name: str, obj: object) -> Any:
    return collect.make_item(collector, name, obj)


@pytest.hookimpl(tryfirst=True)
def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    lifecycle.before_generate(metafunc)


@pytest.hookimpl(wrapper=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> Generator[None, None, None]:
    lifecycle.select_items(config, items)  # before -k, -m, --deselect and other plugins
    yield
    lifecycle.modify_items(config, items)  # after them


@pytest.hookimpl(tryfirst=True)
def pytest_collection_finish(session: pytest.Session) -> None:
    lifecycle.collection_finished(session)  # gate items after their runs, whatever reordered them


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item: pytest.Item) -> Generator[None, object, object]:
    lifecycle.start_run(item)
    try:
        return (yield)
    finally:
        lifecycle.end_run(item)


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    lifecycle.before_setup(item)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Generator[None, Any, Any]:
    report = yield
    lifecycle.after_phase(item, call, report)
    return report


@pytest.hookimpl(tryfirst=True)
def pytest_pyfunc_call(pyfuncitem: pytest.Function) -> None:
    __tracebackhide__ = True
    lifecycle.check_callable(pyfuncitem)


class RetryHooks:
    """``--prob-retry``: registered only when retries are on (no wrapper per run otherwise)."""

    # trylast: inside capture's and logging's wrappers, so a retried call is captured too.
    @pytest.hookimpl(wrapper=True, trylast=True)
    def pytest_runtest_call(self, item: pytest.Item) -> Generator[None, object, object]:
        try:
            return (yield)
        except BaseException as exc:  # noqa: BLE001 - retry_call re-raises what it does not retry
            error = exc
        lifecycle.retry_call(item, error)
        return None


class ConfigHooks:
    """Hooks that need the config but do not receive it; one instance per config."""

    def __init__(self, config: pytest.Config) -> None:
        self.config = config
        self.session: pytest.Session | None = None

    def pytest_sessionstart(self, session: pytest.Session) -> None:
        self.session = session

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        lifecycle.log_report(self.config, report, self.session)

    @pytest.hookimpl(optionalhook=True)
    def pytest_configure_node(self, node: Any) -> None:
        lifecycle.configure_node(self.config, node)

    @pytest.hookimpl(optionalhook=True)
    def pytest_xdist_node_collection_finished(self, node: Any, ids: list[str]) -> None:
        lifecycle.node_collection_finished(self.config, ids)

    @pytest.hookimpl(optionalhook=True)
    def pytest_testnodedown(self, node: Any, error: Any) -> None:
        lifecycle.node_down(self.config, node, error)

    @pytest.hookimpl(optionalhook=True)
    def pytest_handlecrashitem(self, crashitem: str, report: pytest.TestReport, sched: Any) -> None:
        lifecycle.crashed(self.config, crashitem, report)


@pytest.hookimpl(tryfirst=True)
def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    lifecycle.finish_session(session, exitstatus)


def pytest_terminal_summary(terminalreporter: Any, config: pytest.Config) -> None:
    lifecycle.terminal_summary(terminalreporter, config)


@pytest.hookimpl(tryfirst=True)  # before pytest's own full garbage collections at unconfigure
def pytest_unconfigure(config: pytest.Config) -> None:
    lifecycle.unconfigure(config)
