"""Scale: many cases with one run each, against plain pytest with as many tests.

For each N (default 10,000 and 50,000) this compares, in fresh processes:

- ``plugin``: one trivial ``bench_*`` function with
  ``@pytest.mark.parametrize("i", range(N))`` and one run per case: N cases,
  N rows in the table, N records and rows in the JSON report;
- ``plain``: one trivial ``test_*`` function with the same parametrization:
  the same N items without the plugin's work.

Where ``overhead.py`` measures the cost per run (one case, N runs, one row),
this measures what grows with the number of *rows*: collection of N cases,
aggregation, the analysis, the table and, with ``--json-report``, the JSON
report. Goal (issue 12, restated by issue 24): at most 1.3 times plain
pytest in wall time and peak RSS at 10,000 and at 50,000 cases, and the cases
between the sizes cost at most 1.3 times what they cost plain pytest (the
increment, printed under the table): everything after the runs is linear.

Each session is ``python -m pytest -q -p no:cacheprovider`` in a temporary
folder with the measuring ``conftest.py`` of ``_measure.py`` (in-session
time and its phases; peak RSS from ``VmHWM``). Repetitions alternate the
order of the variants after one untimed warm-up per variant.

Usage::

    .venv/bin/python benchmarks/scale.py                    # N = 10000 50000, 3 repetitions
    .venv/bin/python benchmarks/scale.py -n 10000 -r 5
    .venv/bin/python benchmarks/scale.py --json-report      # the plugin side also writes --prob-json
    .venv/bin/python benchmarks/scale.py --json > scale.json

It asserts nothing: it measures.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import textwrap
from dataclasses import asdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _measure import (  # noqa: E402 - shared helpers next to this script
    METRICS,
    VariantResult,
    add_session_arguments,
    describe_machine,
    loadavg,
    machine,
    order,
    parse_session_arguments,
    run_session,
    warn_if_busy,
    write_folder,
)

CASES_FILE = textwrap.dedent(
    """
    import pytest


    @pytest.mark.parametrize("i", range({n}))
    def {prefix}_case(i):
        pass
    """
)

VARIANTS = ("plugin", "plain")
GOAL = 1.3


def prepare(root: Path, n: int, json_report: bool) -> dict[str, tuple[Path, list[str]]]:
    """One folder per variant; variant -> (folder, pytest arguments)."""
    plugin_args = ["--prob-runs=1", "bench_scale.py"]
    if json_report:
        plugin_args.insert(0, "--prob-json=report.json")
    return {
        "plugin": (
            write_folder(root / f"plugin-{n}", {"bench_scale.py": CASES_FILE.format(n=n, prefix="bench")}),
            plugin_args,
        ),
        "plain": (
            write_folder(root / f"plain-{n}", {"test_scale.py": CASES_FILE.format(n=n, prefix="test")}),
            ["test_scale.py"],
        ),
    }


def measure(args: argparse.Namespace) -> list[VariantResult]:
    results = []
    with tempfile.TemporaryDirectory(prefix="prob-scale-") as temp:
        root = Path(temp)
        for n in args.runs:
            setups = prepare(root, n, args.json_report)
            by_variant = {variant: VariantResult(variant, n) for variant in VARIANTS}
            for variant in VARIANTS:
                for _ in range(args.warmup):
                    run_session(*setups[variant], python=args.python, autoload=args.autoload, expected_items=n)
            for repetition in range(args.repetitions):
                for variant in order(VARIANTS, repetition):
                    sample = run_session(*setups[variant], python=args.python, autoload=args.autoload, expected_items=n)
                    by_variant[variant].samples.append(sample)
                    if not args.quiet:
                        print(
                            f"  N={n:,} #{repetition + 1} {variant:6} wall {sample.wall:.2f}s "
                            f"collect {sample.collect:.2f}s run {sample.run:.2f}s finish {sample.finish:.2f}s "
                            f"rss {sample.maxrss_kib / 1024:.0f} MiB",
                            file=sys.stderr,
                        )
            results.extend(by_variant.values())
    return results


COLUMNS = (
    ("wall", "wall s", 9, "{:.2f}"),
    ("cpu", "cpu s", 8, "{:.2f}"),
    ("collect", "collect s", 11, "{:.2f}"),
    ("run", "run s", 8, "{:.2f}"),
    ("finish", "finish s", 10, "{:.2f}"),
    ("maxrss_kib", "peak RSS MiB", 14, None),
)


def ratios(results: list[VariantResult]) -> dict[int, dict[str, float]]:
    out = {}
    for n in sorted({r.n for r in results}):
        plugin = next(r for r in results if r.n == n and r.variant == "plugin")
        plain = next(r for r in results if r.n == n and r.variant == "plain")
        out[n] = {name: plugin.median(name) / plain.median(name) for name in METRICS if plain.median(name)}
    return out


def increments(results: list[VariantResult]) -> dict[str, dict[str, float]]:
    """Between consecutive sizes N1 < N2: what the N2 - N1 more cases cost the plugin over what they
    cost plain pytest, (plugin(N2) - plugin(N1)) / (plain(N2) - plain(N1)), and the plugin's extra cost
    per case, (plugin - plain)(N2) - (plugin - plain)(N1) over N2 - N1 (ms or KiB). Linear work gives
    the same per-case figures at every step; a ratio at N that rises with N while the increment
    ratio stays put is fixed start-up cost weighing less, not growth."""
    sizes = sorted({r.n for r in results})
    out = {}
    for small, large in zip(sizes, sizes[1:], strict=False):

        def median(n: int, variant: str, name: str) -> float:
            return next(r for r in results if r.n == n and r.variant == variant).median(name)

        step = {}
        for name, unit in (("wall", 1000.0), ("maxrss_kib", 1.0)):
            plugin = median(large, "plugin", name) - median(small, "plugin", name)
            plain = median(large, "plain", name) - median(small, "plain", name)
            step[f"{name}_ratio"] = plugin / plain if plain else float("nan")
            step[f"{name}_extra_per_case"] = (plugin - plain) * unit / (large - small)
        out[f"{small}-{large}"] = step
    return out


def report_text(results: list[VariantResult], args: argparse.Namespace, info: dict) -> str:
    lines = [
        f"median of {args.repetitions} sessions per variant and N (fresh process each), 1 run per case"
        + (", plugin side writes --prob-json" if args.json_report else ""),
        f"machine: {describe_machine(info)}",
        "",
    ]
    header = f"{'cases':>7}  {'variant':8}" + "".join(f"{title:>{width}}" for _, title, width, _ in COLUMNS)
    lines += [header, "-" * len(header)]
    for n, r in ratios(results).items():
        for variant in VARIANTS:
            v = next(x for x in results if x.n == n and x.variant == variant)
            cells = []
            for name, _, width, form in COLUMNS:
                value = v.median(name)
                cells.append(f"{value / 1024:>{width}.1f}" if form is None else f"{form.format(value):>{width}}")
            lines.append(f"{n:>7,}  {variant:8}" + "".join(cells))
        lines.append(
            f"{n:>7,}  {'ratio':8}"
            + "".join(f"{r.get(name, float('nan')):>{width}.2f}" for name, _, width, _ in COLUMNS)
        )
        lines.append("")
    for span, step in increments(results).items():
        small, large = (int(n) for n in span.split("-"))
        lines.append(
            f"{small:,} -> {large:,} cases: the {large - small:,} more cost plugin/plain "
            f"{step['wall_ratio']:.2f} in wall time ({step['wall_extra_per_case']:+.3f} ms per case) and "
            f"{step['maxrss_kib_ratio']:.2f} in peak RSS ({step['maxrss_kib_extra_per_case']:+.2f} KiB per case)"
        )
    lines.append(
        f"ratio = plugin / plain; goal: wall and peak RSS <= {GOAL} at every N, and the cases between "
        f"two sizes at most {GOAL} times what they cost plain pytest"
    )
    lines.append("finish: end of the run loop to the end of pytest_sessionfinish (table and JSON included)")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_session_arguments(parser, "cases per session")
    parser.add_argument("--json-report", action="store_true", help="the plugin side also writes --prob-json")
    parser.set_defaults(runs=[10000, 50000], repetitions=3)
    args = parse_session_arguments(parser, argv)
    info = machine(args.python)
    warn_if_busy(info)
    results = measure(args)
    info["loadavg_end"] = loadavg()
    if args.json:
        print(
            json.dumps(
                {
                    "benchmark": "scale",
                    "machine": info,
                    "repetitions": args.repetitions,
                    "json_report": args.json_report,
                    "goal": {"wall_ratio": GOAL, "maxrss_ratio": GOAL, "increment_ratio": GOAL},
                    "results": [
                        {
                            "n": r.n,
                            "variant": r.variant,
                            "median": {m: r.median(m) for m in METRICS},
                            "samples": [asdict(s) for s in r.samples],
                        }
                        for r in results
                    ],
                    "ratios": {str(n): v for n, v in ratios(results).items()},
                    "increments": increments(results),
                },
                indent=2,
            )
        )
    else:
        print(report_text(results, args, info))
    return 0


if __name__ == "__main__":
    sys.exit(main())
