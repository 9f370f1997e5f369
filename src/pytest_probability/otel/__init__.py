"""OpenTelemetry export for pytest-probability.

Importing this package imports no OpenTelemetry module: :func:`configure`
decides from the options whether export is on and only then imports the SDK.
"""

from __future__ import annotations

from typing import Any

import pytest

from . import options


class _ControllerHooks:
    """Hooks of the aggregating process while export is on."""

    def __init__(self, exporter: Any) -> None:
        self.exporter = exporter

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        self.exporter.add_report(report)

    @pytest.hookimpl(optionalhook=True)
    def pytest_configure_node(self, node: Any) -> None:
        # xdist: workers parent their run spans to this session's span.
        node.workerinput["prob_otel_traceparent"] = self.exporter.traceparent


def configure(config: pytest.Config, state: Any) -> None:
    settings = options.resolve(config)
    if settings is None:
        return
    from .spans import RunSpans

    if state.worker:
        parent = config.workerinput.get("prob_otel_traceparent")  # type: ignore[attr-defined]
        state.observers.append(RunSpans(settings, parent))
        return

    from .session import Exporter

    exporter = Exporter(settings, config.rootpath)
    state.observers.append(RunSpans(settings, exporter.traceparent, deliver=exporter.add, resource=exporter.resource))
    config.pluginmanager.register(_ControllerHooks(exporter), "probability-otel")

    def finish(session: pytest.Session, state: Any, summary: Any, exitstatus: int) -> None:
        try:
            state.notes.extend(exporter.finish(summary, exitstatus, state.metric_series))
        except Exception as exc:  # exporting never changes an outcome or the exit status
            state.notes.append(f"OpenTelemetry: export failed unexpectedly: {type(exc).__name__}: {exc}")

    state.finishers.append(finish)
