"""The export's settings once export is on: :class:`OtelSettings`, which :func:`.otel.resolve` builds.

A module of its own, imported only when export is on: a dataclass's generated methods are compiled when
its class is created, and a session without export need not pay for them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path


@dataclass(frozen=True)
class OtelSettings:
    """Validated export settings.

    ``endpoints``: per signal sent to the network, the endpoint URL the plugin
    gives the SDK's exporter, or ``""`` when the exporter reads it from the
    ``OTEL_EXPORTER_OTLP_*`` variables itself. A signal not in it is not sent.
    """

    endpoints: dict[str, str]
    protocols: dict[str, str]
    timeout: float
    file: Path | None
    spill: Path | None
    capture: str
    suite: str
    traceparent: str | None
    tracestate: str | None = None
    notes: tuple[str, ...] = field(default=())
    metrics_on: bool = True
    #: Whether log records are exported at all (an endpoint, or the OTLP file).
    logs_on: bool = True
    #: OTEL_*_LIMIT variables that are not whole numbers: the SDK cannot even be
    #: imported with one set (it raises at import), so export removes them first.
    bad_limits: tuple[str, ...] = ()

    @property
    def network(self) -> bool:
        return bool(self.endpoints)

    @property
    def capture_values(self) -> bool:
        return self.capture == "all"
