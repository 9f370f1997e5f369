"""End to end: bad options, ini values and markers are clear errors that name the value, before any run."""

from __future__ import annotations

import pytest

SIDE_EFFECT = """
from pathlib import Path

def bench_spends_money():
    Path(__file__).with_name("ran.txt").write_text("spent")
"""


@pytest.fixture
def spender(pytester: pytest.Pytester) -> pytest.Pytester:
    pytester.makepyfile(bench_x=SIDE_EFFECT)
    return pytester


def assert_nothing_ran(pytester: pytest.Pytester) -> None:
    assert not (pytester.path / "ran.txt").exists()


# -- command line --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("argument", "message"),
    [
        ("--prob-runs=0", "--prob-runs must be at least 1, got 0"),
        ("--prob-runs=-3", "--prob-runs must be at least 1, got -3"),
        ("--prob-runs=abc", "--prob-runs must be a positive whole number, got 'abc'"),
        ("--prob-runs=2.5", "--prob-runs must be a positive whole number, got '2.5'"),
        ("--prob-runs=", "--prob-runs must be a positive whole number, got ''"),
        ("--prob-delay=-1", "--prob-delay must be zero or more seconds, got '-1'"),
        ("--prob-delay=soon", "--prob-delay must be a number of seconds, got 'soon'"),
        ("--prob-delay=nan", "--prob-delay must be zero or more seconds, got 'nan'"),
        ("--prob-delay=inf", "--prob-delay must be zero or more seconds, got 'inf'"),
    ],
)
def test_bad_option_is_a_usage_error_naming_the_value(spender, argument, message):
    result = spender.runpytest(argument)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    option = argument.split("=")[0]
    result.stderr.fnmatch_lines([f"*argument {option}: {message}"])
    assert_nothing_ran(spender)


def test_bad_option_with_a_space_separated_negative_value(spender):
    result = spender.runpytest("--prob-runs", "-3")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*argument --prob-runs: --prob-runs must be at least 1, got -3"])
    assert_nothing_ran(spender)


# -- ini keys -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("ini", "message"),
    [
        ("prob_runs = x", "ini prob_runs must be a positive whole number, got 'x'"),
        ("prob_runs = 0", "ini prob_runs must be at least 1, got 0"),
        ("prob_runs = -2", "ini prob_runs must be at least 1, got -2"),
        ("prob_delay = -0.5", "ini prob_delay must be zero or more seconds, got '-0.5'"),
        ("prob_delay = later", "ini prob_delay must be a number of seconds, got 'later'"),
    ],
)
def test_bad_ini_value_is_a_usage_error_naming_the_value(spender, ini, message):
    spender.makeini(f"[pytest]\n{ini}\n")
    result = spender.runpytest()
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([f"ERROR: {message}"])
    assert_nothing_ran(spender)


def test_command_line_does_not_hide_a_bad_ini_value(spender):
    spender.makeini("[pytest]\nprob_runs = x\n")
    result = spender.runpytest("--prob-runs=2")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["ERROR: ini prob_runs must be a positive whole number, got 'x'"])
    assert_nothing_ran(spender)


# -- the probability marker -------------------------------------------------------------


@pytest.mark.parametrize(
    ("decorator", "message"),
    [
        (
            "@pytest.mark.probability(run=3)",
            "@pytest.mark.probability got an unknown keyword 'run' (known: *runs*)",
        ),
        (
            "@pytest.mark.probability(runs=2, colour='red')",
            "@pytest.mark.probability got an unknown keyword 'colour' (known: *runs*)",
        ),
        ("@pytest.mark.probability(5)", "@pytest.mark.probability takes keyword arguments only, got positional (5,)"),
        ("@pytest.mark.probability(runs=0)", "probability(runs=...) must be at least 1, got 0"),
        ("@pytest.mark.probability(runs=-1)", "probability(runs=...) must be at least 1, got -1"),
        ("@pytest.mark.probability(runs='many')", "probability(runs=...) must be a positive whole number, got 'many'"),
        ("@pytest.mark.probability(runs=True)", "probability(runs=...) must be a positive whole number, got True"),
    ],
)
def test_bad_marker_is_a_collection_error_naming_the_value(pytester, decorator, message):
    pytester.makepyfile(
        bench_x=f"""
import pytest
from pathlib import Path

{decorator}
def bench_marked():
    Path(__file__).with_name("ran.txt").write_text("spent")

def bench_fine():
    Path(__file__).with_name("ran.txt").write_text("spent")
"""
    )
    result = pytester.runpytest()
    assert result.ret == pytest.ExitCode.INTERRUPTED
    result.stdout.fnmatch_lines([f"*bench_x.py::bench_marked: {message}*", "*Interrupted: 1 error during collection*"])
    assert_nothing_ran(pytester)


def test_bad_marker_on_a_pytest_param_is_a_collection_error(pytester):
    pytester.makepyfile(
        bench_x="""
import pytest

@pytest.mark.parametrize("k", [1, pytest.param(2, marks=pytest.mark.probability(rusn=2))])
def bench_p(k):
    pass
"""
    )
    result = pytester.runpytest()
    assert result.ret == pytest.ExitCode.INTERRUPTED
    result.stdout.fnmatch_lines(["*bench_x.py::bench_p: @pytest.mark.probability got an unknown keyword 'rusn'*"])


def test_a_bad_marker_is_an_error_even_when_the_command_line_sets_runs(pytester):
    pytester.makepyfile(bench_x="import pytest\n\n@pytest.mark.probability(runs=0)\ndef bench_a():\n    pass\n")
    result = pytester.runpytest("--prob-runs=2")
    assert result.ret == pytest.ExitCode.INTERRUPTED
    result.stdout.fnmatch_lines(["*probability(runs=...) must be at least 1, got 0*"])


# -- benchmarks pytest cannot call ---------------------------------------------------------


def test_a_generator_benchmark_is_an_error_run_that_says_why(pytester):
    pytester.makepyfile(bench_x="def bench_gen():\n    yield 1\n")
    result = pytester.runpytest("--prob-runs=2", "--prob-no-intervals")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(["*TypeError: benchmark 'bench_gen' is a generator function*", "  gen  0/2  ERROR"])


def test_a_coroutine_benchmark_without_an_async_plugin_is_an_error_run_that_says_why(pytester):
    pytester.makepyfile(bench_x="async def bench_co():\n    pass\n")
    result = pytester.runpytest("--prob-runs=2", "--prob-no-intervals", "-p", "no:asyncio", "-p", "no:anyio")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(
        ["*TypeError: benchmark 'bench_co' is a coroutine function and no async plugin ran it*"]
    )
    result.stdout.fnmatch_lines(["  co  0/2  ERROR"])


@pytest.mark.parametrize("key", ["prob_transpose", "prob_intervals", "prob_latency", "prob_gate_items"])
def test_a_bad_boolean_ini_key_is_named(pytester: pytest.Pytester, key: str) -> None:
    pytester.makeini(f"[pytest]\n{key} = perhaps\n")
    pytester.makepyfile(bench_x="def bench_ok():\n    pass\n")
    result = pytester.runpytest()
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([f"*ini {key} must be true or false, got 'perhaps'*"])


def test_a_bad_ini_metric_is_named_as_the_ini_key(pytester: pytest.Pytester) -> None:
    pytester.makeini("[pytest]\nprob_metric = pass^0\n")
    pytester.makepyfile(bench_x="def bench_ok():\n    pass\n")
    result = pytester.runpytest()
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*ini prob_metric*pass^0*"])
