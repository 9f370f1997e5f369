"""Run spans: SDK spans, made where the run executes, exported where rows are aggregated.

The plugin's SDK ``TracerProvider`` has the session's resource and one processor, the SDK's
``BatchSpanProcessor`` (:mod:`.sdk_exporters`). When the process has no global tracer provider yet it becomes
the global one, so every span made inside a run (by the user's code or an instrumentation, also through a
tracer obtained at import) is a child of the run span and takes the same path; a user's own provider stays
in charge of its spans, which keep the run span as parent through the context. Each run's span is current
through setup, call and teardown.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from opentelemetry import context as otel_context
from opentelemetry import trace
from opentelemetry.trace import Status, StatusCode
from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator

from .. import __version__
from ..compat import pytest as compat
from ..config.otel_settings import OtelSettings
from ..model.outputs import case_name
from ..model.run import Usage
from ..model.run_state import CurrentRun
from ..protocols import RunObserver
from ..run.attributes import (
    EVALUATION_EVENT,
    MESSAGE_LIMIT,
    evaluated,
    evaluation_results,
    late_attributes,
    run_attributes,
    transcript_attributes,
    usage_event,
)
from ..text import clip, well_formed
from ..vocabulary import ERROR, FAIL

if TYPE_CHECKING:
    from contextvars import Token

    from opentelemetry.context import Context

STACK_LIMIT = 16384
SCOPE = "pytest_probability"
#: The GenAI semantic conventions' event for an inference's content.
TRANSCRIPT_EVENT = "gen_ai.client.inference.operation.details"
#: The name of the span that carries usage charged to a run after its span ended.
LATE_SPAN = "probability.late_usage"


def make_provider(resource: Any, processor: Any) -> tuple[Any, bool]:
    """The plugin's TracerProvider (SDK sampler and limits from OTEL_*) with its one processor; made global
    when none is set. Not shut down at exit: the session's end flushes it, within its deadline."""
    from opentelemetry.sdk.trace import TracerProvider  # the SDK reads OTEL_* limits as it is imported

    provider = TracerProvider(resource=resource, shutdown_on_exit=False)
    provider.add_span_processor(processor)
    made_global = isinstance(trace.get_tracer_provider(), trace.ProxyTracerProvider)
    if made_global:
        trace.set_tracer_provider(provider)
    return provider, made_global


def parent_context(traceparent: str | None, tracestate: str | None = None) -> Any:
    """The context a W3C traceparent (and tracestate) describes, or None."""
    if not traceparent:
        return None
    carrier = {"traceparent": traceparent}
    if tracestate:
        carrier["tracestate"] = tracestate
    return TraceContextTextMapPropagator().extract(carrier)


def span_context(trace_id: int, span_id: int) -> Any:
    """A context whose current span is the sampled span of these ids: an exemplar's run, a log record's span."""
    flags = trace.TraceFlags(trace.TraceFlags.SAMPLED)
    return trace.set_span_in_context(trace.NonRecordingSpan(trace.SpanContext(trace_id, span_id, False, flags)))


def traceparent_of(span: Any) -> str:
    context = span.get_span_context()
    return f"00-{context.trace_id:032x}-{context.span_id:016x}-{int(context.trace_flags):02x}"


class RunSpans(RunObserver):
    """Each run's span, made in the process executing it (a :class:`~pytest_probability.protocols.RunObserver`)."""

    def __init__(self, settings: OtelSettings, tracer: Any, parent: Any, logger: Any = None) -> None:
        """``parent``: the context of the session span; ``logger``: the plugin's, for the evaluation results."""
        self.settings = settings
        self.tracer = tracer
        self.parent = parent
        self.logger = logger
        self._attach, self._detach = otel_context.attach, otel_context.detach
        self._in_context = trace.set_span_in_context
        self._error = lambda text: Status(StatusCode.ERROR, text)
        self._open: dict[str, tuple[Any, Token[Context]]] = {}
        self._cases: dict[int, tuple[Any, str, dict[str, Any]]] = {}
        #: The last trace id and its text: every run span is in the session's trace, and each run's
        #: record keeps the text for as long as the session does, so the runs share one string.
        self._trace: tuple[int, str] = (0, "")

    def _case_attributes(self, item: Any, case: Any) -> tuple[str, dict[str, Any]]:
        """The span name and the attributes every run of ``case`` shares (one dict per case)."""
        cached = self._cases.get(id(case))
        if cached is not None and cached[0] is case:
            return cached[1], cached[2]
        module = getattr(getattr(item, "module", None), "__name__", "")
        attributes: dict[str, Any] = {
            "test.case.name": case_name(case),
            "probability.benchmark": case.benchmark,
            "probability.case": case.case,
            "code.function.name": f"{module}.{case.function}" if module else case.function,
            "code.file.path": case.path,
            "code.line.number": case.lineno,
        }
        if self.settings.capture_values:
            for name, value in case.params:
                attributes[f"probability.param.{name}"] = value  # clipped at collection
        name = f"probability.run {case.label}"
        self._cases[id(case)] = (case, name, attributes)
        return name, attributes

    def run_started(self, item: Any, run: CurrentRun) -> None:
        name, shared = self._case_attributes(item, run.case)
        span = self.tracer.start_span(
            name, context=self.parent, attributes={**shared, "probability.run": run.run, "pytest.nodeid": run.nodeid}
        )
        token = self._attach(self._in_context(span))
        self._open[run.nodeid] = (span, token)
        context = span.get_span_context()
        if context.trace_flags.sampled:  # ids of a span that is exported, for the JSON report and exemplars
            if context.trace_id != self._trace[0]:
                self._trace = (context.trace_id, format(context.trace_id, "032x"))
            run.trace_id = self._trace[1]
            run.span_id = format(context.span_id, "016x")
        capture = self.settings.capture_values
        run.listeners.append(lambda recorded: _recorded_event(span, recorded, capture))
        run.late_listeners.append(lambda late_run, usage, extra: self._late_span(span, late_run, usage, extra))

    def run_entered(self, item: Any, run: CurrentRun) -> None:
        """A group's leader's call runs in a task or thread of its own: its span is current there too."""
        opened = self._open.get(run.nodeid)
        if opened is not None:
            self._attach(self._in_context(opened[0]))

    def _late_span(self, run_span: Any, run: CurrentRun, usage: Usage | None, extra_cost: float) -> None:
        """Late usage (recorded after the run's span ended, which cannot change any more): a span of its
        own, ``probability.late_usage``, a child of the run's span with the usage's attributes."""
        late = self.tracer.start_span(
            f"{LATE_SPAN} {run.case.label}",
            context=self._in_context(run_span),
            attributes=late_attributes(run, usage, extra_cost),
        )
        late.end()

    def phase_raised(self, item: Any, run: CurrentRun, call: Any) -> None:
        if not self.settings.capture_values or run.phase != call.when or run.outcome not in (FAIL, ERROR):
            return
        try:  # pytest's own short report: its traceback pruning and assertion introspection
            stacktrace = compat.short_report(item, call.excinfo)
        except Exception:
            stacktrace = str(call.excinfo.getrepr(style="short"))
        run.stacktrace = well_formed(stacktrace)  # the message in it is any text

    def run_finished(self, item: Any, run: CurrentRun) -> None:
        self._close(run, finished=True)

    def run_closed(self, item: Any, run: CurrentRun) -> None:
        """The run ended without a teardown report (interrupted): close its span, with the outcome
        its record gets (a skip, ``interrupted: KeyboardInterrupt``), when the run stage gave one."""
        self._close(run, finished=run.outcome is not None)

    def _close(self, run: CurrentRun, finished: bool) -> None:
        opened = self._open.pop(run.nodeid, None)
        if opened is None:
            return
        span, token = opened
        try:
            if finished:
                self._finish(span, run)
        finally:
            # A concurrent run's span lasts its own call (runs in flight together overlap in time).
            span.end(end_time=int(run.call_end * 1e9) if run.call_end is not None else None)
            if not run.own_context:  # a run started ahead made its span current in its own task or thread
                try:
                    self._detach(token)
                except Exception:  # pragma: no cover - a context detached out of order by user code
                    pass

    def _finish(self, span: Any, run: CurrentRun) -> None:
        capture = self.settings.capture_values
        outcome = run.outcome
        attributes = run_attributes(run, capture)
        span.set_attributes(attributes)
        results = evaluation_results(run) if self.logger is not None else ()
        if results:  # the evaluated GenAI span's ids, else the run span's
            operation = evaluated(run)
            context = span_context(*operation[:2]) if operation else self._in_context(span)
            for result in results:
                self.logger.emit(event_name=EVALUATION_EVENT, attributes=result, context=context)
        if outcome not in (FAIL, ERROR):
            return
        event: dict[str, Any] = {"exception.type": attributes["error.type"]}
        if capture:
            message = clip(run.error_text or run.message, MESSAGE_LIMIT)
            event["exception.message"] = message
            if run.stacktrace:
                event["exception.stacktrace"] = clip(run.stacktrace, STACK_LIMIT)
            if outcome == FAIL:
                span.set_attribute("probability.assertion", message)
            description = f"{outcome} in {run.phase}: {clip(run.message, 256)}"
        else:
            description = f"{outcome} in {run.phase}: {attributes['error.type']}"
        span.add_event("exception", event)
        span.set_status(self._error(description))


def _recorded_event(span: Any, recorded: Any, capture: bool) -> None:
    """A span event for what ``record_usage`` (always) or ``record_output``/``record_io`` (capture ``all``) recorded."""
    if isinstance(recorded, Usage):
        span.add_event("probability.usage", usage_event(recorded))
    elif capture:
        span.add_event(TRANSCRIPT_EVENT, transcript_attributes(recorded))


def tracer(provider: Any) -> Any:
    return provider.get_tracer(SCOPE, __version__)
