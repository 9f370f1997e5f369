"""Row aggregates as OpenTelemetry metrics, emitted once per session through the SDK's metrics API.

:func:`collect` (the aggregating process, at the end; the merge, for the night's gauges) records every
series of the rows (``report.series``) and of the facets into SDK instruments of a meter provider of its
own: counters with ``add``, the histograms with ``record`` per value (each series' explicit buckets,
from a view), the whole-case gauges (pass fractions, interval bounds, verdicts) with the synchronous
gauge's ``set``, since they are made from every run of a case at once. The SDK aggregates and collects
them (the OTLP exporters' temporality), and :class:`~.sdk_exporters.MetricOut` sends them. An exemplar run's
measurement (a failed or errored run's, a low score's) is made in a context holding its span's ids, which
the SDK's trace-based exemplar filter keeps as an exemplar (a view's reservoir keeps
:data:`~..model.outputs.EXEMPLARS`).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ..model.outputs import EXEMPLARS, Series
from ..model.rows import Summary
from ..model.run import RunRecord
from ..protocols import Facet
from ..report.series import row_series
from .spans import SCOPE, span_context

#: Attribute sets per series: one per case and outcome, without the SDK's default limit of 2,000.
CARDINALITY = 1 << 30


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

    from ..compat.otel_sdk import metric_preferences, view_limit

    items = row_series(summary)
    for facet in facets:
        items.extend(facet.series())
    items = [
        item
        for item in items
        if item.points and not (counters_only and not additive(item)) and not (gauges_only and additive(item))
    ]
    if not items:
        return None

    def reservoir(*_: Any, **__: Any) -> SimpleFixedSizeExemplarReservoir:  # explicit buckets pass their bounds
        return SimpleFixedSizeExemplarReservoir(size=EXEMPLARS)

    limit = view_limit(View, CARDINALITY)
    views = [
        View(
            instrument_name=name,
            meter_name=SCOPE,
            **limit,
            exemplar_reservoir_factory=lambda aggregation: reservoir,
            aggregation=ExplicitBucketHistogramAggregation(item.buckets) if item.buckets else None,  # None: the default
        )
        for name, item in {item.name: item for item in items}.items()
    ]
    temporality, aggregation = metric_preferences()
    reader = InMemoryMetricReader(preferred_temporality=temporality, preferred_aggregation=aggregation)
    provider = MeterProvider(
        metric_readers=[reader],
        resource=resource,
        views=views,
        shutdown_on_exit=False,
        exemplar_filter=TraceBasedExemplarFilter(),
    )
    meter = provider.get_meter(SCOPE, version)
    made: dict[str, Any] = {}
    for item in items:
        instrument = made.get(item.name)
        if instrument is None:
            create = {"counter": meter.create_counter, "gauge": meter.create_gauge}.get(
                item.kind, meter.create_histogram
            )
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
            for record, measured in zip(
                records, item.exemplar_values.get(index) or [r.duration for r in records], strict=False
            ):
                rest.remove(measured)
                instrument.record(measured, attributes, context=_run_context(record))
            for measured in rest:
                instrument.record(measured, attributes, context=empty)


def _run_context(record: RunRecord) -> Any:
    return span_context(int(record.trace_id, 16), int(record.span_id, 16))
