"""End to end: ``async def`` benchmarks under the real pytest-asyncio, anyio and pytest-trio (issue 21, item 1).

Each plugin runs a benchmark's runs the way it runs an ordinary async test:
each run its own item, with its own (async) fixtures; outcomes, early
stopping, retries, budgets and gates behave as with sync benchmarks, serial
and under ``-n 2``. Without an async plugin every run is an error that names
the plugins to install, never a failed run. Every session runs in a
subprocess: the plugins are loaded from their entry points, as users load them.
"""

from __future__ import annotations

from functools import partial

import pytest
from printed import table
from sessions import report, session

XDIST = pytest.mark.parametrize("xdist", [[], ["-n", "2"]], ids=["serial", "xdist"])


pytestmark = pytest.mark.usefixtures("clean_env")


run = partial(session, gate_timeout=60, options=("--prob-json=report.json",))


class Flavour:
    """How one plugin is asked to run an async benchmark: ini lines, the benchmark's mark, the sleep
    it awaits, how an async fixture is declared, and a module-scoped async fixture if it allows one."""

    def __init__(
        self, ini: str, mark: str, sleep: str, fixture: str, module_fixture: str = "", conftest: str = ""
    ) -> None:
        self.ini = ini
        self.mark = mark
        self.sleep = sleep
        self.fixture = fixture
        self.module_fixture = module_fixture
        self.conftest = conftest

    def setup(self, pytester: pytest.Pytester, body: str) -> None:
        pytester.makeini("[pytest]\nasyncio_default_fixture_loop_scope = function\n" + self.ini)
        pytester.makeconftest(self.conftest)
        module_fixture = self.module_fixture or "@pytest.fixture(scope='module')\ndef held():\n    return None"
        pytester.makepyfile(
            bench_async="import pytest\n"
            + self.sleep
            + "\n\n"
            + module_fixture
            + "\n\n"
            + body.replace("@MARK", self.mark).replace("@FIXTURE", self.fixture)
        )


ANYIO_BACKEND = """
import pytest

@pytest.fixture(scope="module")
def anyio_backend():
    return "{backend}"
"""

FLAVOURS = {
    # pytest-asyncio strict mode (its default): the marker, pytest_asyncio.fixture; a module loop held.
    "asyncio-strict": Flavour(
        "",
        "@pytest.mark.asyncio",
        "import asyncio\nimport pytest_asyncio\nsleep = asyncio.sleep",
        "@pytest_asyncio.fixture",
        "@pytest_asyncio.fixture(scope='module', loop_scope='module')\n"
        "async def held():\n    yield asyncio.get_running_loop()",
    ),
    # auto mode: no marker, plain @pytest.fixture async fixtures.
    "asyncio-auto": Flavour(
        "asyncio_mode = auto\n",
        "",
        "import asyncio\nimport pytest_asyncio\nsleep = asyncio.sleep",
        "@pytest.fixture",
        "@pytest_asyncio.fixture(scope='module', loop_scope='module')\nasync def held():\n    yield",
    ),
    # anyio's marker alone (no anyio_backend in the signature), on each backend; a module-scoped async
    # generator fixture keeps anyio's runner task (and its context) alive across runs.
    "anyio-asyncio": Flavour(
        "",
        "@pytest.mark.anyio",
        "import anyio\nsleep = anyio.sleep",
        "@pytest.fixture",
        "@pytest.fixture(scope='module')\nasync def held():\n    yield",
        ANYIO_BACKEND.format(backend="asyncio"),
    ),
    "anyio-trio": Flavour(
        "",
        "@pytest.mark.anyio",
        "import anyio\nsleep = anyio.sleep",
        "@pytest.fixture",
        "@pytest.fixture(scope='module')\nasync def held():\n    yield",
        ANYIO_BACKEND.format(backend="trio"),
    ),
    # pytest-trio: its marker, or trio_mode (then no marker). Trio fixtures must be function-scoped.
    "trio-marker": Flavour("", "@pytest.mark.trio", "import trio\nsleep = trio.sleep", "@pytest.fixture"),
    "trio-mode": Flavour("trio_mode = true\n", "", "import trio\nsleep = trio.sleep", "@pytest.fixture"),
}

FLAVOUR = pytest.mark.parametrize("flavour", list(FLAVOURS))

OUTCOMES = """
from pytest_probability import record_usage


@FIXTURE
async def per_run(request):
    await sleep(0)
    yield request.node.nodeid  # set up for this run, torn down after it
    await sleep(0)


@pytest.mark.probability(runs=3)
@MARK
@pytest.mark.parametrize("case", ["ok", "wrong", "broken"])
async def bench_async(case, per_run, held, request):
    await sleep(0)
    record_usage(model="m", input_tokens=1, output_tokens=1, cost=0.01)
    assert per_run == request.node.nodeid  # its own fixture value
    if case == "wrong":
        assert False, "a wrong answer"
    if case == "broken":
        raise ValueError("a provider fault")
"""


@FLAVOUR
@XDIST
def test_each_run_is_its_own_item_with_its_own_async_fixtures_and_true_outcomes(pytester, flavour, xdist):
    FLAVOURS[flavour].setup(pytester, OUTCOMES)
    result = run(pytester, *xdist, "--prob-runs=3")
    assert table(result) == [
        "async::ok 3/3 $0.0300",
        "async::wrong 0/3 $0.0300 FAIL",
        "async::broken 0/3 $0.0300 ERROR",
    ]
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    data = report(pytester)
    records = sorted(data["records"], key=lambda r: r["nodeid"])
    assert [r["nodeid"] for r in records] == sorted(
        f"bench_async.py::bench_async::{case}[run{n}]" for case in ("ok", "wrong", "broken") for n in (1, 2, 3)
    )
    by_case = {case: [r for r in records if r["case"] == f"async::{case}"] for case in ("ok", "wrong", "broken")}
    assert [r["outcome"] for r in by_case["ok"]] == ["pass"] * 3
    assert [(r["outcome"], r["error_type"]) for r in by_case["wrong"]] == [("fail", "AssertionError")] * 3
    assert all("a wrong answer" in r["message"] for r in by_case["wrong"])
    assert [(r["outcome"], r["error_type"], r["message"]) for r in by_case["broken"]] == [
        ("error", "ValueError", "a provider fault")
    ] * 3
    # Each run's usage is its own, also where one task awaits every run (anyio): none is late.
    assert [r["cost"] for r in records] == [pytest.approx(0.01)] * 9
    assert "had ended" not in result.stdout.str()
    assert {row["label"]: row["status"] for row in data["rows"]} == {
        "async::ok": "pass",
        "async::wrong": "fail",
        "async::broken": "error",
    }


SPEND = """
import time

from pytest_probability import record_usage

PAUSE = {pause}
ATTEMPTS = {{}}


@pytest.mark.probability(runs=40, min_rate=0.5)
@MARK
async def bench_gated():
    await sleep(PAUSE)


@pytest.mark.probability(runs=2)
@MARK
async def bench_provider(request):
    await sleep(0)
    ATTEMPTS[request.node.nodeid] = ATTEMPTS.get(request.node.nodeid, 0) + 1
    if ATTEMPTS[request.node.nodeid] == 1:
        raise ConnectionError("connection reset")  # the first attempt of each run: retried


@pytest.mark.probability(runs=2)
@MARK
async def bench_unlisted():
    await sleep(0)
    raise ValueError("not a provider fault")  # not listed: never retried


@pytest.mark.probability(runs=20)
@MARK
async def bench_spend():
    await sleep(PAUSE)
    record_usage(model="m", input_tokens=1, output_tokens=1, cost=0.1)
"""


@FLAVOUR
@XDIST
def test_early_stopping_retries_budgets_and_gates_work_on_async_benchmarks(pytester, flavour, xdist):
    # Under xdist, runs long against the controller's turnaround keep the overshoot past a decision small.
    FLAVOURS[flavour].setup(pytester, SPEND.format(pause=0.05 if xdist else 0))
    result = run(
        pytester,
        *xdist,
        "--prob-stop=curtail",
        "--prob-retry=1",
        "--prob-retry-on=ConnectionError",
        "-o",
        "prob_retry_backoff=0",
        "--prob-max-cost=0.5",
        "-rA",
    )
    data = report(pytester)
    rows = {row["label"]: row for row in data["rows"]}
    # The gate passes, decided early: runs were saved (curtail), and its gate item passed.
    gated = rows["gated"]
    assert gated["verdict"] == "pass" and gated["fails"] == gated["errors"] == 0
    assert gated["stopped"]["cause"] == "decided" and gated["stopped"]["runs_saved"] > 0
    result.stdout.fnmatch_lines(["PASSED bench_async.py::bench_gated::gate"])
    assert data["stopping"]["runs_saved"] == gated["stopped"]["runs_saved"]
    # A listed provider fault is retried within the run (one record, two attempts), even from inside
    # pytest-trio's exception group; an unlisted one is not.
    records = {r["nodeid"].split("::", 1)[1]: r for r in data["records"]}
    for run_id in ("bench_provider::run1", "bench_provider::run2"):
        assert (records[run_id]["outcome"], records[run_id]["attempts"]) == ("pass", 2)
        assert records[run_id]["retries"][0]["error_type"] == "ConnectionError"
    for run_id in ("bench_unlisted::run1", "bench_unlisted::run2"):
        assert (records[run_id]["outcome"], records[run_id]["attempts"], records[run_id]["error_type"]) == (
            "error",
            1,
            "ValueError",
        )
    # The budget stops new runs once $0.50 is spent.
    spend = rows["spend"]
    ran = spend["total"] + spend["skipped"]
    assert 5 <= ran <= (15 if xdist else 5)
    assert spend["stopped"]["cause"] == "budget" and data["budget"]["reached"] == "cost"
    assert data["budget"]["spent"]["cost"] == pytest.approx(0.1 * ran)
    assert result.ret == pytest.ExitCode.TESTS_FAILED  # bench_unlisted's errors


def test_the_gate_item_of_an_async_benchmark_fails_with_its_runs(pytester):
    """A gated async case whose runs fail: the runs are xfailed, its gate item fails the session."""
    FLAVOURS["trio-mode"].setup(
        pytester,
        """
@pytest.mark.probability(runs=4, min_rate=0.9)
async def bench_wrong():
    await sleep(0)
    assert False, "wrong"
""",
    )
    result = run(pytester, "-rA")
    assert table(result) == ["wrong 0/4 FAIL"]
    outcomes = result.parseoutcomes()
    assert (outcomes.get("xfailed"), outcomes.get("failed")) == (4, 1)
    result.stdout.fnmatch_lines(["FAILED bench_async.py::bench_wrong::gate*"])
    assert report(pytester)["rows"][0]["verdict"] == "fail"


# -- pytest-asyncio's loop scopes ------------------------------------------------------------

LOOPS = """
import asyncio

import pytest
import pytest_asyncio

LOOPS = []


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def module_loop():
    return asyncio.get_running_loop()


@pytest_asyncio.fixture
async def function_loop():
    return asyncio.get_running_loop()


@pytest.mark.probability(runs=3)
@pytest.mark.asyncio
async def bench_function_loop(module_loop, function_loop):
    loop = asyncio.get_running_loop()
    assert loop is function_loop and loop is not module_loop
    assert all(loop is not seen for seen in LOOPS)  # a fresh loop for each run
    LOOPS.append(loop)


@pytest.mark.probability(runs=3)
@pytest.mark.asyncio(loop_scope="module")
async def bench_module_loop(module_loop):
    assert asyncio.get_running_loop() is module_loop  # one loop for every run of the module


@pytest.mark.probability(runs=2)
@pytest.mark.parametrize("scope", [pytest.param("function", marks=pytest.mark.asyncio),
                                   pytest.param("module", marks=pytest.mark.asyncio(loop_scope="module"))])
async def bench_per_case(scope, module_loop):  # each case marked by its parametrization only
    assert (asyncio.get_running_loop() is module_loop) == (scope == "module")


class BenchInAClass:
    @pytest.mark.probability(runs=2)
    @pytest.mark.asyncio(loop_scope="module")
    async def bench_method(self, module_loop):
        assert asyncio.get_running_loop() is module_loop
"""


@XDIST
def test_pytest_asyncio_loop_scopes_apply_to_each_run(pytester, xdist):
    pytester.makeini("[pytest]\nasyncio_default_fixture_loop_scope = function\n")
    pytester.makepyfile(bench_loops=LOOPS)
    result = run(pytester, *xdist)
    assert table(result) == [
        "function_loop 3/3",
        "module_loop 3/3",
        "per_case::function 2/2",
        "per_case::module 2/2",
        "BenchInAClass.method 2/2",
    ]
    assert result.ret == pytest.ExitCode.OK


SESSION_LOOP = """
import asyncio

import pytest
import pytest_asyncio


@pytest_asyncio.fixture(scope="session", loop_scope="session")
async def session_loop():
    return asyncio.get_running_loop()
"""


@XDIST
def test_a_session_loop_from_the_ini_default_and_auto_mode(pytester, xdist):
    """``asyncio_default_test_loop_scope = session`` in auto mode: every run, of both files, in the
    session fixture's loop; a plain async fixture of the function scope is set up in it too."""
    pytester.makeini(
        "[pytest]\nasyncio_mode = auto\nasyncio_default_test_loop_scope = session\n"
        "asyncio_default_fixture_loop_scope = session\n"
    )
    pytester.makeconftest(SESSION_LOOP)
    body = """
import asyncio
import pytest

@pytest.fixture
async def fresh():
    return asyncio.get_running_loop()

@pytest.mark.probability(runs=3)
async def bench_{name}(session_loop, fresh):
    assert asyncio.get_running_loop() is session_loop is fresh
"""
    pytester.makepyfile(bench_one=body.format(name="one"), bench_two=body.format(name="two"))
    result = run(pytester, *xdist)
    assert table(result) == ["one 3/3", "two 3/3"]
    assert result.ret == pytest.ExitCode.OK


# -- no plugin to run it -----------------------------------------------------------------------

UNRUN = """
import pytest


async def bench_plain():
    pass


@pytest.mark.probability(runs=2, min_rate=0.5)
async def bench_gated():
    pass


@pytest.mark.parametrize("case", ["a", "b"])
async def bench_cases(case):
    assert False  # never reached: no run is a failed run
"""

NO_PLUGIN = ("-p", "no:asyncio", "-p", "no:anyio", "-p", "no:trio")


@pytest.mark.parametrize("plugins", [NO_PLUGIN, ()], ids=["none-loaded", "loaded-none-asked"])
@XDIST
def test_an_async_benchmark_no_plugin_runs_is_an_error_that_names_the_plugins(pytester, plugins, xdist):
    """With no async plugin, or with all three loaded but none asked to run it (strict modes,
    no marker), every run is an error, never a failed (nor skipped) run."""
    pytester.makeini("[pytest]\n")
    pytester.makepyfile(bench_unrun=UNRUN)
    result = run(pytester, *xdist, "--prob-runs=2", *plugins)
    assert table(result) == ["plain 0/2 ERROR", "gated 0/2 ERROR", "cases::a 0/2 ERROR", "cases::b 0/2 ERROR"]
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    data = report(pytester)
    assert len(data["records"]) == 8
    for record in data["records"]:
        assert (record["outcome"], record["error_type"]) == ("error", "TypeError")
        function = record["nodeid"].split("::")[1]
        assert record["message"].startswith(
            f"benchmark {function!r} is a coroutine function and no async plugin ran it"
        )
        for name in (
            "pytest-asyncio",
            "anyio",
            "pytest-trio",
            "@pytest.mark.asyncio",
            "@pytest.mark.anyio",
            "@pytest.mark.trio",
            "auto mode",
        ):
            assert name in record["message"]
    assert {row["status"] for row in data["rows"]} == {"error"}
    assert "natively supported" not in result.stdout.str()  # pytest's own message: a failure or a skip
    outcomes = result.parseoutcomes()
    # pytest reports the 8 errored runs as failed calls, and the gate item fails with them.
    assert outcomes.get("failed") == 9 and outcomes.get("skipped") is None and outcomes.get("passed") is None
    result.stdout.fnmatch_lines(["FAILED bench_unrun.py::bench_gated::gate*"])
