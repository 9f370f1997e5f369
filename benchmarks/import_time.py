"""What pytest-probability adds to pytest's start-up, and what it imports.

Three measurements, each in fresh processes:

1. ``import``: median over ``--repetitions`` processes of the time
   ``import pytest_probability.plugin`` takes after ``import pytest`` (so
   only what the plugin adds is counted), wall and CPU.
2. ``importtime``: ``python -X importtime`` of the same, listing the modules
   the plugin's import pulls in with their median self and cumulative times,
   the slowest first (``-X importtime`` itself adds some overhead; compare
   modules with each other, not with 1.).
3. ``sessions``: median wall and CPU time (``wait4``) of small pytest sessions, autoload off on every side
   and the variants alternated: ``bare`` (plain pytest, the plugin not loaded, on four trivial
   ``test_*`` functions), ``idle`` (the same with ``-p pytest_probability.plugin``: installed, no
   benchmark) and ``bench`` (four trivial ``bench_*`` functions with default options: a session that
   uses no feature), each serially and as one xdist worker (``-n 1``: the worker's CPU until its
   ``pytest_unconfigure``, and the whole tree's), with the plugin's modules each process imported and
   the CPU of each phase (prepare, configure, collect, run, finish, unconfigure; a ``census`` plugin
   loaded in every variant marks them). ``--tree NAME=SRC`` measures another source tree (another
   commit's ``src/``, put first on ``PYTHONPATH``) in the same rounds, for a before/after in one run;
   ``--instructions`` runs each of them once more under valgrind and counts the instructions the main
   process and the worker execute (deterministic, so a busy machine does not blur the difference).

And one check: a plain session with the installed plugin auto-loaded (as a
user has it), a ``test_*`` file and a ``bench_*`` file, and no OpenTelemetry
option, must not import ``opentelemetry`` (nor ``grpc`` / ``google.protobuf``)
at all; the modules found in ``sys.modules`` at session end are listed.

Usage::

    .venv/bin/python benchmarks/import_time.py            # 21 processes per measurement
    .venv/bin/python benchmarks/import_time.py -r 51 --json
    mkdir /tmp/before && git archive COMMIT src | tar -x -C /tmp/before     # a before/after in one run:
    .venv/bin/python benchmarks/import_time.py --sessions-only --tree before=/tmp/before/src --tree after=src

Child processes use a private bytecode cache (``PYTHONPYCACHEPREFIX``,
filled by an untimed warm-up; ``PYTHONDONTWRITEBYTECODE`` is ignored), as an
installed package has its ``.pyc`` files: without them every import compiles
the sources and takes several times longer.

Goals: the import adds under 15 ms (issue 2); a session that uses no feature costs at most 40 ms of CPU
over plain pytest, serially and in each xdist worker (issue 44). Nothing is asserted.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _measure import describe_machine, loadavg, machine, order, paired_median, warn_if_busy  # noqa: E402 - next to this script

PLUGIN_MODULE = "pytest_probability.plugin"
HEAVY_PREFIXES = ("opentelemetry", "grpc", "google.protobuf")

IMPORT_SNIPPET = textwrap.dedent(
    f"""
    import time
    import pytest
    wall, cpu = time.perf_counter(), time.process_time()
    import {PLUGIN_MODULE}
    print(time.perf_counter() - wall, time.process_time() - cpu)
    """
)

MODULES_CONFTEST = textwrap.dedent(
    f"""
    import json
    import os
    import sys

    import pytest


    @pytest.hookimpl(trylast=True)
    def pytest_sessionfinish(session):
        heavy = sorted(m for m in sys.modules if m.startswith({HEAVY_PREFIXES!r}))
        plugin = session.config.pluginmanager.get_plugin("probability")
        with open(os.environ["PROB_MODULES_FILE"], "w") as handle:
            json.dump(
                {{
                    "plugin_loaded": plugin is not None,
                    "plugin_module": getattr(plugin, "__name__", None),
                    "heavy_modules": heavy,
                    "pytest_probability_modules": sorted(
                        m for m in sys.modules if m.startswith("pytest_probability")
                    ),
                }},
                handle,
            )
    """
)


#: Bytecode cache of the child processes: a private folder, so the figures
#: do not depend on PYTHONDONTWRITEBYTECODE or on a stale __pycache__, and
#: nothing is written into the source tree. Filled by the warm-up runs.
PYCACHE = tempfile.mkdtemp(prefix="prob-pycache-")


def _env(**extra: str) -> dict[str, str]:
    env = dict(os.environ)
    env.pop("PYTEST_ADDOPTS", None)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env["PYTHONPYCACHEPREFIX"] = PYCACHE
    env.update(extra)
    return env


def measure_import(python: str, repetitions: int) -> dict:
    walls, cpus = [], []
    subprocess.run([python, "-c", IMPORT_SNIPPET], check=True, capture_output=True, env=_env())  # warm .pyc
    for _ in range(repetitions):
        out = subprocess.run([python, "-c", IMPORT_SNIPPET], check=True, capture_output=True, text=True, env=_env())
        wall, cpu = map(float, out.stdout.split())
        walls.append(wall)
        cpus.append(cpu)
    return {
        "median_wall_ms": 1000 * statistics.median(walls),
        "median_cpu_ms": 1000 * statistics.median(cpus),
        "min_wall_ms": 1000 * min(walls),
        "max_wall_ms": 1000 * max(walls),
        "samples_wall_ms": [1000 * w for w in walls],
    }


def _parse_importtime(stderr: str) -> list[dict]:
    lines = stderr.split("--- plugin ---\n", 1)[1].splitlines()
    modules = []
    for line in lines:
        if not line.startswith("import time:"):
            continue
        parts = line[len("import time:") :].split("|")
        if len(parts) != 3 or not parts[0].strip().isdigit():
            continue
        name = parts[2].rstrip()
        modules.append(
            {
                "module": name.strip(),
                "depth": (len(name) - len(name.lstrip())) // 2,
                "self_us": int(parts[0]),
                "cumulative_us": int(parts[1]),
            }
        )
    return modules


def measure_importtime(python: str, repetitions: int, top: int) -> dict:
    """``-X importtime`` of the modules imported after pytest itself; medians per module."""
    code = f"import pytest; import sys; sys.stderr.write('--- plugin ---\\n'); import {PLUGIN_MODULE}"
    subprocess.run([python, "-c", code], check=True, capture_output=True, env=_env())  # warm .pyc
    runs = []
    for _ in range(repetitions):
        out = subprocess.run(
            [python, "-X", "importtime", "-c", code], check=True, capture_output=True, text=True, env=_env()
        )
        runs.append(_parse_importtime(out.stderr))
    names = [m["module"] for m in runs[0]]
    modules = []
    for name in names:
        found = [m for run in runs for m in run if m["module"] == name]
        modules.append(
            {
                "module": name,
                "self_us": statistics.median(m["self_us"] for m in found),
                "cumulative_us": statistics.median(m["cumulative_us"] for m in found),
            }
        )
    total = next((m["cumulative_us"] for m in modules if m["module"] == PLUGIN_MODULE), None)
    return {
        "plugin_cumulative_ms": None if total is None else total / 1000,
        "modules": len(modules),
        "outside_package": sorted({m["module"] for m in modules if not m["module"].startswith("pytest_probability")}),
        "slowest_self": sorted(modules, key=lambda m: m["self_us"], reverse=True)[:top],
    }


#: Each measured session's census, a plugin loaded with ``-p census`` first in every variant (so it costs each
#: the same): the process's CPU at the end of each phase, and at ``pytest_unconfigure`` (trylast) the modules
#: it imported. Phases: ``prepare`` (arguments, ini, plugins imported and their options: the census is
#: imported first, so this is from its import to ``pytest_cmdline_main``), ``configure`` (every
#: ``pytest_configure``, to ``pytest_sessionstart``), ``collect``, ``run`` (the run loop), ``finish``
#: (``pytest_sessionfinish`` and the terminal summary, to ``pytest_unconfigure``) and ``unconfigure``.
CENSUS = textwrap.dedent(
    """
    import json
    import os
    import sys
    import time

    import pytest

    MARKS = {"start": time.process_time()}


    @pytest.hookimpl(tryfirst=True)
    def pytest_cmdline_main(config):
        MARKS["prepare"] = time.process_time()


    @pytest.hookimpl(tryfirst=True)
    def pytest_sessionstart(session):
        MARKS["configure"] = time.process_time()


    @pytest.hookimpl(trylast=True)
    def pytest_collection_finish(session):
        MARKS["collect"] = time.process_time()


    @pytest.hookimpl(wrapper=True)
    def pytest_runtestloop(session):
        try:
            return (yield)
        finally:
            MARKS["run"] = time.process_time()


    @pytest.hookimpl(tryfirst=True)
    def pytest_unconfigure(config):
        MARKS["finish"] = time.process_time()


    @pytest.hookimpl(trylast=True, specname="pytest_unconfigure")
    def pytest_unconfigure_last(config):
        MARKS["unconfigure"] = time.process_time()
        folder = os.environ.get("PROB_CENSUS_DIR")
        if not folder:
            return
        role = "worker" if hasattr(config, "workerinput") else "main"
        with open(os.path.join(folder, f"{role}-{os.getpid()}.json"), "w") as handle:
            json.dump(
                {
                    "role": role,
                    "cpu": time.process_time(),
                    "marks": MARKS,
                    "modules": len(sys.modules),
                    "plugin_modules": sorted(m for m in sys.modules if m.startswith("pytest_probability")),
                },
                handle,
            )
    """
)

#: The sessions compared: ``bare`` is plain pytest (the plugin not loaded) on ``BENCHMARKS`` plain tests;
#: ``idle`` the same with the plugin loaded (installed, no benchmark); ``bench`` the plugin on as many trivial
#: benchmarks with default options (one run each): a session that uses no feature.
SESSION_VARIANTS = ("bare", "idle", "bench")
BENCHMARKS = 4


def _session_command(python: str, variant: str, workers: int | None) -> list[str]:
    command = [python, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "census"]
    if workers is not None:
        command += ["-p", "xdist", "-n", str(workers)]
    if variant != "bare":
        command += ["-p", PLUGIN_MODULE]
    return command + ["bench_plain.py" if variant == "bench" else "test_plain.py"]


def _session(python: str, folder: Path, variant: str, workers: int | None, src: str | None) -> dict:
    """One session: the whole process's wall and CPU (``wait4``; the whole tree's under xdist) and what the
    census saw in each process (a worker's CPU until its unconfigure, and its modules). ``src``: a source
    tree put first on ``PYTHONPATH`` (another commit's ``src/``), else the installed plugin."""
    census = folder / "census"
    shutil.rmtree(census, ignore_errors=True)
    census.mkdir()
    command = _session_command(python, variant, workers)
    extra = {"PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1", "PROB_CENSUS_DIR": str(census)}
    if src is not None:
        extra["PYTHONPATH"] = src
    start = time.perf_counter()
    before = os.times()
    process = subprocess.Popen(
        command, cwd=folder, env=_env(**extra), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    _, status, usage = os.wait4(process.pid, 0)
    wall = time.perf_counter() - start
    after = os.times()
    process.returncode = os.waitstatus_to_exitcode(status)
    if process.returncode != 0:
        raise SystemExit(f"session failed ({process.returncode}): {' '.join(command)}")
    found = [json.loads(path.read_text()) for path in census.iterdir()]
    main = next(f for f in found if f["role"] == "main")
    # Under xdist the workers are the controller's children, reaped by it: the tree's CPU is the children's.
    tree = (after.children_user - before.children_user) + (after.children_system - before.children_system)
    cpu = usage.ru_utime + usage.ru_stime
    result = {
        "wall": wall,
        "cpu": cpu,
        "tree_cpu": tree,
        "main_modules": main["plugin_modules"],
        "main_all_modules": main["modules"],
        # before the census's import (the interpreter, pytest's import, the arguments), and after the last
        # hook (the interpreter's exit: its modules and objects let go)
        "phases": {
            "start": main["marks"]["start"],
            **_phases(main["marks"]),
            "exit": cpu - main["marks"]["unconfigure"],
        },
    }
    worker = next((f for f in found if f["role"] == "worker"), None)
    if worker is not None:
        result["worker_cpu"] = worker["cpu"]
        result["worker_modules"] = worker["plugin_modules"]
        result["worker_all_modules"] = worker["modules"]
        result["worker_phases"] = {"start": worker["marks"]["start"], **_phases(worker["marks"])}
    return result


PHASES = ("prepare", "configure", "collect", "run", "finish", "unconfigure")


def _phases(marks: dict[str, float]) -> dict[str, float]:
    """CPU seconds of each phase, from the census's marks (an xdist controller collects nothing: 0)."""
    phases, previous = {}, marks["start"]
    for phase in PHASES:
        now = marks.get(phase, previous)
        phases[phase] = now - previous
        previous = now
    return phases


def measure_sessions(python: str, repetitions: int, trees: list[tuple[str, str | None]]) -> dict:
    """Serial sessions and ``-n 1`` sessions (one xdist worker) of every variant and tree, in a rotating
    order; medians. ``trees``: (name, source folder or None for the installed plugin)."""
    variants = [("bare", None, None)] + [(v, name, src) for name, src in trees for v in ("idle", "bench")]
    with tempfile.TemporaryDirectory(prefix="prob-startup-") as temp:
        folder = Path(temp)
        (folder / "pytest.ini").write_text("[pytest]\n")
        (folder / "census.py").write_text(CENSUS)
        (folder / "test_plain.py").write_text("".join(f"def test_{k}():\n    pass\n\n" for k in range(BENCHMARKS)))
        (folder / "bench_plain.py").write_text("".join(f"def bench_{k}():\n    pass\n\n" for k in range(BENCHMARKS)))
        samples: dict[tuple[int, int | None], list[dict]] = {}
        for workers in (None, 1):
            for index, (variant, _, src) in enumerate(variants):  # warm-up: the bytecode cache
                _session(python, folder, variant, workers, src)
                samples[(index, workers)] = []
        for repetition in range(repetitions):
            for workers in (None, 1):
                for index in order(range(len(variants)), repetition):
                    variant, _, src = variants[index]
                    samples[(index, workers)].append(_session(python, folder, variant, workers, src))
    rows: dict[str, list[dict]] = {"serial": [], "worker": []}
    for (index, workers), values in samples.items():
        variant, tree, _ = variants[index]
        entry = {
            "variant": variant,
            "tree": tree,
            "wall_ms": 1000 * statistics.median(s["wall"] for s in values),
            "cpu_ms": 1000 * statistics.median(s["cpu"] for s in values),
            "plugin_modules": len(values[0]["main_modules"]),
            "modules": values[0]["main_all_modules"],
            "plugin_module_names": values[0]["main_modules"],
            "phases_ms": {
                phase: 1000 * statistics.median(s["phases"][phase] for s in values) for phase in values[0]["phases"]
            },
        }
        if workers is not None:
            entry["tree_cpu_ms"] = 1000 * statistics.median(s["tree_cpu"] for s in values)
            entry["worker_cpu_ms"] = 1000 * statistics.median(s["worker_cpu"] for s in values)
            entry["worker_plugin_modules"] = len(values[0]["worker_modules"])
            entry["worker_modules"] = values[0]["worker_all_modules"]
            entry["worker_plugin_module_names"] = values[0]["worker_modules"]
            entry["worker_phases_ms"] = {
                phase: 1000 * statistics.median(s["worker_phases"][phase] for s in values)
                for phase in values[0]["worker_phases"]
            }
        rows["serial" if workers is None else "worker"].append(entry)
    # What a variant adds over bare: the median of the differences within each round (the two sessions ran
    # next to each other), steadier than the difference of the medians when the load drifts.
    for kind, workers in (("serial", None), ("worker", 1)):
        bare = samples[(0, workers)]
        for index, entry in enumerate(rows[kind][1:], 1):
            mine = samples[(index, workers)]
            entry["added_cpu_ms"] = 1000 * paired_median([s["cpu"] for s in mine], [s["cpu"] for s in bare])
            entry["added_wall_ms"] = 1000 * paired_median([s["wall"] for s in mine], [s["wall"] for s in bare])
            if workers is not None:
                entry["added_worker_cpu_ms"] = 1000 * paired_median(
                    [s["worker_cpu"] for s in mine], [s["worker_cpu"] for s in bare]
                )
    return {"benchmarks": BENCHMARKS, **rows}


_REFS = re.compile(r"^==(\d+)== I\s+refs:\s+([\d,]+)", re.MULTILINE)
_COMMAND = re.compile(r"^==(\d+)== Command: (.*)$", re.MULTILINE)


def measure_instructions(python: str, trees: list[tuple[str, str | None]]) -> dict:
    """Instructions executed (valgrind's cachegrind, ``I refs``) by the same sessions as :func:`measure_sessions`,
    once each: deterministic (``PYTHONHASHSEED=0``), so a before/after on a busy machine is not noise. About
    15 s per process; {} without valgrind."""
    valgrind = shutil.which("valgrind")
    if valgrind is None:
        return {}
    variants = [("bare", None, None)] + [(v, name, src) for name, src in trees for v in ("idle", "bench")]
    result: dict = {"serial": [], "worker": []}
    with tempfile.TemporaryDirectory(prefix="prob-instructions-") as temp:
        folder = Path(temp)
        (folder / "pytest.ini").write_text("[pytest]\n")
        (folder / "census.py").write_text("")  # the sessions' -p census, empty: nothing of it counted
        (folder / "test_plain.py").write_text("".join(f"def test_{k}():\n    pass\n\n" for k in range(BENCHMARKS)))
        (folder / "bench_plain.py").write_text("".join(f"def bench_{k}():\n    pass\n\n" for k in range(BENCHMARKS)))
        for workers in (None, 1):
            for variant, tree, src in variants:
                extra = {"PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1", "PYTHONHASHSEED": "0"}
                if src is not None:
                    extra["PYTHONPATH"] = src
                command = _session_command(python, variant, workers)
                env = _env(**extra)
                subprocess.run(command, cwd=folder, env=env, capture_output=True, check=True)  # the bytecode cache
                out = subprocess.run(
                    [valgrind, "--tool=cachegrind", "--cache-sim=no", "--cachegrind-out-file=/dev/null",
                     "--trace-children=yes", *command],
                    cwd=folder, env=env, capture_output=True, text=True, check=True,
                )  # fmt: skip
                refs = {pid: int(n.replace(",", "")) for pid, n in _REFS.findall(out.stderr)}
                commands = dict(_COMMAND.findall(out.stderr))
                pythons = {pid: n for pid, n in refs.items() if "python" in commands.get(pid, "")}
                main = next(n for pid, n in pythons.items() if "-m pytest" in commands[pid])
                worker = next((n for pid, n in pythons.items() if "exec(eval(" in commands[pid]), None)
                entry = {"variant": variant, "tree": tree, "main": main}
                if workers is not None:
                    entry["worker"] = worker
                result["serial" if workers is None else "worker"].append(entry)
    for kind, key in (("serial", "main"), ("worker", "worker")):
        bare = result[kind][0][key]
        for entry in result[kind][1:]:
            entry["added"] = entry[key] - bare if entry[key] is not None and bare is not None else None
    return result


def instruction_lines(data: dict) -> list[str]:
    found = data.get("instructions")
    if not found:
        return []
    lines = ["instructions executed (valgrind, I refs, millions; PYTHONHASHSEED=0: the same on every run):"]
    lines.append(f"  {'':<20}{'serial':>9}{'+':>8}{'a worker':>10}{'+':>8}")
    for serial, worker in zip(found["serial"], found["worker"], strict=True):
        name = serial["variant"] + (f" ({serial['tree']})" if serial["tree"] else "")
        added = f"{serial['added'] / 1e6:+8.1f}" if "added" in serial else f"{'':>8}"
        mine = worker["worker"]
        wadded = f"{worker['added'] / 1e6:+8.1f}" if worker.get("added") is not None else f"{'':>8}"
        lines.append(f"  {name:<20}{serial['main'] / 1e6:9.1f}{added}{(mine or 0) / 1e6:10.1f}{wadded}")
    return [*lines, ""]


def check_modules(python: str) -> dict:
    with tempfile.TemporaryDirectory(prefix="prob-modules-") as temp:
        folder = Path(temp)
        (folder / "pytest.ini").write_text("[pytest]\n")
        (folder / "conftest.py").write_text(MODULES_CONFTEST)
        (folder / "test_plain.py").write_text("def test_plain():\n    pass\n")
        (folder / "bench_plain.py").write_text(
            "from pytest_probability import record_usage\n\n"
            "def bench_plain():\n    record_usage(model='m', input_tokens=1, output_tokens=1, cost=0.0)\n"
        )
        result_file = folder / "modules.json"
        env = _env(PROB_MODULES_FILE=str(result_file))
        env.pop("PYTEST_DISABLE_PLUGIN_AUTOLOAD", None)  # the user's setup: entry points load
        out = subprocess.run(
            [python, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--prob-runs=2"],
            cwd=folder,
            env=env,
            capture_output=True,
            text=True,
        )
        if out.returncode != 0 or not result_file.exists():
            raise SystemExit(
                f"module check session failed ({out.returncode}):\n{out.stdout[-2000:]}{out.stderr[-2000:]}"
            )
        result = json.loads(result_file.read_text())
    result["opentelemetry_imported"] = any(m.startswith("opentelemetry") for m in result["heavy_modules"])
    return result


def report_text(data: dict) -> str:
    lines = [f"machine: {describe_machine(data['machine'])}", ""]
    if "import" in data:
        lines += import_lines(data)
    lines += session_lines(data)
    lines += instruction_lines(data)
    if "modules" in data:
        lines += module_lines(data["modules"])
    return "\n".join(lines)


def import_lines(data: dict) -> list[str]:
    imp, itime = data["import"], data["importtime"]
    lines = [
        f"import {PLUGIN_MODULE} after import pytest, median of {data['repetitions']} fresh processes:",
        f"  wall {imp['median_wall_ms']:.1f} ms (min {imp['min_wall_ms']:.1f}, max {imp['max_wall_ms']:.1f}), "
        f"cpu {imp['median_cpu_ms']:.1f} ms   (goal: < 15 ms)",
        "",
        f"-X importtime, median of {data['repetitions']}: {itime['modules']} modules, plugin cumulative "
        f"{itime['plugin_cumulative_ms']:.1f} ms; modules outside the package: "
        f"{', '.join(itime['outside_package']) or 'none'}",
        "  slowest by self time:",
    ]
    for m in itime["slowest_self"]:
        lines.append(f"    {m['self_us'] / 1000:7.2f} ms self {m['cumulative_us'] / 1000:7.2f} ms cum  {m['module']}")
    return [*lines, ""]


def session_lines(data: dict) -> list[str]:
    sessions = data["sessions"]
    lines = [
        f"sessions, median of {data['repetitions']} (autoload off; {sessions['benchmarks']} plain tests for bare "
        f"and idle, {sessions['benchmarks']} trivial benchmarks with default options for bench; +: the median of "
        "each round's difference from bare):",
        f"  {'':<20}{'wall ms':>9}{'cpu ms':>9}{'+cpu ms':>9}{'modules':>9}{'plugin':>8}",
    ]
    for m in sessions["serial"]:
        added = f"{m['added_cpu_ms']:+9.1f}" if "added_cpu_ms" in m else f"{'':>9}"
        name = m["variant"] + (f" ({m['tree']})" if m["tree"] else "")
        lines.append(
            f"  {name:<20}{m['wall_ms']:9.1f}{m['cpu_ms']:9.1f}{added}{m['modules']:9d}{m['plugin_modules']:8d}"
        )
    lines.append("  as one xdist worker (-n 1): the worker's CPU until its unconfigure, and the tree's")
    lines.append(f"  {'':<20}{'worker':>9}{'+worker':>9}{'tree cpu':>9}{'modules':>9}{'plugin':>8}")
    for m in sessions["worker"]:
        added = f"{m['added_worker_cpu_ms']:+9.1f}" if "added_worker_cpu_ms" in m else f"{'':>9}"
        name = m["variant"] + (f" ({m['tree']})" if m["tree"] else "")
        lines.append(
            f"  {name:<20}{m['worker_cpu_ms']:9.1f}{added}{m['tree_cpu_ms']:9.1f}{m['worker_modules']:9d}"
            f"{m['worker_plugin_modules']:8d}"
        )
    lines.append("  CPU ms by phase, medians (serial; as a worker)")
    names = [m["variant"] + (f" ({m['tree']})" if m["tree"] else "") for m in sessions["serial"]]
    lines.append(f"  {'':<13}" + "".join(f"{name:>18}" for name in names))
    for phase in ("start", *PHASES, "exit"):
        row = f"  {phase:<13}"
        for serial, worker in zip(sessions["serial"], sessions["worker"], strict=True):
            mine = f"{worker['worker_phases_ms'][phase]:6.1f}" if phase in worker["worker_phases_ms"] else f"{'':>6}"
            row += f"{serial['phases_ms'][phase]:9.1f}; {mine}"
        lines.append(row)
    lines += [
        "  start: the interpreter, pytest's import and the arguments, before the first plugin; prepare: plugins "
        "imported with their options, ini; configure: every pytest_configure; finish: sessionfinish and the "
        "terminal summary; exit: after the last hook (a worker's is not measured)",
        "  goal (issue 44): bench at most 40 ms of CPU over bare, serial and as a worker",
        "",
    ]
    return lines


def module_lines(modules: dict) -> list[str]:
    return [
        "plain session (plugin auto-loaded, no OpenTelemetry option):",
        f"  plugin loaded: {modules['plugin_loaded']} ({modules['plugin_module']})",
        f"  opentelemetry imported: {'YES' if modules['opentelemetry_imported'] else 'no'}",
        f"  heavy modules in sys.modules: {', '.join(modules['heavy_modules']) or 'none'}",
        f"  pytest_probability modules: {', '.join(modules['pytest_probability_modules'])}",
    ]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "-r", "--repetitions", type=int, default=21, help="fresh processes per measurement (default 21)"
    )
    parser.add_argument("--top", type=int, default=10, help="modules listed from -X importtime (default 10)")
    parser.add_argument("--python", default=sys.executable, help="interpreter with pytest and the plugin installed")
    parser.add_argument("--json", action="store_true", help="print the results as JSON instead of text")
    parser.add_argument(
        "--tree",
        action="append",
        default=[],
        metavar="NAME=SRC",
        help="measure the sessions of this source tree too (another commit's src/, first on PYTHONPATH); "
        "repeatable, alternated with the others in the same run; default: the installed plugin only",
    )
    parser.add_argument(
        "--sessions-only", action="store_true", help="only the sessions (no import timing, no module check)"
    )
    parser.add_argument(
        "--instructions",
        action="store_true",
        help="also count the instructions each session executes, once each under valgrind (deterministic; "
        "about 15 s per process)",
    )
    args = parser.parse_args(argv)
    if args.repetitions < 1:
        parser.error("repetitions must be at least 1")
    try:
        return run(args)
    finally:
        shutil.rmtree(PYCACHE, ignore_errors=True)


def run(args: argparse.Namespace) -> int:
    info = machine(args.python)
    warn_if_busy(info)
    data = {
        "machine": info,
        "benchmark": "import_time",
        "python": platform.python_version(),
        "platform": platform.platform(),
        "repetitions": args.repetitions,
        "goal": {"import_ms": 15},
    }
    trees: list[tuple[str, str | None]] = [("installed", None)] if not args.tree else []
    for given in args.tree:
        name, _, src = given.partition("=")
        if not src or not Path(src, "pytest_probability").is_dir():
            raise SystemExit(f"--tree {given}: expected NAME=SRC, SRC holding pytest_probability/")
        trees.append((name, str(Path(src).resolve())))
    if not args.sessions_only:
        data["import"] = measure_import(args.python, args.repetitions)
        data["importtime"] = measure_importtime(args.python, args.repetitions, args.top)
    data["sessions"] = measure_sessions(args.python, args.repetitions, trees)
    if args.instructions:
        data["instructions"] = measure_instructions(args.python, trees)
    if not args.sessions_only:
        data["modules"] = check_modules(args.python)
    info["loadavg_end"] = loadavg()
    print(json.dumps(data, indent=2) if args.json else report_text(data))
    return 0


if __name__ == "__main__":
    sys.exit(main())
