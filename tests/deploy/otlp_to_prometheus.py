"""What Prometheus 3's OTLP receiver stores for an OTLP metrics export.

A small Python model of ``translation_strategy: UnderscoreEscapingWithSuffixes``
(prometheus/otlptranslator ``normalizeName`` and ``LabelNamer``, and
Prometheus's ``createAttributes`` / ``addResourceTargetInfo``), enough to turn
the plugin's real export (the ``--prob-otel-file`` JSON lines) into the series
and labels that the rules and dashboards query:

* metric name: split on characters outside ``[a-zA-Z0-9:]`` (dots, and
  underscores too, so runs of them collapse), join with ``_``; the unit is
  appended unless a name token already is that unit: annotations in braces
  (``{run}``, ``{USD}``) are dropped, ``1`` adds nothing, ``s`` adds
  ``seconds``, ``a/b`` adds ``a_per_b``; a monotonic sum gets ``_total``; a
  gauge with unit ``1`` gets ``_ratio`` (only a gauge, and only unit ``1``:
  unit ``""`` adds nothing); histograms become ``_bucket`` (with ``le``),
  ``_sum`` and ``_count``;
* labels: the data point's attributes with invalid characters as ``_``; the
  promoted resource attributes (``otlp.promote_resource_attributes``) the same
  way; ``job`` from ``service.namespace/service.name``, ``instance`` from
  ``service.instance.id``;
* ``target_info``: one series per resource with every resource attribute but
  the identifying ones (service.name, service.namespace, service.instance.id)
  as labels, plus job/instance, when there is at least one such attribute.

Nothing here knows the plugin's metric names: they all come from the export.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any, Iterable

IDENTIFYING_RESOURCE_ATTRIBUTES = ("service.namespace", "service.name", "service.instance.id")

UNITS = {
    "d": "days", "h": "hours", "min": "minutes", "s": "seconds", "ms": "milliseconds",
    "us": "microseconds", "ns": "nanoseconds",
    "By": "bytes", "KiBy": "kibibytes", "MiBy": "mebibytes", "GiBy": "gibibytes", "TiBy": "tibibytes",
    "KBy": "kilobytes", "MBy": "megabytes", "GBy": "gigabytes", "TBy": "terabytes",
    "m": "meters", "V": "volts", "A": "amperes", "J": "joules", "W": "watts", "g": "grams",
    "Cel": "celsius", "Hz": "hertz", "1": "", "%": "percent",
}
PER_UNITS = {"s": "second", "m": "minute", "h": "hour", "d": "day", "w": "week", "mo": "month", "y": "year"}


def _clean_unit(unit: str) -> str:
    return re.sub(r"__+", "_", re.sub(r"[^a-zA-Z0-9:]", "_", unit)).lstrip("_")


def _unit_suffixes(unit: str) -> tuple[str, str]:
    parts = unit.split("/", 1)
    main = per = ""
    head = parts[0].strip()
    if head and not re.search(r"[{}]", head):
        main = UNITS.get(head, head)
    if len(parts) > 1 and parts[1]:
        tail = parts[1].strip()
        if tail and not re.search(r"[{}]", tail):
            per = "per_" + PER_UNITS.get(tail, tail)
    return _clean_unit(main), _clean_unit(per)


def metric_name(name: str, unit: str, kind: str) -> str:
    """Prometheus name of an OTLP metric; kind: counter (monotonic sum), sum, gauge, histogram."""
    tokens = [t for t in re.split(r"[^a-zA-Z0-9:]+", name) if t]
    main, per = _unit_suffixes(unit)
    if main in tokens:
        main = ""
    per = "" if per == "per_" else per.rstrip("_")
    if per in tokens:
        per = ""
    if per:
        main = main.rstrip("_")
    tokens += [t for t in (main, per) if t]
    if kind == "counter":
        tokens = [t for t in tokens if t != "total"] + ["total"]
    if unit == "1" and kind == "gauge":
        tokens = [t for t in tokens if t != "ratio"] + ["ratio"]
    out = "_".join(tokens)
    return "_" + out if out[:1].isdigit() else out


def label_name(attribute: str) -> str:
    out = re.sub(r"[^a-zA-Z0-9_]", "_", attribute)
    if out[:1].isdigit():
        return "key_" + out
    if out.startswith("_") and not out.startswith("__"):
        return "key" + out
    return out


def _le(bound: float) -> str:
    """Go's strconv.FormatFloat(bound, 'f', -1, 64)."""
    return format(Decimal(repr(float(bound))).normalize(), "f")


@dataclass
class PromSeries:
    name: str
    labels: dict[str, str]
    value: float
    exemplars: int = 0


@dataclass
class Translation:
    series: list[PromSeries] = field(default_factory=list)
    #: OTLP instrument -> (kind, unit, temporality) as exported.
    instruments: dict[str, tuple[str, str, str | None]] = field(default_factory=dict)
    resources: list[dict[str, Any]] = field(default_factory=list)

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

    def find(self, name: str, **labels: str) -> list[PromSeries]:
        return [s for s in self.series if s.name == name and all(s.labels.get(k) == v for k, v in labels.items())]


def _any_value(value: Any) -> Any:
    which = value.WhichOneof("value")
    return getattr(value, which) if which else None


def _attributes(kvs: Iterable[Any]) -> dict[str, Any]:
    return {kv.key: _any_value(kv.value) for kv in kvs}


def _as_str(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _base_labels(resource: dict[str, Any], attributes: dict[str, Any], promote: Iterable[str]) -> dict[str, str]:
    labels: dict[str, str] = {}
    for key in sorted(attributes):
        name = label_name(key)
        value = _as_str(attributes[key])
        labels[name] = f"{labels[name]};{value}" if name in labels else value
    for key in promote:
        if key in resource:
            labels.setdefault(label_name(key), _as_str(resource[key]))
    if "service.name" in resource:
        job = _as_str(resource["service.name"])
        if "service.namespace" in resource:
            job = f"{_as_str(resource['service.namespace'])}/{job}"
        labels["job"] = job
    if "service.instance.id" in resource:
        labels["instance"] = _as_str(resource["service.instance.id"])
    return labels


def translate(requests: Iterable[Any], promote: Iterable[str], keep_identifying: bool = False) -> Translation:
    """``requests``: ExportMetricsServiceRequests, or (kind, request) pairs as
    ``otlp_json.read_file`` yields them (trace requests are skipped)."""
    promote = list(promote)
    out = Translation()
    for item in requests:
        if isinstance(item, tuple):
            kind_of_request, item = item
            if kind_of_request != "metrics":
                continue
        for rm in item.resource_metrics:
            resource = _attributes(rm.resource.attributes)
            if resource not in out.resources:
                out.resources.append(resource)
            for sm in rm.scope_metrics:
                for metric in sm.metrics:
                    which = metric.WhichOneof("data")
                    data = getattr(metric, which)
                    temporality = None
                    if which == "sum":
                        kind = "counter" if data.is_monotonic else "sum"
                    elif which in ("gauge", "histogram"):
                        kind = which
                    else:  # pragma: no cover - the plugin sends none
                        raise ValueError(f"{metric.name}: {which} is not modelled here")
                    if which in ("sum", "histogram"):
                        temporality = {1: "delta", 2: "cumulative"}.get(data.aggregation_temporality, "unspecified")
                    out.instruments[metric.name] = (kind, metric.unit, temporality)
                    name = metric_name(metric.name, metric.unit, kind)
                    for dp in data.data_points:
                        base = _base_labels(resource, _attributes(dp.attributes), promote)
                        if which == "histogram":
                            out.series.append(PromSeries(f"{name}_sum", dict(base), dp.sum))
                            out.series.append(PromSeries(f"{name}_count", dict(base), float(dp.count)))
                            cumulative = 0
                            bounds = list(dp.explicit_bounds)
                            for i, bound in enumerate(bounds):
                                cumulative += dp.bucket_counts[i]
                                out.series.append(PromSeries(f"{name}_bucket", {**base, "le": _le(bound)}, float(cumulative)))
                            out.series.append(PromSeries(f"{name}_bucket", {**base, "le": "+Inf"}, float(dp.count),
                                                         exemplars=len(dp.exemplars)))
                        else:
                            value = dp.as_double if dp.WhichOneof("value") == "as_double" else float(dp.as_int)
                            out.series.append(PromSeries(name, base, value, exemplars=len(dp.exemplars)))
    for resource in out.resources:
        ignored = () if keep_identifying else IDENTIFYING_RESOURCE_ATTRIBUTES
        rest = {k: v for k, v in resource.items() if k not in ignored}
        if not any(k not in IDENTIFYING_RESOURCE_ATTRIBUTES for k in resource):
            continue
        labels = _base_labels(resource, rest, ())
        if "job" in labels or "instance" in labels:
            out.series.append(PromSeries("target_info", labels, 1.0))
    return out
