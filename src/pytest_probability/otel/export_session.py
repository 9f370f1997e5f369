"""The aggregating process's export session: providers, guards, the session span, the end, the notes.

Exporting never changes an outcome or the exit status; the guards (:mod:`.signal_guards`) keep the other
reliability rules of docs/observability.md.
"""

from __future__ import annotations

import functools
import os
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest

from .. import __version__
from ..config.otel import secrets_from_env
from ..config.otel_settings import OtelSettings
from ..files import Lines
from ..model.rows import Summary
from ..protocols import EXPORT, Facet, Finisher, Link, Registry
from ..session import Notes
from ..text import redact_url, scrub
from . import metrics as metrics_module
from . import resource as resource_module
from . import sdk_exporters
from .request_sender import Deferred, Sender
from .sdk_exporters import ATTRIBUTE
from .signal_guards import UNITS, Guard, drain
from .spans import make_provider, parent_context, traceparent_of, tracer


class ExportSession(Link):
    """Everything the aggregating process exports in one session, and the link that gives each xdist worker
    the session span's context and the resource (its run spans are children of the session span: one
    trace) and takes each worker's requests (:class:`~.sdk_exporters.Outbox`) to their signal's guard."""

    attribute = ATTRIBUTE

    def __init__(
        self,
        settings: OtelSettings,
        root: Path,
        env: Any = None,
        instance: str | None = None,
        counters_only: bool = False,
    ) -> None:
        """``instance``: the resource's ``service.instance.id`` of a session holding part of the night (a shard's),
        whose metrics are ``counters_only`` (the series that add over the parts)."""
        env = os.environ if env is None else env
        self.settings = settings
        self.counters_only = counters_only
        self.notes: list[str] = list(settings.notes)
        self.resource = resource_module.build(settings.suite, root, env, instance=instance)
        spill = (
            settings.spill
            or root / ".pytest-probability" / f"otel-spill-{time.strftime('%Y%m%dT%H%M%S')}-{os.getpid()}.jsonl"
        )
        self.file = Lines(settings.file, fresh=True) if settings.file is not None else None
        self.spill = Lines(spill, fresh=False)
        #: Each signal's guard; the logs' sender is made on its first use (:class:`~.request_sender.Deferred`).
        self.guards: dict[str, Guard] = {}
        for signal in ("traces", "metrics", "logs"):
            endpoint = settings.endpoints.get(signal)
            sender: Sender | Deferred | None = None
            if endpoint is not None:
                make = functools.partial(Sender, signal, settings.protocols[signal], endpoint or None, env)
                sender = (
                    Deferred(make, redact_url(endpoint) if endpoint else "the SDK's default endpoint")
                    if signal == "logs"
                    else make()
                )
            self.guards[signal] = Guard(signal, sender, self.file, self.spill, settings.timeout)
        #: Notes of the session's start that follow the exporters' warnings (``warning_notes``).
        self.later_notes = (
            [f"OpenTelemetry: another session is writing {settings.file}; this one appends its lines to it"]
            if self.file is not None and self.file.shared
            else []
        )
        # The instrumentation's metrics and log records, unless the user set a provider of their own first
        # (the plugin's own records, its evaluation results, take its logger provider all the same):
        # installed before the tracer provider, which asks the global meter provider for its own metrics.
        self.metric_reader = (
            sdk_exporters.make_meter_provider(self.resource, self.deliver) if settings.metrics_on else None
        )
        self.log_processor: sdk_exporters.LazyLogs | None
        self.logger: Any  # the SDK's logger, as make_logger_provider gives it; None without logs
        self.log_processor, self.logger = (
            sdk_exporters.make_logger_provider(self.resource, self.deliver, settings.capture_values)
            if settings.logs_on
            else (None, None)
        )
        self.span_processor = sdk_exporters.span_processor(self.deliver, settings.capture_values)
        self.provider, self.made_global = make_provider(self.resource, self.span_processor)
        self.tracer = tracer(self.provider)
        self.session_span = self.tracer.start_span(
            "probability.session",
            context=parent_context(settings.traceparent, settings.tracestate),
            attributes={"test.suite.name": settings.suite},
        )
        from opentelemetry import trace

        self.run_parent = trace.set_span_in_context(self.session_span)
        self.traceparent = traceparent_of(self.session_span)

    def deliver(self, kind: str, body: bytes, count: int) -> bool:
        """A request of this process's processors and readers: to its signal's guard, now."""
        return self.guards[kind].export(body, count)

    def receive(self, value: Any) -> None:
        """An xdist worker's requests: each to its signal's guard, sent on the guard's thread."""
        for kind, body, count in value:
            self.guards[kind].forward(bytes(body), count)

    def worker_input(self) -> Mapping[str, Any]:
        return {
            "prob_otel_traceparent": self.traceparent,
            "prob_otel_tracestate": self.session_span.get_span_context().trace_state.to_header(),
            "prob_otel_resource": dict(self.resource.attributes),
        }

    def _end_session_span(self, summary: Summary, exitstatus: int) -> None:
        from opentelemetry.trace import Status, StatusCode

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
        """End the session span; flush every processor and reader and send the row metrics (the rows' and
        every facet's series), each signal on its own thread, within the deadline (:func:`~.signal_guards.drain`);
        return the notes."""
        self._end_session_span(summary, exitstatus)
        warnings = self.warning_notes()
        rows = (
            metrics_module.collect(
                summary, self.resource, facets, version=__version__, counters_only=self.counters_only
            )
            if self.settings.metrics_on
            else None
        )
        requests = sdk_exporters.MetricOut(self.deliver).requests(rows) if rows is not None else []

        def send_metrics() -> None:
            self.guards["metrics"].send_all(requests)
            if self.metric_reader is not None:
                self.metric_reader.force_flush()

        jobs: list[Callable[[], Any]] = [self.span_processor.force_flush, send_metrics]
        if self.log_processor is not None:
            jobs.append(self.log_processor.force_flush)
        drain(self.guards, jobs, self.settings.timeout, [self.file, self.spill])
        return [*self.notes, *warnings, *self.later_notes, *self._outcome_notes()]

    def warning_notes(self) -> list[str]:
        """What the SDK's exporters said of their configuration: a warning more than one signal's
        exporter gave is one note. It builds the logs' exporter if no log record did."""
        warnings: dict[str, list[str]] = {}
        notes = []
        for signal, guard in self.guards.items():
            if guard.sender is None:
                continue
            try:
                said = guard.sender.warnings
            except Exception as exc:  # a deferred exporter that cannot be built: its batches were kept
                reason = scrub(f"{type(exc).__name__}: {exc}", secrets_from_env(os.environ), 300)
                notes.append(f"OpenTelemetry: {signal}: the exporter could not be made: {reason}")
                continue
            for warning in said:
                warnings.setdefault(warning, []).append(signal)
        return [f"OpenTelemetry: {_signals_text(signals)}: {warning}" for warning, signals in warnings.items()] + notes

    def _outcome_notes(self) -> list[str]:
        notes = []
        spill, file = self.spill, self.file
        for name, guard in self.guards.items():
            if guard.failure:
                shown = guard.sender.display if guard.sender is not None else ""
                notes.append(f"OpenTelemetry: export of {name} to {shown} failed ({guard.failure})")
        if spill.lines:
            notes.append(
                f"OpenTelemetry: {_counts(spill.counts)} kept in {spill.path}; "
                f"replay: python -m pytest_probability.otel replay {spill.path}"
            )
        if spill.failure is not None:
            notes.append(
                f"OpenTelemetry: could not keep {_counts(spill.lost)} in {spill.path} ({_reason(spill.failure)}); "
                "they are lost"
                + (f" to the endpoint but in {file.path}" if file is not None and file.failure is None else "")
            )
        if file is not None and file.failure is not None:
            notes.append(
                f"OpenTelemetry: could not write the OTLP file {file.path} ({_reason(file.failure)}); "
                + ("the previous file was left as it was" if file.path.exists() else "it was not written")
            )
        for name, guard in self.guards.items():
            if guard.rejected:
                why = f" ({'; '.join(guard.rejected_messages)})" if guard.rejected_messages else ""
                notes.append(f"OpenTelemetry: the endpoint rejected {guard.rejected} {UNITS[name]}{why}; not retried")
        failures = [guard.file_failure for guard in self.guards.values() if guard.file_failure]
        if failures:
            notes.append(f"OpenTelemetry: writing the OTLP file failed: {failures[0]}")
        return notes


def _signals_text(signals: list[str]) -> str:
    """``traces and metrics``, ``traces, metrics and logs``."""
    return " and ".join(signals) if len(signals) < 3 else f"{', '.join(signals[:-1])} and {signals[-1]}"


def _counts(counts: dict[str, int]) -> str:
    """``4 spans and 11 metric points``, and the log records when there are any."""
    spans, points, logs = (counts.get(kind, 0) for kind in ("traces", "metrics", "logs"))
    if not logs:
        return f"{spans} spans and {points} metric points"
    return f"{spans} spans, {points} metric points and {logs} log records"


def _reason(exc: OSError) -> str:
    """``no space left on device``, ``file too large``: the system's words, without the errno."""
    return (exc.strerror or str(exc)).rstrip(".").lower() if exc.strerror else str(exc)


class SessionExport(Finisher):
    """The export's finisher: the session span ended, the metrics sent, everything drained or spilled."""

    phase = EXPORT

    def __init__(self, session: ExportSession, parts: Registry, notes: Notes) -> None:
        """``parts``: the session's extension points, whose facets' series are the metrics."""
        self.session = session
        self.parts = parts
        self.notes = notes

    def finish(self, session: pytest.Session, summary: Summary) -> None:
        try:
            self.notes.extend(self.session.finish(summary, int(session.exitstatus), self.parts.facets))
        except Exception as exc:  # exporting never changes an outcome or the exit status
            self.notes.append(f"OpenTelemetry: export failed unexpectedly: {type(exc).__name__}: {exc}")
