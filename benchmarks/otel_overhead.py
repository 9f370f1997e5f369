"""Cost of OpenTelemetry export: the same session with export off and on.

For each N (default 1,000 and 10,000) one trivial ``bench_*`` function runs
``--prob-runs=N`` times, in fresh processes, in these variants:

- ``off``:  ``--prob-otel=off`` (the baseline);
- ``http``: export on to a local OTLP receiver over HTTP/protobuf
  (``--prob-otel-endpoint=http://127.0.0.1:PORT --prob-otel-protocol=http/protobuf``);
- ``file``: export on with ``--prob-otel-file=otlp.jsonl`` only (no network);
- ``grpc``: with ``--grpc``, the same receiver over OTLP/gRPC.

The receiver is the test suite's real one (``tests/otlp_receiver.py``,
imported by path), started in this process on 127.0.0.1 and cleared before
each session. After every exporting session the script checks that exactly
N + 1 spans arrived (N run spans and the session span), in the receiver or in
the file, that metrics arrived too, that nothing was spilled and that the
session printed no export failure; it stops otherwise, since a benchmark that
silently exported nothing would measure nothing.

Sessions, timings and environment are those of ``overhead.py`` (shared in
``_measure.py``): wall and CPU time of the whole child process, in-session
time from a conftest (its ``finish`` phase, from the end of the run loop to
the end of ``pytest_sessionfinish``, holds the final flush of spans and the
metrics export), peak RSS of the child from ``os.wait4()``. One untimed
warm-up per variant, then the repetitions rotate the order (off http file,
http file off, ...). The receiver runs in this process, so the child's CPU
time and RSS do not include it; the wall time does include waiting for its
answers (a real local Collector also takes some CPU on the same machine).

Usage::

    .venv/bin/python benchmarks/otel_overhead.py                # N = 1000 10000, 5 repetitions
    .venv/bin/python benchmarks/otel_overhead.py -n 10000 -r 9 --grpc
    .venv/bin/python benchmarks/otel_overhead.py --json > otel.json

Goal (issue 2): export on / off <= 1.15 in wall time at 10,000 runs. It
asserts nothing about the ratios: it measures.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import sys
import tempfile
from dataclasses import asdict
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from _measure import (  # noqa: E402 - shared helpers next to this script
    add_session_arguments,
    parse_session_arguments,
    BENCH_FILE,
    METRICS,
    VariantResult,
    describe_machine,
    loadavg,
    machine,
    order,
    run_session_output,
    warn_if_busy,
    write_folder,
)

RECEIVER_PATH = HERE.parent / "tests" / "otlp_receiver.py"
OTLP_FILE = "otlp.jsonl"
SPILL_FILE = "spill.jsonl"
BASELINE = "off"
GOAL_WALL_RATIO = 1.15


def load_receiver_module():
    """``tests/otlp_receiver.py`` by path (``tests`` is not a package on sys.path)."""
    spec = importlib.util.spec_from_file_location("prob_bench_otlp_receiver", RECEIVER_PATH)
    if spec is None or spec.loader is None:
        raise SystemExit(f"cannot load {RECEIVER_PATH}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look the module up while it executes
    spec.loader.exec_module(module)
    return module


def count_file(path: Path) -> tuple[int, int]:
    """(spans, metric data points) in an OTLP JSON-lines file."""
    spans = points = 0
    if not path.exists():
        return 0, 0
    with path.open(encoding="utf-8") as handle:
        for line in handle:
            if not line.strip():
                continue
            request = json.loads(line)
            for rs in request.get("resourceSpans", ()):
                for ss in rs.get("scopeSpans", ()):
                    spans += len(ss.get("spans", ()))
            for rm in request.get("resourceMetrics", ()):
                for sm in rm.get("scopeMetrics", ()):
                    for metric in sm.get("metrics", ()):
                        for kind in ("sum", "gauge", "histogram", "exponentialHistogram", "summary"):
                            if kind in metric:
                                points += len(metric[kind].get("dataPoints", ()))
    return spans, points


def count_points(receiver) -> int:
    return sum(
        len(getattr(metric, metric.WhichOneof("data")).data_points)
        for request in receiver.metrics_requests
        for rm in request.resource_metrics
        for sm in rm.scope_metrics
        for metric in sm.metrics
        if metric.WhichOneof("data")
    )


class Setup:
    """One variant at one N: its folder, arguments and the check of what it exported."""

    def __init__(self, root: Path, variant: str, n: int, receivers: dict) -> None:
        self.variant, self.n = variant, n
        self.folder = write_folder(root / f"{variant}-{n}", {"bench_overhead.py": BENCH_FILE})
        self.receiver = receivers.get(variant)
        args = [f"--prob-runs={n}", f"--prob-otel-spill={SPILL_FILE}"]
        if variant == "off":
            args.append("--prob-otel=off")
        elif variant == "file":
            args.append(f"--prob-otel-file={OTLP_FILE}")
        else:
            protocol = "grpc" if variant == "grpc" else "http/protobuf"
            args += [f"--prob-otel-endpoint={self.receiver.endpoint}", f"--prob-otel-protocol={protocol}"]
        self.args = args + ["bench_overhead.py"]
        self.checks: list[dict] = []

    def before(self) -> None:
        for name in (OTLP_FILE, SPILL_FILE):
            (self.folder / name).unlink(missing_ok=True)
        if self.receiver is not None:
            self.receiver.clear()

    def check(self, output: str) -> dict:
        """What this session exported; stops the benchmark when it is not N + 1 spans."""
        expected = self.n + 1
        if self.variant == "off":
            spans, points = count_file(self.folder / OTLP_FILE)
            ok = spans == 0 and not (self.folder / SPILL_FILE).exists()
        elif self.variant == "file":
            spans, points = count_file(self.folder / OTLP_FILE)
            ok = spans == expected and points > 0
        else:
            # The session has ended and waited for every answer: nothing is still in flight.
            spans, points = len(self.receiver.spans()), count_points(self.receiver)
            ok = spans == expected and points > 0
        spilled = (self.folder / SPILL_FILE).exists()
        failure = next((line for line in output.splitlines() if line.startswith("OpenTelemetry:")), "")
        result = {"spans": spans, "expected_spans": expected if self.variant != "off" else 0,
                  "metric_points": points, "spilled": spilled, "failure": failure}
        self.checks.append(result)
        if not ok or spilled or failure:
            raise SystemExit(f"{self.variant} N={self.n}: export check failed: {result}\n{output[-2000:]}")
        return result


def measure(ns: list[int], variants: tuple[str, ...], repetitions: int, warmup: int, *, python: str,
            autoload: bool, progress: bool) -> tuple[list[VariantResult], dict[tuple[str, int], list[dict]]]:
    receiver_module = load_receiver_module()
    receivers = {}
    for variant in variants:
        if variant in ("http", "grpc"):
            receivers[variant] = receiver_module.OtlpReceiver(variant).start()
    results: list[VariantResult] = []
    checks: dict[tuple[str, int], list[dict]] = {}
    try:
        with tempfile.TemporaryDirectory(prefix="prob-otel-overhead-") as temp:
            root = Path(temp)
            for n in ns:
                setups = {variant: Setup(root, variant, n, receivers) for variant in variants}
                by_variant = {variant: VariantResult(variant, n) for variant in variants}

                def one(variant: str, timed: bool, label: str) -> None:
                    setup = setups[variant]
                    setup.before()
                    sample, output = run_session_output(setup.folder, setup.args, python=python,
                                                        autoload=autoload, expected_items=n)
                    check = setup.check(output)
                    if timed:
                        by_variant[variant].samples.append(sample)
                    if progress:
                        print(
                            f"  N={n:,} {label:7} {variant:4} wall {sample.wall:.3f}s cpu {sample.cpu:.3f}s "
                            f"session {sample.session:.3f}s rss {sample.maxrss_kib / 1024:.1f} MiB  "
                            f"spans received {check['spans']}/{check['expected_spans']}, "
                            f"metric points {check['metric_points']}",
                            file=sys.stderr,
                        )

                for variant in variants:
                    for _ in range(warmup):
                        one(variant, False, "warm-up")
                for repetition in range(repetitions):
                    for variant in order(variants, repetition):
                        one(variant, True, f"#{repetition + 1}")
                results.extend(by_variant.values())
                for variant in variants:
                    checks[(variant, n)] = setups[variant].checks
    finally:
        for receiver in receivers.values():
            receiver.stop()
    return results, checks


#: Text columns: (metric, header, width, format of a value).
COLUMNS = (
    ("wall", "wall s", 9, "{:.3f}"),
    ("cpu", "cpu s", 8, "{:.3f}"),
    ("session", "session s", 11, "{:.3f}"),
    ("session_cpu", "sess cpu s", 12, "{:.3f}"),
    ("run", "run s", 8, "{:.3f}"),
    ("finish", "finish s", 10, "{:.3f}"),
    ("maxrss_kib", "peak RSS MiB", 14, None),
)


def ratios(results: list[VariantResult]) -> dict[int, dict[str, dict[str, float]]]:
    """N -> variant -> metric -> variant median / off median."""
    out: dict[int, dict[str, dict[str, float]]] = {}
    for n in sorted({r.n for r in results}):
        base = next(r for r in results if r.n == n and r.variant == BASELINE)
        out[n] = {}
        for r in results:
            if r.n == n and r.variant != BASELINE:
                out[n][r.variant] = {name: r.median(name) / base.median(name) for name in METRICS if base.median(name)}
    return out


def report_text(results: list[VariantResult], checks: dict, repetitions: int, info: dict) -> str:
    lines = [f"median of {repetitions} sessions per variant and N (fresh process each)",
             f"machine: {describe_machine(info)}", ""]
    header = f"{'N':>7}  {'variant':12}" + "".join(f"{title:>{width}}" for _, title, width, _ in COLUMNS)
    lines.append(header)
    lines.append("-" * len(header))
    for n, by_variant in ratios(results).items():
        for v in (x for x in results if x.n == n):
            cells = []
            for name, _, width, form in COLUMNS:
                value = v.median(name)
                cells.append(f"{value / 1024:>{width}.1f}" if form is None else f"{form.format(value):>{width}}")
            lines.append(f"{n:>7,}  {v.variant:12}" + "".join(cells))
        for variant, r in by_variant.items():
            lines.append(f"{n:>7,}  {variant + '/off':12}"
                         + "".join(f"{r.get(name, float('nan')):>{width}.3f}" for name, _, width, _ in COLUMNS))
        lines.append("")
    lines.append("spans received per exporting session (expected N + 1: N run spans and the session span):")
    for (variant, n), results_ in checks.items():
        if variant == BASELINE:
            continue
        counts = sorted({c["spans"] for c in results_})
        points = sorted({c["metric_points"] for c in results_})
        lines.append(f"  {variant:4} N={n:,}: {len(results_)} sessions (warm-up included), spans "
                     f"{'/'.join(map(str, counts))} of {n + 1}, metric points {'/'.join(map(str, points))}, "
                     "no spill, no failure")
    lines.append("")
    lines.append(f"ratio = variant / off; goal at 10,000 runs: wall <= {GOAL_WALL_RATIO} with export on")
    lines.append("wall/cpu: whole process (receiver not included in cpu); "
                 "finish: end of run loop to end of pytest_sessionfinish (final flush, metrics)")
    return "\n".join(lines)


def report_json(results: list[VariantResult], checks: dict, args: argparse.Namespace, info: dict) -> dict:
    return {
        "benchmark": "otel_overhead",
        "python": info["python"],
        "platform": info["platform"],
        "machine": info,
        "repetitions": args.repetitions,
        "warmup": args.warmup,
        "autoload": args.autoload,
        "goal": {"wall_ratio": GOAL_WALL_RATIO, "at_n": 10000},
        "results": [
            {
                "n": r.n,
                "variant": r.variant,
                "median": {name: r.median(name) for name in METRICS},
                "samples": [asdict(s) for s in r.samples],
                "exported": checks.get((r.variant, r.n), []),
            }
            for r in results
        ],
        "ratios": {str(n): values for n, values in ratios(results).items()},
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_session_arguments(parser, "runs per session")
    parser.add_argument("--grpc", action="store_true", help="also export over OTLP/gRPC to a gRPC receiver")
    parser.add_argument("--no-file", action="store_true", help="skip the --prob-otel-file variant")
    args = parse_session_arguments(parser, argv)
    variants = ("off", "http") + (() if args.no_file else ("file",)) + (("grpc",) if args.grpc else ())
    info = machine(args.python, ("pytest", "opentelemetry-sdk", "opentelemetry-exporter-otlp-proto-http", "grpcio"))
    warn_if_busy(info)
    results, checks = measure(args.runs, variants, args.repetitions, args.warmup, python=args.python,
                              autoload=args.autoload, progress=not args.quiet)
    info["loadavg_end"] = loadavg()
    if args.json:
        print(json.dumps(report_json(results, checks, args, info), indent=2))
    else:
        print(report_text(results, checks, args.repetitions, info))
    return 0


if __name__ == "__main__":
    sys.exit(main())
