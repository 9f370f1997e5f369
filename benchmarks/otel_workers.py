"""Under pytest-xdist: the export through the one link against each worker exporting its own spans.

Issue 33 asks to choose, by measurement, between the two ways a worker's telemetry can reach the
collector: the plugin's (a worker's SDK processors export into its ``Outbox``, which ships the encoded
requests to the controller on each run's teardown report, and the controller's guards send them), and
each worker exporting its own spans with the SDK's ``BatchSpanProcessor`` and OTLP exporter. The second is
measured at its floor: the bare SDK in every worker (``otel_floor.py``'s ``pytestsdk`` plugin, the same
spans and metric points made from pytest's hooks), in a session whose plugin export is off. An
implementation of per-worker export inside the plugin would cost at least that.

Side by side in one run, under ``-n W`` (default 2), against one real receiver on 127.0.0.1
(``tests/otlp_receiver.py``), in an order rotated each round, after an untimed warm-up of each kind:

- ``off``: the plugin, export off;
- ``link``: the plugin, export on (the link);
- ``perworker``: the plugin, export off, and the bare SDK exporting in each process.

Per variant: the **marginal cost per run** over sessions of N1 and N2 trivial passing runs, export minus
``off`` (``((v(N2) - v(N1)) - (off(N2) - off(N1))) / (N2 - N1)``), wall and CPU of the whole process tree
(``os.wait4`` of the controller, which reaps its workers: user + system of all of them), paired within
each round, median over the rounds; and **sleeping runs** (10 ms by default, the IO-bound case): the
session's wall over ``off``'s. Every span of every exporting session must arrive.

    .venv/bin/python benchmarks/otel_workers.py                        # -n 2, 5 rounds (~4 min on 2 CPUs)
    .venv/bin/python benchmarks/otel_workers.py -n 4 --protocol grpc -r 7 --json
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
import otel_floor as floor  # noqa: E402
from _measure import RSS_ENV, TIMING_ENV, child_env, describe_machine, loadavg, machine, warn_if_busy, write_folder  # noqa: E402
from otel_overhead import load_receiver  # noqa: E402

VARIANTS = ("off", "link", "perworker")


def _session(
    variant: str, n: int, kind: str, rx, workers: int, protocol: str, tmp: Path, tag: str, python: str, sleep_ms: int
) -> tuple[float, float]:
    rx.clear()
    files = (
        {"bench_sleep.py": floor.SLEEP_FILE.format(seconds=sleep_ms / 1000)}
        if kind == "sleep"
        else {"bench_pass.py": floor.PASS_FILE}
    )
    args = ["-p", "xdist", f"-n={workers}", f"--prob-runs={n}", "--tb=no", f"-o=prob_suite={floor.SUITE}"]
    if variant == "link":
        args += [f"--prob-otel-endpoint={rx.endpoint}", f"--prob-otel-protocol={floor.PROTOCOLS[protocol]}"]
    else:
        args.append("--prob-otel=off")
    if variant == "perworker":
        files["floor_pytest_sdk.py"] = floor.PYTEST_SDK.format(
            protocol=protocol, endpoint=rx.endpoint, suite=floor.SUITE, queue=max(2048, n + 16)
        )
        args += ["-p", "floor_pytest_sdk"]
    folder = write_folder(tmp / f"{kind}-{variant}-{n}-{tag}", files)
    wall, cpu, text = _run(folder, args, python)
    if f"{n} passed" not in text:  # the controller collects no item itself: its summary line counts the runs
        raise SystemExit(f"{variant} {n}: expected {n} passed\n{text[-2000:]}")
    if variant == "link" and "OpenTelemetry:" in text:
        raise SystemExit(f"{variant} {n}: the export failed\n{text[-2000:]}")
    if variant != "off":
        receiver = sys.modules["prob_bench_otlp_receiver"]
        receiver.wait_for(
            lambda: floor.spans_received(rx) >= n + 1,
            timeout=30,
            message=f"{variant} {n}: {floor.spans_received(rx)} spans of {n + 1} arrived",
        )
    return wall, cpu


def _run(folder: Path, args: list[str], python: str) -> tuple[float, float, str]:
    """Wall, CPU (user + system of the controller and the workers it reaped) and output of one session."""
    command = [python, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "pytest_probability.plugin", *args]
    env = child_env(folder.parent / "pycache", autoload=False)
    env[TIMING_ENV], env[RSS_ENV] = str(folder / "timing.json"), str(folder / "rss.json")  # write_folder's conftest
    with tempfile.TemporaryFile() as output:
        start = time.perf_counter()
        process = subprocess.Popen(command, cwd=folder, env=env, stdout=output, stderr=subprocess.STDOUT)
        _, status, usage = os.wait4(process.pid, 0)  # the child's usage and its reaped children's (the workers)
        wall = time.perf_counter() - start
        output.seek(0)
        text = output.read().decode(errors="replace")
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"session failed: {' '.join(command)}\n{text[-3000:]}")
    return wall, usage.ru_utime + usage.ru_stime, text


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("-r", "--repetitions", type=int, default=5, help="timed rounds (default 5)")
    parser.add_argument("-n", "--workers", type=int, default=2, help="xdist workers (default 2)")
    parser.add_argument("--sizes", type=int, nargs=2, default=[1000, 3000], metavar=("N1", "N2"))
    parser.add_argument("--protocol", choices=sorted(floor.PROTOCOLS), default="http")
    parser.add_argument("--sleep", type=int, default=10, metavar="MS", help="sleeping runs' length (default 10 ms)")
    parser.add_argument("--sleep-runs", type=int, default=400, help="runs per sleeping session (default 400)")
    parser.add_argument("--python", default=sys.executable, help="interpreter with pytest, xdist and the plugin")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    n1, n2 = args.sizes
    load_receiver()
    receiver_module = sys.modules["prob_bench_otlp_receiver"]
    info = machine(args.python, ("pytest", "pytest-xdist", "opentelemetry-sdk", "grpcio"))
    warn_if_busy(info)
    plan = [(v, n, "floor") for n in (n1, n2) for v in VARIANTS] + [(v, args.sleep_runs, "sleep") for v in VARIANTS]
    samples: dict[tuple, list[tuple[float, float]]] = {}
    starts = []
    with tempfile.TemporaryDirectory(prefix="prob-otel-workers-") as tmp:
        rx = receiver_module.OtlpReceiver(args.protocol).start()
        try:
            warm = [entry for entry in plan if entry[1] in (n1, args.sleep_runs)]
            for repetition, sessions in enumerate([warm] + [plan] * args.repetitions):
                starts.append(loadavg())
                shift = (repetition * 2) % len(sessions)
                for entry in sessions[shift:] + sessions[:shift]:
                    variant, n, kind = entry
                    sample = _session(
                        variant,
                        n,
                        kind,
                        rx,
                        args.workers,
                        args.protocol,
                        Path(tmp),
                        str(repetition),
                        args.python,
                        args.sleep,
                    )
                    if repetition:
                        samples.setdefault(entry, []).append(sample)
                    print(
                        f"  round {repetition} {kind:5} {variant:9} {n:5}  wall {sample[0]:7.3f} s cpu {sample[1]:7.3f} s",
                        file=sys.stderr,
                    )
        finally:
            rx.stop()
    info["loadavg_end"] = loadavg()
    info["loadavg_rounds"] = starts

    def slope(variant: str, index: int) -> list[float]:
        a, b = samples[(variant, n1, "floor")], samples[(variant, n2, "floor")]
        return [(y[index] - x[index]) / (n2 - n1) * 1e6 for x, y in zip(a, b, strict=False)]

    result: dict = {
        "workers": args.workers,
        "protocol": args.protocol,
        "sizes": [n1, n2],
        "repetitions": args.repetitions,
        "machine": info,
        "marginal": {},
        "sleep": {},
    }
    for variant in ("link", "perworker"):
        wall = [v - o for v, o in zip(slope(variant, 0), slope("off", 0), strict=False)]
        cpu = [v - o for v, o in zip(slope(variant, 1), slope("off", 1), strict=False)]
        result["marginal"][variant] = {
            "wall_us": round(statistics.median(wall), 1),
            "cpu_us": round(statistics.median(cpu), 1),
            "wall_rounds_us": [round(x, 1) for x in wall],
            "cpu_rounds_us": [round(x, 1) for x in cpu],
        }
    link_cpu, worker_cpu = (result["marginal"][v]["cpu_rounds_us"] for v in ("link", "perworker"))
    result["marginal"]["link_minus_perworker_cpu_us"] = round(
        statistics.median(a - b for a, b in zip(link_cpu, worker_cpu, strict=False)), 1
    )
    off = [s[0] for s in samples[("off", args.sleep_runs, "sleep")]]
    for variant in ("link", "perworker"):
        on = [s[0] for s in samples[(variant, args.sleep_runs, "sleep")]]
        result["sleep"][variant] = {
            "ms": args.sleep,
            "runs": args.sleep_runs,
            "off_s": round(statistics.median(off), 3),
            "on_s": round(statistics.median(on), 3),
            "ratio": round(statistics.median(a / b for a, b in zip(on, off, strict=False)), 4),
        }
    if args.json:
        print(json.dumps(result, indent=2))
        return 0
    print(describe_machine(info))
    print(
        f"-n {args.workers}, OTLP/{args.protocol}, {args.repetitions} rounds; marginal cost per exported run "
        f"between {n1} and {n2} trivial runs (minus export off), us, median over the rounds"
    )
    for variant in ("link", "perworker"):
        row = result["marginal"][variant]
        print(
            f"  {variant:9}  wall {row['wall_us']:7.1f}  cpu {row['cpu_us']:7.1f}   cpu rounds {row['cpu_rounds_us']}"
        )
    print(f"  link - perworker, cpu (paired): {result['marginal']['link_minus_perworker_cpu_us']:+.1f}")
    print(f"{args.sleep_runs} runs of {args.sleep} ms: session wall over export off")
    for variant in ("link", "perworker"):
        row = result["sleep"][variant]
        print(f"  {variant:9}  {row['on_s']:.3f} s / {row['off_s']:.3f} s = {row['ratio']:.4f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
