"""What export costs a sleeping run, as the slope between two session sizes (issue 24).

A ratio of whole sessions mixes the export's once-per-session cost
(``otel_fixed.py``) with its per-run cost. This separates them: for runs that
sleep ``--sleep-ms`` (10 by default), it times sessions of ``--small`` and
``--large`` runs (100 and 500) and takes the slope, the cost of one more run,
for three variants side by side in each round, against a real receiver on
127.0.0.1 (``tests/otlp_receiver.py``):

- **off**: export off;
- **on**: export on (the SDK's batch processor sends every 5 s, and at 512 spans);
- **on, one batch**: export on with ``OTEL_BSP_SCHEDULE_DELAY=600000``, so no
  batch is sent before the session's end (what the main thread pays while the
  export thread encodes and sends, left out).

The marginal per-run cost of export is the slope of *on* minus that of *off*.
Slopes are taken within a round (the two sizes run back to back) and the
medians of the rounds are printed. It asserts nothing: it measures.

Usage::

    .venv/bin/python benchmarks/otel_slope.py                 # HTTP and gRPC, 3 rounds
    .venv/bin/python benchmarks/otel_slope.py -r 5 --protocols http --sleep-ms 100 --small 20 --large 100
    .venv/bin/python benchmarks/otel_slope.py --json > slope.json
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "tests"))
from _measure import child_env, describe_machine, loadavg, machine, order, paired_median, warn_if_busy  # noqa: E402
from otel_fixed import timed  # noqa: E402
from otlp_receiver import OtlpReceiver  # noqa: E402

VARIANTS = ("off", "on", "on_one_batch")


def measure(
    protocols: list[str], rounds: int, sizes: tuple[int, int], sleep_ms: float, python: str
) -> dict[str, dict[str, list[float]]]:
    """Per protocol, per variant: the slope of each round, in ms per run."""
    small, large = sizes
    with tempfile.TemporaryDirectory(prefix="prob-slope-") as temp:
        folder = Path(temp)
        (folder / "pytest.ini").write_text("[pytest]\n")
        (folder / "bench_sleep.py").write_text(
            f"import time\n\n\ndef bench_sleep():\n    time.sleep({sleep_ms / 1000!r})\n"
        )
        base = child_env(folder / "pycache", autoload=False)

        def session(runs: int) -> list[str]:
            return [
                python,
                "-m",
                "pytest",
                "-q",
                "-p",
                "no:cacheprovider",
                "-p",
                "pytest_probability.plugin",
                f"--prob-runs={runs}",
                "bench_sleep.py",
            ]

        slopes: dict[str, dict[str, list[float]]] = {}
        for protocol in protocols:
            with OtlpReceiver(protocol) as receiver:
                on = dict(
                    base,
                    OTEL_EXPORTER_OTLP_ENDPOINT=receiver.endpoint,
                    OTEL_EXPORTER_OTLP_PROTOCOL="grpc" if protocol == "grpc" else "http/protobuf",
                )
                envs = {"off": base, "on": on, "on_one_batch": dict(on, OTEL_BSP_SCHEDULE_DELAY="600000")}
                for env in envs.values():  # warm-up: bytecode, page cache
                    timed(session(small), folder, env)
                got: dict[str, list[float]] = {name: [] for name in VARIANTS}
                for index in range(rounds):
                    for name in order(VARIANTS, index):
                        low = timed(session(small), folder, envs[name])[0]
                        high = timed(session(large), folder, envs[name])[0]
                        got[name].append((high - low) / (large - small) * 1000)
                    receiver.clear()
                slopes[protocol] = got
        return slopes


def summary(slopes: dict[str, dict[str, list[float]]]) -> dict[str, dict[str, float]]:
    out = {}
    for protocol, got in slopes.items():
        row = {f"{name}_ms": round(statistics.median(got[name]), 3) for name in VARIANTS}
        row["marginal_ms"] = round(paired_median(got["on"], got["off"]), 3)
        row["marginal_one_batch_ms"] = round(paired_median(got["on_one_batch"], got["off"]), 3)
        out[protocol] = row
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("-r", "--rounds", type=int, default=3)
    parser.add_argument("--small", type=int, default=100, help="runs of the smaller session (default 100)")
    parser.add_argument("--large", type=int, default=500, help="runs of the larger session (default 500)")
    parser.add_argument("--sleep-ms", type=float, default=10.0, help="what each run sleeps (default 10 ms)")
    parser.add_argument("--protocols", nargs="+", choices=["http", "grpc"], default=["http", "grpc"])
    parser.add_argument("--python", default=sys.executable)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    if not 0 < args.small < args.large:
        parser.error("--small and --large must be 0 < small < large")
    info = machine(args.python, ("pytest", "opentelemetry-sdk", "opentelemetry-exporter-otlp-proto-grpc"))
    warn_if_busy(info)
    slopes = measure(args.protocols, args.rounds, (args.small, args.large), args.sleep_ms, args.python)
    info["loadavg_end"] = loadavg()
    rows = summary(slopes)
    if args.json:
        print(
            json.dumps(
                {
                    "benchmark": "otel_slope",
                    "machine": info,
                    "rounds": args.rounds,
                    "small": args.small,
                    "large": args.large,
                    "sleep_ms": args.sleep_ms,
                    "summary": rows,
                    "slopes_ms": slopes,
                },
                indent=2,
            )
        )
        return 0
    print(f"machine: {describe_machine(info)}")
    print(
        f"{args.rounds} rounds; runs of {args.sleep_ms:g} ms; slope between {args.small} and {args.large} runs, "
        "ms per run (medians of the rounds)"
    )
    print(f"{'protocol':9} {'off':>8} {'on':>8} {'on, one batch':>14} {'on - off':>9} {'one batch - off':>16}")
    for protocol, row in rows.items():
        print(
            f"{protocol:9} {row['off_ms']:>8.3f} {row['on_ms']:>8.3f} {row['on_one_batch_ms']:>14.3f} "
            f"{row['marginal_ms']:>9.3f} {row['marginal_one_batch_ms']:>16.3f}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
