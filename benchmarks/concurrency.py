"""IO-bound concurrency: runs that wait, under pytest-xdist, against plain xdist on as many plain tests.

A real benchmark's run mostly waits (a model call takes 1-30 s); with
``-n N`` the waits overlap, and what is left is xdist's own cost, each
worker's start-up, and what this plugin adds to both. For each ``-n`` (default
1, 4, 16 and 32) this times, in fresh processes, in a rotating order:

- ``plugin``: ``bench_wait`` over ``--cases`` cases whose waits are spread
  evenly over ``--wait`` (default 0.5 to 1.0 s), ``--prob-runs=R`` runs each;
- ``plain``: ``test_wait`` over the same cases x ``range(R)``, the same
  waits in the same order, with the plugin loaded but idle (as in a project
  that installs it): the floor this plugin is held to;
- ``bare`` (unless ``--no-bare``): the same plain tests with the plugin not
  loaded at all, to show what being installed costs.

Autoloading is off (``PYTEST_DISABLE_PLUGIN_AUTOLOAD=1``; ``-p xdist`` and,
but for ``bare``, ``-p pytest_probability.plugin``), so no other installed
plugin (pytest-asyncio, pytest-rerunfailures, ...) loads in every worker.
``-n 1`` is one xdist worker (not a serial session).

Per session: wall time; CPU (user + system) of the whole process tree, from
``RUSAGE_CHILDREN`` before and after (the controller reaps its workers); and
peak RSS, each process's ``VmHWM`` written at its ``pytest_unconfigure`` by a
shared ``conftest.py``: the controller's, and the sum over the controller and
its workers (an upper bound of the tree's peak: the processes' peaks need not
coincide). The ideal is the waits' total over N (at least the longest wait).

Then **a worker's start-up**, in one quiet process at a time: ``python -c
pass`` (the interpreter), ``python -c "import pytest"``, and a worker-like
process that does what ``xdist.remote`` does (``_prepareconfig`` of the
session's arguments, ``workerinput`` set, then ``pytest_cmdline_main``) with
``--collect-only``, probed with ``time.perf_counter``/``process_time``: the
arguments parsed and plugins loaded (``prepare``: where the plugin's import
and options are), ``pytest_configure`` (the plugin's composition root) and
collection, for the three variants. The differences between the variants
are what the plugin adds to each worker.

Usage::

    .venv/bin/python benchmarks/concurrency.py                     # -n 1 4 16 32, 3 repetitions (~8 min)
    .venv/bin/python benchmarks/concurrency.py -n 16 32 -r 5
    .venv/bin/python benchmarks/concurrency.py --startup-only -r 21  # just the start-up breakdown
    .venv/bin/python benchmarks/concurrency.py --json > concurrency.json

Goal (issue 25): at ``-n 16`` and ``-n 32``, ``plugin`` at most 1.1 times
``plain``. It asserts nothing: it measures. On a shared machine the wall
times swing; the medians, the tree's CPU and the load average say how much.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _measure import child_env, describe_machine, loadavg, machine, order, warn_if_busy  # noqa: E402

RSS_DIR_ENV = "PROB_CONCURRENCY_RSS_DIR"

CONFTEST = textwrap.dedent(
    f'''
    """Each process (controller and workers) writes its peak RSS and CPU at unconfigure."""
    import json
    import os
    import time

    import pytest


    def _vmhwm():
        try:
            with open("/proc/self/status") as handle:
                for line in handle:
                    if line.startswith("VmHWM:"):
                        return int(line.split()[1])
        except OSError:
            pass
        return None


    @pytest.hookimpl(trylast=True)
    def pytest_unconfigure(config):
        folder = os.environ.get("{RSS_DIR_ENV}")
        if not folder:
            return
        role = "worker" if hasattr(config, "workerinput") else "controller"
        with open(os.path.join(folder, f"{{role}}-{{os.getpid()}}.json"), "w") as handle:
            json.dump({{"role": role, "vmhwm_kib": _vmhwm(), "cpu": time.process_time()}}, handle)
    '''
)

BENCH = textwrap.dedent(
    """
    import time

    import pytest


    @pytest.mark.parametrize("wait", {waits!r})
    def bench_wait(wait):
        time.sleep(wait)
    """
)

# The runs of a case consecutive, as the plugin's items are (of two parametrize decorators, pytest makes the
# one nearer the function vary slowest), so that xdist hands out the same waits in the same order.
PLAIN = textwrap.dedent(
    """
    import time

    import pytest


    @pytest.mark.parametrize("run", range({runs}))
    @pytest.mark.parametrize("wait", {waits!r})
    def test_wait(wait, run):
        time.sleep(wait)
    """
)

VARIANTS = ("plugin", "plain", "bare")

#: A worker-like process: what ``xdist.remote`` does, with ``--collect-only``, probed.
WORKER_LIKE = textwrap.dedent(
    """
    import time
    marks = {"start": (time.perf_counter(), time.process_time())}
    import json, os, sys
    import pytest
    from _pytest.config import _prepareconfig
    marks["import_pytest"] = (time.perf_counter(), time.process_time())
    args = json.loads(sys.argv[1])
    config = _prepareconfig(args, None)
    marks["prepare"] = (time.perf_counter(), time.process_time())
    # as the controller fills it (and this plugin's decisions channel, a folder, when the plugin is loaded)
    config.workerinput = {"workerid": "gw0", "workercount": 1, "testrunuid": "x", "mainargv": ["pytest"],
                          "prob_gate_folder": sys.argv[2]}
    config.workeroutput = {}


    class Probe:
        @pytest.hookimpl(trylast=True)
        def pytest_configure(self, config):
            marks["configure"] = (time.perf_counter(), time.process_time())

        @pytest.hookimpl(trylast=True)
        def pytest_collection_finish(self, session):
            marks["collect"] = (time.perf_counter(), time.process_time())
            marks["items"] = len(session.items)


    config.pluginmanager.register(Probe(), "probe")
    config.hook.pytest_cmdline_main(config=config)
    marks["end"] = (time.perf_counter(), time.process_time())
    print(json.dumps(marks))
    """
)

PHASES = ("import_pytest", "prepare", "configure", "collect")


def waits_of(cases: int, low: float, high: float) -> list[float]:
    if cases == 1:
        return [low]
    return [round(low + (high - low) * k / (cases - 1), 4) for k in range(cases)]


def ideal(waits: list[float], runs: int, n: int) -> float:
    return max(sum(waits) * runs / n, max(waits))


def session_args(variant: str, n: int, runs: int, autoload: bool = False) -> tuple[list[str], str]:
    args = ["-q", "-p", "no:cacheprovider"]
    if autoload:
        args += ["-p", "no:probability"] if variant == "bare" else []
    else:
        args += ["-p", "xdist"] + (["-p", "pytest_probability.plugin"] if variant != "bare" else [])
    args += ["-n", str(n)]
    if variant == "plugin":
        return args + [f"--prob-runs={runs}", "bench_wait.py"], "bench_wait.py"
    return args + ["test_wait.py"], "test_wait.py"


def run_session(
    folder: Path, python: str, variant: str, n: int, runs: int, expected: int, autoload: bool = False
) -> dict:
    args, _ = session_args(variant, n, runs, autoload)
    rss_dir = Path(tempfile.mkdtemp(prefix="rss-", dir=folder))
    env = child_env(folder / "pycache", autoload=autoload, extra={RSS_DIR_ENV: str(rss_dir)})
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    out = subprocess.run([python, "-m", "pytest", *args], cwd=folder, env=env, capture_output=True, text=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if out.returncode != 0:
        raise SystemExit(f"{variant} -n {n} failed ({out.returncode}):\n{out.stdout[-3000:]}{out.stderr[-2000:]}")
    passed = f"{expected} passed"
    if passed not in out.stdout:
        raise SystemExit(f"{variant} -n {n}: expected '{passed}' in:\n{out.stdout[-2000:]}")
    processes = [json.loads(p.read_text()) for p in rss_dir.iterdir()]
    workers = [p for p in processes if p["role"] == "worker"]
    controller = [p for p in processes if p["role"] == "controller"]
    if len(workers) != n or len(controller) != 1:
        raise SystemExit(f"{variant} -n {n}: {len(workers)} worker and {len(controller)} controller RSS files")
    return {
        "wall": wall,
        "cpu": (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime),
        "rss_controller_mib": controller[0]["vmhwm_kib"] / 1024,
        "rss_tree_mib": sum(p["vmhwm_kib"] for p in processes) / 1024,
        "rss_worker_mib": statistics.median(p["vmhwm_kib"] for p in workers) / 1024,
        # process CPU at unconfigure: the controller's, and a worker's (median)
        "cpu_controller": controller[0]["cpu"],
        "cpu_worker": statistics.median(p["cpu"] for p in workers),
    }


def measure_sessions(args: argparse.Namespace, folder: Path, variants: tuple[str, ...], log) -> dict:
    waits = waits_of(args.cases, *args.wait)
    (folder / "bench_wait.py").write_text(BENCH.format(waits=waits))
    (folder / "test_wait.py").write_text(PLAIN.format(waits=waits, runs=args.runs))
    expected = len(waits) * args.runs
    results: dict = {}
    # The warm-up writes the bytecode cache, which every -n shares: once per variant, at the -n nearest 16
    # (-n 1 waits for every run in turn).
    warm = min(args.n, key=lambda n: abs(n - 16))
    for variant in variants:
        for _ in range(args.warmup):
            run_session(folder, args.python, variant, warm, args.runs, expected, args.autoload)
    for n in args.n:
        samples: dict[str, list[dict]] = {v: [] for v in variants}
        for repetition in range(args.repetitions):
            for variant in order(variants, repetition):
                load = loadavg()
                sample = run_session(folder, args.python, variant, n, args.runs, expected, args.autoload)
                sample["load1"] = load[0] if load else None
                samples[variant].append(sample)
                log(
                    f"-n {n:<3} {variant:<7} {sample['wall']:6.2f} s wall  {sample['cpu']:6.2f} s cpu  "
                    f"{sample['rss_tree_mib']:6.1f} MiB tree  load {sample['load1']}"
                )
        medians = {
            v: {key: statistics.median(s[key] for s in samples[v]) for key in samples[v][0] if key != "load1"}
            for v in variants
        }
        results[str(n)] = {
            "ideal": ideal(waits, args.runs, n),
            "medians": medians,
            "samples": samples,
            "ratio_plugin_plain": medians["plugin"]["wall"] / medians["plain"]["wall"],
            "ratio_plugin_plain_cpu": medians["plugin"]["cpu"] / medians["plain"]["cpu"],
            "load": [s["load1"] for v in variants for s in samples[v]],
        }
    return {"waits": waits, "runs_per_case": args.runs, "items": expected, "by_n": results}


def _process(command: list[str], folder: Path, env: dict) -> tuple[float, float, str]:
    start = time.perf_counter()
    process = subprocess.Popen(command, cwd=folder, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(process.pid, 0)
    wall = time.perf_counter() - start
    stdout = process.stdout.read().decode() if process.stdout else ""
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(
            f"failed: {' '.join(command[:4])}...\n{stdout[-2000:]}{process.stderr.read().decode()[-2000:]}"
        )
    return wall, usage.ru_utime + usage.ru_stime, stdout


def measure_startup(args: argparse.Namespace, folder: Path, variants: tuple[str, ...], log) -> dict:
    """A worker's start-up, phase by phase (ms), medians over fresh processes in a rotating order."""
    script = folder / "worker_like.py"
    script.write_text(WORKER_LIKE)
    channel = folder / "channel"  # what a worker's decisions channel holds before the first decision
    channel.mkdir(exist_ok=True)
    (channel / "session.json").write_text("{}")
    env = child_env(folder / "pycache", autoload=args.autoload)
    kinds = ("python", "import pytest", *variants)
    samples: dict[str, list[dict]] = {k: [] for k in kinds}

    def one(kind: str) -> dict:
        if kind == "python":
            wall, cpu, _ = _process([args.python, "-c", "pass"], folder, env)
            return {"total_wall": wall * 1000, "total_cpu": cpu * 1000}
        if kind == "import pytest":
            wall, cpu, _ = _process([args.python, "-c", "import pytest"], folder, env)
            return {"total_wall": wall * 1000, "total_cpu": cpu * 1000}
        session, _ = session_args(kind, 1, args.runs, args.autoload)
        session = [a for a in session if a not in ("-n", "1")] + ["--collect-only"]
        wall, cpu, out = _process([args.python, str(script), json.dumps(session), str(channel)], folder, env)
        marks = json.loads(out.strip().splitlines()[-1])
        result = {"total_wall": wall * 1000, "total_cpu": cpu * 1000, "items": marks["items"]}
        previous = marks["start"]
        for phase in PHASES:
            now = marks[phase]
            result[f"{phase}_wall"] = (now[0] - previous[0]) * 1000
            result[f"{phase}_cpu"] = (now[1] - previous[1]) * 1000
            previous = now
        # before the script's first line: the interpreter's own start, and after the last probe: the exit
        result["outside_wall"] = result["total_wall"] - (marks["end"][0] - marks["start"][0]) * 1000
        return result

    for kind in kinds:  # warm-up: the bytecode cache
        one(kind)
    for repetition in range(args.startup_repetitions):
        for kind in order(kinds, repetition):
            samples[kind].append(one(kind))
    medians = {k: {key: statistics.median(s[key] for s in v) for key in v[0]} for k, v in samples.items()}
    log(f"start-up: {args.startup_repetitions} processes per kind")
    return {"repetitions": args.startup_repetitions, "medians": medians}


def report_text(data: dict) -> str:
    lines = [f"machine: {describe_machine(data['machine'])}", ""]
    sessions = data.get("sessions")
    if sessions:
        lines.append(
            f"{sessions['items']} items: {len(sessions['waits'])} cases waiting "
            f"{sessions['waits'][0]:g}-{sessions['waits'][-1]:g} s x {sessions['runs_per_case']} runs; "
            f"medians of {data['repetitions']} (wall s, tree CPU s, peak RSS MiB: controller / sum of the tree)"
        )
        variants = data["variants"]
        header = f"{'-n':>4} {'ideal':>6}"
        for v in variants:
            header += f" | {v + ' wall':>12} {'cpu':>6} {'rss ctl/tree':>13}"
        header += " | plugin/plain wall  cpu | load"
        lines.append(header)
        for n, result in sorted(sessions["by_n"].items(), key=lambda item: int(item[0])):
            row = f"{n:>4} {result['ideal']:6.2f}"
            for v in variants:
                m = result["medians"][v]
                row += f" | {m['wall']:12.2f} {m['cpu']:6.2f} {m['rss_controller_mib']:6.1f}/{m['rss_tree_mib']:6.1f}"
            load = [x for x in result["load"] if x is not None]
            row += (
                f" | {result['ratio_plugin_plain']:10.3f} {result['ratio_plugin_plain_cpu']:6.3f} | "
                f"{min(load):.1f}-{max(load):.1f}"
                if load
                else ""
            )
            lines.append(row)
        lines.append("CPU s of one process at its unconfigure (medians): controller / a worker (median)")
        for n, result in sorted(sessions["by_n"].items(), key=lambda item: int(item[0])):
            row = f"{n:>4}       "
            for v in variants:
                m = result["medians"][v]
                if "cpu_controller" in m:
                    row += f" | {v:>7} {m['cpu_controller']:6.3f} / {m['cpu_worker']:6.3f}"
            lines.append(row)
        lines.append("goal (issue 25): plugin/plain wall <= 1.1 at -n 16 and -n 32")
        lines.append("")
    startup = data.get("startup")
    if startup:
        m = startup["medians"]
        lines.append(
            f"a worker's start-up (worker-like process, --collect-only), medians of {startup['repetitions']}, "
            "ms wall (cpu):"
        )
        lines.append(f"  python -c pass          {m['python']['total_wall']:7.1f} ({m['python']['total_cpu']:.1f})")
        lines.append(
            f"  python -c 'import pytest' {m['import pytest']['total_wall']:5.1f} "
            f"({m['import pytest']['total_cpu']:.1f})"
        )
        variants = [v for v in data["variants"] if v in m]
        lines.append(
            f"  {'phase':<22}"
            + "".join(f"{v:>18}" for v in variants)
            + ("   plugin - bare" if "bare" in m and "plugin" in m else "")
        )
        for phase in ("outside", *PHASES, "total"):
            row = f"  {phase:<22}"
            for v in variants:
                cpu = m[v].get(f"{phase}_cpu")
                row += (
                    f"{m[v][f'{phase}_wall']:9.1f} ({cpu:5.1f})"
                    if cpu is not None
                    else f"{m[v][f'{phase}_wall']:9.1f}        "
                )
            if "bare" in m and "plugin" in m:
                row += f"   {m['plugin'][f'{phase}_wall'] - m['bare'][f'{phase}_wall']:+7.1f}"
            lines.append(row)
        lines.append(
            "  outside: before the first line of the script (the interpreter's start) and after the last "
            "(its exit); prepare: arguments, ini and plugins (their import and options); configure: every "
            "pytest_configure; collect: the session's collection"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("-n", type=int, nargs="+", default=[1, 4, 16, 32], help="xdist workers (default 1 4 16 32)")
    parser.add_argument("--cases", type=int, default=8, help="cases (default 8)")
    parser.add_argument("--runs", type=int, default=8, help="runs per case (default 8: 64 items)")
    parser.add_argument(
        "--wait",
        type=float,
        nargs=2,
        default=[0.5, 1.0],
        metavar=("LOW", "HIGH"),
        help="the cases' waits, spread evenly (default 0.5 1.0 s)",
    )
    parser.add_argument("-r", "--repetitions", type=int, default=3, help="sessions per variant and -n (default 3)")
    parser.add_argument(
        "--warmup", type=int, default=1, help="untimed sessions per variant first, at the -n nearest 16 (default 1)"
    )
    parser.add_argument("--startup-repetitions", type=int, default=11, help="processes per start-up kind (default 11)")
    parser.add_argument("--no-bare", action="store_true", help="skip the variant without the plugin loaded")
    parser.add_argument("--startup-only", action="store_true", help="only the start-up breakdown")
    parser.add_argument("--no-startup", action="store_true", help="skip the start-up breakdown")
    parser.add_argument(
        "--autoload",
        action="store_true",
        help="let pytest auto-load every installed plugin, as a user has them (default: xdist and this plugin only)",
    )
    parser.add_argument("--python", default=sys.executable, help="interpreter with pytest, xdist and the plugin")
    parser.add_argument("--json", action="store_true", help="print JSON instead of tables")
    parser.add_argument("-q", "--quiet", action="store_true", help="no per-session progress on stderr")
    args = parser.parse_args(argv)
    variants = tuple(v for v in VARIANTS if not (args.no_bare and v == "bare"))
    info = machine(args.python, ("pytest", "pytest-xdist", "execnet"))
    warn_if_busy(info)

    def log(text: str) -> None:
        if not args.quiet:
            print(text, file=sys.stderr, flush=True)

    data: dict = {
        "benchmark": "concurrency",
        "machine": info,
        "variants": list(variants),
        "repetitions": args.repetitions,
    }
    with tempfile.TemporaryDirectory(prefix="prob-concurrency-") as temp:
        folder = Path(temp)
        (folder / "pytest.ini").write_text("[pytest]\n")
        (folder / "conftest.py").write_text(CONFTEST)
        if not args.startup_only:
            data["sessions"] = measure_sessions(args, folder, variants, log)
        if not args.no_startup:
            (folder / "bench_wait.py").write_text(BENCH.format(waits=waits_of(args.cases, *args.wait)))
            (folder / "test_wait.py").write_text(PLAIN.format(waits=waits_of(args.cases, *args.wait), runs=args.runs))
            data["startup"] = measure_startup(args, folder, variants, log)
    info["loadavg_end"] = loadavg()
    print(json.dumps(data, indent=2) if args.json else report_text(data))
    return 0


if __name__ == "__main__":
    sys.exit(main())
