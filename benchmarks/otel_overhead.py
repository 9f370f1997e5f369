"""Cost of OpenTelemetry export: the same session with export off and on, side by side.

Workloads (issue 9), each in fresh processes, every variant once per
repetition in a rotating order, medians reported:

- ``sleep``: ``def bench_sleep(): time.sleep(0.01)`` (a fast mocked model
  call) with ``--prob-runs=2000``; goal on/off <= 1.03 in wall time;
- ``trivial``: ``def bench_trivial(): pass`` with ``--prob-runs=N`` (3,000 and
  10,000); goal on/off <= 1.60 in wall time, and <= the ratio of
  pytest-opentelemetry on N plain tests; peak RSS with export on at most export
  off plus the import footprint (issue 24, replacing 1.15; ``otel_floor.py`` measures it);
- ``pytest-opentelemetry``: N plain parametrized tests with that plugin off
  and on, exporting to the same receiver (its own, SDK-based export).

"on" exports to a real OTLP/gRPC receiver (``tests/otlp_receiver.py``) on
127.0.0.1 in this process. After every exporting session the script checks
that the spans arrived (N + 1 for the plugin) and that no export failed.

pytest-opentelemetry is a benchmark-only dependency: install it in a
separate environment, never in the test one (it is a pytest plugin and would
load in every test session)::

    python3 -m venv .venv-bench && .venv-bench/bin/pip install -e . pytest-opentelemetry grpcio
    .venv-bench/bin/python benchmarks/otel_overhead.py -r 3
    .venv-bench/bin/python benchmarks/otel_overhead.py -r 5 --sizes 10000 --json > otel.json
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import statistics
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from _measure import BENCH_FILE, describe_machine, loadavg, machine, run_session_output, write_folder  # noqa: E402

RECEIVER_PATH = HERE.parent / "tests" / "otlp_receiver.py"
SLEEP_FILE = "import time\n\n\ndef bench_sleep():\n    time.sleep(0.01)\n"
PLAIN_FILE = "import pytest\n\n\n@pytest.mark.parametrize('i', range({n}))\ndef test_plain(i):\n    pass\n"
PYTEST_OTEL_PLUGIN = "pytest_opentelemetry.plugin"


def load_receiver():
    spec = importlib.util.spec_from_file_location("prob_bench_otlp_receiver", RECEIVER_PATH)
    module = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    sys.modules[spec.name] = module  # type: ignore[union-attr]
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    return module


def sessions(
    sizes: list[int], endpoint: str, protocol: str = "grpc"
) -> list[tuple[str, str, int, dict, list[str], dict]]:
    """(workload, variant, runs, files, args, env) of every session to time."""
    grpc = {"OTEL_EXPORTER_OTLP_ENDPOINT": endpoint, "OTEL_EXPORTER_OTLP_PROTOCOL": protocol}
    ours_on = [f"--prob-otel-endpoint={endpoint}", f"--prob-otel-protocol={protocol}"]
    out = []
    for variant, args, env in (("off", ["--prob-otel=off"], {}), ("on", ours_on, {})):
        out.append(("sleep", variant, 2000, {"bench_sleep.py": SLEEP_FILE}, ["--prob-runs=2000", *args], env))
    for n in sizes:
        for variant, args, env in (("off", ["--prob-otel=off"], {}), ("on", ours_on, {})):
            out.append(("trivial", variant, n, {"bench_trivial.py": BENCH_FILE}, [f"--prob-runs={n}", *args], env))
        plain = {"test_plain.py": PLAIN_FILE.format(n=n)}
        out.append(("pytest-opentelemetry", "off", n, plain, ["--prob-otel=off"], {}))
        out.append(
            (
                "pytest-opentelemetry",
                "on",
                n,
                plain,
                ["--prob-otel=off", "-p", PYTEST_OTEL_PLUGIN, "--export-traces"],
                grpc,
            )
        )
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("-r", "--repetitions", type=int, default=3)
    parser.add_argument("--sizes", type=int, nargs="+", default=[3000, 10000])
    parser.add_argument("--workloads", nargs="+", default=["sleep", "trivial", "pytest-opentelemetry"])
    parser.add_argument(
        "--protocol",
        choices=("grpc", "http/protobuf"),
        default="grpc",
        help="OTLP protocol of the receiver and of both plugins' export (default grpc, as issue 9 asks)",
    )
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    receiver_module = load_receiver()
    samples: dict[tuple[str, str, int], list] = {}
    load_start = loadavg()
    receiver = "grpc" if args.protocol == "grpc" else "http"
    with receiver_module.OtlpReceiver(receiver) as rx, tempfile.TemporaryDirectory(prefix="prob-otel-bench-") as tmp:
        plan = [s for s in sessions(args.sizes, rx.endpoint, args.protocol) if s[0] in args.workloads]
        for repetition in range(args.repetitions + 1):  # the first round is an untimed warm-up
            shift = repetition % len(plan)
            for workload, variant, n, files, session_args, env in plan[shift:] + plan[:shift]:
                folder = write_folder(Path(tmp) / f"{workload}-{n}-{variant}-{repetition}", files)
                rx.clear()
                sample, text = run_session_output(
                    folder, session_args, python=sys.executable, autoload=False, expected_items=n, extra_env=env
                )
                if variant == "on":
                    spans = len(rx.spans())
                    wanted = n + 1 if workload != "pytest-opentelemetry" else n
                    if spans < wanted or "OpenTelemetry:" in text:
                        raise SystemExit(f"{workload} {n}: {spans} spans arrived, wanted {wanted}\n{text[-2000:]}")
                if repetition:
                    samples.setdefault((workload, variant, n), []).append(sample)
                print(
                    f"  {workload:22} {variant:3} N={n:<6} wall {sample.wall:6.2f} s  rss {sample.maxrss_kib / 1024:6.1f} MiB",
                    file=sys.stderr,
                )
    packages = ("pytest", "opentelemetry-sdk", "pytest-opentelemetry")
    result: dict = {
        "machine": machine(sys.executable, packages),
        "load": [load_start, loadavg()],
        "repetitions": args.repetitions,
        "protocol": args.protocol,
        "results": [],
    }
    for (workload, variant, n), values in samples.items():
        if variant != "on":
            continue
        off = samples[(workload, "off", n)]
        wall_on, wall_off = statistics.median(s.wall for s in values), statistics.median(s.wall for s in off)
        rss_on, rss_off = statistics.median(s.maxrss_kib for s in values), statistics.median(s.maxrss_kib for s in off)
        result["results"].append({
            "workload": workload, "runs": n, "wall_off_s": round(wall_off, 3), "wall_on_s": round(wall_on, 3),
            "wall_ratio": round(wall_on / wall_off, 3), "rss_off_mib": round(rss_off / 1024, 1),
            "rss_on_mib": round(rss_on / 1024, 1), "rss_ratio": round(rss_on / rss_off, 3),
        })  # fmt: skip
    if args.json:
        print(json.dumps(result, indent=2))
        return 0
    print(describe_machine(result["machine"]))
    print(f"load average at start / end: {result['load']}; protocol {args.protocol}")
    print(
        f"{'workload':22} {'runs':>6} {'off s':>8} {'on s':>8} {'on/off':>7} {'RSS off':>8} {'RSS on':>8} {'RSS ratio':>9}"
    )
    for row in result["results"]:
        print(
            f"{row['workload']:22} {row['runs']:>6} {row['wall_off_s']:>8.2f} {row['wall_on_s']:>8.2f} "
            f"{row['wall_ratio']:>7.3f} {row['rss_off_mib']:>8.1f} {row['rss_on_mib']:>8.1f} {row['rss_ratio']:>9.3f}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
