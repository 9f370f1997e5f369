"""Run spans: created where the run executes, exported where rows are aggregated.

The process executing a run (a serial session, or an xdist worker) starts the
run's span before setup, keeps it current through setup, call and teardown
(so spans of the user's own instrumentation nest under it), ends it after
teardown and ships it, as plain builtins, on the teardown report. The
aggregating process rebuilds a ``ReadableSpan`` and hands it to the real OTLP
exporter. No worker ever talks to the network.
"""

from __future__ import annotations

import traceback
from typing import Any, Callable, Sequence

from opentelemetry import context as otel_context
from opentelemetry import trace
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import Event, ReadableSpan, SpanProcessor, TracerProvider
from opentelemetry.sdk.trace.sampling import ALWAYS_ON
from opentelemetry.sdk.util.instrumentation import InstrumentationScope
from opentelemetry.trace import SpanContext, SpanKind, Status, StatusCode, TraceFlags
from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator

from .. import __version__
from ..model import ERROR, FAIL, PASS, SKIP, Usage
from ..recording import CurrentRun
from .options import OtelSettings

SCOPE_NAME = "pytest_probability"
#: Report attribute that carries a finished run span.
REPORT_ATTRIBUTE = "prob_span"
MESSAGE_LIMIT = 4096
STACK_LIMIT = 16384


def scope() -> InstrumentationScope:
    return InstrumentationScope(SCOPE_NAME, __version__)


def context_from_traceparent(traceparent: str | None) -> otel_context.Context | None:
    if not traceparent:
        return None
    return TraceContextTextMapPropagator().extract({"traceparent": traceparent})


def traceparent_of(span: trace.Span) -> str:
    carrier: dict[str, str] = {}
    TraceContextTextMapPropagator().inject(carrier, context=trace.set_span_in_context(span))
    return carrier["traceparent"]


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


class _Keep(SpanProcessor):
    """Holds each ended span until the run's observer takes it."""

    def __init__(self) -> None:
        self.ended: list[ReadableSpan] = []

    def on_end(self, span: ReadableSpan) -> None:
        self.ended.append(span)


class RunSpans:
    """Observer of runs in the executing process (see ``State.observers``)."""

    def __init__(
        self,
        settings: OtelSettings,
        parent_traceparent: str | None,
        deliver: Callable[[ReadableSpan], None] | None = None,
        resource: Resource | None = None,
    ) -> None:
        """``deliver``: in the aggregating process itself (a serial session), hand ended
        spans straight to the exporter; without it (an xdist worker) they travel on
        the teardown report."""
        self.settings = settings
        self.deliver = deliver
        self._keep = _Keep()
        provider = TracerProvider(resource=resource or Resource.get_empty(), sampler=ALWAYS_ON)
        provider.add_span_processor(self._keep)
        self._provider = provider
        self.tracer = provider.get_tracer(SCOPE_NAME, __version__)
        self.parent = context_from_traceparent(parent_traceparent)
        self._open: dict[str, tuple[trace.Span, object]] = {}

    def run_started(self, item: Any, run: CurrentRun) -> None:
        case = run.case
        attributes: dict[str, Any] = {
            "test.case.name": case.label,
            "probability.benchmark": case.benchmark,
            "probability.case": case.case,
            "probability.run": run.run,
            "pytest.nodeid": run.nodeid,
            "code.function.name": case.function,
            "code.file.path": case.path,
            "code.line.number": case.lineno,
        }
        if self.settings.capture_values:
            for name, value in case.params:
                attributes[f"probability.param.{name}"] = value
        span = self.tracer.start_span(f"probability.run {case.label}", context=self.parent, attributes=attributes)
        token = otel_context.attach(trace.set_span_in_context(span))
        self._open[run.nodeid] = (span, token)
        ids = span.get_span_context()
        run.trace_id = format(ids.trace_id, "032x")
        run.span_id = format(ids.span_id, "016x")
        run.listeners.append(lambda usage: _usage_event(span, usage))

    def phase_finished(self, item: Any, run: CurrentRun, call: Any) -> None:
        if not self.settings.capture_values:
            return
        if call.excinfo is not None and run.phase == call.when and run.outcome in (FAIL, ERROR):
            run.stacktrace = "".join(traceback.format_exception(call.excinfo.type, call.excinfo.value, call.excinfo.tb))

    def run_finished(self, item: Any, run: CurrentRun) -> None:
        opened = self._open.pop(run.nodeid, None)
        if opened is None:
            return
        span, token = opened
        try:
            _finish(span, run, self.settings.capture_values)
        finally:
            span.end()
            otel_context.detach(token)
        spans, self._keep.ended = self._keep.ended, []
        if self.deliver is not None:
            for ended in spans:
                self.deliver(ended)
        else:
            run.report_extras[REPORT_ATTRIBUTE] = [span_to_dict(s) for s in spans]

    def run_closed(self, item: Any, run: CurrentRun) -> None:
        """The run ended without a teardown report (interrupted): close its span."""
        opened = self._open.pop(run.nodeid, None)
        if opened is not None:
            span, token = opened
            span.end()
            otel_context.detach(token)
            self._keep.ended.clear()


def _usage_event(span: trace.Span, usage: Usage) -> None:
    span.add_event(
        "probability.usage",
        {
            "gen_ai.request.model": usage.model,
            "gen_ai.usage.input_tokens": usage.input_tokens,
            "gen_ai.usage.output_tokens": usage.output_tokens,
            "gen_ai.usage.cache_read.input_tokens": usage.cached_input_tokens,
            "probability.cost": usage.cost,
        },
    )


def _finish(span: trace.Span, run: CurrentRun, capture_values: bool) -> None:
    outcome = run.outcome or SKIP
    span.set_attribute("probability.outcome", outcome)
    if outcome in (PASS, FAIL, ERROR):
        span.set_attribute("test.case.result.status", "pass" if outcome == PASS else "fail")
    if run.usage:
        span.set_attribute("gen_ai.usage.input_tokens", sum(u.input_tokens for u in run.usage))
        span.set_attribute("gen_ai.usage.output_tokens", sum(u.output_tokens for u in run.usage))
        span.set_attribute("gen_ai.usage.cache_read.input_tokens", sum(u.cached_input_tokens for u in run.usage))
        models = {u.model for u in run.usage}
        if len(models) == 1:
            span.set_attribute("gen_ai.request.model", models.pop())
    cost = run.extra_cost + sum(u.cost for u in run.usage)
    if run.usage or run.extra_cost:
        span.set_attribute("probability.cost", cost)
    if outcome == SKIP and run.message and capture_values:
        span.set_attribute("probability.skip.reason", _clip(run.message, MESSAGE_LIMIT))
    if outcome not in (FAIL, ERROR):
        return
    error_type = run.error_type or ("AssertionError" if outcome == FAIL else "Exception")
    span.set_attribute("error.type", error_type)
    event: dict[str, Any] = {"exception.type": error_type}
    if capture_values:
        message = _clip(run.error_text or run.message, MESSAGE_LIMIT)
        event["exception.message"] = message
        if run.stacktrace:
            event["exception.stacktrace"] = _clip(run.stacktrace, STACK_LIMIT)
        if outcome == FAIL:
            span.set_attribute("probability.assertion", message)
        description = f"{outcome} in {run.phase}: {_clip(run.message, 256)}"
    else:
        description = f"{outcome} in {run.phase}: {error_type}"
    span.add_event("exception", event)
    span.set_status(Status(StatusCode.ERROR, description))


# -- the wire form ------------------------------------------------------------


def _plain(value: Any) -> Any:
    return list(value) if isinstance(value, tuple) else value


def span_to_dict(span: ReadableSpan) -> dict[str, Any]:
    ctx = span.context
    parent = span.parent
    return {
        "name": span.name,
        "trace_id": format(ctx.trace_id, "032x"),
        "span_id": format(ctx.span_id, "016x"),
        "flags": int(ctx.trace_flags),
        "parent_span_id": format(parent.span_id, "016x") if parent else "",
        "parent_remote": bool(parent and parent.is_remote),
        "kind": span.kind.value,
        "start": span.start_time,
        "end": span.end_time,
        "attributes": {k: _plain(v) for k, v in (span.attributes or {}).items()},
        "events": [
            {"name": e.name, "time": e.timestamp, "attributes": {k: _plain(v) for k, v in (e.attributes or {}).items()}}
            for e in span.events
        ],
        "status": [span.status.status_code.value, span.status.description or ""],
    }


def span_from_dict(data: dict[str, Any], resource: Resource) -> ReadableSpan:
    trace_id = int(data["trace_id"], 16)
    flags = TraceFlags(data.get("flags", 1))
    parent = None
    if data.get("parent_span_id"):
        parent = SpanContext(trace_id, int(data["parent_span_id"], 16), is_remote=data.get("parent_remote", False), trace_flags=flags)
    code, description = data["status"]
    status_code = StatusCode(code)
    return ReadableSpan(
        name=data["name"],
        context=SpanContext(trace_id, int(data["span_id"], 16), is_remote=False, trace_flags=flags),
        parent=parent,
        resource=resource,
        attributes=data["attributes"],
        events=[Event(e["name"], e["attributes"], e["time"]) for e in data["events"]],
        kind=SpanKind(data["kind"]),
        status=Status(status_code, description or None) if status_code is StatusCode.ERROR else Status(status_code),
        start_time=data["start"],
        end_time=data["end"],
        instrumentation_scope=scope(),
    )


def spans_from_report(report: Any, resource: Resource) -> Sequence[ReadableSpan]:
    data = getattr(report, REPORT_ATTRIBUTE, None)
    if not data or getattr(report, "when", None) != "teardown":
        return ()
    return [span_from_dict(d, resource) for d in data]
