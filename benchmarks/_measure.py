"""Helpers shared by ``overhead.py`` and ``otel_overhead.py``: one measured pytest session.

A session is ``python -m pytest -q -p no:cacheprovider ARGS`` in a folder
holding the generated files and :data:`CONFTEST`, which measures the
in-session time (``pytest_sessionstart`` to the end of
``pytest_sessionfinish``, terminal summary included) and its collection, run
and finish phases. Wall time is measured around the child process; CPU time
comes from ``os.wait4()`` (the child's own rusage). Peak RSS is the child's
``VmHWM`` from ``/proc/self/status``, written by an ``atexit`` handler of the
conftest: ``ru_maxrss`` from ``wait4`` is not the child's alone on Linux
(exec keeps the high-water mark of the address space it replaces, the
parent's when spawned with vfork, so a child of a 200 MB parent "peaks" at
200 MB); it is kept as ``ru_maxrss_kib`` and used only where ``/proc`` is
missing.

The child's environment: ``PYTEST_ADDOPTS`` removed; ``OTEL_*`` and
``TRACEPARENT`` removed (an exporter configured in the shell would otherwise
switch export on for the plugin side only); bytecode in a private
``PYTHONPYCACHEPREFIX`` folder whatever ``PYTHONDONTWRITEBYTECODE`` says, as
an installed package has its ``.pyc`` files (the untimed warm-up fills it).
By default other installed pytest plugins are not auto-loaded
(``PYTEST_DISABLE_PLUGIN_AUTOLOAD=1`` and ``-p pytest_probability.plugin``).
Under pytest-xdist only the controller writes the timing file (its run phase
spans the workers'); the CPU from ``wait4`` is the controller's and the
workers' it reaped.

Not a benchmark itself: nothing to run here.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

TIMING_ENV = "PROB_OVERHEAD_TIMING_FILE"
RSS_ENV = "PROB_OVERHEAD_RSS_FILE"

#: Environment variables never passed to a measured session (prefixes).
SCRUBBED_PREFIXES = ("OTEL_", "TRACEPARENT", "PYTEST_ADDOPTS")

CONFTEST = textwrap.dedent(
    f'''
    """Measures the session from inside pytest; identical for every variant."""
    import atexit
    import json
    import os
    import time

    import pytest

    _marks = {{}}


    def _peak_rss():
        # VmHWM: high-water RSS of this process's own memory since exec, in KiB (Linux).
        try:
            with open("/proc/self/status") as handle:
                for line in handle:
                    if line.startswith("VmHWM:"):
                        return int(line.split()[1])
        except OSError:
            pass
        return None


    @atexit.register
    def _write_peak_rss():
        with open(os.environ["{RSS_ENV}"], "w") as handle:
            json.dump({{"vmhwm_kib": _peak_rss()}}, handle)


    @pytest.hookimpl(tryfirst=True)
    def pytest_sessionstart(session):
        _marks["start"] = time.perf_counter()
        _marks["start_cpu"] = time.process_time()


    @pytest.hookimpl(trylast=True)
    def pytest_collection_finish(session):
        _marks["collected"] = time.perf_counter()
        _marks["collected_cpu"] = time.process_time()
        _marks["items"] = len(session.items)


    @pytest.hookimpl(wrapper=True, tryfirst=True)
    def pytest_runtestloop(session):
        _marks.setdefault("collected", time.perf_counter())  # an xdist controller collects nothing itself
        _marks.setdefault("collected_cpu", time.process_time())
        try:
            return (yield)
        finally:
            _marks["ran"] = time.perf_counter()
            _marks["ran_cpu"] = time.process_time()


    @pytest.hookimpl(wrapper=True, tryfirst=True)
    def pytest_sessionfinish(session, exitstatus):
        try:
            return (yield)
        finally:
            if not hasattr(session.config, "workerinput"):  # an xdist worker: the controller's figures only
                _write_timing()


    def _write_timing():
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
            "run_cpu": _marks.get("ran_cpu", end_cpu) - _marks.get("collected_cpu", end_cpu),
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
    #: peak RSS of the child in KiB: VmHWM at exit where /proc exists, else ru_maxrss.
    maxrss_kib: int
    items: int
    #: ru_maxrss from os.wait4(); on Linux at least the parent's RSS when the child was
    #: spawned (exec keeps the old address space's high-water mark), so not used as the peak.
    ru_maxrss_kib: int = 0
    #: CPU seconds of the session's run loop (the process's, all its threads; an xdist controller's own).
    run_cpu: float = 0.0


#: Numeric fields of :class:`Sample` that get medians and ratios.
METRICS = ("wall", "cpu", "session", "session_cpu", "collect", "run", "finish", "maxrss_kib")


@dataclass
class VariantResult:
    variant: str
    n: int
    samples: list[Sample] = field(default_factory=list)

    def median(self, name: str) -> float:
        return statistics.median(getattr(s, name) for s in self.samples)


def write_folder(folder: Path, files: Mapping[str, str]) -> Path:
    """A session folder: ``pytest.ini`` (pins the rootdir), the measuring conftest, ``files``."""
    folder.mkdir(parents=True)
    (folder / "pytest.ini").write_text("[pytest]\n")
    (folder / "conftest.py").write_text(CONFTEST)
    for name, text in files.items():
        (folder / name).write_text(text)
    return folder


def child_env(pycache: Path, *, autoload: bool, extra: Mapping[str, str] | None = None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(SCRUBBED_PREFIXES)}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env["PYTHONPYCACHEPREFIX"] = str(pycache)
    if autoload:
        env.pop("PYTEST_DISABLE_PLUGIN_AUTOLOAD", None)
    else:
        env["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"
    env.update(extra or {})
    return env


@dataclass
class Process:
    """One finished child process: its wall time, its CPU (its own and its reaped children's, from
    ``os.wait4``), its exit status, its output (stdout and stderr together) and rusage."""

    wall: float
    cpu: float
    status: int
    output: str
    usage: resource.struct_rusage


def run_process(command: Sequence[str], *, cwd: Path, env: Mapping[str, str]) -> Process:
    """Run ``command`` to its end, timed around the child: wall time, and CPU from ``os.wait4`` (Linux
    adds the CPU of the children it reaped, so an xdist controller's includes its workers')."""
    with tempfile.TemporaryFile() as output:
        start = time.perf_counter()
        process = subprocess.Popen(list(command), cwd=cwd, env=dict(env), stdout=output, stderr=subprocess.STDOUT)
        _, status, usage = os.wait4(process.pid, 0)
        wall = time.perf_counter() - start
        output.seek(0)
        text = output.read().decode(errors="replace")
    return Process(wall, usage.ru_utime + usage.ru_stime, os.waitstatus_to_exitcode(status), text, usage)


def run_session_output(
    folder: Path,
    args: Sequence[str],
    *,
    python: str,
    autoload: bool,
    expected_items: int | None,
    extra_env: Mapping[str, str] | None = None,
    statuses: Sequence[int] = (0,),
) -> tuple[Sample, str]:
    """Run one measured session in ``folder``; return its sample and its terminal output.
    ``statuses``: the exit statuses that count as a finished session (1 too for failing runs).
    ``expected_items``: the items it must collect; None under xdist (the controller collects none)."""
    timing = folder / "timing.json"
    rss = folder / "rss.json"
    for stale in (timing, rss):
        stale.unlink(missing_ok=True)
    env = child_env(folder.parent / "pycache", autoload=autoload, extra=extra_env)
    env[TIMING_ENV] = str(timing)
    env[RSS_ENV] = str(rss)
    command = [python, "-m", "pytest", "-q", "-p", "no:cacheprovider"]
    if not autoload:
        command += ["-p", "pytest_probability.plugin"]
    command += list(args)
    # wait4 reaps the child and returns its own rusage.
    process = run_process(command, cwd=folder, env=env)
    wall, usage, text = process.wall, process.usage, process.output
    if process.status not in statuses or not timing.exists():
        raise SystemExit(f"session failed ({process.status}): {' '.join(command)}\n{text[-3000:]}")
    measured = json.loads(timing.read_text())
    vmhwm = json.loads(rss.read_text()).get("vmhwm_kib") if rss.exists() else None
    if expected_items is not None and measured["items"] != expected_items:
        raise SystemExit(f"expected {expected_items} items, collected {measured['items']}: {' '.join(command)}")
    sample = Sample(
        wall=wall,
        cpu=usage.ru_utime + usage.ru_stime,
        session=measured["session"],
        session_cpu=measured["session_cpu"],
        collect=measured["collect"],
        run=measured["run"],
        finish=measured["finish"],
        maxrss_kib=vmhwm if vmhwm else usage.ru_maxrss,
        items=measured["items"],
        ru_maxrss_kib=usage.ru_maxrss,
        run_cpu=measured.get("run_cpu", 0.0),
    )
    return sample, text


def run_session(
    folder: Path,
    args: Sequence[str],
    *,
    python: str,
    autoload: bool,
    expected_items: int,
    extra_env: Mapping[str, str] | None = None,
) -> Sample:
    return run_session_output(
        folder, args, python=python, autoload=autoload, expected_items=expected_items, extra_env=extra_env
    )[0]


def order(variants: Sequence[str], repetition: int) -> tuple[str, ...]:
    """Interleaved order for one repetition: rotated by one each time (A B, B A for two variants)."""
    shift = repetition % len(variants)
    return tuple(variants[shift:]) + tuple(variants[:shift])


def paired_median(a: Sequence[float], b: Sequence[float]) -> float:
    """The median of the differences a - b, paired within each round (what two variants differ by)."""
    return statistics.median(x - y for x, y in zip(a, b, strict=False))


def loadavg() -> list[float] | None:
    try:
        return [round(x, 2) for x in os.getloadavg()]
    except OSError:  # pragma: no cover - not on this platform
        return None


def machine(python: str, packages: Sequence[str] = ("pytest",)) -> dict:
    """nproc, OS, the child interpreter's Python and package versions, and the load average now."""
    code = (
        "import json, platform, importlib.metadata as m\n"
        "v = {}\n"
        f"for p in {list(packages)!r}:\n"
        "    try: v[p] = m.version(p)\n"
        "    except m.PackageNotFoundError: v[p] = None\n"
        "print(json.dumps({'python': platform.python_version(), 'versions': v}))\n"
    )
    out = subprocess.run([python, "-c", code], check=True, capture_output=True, text=True)
    child = json.loads(out.stdout)
    return {
        "nproc": os.cpu_count(),
        "platform": platform.platform(),
        "python": child["python"],
        "versions": child["versions"],
        "loadavg": loadavg(),
    }


def describe_machine(info: Mapping) -> str:
    versions = ", ".join(f"{k} {v}" for k, v in info["versions"].items())
    load = info.get("loadavg")
    load_text = " / ".join(f"{x:.2f}" for x in load) if load else "n/a"
    end = info.get("loadavg_end")
    if end:
        load_text += " at start, " + " / ".join(f"{x:.2f}" for x in end) + " at end"
    return (
        f"{info['nproc']} CPUs, {info['platform']}, Python {info['python']}, {versions}; "
        f"load average (1/5/15 min) {load_text}"
    )


def warn_if_busy(info: Mapping, stream=sys.stderr) -> None:
    load = info.get("loadavg")
    if load and info.get("nproc") and load[0] > 0.75 * info["nproc"]:
        print(
            f"warning: 1-minute load average {load[0]:.2f} on {info['nproc']} CPUs: wall-clock figures "
            "will be noisy; prefer the CPU ratios or rerun on a quieter machine",
            file=stream,
        )


def add_session_arguments(parser: argparse.ArgumentParser, runs_help: str = "runs per session") -> None:
    """The options every benchmark script takes."""
    parser.add_argument(
        "-n",
        "--runs",
        type=int,
        nargs="+",
        default=[1000, 10000],
        metavar="N",
        # %(default)s: a script's set_defaults (scale.py: 10000 50000, 3) shows in its --help
        help=f"numbers of {runs_help} (default: %(default)s)",
    )
    parser.add_argument(
        "-r", "--repetitions", type=int, default=5, help="timed sessions per variant and N (default %(default)s)"
    )
    parser.add_argument("--warmup", type=int, default=1, help="untimed sessions per variant and N first (default 1)")
    parser.add_argument("--python", default=sys.executable, help="interpreter with pytest and the plugin installed")
    parser.add_argument(
        "--autoload",
        action="store_true",
        help="let pytest auto-load every installed plugin (default: only pytest-probability)",
    )
    parser.add_argument("--json", action="store_true", help="print the results as JSON instead of a table")
    parser.add_argument("-q", "--quiet", action="store_true", help="no per-session progress on stderr")


def parse_session_arguments(parser: argparse.ArgumentParser, argv: Sequence[str] | None) -> argparse.Namespace:
    args = parser.parse_args(argv)
    if any(n < 1 for n in args.runs) or args.repetitions < 1 or args.warmup < 0:
        parser.error("N and repetitions must be at least 1, warmup at least 0")
    return args
