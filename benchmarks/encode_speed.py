"""Speed of encoding run spans: pytest_probability.otel.encode vs the SDK encoder.

Encodes a batch of typical run spans (12 attributes, no events, a local
parent, OK status; default 512 spans) and prints the median µs per span over
several repetitions for:

- ``TraceEncoder.to_protobuf``  (serialized ExportTraceServiceRequest bytes);
- ``TraceEncoder.to_json_line`` (one OTLP JSON line);
- the SDK: ``encode_spans(...).SerializeToString()`` on equivalent
  ``ReadableSpan`` objects (what the OTLP exporters do);
- for reference, ``otlp_json.request_to_line(encode_spans(...))``, the SDK
  path to a JSON line.

Usage::

    .venv/bin/python benchmarks/encode_speed.py            # 512 spans, 15 repetitions
    .venv/bin/python benchmarks/encode_speed.py -n 2000 -r 31

It asserts nothing about the figures (but checks both encoders agree).
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
import time
from typing import Any, Callable

from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.util.instrumentation import InstrumentationScope
from opentelemetry.trace import SpanContext, SpanKind, Status, StatusCode, TraceFlags

from pytest_probability import __version__
from pytest_probability.otel import otlp_json
from pytest_probability.otel.encode import TraceEncoder

TRACE_ID = 0x5B8EFFF798038103D269B633813FC60C
PARENT_ID = 0xEEE19B7EC3C1B174
START = 1_760_000_000_000_000_000


def typical_attributes(i: int) -> dict[str, Any]:
    return {
        "probability.case": f"tests/test_llm.py::bench_answer[case-{i % 7}]",
        "probability.function": "bench_answer",
        "probability.file": "tests/test_llm.py",
        "probability.run": i,
        "probability.outcome": "pass",
        "probability.phase": "call",
        "probability.passed": True,
        "probability.duration_s": 0.000123 + i * 1e-9,
        "probability.cost_usd": 0.0021,
        "probability.tokens.input": 1234,
        "probability.tokens.output": 87,
        "probability.model": "model-x-2026-01",
    }


def wire_spans(n: int) -> list[dict[str, Any]]:
    return [
        {
            "name": "bench_answer",
            "trace_id": TRACE_ID,
            "span_id": 0x1000 + i,
            "parent_span_id": PARENT_ID,
            "parent_remote": False,
            "flags": 1,
            "kind": 0,
            "start": START + i * 1000,
            "end": START + i * 1000 + 500,
            "attributes": typical_attributes(i),
            "events": [],
            "links": [],
            "status": (1, ""),
        }
        for i in range(n)
    ]


def sdk_spans(wire: list[dict[str, Any]], resource: Resource, scope: InstrumentationScope) -> list[ReadableSpan]:
    return [
        ReadableSpan(
            name=w["name"],
            context=SpanContext(w["trace_id"], w["span_id"], is_remote=False, trace_flags=TraceFlags(w["flags"])),
            parent=SpanContext(w["trace_id"], w["parent_span_id"], is_remote=w["parent_remote"]),
            resource=resource,
            attributes=w["attributes"],
            kind=SpanKind(w["kind"]),
            status=Status(StatusCode(w["status"][0])),
            start_time=w["start"],
            end_time=w["end"],
            instrumentation_scope=scope,
        )
        for w in wire
    ]


def median_us_per_span(fn: Callable[[], object], n: int, repetitions: int) -> float:
    fn()  # warm-up
    samples = []
    for _ in range(repetitions):
        t0 = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - t0)
    return statistics.median(samples) / n * 1e6


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("-n", "--spans", type=int, default=512, help="spans per batch (default 512)")
    parser.add_argument("-r", "--repetitions", type=int, default=15, help="repetitions (default 15)")
    args = parser.parse_args(argv)

    resource = Resource.create({"service.name": "pytest-probability-bench"})
    scope = InstrumentationScope("pytest_probability", __version__)
    wire = wire_spans(args.spans)
    sdk = sdk_spans(wire, resource, scope)
    encoder = TraceEncoder(resource.attributes, resource.schema_url, scope.name, scope.version or "")

    if ExportTraceServiceRequest.FromString(encoder.to_protobuf(wire)) != encode_spans(sdk):
        print("error: TraceEncoder and the SDK encoder disagree", file=sys.stderr)
        return 1

    python = f"{platform.python_implementation()} {platform.python_version()}"
    print(f"# {python}, {os.cpu_count()} CPUs, load {os.getloadavg()[0]:.2f}")
    print(f"# {args.spans} spans of {len(wire[0]['attributes'])} attributes, median of {args.repetitions} repetitions")
    rows = [
        ("TraceEncoder.to_protobuf", lambda: encoder.to_protobuf(wire)),
        ("TraceEncoder.to_json_line", lambda: encoder.to_json_line(wire)),
        ("SDK encode_spans + SerializeToString", lambda: encode_spans(sdk).SerializeToString()),
        ("SDK encode_spans + otlp_json.request_to_line", lambda: otlp_json.request_to_line(encode_spans(sdk))),
    ]
    for label, fn in rows:
        print(f"{label:46s} {median_us_per_span(fn, args.spans, args.repetitions):7.2f} µs/span")
    return 0


if __name__ == "__main__":
    sys.exit(main())
