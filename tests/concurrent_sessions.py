"""Pieces shared by the end-to-end tests of concurrent runs (``--prob-concurrency``, issue 44).

Each test session writes a ``probe.py`` beside its benchmarks: it counts the runs in flight in its process,
and its barriers hold each run until ``target`` runs are in flight together, so that a session that runs
one at a time fails (the barrier times out with an error naming the count) instead of passing slowly.
Every execution of a benchmark appends its node id and a token unique to it to ``executions.log``, which
the tests read to check that no run executed twice and that each run's output, usage and record are its
own. Sessions run in subprocesses, with the async plugins loaded from their entry points as users load
them; ``flavour`` says which plugin awaits the benchmark (or ``sync``: threads).
"""

from __future__ import annotations

import json
import os
from functools import partial
from pathlib import Path
from typing import Any

import pytest
from sessions import session

PROBE = r"""
import itertools
import json
import logging
import os
import sys
import threading
import time

LOCK = threading.Lock()
STATE = {"in_flight": 0, "peak": 0}
TOKENS = itertools.count(1)
LOG = os.path.join(os.path.dirname(__file__), "executions.log")


def enter(nodeid_hint):
    with LOCK:
        STATE["in_flight"] += 1
        STATE["peak"] = max(STATE["peak"], STATE["in_flight"])
        token = f"{os.getpid()}-{next(TOKENS)}"
    with open(LOG, "a", encoding="utf-8") as handle:
        handle.write(json.dumps({"case": nodeid_hint, "token": token, "pid": os.getpid()}) + "\n")
    return token


def leave():
    with LOCK:
        STATE["in_flight"] -= 1


def reached(target):
    return STATE["peak"] >= target


def timed_out(target):
    return RuntimeError(f"only {STATE['in_flight']} run(s) in flight at once, never {target}")


TIMEOUT = float(os.environ.get("PROBE_TIMEOUT", "20"))


def barrier_sync(target, timeout=TIMEOUT):
    deadline = time.monotonic() + timeout
    while not reached(target):
        if time.monotonic() > deadline:
            raise timed_out(target)
        time.sleep(0.002)


async def barrier(target, sleep, timeout=TIMEOUT):
    deadline = time.monotonic() + timeout
    while not reached(target):
        if time.monotonic() > deadline:
            raise timed_out(target)
        await sleep(0.002)


def speak(case, token):
    print(f"out {case} {token}")
    print(f"err {case} {token}", file=sys.stderr)
    logging.getLogger("bench").warning("log %s %s", case, token)


def pytest_unconfigure(config):
    path = os.path.join(os.path.dirname(__file__), f"peak-{os.getpid()}.json")
    with open(path, "w", encoding="utf-8") as handle:
        json.dump(STATE, handle)
"""

#: How each flavour declares an async benchmark, and what it awaits. ``loop`` is pytest-asyncio's loop
#: scope (a loop per call runs in windows; a wider one slides).
FLAVOURS = {
    "sync": {"ini": "", "mark": "", "header": "import time\n", "async": False},
    "asyncio": {"ini": "", "mark": "@pytest.mark.asyncio", "header": "import asyncio\nsleep = asyncio.sleep\n"},
    "asyncio-module-loop": {
        "ini": "",
        "mark": "@pytest.mark.asyncio(loop_scope='module')",
        "header": "import asyncio\nsleep = asyncio.sleep\n",
    },
    "anyio-asyncio": {
        "ini": "",
        "mark": "@pytest.mark.anyio",
        "header": "import anyio\nsleep = anyio.sleep\n",
        "conftest": "import pytest\n\n@pytest.fixture(scope='module')\ndef anyio_backend():\n    return 'asyncio'\n",
    },
    "anyio-trio": {
        "ini": "",
        "mark": "@pytest.mark.anyio",
        "header": "import anyio\nsleep = anyio.sleep\n",
        "conftest": "import pytest\n\n@pytest.fixture(scope='module')\ndef anyio_backend():\n    return 'trio'\n",
    },
    "trio": {"ini": "", "mark": "@pytest.mark.trio", "header": "import trio\nsleep = trio.sleep\n"},
}

FLAVOUR = pytest.mark.parametrize("flavour", list(FLAVOURS))


def xdist_version() -> tuple[int, ...]:
    from importlib.metadata import version

    return tuple(int(part) for part in version("pytest-xdist").split(".")[:2])


def needs_worker_queue(xdist: list[str]) -> None:
    """Skip an xdist session that asserts runs in flight together on a pytest-xdist that keeps a worker's
    queue out of reach (before 3.5): there runs execute one at a time in each worker, which
    ``test_concurrency.py::test_an_old_xdist_runs_one_at_a_time_with_a_warning`` checks."""
    if xdist and xdist_version() < (3, 5):
        pytest.skip("pytest-xdist < 3.5: a worker cannot see which runs it will execute")


XDIST = pytest.mark.parametrize("xdist", [[], ["-n", "2"]], ids=["serial", "xdist"])


def benchmark(flavour: str, body: str, *, params: str = '"case", ["a", "b"]', marks: str = "", target: int = 1) -> str:
    """A benchmark file of ``flavour`` whose function is ``body`` (an indented block that may use ``case``,
    ``token``, ``TARGET`` and, when async, ``sleep`` and ``await barrier``)."""
    spec = FLAVOURS[flavour]
    is_async = spec.get("async", True)
    definition = "async def" if is_async else "def"
    return (
        "import logging\nimport pytest\nimport probe\n"
        "from pytest_probability import current_run, record_io, record_score, record_usage\n"
        + spec["header"]
        + f"TARGET = {target}\n"
        + "\n\n"
        + (spec["mark"] + "\n" if spec["mark"] else "")
        + marks
        + f"@pytest.mark.parametrize({params})\n"
        + f"{definition} bench_it(case):\n"
        + body
    )


def setup(pytester: pytest.Pytester, flavour: str, body: str, **kwargs: Any) -> None:
    spec = FLAVOURS[flavour]
    pytester.makeini("[pytest]\nasyncio_default_fixture_loop_scope = function\njunit_logging = all\n" + spec["ini"])
    pytester.makepyfile(probe=PROBE, bench_it=benchmark(flavour, body, **kwargs))
    pytester.makeconftest("pytest_plugins = ['probe']\n" + spec.get("conftest", ""))


#: The body most tests use: wait until TARGET runs are in flight, then a short call that speaks, records
#: its token as its transcript, and charges usage named after its case.
BODY = {
    True: """    token = probe.enter(case)
    try:
        await probe.barrier(TARGET, sleep)
        probe.speak(case, token)
        record_io(prompt=case, output=token, run=current_run().nodeid)
        record_usage(model=f"m-{case}", input_tokens=1, output_tokens=1, cost=0.01)
        await sleep(0.05)
    finally:
        probe.leave()
    assert case != "b", f"wrong answer {token}"
""",
    False: """    token = probe.enter(case)
    try:
        probe.barrier_sync(TARGET)
        probe.speak(case, token)
        record_io(prompt=case, output=token, run=current_run().nodeid)
        record_usage(model=f"m-{case}", input_tokens=1, output_tokens=1, cost=0.01)
        time.sleep(0.05)
    finally:
        probe.leave()
    assert case != "b", f"wrong answer {token}"
""",
}


def body(flavour: str) -> str:
    return BODY[FLAVOURS[flavour].get("async", True)]


#: A session of these tests: a gate item waits a minute at most for its verdict.
run = partial(session, gate_timeout=60)


def executions(pytester: pytest.Pytester) -> list[dict]:
    path = Path(pytester.path, "executions.log")
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def peaks(pytester: pytest.Pytester) -> list[int]:
    """The most runs in flight at once in each process that ran benchmarks."""
    return [json.loads(p.read_text())["peak"] for p in pytester.path.glob("peak-*.json") if os.path.getsize(p)]
