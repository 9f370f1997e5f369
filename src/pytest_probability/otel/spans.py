"""Run spans: created where the run executes, exported where rows are aggregated.

The process executing a run (a serial session, or an xdist worker) starts the
run's span before setup, keeps it current through setup, call and teardown
(so spans of the user's own instrumentation nest under it), ends it after
teardown and hands over its wire form (a plain dict, see
:mod:`pytest_probability.otel.runspan`): straight to the exporter in a serial
session, on the teardown report under xdist. No worker ever talks to the
network.

The runs never touch the SDK. The OpenTelemetry API is used (and the run's
span made current) only once the process has imported ``opentelemetry.trace``;
see :mod:`pytest_probability.otel.runspan`.
"""

from __future__ import annotations

import sys
import traceback
from typing import Any, Callable, NamedTuple

from ..model import ERROR, FAIL, PASS, SKIP, Usage
from ..recording import CurrentRun
from .options import OtelSettings
from .runspan import ERROR as STATUS_ERROR
from .runspan import Limits, SpanCore, api_span_class, new_trace_id

#: Report attribute that carries a finished run span, encoded.
REPORT_ATTRIBUTE = "prob_span"
MESSAGE_LIMIT = 4096
STACK_LIMIT = 16384


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


class _Api(NamedTuple):
    """What making a run span current needs from the OpenTelemetry API (imported on first use)."""

    span_class: type[SpanCore]
    attach: Callable[..., Any]
    detach: Callable[..., Any]
    in_context: Callable[..., Any]


class RunSpans:
    """Observer of runs in the executing process (see ``State.observers``)."""

    def __init__(
        self,
        settings: OtelSettings,
        parent: tuple[int, int] | None,
        encode: Callable[[dict[str, Any]], Any],
        deliver: Callable[[Any], None] | None = None,
        parent_remote: bool = True,
        limits: Limits | None = None,
    ) -> None:
        """``parent``: (trace id, span id) of the session span. ``encode``: turns an
        ended span's wire form into what the exporter takes (``session.span_encoder``).
        ``deliver``: in the aggregating process itself (a serial session), hand each
        encoded span straight to the exporter; without it (an xdist worker) it
        travels on the teardown report."""
        self.settings = settings
        self.encode = encode
        self.deliver = deliver
        self.limits = limits or Limits.from_env()
        self.trace_id, self.parent_span_id = parent if parent else (new_trace_id(), 0)
        self.parent_remote = parent_remote and bool(parent)
        self.trace_hex = format(self.trace_id, "032x")
        self._open: dict[str, tuple[SpanCore, object]] = {}
        self._cases: dict[int, tuple[Any, str, dict[str, Any]]] = {}
        self._api: _Api | None = None

    def _api_parts(self) -> _Api:
        if self._api is None:
            from opentelemetry import context as otel_context
            from opentelemetry import trace

            self._api = _Api(api_span_class(), otel_context.attach, otel_context.detach, trace.set_span_in_context)
        return self._api

    def _case_attributes(self, case: Any) -> tuple[str, dict[str, Any]]:
        """The span name and the attributes every run of ``case`` shares (one dict per case)."""
        cached = self._cases.get(id(case))
        if cached is not None and cached[0] is case:
            return cached[1], cached[2]
        attributes: dict[str, Any] = {
            "test.case.name": case.label,
            "probability.benchmark": case.benchmark,
            "probability.case": case.case,
            "code.function.name": case.function,
            "code.file.path": case.path,
            "code.line.number": case.lineno,
        }
        if self.settings.capture_values:
            for name, value in case.params:
                attributes[f"probability.param.{name}"] = value  # clipped at collection
        length = self.limits.attribute_length
        if length is not None:
            attributes = {k: v[:length] if type(v) is str else v for k, v in attributes.items()}
        name = f"probability.run {case.label}"
        self._cases[id(case)] = (case, name, attributes)
        return name, attributes

    def run_started(self, item: Any, run: CurrentRun) -> None:
        name, shared = self._case_attributes(run.case)
        attributes: dict[str, Any] = {"probability.run": run.run, "pytest.nodeid": run.nodeid}
        api = self._api_parts() if "opentelemetry.trace" in sys.modules else None  # something may nest spans under it
        span = (api.span_class if api else SpanCore)(
            name, self.trace_id, self.parent_span_id, self.parent_remote, attributes, self.limits, case_attributes=shared
        )
        token = api.attach(api.in_context(span)) if api else None
        self._open[run.nodeid] = (span, token)
        run.trace_id = self.trace_hex
        run.span_id = format(span.span_id, "016x")
        run.listeners.append(lambda usage: _usage_event(span, usage))

    def phase_raised(self, item: Any, run: CurrentRun, call: Any) -> None:
        if not self.settings.capture_values:
            return
        if run.phase == call.when and run.outcome in (FAIL, ERROR):
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
            if token is not None:
                self._api_parts().detach(token)
        data = self.encode(span.to_dict())
        if self.deliver is not None:
            self.deliver(data)
        else:
            run.report_extras[REPORT_ATTRIBUTE] = data

    def run_closed(self, item: Any, run: CurrentRun) -> None:
        """The run ended without a teardown report (interrupted): close its span."""
        opened = self._open.pop(run.nodeid, None)
        if opened is not None:
            span, token = opened
            span.end()
            if token is not None:
                self._api_parts().detach(token)


def _usage_event(span: SpanCore, usage: Usage) -> None:
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


def _finish(span: SpanCore, run: CurrentRun, capture_values: bool) -> None:
    set_attribute = span.set_attribute
    outcome = run.outcome or SKIP
    attributes = span.attributes
    attributes["probability.outcome"] = outcome
    if outcome in (PASS, FAIL, ERROR):
        attributes["test.case.result.status"] = "pass" if outcome == PASS else "fail"
    if run.usage:
        set_attribute("gen_ai.usage.input_tokens", sum(u.input_tokens for u in run.usage))
        set_attribute("gen_ai.usage.output_tokens", sum(u.output_tokens for u in run.usage))
        set_attribute("gen_ai.usage.cache_read.input_tokens", sum(u.cached_input_tokens for u in run.usage))
        models = {u.model for u in run.usage}
        if len(models) == 1:
            set_attribute("gen_ai.request.model", models.pop())
    if run.usage or run.extra_cost:
        set_attribute("probability.cost", run.extra_cost + sum(u.cost for u in run.usage))
    if outcome == SKIP and run.message and capture_values:
        set_attribute("probability.skip.reason", _clip(run.message, MESSAGE_LIMIT))
    length = span.limits.attribute_length
    if length is not None:
        for key, value in attributes.items():
            if type(value) is str and len(value) > length:
                attributes[key] = value[:length]
    if outcome not in (FAIL, ERROR):
        return
    error_type = run.error_type or ("AssertionError" if outcome == FAIL else "Exception")
    set_attribute("error.type", error_type)
    event: dict[str, Any] = {"exception.type": error_type}
    if capture_values:
        message = _clip(run.error_text or run.message, MESSAGE_LIMIT)
        event["exception.message"] = message
        if run.stacktrace:
            event["exception.stacktrace"] = _clip(run.stacktrace, STACK_LIMIT)
        if outcome == FAIL:
            set_attribute("probability.assertion", message)
        description = f"{outcome} in {run.phase}: {_clip(run.message, 256)}"
    else:
        description = f"{outcome} in {run.phase}: {error_type}"
    span.add_event("exception", event)
    span.force_status(STATUS_ERROR, description)
