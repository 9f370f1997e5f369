"""The other signals: the plugin's SDK ``MeterProvider`` and ``LoggerProvider``, for instrumentation.

Instrumentation (the GenAI instrumentation's ``gen_ai.client.token.usage`` and
``gen_ai.client.operation.duration`` histograms, its events, emitted as log
records through the logs API) records into the global providers. When the
process has none, the plugin installs SDK ones on the session's resource, so
those metrics and log records go where the run spans go: the endpoint, the
OTLP file, the spill file and ``replay``. A provider the user set first stays
in charge of its signal; the plugin then installs none for it.

* **Metrics**: a ``MeterProvider`` with one ``PeriodicExportingMetricReader``
  without a period, collected once, at the end of the process that made them,
  through :class:`~.exporters.MetricOut` (the temporality and histogram
  aggregation the SDK's OTLP exporters prefer). The SDK's exemplar filter
  (``OTEL_METRICS_EXEMPLAR_FILTER``, default ``trace_based``) gives a
  measurement made inside a run the run span's ids.
* **Log records**: a ``LoggerProvider`` whose processor is the SDK's
  ``BatchLogRecordProcessor``, made by the first record
  (:class:`~.exporters.LazyLogs`); the SDK takes the trace and span ids from
  the current context, the run span's during a run.

In the aggregating process both deliver to their signal's guard; on an xdist
worker to its outbox (:mod:`.link`): no worker talks to the network.
"""

from __future__ import annotations

import math
from typing import Any

from .exporters import Deliver, LazyLogs, MetricOut


def make_meter_provider(resource: Any, deliver: Deliver) -> Any | None:
    """The reader of the plugin's global MeterProvider, or None when a global one is already set."""
    from opentelemetry import metrics
    from opentelemetry.sdk.metrics import MeterProvider
    from opentelemetry.sdk.metrics.export import PeriodicExportingMetricReader

    if not _unset(metrics.get_meter_provider()):
        return None
    reader = PeriodicExportingMetricReader(MetricOut(deliver), export_interval_millis=math.inf)
    provider = MeterProvider(metric_readers=[reader], resource=resource, shutdown_on_exit=False)
    metrics.set_meter_provider(provider)
    return reader if metrics.get_meter_provider() is provider else None


def make_logger_provider(resource: Any, deliver: Deliver, capture: bool = True) -> LazyLogs | None:
    """The processor of the plugin's global LoggerProvider; None when a global one is set. ``capture``
    False (``--prob-otel-capture=ids``): records go without their body and withheld attributes."""
    from opentelemetry import _logs
    from opentelemetry.sdk._logs import LoggerProvider

    if not _unset(_logs.get_logger_provider()):
        return None
    processor = LazyLogs(deliver, capture)
    provider = LoggerProvider(resource=resource, shutdown_on_exit=False)
    provider.add_log_record_processor(processor)
    _logs.set_logger_provider(provider)
    return processor if _logs.get_logger_provider() is provider else None


def _unset(provider: Any) -> bool:
    """Whether a global provider is still the API's proxy one, i.e. nobody set one (not even a no-op one)."""
    return type(provider).__name__.startswith(("_Proxy", "Proxy"))
