"""Row aggregates as OpenTelemetry metrics, emitted once per session.

Only the aggregating process calls :func:`collect`, once, at session end.
Every instrument is cumulative; a nightly session writes one sample per
series, and no run index, trace id or message is ever an attribute. See
docs/observability.md for the Prometheus names after OTLP translation.
"""

from __future__ import annotations

from typing import Any

from opentelemetry.sdk.metrics import Counter, Histogram, MeterProvider, ObservableGauge, UpDownCounter
from opentelemetry.sdk.metrics import _Gauge as Gauge
from opentelemetry.sdk.metrics.export import InMemoryMetricReader, MetricsData
from opentelemetry.sdk.resources import Resource

from .. import __version__
from ..model import OUTCOMES
from ..rows import Summary

SCOPE_NAME = "pytest_probability"
DURATION_BUCKETS = (0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 20.0, 30.0, 60.0, 120.0, 300.0)
#: Series per instrument before the SDK folds the rest into an overflow series.
CARDINALITY_LIMIT = 100_000

#: Instrument name -> (kind, unit, description); the stable contract.
INSTRUMENTS = {
    "probability.runs": ("counter", "{run}", "Runs by benchmark, case and outcome"),
    "probability.case.pass_fraction": ("gauge", "1", "Passes over counted runs of a case, with its row status"),
    "probability.session.pass_fraction": ("gauge", "1", "Passes over counted runs of the session"),
    "probability.cost": ("counter", "{USD}", "Spend recorded by runs, by case and model"),
    "probability.tokens": ("counter", "{token}", "Tokens recorded by runs, by benchmark, model and token type"),
    "probability.run.duration": ("histogram", "s", "Duration of the call phase of runs"),
}


def _case(row: Any) -> dict[str, str]:
    return {"probability.benchmark": row.case.benchmark, "probability.case": row.case.case}


def collect(summary: Summary, resource: Resource, extra_gauges: Any = ()) -> MetricsData | None:
    """Record the session's rows into fresh instruments and read them once."""
    reader = InMemoryMetricReader(
        cardinality_limits={Counter: CARDINALITY_LIMIT, Histogram: CARDINALITY_LIMIT, Gauge: CARDINALITY_LIMIT,
                            UpDownCounter: CARDINALITY_LIMIT, ObservableGauge: CARDINALITY_LIMIT}
    )
    provider = MeterProvider(resource=resource, metric_readers=[reader])
    meter = provider.get_meter(SCOPE_NAME, __version__)

    def make(name: str) -> Any:
        kind, unit, description = INSTRUMENTS[name]
        if kind == "counter":
            return meter.create_counter(name, unit=unit, description=description)
        if kind == "gauge":
            return meter.create_gauge(name, unit=unit, description=description)
        return meter.create_histogram(name, unit=unit, description=description, explicit_bucket_boundaries_advisory=DURATION_BUCKETS)

    runs = make("probability.runs")
    case_fraction = make("probability.case.pass_fraction")
    session_fraction = make("probability.session.pass_fraction")
    cost = make("probability.cost")
    tokens = make("probability.tokens")
    duration = make("probability.run.duration")

    for row in summary.rows:
        case = _case(row)
        counts = {"pass": row.counts.passes, "fail": row.counts.fails, "error": row.counts.errors, "skip": row.counts.skipped}
        for outcome in OUTCOMES:
            runs.add(counts[outcome], {**case, "probability.outcome": outcome})
        if row.counts.pass_rate is not None:
            case_fraction.set(row.counts.pass_rate, {**case, "probability.status": row.status})
        for record in row.records:
            if record.outcome != "skip":
                duration.record(record.duration, {**case, "probability.outcome": record.outcome})
        for model, usage in row.usage.items():
            cost.add(usage.cost, {**case, "gen_ai.request.model": model})
            benchmark = {"probability.benchmark": row.case.benchmark, "gen_ai.request.model": model}
            tokens.add(usage.input_tokens, {**benchmark, "gen_ai.token.type": "input"})
            tokens.add(usage.output_tokens, {**benchmark, "gen_ai.token.type": "output"})
            tokens.add(usage.cached_input_tokens, {**benchmark, "gen_ai.token.type": "cached"})
        unattributed = sum(r.extra_cost for r in row.records)
        if unattributed or not row.usage:
            cost.add(unattributed, case)
    if summary.counts.pass_rate is not None:
        session_fraction.set(summary.counts.pass_rate)
    for gauge in extra_gauges:
        gauge(meter, summary)
    data = reader.get_metrics_data()
    provider.shutdown()
    return data
