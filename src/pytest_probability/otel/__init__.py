"""OpenTelemetry export for pytest-probability.

Importing this package imports no OpenTelemetry module: :func:`configure`
decides from the options whether export is on and only then imports the
OpenTelemetry API (for the run spans) and, at session end, the SDK (for the
metrics).
"""

from __future__ import annotations

from typing import Any

import pytest

from . import options


class _ControllerHooks:
    """xdist hooks of the aggregating process while export is on."""

    def __init__(self, exporter: Any) -> None:
        self.exporter = exporter

    @pytest.hookimpl(optionalhook=True)
    def pytest_configure_node(self, node: Any) -> None:
        # xdist: workers parent their run spans to this session's span.
        node.workerinput["prob_otel_traceparent"] = self.exporter.traceparent


def configure(config: pytest.Config, state: Any) -> None:
    settings = options.resolve(config)
    if settings is None:
        return
    from .runspan import parse_traceparent
    from .spans import REPORT_ATTRIBUTE, RunSpans

    from .encode import span_encoder

    if state.worker:
        # Workers encode their spans (in the formats the controller's sinks need) and ship them on reports.
        parent = parse_traceparent(config.workerinput.get("prob_otel_traceparent"))  # type: ignore[attr-defined]
        state.observers.append(RunSpans(settings, parent, span_encoder(settings.network, settings.file is not None)))
        return

    from .session import Exporter

    exporter = Exporter(settings, config.rootpath)
    state.observers.append(
        RunSpans(settings, exporter.session_ids, exporter.encode, deliver=exporter.add, parent_remote=False)
    )
    # Run spans from xdist workers arrive on teardown reports.
    state.report_consumers[REPORT_ATTRIBUTE] = exporter.add
    config.pluginmanager.register(_ControllerHooks(exporter), "probability-otel")

    def finish(session: pytest.Session, state: Any, summary: Any, exitstatus: int) -> None:
        try:
            state.notes.extend(exporter.finish(summary, exitstatus, state.metric_series))
        except Exception as exc:  # exporting never changes an outcome or the exit status
            state.notes.append(f"OpenTelemetry: export failed unexpectedly: {type(exc).__name__}: {exc}")

    state.finishers.append(finish)
