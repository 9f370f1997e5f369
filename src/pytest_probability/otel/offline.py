"""The metrics of rows decided outside a session (``python -m pytest_probability merge --otel-file``).

The whole-case gauges a session exports (``metrics.collect``: the rows' and
every facet's), encoded by the SDK, written as OTLP JSON lines; send them with
``python -m pytest_probability.otel replay FILE``. The counters are left out:
each shard sent its own, which add.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Iterable

from .. import __version__, files
from ..model.rows import Summary
from ..protocols import Facet
from . import metrics, otlp_json
from . import resource as resource_module


def write_metrics(path: Path, summary: Summary, facets: Iterable[Facet], suite: str, root: Path) -> int:
    """Write the metric requests of ``summary`` to ``path``; the number of data points."""
    from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import ExportMetricsServiceRequest

    resource = resource_module.build(suite, root, os.environ)
    starts = [r.start_time for row in summary.rows for r in row.records if r.start_time]
    start_ns = int(min(starts) * 1e9) if starts else None
    # The gauges only: each shard sent its counters, as series of its own, which add.
    requests = metrics.collect(summary, resource, facets, start_ns, version=__version__, gauges_only=True)
    text = "".join(otlp_json.request_to_line(ExportMetricsServiceRequest.FromString(body)) + "\n" for body, _ in requests)
    files.write_text(path, text)
    return sum(points for _, points in requests)
