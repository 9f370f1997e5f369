"""End to end: outcome classification, row statuses, the table, cost and tokens, exit status.

Every test runs a real pytest session in-process with ``pytester`` and
asserts the exact table lines it prints (with ``prob_intervals = false``).
"""

from __future__ import annotations

import json
import re

import pytest

ANSI = re.compile(r"\x1b\[[0-9;]*m")
SEPARATOR = re.compile(r"^=+( .* =+)?$")

# ``n`` is the run number of the current run (1-based), from the public node id.
CONFTEST = r"""
import re
import pytest

@pytest.fixture
def n(request):
    return int(re.search(r"run(\d+)\]?$", request.node.name).group(1))
"""


def section(result: pytest.RunResult) -> list[str]:
    """Every line of the probability section (table, Overall, Cost, Tokens), as printed."""
    lines = result.outlines
    start = next(i for i, line in enumerate(lines) if re.fullmatch(r"=+ probability =+", ANSI.sub("", line)))
    out = []
    for line in lines[start + 1 :]:
        if SEPARATOR.match(ANSI.sub("", line)):
            break
        out.append(line)
    while out and not out[-1].strip():
        out.pop()
    return out


def records(pytester: pytest.Pytester, name: str = "report.json") -> dict[str, dict]:
    data = json.loads((pytester.path / name).read_text(encoding="utf-8"))
    assert all(record["outcome"] != "skip" for record in data["records"])  # 0.3.0: executed runs only
    return {record["nodeid"]: record for record in data["records"] + data["skipped_runs"]}


#: The table of issue 2 only: interval columns belong to the statistics tests (``bench`` writes it).
BENCH_INI = "prob_intervals = false\n"


# -- classification ----------------------------------------------------------------

CLASSIFY = """
import pytest

@pytest.fixture
def broken_setup():
    raise RuntimeError("setup broke")

@pytest.fixture
def failing_setup():
    pytest.fail("fixture gave up")

@pytest.fixture
def asserting_setup():
    assert 1 == 0, "fixture assert"

@pytest.fixture
def broken_teardown():
    yield
    raise KeyError("teardown broke")

class ServiceDown(Exception):
    pass

def bench_clean():
    pass

def bench_assert():
    assert 1 == 2, "wrong answer"

def bench_pytest_fail():
    pytest.fail("not good enough")

def bench_value_error():
    raise ValueError("bad value")

def bench_custom_error():
    raise ServiceDown("503")

def bench_fixture_setup(broken_setup):
    pass

def bench_fixture_fail(failing_setup):
    pass

def bench_fixture_assert(asserting_setup):
    pass

def bench_fixture_teardown(broken_teardown):
    pass
"""


def test_pass_fail_and_error_classification(pytester, bench):
    bench(CLASSIFY)
    result = pytester.runpytest("--prob-runs=2", "--prob-json=report.json")
    assert section(result) == [
        "  clean             2/2",
        "  assert            0/2  FAIL",
        "  pytest_fail       0/2  FAIL",
        "  value_error       0/2  ERROR",
        "  custom_error      0/2  ERROR",
        "  fixture_setup     0/2  ERROR",
        "  fixture_fail      0/2  ERROR",
        "  fixture_assert    0/2  ERROR",
        "  fixture_teardown  0/2  ERROR",
        "",
        "  Overall: 2/18 passed (11%)",
    ]
    # pytest's own view: the teardown error comes on top of a passed call.
    result.assert_outcomes(passed=4, failed=8, errors=8)
    assert result.ret == pytest.ExitCode.TESTS_FAILED

    by_id = records(pytester)
    assert len(by_id) == 18

    def run1(name):
        r = by_id[f"bench_x.py::bench_{name}::run1"]
        return r["outcome"], r["phase"], r["error_type"], r["message"]

    assert run1("clean") == ("pass", "call", None, None)
    assert run1("assert") == ("fail", "call", "AssertionError", "wrong answer")
    assert run1("pytest_fail") == ("fail", "call", "Failed", "not good enough")
    assert run1("value_error") == ("error", "call", "ValueError", "bad value")
    assert run1("custom_error") == ("error", "call", "bench_x.ServiceDown", "503")
    assert run1("fixture_setup") == ("error", "setup", "RuntimeError", "setup: setup broke")
    assert run1("fixture_fail") == ("error", "setup", "Failed", "setup: fixture gave up")
    assert run1("fixture_assert")[:3] == ("error", "setup", "AssertionError")
    assert run1("fixture_teardown") == ("error", "teardown", "KeyError", "teardown: 'teardown broke'")


# -- skip ----------------------------------------------------------------------------


SKIPS = """
import pytest

def bench_sometimes_skipped(n):
    if n in (2, 3):
        pytest.skip("no quota")

def bench_flaky_and_skipped(n):
    if n == 2:
        assert False
    if n == 3:
        pytest.skip("later")

def bench_always_skipped():
    pytest.skip("never")

@pytest.mark.skip(reason="marked")
def bench_marked_skip():
    pass

@pytest.mark.skipif(True, reason="condition")
def bench_skipif():
    pass
"""


def test_skip_is_no_sample_and_rows_say_how_many(pytester, bench):
    bench(SKIPS)
    result = pytester.runpytest("--prob-runs=4", "--prob-json=report.json")
    assert section(result) == [
        "  sometimes_skipped  2/2  (2 skipped)",
        "  flaky_and_skipped  2/3  FLAKY  (1 skipped)",
        "  always_skipped     0/0  4 SKIPPED",
        "  marked_skip        0/0  4 SKIPPED",
        "  skipif             0/0  4 SKIPPED",
        "",
        "  Overall: 4/5 passed (80%), 15 skipped",
    ]
    result.assert_outcomes(passed=4, failed=1, skipped=15)
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    skipped = records(pytester)["bench_x.py::bench_sometimes_skipped::run2"]
    assert (skipped["outcome"], skipped["message"]) == ("skip", "no quota")


def test_skip_only_session_exits_zero(pytester, bench):
    bench("import pytest\n\ndef bench_never():\n    pytest.skip('off')\n")
    result = pytester.runpytest("--prob-runs=3")
    assert section(result) == [
        "  never  0/0  3 SKIPPED",
        "",
        "  Overall: 0/0 passed (-), 3 skipped",
    ]
    assert result.ret == pytest.ExitCode.OK


# -- xfail ---------------------------------------------------------------------------


XFAIL = """
import pytest

@pytest.mark.xfail(reason="known", strict=False)
def bench_xfail_flaky(n):
    assert n % 2

@pytest.mark.xfail(reason="known", strict=True)
def bench_xfail_strict_failing():
    assert False

@pytest.mark.parametrize("k", [pytest.param("a", marks=pytest.mark.xfail(strict=True)), "b"])
def bench_param_xfail(k):
    assert k == "b"

@pytest.mark.xfail(run=False, reason="do not run")
def bench_xfail_not_run():
    raise AssertionError("never executed")

def bench_imperative_xfail(n):
    if n == 1:
        pytest.xfail("gave up")
"""


def test_xfail_cases_keep_their_true_fraction_and_the_exit_status_treats_them_as_expected(pytester, bench):
    bench(XFAIL)
    result = pytester.runpytest("--prob-runs=4", "--prob-json=report.json")
    assert section(result) == [
        "  xfail_flaky           2/4  FLAKY",
        "  xfail_strict_failing  0/4  FAIL",
        "  param_xfail::a        0/4  FAIL",
        "  param_xfail::b        4/4",
        "  xfail_not_run         0/0  4 SKIPPED",
        "  imperative_xfail      3/3  (1 skipped)",
        "",
        "  Overall: 9/19 passed (47%), 5 skipped",
    ]
    result.assert_outcomes(passed=7, xfailed=15, xpassed=2)
    assert result.ret == pytest.ExitCode.OK
    by_id = records(pytester)
    assert by_id["bench_x.py::bench_imperative_xfail::run1"]["message"] == "xfail: gave up"
    assert by_id["bench_x.py::bench_xfail_not_run::run1"]["outcome"] == "skip"


def test_strict_xfail_that_passes_fails_the_session_with_its_true_fraction(pytester, bench):
    bench(
        """
import pytest

@pytest.mark.xfail(reason="known", strict=True)
def bench_strict(n):
    assert n % 2
"""
    )
    result = pytester.runpytest("--prob-runs=4")
    assert section(result) == [
        "  strict  2/4  FLAKY",
        "",
        "  Overall: 2/4 passed (50%)",
    ]
    result.assert_outcomes(failed=2, xfailed=2)
    assert result.ret == pytest.ExitCode.TESTS_FAILED


# -- row statuses, alignment, order, colour ---------------------------------------------

STATUSES = """
import pytest

PLAN = {
    "pass": "pppp",
    "flaky": "pfpp",
    "errored": "peep",
    "flaky_errored": "pfee",
    "fail": "ffff",
    "fail_errored": "ffef",
    "error": "eeee",
}

def bench_zzz_first():
    pass

@pytest.mark.parametrize("plan", list(PLAN))
def bench_status(plan, n):
    letter = PLAN[plan][n - 1]
    if letter == "f":
        assert False, "failed"
    if letter == "e":
        raise RuntimeError("errored")

def bench_aaa_last():
    pass
"""

STATUS_TABLE = [
    "  zzz_first              4/4",
    "  status::pass           4/4",
    "  status::flaky          3/4  FLAKY",
    "  status::errored        2/4  2 ERRORED",
    "  status::flaky_errored  1/4  FLAKY (2 errored)",
    "  status::fail           0/4  FAIL",
    "  status::fail_errored   0/4  FAIL (1 errored)",
    "  status::error          0/4  ERROR",
    "  aaa_last               4/4",
    "",
    "  Overall: 18/36 passed (50%)",
]


def test_every_row_status_text_aligned_in_collection_order(pytester, bench):
    bench(STATUSES)
    result = pytester.runpytest("--prob-runs=4")
    assert section(result) == STATUS_TABLE
    assert result.ret == pytest.ExitCode.TESTS_FAILED


def test_rows_stay_in_collection_order_when_runs_execute_run_major(pytester, bench):
    bench(STATUSES)
    result = pytester.runpytest("--prob-runs=4", "--prob-transpose", "-v")
    executed = [line.split(" ")[0] for line in result.outlines if line.startswith("bench_x.py::") and " " in line]
    assert executed[:3] == [
        "bench_x.py::bench_zzz_first::run1",
        "bench_x.py::bench_status::pass[run1]",
        "bench_x.py::bench_status::flaky[run1]",
    ]
    assert section(result) == STATUS_TABLE


def test_colours_flaky_yellow_fail_and_error_red(pytester, bench):
    bench(STATUSES)
    result = pytester.runpytest("--prob-runs=4", "--color=yes")
    yellow, red, bold, reset = "\x1b[33m", "\x1b[31m", "\x1b[1m", "\x1b[0m"
    assert section(result) == [
        "  zzz_first              4/4",
        "  status::pass           4/4",
        f"{yellow}  status::flaky          3/4  FLAKY{reset}",
        f"{yellow}  status::errored        2/4  2 ERRORED{reset}",
        f"{yellow}  status::flaky_errored  1/4  FLAKY (2 errored){reset}",
        f"{red}  status::fail           0/4  FAIL{reset}",
        f"{red}  status::fail_errored   0/4  FAIL (1 errored){reset}",
        f"{red}  status::error          0/4  ERROR{reset}",
        "  aaa_last               4/4",
        "",
        f"{bold}  Overall: 18/36 passed (50%){reset}",
    ]


def test_no_colour_without_a_terminal(pytester, bench):
    bench(STATUSES)
    result = pytester.runpytest("--prob-runs=4", "--color=no")
    assert not any("\x1b[" in line for line in section(result))


# -- cost and tokens -------------------------------------------------------------------

SPEND = """
import pytest
from pytest_probability import record_cost, record_usage

@pytest.fixture
def billed_teardown():
    yield
    record_cost(0.5)

def bench_passes(billed_teardown):
    record_usage(model="m-small", input_tokens=1200, output_tokens=80, cached_input_tokens=640, cost=0.25)

def bench_fails():
    record_usage({"model": "m-large", "input_tokens": 4800, "output_tokens": 900, "cost": 0.125})
    assert False, "wrong"

def bench_errors():
    record_usage(model="m-large", input_tokens=1000, output_tokens=100, cost=0.125)
    raise ValueError("broken")

def bench_pytest_fail():
    record_cost(1)
    pytest.fail("no")

def bench_skips():
    record_usage(model="m-small", input_tokens=1, output_tokens=1, cost=2)
    pytest.skip("out of quota")

def bench_free():
    pass
"""


def test_cost_and_tokens_survive_every_outcome(pytester, bench):
    bench(SPEND)
    result = pytester.runpytest("--prob-runs=2", "--prob-json=report.json")
    assert section(result) == [
        "  passes       2/2  $1.5000",
        "  fails        0/2  $0.2500  FAIL",
        "  errors       0/2  $0.2500  ERROR",
        "  pytest_fail  0/2  $2.0000  FAIL",
        "  skips        0/0  $4.0000  2 SKIPPED",
        "  free         2/2  $0.0000",
        "",
        "  Overall: 4/10 passed (40%), 2 skipped",
        "  Cost:    $8.0000",
        "  Tokens:  m-small  2,402 in / 162 out / 1,280 cached  $4.5000",
        "           m-large  11,600 in / 2,000 out              $0.5000",
    ]
    by_id = records(pytester)
    assert by_id["bench_x.py::bench_skips::run1"]["cost"] == 2.0
    assert by_id["bench_x.py::bench_passes::run2"]["cost"] == 0.75
    assert by_id["bench_x.py::bench_fails::run1"]["usage"] == [
        {
            "model": "m-large",
            "input_tokens": 4800,
            "output_tokens": 900,
            "cached_input_tokens": 0,
            "cost": 0.125,
            "cache_creation_input_tokens": 0,
            "reasoning_tokens": 0,
            "source": "record",
            "request_model": "",
            "priced": False,
            "role": "system",
        }
    ]


def test_no_cost_column_without_spend_but_token_lines(pytester, bench):
    bench(
        """
from pytest_probability import record_usage

def bench_tokens_only(n):
    record_usage(model="local", input_tokens=1000 * n, output_tokens=7)

def bench_nothing():
    pass
"""
    )
    result = pytester.runpytest("--prob-runs=3")
    assert section(result) == [
        "  tokens_only  3/3",
        "  nothing      3/3",
        "",
        "  Overall: 6/6 passed (100%)",
        "  Tokens:  local  6,000 in / 21 out",
    ]


def test_nothing_recorded_no_cost_no_tokens(pytester, bench):
    bench("def bench_plain():\n    pass\n")
    result = pytester.runpytest("--prob-runs=2")
    assert section(result) == ["  plain  2/2", "", "  Overall: 2/2 passed (100%)"]


def test_record_usage_outside_a_run_is_a_runtime_error(pytester, bench):
    bench(
        """
import pytest
from pytest_probability import record_cost, record_usage

@pytest.fixture(scope="module")
def module_resource():
    return 1

def bench_ok(module_resource):
    record_cost(0.25)

def test_plain_test_in_a_bench_file():
    with pytest.raises(RuntimeError, match=r"^record_usage\\(\\) was called outside a benchmark run"):
        record_usage(model="m", input_tokens=1)
    with pytest.raises(RuntimeError, match=r"^record_cost\\(\\) was called outside a benchmark run"):
        record_cost(1)
"""
    )
    pytester.makepyfile(
        test_plain="""
import pytest
from pytest_probability import record_usage

def test_outside():
    with pytest.raises(RuntimeError, match="outside a benchmark run"):
        record_usage(model="m", input_tokens=1)
"""
    )
    result = pytester.runpytest("--prob-runs=2")
    result.assert_outcomes(passed=4)
    assert section(result) == [
        "  ok  2/2  $0.5000",
        "",
        "  Overall: 2/2 passed (100%)",
        "  Cost:    $0.5000",
    ]


def test_record_usage_at_import_time_is_a_collection_error_that_says_so(pytester, bench):
    bench("from pytest_probability import record_usage\nrecord_usage(model='m')\n\ndef bench_a():\n    pass\n")
    result = pytester.runpytest()
    assert result.ret == pytest.ExitCode.INTERRUPTED
    result.stdout.fnmatch_lines(["*RuntimeError: record_usage() was called outside a benchmark run*"])


# -- exit status ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        ("pass", pytest.ExitCode.OK),
        ("assert n != 3", pytest.ExitCode.TESTS_FAILED),
        ("if n == 3:\n        raise OSError('x')", pytest.ExitCode.TESTS_FAILED),
        ("if n == 3:\n        pytest.fail('x')", pytest.ExitCode.TESTS_FAILED),
        ("if n != 3:\n        pytest.skip('x')", pytest.ExitCode.OK),
    ],
    ids=["all-pass", "one-fail", "one-error", "one-pytest-fail", "pass-and-skip"],
)
def test_exit_status_follows_pytest(pytester, bench, body, expected):
    bench(f"import pytest\n\ndef bench_a(n):\n    {body}\n")
    result = pytester.runpytest("--prob-runs=5")
    assert result.ret == expected


def test_fixture_teardown_error_alone_fails_the_session(pytester, bench):
    bench(
        """
import pytest

@pytest.fixture
def td(n):
    yield
    if n == 2:
        raise RuntimeError("cleanup")

def bench_a(td):
    pass
"""
    )
    result = pytester.runpytest("--prob-runs=3")
    assert section(result)[0] == "  a  2/3  1 ERRORED"
    result.assert_outcomes(passed=3, errors=1)
    assert result.ret == pytest.ExitCode.TESTS_FAILED
