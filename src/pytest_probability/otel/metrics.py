"""Row aggregates as OpenTelemetry metrics, emitted once per session through the SDK's metrics API.

Only the aggregating process calls :func:`collect`, once, at session end (and
the merge, for the whole night's gauges). Each series of the rows and of every
facet is recorded into an SDK instrument of a meter provider of its own: the
counters with ``add``, the duration histogram with ``record`` per run (the
SDK's explicit-bucket aggregation, bounds :data:`DURATION_BUCKETS`, from a
view), and the whole-case gauges (pass fractions, interval bounds, verdicts)
with the synchronous gauge's ``set``: those are made from every run of a case
at once, so they can only be set at the end. The SDK then aggregates and
collects them (``InMemoryMetricReader``, the temporality the OTLP exporters
prefer), and :class:`~.exporters.MetricOut` sends them.

Failed and errored runs are exemplars on the runs counter and the duration
histogram: their measurement is made with a context holding the run span's
ids, which the SDK's trace-based exemplar filter keeps (a view gives each
point a reservoir of :data:`EXEMPLARS`). A dashboard links the point to the
trace. No run index, trace id or message is ever an attribute. See
docs/observability.md for the Prometheus names.
"""

from __future__ import annotations

from typing import Any, Iterable

from ..model.outputs import Series, case_attributes
from ..model.rows import Summary
from ..model.run import RunRecord
from ..protocols import Facet
from ..vocabulary import ERROR, FAIL, ROLE_JUDGE, ROLE_SYSTEM
from .spans import SCOPE

DURATION_BUCKETS = (0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 20.0, 30.0, 60.0, 120.0, 300.0)
#: Exemplars per data point: the latest failed or errored runs.
EXEMPLARS = 8
#: Attribute sets per series: one per case and outcome, without the SDK's default limit of 2,000.
CARDINALITY = 1 << 30

#: Instrument name -> (kind, unit, description); the stable contract.
INSTRUMENTS = {
    "probability.runs": ("counter", "{run}", "Runs by benchmark, case and outcome"),
    "probability.case.pass_fraction": ("gauge", "1", "Passes over counted runs of a case, with its row status"),
    "probability.session.pass_fraction": ("gauge", "1", "Passes over counted runs of the session"),
    "probability.session.runs": ("counter", "{run}", "Runs of the session, skipped ones included; emitted by every session (a heartbeat)"),
    "probability.cost": ("counter", "{USD}", "Spend recorded by runs, by case and model"),
    "probability.tokens": ("counter", "{token}", "Tokens recorded by runs, by benchmark, model and token type (input, output)"),
    "probability.tokens.cache_read": ("counter", "{token}", "Input tokens read from the provider's prompt cache (part of the input tokens)"),
    "probability.run.duration": ("histogram", "s", "Duration of the call phase of runs"),
}


def series(name: str) -> Series:
    kind, unit, description = INSTRUMENTS[name]
    return Series(name, kind, unit, description)


def row_series(summary: Summary) -> list[Series]:
    runs = series("probability.runs")
    case_fraction = series("probability.case.pass_fraction")
    session_fraction = series("probability.session.pass_fraction")
    session_runs = series("probability.session.runs")
    cost = series("probability.cost")
    tokens = series("probability.tokens")
    cache_read = series("probability.tokens.cache_read")
    duration = series("probability.run.duration")
    token_totals: dict[tuple[str, str, str, str, str], int] = {}
    for row in summary.rows:
        case = case_attributes(row.case)
        counts = row.counts
        failed: dict[str, list[RunRecord]] = {FAIL: [], ERROR: []}
        by_outcome: dict[str, list[float]] = {}
        for record in row.records:
            if record.outcome in failed and record.span_id:
                failed[record.outcome].append(record)
            if record.outcome != "skip":
                by_outcome.setdefault(record.outcome, []).append(record.duration)
        for outcome, value in (("pass", counts.passes), ("fail", counts.fails), ("error", counts.errors), ("skip", counts.skipped)):
            if failed.get(outcome):
                runs.exemplars[len(runs.points)] = failed[outcome][-EXEMPLARS:]
            runs.points.append(({**case, "probability.outcome": outcome}, value))
        if counts.pass_rate is not None:
            case_fraction.points.append(({**case, "probability.status": row.status}, counts.pass_rate))
        for outcome, values in by_outcome.items():
            if failed.get(outcome):
                duration.exemplars[len(duration.points)] = failed[outcome][-EXEMPLARS:]
            duration.points.append(({**case, "probability.outcome": outcome}, values))
        for role, per_model in ((ROLE_SYSTEM, row.usage), (ROLE_JUDGE, row.judge_usage)):
            # The judge's points carry probability.usage.role=judge; the system's keep their series as before.
            extra = {"probability.usage.role": ROLE_JUDGE} if role == ROLE_JUDGE else {}
            for model, usage in per_model.items():
                cost.points.append(({**case, "gen_ai.request.model": model, **extra}, usage.cost))
                for kind, value in (("input", usage.input_tokens), ("output", usage.output_tokens), ("cache_read", usage.cached_input_tokens)):
                    key = (case["test.case.name"].split("::", 1)[0], row.case.benchmark, model, kind, role)
                    token_totals[key] = token_totals.get(key, 0) + value  # type: ignore[index]
        unattributed = sum(r.extra_cost for r in row.records)
        if unattributed or not row.usage:
            cost.points.append((case, unattributed))
    for (path, benchmark, model, kind, role), value in token_totals.items():  # type: ignore[misc]
        attributes = {"code.file.path": path, "probability.benchmark": benchmark, "gen_ai.request.model": model}
        if role == ROLE_JUDGE:
            attributes["probability.usage.role"] = ROLE_JUDGE
        if kind == "cache_read":
            cache_read.points.append((attributes, value))
        else:
            tokens.points.append(({**attributes, "gen_ai.token.type": kind}, value))
    if summary.counts.pass_rate is not None:
        session_fraction.points.append(({}, summary.counts.pass_rate))
    session_runs.points.append(({}, summary.counts.total + summary.counts.skipped))
    return [runs, case_fraction, session_fraction, session_runs, cost, tokens, cache_read, duration]


def additive(item: Series) -> bool:
    """Whether a series adds over shards: counters and histograms (runs, cost, tokens, durations) do; a
    gauge of a whole case or session (pass fraction, interval bounds, verdicts) is decided at the merge."""
    return item.kind != "gauge"


def collect(
    summary: Summary,
    resource: Any,
    facets: Iterable[Facet] = (),
    version: str = "",
    counters_only: bool = False,
    gauges_only: bool = False,
) -> Any | None:
    """The session's metrics, as the SDK's ``MetricsData``; None without a point.

    ``counters_only``: a shard's, without gauges; ``gauges_only``: the merge's, whose counters its shards
    sent (see :func:`additive`)."""
    from opentelemetry.sdk.metrics import MeterProvider, SimpleFixedSizeExemplarReservoir, TraceBasedExemplarFilter
    from opentelemetry.sdk.metrics.export import InMemoryMetricReader
    from opentelemetry.sdk.metrics.view import ExplicitBucketHistogramAggregation, View

    from ..compat.otel import metric_preferences

    items = row_series(summary)
    for facet in facets:
        items.extend(facet.series())
    items = [item for item in items
             if item.points and not (counters_only and not additive(item)) and not (gauges_only and additive(item))]
    if not items:
        return None
    def reservoir(**_: Any) -> Any:  # the explicit-bucket aggregation passes its bounds, for its own reservoir
        return SimpleFixedSizeExemplarReservoir(size=EXEMPLARS)

    views = [View(instrument_name=name, meter_name=SCOPE, aggregation_cardinality_limit=CARDINALITY,
                  exemplar_reservoir_factory=lambda aggregation: reservoir,
                  **({"aggregation": ExplicitBucketHistogramAggregation(DURATION_BUCKETS)}
                     if kind == "histogram" else {}))
             for name, kind in {item.name: item.kind for item in items}.items()]
    temporality, aggregation = metric_preferences()
    reader = InMemoryMetricReader(preferred_temporality=temporality, preferred_aggregation=aggregation)
    provider = MeterProvider(metric_readers=[reader], resource=resource, views=views, shutdown_on_exit=False,
                             exemplar_filter=TraceBasedExemplarFilter())
    meter = provider.get_meter(SCOPE, version)
    made: dict[str, Any] = {}
    for item in items:
        instrument = made.get(item.name)
        if instrument is None:
            create = {"counter": meter.create_counter, "gauge": meter.create_gauge}.get(item.kind, meter.create_histogram)
            instrument = made[item.name] = create(item.name, unit=item.unit, description=item.description)
        _record(instrument, item)
    data = reader.get_metrics_data()
    provider.shutdown()
    return data


def _record(instrument: Any, item: Series) -> None:
    """Each point of ``item`` into its instrument; an exemplar's run measured in its span's context."""
    from opentelemetry.context import Context

    empty = Context()
    for index, (attributes, value) in enumerate(item.points):
        records = item.exemplars.get(index, [])
        if item.kind == "gauge":
            instrument.set(float(value) if type(value) is bool else value, attributes)
        elif item.kind == "counter":
            instrument.add(value - len(records), attributes, context=empty)
            for record in records:
                instrument.add(1, attributes, context=_run_context(record))
        else:
            rest = list(value)
            for record in records:
                rest.remove(record.duration)
                instrument.record(record.duration, attributes, context=_run_context(record))
            for duration in rest:
                instrument.record(duration, attributes, context=empty)


def _run_context(record: RunRecord) -> Any:
    """A context whose current span is the run's (sampled): what the SDK makes an exemplar from."""
    from opentelemetry import trace

    span = trace.NonRecordingSpan(trace.SpanContext(int(record.trace_id, 16), int(record.span_id, 16), False,
                                                    trace.TraceFlags(trace.TraceFlags.SAMPLED)))
    return trace.set_span_in_context(span)
