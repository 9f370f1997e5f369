"""End to end: gates, their items, verdicts and exit status, serial and under pytest-xdist.

This file: verdicts, gate items and the gates section, where the bar comes from, --prob-no-gate-items, JUnit
XML, --lf and --prob-transpose. The rest of the gates' tests are in test_gate_*.py, a topic each.

Serial sessions run in-process with ``pytester``; xdist and OpenTelemetry
sessions run pytest in a subprocess with a timeout (a gate item that waits
forever for its verdict must fail the test, not hang the suite). The xdist
tests run with whichever pytest runs this file: run it with pytest 8 too.

Outcomes depend only on the run number (fixture ``n``), never on process
state, so a case's fraction is the same whichever worker runs which run;
latencies come from ``DURATION(n)`` in the benchmark module (see CONFTEST).
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

import pytest
from gate_sessions import (
    GATES,
    GATES_SECTION,
    PASSING_GATE,
    check_gates_session,
    gates_section,
    plain,
    subprocess_run,
    verbose_outcomes,
)
from sessions import report, section

pytestmark = pytest.mark.usefixtures("no_hang")
HANG_LIMIT = 80
#: What ``bench()`` writes when given no source (tests/conftest.py).
BENCH = GATES


# -- verdicts, gate items and the gates section ------------------------------------------


def test_gate_items_verdicts_and_section(pytester: pytest.Pytester, bench) -> None:
    bench()
    result = pytester.runpytest("-p", "no:cacheprovider", "-v", "--prob-json=report.json")
    check_gates_session(result, pytester)
    text = "\n".join(plain(result))
    assert "gate of broken: FAIL: 3/10 passes, 0.95 exact interval [6.7%, 65.2%] vs bar 0.9: FAIL" in text
    assert "gate of mixed::unsure: UNDECIDED: 7/10 passes, 0.95 exact interval [34.8%, 93.3%] vs bar 0.5" in text


def test_gate_items_under_xdist_default_scheduling(pytester: pytest.Pytester, bench) -> None:
    """Gate items under ``-n 2`` (load scheduling): the same verdicts as serial, no hang."""
    bench()
    result = subprocess_run(pytester, "-n", "2", "-v", "--prob-json=report.json")
    check_gates_session(result, pytester)
    assert re.search(r"\[gw\d\] \[\s*\d+%\] PASSED bench_x.py::bench_solid::gate", result.stdout.str())


@pytest.mark.parametrize("args", [[], ["--prob-transpose"]], ids=["in-order", "transpose"])
def test_passing_gates_under_xdist_exit_zero(pytester: pytest.Pytester, bench, args) -> None:
    bench(PASSING_GATE)
    result = subprocess_run(pytester, "-n", "2", "-v", *args)
    outcomes = verbose_outcomes(result)
    assert outcomes["bench_x.py::bench_good_enough::gate"] == "PASSED"
    assert outcomes["bench_x.py::bench_good_enough::run7"] == "XFAIL"
    assert outcomes["bench_x.py::bench_good_enough::run13"] == "XFAIL"
    result.assert_outcomes(passed=18 + 1 + 1, xfailed=2)
    assert result.ret == pytest.ExitCode.OK


def test_xdist_stop_releases_a_waiting_gate_item(pytester: pytest.Pytester, bench) -> None:
    """``-x`` under xdist: a run the gate waits for never runs; the gate item must not wait it out.

    Transposed order first.run1, gated.run1, first.run2, gated.run2, gated.gate: one worker gets
    first.run2 (slow, fails) with gated.run2 queued behind it, the other runs the gate item.
    """
    bench(
        """
import time
import pytest

@pytest.mark.probability(runs=2)
def bench_first(n):
    if n == 2:
        time.sleep(1.5)
        assert False, "slow failure"


@pytest.mark.probability(runs=2, min_rate=0.1)
def bench_gated(n):
    pass
"""
    )
    result = pytester.runpytest_subprocess(
        "-p", "no:cacheprovider", "-o", "prob_gate_timeout=120", "-n", "2", "-x", "--prob-transpose", "-v", timeout=40
    )
    text = result.stdout.str()
    assert "stopping after" in text
    assert "no verdict within" not in text
    if "bench_gated::gate" in verbose_outcomes(result):
        assert "UNDECIDED: the session stopped before every run of this case finished" in text
    assert result.ret in (pytest.ExitCode.TESTS_FAILED, pytest.ExitCode.INTERRUPTED)


@pytest.mark.parametrize("xdist", [[], ["-n", "2"]], ids=["serial", "xdist"])
def test_gate_item_without_its_runs_fails_at_once(pytester: pytest.Pytester, bench, xdist) -> None:
    """Every run deselected, the gate item kept: no run will ever report, so no waiting for one."""
    bench(PASSING_GATE)
    deselect = [f"--deselect=bench_x.py::bench_good_enough::run{i}" for i in range(1, 21)]
    result = pytester.runpytest_subprocess(
        "-p", "no:cacheprovider", "-o", "prob_gate_timeout=120", "-v", *xdist, *deselect, timeout=40
    )
    from pytest_probability.decide.book import DESELECTED_TEXT

    assert verbose_outcomes(result)["bench_x.py::bench_good_enough::gate"] == "FAILED"
    assert f"gate of good_enough: {DESELECTED_TEXT}" in result.stdout.str()
    outcomes = result.parseoutcomes()
    assert (outcomes.get("passed"), outcomes.get("failed")) == (1, 1)


def test_exit_status_is_decided_by_the_gate(pytester: pytest.Pytester, bench) -> None:
    bench(PASSING_GATE)
    result = pytester.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(passed=18 + 1 + 1, xfailed=2)
    assert result.ret == pytest.ExitCode.OK
    assert gates_section(result) == [
        "  Gates:   1 passed, 0 failed, 0 undecided",
        "    good_enough  18/20  [68%,  99%]  >= 18 passes  PASS",
    ]


def test_dash_x_does_not_stop_on_gated_failures(pytester: pytest.Pytester, bench) -> None:
    bench(PASSING_GATE)
    result = pytester.runpytest("-p", "no:cacheprovider", "-x")
    result.assert_outcomes(passed=20, xfailed=2)
    assert result.ret == pytest.ExitCode.OK
    assert "stopping after" not in result.stdout.str()


def test_dash_x_stops_on_a_failed_gate(pytester: pytest.Pytester, bench) -> None:
    bench()
    result = pytester.runpytest("-p", "no:cacheprovider", "-x", "-v")
    outcomes = verbose_outcomes(result)
    assert list(outcomes)[-1] == "bench_x.py::bench_broken::gate"  # solid's 20 runs, its gate, broken's 10 runs
    assert outcomes["bench_x.py::bench_broken::gate"] == "FAILED"
    assert len(outcomes) == 20 + 1 + 10 + 1
    assert result.ret == pytest.ExitCode.TESTS_FAILED


def test_runxfail_reports_gated_failures_as_failures(pytester: pytest.Pytester, bench) -> None:
    bench(PASSING_GATE)
    result = pytester.runpytest("-p", "no:cacheprovider", "--runxfail", "-v")
    outcomes = verbose_outcomes(result)
    assert outcomes["bench_x.py::bench_good_enough::run7"] == "FAILED"
    assert outcomes["bench_x.py::bench_good_enough::gate"] == "PASSED"
    result.assert_outcomes(passed=20, failed=2)
    assert result.ret == pytest.ExitCode.TESTS_FAILED


@pytest.mark.parametrize(("args", "ini"), [(["--prob-undecided=pass"], ""), ([], "prob_undecided = pass\n")])
def test_undecided_counts_as_pass(pytester: pytest.Pytester, bench, args, ini) -> None:
    bench(
        """
import pytest

@pytest.mark.probability(runs=10, min_rate=0.5)
def bench_unsure(n):
    assert n not in (2, 5, 9)
""",
        ini=ini,
    )
    result = pytester.runpytest("-p", "no:cacheprovider", "-v", *args)
    assert verbose_outcomes(result)["bench_x.py::bench_unsure::gate"] == "PASSED"
    assert result.ret == pytest.ExitCode.OK
    assert gates_section(result)[0] == "  Gates:   0 passed, 0 failed, 1 undecided (undecided counts as pass)"
    # a FAIL still fails
    failing = pytester.runpytest("-p", "no:cacheprovider", "--prob-min-rate=0.95", *args)
    assert failing.ret == pytest.ExitCode.OK  # the marker's bar wins over the session's
    pytester.makepyfile(
        bench_x="import pytest\n\n@pytest.mark.probability(runs=10, min_rate=0.9)\n"
        "def bench_bad(n):\n    assert n <= 3\n"
    )
    assert pytester.runpytest("-p", "no:cacheprovider", *args).ret == pytest.ExitCode.TESTS_FAILED


# -- where the bar comes from -----------------------------------------------------------------

UNGATED = """
import pytest

@pytest.mark.probability(runs=10)
@pytest.mark.parametrize("case", ["sure", "unsure"])
def bench_classify(case, n):
    assert case == "sure" or n not in (2, 5, 9)


@pytest.mark.probability(runs=20, min_passes=19)
def bench_counted(n):
    assert n != 20
"""


@pytest.mark.parametrize(("args", "ini"), [(["--prob-min-rate=0.65"], ""), ([], "prob_min_rate = 0.65\n")])
def test_session_min_rate_gates_every_case(pytester: pytest.Pytester, bench, args, ini) -> None:
    bench(UNGATED, ini=ini)
    result = pytester.runpytest("-p", "no:cacheprovider", "-v", "--prob-json=report.json", *args)
    outcomes = verbose_outcomes(result)
    assert outcomes["bench_x.py::bench_classify::sure[gate]"] == "PASSED"  # 10/10: [69%, 100%]
    assert outcomes["bench_x.py::bench_classify::unsure[gate]"] == "FAILED"  # 7/10: [35%, 93%]
    assert outcomes["bench_x.py::bench_counted::gate"] == "PASSED"  # its own count rule wins
    assert gates_section(result) == [
        "  Gates:   2 passed, 0 failed, 1 undecided (undecided counts as fail)",
        "    classify::sure    10/10  [69%, 100%]  >= 65%        PASS",
        "    classify::unsure   7/10  [35%,  93%]  >= 65%        UNDECIDED",
        "    counted           19/20  [75%,  99%]  >= 19 passes  PASS",
    ]
    data = report(pytester)
    assert data["stats_config"]["min_rate"] == 0.65
    rows = {row["label"]: row for row in data["rows"]}
    assert rows["classify::sure"]["gate"]["rule"] == "rate" and rows["classify::sure"]["gate"]["min_rate"] == 0.65
    assert rows["counted"]["gate"] == {
        "rule": "count",
        "min_passes": 19,
        "confidence": 0.95,
        "method": "exact",
        "prior": [1.0, 1.0],
        "errors": "count",
        "runs": 20,
        "passes": 19,
        "total": 20,
        "excluded": 0,
        "low": pytest.approx(0.7512672353),
        "high": pytest.approx(0.9987349437),
        "verdict": "pass",
    }


def test_bar_is_shown_as_given(pytester: pytest.Pytester, bench) -> None:
    bench("import pytest\n\n@pytest.mark.probability(runs=3, min_rate=0.999)\ndef bench_strict(n):\n    pass\n")
    result = pytester.runpytest("-p", "no:cacheprovider", "-W", "ignore::pytest.PytestWarning")
    assert gates_section(result)[1] == "    strict  3/3  [29%, 100%]  >= 99.9%  UNDECIDED"  # not ">= 100%"


def test_no_bar_no_gate_items(pytester: pytest.Pytester, bench) -> None:
    bench(UNGATED.replace(", min_passes=19", ""))
    result = pytester.runpytest("-p", "no:cacheprovider", "-v", "--prob-json=report.json")
    assert not any("gate" in nodeid for nodeid in verbose_outcomes(result))
    assert not any(line.startswith("  Gates:") for line in section(result))
    assert report(pytester)["gates"] == {"passed": 0, "failed": 0, "undecided": 0, "skipped": 0}


def test_per_gate_confidence_and_method(pytester: pytest.Pytester, bench) -> None:
    # 7/10 against 0.36: exact 95% [0.348, 0.933] -> UNDECIDED; exact 80% [0.448, 0.884] -> PASS;
    # wilson 95% [0.397, 0.892] -> PASS. The table keeps the session's interval.
    bench(
        """
import pytest

@pytest.mark.probability(runs=10, min_rate=0.36)
@pytest.mark.parametrize("case", [
    "plain",
    pytest.param("lenient", marks=pytest.mark.probability(confidence=0.8)),
    pytest.param("wilson", marks=pytest.mark.probability(method="wilson")),
])
def bench_seven(case, n):
    assert n not in (2, 5, 9)
"""
    )
    result = pytester.runpytest("-p", "no:cacheprovider", "-v", "--prob-json=report.json")
    outcomes = verbose_outcomes(result)
    assert outcomes["bench_x.py::bench_seven::plain[gate]"] == "FAILED"
    assert outcomes["bench_x.py::bench_seven::lenient[gate]"] == "PASSED"
    assert outcomes["bench_x.py::bench_seven::wilson[gate]"] == "PASSED"
    assert gates_section(result) == [
        "  Gates:   2 passed, 0 failed, 1 undecided (undecided counts as fail)",
        "    seven::plain    7/10  [35%,  93%]  >= 36%  UNDECIDED",
        "    seven::lenient  7/10  [45%,  88%]  >= 36%  PASS",
        "    seven::wilson   7/10  [40%,  89%]  >= 36%  PASS",
    ]
    rows = section(result)
    assert all("[35%,  93%]" in rows[i] for i in range(3)), rows
    data = {row["label"]: row for row in report(pytester)["rows"]}
    assert data["seven::lenient"]["gate"]["confidence"] == 0.8
    assert data["seven::lenient"]["ci"]["level"] == 0.95
    assert data["seven::wilson"]["gate"]["method"] == "wilson"
    assert data["seven::wilson"]["ci"]["method"] == "exact"


@pytest.mark.parametrize(
    ("ini", "verdict", "ret"),
    [
        ("", "shaky  8/10  [44%,  97%]  >= 60%  UNDECIDED", 1),
        ("prob_errors = exclude\n", "shaky  8/8  [63%, 100%]  >= 60%  PASS (2 errored left out)", 0),
    ],
)
def test_errors_count_or_exclude(pytester: pytest.Pytester, bench, ini, verdict, ret) -> None:
    # runs 1 and 2 error; 8 pass. count: 8/10 [44%, 97%]; exclude: 8/8 [63%, 100%] vs 0.6.
    bench(
        """
import pytest

@pytest.mark.probability(runs=10, min_rate=0.6)
def bench_shaky(n):
    if n <= 2:
        raise ConnectionError("provider down")
""",
        ini=ini,
    )
    result = pytester.runpytest("-p", "no:cacheprovider", "--prob-json=report.json")
    assert gates_section(result)[1].strip() == verdict
    assert result.ret == ret
    gate = report(pytester)["rows"][0]["gate"]
    excluded = 2 if ret == 0 else 0
    assert (gate["errors"], gate["total"], gate["excluded"]) == (
        ("exclude" if ret == 0 else "count"),
        10 - excluded,
        excluded,
    )


# -- --prob-no-gate-items ------------------------------------------------------------------------


@pytest.mark.parametrize(("args", "ini"), [(["--prob-no-gate-items"], ""), ([], "prob_gate_items = false\n")])
def test_no_gate_items_but_a_failed_gate_still_fails(pytester: pytest.Pytester, bench, args, ini) -> None:
    bench(ini=ini)
    result = pytester.runpytest("-p", "no:cacheprovider", "-v", "--prob-json=report.json", *args)
    outcomes = verbose_outcomes(result)
    assert not any("gate" in nodeid for nodeid in outcomes)
    assert len(outcomes) == 20 + 10 + 20 + 5
    assert gates_section(result) == GATES_SECTION
    result.assert_outcomes(passed=41, failed=3, xfailed=11)
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    assert report(pytester)["stats_config"]["gate_items"] is False


def test_no_gate_items_and_passing_gates_exit_zero(pytester: pytest.Pytester, bench) -> None:
    bench(PASSING_GATE)
    result = pytester.runpytest("-p", "no:cacheprovider", "--prob-no-gate-items")
    result.assert_outcomes(passed=19, xfailed=2)
    assert result.ret == pytest.ExitCode.OK


def test_no_gate_items_failed_gate_alone_fails_the_session(pytester: pytest.Pytester, bench) -> None:
    """Only xfailed runs and passes: the failed gate is what turns the exit status to 1."""
    bench("import pytest\n\n@pytest.mark.probability(runs=10, min_rate=0.9)\ndef bench_bad(n):\n    assert n <= 3\n")
    result = pytester.runpytest("-p", "no:cacheprovider", "--prob-no-gate-items")
    result.assert_outcomes(passed=3, xfailed=7)
    assert result.ret == pytest.ExitCode.TESTS_FAILED


# -- JUnit XML, --lf, --prob-transpose ---------------------------------------------------------


def test_gate_items_in_junit_xml(pytester: pytest.Pytester, bench) -> None:
    bench()
    pytester.runpytest("-p", "no:cacheprovider", "--junitxml=junit.xml")
    root = ET.parse(pytester.path / "junit.xml").getroot()
    cases = {(case.get("classname"), case.get("name")): case for case in root.iter("testcase")}
    gates = {key: case for key, case in cases.items() if "gate" in key[1]}
    assert {name for _, name in gates} == {"gate", "unsure[gate]"}
    by_name = {}
    for (classname, name), case in gates.items():
        by_name.setdefault(name, []).append((classname, case))
    broken = next(case for classname, case in by_name["gate"] if classname.endswith("bench_broken"))
    failure = broken.find("failure")
    assert failure is not None
    assert "FAIL: 3/10 passes" in (failure.get("message", "") + (failure.text or ""))
    solid = next(case for classname, case in by_name["gate"] if classname.endswith("bench_solid"))
    assert solid.find("failure") is None and solid.find("skipped") is None
    unsure = by_name["unsure[gate]"][0][1]
    assert unsure.find("failure") is not None
    suite = root if root.tag == "testsuite" else root.find("testsuite")
    assert int(suite.get("failures")) == 5


def test_last_failed_reruns_the_gate_with_all_its_runs(pytester: pytest.Pytester, bench) -> None:
    bench(
        """
import pytest

@pytest.mark.probability(runs=6, min_rate=0.5)
def bench_broken(n):
    assert n > 4


@pytest.mark.probability(runs=4, min_rate=0.2)
def bench_fine(n):
    pass


def bench_other():
    pass
"""
    )
    first = pytester.runpytest("-v")
    assert verbose_outcomes(first)["bench_x.py::bench_broken::gate"] == "FAILED"
    assert first.ret == pytest.ExitCode.TESTS_FAILED
    again = pytester.runpytest("-v", "--lf")
    outcomes = verbose_outcomes(again)
    assert list(outcomes) == [
        *(f"bench_x.py::bench_broken::run{i}" for i in range(1, 7)),
        "bench_x.py::bench_broken::gate",
    ]
    assert outcomes["bench_x.py::bench_broken::gate"] == "FAILED"
    again.assert_outcomes(passed=2, failed=1, xfailed=4, deselected=6)
    # the rerun's verdict is made from all six runs again
    assert gates_section(again)[1].startswith("    broken  2/6")


def test_transpose_keeps_gate_items_after_all_runs(pytester: pytest.Pytester, bench) -> None:
    bench()
    result = pytester.runpytest("-p", "no:cacheprovider", "-v", "--prob-transpose", "--prob-json=report.json")
    order = list(verbose_outcomes(result))
    gates = [i for i, nodeid in enumerate(order) if nodeid.endswith("gate]") or nodeid.endswith("::gate")]
    assert len(gates) == 4
    assert gates == list(range(len(order) - 4, len(order)))  # every gate item after every run
    assert order[0:4] == [
        "bench_x.py::bench_solid::run1",
        "bench_x.py::bench_broken::run1",
        "bench_x.py::bench_mixed::unsure[run1]",
        "bench_x.py::bench_mixed::free[run1]",
    ]
    check_gates_session(result, pytester)
