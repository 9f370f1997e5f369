"""What reading usage off spans costs per span ended: the plugin's span processor against the bare SDK.

In one process, a real SDK ``TracerProvider`` ends the same span (started,
its attributes set, ended, as an instrumentation does) ``--spans`` times,
with and without ``UsageProcessor`` (``otel/usage_spans.py``), in rounds that
alternate the variants. Two spans: an OpenAI chat span with GenAI usage
(the attributes of ``opentelemetry-instrumentation-genai-openai``), ended
inside a run so that its usage is charged, and an HTTP client span with none
(what most spans are). It prints the median time per span of each variant,
wall and CPU, and the difference: the processor's cost per span ended.

It also times what each run pays for looking for the global provider
(``SpanUsage.look``): once a global SDK provider has the processor, a flag
(the API sets the global provider once); while none is set and nothing is
instrumented, a ``sys.modules`` lookup, ``get_tracer_provider()`` and a walk
over the instrumentor classes. A session whose code never loads OpenTelemetry pays a
``sys.modules`` lookup per run and imports nothing (``tests/e2e/test_lazy_imports.py``).

Usage::

    .venv/bin/python benchmarks/span_usage.py              # 20,000 spans x 9 rounds (~10 s)
    .venv/bin/python benchmarks/span_usage.py --spans 50000 -r 15 --json

Goal (issue 21): at most 20 µs per span ended. Nothing is asserted.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _measure import describe_machine, loadavg, machine, warn_if_busy  # noqa: E402

CHAT = {
    "gen_ai.operation.name": "chat",
    "gen_ai.provider.name": "openai",
    "gen_ai.request.model": "gpt-4o-mini",
    "server.address": "127.0.0.1",
    "server.port": 8000,
    "gen_ai.request.temperature": 0.2,
    "gen_ai.request.max_tokens": 50,
    "gen_ai.response.finish_reasons": ("stop",),
    "gen_ai.response.model": "gpt-4o-mini-2024-07-18",
    "gen_ai.response.id": "chatcmpl-abc123",
    "gen_ai.usage.input_tokens": 21,
    "gen_ai.usage.output_tokens": 7,
    "gen_ai.usage.cache_read.input_tokens": 16,
    "gen_ai.usage.reasoning.output_tokens": 3,
}
HTTP = {
    "http.request.method": "POST",
    "url.full": "http://127.0.0.1:8000/v1/chat/completions",
    "server.address": "127.0.0.1",
    "server.port": 8000,
    "http.response.status_code": 200,
}


def _tracers():
    from opentelemetry.sdk.trace import TracerProvider

    from pytest_probability.otel.usage_spans import UsageProcessor

    bare = TracerProvider()
    read = TracerProvider()
    read.add_span_processor(UsageProcessor())
    return bare.get_tracer("bench"), read.get_tracer("bench")


def _time(tracer, attributes, spans: int, run) -> tuple[float, float]:
    """(wall, CPU) seconds per span ended."""
    start_span = tracer.start_span
    wall, cpu = time.perf_counter(), time.process_time()
    for _ in range(spans):
        span = start_span("chat gpt-4o-mini")
        span.set_attributes(attributes)
        span.end()
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    run.span_usage.clear()  # what one round charged: a run holds a few entries, not tens of thousands
    return wall / spans, cpu / spans


def measure(spans: int, rounds: int) -> dict:
    from pytest_probability.model.case import CaseRef
    from pytest_probability.otel.usage import SpanUsage
    from pytest_probability.run import context

    bare, read = _tracers()
    case = CaseRef(
        key="bench_x.py::bench_a",
        benchmark="a",
        case="",
        label="a",
        order=0,
        runs=1,
        params=(),
        path="bench_x.py",
        function="bench_a",
        lineno=1,
    )
    run = context.start(case, 1, "bench_x.py::bench_a[run1]")
    samples: dict[str, list[tuple[float, float]]] = {}
    variants = [("bare", bare), ("processor", read)]
    for kind, attributes in (("usage", CHAT), ("no usage", HTTP)):
        _time(bare, attributes, spans // 10, run)  # warm-up
        _time(read, attributes, spans // 10, run)
        for repetition in range(rounds):
            for name, tracer in variants if repetition % 2 == 0 else variants[::-1]:
                samples.setdefault(f"{kind}/{name}", []).append(_time(tracer, attributes, spans, run))
    charged = len(run.span_usage)
    from opentelemetry import trace
    from opentelemetry.sdk.trace import TracerProvider

    looks: dict[str, list[float]] = {}
    watch = SpanUsage()
    for state in ("proxy", "hooked"):
        if state == "hooked":  # a global SDK provider: the processor is put on it once, then nothing to look at
            trace.set_tracer_provider(TracerProvider())
        watch.look()
        for _ in range(rounds):
            start = time.perf_counter()
            for _ in range(spans):
                watch.look()
            looks.setdefault(state, []).append((time.perf_counter() - start) / spans)
    context.finish()
    result: dict = {"spans": spans, "rounds": rounds, "charged_after_clear": charged, "per_span_us": {}}
    for kind in ("usage", "no usage"):
        bare_wall = statistics.median(w for w, _ in samples[f"{kind}/bare"]) * 1e6
        bare_cpu = statistics.median(c for _, c in samples[f"{kind}/bare"]) * 1e6
        read_wall = statistics.median(w for w, _ in samples[f"{kind}/processor"]) * 1e6
        read_cpu = statistics.median(c for _, c in samples[f"{kind}/processor"]) * 1e6
        result["per_span_us"][kind] = {
            "bare_wall": round(bare_wall, 2),
            "processor_wall": round(read_wall, 2),
            "added_wall": round(read_wall - bare_wall, 2),
            "bare_cpu": round(bare_cpu, 2),
            "processor_cpu": round(read_cpu, 2),
            "added_cpu": round(read_cpu - bare_cpu, 2),
        }
    result["per_run_look_us"] = {state: round(statistics.median(v) * 1e6, 3) for state, v in looks.items()}
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--spans", type=int, default=20000, help="spans ended per variant and round")
    parser.add_argument("-r", "--rounds", type=int, default=9, help="rounds (variants alternate)")
    parser.add_argument("--json", action="store_true", help="print JSON")
    args = parser.parse_args(argv)
    info = machine(sys.executable, ("pytest", "opentelemetry-sdk"))
    warn_if_busy(info)
    result = measure(args.spans, args.rounds)
    info["loadavg_end"] = loadavg()
    result["machine"] = info
    if args.json:
        print(json.dumps(result, indent=2))
        return 0
    print(describe_machine(info))
    print(f"{args.spans:,} spans x {args.rounds} rounds per variant; medians, microseconds per span ended")
    print(f"{'span':<10} {'bare SDK':>10} {'+ usage':>10} {'added':>8}   {'bare CPU':>9} {'+ usage':>9} {'added':>8}")
    for kind, row in result["per_span_us"].items():
        print(
            f"{kind:<10} {row['bare_wall']:>10.2f} {row['processor_wall']:>10.2f} {row['added_wall']:>8.2f}   "
            f"{row['bare_cpu']:>9.2f} {row['processor_cpu']:>9.2f} {row['added_cpu']:>8.2f}"
        )
    look = result["per_run_look_us"]
    print(
        f"per run (SpanUsage.look), OpenTelemetry loaded: {look['hooked']:.3f} µs once a global SDK provider "
        f"has the processor, {look['proxy']:.3f} µs while no provider is set and nothing is instrumented"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
