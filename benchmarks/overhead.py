"""Overhead of pytest-probability per run, against plain parametrized tests.

For each N (default 1,000 and 10,000) this compares, in fresh processes:

- ``plugin``: one trivial ``bench_*`` function run ``--prob-runs=N`` times;
- ``plain``:  one trivial ``test_*`` function with
  ``@pytest.mark.parametrize("i", range(N))``, the same N items without the
  plugin's machinery (the plugin is loaded, as it would be in a project that
  installs it, but has nothing to do).

Each session is ``python -m pytest -q -p no:cacheprovider`` in a temporary
folder holding the generated files and one shared ``conftest.py`` that
measures the in-session time (``pytest_sessionstart`` to the end of
``pytest_sessionfinish``, terminal summary included) and its collection and
run phases. Wall time is measured around the child process, CPU time comes
from ``os.wait4()``, peak RSS is the child's ``VmHWM`` at exit (see
``_measure.py`` for why not ``ru_maxrss``).
Repetitions alternate the A/B order to spread drift and noise evenly, after
one untimed warm-up session per variant (it writes the ``.pyc`` files, kept
in a private ``PYTHONPYCACHEPREFIX`` folder whatever
``PYTHONDONTWRITEBYTECODE`` says, as an installed package has them).

By default other installed pytest plugins are not auto-loaded
(``PYTEST_DISABLE_PLUGIN_AUTOLOAD=1`` and ``-p pytest_probability.plugin``),
so the figures are the plugin's alone; ``--autoload`` keeps them. ``OTEL_*``
variables are not passed on (export stays off). The session runner is shared
with ``otel_overhead.py`` in ``_measure.py``.

Usage::

    .venv/bin/python benchmarks/overhead.py                 # N = 1000 10000, 5 repetitions
    .venv/bin/python benchmarks/overhead.py -n 10000 -r 9   # one N, more repetitions
    .venv/bin/python benchmarks/overhead.py --json > overhead.json

Prints medians and the ratios plugin/plain; the goal (issue 2) is a ratio of
at most 1.05 in time and 1.10 in peak memory at 10,000 runs. It asserts
nothing: it measures.
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
    add_session_arguments,
    parse_session_arguments,
    BENCH_FILE,
    METRICS,
    VariantResult,
    describe_machine,
    loadavg,
    machine,
    order,
    run_session,
    warn_if_busy,
    write_folder,
)

PLAIN_FILE = textwrap.dedent(
    """
    import pytest


    @pytest.mark.parametrize("i", range({n}))
    def test_trivial(i):
        pass
    """
)

VARIANTS = ("plugin", "plain")


def prepare(root: Path, n: int) -> dict[str, tuple[Path, list[str]]]:
    """Write one folder per variant; return variant -> (folder, pytest arguments)."""
    return {
        "plugin": (write_folder(root / f"plugin-{n}", {"bench_overhead.py": BENCH_FILE}),
                   [f"--prob-runs={n}", "bench_overhead.py"]),
        "plain": (write_folder(root / f"plain-{n}", {"test_plain.py": PLAIN_FILE.format(n=n)}), ["test_plain.py"]),
    }


def measure(ns: list[int], repetitions: int, warmup: int, *, python: str, autoload: bool, progress: bool) -> list[VariantResult]:
    results = []
    with tempfile.TemporaryDirectory(prefix="prob-overhead-") as temp:
        root = Path(temp)
        for n in ns:
            setups = prepare(root, n)
            by_variant = {variant: VariantResult(variant, n) for variant in VARIANTS}
            for variant in VARIANTS:
                for _ in range(warmup):
                    run_session(*setups[variant], python=python, autoload=autoload, expected_items=n)
            for repetition in range(repetitions):
                for variant in order(VARIANTS, repetition):
                    sample = run_session(*setups[variant], python=python, autoload=autoload, expected_items=n)
                    by_variant[variant].samples.append(sample)
                    if progress:
                        print(
                            f"  N={n:,} #{repetition + 1} {variant:6} wall {sample.wall:.3f}s "
                            f"session {sample.session:.3f}s rss {sample.maxrss_kib / 1024:.1f} MiB",
                            file=sys.stderr,
                        )
            results.extend(by_variant.values())
    return results


#: Text columns: (metric, header, width, format of a value).
COLUMNS = (
    ("wall", "wall s", 9, "{:.3f}"),
    ("cpu", "cpu s", 8, "{:.3f}"),
    ("session", "session s", 11, "{:.3f}"),
    ("session_cpu", "sess cpu s", 12, "{:.3f}"),
    ("collect", "collect s", 11, "{:.3f}"),
    ("run", "run s", 8, "{:.3f}"),
    ("maxrss_kib", "peak RSS MiB", 14, None),
)


def ratios(results: list[VariantResult]) -> dict[int, dict[str, float]]:
    out = {}
    for n in sorted({r.n for r in results}):
        plugin = next(r for r in results if r.n == n and r.variant == "plugin")
        plain = next(r for r in results if r.n == n and r.variant == "plain")
        out[n] = {name: plugin.median(name) / plain.median(name) for name in METRICS if plain.median(name)}
    return out


def report_text(results: list[VariantResult], repetitions: int, info: dict) -> str:
    lines = [f"median of {repetitions} sessions per variant and N (fresh process each)",
             f"machine: {describe_machine(info)}", ""]
    header = f"{'N':>7}  {'variant':8}" + "".join(f"{title:>{width}}" for _, title, width, _ in COLUMNS)
    lines.append(header)
    lines.append("-" * len(header))
    for n, r in ratios(results).items():
        for variant in VARIANTS:
            v = next(x for x in results if x.n == n and x.variant == variant)
            cells = []
            for name, _, width, form in COLUMNS:
                value = v.median(name)
                cells.append(f"{value / 1024:>{width}.1f}" if form is None else f"{form.format(value):>{width}}")
            lines.append(f"{n:>7,}  {variant:8}" + "".join(cells))
        lines.append(
            f"{n:>7,}  {'ratio':8}" + "".join(f"{r.get(name, float('nan')):>{width}.3f}" for name, _, width, _ in COLUMNS)
        )
        lines.append("")
    lines.append("ratio = plugin / plain; goal at 10,000 runs: time <= 1.05, peak RSS <= 1.10")
    lines.append("wall/cpu: whole process; session: pytest_sessionstart to end of pytest_sessionfinish")
    return "\n".join(lines)


def report_json(results: list[VariantResult], args: argparse.Namespace, info: dict) -> dict:
    return {
        "benchmark": "overhead",
        "python": info["python"],
        "platform": info["platform"],
        "machine": info,
        "repetitions": args.repetitions,
        "warmup": args.warmup,
        "autoload": args.autoload,
        "goal": {"time_ratio": 1.05, "maxrss_ratio": 1.10, "at_n": 10000},
        "results": [
            {
                "n": r.n,
                "variant": r.variant,
                "median": {name: r.median(name) for name in METRICS},
                "samples": [asdict(s) for s in r.samples],
            }
            for r in results
        ],
        "ratios": {str(n): values for n, values in ratios(results).items()},
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_session_arguments(parser, "runs/items per session")
    args = parse_session_arguments(parser, argv)
    info = machine(args.python)
    warn_if_busy(info)
    results = measure(args.runs, args.repetitions, args.warmup, python=args.python,
                      autoload=args.autoload, progress=not args.quiet)
    info["loadavg_end"] = loadavg()
    if args.json:
        print(json.dumps(report_json(results, args, info), indent=2))
    else:
        print(report_text(results, args.repetitions, info))
    return 0


if __name__ == "__main__":
    sys.exit(main())
