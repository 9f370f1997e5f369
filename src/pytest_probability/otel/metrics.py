"""Row aggregates as OpenTelemetry metrics, emitted once per session.

Only the aggregating process calls :func:`collect`, once, at session end.
The rows are already aggregated, so the metric data points are built
directly, as plain tuples that :meth:`pytest_probability.otel.encode.TraceEncoder.metrics_protobuf`
and ``metrics_json_line`` encode: going through SDK instruments would
re-aggregate every value one measurement at a time (about 1.5 s per 10,000
cases here, for nothing), and importing the SDK's metrics at session end cost
50-80 ms and a full garbage collection of a large session's heap.
Every point is cumulative, starting at the session's start; a nightly
session writes one sample per series. No run index, trace id or message is
ever an attribute. See docs/observability.md for the Prometheus names.
"""

from __future__ import annotations

import bisect
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Iterator, Sequence

from ..rows import Summary
from .encode import metric_points

DURATION_BUCKETS = (0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 20.0, 30.0, 60.0, 120.0, 300.0)
#: Data points per OTLP request: keeps a request of 10,000 cases under gRPC's 4 MiB default.
POINTS_PER_REQUEST = 2000

#: Instrument name -> (kind, unit, description); the stable contract.
INSTRUMENTS = {
    "probability.runs": ("counter", "{run}", "Runs by benchmark, case and outcome"),
    "probability.case.pass_fraction": ("gauge", "1", "Passes over counted runs of a case, with its row status"),
    "probability.session.pass_fraction": ("gauge", "1", "Passes over counted runs of the session"),
    "probability.session.runs": ("counter", "{run}", "Runs of the session, skipped ones included; emitted by every session (a heartbeat)"),
    "probability.cost": ("counter", "{USD}", "Spend recorded by runs, by case and model"),
    "probability.tokens": ("counter", "{token}", "Tokens recorded by runs, by benchmark, model and token type"),
    "probability.run.duration": ("histogram", "s", "Duration of the call phase of runs"),
}


@dataclass
class Series:
    """One instrument's points: (attributes, value), or (attributes, durations) for a histogram."""

    name: str
    kind: str  # counter, gauge or histogram
    unit: str
    description: str
    points: list[tuple[dict[str, Any], Any]] = field(default_factory=list)


#: Extra series other concerns add: summary -> series (e.g. gate gauges).
SeriesSource = Callable[[Summary], Iterable[Series]]


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
    duration = series("probability.run.duration")
    token_totals: dict[tuple[str, str, str], int] = {}
    for row in summary.rows:
        case = {"probability.benchmark": row.case.benchmark, "probability.case": row.case.case}
        counts = row.counts
        for outcome, value in (("pass", counts.passes), ("fail", counts.fails), ("error", counts.errors), ("skip", counts.skipped)):
            runs.points.append(({**case, "probability.outcome": outcome}, value))
        if counts.pass_rate is not None:
            case_fraction.points.append(({**case, "probability.status": row.status}, counts.pass_rate))
        by_outcome: dict[str, list[float]] = {}
        for record in row.records:
            if record.outcome != "skip":
                by_outcome.setdefault(record.outcome, []).append(record.duration)
        for outcome, values in by_outcome.items():
            duration.points.append(({**case, "probability.outcome": outcome}, values))
        for model, usage in row.usage.items():
            cost.points.append(({**case, "gen_ai.request.model": model}, usage.cost))
            for kind, value in (("input", usage.input_tokens), ("output", usage.output_tokens), ("cached", usage.cached_input_tokens)):
                key = (row.case.benchmark, model, kind)
                token_totals[key] = token_totals.get(key, 0) + value
        unattributed = sum(r.extra_cost for r in row.records)
        if unattributed or not row.usage:
            cost.points.append((case, unattributed))
    for (benchmark, model, kind), value in token_totals.items():
        tokens.points.append(({"probability.benchmark": benchmark, "gen_ai.request.model": model, "gen_ai.token.type": kind}, value))
    if summary.counts.pass_rate is not None:
        session_fraction.points.append(({}, summary.counts.pass_rate))
    session_runs.points.append(({}, summary.counts.total + summary.counts.skipped))
    return [runs, case_fraction, session_fraction, session_runs, cost, tokens, duration]


def _histogram_value(values: Sequence[float]) -> tuple[int, float, list[int], tuple[float, ...], float, float]:
    """(count, sum, bucket counts, bounds, min, max) of durations."""
    counts = [0] * (len(DURATION_BUCKETS) + 1)
    for value in values:
        # Bucket i holds (bounds[i-1], bounds[i]], as the SDK's explicit-bucket aggregation.
        counts[bisect.bisect_left(DURATION_BUCKETS, value)] += 1
    return len(values), float(sum(values)), counts, DURATION_BUCKETS, min(values), max(values)


def _metric(item: Series, points: Sequence[tuple[dict[str, Any], Any]]) -> tuple[str, str, str, str, list[Any]]:
    """The encoder's metric tuple: (name, description, unit, kind, points)."""
    if item.kind == "histogram":
        encoded = [(attributes, _histogram_value(values)) for attributes, values in points]
    else:
        encoded = list(points)
    return (item.name, item.description, item.unit, item.kind, encoded)


def _chunks(items: Sequence[Series], size: int) -> Iterator[list[tuple[Series, Sequence[Any]]]]:
    chunk: list[tuple[Series, Sequence[Any]]] = []
    used = 0
    for item in items:
        points = item.points
        while points:
            room = size - used
            part, points = points[:room], points[room:]
            chunk.append((item, part))
            used += len(part)
            if used >= size:
                yield chunk
                chunk, used = [], 0
    if chunk:
        yield chunk


@dataclass
class MetricsBatch:
    """One request's worth of metrics (see :func:`collect`)."""

    metrics: list[tuple[str, str, str, str, list[Any]]]
    start_ns: int
    now_ns: int

    @property
    def points(self) -> int:
        return metric_points(self.metrics)


def collect(
    summary: Summary,
    sources: Iterable[SeriesSource] = (),
    start_time_ns: int | None = None,
    points_per_request: int = POINTS_PER_REQUEST,
) -> list[MetricsBatch]:
    """The session's metrics, split into requests of at most ``points_per_request`` points."""
    now = time.time_ns()
    start = start_time_ns or now
    items = row_series(summary)
    for source in sources:
        items.extend(source(summary))
    items = [item for item in items if item.points]
    return [
        MetricsBatch([_metric(item, points) for item, points in chunk], start, now)
        for chunk in _chunks(items, points_per_request)
    ]
