"""The aggregating process's export session: provider, session span, pipeline, notes.

Reliability rules (docs/observability.md):

* exporting never changes an outcome or the exit status;
* a failed request opens that signal's breaker: its later data goes straight
  to the spill file, so a dead endpoint costs one request timeout, and the
  other signal carries on;
* the end of the session starts no request after ``--prob-otel-timeout``,
  and waits a short grace for one in flight then; whatever the endpoint did
  not confirm is spilled, once, and nothing it confirmed is;
* a partial success is a success: the rejected count is reported, nothing
  is spilled.
"""

from __future__ import annotations

import functools
import os
import time
from pathlib import Path
from typing import Any, Mapping, Sequence

import pytest
from opentelemetry import trace
from opentelemetry.trace import Status, StatusCode

from .. import __version__
from ..model.rows import Summary
from ..protocols import EXPORT, Facet, Finisher, Link, Registry
from ..session import Notes
from . import metrics as metrics_module
from . import resource as resource_module
from . import signals
from .options import OtelSettings
from .pipeline import Pipeline
from .send import Deferred, Sender, redact_url, scrub, secrets_from_env
from .spans import REPORT_ATTRIBUTE, make_provider, parent_context, traceparent_of, tracer


class Session:
    """Everything the aggregating process exports in one session."""

    def __init__(self, settings: OtelSettings, root: Path, env: Any = None, instance: str | None = None,
                 counters_only: bool = False) -> None:
        """``instance``: the resource's ``service.instance.id`` of a session holding part of the night (a shard's),
        whose metrics are ``counters_only`` (the series that add over the parts)."""
        env = os.environ if env is None else env
        self.settings = settings
        self.counters_only = counters_only
        self.notes: list[str] = list(settings.notes)
        self.resource = resource_module.build(settings.suite, root, env, instance=instance)
        #: Each signal's sender; the logs' is made on its first use (:class:`~.send.Deferred`).
        self.senders: dict[str, Sender | Deferred | None] = {}
        for signal in ("traces", "metrics", "logs"):
            endpoint = settings.endpoints.get(signal)
            if endpoint is None:
                self.senders[signal] = None
                continue
            make = functools.partial(Sender, signal, settings.protocols[signal], endpoint or None, env)
            self.senders[signal] = (Deferred(make, redact_url(endpoint) if endpoint else "the SDK's default endpoint")
                                    if signal == "logs" else make())
        spill = settings.spill or root / ".pytest-probability" / f"otel-spill-{time.strftime('%Y%m%dT%H%M%S')}-{os.getpid()}.jsonl"
        self.pipeline = Pipeline(settings, spill, self.senders)
        #: Notes of the session's start that follow the exporters' warnings (``warning_notes``).
        self.later_notes: list[str] = []
        if self.pipeline.file is not None and self.pipeline.file.shared:
            self.later_notes.append(
                f"OpenTelemetry: another session is writing {settings.file}; this one appends its lines to it"
            )
        self.start_time_ns = time.time_ns()
        # The instrumentation's metrics and log records (otel/signals.py), on the same resource and
        # pipeline, unless the user set a provider of their own first: installed before the tracer
        # provider, which asks the global meter provider for its own (off by default) metrics.
        self.metric_reader = signals.make_meter_provider(self.resource) if settings.metrics_on else None
        self.logger_provider = (
            signals.make_logger_provider(self.resource, self.pipeline.add_log, settings.capture_values)
            if settings.logs_on else None
        )
        self.provider, self.made_global = make_provider(self.resource, self.pipeline.add_span, settings.capture_values)
        self.tracer = tracer(self.provider)
        self.session_span = self.tracer.start_span(
            "probability.session",
            context=parent_context(settings.traceparent, settings.tracestate),
            attributes={"test.suite.name": settings.suite},
        )
        self.run_parent = trace.set_span_in_context(self.session_span)
        self.traceparent = traceparent_of(self.session_span)

    def _end_session_span(self, summary: Summary, exitstatus: int) -> None:
        counts = summary.counts
        span = self.session_span
        attributes: dict[str, Any] = {
            "test.suite.run.status": "success" if exitstatus == 0 else "failure",
            "probability.runs": counts.total + counts.skipped,
            "probability.passes": counts.passes,
            "probability.fails": counts.fails,
            "probability.errors": counts.errors,
            "probability.skipped": counts.skipped,
            "probability.cases": len(summary.rows),
        }
        if counts.pass_rate is not None:
            attributes["probability.pass_fraction"] = counts.pass_rate
        if summary.has_cost:
            attributes["probability.cost"] = summary.cost
        span.set_attributes(attributes)
        if exitstatus != 0:
            span.set_status(Status(StatusCode.ERROR, f"exit status {exitstatus}"))
        span.end()

    def finish(self, summary: Summary, exitstatus: int, facets: Sequence[Facet] = ()) -> list[str]:
        """End the session span, emit metrics (the rows' and every facet's series), drain within the
        time budget; return summary notes."""
        self._end_session_span(summary, exitstatus)
        warnings = self.warning_notes()
        requests = []
        if self.settings.metrics_on:
            requests = metrics_module.collect(summary, self.resource, facets, self.start_time_ns, version=__version__,
                                              counters_only=self.counters_only)
            instrumentation = signals.collect_metrics(self.metric_reader)
            if instrumentation is not None:
                requests.append(instrumentation)
        self.pipeline.finish(requests)
        return [*self.notes, *warnings, *self.later_notes, *self._outcome_notes()]

    def warning_notes(self) -> list[str]:
        """What the SDK's exporters said of their configuration: a warning more than one signal's
        exporter gave is one note. It builds the logs' exporter if no log record did."""
        warnings: dict[str, list[str]] = {}
        notes = []
        for signal, sender in self.senders.items():
            if sender is None:
                continue
            try:
                said = sender.warnings
            except Exception as exc:  # a deferred exporter that cannot be built: its batches were kept
                reason = scrub(f"{type(exc).__name__}: {exc}", secrets_from_env(os.environ), 300)
                notes.append(f"OpenTelemetry: {signal}: the exporter could not be made: {reason}")
                continue
            for warning in said:
                warnings.setdefault(warning, []).append(signal)
        return [f"OpenTelemetry: {_signals_text(signals)}: {warning}" for warning, signals in warnings.items()] + notes

    def _outcome_notes(self) -> list[str]:
        notes = []
        pipeline = self.pipeline
        spill = pipeline.spill
        failed = [(name, signal) for name, signal in pipeline.signals.items() if signal.failure]
        for name, signal in failed:
            shown = signal.sender.display if signal.sender is not None else ""
            notes.append(f"OpenTelemetry: export of {name} to {shown} failed ({signal.failure})")
        if spill.lines:
            notes.append(
                f"OpenTelemetry: {_counts(spill.spans, spill.points, spill.logs)} kept in {spill.path}; "
                f"replay: python -m pytest_probability.otel replay {spill.path}"
            )
        if spill.failure is not None:
            notes.append(
                f"OpenTelemetry: could not keep {_counts(spill.lost_spans, spill.lost_points, spill.lost_logs)} in "
                f"{spill.path} ({_reason(spill.failure)}); they are lost"
                + (f" to the endpoint but in {pipeline.file.path}" if pipeline.file is not None and pipeline.file.failure is None else "")
            )
        file = pipeline.file
        if file is not None and file.failure is not None:
            notes.append(
                f"OpenTelemetry: could not write the OTLP file {file.path} ({_reason(file.failure)}); "
                + ("the previous file was left as it was" if file.path.exists() else "it was not written")
            )
        for name, signal in pipeline.signals.items():
            if signal.rejected:
                unit = {"traces": "spans", "logs": "log records"}.get(name, "metric points")
                why = f" ({'; '.join(signal.rejected_messages)})" if signal.rejected_messages else ""
                notes.append(f"OpenTelemetry: the endpoint rejected {signal.rejected} {unit}{why}; not retried")
        if pipeline.file_failure:
            notes.append(f"OpenTelemetry: writing the OTLP file failed: {pipeline.file_failure}")
        return notes


def _signals_text(signals: list[str]) -> str:
    """``traces and metrics``, ``traces, metrics and logs``."""
    return " and ".join(signals) if len(signals) < 3 else f"{', '.join(signals[:-1])} and {signals[-1]}"


def _counts(spans: int, points: int, logs: int) -> str:
    """``4 spans and 11 metric points``, and the log records when there are any."""
    if not logs:
        return f"{spans} spans and {points} metric points"
    return f"{spans} spans, {points} metric points and {logs} log records"


def _reason(exc: OSError) -> str:
    """``no space left on device``, ``file too large``: the system's words, without the errno."""
    return (exc.strerror or str(exc)).rstrip(".").lower() if exc.strerror else str(exc)


class SessionExport(Finisher):
    """The export's finisher: the session span ended, the metrics sent, everything drained or spilled."""

    phase = EXPORT

    def __init__(self, session: Session, parts: Registry, notes: Notes) -> None:
        """``parts``: the session's extension points, whose facets' series are the metrics."""
        self.session = session
        self.parts = parts
        self.notes = notes

    def finish(self, session: pytest.Session, summary: Summary) -> None:
        try:
            self.notes.extend(self.session.finish(summary, int(session.exitstatus), self.parts.facets))
        except Exception as exc:  # exporting never changes an outcome or the exit status
            self.notes.append(f"OpenTelemetry: export failed unexpectedly: {type(exc).__name__}: {exc}")


class ShippedSpans(Link):
    """The aggregating process's side of the spans' way: each xdist worker parents its run spans to this
    session's span and shares its resource; their encoded spans arrive on teardown reports and in the
    workers' output, and go to the pipeline."""

    attribute = REPORT_ATTRIBUTE

    def __init__(self, session: Session) -> None:
        self.session = session

    def worker_input(self) -> Mapping[str, Any]:
        session = self.session
        return {
            "prob_otel_traceparent": session.traceparent,
            "prob_otel_tracestate": session.session_span.get_span_context().trace_state.to_header(),
            "prob_otel_resource": dict(session.resource.attributes),
        }

    def receive(self, value: Any) -> None:
        self.session.pipeline.add_encoded(tuple(value))
