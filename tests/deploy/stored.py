"""What a real Prometheus 3 stored from a real export of the plugin.

``Stored`` holds the series Prometheus answers for ``{job="pytest-probability"}``
after the plugin's session went through the real Collector into Prometheus's
OTLP receiver, with deploy/'s prometheus.yml (translation strategy, promoted
resource attributes): no model of that translation is written here, so where
the project misreads the protocol or Prometheus's naming, the tests see it.
``instruments`` (kind, unit, temporality of every OTLP instrument) and
``points`` (every data point) are read from the same session's
``--prob-otel-file``: what was sent, beside what was stored.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from promql_names import DEPLOY

from pytest_probability.otel import otlp_json


@dataclass
class Series:
    name: str
    labels: dict[str, str]
    value: float


@dataclass
class Point:
    """One OTLP data point as exported: instrument, kind, attributes, value
    (a histogram's: count and sum), time, and its resource's attributes."""

    instrument: str
    kind: str
    attributes: dict[str, Any]
    value: float | None
    count: int | None
    sum: float | None
    time_unix_nano: int
    resource: dict[str, Any]
    exemplars: int = 0


@dataclass
class Stored:
    series: list[Series] = field(default_factory=list)
    #: OTLP instrument -> (kind, unit, temporality) as exported.
    instruments: dict[str, tuple[str, str, str | None]] = field(default_factory=dict)
    points: list[Point] = field(default_factory=list)

    @classmethod
    def from_json(cls, series: list[dict], otlp_file: Path | None = None) -> Stored:
        out = cls([Series(s["name"], s["labels"], s["value"]) for s in series])
        if otlp_file is not None:
            out.instruments, out.points = read_points(otlp_file)
        return out

    def names_and_labels(self) -> dict[str, set[str]]:
        out: dict[str, set[str]] = {}
        for s in self.series:
            out.setdefault(s.name, set()).update(s.labels)
        return out

    def label_values(self) -> dict[tuple[str, str], set[str]]:
        out: dict[tuple[str, str], set[str]] = {}
        for s in self.series:
            for k, v in s.labels.items():
                out.setdefault((s.name, k), set()).add(v)
        return out

    def find(self, name: str, **labels: str) -> list[Series]:
        """Series of ``name`` with these label values; ``""`` matches a missing label, as in PromQL
        (Prometheus stores no label for an empty attribute, such as an unparametrized case's
        ``probability.case``)."""
        return [s for s in self.series if s.name == name and all(s.labels.get(k, "") == v for k, v in labels.items())]

    def empty_labels(self) -> dict[str, set[str]]:
        """{Prometheus name: labels} of attributes the export sent with an empty value on some point of
        that metric (documented names): the labels Prometheus does not store."""
        names = documented_names()
        out: dict[str, set[str]] = {}
        for p in self.points:
            empty = {label_of(k) for k, v in p.attributes.items() if str(v) == ""}
            for name in names.get(p.instrument, []):
                out.setdefault(name, set()).update(empty)
        return out


def _any_value(value: Any) -> Any:
    which = value.WhichOneof("value")
    return getattr(value, which) if which else None


def _attributes(kvs: Iterable[Any]) -> dict[str, Any]:
    return {kv.key: _any_value(kv.value) for kv in kvs}


def read_points(path: Path) -> tuple[dict[str, tuple[str, str, str | None]], list[Point]]:
    instruments: dict[str, tuple[str, str, str | None]] = {}
    points: list[Point] = []
    for kind_of_request, request in otlp_json.read_file(path):
        if kind_of_request != "metrics":
            continue
        for rm in request.resource_metrics:
            resource = _attributes(rm.resource.attributes)
            for sm in rm.scope_metrics:
                for metric in sm.metrics:
                    which = metric.WhichOneof("data")
                    data = getattr(metric, which)
                    kind = ("counter" if data.is_monotonic else "sum") if which == "sum" else which
                    temporality = None
                    if which in ("sum", "histogram"):
                        temporality = {1: "delta", 2: "cumulative"}.get(data.aggregation_temporality, "unspecified")
                    instruments[metric.name] = (kind, metric.unit, temporality)
                    for dp in data.data_points:
                        if which == "histogram":
                            value, count, total = None, int(dp.count), float(dp.sum)
                        else:
                            value = dp.as_double if dp.WhichOneof("value") == "as_double" else float(dp.as_int)
                            count = total = None
                        points.append(
                            Point(
                                metric.name,
                                kind,
                                _attributes(dp.attributes),
                                value,
                                count,
                                total,
                                int(dp.time_unix_nano),
                                resource,
                                len(dp.exemplars),
                            )
                        )
    return instruments, points


def span_ids(path: Path) -> list[str]:
    """The hex span ids of every span in an OTLP JSON-lines file, repeats kept."""
    out = []
    for kind_of_request, request in otlp_json.read_file(path):
        if kind_of_request == "traces":
            for rs in request.resource_spans:
                for ss in rs.scope_spans:
                    out.extend(span.span_id.hex() for span in ss.spans)
    return out


# ---------------------------------------------------------------------------
# The documented names: docs/observability.md's metric table
# ---------------------------------------------------------------------------
def documented_names() -> dict[str, list[str]]:
    """{OTLP instrument: [its Prometheus series names]} from the "Prometheus name"
    column of docs/observability.md's metrics table (a histogram: _bucket, _sum, _count)."""
    text = (DEPLOY.parent / "docs" / "observability.md").read_text()
    section = text.split("\n## Metrics\n", 1)[1].split("\n### ", 1)[0]
    out: dict[str, list[str]] = {}
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split(" | ")]
        m = re.match(r"`([\w.]+)`((?:, `[\w.]+`)*)$", cells[0])
        if not m or len(cells) < 5:
            continue
        # "`a.b.lower`, `.upper`": an instrument, then others that differ in the last part.
        first = m.group(1)
        instruments = [first] + [
            first.rsplit(".", 1)[0] + n if n.startswith(".") else n for n in re.findall(r"`([\w.]+)`", m.group(2))
        ]
        names = re.findall(r"`(\w+)`", cells[-1].split(" (", 1)[0])
        base = names[0]
        # "`x_bucket`, `_sum`, `_count`" or "`x_lower_ratio`, `_upper_ratio`"
        stem = re.sub(r"_bucket$", "", base) if base.endswith("_bucket") else None
        full = [base] + [
            (stem + n if stem else base.rsplit("_", 2)[0] + n) if n.startswith("_") else n for n in names[1:]
        ]
        if len(instruments) == len(full) > 1:  # one name per instrument
            for instrument, name in zip(instruments, full, strict=False):
                out[instrument] = [name]
        else:
            for instrument in instruments:
                out[instrument] = full
    return out


def label_of(attribute: str) -> str:
    """An attribute's label as docs/observability.md says: `.` becomes `_`."""
    return attribute.replace(".", "_")


def expected_labels(point: Point, promoted: Iterable[str]) -> dict[str, str]:
    """The labels docs/observability.md and deploy/README.md say a point's series has: its attributes
    (`.` to `_`; an empty value is no label), job from service.name, instance from
    service.instance.id, and the promoted resource attributes."""
    labels = {label_of(k): str(v) for k, v in point.attributes.items() if str(v) != ""}
    labels["job"] = str(point.resource["service.name"])
    if "service.instance.id" in point.resource:
        labels["instance"] = str(point.resource["service.instance.id"])
    for attribute in promoted:
        if attribute in point.resource:
            labels[label_of(attribute)] = str(point.resource[attribute])
    return labels


def unstored_points(points: list[Point], series: list[Series], promoted: Iterable[str]) -> list[str]:
    """Every point without a stored series of its documented name, labels and value: a list of problems."""
    import math

    names = documented_names()
    index: dict[tuple, list[float]] = {}
    for s in series:
        index.setdefault((s.name, tuple(sorted(s.labels.items()))), []).append(s.value)
    promoted = list(promoted)
    problems = []
    for p in points:
        if p.instrument not in names:
            problems.append(f"{p.instrument}: not in docs/observability.md's metric table")
            continue
        labels = expected_labels(p, promoted)
        want = (
            [(names[p.instrument][0], p.value)]
            if p.kind != "histogram"
            else [
                (names[p.instrument][2], float(p.count)),
                (names[p.instrument][1], p.sum),
                (names[p.instrument][0], float(p.count)),
            ]
        )
        for name, value in want:
            key_labels = dict(labels, le="+Inf") if name.endswith("_bucket") else labels
            got = index.get((name, tuple(sorted(key_labels.items()))))
            if not got:
                problems.append(f"{p.instrument} {p.attributes}: no series {name}{key_labels}")
            elif not any(
                math.isclose(v, value, rel_tol=1e-9, abs_tol=1e-12) or (math.isnan(v) and math.isnan(value))
                for v in got
            ):
                problems.append(f"{p.instrument} {p.attributes}: {name} holds {got}, the point is {value}")
    return problems
