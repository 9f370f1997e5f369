"""What pytest-probability adds to pytest's start-up, and what it imports.

Three measurements, each in fresh processes:

1. ``import``: median over ``--repetitions`` processes of the time
   ``import pytest_probability.plugin`` takes after ``import pytest`` (so
   only what the plugin adds is counted), wall and CPU.
2. ``importtime``: ``python -X importtime`` of the same, listing the modules
   the plugin's import pulls in with their median self and cumulative times,
   the slowest first (``-X importtime`` itself adds some overhead; compare
   modules with each other, not with 1.).
3. ``session``: median wall and CPU time of a minimal pytest session (one
   trivial ``test_*`` run) with the plugin loaded against one without it (``PYTEST_DISABLE_PLUGIN_AUTOLOAD=1`` on both
   sides, ``-p pytest_probability.plugin`` on one): import plus option
   registration, configure and hook dispatch.

And one check: a plain session with the installed plugin auto-loaded (as a
user has it), a ``test_*`` file and a ``bench_*`` file, and no OpenTelemetry
option, must not import ``opentelemetry`` (nor ``grpc`` / ``google.protobuf``)
at all; the modules found in ``sys.modules`` at session end are listed.

Usage::

    .venv/bin/python benchmarks/import_time.py            # 21 processes per measurement
    .venv/bin/python benchmarks/import_time.py -r 51 --json

Child processes use a private bytecode cache (``PYTHONPYCACHEPREFIX``,
filled by an untimed warm-up; ``PYTHONDONTWRITEBYTECODE`` is ignored), as an
installed package has its ``.pyc`` files: without them every import compiles
the sources and takes several times longer.

Goal (issue 2): the import adds under 15 ms. Nothing is asserted.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _measure import describe_machine, loadavg, machine, warn_if_busy  # noqa: E402 - next to this script

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


def _session(python: str, folder: Path, plugin: bool) -> tuple[float, float]:
    command = [python, "-m", "pytest", "-q", "-p", "no:cacheprovider", "test_one.py"]
    if plugin:
        command[4:4] = ["-p", PLUGIN_MODULE]
    start = time.perf_counter()
    process = subprocess.Popen(
        command,
        cwd=folder,
        env=_env(PYTEST_DISABLE_PLUGIN_AUTOLOAD="1"),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    _, status, usage = os.wait4(process.pid, 0)
    wall = time.perf_counter() - start
    process.returncode = os.waitstatus_to_exitcode(status)
    if process.returncode != 0:
        raise SystemExit(f"session failed ({process.returncode}): {' '.join(command)}")
    return wall, usage.ru_utime + usage.ru_stime


def measure_session(python: str, repetitions: int) -> dict:
    with tempfile.TemporaryDirectory(prefix="prob-startup-") as temp:
        folder = Path(temp)
        (folder / "pytest.ini").write_text("[pytest]\n")
        (folder / "test_one.py").write_text("def test_one():\n    pass\n")
        samples: dict[str, list[tuple[float, float]]] = {"with": [], "without": []}
        _session(python, folder, True)
        _session(python, folder, False)
        for repetition in range(repetitions):
            order = (True, False) if repetition % 2 == 0 else (False, True)
            for plugin in order:
                samples["with" if plugin else "without"].append(_session(python, folder, plugin))
    result = {}
    for key, values in samples.items():
        result[f"{key}_plugin_wall_ms"] = 1000 * statistics.median(w for w, _ in values)
        result[f"{key}_plugin_cpu_ms"] = 1000 * statistics.median(c for _, c in values)
    result["added_wall_ms"] = result["with_plugin_wall_ms"] - result["without_plugin_wall_ms"]
    result["added_cpu_ms"] = result["with_plugin_cpu_ms"] - result["without_plugin_cpu_ms"]
    return result


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
    imp, itime, session, modules = data["import"], data["importtime"], data["session"], data["modules"]
    lines = [
        f"machine: {describe_machine(data['machine'])}",
        "",
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
    lines += [
        "",
        f"one-test pytest session, median of {data['repetitions']} (autoload off on both sides):",
        f"  with plugin    wall {session['with_plugin_wall_ms']:.1f} ms  cpu {session['with_plugin_cpu_ms']:.1f} ms",
        f"  without        wall {session['without_plugin_wall_ms']:.1f} ms  cpu {session['without_plugin_cpu_ms']:.1f} ms",
        f"  added          wall {session['added_wall_ms']:+.1f} ms  cpu {session['added_cpu_ms']:+.1f} ms",
        "",
        "plain session (plugin auto-loaded, no OpenTelemetry option):",
        f"  plugin loaded: {modules['plugin_loaded']} ({modules['plugin_module']})",
        f"  opentelemetry imported: {'YES' if modules['opentelemetry_imported'] else 'no'}",
        f"  heavy modules in sys.modules: {', '.join(modules['heavy_modules']) or 'none'}",
        f"  pytest_probability modules: {', '.join(modules['pytest_probability_modules'])}",
    ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "-r", "--repetitions", type=int, default=21, help="fresh processes per measurement (default 21)"
    )
    parser.add_argument("--top", type=int, default=10, help="modules listed from -X importtime (default 10)")
    parser.add_argument("--python", default=sys.executable, help="interpreter with pytest and the plugin installed")
    parser.add_argument("--json", action="store_true", help="print the results as JSON instead of text")
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
        "import": measure_import(args.python, args.repetitions),
        "importtime": measure_importtime(args.python, args.repetitions, args.top),
        "session": measure_session(args.python, args.repetitions),
        "modules": check_modules(args.python),
    }
    info["loadavg_end"] = loadavg()
    print(json.dumps(data, indent=2) if args.json else report_text(data))
    return 0


if __name__ == "__main__":
    sys.exit(main())
