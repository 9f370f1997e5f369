"""OpenTelemetry export for pytest-probability: every run a span, every row's aggregates metrics.

Importing this package imports no OpenTelemetry module: :func:`configure`
decides from the options whether export is on and only then imports the
OpenTelemetry SDK (its tracer provider for the run spans, its OTLP exporters
and encoders for sending). It hands the composition root the export's parts,
each behind one of the session's extension points: the run spans (a
:class:`~pytest_probability.protocols.RunObserver`), what travels between
xdist workers and the controller (a :class:`~pytest_probability.protocols.Link`),
and, in the aggregating process, the flush at the end (a
:class:`~pytest_probability.protocols.Finisher`), which reads the metric
series of the same facets every other output reads.

Beside ``report/`` (neither imports the other), it may import the session,
the protocols, the model, the configuration's parsers and the leaves; only
the composition root imports it, and nothing outside it imports OpenTelemetry.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import TYPE_CHECKING, Sequence

import pytest

from . import options

if TYPE_CHECKING:
    from ..protocols import Facet, Finisher, Link, RunObserver


@dataclass
class Export:
    """The export's parts, for the composition root to register."""

    observer: RunObserver
    link: Link
    #: The flush at the session's end; None on an xdist worker (its controller exports).
    finisher: Finisher | None


def configure(config: pytest.Config, *, worker: bool, facets: Sequence[Facet], notes: list[str],
              shard: tuple[int, int] | None = None) -> Export | None:
    """The export's parts when it is on, else None (and nothing of OpenTelemetry imported).

    ``shard``: ``--prob-shard``'s (K, N). A shard's metrics are the series that add over shards
    (counters and the duration histogram), no gauge, and its resource is ``service.instance.id``
    ``shard-K-of-N`` (unless ``OTEL_RESOURCE_ATTRIBUTES`` gives one), so that each shard's counters are
    series of their own, which add, rather than overwrite each other."""
    settings = options.resolve(config)
    if settings is None:
        return None
    for name in settings.bad_limits:
        os.environ.pop(name, None)
    from .spans import RunSpans, WorkerBuffer, WorkerSpans, make_provider, parent_context, tracer

    if worker:
        from opentelemetry.sdk.resources import Resource

        workerinput = config.workerinput  # type: ignore[attr-defined]
        buffer = WorkerBuffer()
        provider, _ = make_provider(Resource(workerinput.get("prob_otel_resource", {})), buffer.add,
                                    settings.capture_values)
        parent = parent_context(workerinput.get("prob_otel_traceparent"), workerinput.get("prob_otel_tracestate"))
        return Export(RunSpans(settings, tracer(provider), parent, take=buffer.take), WorkerSpans(buffer), None)

    from .session import Session, SessionExport, ShippedSpans

    session = Session(settings, config.rootpath, shard=shard)
    return Export(RunSpans(settings, session.tracer, session.run_parent), ShippedSpans(session),
                  SessionExport(session, facets, notes))
