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
run phases. Wall time is measured around the child process, peak RSS comes
from ``os.wait4()`` (the child's own rusage; ``ru_maxrss`` is KiB on Linux).
Repetitions alternate the A/B order to spread drift and noise evenly, after
one untimed warm-up session per variant (it writes the ``.pyc`` files, kept
in a private ``PYTHONPYCACHEPREFIX`` folder whatever
``PYTHONDONTWRITEBYTECODE`` says, as an installed package has them).

By default other installed pytest plugins are not auto-loaded
(``PYTEST_DISABLE_PLUGIN_AUTOLOAD=1`` and ``-p pytest_probability.plugin``),
so the figures are the plugin's alone; ``--autoload`` keeps them.

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
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

TIMING_ENV = "PROB_OVERHEAD_TIMING_FILE"

CONFTEST = textwrap.dedent(
    f'''
    """Measures the session from inside pytest; identical for both variants."""
    import json
    import os
    import time

    import pytest

    _marks = {{}}


    @pytest.hookimpl(tryfirst=True)
    def pytest_sessionstart(session):
        _marks["start"] = time.perf_counter()
        _marks["start_cpu"] = time.process_time()


    @pytest.hookimpl(trylast=True)
    def pytest_collection_finish(session):
        _marks["collected"] = time.perf_counter()
        _marks["items"] = len(session.items)


    @pytest.hookimpl(wrapper=True, tryfirst=True)
    def pytest_runtestloop(session):
        try:
            return (yield)
        finally:
            _marks["ran"] = time.perf_counter()


    @pytest.hookimpl(wrapper=True, tryfirst=True)
    def pytest_sessionfinish(session, exitstatus):
        try:
            return (yield)
        finally:
            end = time.perf_counter()
            end_cpu = time.process_time()
            start = _marks.get("start", end)
            collected = _marks.get("collected", start)
            ran = _marks.get("ran", collected)
            result = {{
                "session": end - start,
                "session_cpu": end_cpu - _marks.get("start_cpu", end_cpu),
                "collect": collected - start,
                "run": ran - collected,
                "finish": end - ran,
                "items": _marks.get("items", 0),
            }}
            with open(os.environ["{TIMING_ENV}"], "w") as handle:
                json.dump(result, handle)
    '''
)

BENCH_FILE = textwrap.dedent(
    """
    def bench_trivial():
        pass
    """
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


@dataclass
class Sample:
    wall: float
    #: user + system CPU seconds of the whole child process (robust to a busy machine).
    cpu: float
    session: float
    session_cpu: float
    collect: float
    run: float
    finish: float
    maxrss_kib: int
    items: int


@dataclass
class VariantResult:
    variant: str
    n: int
    samples: list[Sample] = field(default_factory=list)

    def median(self, name: str) -> float:
        return statistics.median(getattr(s, name) for s in self.samples)


def prepare(root: Path, n: int) -> dict[str, tuple[Path, list[str]]]:
    """Write one folder per variant; return variant -> (folder, pytest arguments)."""
    setups = {}
    for variant in VARIANTS:
        folder = root / f"{variant}-{n}"
        folder.mkdir()
        (folder / "pytest.ini").write_text("[pytest]\n")  # pins rootdir, no outside config
        (folder / "conftest.py").write_text(CONFTEST)
        if variant == "plugin":
            (folder / "bench_overhead.py").write_text(BENCH_FILE)
            setups[variant] = (folder, [f"--prob-runs={n}", "bench_overhead.py"])
        else:
            (folder / "test_plain.py").write_text(PLAIN_FILE.format(n=n))
            setups[variant] = (folder, ["test_plain.py"])
    return setups


def run_session(folder: Path, args: list[str], *, python: str, autoload: bool, expected_items: int) -> Sample:
    timing = folder / "timing.json"
    if timing.exists():
        timing.unlink()
    env = dict(os.environ)
    env[TIMING_ENV] = str(timing)
    env.pop("PYTEST_ADDOPTS", None)
    # Bytecode cache in a private folder (filled by the warm-up), whatever
    # PYTHONDONTWRITEBYTECODE says: users' installs have .pyc files.
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env["PYTHONPYCACHEPREFIX"] = str(folder.parent / "pycache")
    command = [python, "-m", "pytest", "-q", "-p", "no:cacheprovider"]
    if autoload:
        env.pop("PYTEST_DISABLE_PLUGIN_AUTOLOAD", None)
    else:
        env["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"
        command += ["-p", "pytest_probability.plugin"]
    command += args
    with tempfile.TemporaryFile() as output:
        start = time.perf_counter()
        process = subprocess.Popen(command, cwd=folder, env=env, stdout=output, stderr=subprocess.STDOUT)
        # wait4 reaps the child and returns its own rusage (getrusage(RUSAGE_CHILDREN)
        # would accumulate the maximum over every child so far).
        _, status, usage = os.wait4(process.pid, 0)
        wall = time.perf_counter() - start
        process.returncode = os.waitstatus_to_exitcode(status)
        if process.returncode != 0 or not timing.exists():
            output.seek(0)
            tail = output.read().decode(errors="replace")[-3000:]
            raise SystemExit(f"session failed ({process.returncode}): {' '.join(command)}\n{tail}")
    measured = json.loads(timing.read_text())
    if measured["items"] != expected_items:
        raise SystemExit(f"expected {expected_items} items, collected {measured['items']}: {' '.join(command)}")
    return Sample(
        wall=wall,
        cpu=usage.ru_utime + usage.ru_stime,
        session=measured["session"],
        session_cpu=measured["session_cpu"],
        collect=measured["collect"],
        run=measured["run"],
        finish=measured["finish"],
        maxrss_kib=usage.ru_maxrss,
        items=measured["items"],
    )


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
                order = VARIANTS if repetition % 2 == 0 else tuple(reversed(VARIANTS))
                for variant in order:
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


METRICS = ("wall", "cpu", "session", "session_cpu", "collect", "run", "finish", "maxrss_kib")

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


def report_text(results: list[VariantResult], repetitions: int) -> str:
    lines = [f"median of {repetitions} sessions per variant and N (fresh process each)", ""]
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


def report_json(results: list[VariantResult], args: argparse.Namespace) -> dict:
    return {
        "benchmark": "overhead",
        "python": platform.python_version(),
        "platform": platform.platform(),
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
    parser.add_argument("-n", "--runs", type=int, nargs="+", default=[1000, 10000], metavar="N",
                        help="numbers of runs/items per session (default: 1000 10000)")
    parser.add_argument("-r", "--repetitions", type=int, default=5, help="timed sessions per variant and N (default 5)")
    parser.add_argument("--warmup", type=int, default=1, help="untimed sessions per variant and N first (default 1)")
    parser.add_argument("--python", default=sys.executable, help="interpreter with pytest and the plugin installed")
    parser.add_argument("--autoload", action="store_true",
                        help="let pytest auto-load every installed plugin (default: only pytest-probability)")
    parser.add_argument("--json", action="store_true", help="print the results as JSON instead of a table")
    parser.add_argument("-q", "--quiet", action="store_true", help="no per-session progress on stderr")
    args = parser.parse_args(argv)
    if any(n < 1 for n in args.runs) or args.repetitions < 1 or args.warmup < 0:
        parser.error("N and repetitions must be at least 1, warmup at least 0")
    results = measure(args.runs, args.repetitions, args.warmup, python=args.python,
                      autoload=args.autoload, progress=not args.quiet)
    if args.json:
        print(json.dumps(report_json(results, args), indent=2))
    else:
        print(report_text(results, args.repetitions))
    return 0


if __name__ == "__main__":
    sys.exit(main())
