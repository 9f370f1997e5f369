"""Usage from spans: the GenAI usage of every span that ends inside a run is charged to that run.

:class:`SpanUsage`, a run observer in every process that executes runs (ini ``prob_span_usage`` not ``off``,
export on or off), imports nothing of OpenTelemetry: at configure and at each run's start it looks whether
``opentelemetry.trace`` is loaded (one ``sys.modules`` lookup), and once it is, which tracer provider is
global. An SDK ``TracerProvider`` (the user's, an auto-instrumentation's, the plugin's own) gets the span
processor :class:`~.usage_spans.UsageProcessor`, once; the API's proxy while an OpenTelemetry instrumentor is
instrumented (its tracers came from the proxy) is replaced by an SDK provider with only that processor
(nothing is exported unless export is on); otherwise nothing is done. The processor reads each ended
span's attributes (:mod:`..run.spanusage`) and charges its run by context (:func:`..run.context.charge_span`).
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any

import pytest

from ..compat.otel_sdk import instrumented
from ..protocols import RunObserver
from ..roles.wiring import Aggregation, Feature, Wiring, WorkerWiring

if TYPE_CHECKING:
    from ..config.settings import Settings


def feature(config: pytest.Config, settings: Settings) -> UsageFromSpans:
    """Usage from spans: on unless ini ``prob_span_usage = off`` (the composition root's decision)."""
    return UsageFromSpans()


class UsageFromSpans(Feature):
    """Usage from spans, in every process that executes runs or aggregates them, once the export's tracer
    provider (global when none is set) is in place: so that the first look finds it."""

    def _observe(self, wiring: Wiring) -> None:
        usage = SpanUsage()
        wiring.parts.add(observers=usage)
        usage.look()

    def aggregating(self, wiring: Aggregation) -> None:
        self._observe(wiring)

    def worker(self, wiring: WorkerWiring) -> None:
        self._observe(wiring)


class SpanUsage(RunObserver):
    """Finds the global tracer provider and puts the usage processor on it (see the module)."""

    def __init__(self) -> None:
        #: The processor; the global provider last seen (None: not looked yet, or the proxy with nothing
        #: instrumented); the ids of the providers the processor is on; the SDK provider this observer made
        #: global; whether a provider other than the proxy is global (then it cannot change any more).
        self.processor: Any = None
        self._seen: Any = None
        self._hooked: set[int] = set()
        self.installed: Any = None
        self.settled = False

    def run_started(self, item: Any, run: Any) -> None:
        self.look()

    def look(self) -> None:
        if self.settled:
            return
        trace = sys.modules.get("opentelemetry.trace")
        if trace is None:
            return
        provider = trace.get_tracer_provider()
        if provider is self._seen:
            return
        if not isinstance(provider, trace.ProxyTracerProvider):
            # The API sets the global provider once: from now on it is this one.
            self.settled = True
        if hasattr(provider, "add_span_processor"):
            self._seen = provider
            self._hook(provider)
        elif isinstance(provider, trace.ProxyTracerProvider) and instrumented():
            made = _usage_spans().sdk_provider()  # only when an instrumentor has no SDK provider
            trace.set_tracer_provider(made)
            if trace.get_tracer_provider() is made:
                self.installed = made
                self._seen = made
                self.settled = True
                self._hook(made)

    def _hook(self, provider: Any) -> None:
        if id(provider) in self._hooked:
            return
        if self.processor is None:
            self.processor = _usage_spans().UsageProcessor()
        provider.add_span_processor(self.processor)
        self._hooked.add(id(provider))


def _usage_spans() -> Any:
    """:mod:`.usage_spans`, which imports the SDK: here only, once an SDK provider is global or one is made."""
    from . import usage_spans

    return usage_spans
