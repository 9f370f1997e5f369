"""Row aggregates as OpenTelemetry metrics, emitted once per session.

Only the aggregating process calls :func:`collect`, once, at session end.
The rows are already aggregated, so the data points are built directly as the
SDK's own metric data (``opentelemetry.sdk.metrics.export``: ``Sum``,
``Gauge``, ``Histogram`` and their points, with ``Exemplar``) and encoded by
the SDK's OTLP encoder (``encode_metrics``). Recording each run into SDK
instruments would re-aggregate what the rows already hold, one measurement
at a time. The temporality follows
``OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE`` as the SDK's OTLP
exporters read it (cumulative by default); each point starts at the session's
start, so a nightly session writes one sample per series.

Failed and errored runs are exemplars (their trace and span ids) on the runs
counter and the duration histogram: a dashboard links the point to the trace.
No run index, trace id or message is ever an attribute. See
docs/observability.md for the Prometheus names.
"""

from __future__ import annotations

import bisect
import time
from typing import Any, Callable, Iterable, Iterator, Sequence

from opentelemetry.sdk.util.instrumentation import InstrumentationScope

from ..model.outputs import Series, case_attributes
from ..model.rows import Summary
from ..model.run import RunRecord
from ..protocols import Facet
from ..vocabulary import ERROR, FAIL, ROLE_JUDGE, ROLE_SYSTEM

DURATION_BUCKETS = (0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 20.0, 30.0, 60.0, 120.0, 300.0)
#: Data points per OTLP request: keeps a request of 10,000 cases under gRPC's 4 MiB default.
POINTS_PER_REQUEST = 2000
#: Exemplars per data point: the latest failed or errored runs.
EXEMPLARS = 8
SCOPE = "pytest_probability"

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
            # The judge's points carry probability.usage.role=judge; the system's carry no role, so that their
            # series do not split.
            extra = {"probability.usage.role": ROLE_JUDGE} if role == ROLE_JUDGE else {}
            for model, usage in per_model.items():
                cost.points.append(({**case, "gen_ai.request.model": model, **extra}, usage.cost))
                for kind, value in (("input", usage.input_tokens), ("output", usage.output_tokens), ("cache_read", usage.cached_input_tokens)):
                    key = (case["test.case.name"].split("::", 1)[0], row.case.benchmark, model, kind, role)
                    token_totals[key] = token_totals.get(key, 0) + value
        unattributed = sum(r.extra_cost for r in row.records)
        if unattributed or not row.usage:
            cost.points.append((case, unattributed))
    for (path, benchmark, model, kind, role), value in token_totals.items():
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


def _chunks(items: Sequence[Series], size: int) -> Iterator[list[tuple[Series, int, int]]]:
    """(series, first point, end point) pieces, at most ``size`` points per chunk."""
    chunk: list[tuple[Series, int, int]] = []
    used = 0
    for item in items:
        start = 0
        while start < len(item.points):
            end = min(len(item.points), start + size - used)
            chunk.append((item, start, end))
            used += end - start
            start = end
            if used >= size:
                yield chunk
                chunk, used = [], 0
    if chunk:
        yield chunk


def temporalities() -> tuple[Any, Any]:
    """(counter, histogram) temporality, as the SDK's OTLP metric exporters read the preference variable."""
    from opentelemetry.exporter.otlp.proto.common._internal.metrics_encoder import OTLPMetricExporterMixin  # metrics on
    from opentelemetry.sdk.metrics import Counter, Histogram  # metrics on

    preferred = OTLPMetricExporterMixin()._get_temporality({})
    return preferred[Counter], preferred[Histogram]


def _exemplars(records: list[RunRecord], value: Callable[[RunRecord], float]) -> list[Any]:
    from opentelemetry.sdk.metrics import Exemplar  # metrics on

    return [
        Exemplar(
            {"probability.run": r.run},
            value(r),
            int((r.start_time + r.duration) * 1e9),
            int(r.span_id, 16),
            int(r.trace_id, 16),
        )
        for r in records
    ]


def _metric(item: Series, start: int, end: int, start_ns: int, now_ns: int, temporality: tuple[Any, Any]) -> Any:
    from opentelemetry.sdk.metrics.export import Gauge, Histogram, HistogramDataPoint, Metric, NumberDataPoint, Sum  # metrics on

    points = []
    for index in range(start, end):
        attributes, value = item.points[index]
        records = item.exemplars.get(index, [])
        if item.kind == "histogram":
            counts = [0] * (len(DURATION_BUCKETS) + 1)
            for duration in value:
                # Bucket i holds (bounds[i-1], bounds[i]], as the SDK's explicit-bucket aggregation.
                counts[bisect.bisect_left(DURATION_BUCKETS, duration)] += 1
            points.append(HistogramDataPoint(
                attributes, start_ns, now_ns, len(value), float(sum(value)), counts, DURATION_BUCKETS,
                min(value), max(value), _exemplars(records, lambda r: r.duration),
            ))  # fmt: skip
        else:
            if type(value) is bool:
                value = float(value)
            points.append(NumberDataPoint(
                attributes, 0 if item.kind == "gauge" else start_ns, now_ns, value, _exemplars(records, lambda r: 1)
            ))  # fmt: skip
    if item.kind == "histogram":
        data: Any = Histogram(points, temporality[1])
    elif item.kind == "gauge":
        data = Gauge(points)
    else:
        data = Sum(points, temporality[0], True)
    return Metric(item.name, item.description, item.unit, data)


def collect(
    summary: Summary,
    resource: Any,
    facets: Iterable[Facet] = (),
    start_time_ns: int | None = None,
    points_per_request: int = POINTS_PER_REQUEST,
    version: str = "",
    counters_only: bool = False,
    gauges_only: bool = False,
) -> list[tuple[bytes, int]]:
    """The session's metrics as serialized requests of at most ``points_per_request`` points: (body, points).

    ``counters_only``: a shard's, without gauges; ``gauges_only``: the merge's, whose counters its shards
    sent (see :func:`additive`)."""
    from opentelemetry.exporter.otlp.proto.common.metrics_encoder import encode_metrics  # metrics on
    from opentelemetry.sdk.metrics.export import MetricsData, ResourceMetrics, ScopeMetrics  # metrics on

    now = time.time_ns()
    start = start_time_ns or now
    items = row_series(summary)
    for facet in facets:
        items.extend(facet.series())
    items = [item for item in items
             if item.points and not (counters_only and not additive(item)) and not (gauges_only and additive(item))]
    temporality = temporalities()
    scope = InstrumentationScope(SCOPE, version)
    requests = []
    for chunk in _chunks(items, points_per_request):
        metrics = [_metric(item, first, end, start, now, temporality) for item, first, end in chunk]
        data = MetricsData([ResourceMetrics(resource, [ScopeMetrics(scope, metrics, "")], resource.schema_url)])
        requests.append((encode_metrics(data).SerializeToString(), sum(end - first for _, first, end in chunk)))
    return requests
