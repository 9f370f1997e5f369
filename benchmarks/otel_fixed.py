"""The export's fixed cost per session, against the bare OpenTelemetry SDK's (issue 24).

The goals for sleeping runs (10 ms: on/off <= 1.03; 100 ms: <= 1.005) are
ratios of whole sessions, so a cost paid once per session weighs in them as
much as the per-run one. This measures that once-per-session cost, side by
side in one run, for OTLP/HTTP (protobuf) and OTLP/gRPC, each against a real
receiver on 127.0.0.1 (``tests/otlp_receiver.py``):

- **the plugin's fixed cost**: a session of ``--runs`` trivial runs (20 by
  default) with export on, minus the same session with export off (wall and
  CPU of the whole process, medians of the rounds, paired within a round);
- **the bare SDK's fixed cost**: a process that does what any exporter of a
  test session must do once: import the SDK and the OTLP trace and metric
  exporters of the protocol, build a ``TracerProvider`` with a
  ``BatchSpanProcessor`` and a ``MeterProvider`` with a metric reader, make
  one span and one counter point, and shut both down (which sends them),
  minus a bare ``python -c pass``.

The ratio of the two says how much of an exporting session's extra time is
the SDK's own. It asserts nothing: it measures.

Usage::

    .venv/bin/python benchmarks/otel_fixed.py            # both protocols, 9 rounds
    .venv/bin/python benchmarks/otel_fixed.py -r 15 --protocols http
    .venv/bin/python benchmarks/otel_fixed.py --json > fixed.json
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "tests"))
from _measure import child_env, describe_machine, loadavg, machine, order, paired_median, warn_if_busy  # noqa: E402
from otlp_receiver import OtlpReceiver  # noqa: E402

#: The bare SDK's once-per-session work (argv[1]: the protocol).
BARE_SDK = """
import sys

from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import PeriodicExportingMetricReader
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor

if sys.argv[1] == "grpc":
    from opentelemetry.exporter.otlp.proto.grpc.metric_exporter import OTLPMetricExporter
    from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter
else:
    from opentelemetry.exporter.otlp.proto.http.metric_exporter import OTLPMetricExporter
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

resource = Resource.create({"service.name": "pytest-probability"})
tracer_provider = TracerProvider(resource=resource)
tracer_provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
reader = PeriodicExportingMetricReader(OTLPMetricExporter(), export_interval_millis=10**9)
meter_provider = MeterProvider(resource=resource, metric_readers=[reader])
runs = meter_provider.get_meter("pytest-probability").create_counter("probability.runs")
with tracer_provider.get_tracer("pytest-probability").start_as_current_span("probability.session"):
    runs.add(1, {"outcome": "pass"})
tracer_provider.shutdown()
meter_provider.shutdown()
"""


def timed(command: list[str], cwd: Path, env: dict[str, str]) -> tuple[float, float]:
    """(wall, CPU) of one child process, which must succeed."""
    start = time.perf_counter()
    process = subprocess.Popen(command, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(process.pid, 0)
    wall = time.perf_counter() - start
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"failed: {' '.join(command)}\n{process.stderr.read().decode(errors='replace')[-2000:]}")
    return wall, usage.ru_utime + usage.ru_stime


def measure(protocols: list[str], rounds: int, runs: int, python: str) -> dict[str, dict[str, list[float]]]:
    with tempfile.TemporaryDirectory(prefix="prob-fixed-") as temp:
        folder = Path(temp)
        (folder / "pytest.ini").write_text("[pytest]\n")
        (folder / "bench_fixed.py").write_text("def bench_trivial():\n    pass\n")
        (folder / "bare_sdk.py").write_text(BARE_SDK)
        base = child_env(folder / "pycache", autoload=False)
        session = [
            python,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "-p",
            "pytest_probability.plugin",
            f"--prob-runs={runs}",
            "bench_fixed.py",
        ]
        samples: dict[str, dict[str, list[float]]] = {}
        for protocol in protocols:
            with OtlpReceiver(protocol) as receiver:
                on = dict(
                    base,
                    OTEL_EXPORTER_OTLP_ENDPOINT=receiver.endpoint,
                    OTEL_EXPORTER_OTLP_PROTOCOL="grpc" if protocol == "grpc" else "http/protobuf",
                )
                variants = {
                    "off": (session, base),
                    "on": (session, on),
                    "python": ([python, "-c", "pass"], base),
                    "sdk": ([python, "bare_sdk.py", protocol], on),
                }
                for command, env in variants.values():  # warm-up: bytecode, page cache
                    timed(command, folder, env)
                got = {f"{name}_{kind}": [] for name in variants for kind in ("wall", "cpu")}
                for index in range(rounds):
                    for name in order(list(variants), index):
                        command, env = variants[name]
                        wall, cpu = timed(command, folder, env)
                        got[f"{name}_wall"].append(wall)
                        got[f"{name}_cpu"].append(cpu)
                    receiver.clear()
                samples[protocol] = got
        return samples


def summary(samples: dict[str, dict[str, list[float]]]) -> dict[str, dict[str, float]]:
    out = {}
    for protocol, got in samples.items():
        row = {}
        for kind in ("wall", "cpu"):
            plugin = paired_median(got[f"on_{kind}"], got[f"off_{kind}"])
            sdk = paired_median(got[f"sdk_{kind}"], got[f"python_{kind}"])
            row[f"plugin_{kind}_s"] = round(plugin, 4)
            row[f"sdk_{kind}_s"] = round(sdk, 4)
            row[f"ratio_{kind}"] = round(plugin / sdk, 3) if sdk > 0 else float("nan")
        row["off_wall_s"] = round(statistics.median(got["off_wall"]), 4)
        out[protocol] = row
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("-r", "--rounds", type=int, default=9)
    parser.add_argument("--runs", type=int, default=20, help="runs of the plugin's sessions (default 20)")
    parser.add_argument("--protocols", nargs="+", choices=["http", "grpc"], default=["http", "grpc"])
    parser.add_argument("--python", default=sys.executable)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    info = machine(args.python, ("pytest", "opentelemetry-sdk", "opentelemetry-exporter-otlp-proto-grpc"))
    warn_if_busy(info)
    samples = measure(args.protocols, args.rounds, args.runs, args.python)
    info["loadavg_end"] = loadavg()
    rows = summary(samples)
    if args.json:
        print(
            json.dumps(
                {
                    "benchmark": "otel_fixed",
                    "machine": info,
                    "rounds": args.rounds,
                    "runs": args.runs,
                    "summary": rows,
                    "samples": samples,
                },
                indent=2,
            )
        )
        return 0
    print(f"machine: {describe_machine(info)}")
    print(f"{args.rounds} rounds; medians of differences paired within a round; seconds per session")
    print(
        f"{'protocol':9} {'plugin wall':>11} {'SDK wall':>9} {'ratio':>6} {'plugin cpu':>11} {'SDK cpu':>8} "
        f"{'ratio':>6} {'off wall':>9}"
    )
    for protocol, row in rows.items():
        print(
            f"{protocol:9} {row['plugin_wall_s']:>11.3f} {row['sdk_wall_s']:>9.3f} {row['ratio_wall']:>6.2f} "
            f"{row['plugin_cpu_s']:>11.3f} {row['sdk_cpu_s']:>8.3f} {row['ratio_cpu']:>6.2f} {row['off_wall_s']:>9.3f}"
        )
    print(
        f"plugin: a session of {args.runs} trivial runs, export on minus off; SDK: import the SDK and the "
        "protocol's exporters, one span and one point, shut down (sent), minus python -c pass"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
