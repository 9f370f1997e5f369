"""The export's marginal cost per run of two builds of the plugin, in the same rounds (issue 33's "re-measured beside").

``otel_floor.py`` measures one build against the bare SDK. SessionComparisons two builds with two runs of it
compares two machine loads as much as two builds; this runs both in every round instead. Each
``--python`` is an interpreter with pytest and one build of the plugin installed (a virtualenv of an
older commit, ``pip install -e`` of its worktree); every round runs, for each build, the plugin's
sessions export off, on over OTLP/HTTP and on over OTLP/gRPC at the two sizes, and the bare SDK's
loop once for reference, in an order rotated each round, after an untimed warm-up of each kind.
Sessions, receivers and checks are ``otel_floor.py``'s own (``_run``: the same bench files and
options, every span of every exporting session must arrive). Per build, protocol and outcome: the
median over the rounds of ``((on(N2) - on(N1)) - (off(N2) - off(N1))) / (N2 - N1)``, wall and CPU,
and the median of the per-round difference between the builds.

    .venv/bin/python benchmarks/otel_floor_ab.py --python before=/tmp/venv-before/bin/python \\
        --python after=.venv/bin/python --sizes 1000 3000 -r 5
    .venv/bin/python benchmarks/otel_floor_ab.py --python a=A/bin/python --python b=B/bin/python --outcomes pass -r 6 --json
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import otel_floor as floor  # noqa: E402
from _measure import describe_machine, loadavg, machine, warn_if_busy  # noqa: E402

PROTOCOLS = ("http", "grpc")


def _plan(builds: list[str], n1: int, n2: int, outcomes: list[str]) -> list[tuple[str, tuple]]:
    plan: list[tuple[str, tuple]] = []
    for outcome in outcomes:
        for n in (n1, n2):
            for build in builds:
                plan += [(build, ("floor", variant, n, outcome)) for variant in ("off", "on-http", "on-grpc")]
            plan += [("bare", ("floor", f"bare-{name}", n, outcome)) for name in PROTOCOLS]
    return plan


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--python",
        action="append",
        required=True,
        metavar="NAME=PYTHON",
        help="a build: its name and an interpreter with it installed (give two or more)",
    )
    parser.add_argument("-r", "--repetitions", type=int, default=5, help="timed rounds (default 5)")
    parser.add_argument("--sizes", type=int, nargs=2, default=[1000, 3000], metavar=("N1", "N2"))
    parser.add_argument("--outcomes", nargs="+", choices=["pass", "fail"], default=["pass", "fail"])
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    builds = {}
    for item in args.python:  # the sessions run in temporary folders: a relative path is made absolute
        name, _, python = item.partition("=")
        builds[name] = str(Path(python).absolute()) if "/" in python else python
    n1, n2 = args.sizes
    info = machine(next(iter(builds.values())), ("pytest", "opentelemetry-sdk", "grpcio"))
    warn_if_busy(info)
    receiver_module = floor.load_receiver()
    plan = _plan(list(builds), n1, n2, args.outcomes)
    samples: dict[str, list[tuple[float, float, int]]] = {}
    loads: list[tuple[str, list[float] | None]] = []
    with tempfile.TemporaryDirectory(prefix="prob-otel-floor-ab-") as tmp:
        folders = {name: Path(tmp) / name for name in [*builds, "bare"]}
        for folder in folders.values():
            folder.mkdir()
        receivers = {name: receiver_module.OtlpReceiver(name).start() for name in PROTOCOLS}
        try:
            warm = [entry for entry in plan if entry[1][2] == n1]
            for repetition, sessions in enumerate([warm] + [plan] * args.repetitions):
                loads.append((time.strftime("%H:%M:%S"), loadavg()))
                shift = (repetition * 7) % len(sessions)
                for build, entry in sessions[shift:] + sessions[:shift]:
                    python = builds.get(build, next(iter(builds.values())))
                    sample = floor._run(entry, receivers, folders[build], repetition, python)
                    if repetition:
                        samples.setdefault("|".join((build, *map(str, entry[1:]))), []).append(sample)
                    print(
                        f"  round {repetition} {build:8} {' '.join(map(str, entry)):34} wall {sample[0]:7.3f} s "
                        f"cpu {sample[1]:7.3f} s",
                        file=sys.stderr,
                    )
        finally:
            for rx in receivers.values():
                rx.stop()
    loads.append((time.strftime("%H:%M:%S"), loadavg()))
    result = {
        "machine": info,
        "sizes": [n1, n2],
        "repetitions": args.repetitions,
        "loads": loads,
        "rows": _rows(builds, samples, n1, n2, args.outcomes),
        "samples": samples,
    }
    if args.json:
        print(json.dumps(result, indent=2))
        return 0
    print(describe_machine(info))
    shown = ", ".join(f"{at} {load[0] if load else '?'}" for at, load in loads)
    print(f"1-minute load average at each round's start, and at the end: {shown}")
    print(f"{args.repetitions} rounds; marginal cost per run between {n1} and {n2} trivial runs, us")
    print(
        f"{'protocol':8} {'outcome':7} {'build':8} {'wall':>7} {'cpu':>7} {'bare wall':>9} {'bare cpu':>8} "
        f"{'wall - first':>12} {'cpu - first':>11}"
    )
    for row in result["rows"]:
        print(
            f"{row['protocol']:8} {row['outcome']:7} {row['build']:8} {row['wall_us']:7.1f} {row['cpu_us']:7.1f} "
            f"{row['bare_wall_us']:9.1f} {row['bare_cpu_us']:8.1f} {row['wall_minus_first_us']:+12.1f} "
            f"{row['cpu_minus_first_us']:+11.1f}"
        )
    print("wall - first, cpu - first: the median over the rounds of this build's figure minus the first build's")
    return 0


def _rows(builds: dict[str, str], samples: dict, n1: int, n2: int, outcomes: list[str]) -> list[dict]:
    def slope(build: str, variant: str, outcome: str, index: int) -> list[float]:
        small = [s[index] for s in samples[f"{build}|{variant}|{n1}|{outcome}"]]
        large = [s[index] for s in samples[f"{build}|{variant}|{n2}|{outcome}"]]
        return [(b - a) / (n2 - n1) * 1e6 for a, b in zip(small, large, strict=False)]

    def plugin(build: str, name: str, outcome: str, index: int) -> list[float]:
        return [
            on - off
            for on, off in zip(
                slope(build, f"on-{name}", outcome, index), slope(build, "off", outcome, index), strict=False
            )
        ]

    rows = []
    first = next(iter(builds))
    for outcome in outcomes:
        for name in PROTOCOLS:
            for build in builds:
                figures = {kind: plugin(build, name, outcome, index) for index, kind in enumerate(("wall", "cpu"))}
                base = {kind: plugin(first, name, outcome, index) for index, kind in enumerate(("wall", "cpu"))}
                rows.append({
                    "protocol": name, "outcome": outcome, "build": build,
                    "wall_us": round(statistics.median(figures["wall"]), 1),
                    "cpu_us": round(statistics.median(figures["cpu"]), 1),
                    "bare_wall_us": round(statistics.median(slope("bare", f"bare-{name}", outcome, 0)), 1),
                    "bare_cpu_us": round(statistics.median(slope("bare", f"bare-{name}", outcome, 1)), 1),
                    "wall_minus_first_us": round(statistics.median(a - b for a, b in zip(figures["wall"], base["wall"], strict=False)), 1),
                    "cpu_minus_first_us": round(statistics.median(a - b for a, b in zip(figures["cpu"], base["cpu"], strict=False)), 1),
                    "wall_rounds_us": [round(x) for x in figures["wall"]],
                })  # fmt: skip
    return rows


if __name__ == "__main__":
    sys.exit(main())
