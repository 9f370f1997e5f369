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

**Against the published 0.3.0** (issue 24: export off, the per-run path at
most 0.3.0's on the same trivial runs, in one run): ``--published PYTHON``
adds a third variant, ``published``, the same ``bench_*`` file and
``--prob-runs=N`` run by an interpreter that has pytest-probability 0.3.0
installed, with the same pytest; the rounds rotate all three variants and a
second ratio, plugin / published, is printed. ``--make-published DIR`` builds
that interpreter first (``python -m venv DIR``, then
``pip install pytest-probability==0.3.0`` and this interpreter's pytest
version from PyPI; nothing of 0.3.0 is committed) and uses it::

    .venv/bin/python benchmarks/overhead.py -n 3000 10000 --make-published .venv-0.3.0
    .venv/bin/python benchmarks/overhead.py --published .venv-0.3.0/bin/python

**The floors** (``--floors``): the same N runs made by a 20-line ``-p`` plugin
with no pytest-probability code on the way, in two shapes. ``floor-function``:
N ``pytest.Function`` items of one trivial function sharing one fixture
closure, which is what a run of the plugin is (fixtures, marks and the async
plugins' hooks work on it); its ratio, plugin / floor-function, is printed as
``/Function``: what the plugin adds over pytest's own item. ``floor-item``: N
bare ``pytest.Item`` items whose ``runtest`` calls the function, with no
fixture, which is the shape of 0.3.0's runs (it called the function with its
parameters only)::

    .venv/bin/python benchmarks/overhead.py -n 3000 10000 -r 9 --floors --published .venv-0.3.0/bin/python
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import textwrap
from dataclasses import asdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _measure import (  # noqa: E402 - shared helpers next to this script
    BENCH_FILE,
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

PLAIN_FILE = textwrap.dedent(
    """
    import pytest


    @pytest.mark.parametrize("i", range({n}))
    def test_trivial(i):
        pass
    """
)

#: The floors (``--floors``): pytest running N items of one trivial function made by a small plugin, no
#: pytest-probability code in the way. ``floor-function``: ``pytest.Function`` items sharing one
#: fixture closure (what a run is: fixtures, marks, the async plugins' hooks all work); ``floor-item``:
#: bare ``pytest.Item`` items whose ``runtest`` calls the function (0.3.0's shape: no fixture at all).
FLOOR_PLUGIN = textwrap.dedent(
    """
    import pytest

    N = {n}
    KIND = {kind!r}


    class Bare(pytest.Item):
        def __init__(self, *, function, **kwargs):
            super().__init__(**kwargs)
            self.function = function

        def runtest(self):
            self.function()

        def reportinfo(self):
            return self.path, 0, self.name


    @pytest.hookimpl(tryfirst=True)
    def pytest_pycollect_makeitem(collector, name, obj):
        if name != "floor_trivial":
            return None
        names = [f"floor_trivial[run{{i}}]" for i in range(1, N + 1)]
        if KIND == "item":
            return [Bare.from_parent(collector, name=item, function=obj) for item in names]
        info = collector.session._fixturemanager.getfixtureinfo(node=collector, func=obj, cls=None)
        return [pytest.Function.from_parent(collector, name=item, callobj=obj, originalname=name, fixtureinfo=info)
                for item in names]
    """
)
FLOOR_FILE = "def floor_trivial():\n    pass\n"
FLOORS = ("floor-function", "floor-item")

VARIANTS = ("plugin", "plain")
#: The release issue 24's export-off goal compares with.
PUBLISHED = "0.3.0"


def prepare(root: Path, n: int) -> dict[str, tuple[Path, list[str]]]:
    """Write one folder per variant; return variant -> (folder, pytest arguments)."""
    plugin = (
        write_folder(root / f"plugin-{n}", {"bench_overhead.py": BENCH_FILE}),
        [f"--prob-runs={n}", "bench_overhead.py"],
    )
    return {
        "plugin": plugin,
        "plain": (write_folder(root / f"plain-{n}", {"test_plain.py": PLAIN_FILE.format(n=n)}), ["test_plain.py"]),
        "published": plugin,  # the same file and arguments, run by 0.3.0
        **{
            floor: (
                write_folder(
                    root / f"{floor}-{n}",
                    {"test_floor.py": FLOOR_FILE, "floor_items.py": FLOOR_PLUGIN.format(n=n, kind=floor[6:])},
                ),
                ["-p", "floor_items", "test_floor.py"],
            )
            for floor in FLOORS
        },
    }


def make_published(folder: Path, python: str) -> str:
    """A virtualenv with pytest-probability 0.3.0 and ``python``'s pytest; its interpreter."""
    version = subprocess.run(
        [python, "-c", "import pytest; print(pytest.__version__)"], check=True, capture_output=True, text=True
    ).stdout.strip()
    interpreter = folder / "bin" / "python"
    if not interpreter.exists():
        subprocess.run([sys.executable, "-m", "venv", str(folder)], check=True)
    subprocess.run(
        [
            str(interpreter),
            "-m",
            "pip",
            "install",
            "-q",
            "--disable-pip-version-check",
            f"pytest-probability=={PUBLISHED}",
            f"pytest=={version}",
        ],
        check=True,
    )
    return str(interpreter)


def check_published(python: str) -> None:
    """Refuse an interpreter that has not 0.3.0 installed: the comparison would be with something else."""
    code = "import importlib.metadata as m; print(m.version('pytest-probability'))"
    done = subprocess.run([python, "-c", code], capture_output=True, text=True)
    if done.returncode != 0 or done.stdout.strip() != PUBLISHED:
        raise SystemExit(
            f"--published {python}: pytest-probability {PUBLISHED} is not installed there "
            f"({done.stdout.strip() or done.stderr.strip().splitlines()[-1:]}); use --make-published DIR"
        )


def measure(
    ns: list[int],
    repetitions: int,
    warmup: int,
    *,
    python: str,
    autoload: bool,
    progress: bool,
    published: str | None = None,
    floors: bool = False,
) -> list[VariantResult]:
    results = []
    variants = (*VARIANTS, *(("published",) if published else ()), *(FLOORS if floors else ()))
    pythons = {variant: python for variant in variants}
    pythons["published"] = published or python
    with tempfile.TemporaryDirectory(prefix="prob-overhead-") as temp:
        root = Path(temp)
        for n in ns:
            setups = prepare(root, n)
            by_variant = {variant: VariantResult(variant, n) for variant in variants}
            for variant in variants:
                for _ in range(warmup):
                    run_session(*setups[variant], python=pythons[variant], autoload=autoload, expected_items=n)
            for repetition in range(repetitions):
                for variant in order(variants, repetition):
                    sample = run_session(*setups[variant], python=pythons[variant], autoload=autoload, expected_items=n)
                    by_variant[variant].samples.append(sample)
                    if progress:
                        print(
                            f"  N={n:,} #{repetition + 1} {variant:14} wall {sample.wall:.3f}s "
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


def ratios(results: list[VariantResult], against: str = "plain") -> dict[int, dict[str, float]]:
    """plugin / ``against`` per N, for each metric (empty when ``against`` was not measured)."""
    out = {}
    for n in sorted({r.n for r in results}):
        plugin = next(r for r in results if r.n == n and r.variant == "plugin")
        other = next((r for r in results if r.n == n and r.variant == against), None)
        if other is not None:
            out[n] = {name: plugin.median(name) / other.median(name) for name in METRICS if other.median(name)}
    return out


def report_text(results: list[VariantResult], repetitions: int, info: dict) -> str:
    lines = [
        f"median of {repetitions} sessions per variant and N (fresh process each)",
        f"machine: {describe_machine(info)}",
        "",
    ]
    header = f"{'N':>7}  {'variant':14}" + "".join(f"{title:>{width}}" for _, title, width, _ in COLUMNS)
    lines.append(header)
    lines.append("-" * len(header))
    against_published = ratios(results, "published")
    against_floor = ratios(results, "floor-function")
    for n, r in ratios(results).items():
        for variant in (*VARIANTS, "published", *FLOORS):
            v = next((x for x in results if x.n == n and x.variant == variant), None)
            if v is None:
                continue
            cells = []
            for name, _, width, form in COLUMNS:
                value = v.median(name)
                cells.append(f"{value / 1024:>{width}.1f}" if form is None else f"{form.format(value):>{width}}")
            lines.append(f"{n:>7,}  {variant:14}" + "".join(cells))
        for label, values in (("ratio", r), ("/0.3.0", against_published.get(n)), ("/Function", against_floor.get(n))):
            if values is not None:
                lines.append(
                    f"{n:>7,}  {label:14}"
                    + "".join(f"{values.get(name, float('nan')):>{width}.3f}" for name, _, width, _ in COLUMNS)
                )
        lines.append("")
    lines.append("ratio = plugin / plain; goal at 10,000 runs: time <= 1.05, peak RSS <= 1.10")
    if against_published:
        lines.append(
            f"/0.3.0 = plugin / published (pytest-probability {PUBLISHED}, the same runs); "
            "goal (issue 24): time <= 1.00"
        )
    if against_floor:
        lines.append(
            "/Function = plugin / floor-function (pytest running N Function items of one trivial function, "
            "made by a 20-line plugin); floor-item: bare Items that call it, no fixtures (0.3.0's shape)"
        )
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
        "ratios_to_published": {str(n): values for n, values in ratios(results, "published").items()},
        "ratios_to_floor_function": {str(n): values for n, values in ratios(results, "floor-function").items()},
        "published": PUBLISHED if any(r.variant == "published" for r in results) else None,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_session_arguments(parser, "runs/items per session")
    parser.add_argument(
        "--published",
        metavar="PYTHON",
        help=f"an interpreter with pytest-probability {PUBLISHED}: adds the variant 'published'",
    )
    parser.add_argument(
        "--make-published",
        metavar="DIR",
        type=Path,
        help=f"make (or update) a virtualenv in DIR with {PUBLISHED} from PyPI and use it",
    )
    parser.add_argument(
        "--floors",
        action="store_true",
        help="add the floors: pytest's own Function items, and bare Items, for the same runs",
    )
    args = parse_session_arguments(parser, argv)
    published = make_published(args.make_published, args.python) if args.make_published else args.published
    if published:
        if "/" in published:  # the sessions run in their own folders
            published = str(Path(published).absolute())
        check_published(published)
    info = machine(args.python)
    if published:
        info["published"] = machine(published, ("pytest", "pytest-probability"))
    warn_if_busy(info)
    results = measure(
        args.runs,
        args.repetitions,
        args.warmup,
        python=args.python,
        autoload=args.autoload,
        progress=not args.quiet,
        published=published,
        floors=args.floors,
    )
    info["loadavg_end"] = loadavg()
    if args.json:
        print(json.dumps(report_json(results, args, info), indent=2))
    else:
        print(report_text(results, args.repetitions, info))
    return 0


if __name__ == "__main__":
    sys.exit(main())
