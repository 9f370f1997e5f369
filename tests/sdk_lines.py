"""OTLP JSON lines from OpenTelemetry SDK data, for the tests.

The plugin encodes its own spans and metrics (``pytest_probability.otel.encode``);
these helpers produce lines the *SDK* way (its encoder, then
``otlp_json.request_to_line``), so that the codec and the replay are also tested
on data the plugin did not make.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

from pytest_probability.otel.otlp_json import request_to_line


def _sdk_encoders() -> tuple[Any, Any]:
    try:  # public re-exports (present in 1.45)
        from opentelemetry.exporter.otlp.proto.common.metrics_encoder import encode_metrics
        from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
    except ImportError:  # pragma: no cover - older/newer layouts
        from opentelemetry.exporter.otlp.proto.common._internal.metrics_encoder import (  # type: ignore[no-redef]
            encode_metrics,
        )
        from opentelemetry.exporter.otlp.proto.common._internal.trace_encoder import (  # type: ignore[no-redef]
            encode_spans,
        )
    return encode_spans, encode_metrics


def _chunks(items: Sequence[Any], size: int | None) -> Iterator[Sequence[Any]]:
    if size is None:
        yield items
        return
    if size < 1:
        raise ValueError("max_spans_per_line must be >= 1")
    for start in range(0, len(items), size):
        yield items[start : start + size]


def spans_to_lines(spans: Sequence[Any], *, max_spans_per_line: int | None = None) -> list[str]:
    """Encode finished SDK spans as OTLP JSON lines (no trailing newlines).

    All spans go into one line unless ``max_spans_per_line`` is given; no
    spans gives no lines.
    """
    spans = list(spans)
    if not spans:
        return []
    encode_spans, _ = _sdk_encoders()
    return [request_to_line(encode_spans(chunk)) for chunk in _chunks(spans, max_spans_per_line)]


def metrics_to_lines(metrics_data: Any) -> list[str]:
    """Encode an SDK ``MetricsData`` (e.g. from a metric reader) as OTLP JSON lines.

    Returns one line, or no line when there is no resource metrics at all.
    """
    if metrics_data is None or not metrics_data.resource_metrics:
        return []
    _, encode_metrics = _sdk_encoders()
    return [request_to_line(encode_metrics(metrics_data))]
