"""Usage from spans: the GenAI usage of every span that ends inside a run is charged to that run.

:class:`SpanUsage` is a :class:`~pytest_probability.protocols.RunObserver`
registered in every process that executes runs (ini ``prob_span_usage`` not
``off``), export on or off. It imports nothing of OpenTelemetry: at configure
and at each run's start it looks whether ``opentelemetry.trace`` is loaded
(one ``sys.modules`` lookup; a session whose code loads no OpenTelemetry
pays nothing more), and once it is, which tracer provider is global:

* an SDK ``TracerProvider`` (the user's, an auto-instrumentation's, or the
  plugin's own when export is on): the span processor
  :class:`~pytest_probability.otel.usage_spans.UsageProcessor` is added to
  it, once per provider;
* none (the API's proxy) while an OpenTelemetry instrumentor is instrumented
  (``BaseInstrumentor.instrument()`` was called, which made its tracers from
  the proxy): an SDK ``TracerProvider`` with only that processor is made
  global, so the instrumentor's spans become real and are read. Nothing is
  exported unless export is on;
* none and nothing instrumented: nothing (no span could carry usage).

The processor reads each ended span's attributes (:mod:`..run.spanusage`)
and charges its run by context (:func:`..run.context.charge_span`).
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any

import pytest

from ..protocols import RunObserver
from ..roles.wiring import Aggregation, Feature, Wiring, WorkerWiring
from ..vocabulary import SPAN_OFF

if TYPE_CHECKING:
    from ..config.settings import Settings


def feature(config: pytest.Config, settings: Settings) -> Usage | None:
    """Usage from spans unless ini ``prob_span_usage = off``."""
    return Usage() if settings.span_usage != SPAN_OFF else None


class Usage(Feature):
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


def instrumented() -> bool:
    """Whether an OpenTelemetry instrumentor (``BaseInstrumentor`` subclass) has been instrumented."""
    module = sys.modules.get("opentelemetry.instrumentation.instrumentor")
    base = getattr(module, "BaseInstrumentor", None)
    if base is None:
        return False
    from ..compat.otel import instrumentor_instance

    stack = list(base.__subclasses__())
    while stack:
        cls = stack.pop()
        stack.extend(cls.__subclasses__())
        instance = instrumentor_instance(cls)
        if instance is not None and instance.is_instrumented_by_opentelemetry:
            return True
    return False


class SpanUsage(RunObserver):
    """Finds the global tracer provider and puts the usage processor on it (see the module)."""

    def __init__(self) -> None:
        self.processor: Any = None
        #: The global provider last seen (None: not looked yet, or the proxy with nothing instrumented).
        self._seen: Any = None
        #: ids of the providers the processor is on.
        self._hooked: set[int] = set()
        #: The SDK provider this observer made global (None: it made none).
        self.installed: Any = None
        #: A provider other than the API's proxy is global: it cannot change any more, nothing to look at.
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
            from opentelemetry.sdk.trace import TracerProvider

            made = TracerProvider()
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
            from .usage_spans import UsageProcessor

            self.processor = UsageProcessor()
        provider.add_span_processor(self.processor)
        self._hooked.add(id(provider))
