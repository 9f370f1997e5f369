"""OpenTelemetry export for pytest-probability.

Importing this package imports no OpenTelemetry module: :func:`configure`
decides from the options whether export is on and only then imports the
OpenTelemetry SDK (its tracer provider for the run spans, its OTLP exporters
and encoders for sending).
"""

from __future__ import annotations

from typing import Any

import pytest

from . import options

#: workeroutput key: spans a worker ended after its last run, encoded.
LEFTOVER = "prob_otel_spans"


class _ControllerHooks:
    """xdist hooks of the aggregating process while export is on."""

    def __init__(self, session: Any) -> None:
        self.session = session

    @pytest.hookimpl(optionalhook=True)
    def pytest_configure_node(self, node: Any) -> None:
        # Workers parent their run spans to this session's span and share its resource.
        node.workerinput["prob_otel_traceparent"] = self.session.traceparent
        node.workerinput["prob_otel_tracestate"] = self.session.session_span.get_span_context().trace_state.to_header()
        node.workerinput["prob_otel_resource"] = dict(self.session.resource.attributes)

    @pytest.hookimpl(optionalhook=True)
    def pytest_testnodedown(self, node: Any, error: Any) -> None:
        leftover = getattr(node, "workeroutput", {}).get(LEFTOVER)
        if leftover:
            self.session.pipeline.add_encoded(tuple(leftover))


class _WorkerHooks:
    def __init__(self, config: pytest.Config, buffer: Any) -> None:
        self.config = config
        self.buffer = buffer

    def pytest_sessionfinish(self) -> None:
        leftover = self.buffer.take()
        if leftover is not None:
            self.config.workeroutput[LEFTOVER] = leftover  # type: ignore[attr-defined]


def configure(config: pytest.Config, state: Any) -> None:
    settings = options.resolve(config)
    if settings is None:
        return
    import os

    for name in settings.bad_limits:
        os.environ.pop(name, None)
    from .spans import REPORT_ATTRIBUTE, RunSpans, WorkerBuffer, make_provider, parent_context, tracer

    if state.worker:
        from opentelemetry.sdk.resources import Resource

        workerinput = config.workerinput  # type: ignore[attr-defined]
        buffer = WorkerBuffer()
        provider, _ = make_provider(Resource(workerinput.get("prob_otel_resource", {})), buffer.add)
        parent = parent_context(workerinput.get("prob_otel_traceparent"), workerinput.get("prob_otel_tracestate"))
        state.observers.append(RunSpans(settings, tracer(provider), parent, take=buffer.take))
        config.pluginmanager.register(_WorkerHooks(config, buffer), "probability-otel-worker")
        return

    from .session import Session

    session = Session(settings, config.rootpath)
    state.observers.append(RunSpans(settings, session.tracer, session.run_parent))
    # Spans from xdist workers arrive on teardown reports.
    state.report_consumers[REPORT_ATTRIBUTE] = lambda value: session.pipeline.add_encoded(tuple(value))
    config.pluginmanager.register(_ControllerHooks(session), "probability-otel")

    def finish(pytest_session: pytest.Session, state: Any, summary: Any, exitstatus: int) -> None:
        try:
            state.notes.extend(session.finish(summary, exitstatus, state.metric_series))
        except Exception as exc:  # exporting never changes an outcome or the exit status
            state.notes.append(f"OpenTelemetry: export failed unexpectedly: {type(exc).__name__}: {exc}")

    state.finishers.append(finish)
