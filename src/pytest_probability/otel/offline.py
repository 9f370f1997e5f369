"""The metrics of rows decided outside a session (``python -m pytest_probability merge --otel-file``,
``--otel-send``).

The whole-case gauges a session exports (``metrics.collect``: the rows' and
every facet's), encoded by the SDK, written as OTLP JSON lines; the merge sends
that file as ``python -m pytest_probability.otel replay FILE`` does
(:func:`send_metrics`). The counters are left out: each shard sent its own,
which add.
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Iterable

from .. import __version__, files
from ..model.rows import Summary
from ..protocols import Facet
from . import metrics, otlp_json
from . import resource as resource_module


def write_metrics(path: Path, summary: Summary, facets: Iterable[Facet], suite: str, root: Path) -> int:
    """Write the metric requests of ``summary`` to ``path``; the number of data points."""
    from .exporters import MetricOut

    resource = resource_module.build(suite, root, os.environ)
    # The gauges only: each shard sent its counters, as series of its own, which add.
    data = metrics.collect(summary, resource, facets, version=__version__, gauges_only=True)
    requests = MetricOut(lambda *_: True).requests(data) if data is not None else []
    text = "".join(otlp_json.request_to_line(otlp_json.parse("metrics", body)) + "\n" for body, _ in requests)
    files.write_text(path, text)
    return sum(points for _, points in requests)


def spill_path(root: Path) -> Path:
    """Where the merge keeps the metrics it is to send when no ``--otel-file`` was given: removed once
    they are sent, kept for replay when they could not be (as a session's spill file)."""
    return root / ".pytest-probability" / f"otel-spill-{time.strftime('%Y%m%dT%H%M%S')}-{os.getpid()}.jsonl"


def send_metrics(path: Path, endpoint: str | None, protocol: str | None, timeout: float,
                 keep: bool) -> tuple[bool, list[str]]:
    """Send the metrics file ``path`` as replay does (``FILE.replayed`` counts what was sent); (sent, lines
    to print). Sent and not ``keep``: the file is removed with its progress. Not sent: both stay, for replay."""
    from .replay import Replayed, send

    try:
        result = send(path, endpoint, protocol, timeout, grpc_hint="--otel-protocol grpc")
    except Exception as exc:  # noqa: BLE001 - an exporter's or the disk's: exporting never fails the merge
        result = Replayed(1, errors=[f"error: {type(exc).__name__}: {exc}"], reason=f"{type(exc).__name__}: {exc}")
    lines = list(result.warnings)
    if result.code == 0:
        rejected = result.rejected["metrics"]
        lines.append(f"sent {result.sent['metrics']} metric requests to {result.shown}"
                     + (f"; the endpoint rejected {rejected} metric points" if rejected else ""))
        if not keep:
            for made in (path, path.with_name(path.name + ".replayed")):
                made.unlink(missing_ok=True)
        return True, lines
    where = f"sending to {result.shown}" if result.shown else "sending"
    reason = f"{where} failed: {result.reason}" if result.code == 1 else "; ".join(
        line.removeprefix("error: ") for line in result.errors)
    lines.append(f"warning: the merged metrics were not sent ({reason}); they are kept in {path}: send them with "
                 f"python -m pytest_probability.otel replay {path}")
    return False, lines
