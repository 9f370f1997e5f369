"""End to end: the order and selection of gate items: after their runs whatever order a conftest gives, a gate
item selected alone brings its runs (the rest of the gates' tests: test_gates.py)."""

from __future__ import annotations

import pytest
from gate_sessions import (
    GATES,
    PASSING_GATE,
    XDIST,
    check_gates_session,
    gates_section,
    subprocess_run,
    verbose_outcomes,
)
from sessions import CONFTEST, report

pytestmark = pytest.mark.usefixtures("no_hang")
HANG_LIMIT = 80
#: What ``bench()`` writes when given no source (tests/conftest.py).
BENCH = GATES


# -- order and selection of gate items --------------------------------------------------------------

REVERSING_CONFTESTS = {
    "trylast": CONFTEST
    + """

@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(items):
    items.reverse()  # as a random-order plugin might
""",
    # a wrapper that reorders after every other implementation (as --ff does)
    "wrapper": CONFTEST
    + """

@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_collection_modifyitems(items):
    yield
    items.reverse()
""",
}


@pytest.mark.parametrize("hook", list(REVERSING_CONFTESTS))
@pytest.mark.parametrize("xdist", XDIST)
def test_gate_items_run_after_their_runs_whatever_order_a_conftest_gives(
    pytester: pytest.Pytester, bench, xdist, hook
) -> None:
    bench()
    pytester.makeconftest(REVERSING_CONFTESTS[hook])
    result = subprocess_run(pytester, "-v", "--prob-json=report.json", *xdist)
    check_gates_session(result, pytester)
    assert "no run of this case reported" not in result.stdout.str()
    if not xdist:  # the order the items ran in: each gate right after the last of its (reversed) runs
        order = list(verbose_outcomes(result))
        assert order[:3] == [
            "bench_x.py::bench_count::run5",
            "bench_x.py::bench_count::run4",
            "bench_x.py::bench_count::run3",
        ]
        assert order.index("bench_x.py::bench_count::gate") == order.index("bench_x.py::bench_count::run1") + 1
        assert order.index("bench_x.py::bench_solid::gate") == len(order) - 1


@pytest.mark.parametrize("xdist", XDIST)
def test_selecting_a_gate_item_alone_brings_its_runs(pytester: pytest.Pytester, bench, xdist) -> None:
    bench()
    result = subprocess_run(
        pytester,
        "-v",
        "--prob-json=report.json",
        *xdist,
        "bench_x.py::bench_mixed::unsure[gate]",
        "bench_x.py::bench_count::gate",
    )
    outcomes = verbose_outcomes(result)
    assert sorted(outcomes) == sorted(
        [
            *(f"bench_x.py::bench_mixed::unsure[run{i}]" for i in range(1, 11)),
            "bench_x.py::bench_mixed::unsure[gate]",
            *(f"bench_x.py::bench_count::run{i}" for i in range(1, 6)),
            "bench_x.py::bench_count::gate",
        ]
    )  # not the ungated mixed::free next to it
    assert outcomes["bench_x.py::bench_count::gate"] == "PASSED"
    assert outcomes["bench_x.py::bench_mixed::unsure[gate]"] == "FAILED"
    assert "no run of this case reported" not in result.stdout.str()
    assert gates_section(result) == [
        "  Gates:   1 passed, 0 failed, 1 undecided (undecided counts as fail)",
        "    mixed::unsure  7/10  [35%,  93%]  >= 50%       UNDECIDED",
        "    count           4/5  [28%,  99%]  >= 4 passes  PASS",
    ]
    assert report(pytester)["gates"] == {"passed": 1, "failed": 0, "undecided": 1, "skipped": 0}


@pytest.mark.parametrize("xdist", XDIST)
def test_a_gate_item_selected_by_k_without_its_runs_says_so(pytester: pytest.Pytester, bench, xdist) -> None:
    """-k comes after a gate brings its runs: the gate cannot decide, and says what to select
    (--deselect of every run: test_gate_item_without_its_runs_fails_at_once)."""
    from pytest_probability.decide.book import DESELECTED_TEXT

    bench(PASSING_GATE)
    result = subprocess_run(pytester, "-v", *xdist, "-k", "gate")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    outcomes = verbose_outcomes(result)
    assert outcomes["bench_x.py::bench_good_enough::gate"] == "FAILED"
    assert not [name for name in outcomes if "bench_good_enough::run" in name]
    out = result.stdout.str()
    assert f"gate of good_enough: {DESELECTED_TEXT}" in out
    assert "no run of this case reported" not in out


def test_selecting_a_gate_item_with_some_of_its_runs_runs_those(pytester: pytest.Pytester, bench) -> None:
    bench(PASSING_GATE)
    result = pytester.runpytest(
        "-p", "no:cacheprovider", "-v", "bench_x.py::bench_good_enough::run1", "bench_x.py::bench_good_enough::gate"
    )
    assert list(verbose_outcomes(result)) == [
        "bench_x.py::bench_good_enough::run1",
        "bench_x.py::bench_good_enough::gate",
    ]
