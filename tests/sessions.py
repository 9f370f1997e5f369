"""Pieces shared by the suite's pytester sessions: running one, reading its report, a clean environment.

The fixtures built on them (``clean_env``, ``no_hang``) are in ``tests/conftest.py``.
"""

from __future__ import annotations

import contextlib
import json
import re
import signal
import socket
import subprocess
import threading
from collections.abc import Iterator
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pytest
    from otlp_receiver import OtlpReceiver

ANSI = re.compile(r"\x1b\[[0-9;]*m")
SEPARATOR = re.compile(r"^=+( .* =+)?$")

#: A conftest for test sessions: fixture ``n`` is the run index; a module-level
#: ``DURATION(run)`` sets each run's measured call duration, so latency is exact.
CONFTEST = r"""
import pytest


@pytest.fixture
def n(request):
    return request.node.prob_run


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item, call):
    duration = getattr(getattr(item, "module", None), "DURATION", None)
    if duration is not None and call.when == "call" and hasattr(item, "prob_run"):
        call.duration = duration(item.prob_run)
    return (yield)
"""


@contextlib.contextmanager
def alarm(seconds: int) -> Iterator[None]:
    """Turn a hang (e.g. a gate item waiting for a verdict that never comes) into a
    TimeoutError in this test, rather than a stall of the whole suite."""
    if not hasattr(signal, "SIGALRM") or threading.current_thread() is not threading.main_thread():
        yield
        return

    def expire(signum: int, frame: object) -> None:
        raise TimeoutError(f"the test did not finish within {seconds} s")

    previous = signal.signal(signal.SIGALRM, expire)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


def section(result: object) -> list[str]:
    """Every line of the probability section, as printed (colours removed), trailing blank lines dropped."""
    lines = [ANSI.sub("", line) for line in result.outlines]  # type: ignore[attr-defined]
    start = next(i for i, line in enumerate(lines) if re.fullmatch(r"=+ probability =+", line))
    out = []
    for line in lines[start + 1 :]:
        if SEPARATOR.match(line):
            break
        out.append(line)
    while out and not out[-1].strip():
        out.pop()
    return out


#: CI variables the resource detection reads: removed so a test's session is not "in CI".
CI_VARIABLES = (
    "CI",
    "GITLAB_CI",
    "BUILDKITE",
    "CIRCLECI",
    "JENKINS_URL",
    "TF_BUILD",
    "CI_PIPELINE_ID",
    "CI_PIPELINE_URL",
    "CI_PIPELINE_NAME",
    "CI_PROJECT_PATH",
    "BUILD_ID",
    "BUILD_BUILDID",
    "SYSTEM_COLLECTIONURI",
)


def clean_export_env(
    monkeypatch: pytest.MonkeyPatch, pytester: pytest.Pytester, *, also: tuple[str, ...] = (), ini: bool = True
) -> None:
    """A known environment for a subprocess session: no OTEL_*, CI, GitHub, xdist, PYTEST_ADDOPTS or
    TRACEPARENT variables (nor those starting with a prefix in ``also``), the pytester folder never inside
    an enclosing git repository, and with ``ini`` an empty ini file there (a test may write its own over it;
    without one, a session started in a subfolder has that subfolder as its rootdir)."""
    import os

    prefixes = ("OTEL_", "GITHUB_", "PYTEST_XDIST", "PYTEST_ADDOPTS", *also)
    for name in list(os.environ):
        if name.startswith(prefixes) or name in CI_VARIABLES:
            monkeypatch.delenv(name, raising=False)
    monkeypatch.delenv("TRACEPARENT", raising=False)
    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(pytester.path.parent))
    if ini:
        pytester.makeini("[pytest]\n")


def export_to(monkeypatch: pytest.MonkeyPatch, receiver: OtlpReceiver) -> None:
    """Point the session's export at ``receiver`` through the SDK's own variables."""
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", receiver.endpoint)
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc" if receiver.protocol == "grpc" else "http/protobuf")


def closed_port() -> int:
    """A port on 127.0.0.1 nothing listens on (bound, then closed)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


#: A benchmark whose first run starts a thread that records usage after the run has ended (late usage),
#: while its second run is executing: ``bench_threads.py``, run with two runs.
LATE = """
import threading
import time
from pytest_probability import record_usage
from pytest_probability.run.context import current_run

THREADS = []
LATE_DONE = threading.Event()


def late(run):
    deadline = time.monotonic() + 20
    while current_run() is run and time.monotonic() < deadline:
        time.sleep(0.005)
    record_usage(model="late", cost=0.25)
    LATE_DONE.set()


def bench_threads(request):
    record_usage(model="on-time", cost=1.0)
    if request.node.prob_run == 1:
        thread = threading.Thread(target=late, args=(current_run(),))
        thread.start()
        THREADS.append(thread)
    elif THREADS:
        LATE_DONE.wait(20)  # the late usage arrives while this run executes


def teardown():
    for thread in THREADS:
        thread.join(20)
"""


#: Run the session's runs in two xdist workers too: ``@XDIST`` on a test of something that aggregates.
XDIST_IDS = ("serial", "xdist")
XDIST_ARGS: tuple[tuple[str, ...], ...] = ((), ("-n", "2"))


def session(
    pytester: pytest.Pytester,
    *args: str,
    ret: int | None = None,
    timeout: float = 180,
    gate_timeout: float | None = None,
    options: tuple[str, ...] = (),
    in_process: bool = False,
) -> pytest.RunResult:
    """A pytest session in a subprocess (no cache), asserting its exit status ``ret`` when given.

    ``gate_timeout``: ``-o prob_gate_timeout=`` (how long a gate item waits for its verdict under xdist);
    ``options``: a module's own, before ``args``; ``in_process``: ``pytester.runpytest`` in this process
    instead (``timeout`` then does not apply)."""
    first = ["-p", "no:cacheprovider", *options]
    if gate_timeout is not None:
        first += ["-o", f"prob_gate_timeout={gate_timeout:g}"]
    if in_process:
        result = pytester.runpytest(*first, *args)
    else:
        result = pytester.runpytest_subprocess(*first, *args, timeout=timeout)
    if ret is not None:
        assert result.ret == ret, result.stdout.str() + result.stderr.str()
    return result


def report(pytester: pytest.Pytester, name: str = "report.json") -> dict:
    """The JSON report ``name`` a session wrote in the pytester folder."""
    return json.loads((pytester.path / name).read_text(encoding="utf-8"))


def otel_lines(result: pytest.RunResult) -> list[str]:
    """The lines a session printed (out and err) that mention OpenTelemetry."""
    return [line for line in result.outlines + result.errlines if "OpenTelemetry" in line]


def command(pytester: pytest.Pytester, *args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    """``python -m pytest_probability ARGS`` in the pytester folder (``merge``, ``diff``, ``report``)."""
    import os
    import sys

    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    return subprocess.run(
        [sys.executable, "-m", "pytest_probability", *args],
        cwd=pytester.path,
        capture_output=True,
        text=True,
        timeout=timeout,
        env=env,
        check=False,
    )
