"""End to end: gates, their items, verdicts and exit status, serial and under pytest-xdist.

Serial sessions run in-process with ``pytester``; xdist and OpenTelemetry
sessions run pytest in a subprocess with a timeout (a gate item that waits
forever for its verdict must fail the test, not hang the suite). The xdist
tests run with whichever pytest runs this file: run it with pytest 8 too.

Outcomes depend only on the run number (fixture ``n``), never on process
state, so a case's fraction is the same whichever worker runs which run;
latencies come from ``DURATION(n)`` in the benchmark module (see CONFTEST).
"""

from __future__ import annotations

import os
import re
import xml.etree.ElementTree as ET

import pytest
from sessions import ANSI, CONFTEST, report, section

from pytest_probability import InfeasibleGateWarning, ProbabilityGateWarning

# solid: 20/20 vs 0.8 -> [83%, 100%] PASS; broken: 3/10 vs 0.9 -> [7%, 65%] FAIL;
# mixed::unsure: 7/10 vs 0.5 -> [35%, 93%] UNDECIDED; mixed::free: ungated;
# count: 4/5, need 4 -> PASS.
GATES = """
import pytest


@pytest.mark.probability(runs=20, min_rate=0.8)
def bench_solid(n):
    pass


@pytest.mark.probability(runs=10, min_rate=0.9)
def bench_broken(n):
    assert n <= 3


@pytest.mark.probability(runs=10)
@pytest.mark.parametrize("case", [pytest.param("unsure", marks=pytest.mark.probability(min_rate=0.5)), "free"])
def bench_mixed(case, n):
    assert n not in (2, 5, 9)


@pytest.mark.probability(runs=5, min_passes=4)
def bench_count(n):
    assert n != 3
"""

GATES_SECTION = [
    "  Gates:   2 passed, 1 failed, 1 undecided (undecided counts as fail)",
    "    solid          20/20  [83%, 100%]  >= 80%       PASS",
    "    broken          3/10  [ 7%,  65%]  >= 90%       FAIL",
    "    mixed::unsure   7/10  [35%,  93%]  >= 50%       UNDECIDED",
    "    count            4/5  [28%,  99%]  >= 4 passes  PASS",
]

# Every gate passes although runs fail: 18/20 with min_passes=18.
PASSING_GATE = """
import pytest


@pytest.mark.probability(runs=20, min_passes=18)
def bench_good_enough(n):
    assert n not in (7, 13)


def bench_plain():
    pass
"""


pytestmark = pytest.mark.usefixtures("no_hang")
HANG_LIMIT = 80


@pytest.fixture
def bench(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch):
    for name in list(os.environ):
        if name.startswith(("PYTEST_XDIST", "PYTEST_ADDOPTS", "OTEL_")):
            monkeypatch.delenv(name, raising=False)
    pytester.makeconftest(CONFTEST)

    def make(source: str = GATES, ini: str = "") -> None:
        pytester.makeini("[pytest]\n" + ini)
        pytester.makepyfile(bench_x=source)

    return make


def plain(result: pytest.RunResult) -> list[str]:
    return [ANSI.sub("", line) for line in result.outlines]


def gates_section(result: pytest.RunResult) -> list[str]:
    lines = section(result)
    start = next(i for i, line in enumerate(lines) if line.startswith("  Gates:"))
    end = next((i for i in range(start, len(lines)) if not lines[i].strip()), len(lines))
    return lines[start:end]


def verbose_outcomes(result: pytest.RunResult) -> dict[str, str]:
    """node id -> PASSED/FAILED/XFAIL/... from ``-v`` lines, serial or xdist."""
    outcomes: dict[str, str] = {}
    for line in plain(result):
        serial = re.match(r"^(\S+::\S+) (PASSED|FAILED|XFAIL|XPASS|SKIPPED|ERROR)\b", line)
        dist = re.match(r"^\[gw\d+\] \[\s*\d+%\] (PASSED|FAILED|XFAIL|XPASS|SKIPPED|ERROR) (\S+::\S+)", line)
        if serial:
            outcomes[serial.group(1)] = serial.group(2)
        elif dist:
            outcomes[dist.group(2)] = dist.group(1)
    return outcomes


def subprocess_run(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    return pytester.runpytest_subprocess("-p", "no:cacheprovider", "-o", "prob_gate_timeout=30", *args, timeout=60)


# -- verdicts, gate items and the gates section ------------------------------------------


def check_gates_session(result: pytest.RunResult, pytester: pytest.Pytester) -> None:
    """What the GATES session shows, serial or under xdist."""
    outcomes = verbose_outcomes(result)
    assert outcomes["bench_x.py::bench_solid::gate"] == "PASSED"
    assert outcomes["bench_x.py::bench_broken::gate"] == "FAILED"
    assert outcomes["bench_x.py::bench_mixed::unsure[gate]"] == "FAILED"
    assert outcomes["bench_x.py::bench_count::gate"] == "PASSED"
    assert not any("free[gate]" in nodeid for nodeid in outcomes)
    # gated failing runs are xfailed; ungated ones fail
    assert sorted(k for k, v in outcomes.items() if v == "XFAIL") == sorted(
        [
            *(f"bench_x.py::bench_broken::run{i}" for i in range(4, 11)),
            *(f"bench_x.py::bench_mixed::unsure[run{i}]" for i in (2, 5, 9)),
            "bench_x.py::bench_count::run3",
        ]
    )
    assert sorted(k for k, v in outcomes.items() if v == "FAILED") == sorted(
        [
            "bench_x.py::bench_broken::gate",
            "bench_x.py::bench_mixed::unsure[gate]",
            *(f"bench_x.py::bench_mixed::free[run{i}]" for i in (2, 5, 9)),
        ]
    )
    assert len(outcomes) == 20 + 10 + 20 + 5 + 4  # runs and four gate items
    assert gates_section(result) == GATES_SECTION
    result.assert_outcomes(passed=20 + 3 + 7 + 7 + 4 + 2, failed=5, xfailed=11)
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    data = report(pytester)
    assert data["gates"] == {"passed": 2, "failed": 1, "undecided": 1, "skipped": 0}
    assert data["exit_status"] == 1
    rows = {row["label"]: row for row in data["rows"]}
    assert {label: row["verdict"] for label, row in rows.items()} == {
        "solid": "pass",
        "broken": "fail",
        "mixed::unsure": "undecided",
        "mixed::free": None,
        "count": "pass",
    }
    assert (rows["broken"]["passes"], rows["broken"]["fails"]) == (3, 7)  # xfailed runs still count as fails


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


# -- the collection-time warning ------------------------------------------------------------------

UNREACHABLE = """
import pytest

@pytest.mark.probability(runs=5, min_rate=0.99)
def bench_hopeful(n):
    pass


@pytest.mark.probability(runs=50, min_rate=1.0)
def bench_perfect(n):
    pass


@pytest.mark.probability(runs=40, min_rate=0.9)
def bench_reachable(n):
    pass
"""


def test_warning_names_gates_that_cannot_pass(pytester: pytest.Pytester, bench) -> None:
    # 0.3.0's name, a subclass of this version's, so that filters naming either catch it
    assert issubclass(InfeasibleGateWarning, ProbabilityGateWarning) and issubclass(
        ProbabilityGateWarning, pytest.PytestWarning
    )
    bench(UNREACHABLE)
    result = pytester.runpytest("-p", "no:cacheprovider", "--collect-only", "-q")
    text = "\n".join(plain(result))
    assert (
        "InfeasibleGateWarning: gate of hopeful cannot pass with 5 runs: "
        "min_rate=0.99 at 0.95 confidence (exact) needs at least 368 runs"
    ) in text
    assert "InfeasibleGateWarning: gate of perfect can never pass: min_rate=1 at 0.95 confidence (exact)" in text
    assert "reachable" not in text.split("warnings summary")[1]
    assert result.ret == pytest.ExitCode.OK
    # at collection: as an error it stops the session before any run
    strict = pytester.runpytest("-p", "no:cacheprovider", "-W", "error::pytest_probability.ProbabilityGateWarning")
    assert strict.ret == pytest.ExitCode.INTERRUPTED
    strict.assert_outcomes(errors=2)  # one per benchmark with an unreachable gate
    documented = pytester.runpytest("-p", "no:cacheprovider", "-W", "error::pytest_probability.InfeasibleGateWarning")
    assert documented.ret == pytest.ExitCode.INTERRUPTED  # 0.3.0's documented -W entry


def test_warning_uses_the_gate_confidence_and_method(pytester: pytest.Pytester, bench) -> None:
    bench(
        "import pytest\n\n@pytest.mark.probability(runs=10, min_rate=0.9, confidence=0.9, method='wilson')\n"
        "def bench_w(n):\n    pass\n"
    )
    result = pytester.runpytest("-p", "no:cacheprovider", "--collect-only", "-q")
    assert (
        "gate of w cannot pass with 10 runs: min_rate=0.9 at 0.9 confidence (wilson) needs at least 25 runs"
        in result.stdout.str()
    )


# -- latency gates --------------------------------------------------------------------------------

LATENCY_GATES = """
import pytest

DURATION = lambda n: n * 0.01  # 10ms .. 200ms


@pytest.mark.probability(runs=20, latency_quantile=0.5)
@pytest.mark.parametrize("case", [
    pytest.param("roomy", marks=pytest.mark.probability(max_latency=0.2)),
    pytest.param("tight", marks=pytest.mark.probability(max_latency=0.05)),
    pytest.param("close", marks=pytest.mark.probability(max_latency=0.1)),
])
def bench_median(case, n):
    pass


@pytest.mark.probability(runs=10, max_latency=100)
def bench_tail(n):
    pass
"""


def test_latency_gates(pytester: pytest.Pytester, bench) -> None:
    # p50 of 20 runs: order statistics 6 and 15 -> [60ms, 150ms]; p95 of 10 runs has no upper end.
    bench(LATENCY_GATES)
    result = pytester.runpytest("-p", "no:cacheprovider", "-v", "--prob-json=report.json")
    outcomes = verbose_outcomes(result)
    assert outcomes["bench_x.py::bench_median::roomy[gate]"] == "PASSED"
    assert outcomes["bench_x.py::bench_median::tight[gate]"] == "FAILED"
    assert outcomes["bench_x.py::bench_median::close[gate]"] == "FAILED"
    assert outcomes["bench_x.py::bench_tail::gate"] == "FAILED"  # cannot pass however fast
    assert gates_section(result) == [
        "  Gates:   1 passed, 1 failed, 2 undecided (undecided counts as fail)",
        "    median::roomy  20/20  p50 105ms [60ms, 150ms]  p50 <= 200ms  PASS",
        "    median::tight  20/20  p50 105ms [60ms, 150ms]  p50 <= 50ms   FAIL",
        "    median::close  20/20  p50 105ms [60ms, 150ms]  p50 <= 100ms  UNDECIDED",
        "    tail           10/10  p95 95ms [80ms, ∞]       p95 <= 100s   UNDECIDED",
    ]
    text = "\n".join(plain(result))
    assert "gate of tail: UNDECIDED: p95 latency interval [0.08s, ∞] vs 100s: UNDECIDED" in text
    rows = {row["label"]: row for row in report(pytester)["rows"]}
    assert rows["median::roomy"]["latency"]["verdict"] == "pass"
    assert rows["median::roomy"]["latency"]["max_latency"] == 0.2
    assert rows["median::roomy"]["gate"] is None
    assert rows["median::roomy"]["verdict"] == "pass"
    assert rows["tail"]["latency"]["ci"]["high"] is None
    assert rows["tail"]["verdict"] == "undecided"
    assert result.ret == pytest.ExitCode.TESTS_FAILED


def test_rate_and_latency_gate_together(pytester: pytest.Pytester, bench) -> None:
    bench(
        """
import pytest

DURATION = lambda n: n * 0.01


@pytest.mark.probability(runs=20, min_rate=0.8, latency_quantile=0.5, max_latency=0.05)
def bench_both(n):
    pass
"""
    )
    result = pytester.runpytest("-p", "no:cacheprovider")
    assert gates_section(result) == [
        "  Gates:   0 passed, 1 failed, 0 undecided",
        "    both  20/20  [83%, 100%], p50 105ms [60ms, 150ms]  >= 80%, p50 <= 50ms  FAIL",
    ]
    assert result.ret == pytest.ExitCode.TESTS_FAILED


# -- OpenTelemetry -----------------------------------------------------------------------------------


def test_otel_gauges(pytester: pytest.Pytester, bench) -> None:
    pytest.importorskip("opentelemetry.sdk")
    pytest.importorskip("opentelemetry.proto")
    from otlp_receiver import flatten_metrics

    from pytest_probability.otel import otlp_json

    bench()
    result = subprocess_run(pytester, "--prob-otel-file=otel.jsonl")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    points = flatten_metrics(list(otlp_json.read_file(pytester.path / "otel.jsonl")))
    gauges: dict[str, dict[str, float]] = {}
    for point in points:
        if point.name.startswith(("probability.case.interval", "probability.case.min_rate", "probability.case.gate")):
            assert point.type == "gauge"
            # The verdict (-1/0/1) is not a ratio: unitless, so no _ratio suffix in Prometheus.
            assert point.unit == ("" if point.name == "probability.case.gate.verdict" else "1")
            label = point.attributes["probability.benchmark"]
            if point.attributes["probability.case"]:
                label += "::" + point.attributes["probability.case"]
            gauges.setdefault(point.name, {})[label] = point.value
    assert gauges["probability.case.gate.verdict"] == {"solid": 1, "broken": -1, "mixed::unsure": 0, "count": 1}
    assert gauges["probability.case.min_rate"] == {
        "solid": 0.8,
        "broken": 0.9,
        "mixed::unsure": 0.5,
        "count": pytest.approx(0.8),
    }
    assert gauges["probability.case.interval.lower"] == {
        "solid": pytest.approx(0.8315665),
        "broken": pytest.approx(0.0667395),
        "mixed::unsure": pytest.approx(0.3475471),
        "mixed::free": pytest.approx(0.3475471),
        "count": pytest.approx(0.2835821),
    }
    assert gauges["probability.case.interval.upper"] == {
        "solid": 1.0,
        "broken": pytest.approx(0.6524529),
        "mixed::unsure": pytest.approx(0.9332605),
        "mixed::free": pytest.approx(0.9332605),
        "count": pytest.approx(0.9949492),
    }


# -- bad input: errors at collection, before any run ----------------------------------------------


@pytest.mark.parametrize(
    ("marker", "message"),
    [
        ("runs=5, min_rate=0", r"probability\(min_rate=\.\.\.\) must be in \(0, 1\], got 0"),
        ("runs=5, min_rate=1.5", r"probability\(min_rate=\.\.\.\) must be in \(0, 1\], got 1\.5(?m:$)"),
        ("runs=5, min_rate=90", r"probability\(min_rate=\.\.\.\) must be in \(0, 1\], got 90 \(did you mean 0\.9\?\)"),
        ("runs=5, min_rate=-0.2", r"got -0\.2"),
        ("runs=5, min_rate='high'", r"min_rate=\.\.\.\) must be a number in \(0, 1\], got 'high'"),
        ("runs=5, min_passes=6", r"probability\(min_passes=6\) is more than the case's 5 runs"),
        ("runs=5, min_passes=0", r"min_passes=\.\.\.\) must be a whole number of at least 1, got 0"),
        ("runs=5, min_rate=0.5, min_passes=2", r"min_rate=0\.5, min_passes=2\): give min_rate or min_passes, not both"),
        ("runs=5, min_rate=0.5, confidence=95", r"probability\(confidence=\.\.\.\): .*95.*did you mean 0\.95"),
        ("runs=5, min_rate=0.5, confidence=1.0", r"probability\(confidence=\.\.\.\): invalid confidence 1\.0"),
        ("runs=5, min_rate=0.5, method='agresti'", r"probability\(method=\.\.\.\): invalid interval method 'agresti'"),
        ("runs=5, min_rate=0.5, prior=(1, -1)", r"probability\(prior=\.\.\.\): invalid prior \(1, -1\)"),
        ("runs=5, max_latency=0", r"probability\(max_latency=\.\.\.\) must be a positive number of seconds, got 0"),
        ("runs=5, latency_quantile=95", r"latency_quantile=\.\.\.\) must be between 0 and 1 .*got 95"),
    ],
)
def test_bad_marker_is_a_collection_error(pytester: pytest.Pytester, marker, message) -> None:
    pytester.makeini("[pytest]\n")
    pytester.makepyfile(
        bench_x=f"""
import pathlib
import pytest


def bench_first():
    pathlib.Path("ran").write_text("a run spent money")


@pytest.mark.probability({marker})
def bench_bad():
    pathlib.Path("ran").write_text("a run spent money")
"""
    )
    result = pytester.runpytest("-p", "no:cacheprovider")
    assert result.ret == pytest.ExitCode.INTERRUPTED
    assert re.search(r"bench_x\.py::bench_bad: .*" + message, result.stdout.str()), result.stdout.str()
    assert not (pytester.path / "ran").exists()


def test_bad_bar_on_a_param_names_the_case(pytester: pytest.Pytester) -> None:
    pytester.makeini("[pytest]\n")
    pytester.makepyfile(
        bench_x="""
import pytest

@pytest.mark.probability(runs=3)
@pytest.mark.parametrize("x", [1, pytest.param(2, marks=pytest.mark.probability(min_passes=4))])
def bench_p(x):
    pass
"""
    )
    result = pytester.runpytest("-p", "no:cacheprovider")
    assert result.ret == pytest.ExitCode.INTERRUPTED
    result.stdout.fnmatch_lines(["*bench_x.py::bench_p: probability(min_passes=4) is more than the case's 3 runs*"])


def test_min_passes_more_than_command_line_runs(pytester: pytest.Pytester) -> None:
    pytester.makeini("[pytest]\n")
    pytester.makepyfile(
        bench_x="import pytest\n\n@pytest.mark.probability(runs=20, min_passes=19)\ndef bench_c():\n    pass\n"
    )
    result = pytester.runpytest("-p", "no:cacheprovider", "--prob-runs=10")
    assert result.ret == pytest.ExitCode.INTERRUPTED
    result.stdout.fnmatch_lines(["*probability(min_passes=19) is more than the case's 10 runs*"])


@pytest.mark.parametrize(
    ("args", "ini", "message"),
    [
        (["--prob-min-rate=0"], "", r"--prob-min-rate: the bar must be a rate in \(0, 1\], got '0'"),
        (["--prob-min-rate=1.5"], "", r"--prob-min-rate: the bar must be a rate in \(0, 1\], got '1\.5'\n"),
        (["--prob-min-rate=1.99"], "", r"got '1\.99'\n"),
        (["--prob-min-rate=90"], "", r"got '90' \(did you mean 0\.9\?\)"),
        (["--prob-min-rate=2"], "", r"got '2' \(did you mean 0\.02\?\)"),
        (["--prob-min-rate=90%"], "", r"got '90%' \(did you mean 0\.9\?\)"),
        (["--prob-min-rate=1.5%"], "", r"got '1\.5%' \(did you mean 0\.015\?\)"),
        (["--prob-min-rate=150"], "", r"got '150'\n"),
        ([], "prob_min_rate = most\n", r"ini prob_min_rate: the bar must be a rate in \(0, 1\], got 'most'"),
        ([], "prob_errors = ignore\n", r"ini prob_errors must be one of count, exclude, got 'ignore'"),
        ([], "prob_undecided = maybe\n", r"ini prob_undecided must be one of fail, pass, got 'maybe'"),
        ([], "prob_gate_items = perhaps\n", r"perhaps"),
    ],
)
def test_bad_gate_settings_are_usage_errors(pytester: pytest.Pytester, args, ini, message) -> None:
    pytester.makeini("[pytest]\n" + ini)
    pytester.makepyfile(bench_x="import pathlib\n\ndef bench_spend():\n    pathlib.Path('ran').write_text('x')\n")
    result = pytester.runpytest("-p", "no:cacheprovider", *args)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert re.search(message, result.stderr.str()), result.stderr.str()
    assert not (pytester.path / "ran").exists()


def test_a_failed_gate_without_gate_items_marks_the_session_span_failed(pytester: pytest.Pytester) -> None:
    """Finishers after the gates see the final exit status (the span, the JSON report)."""
    import json as _json

    from otlp_receiver import flatten_spans

    from pytest_probability.otel import otlp_json

    pytester.makepyfile(
        bench_x="import pytest\n\n@pytest.mark.probability(min_passes=2, runs=2)\ndef bench_fails():\n    assert False\n"
    )
    result = pytester.runpytest_subprocess(
        "-p", "no:cacheprovider", "--prob-no-gate-items", "--prob-json=r.json", "--prob-otel-file=o.jsonl"
    )
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    spans = flatten_spans(list(otlp_json.read_file(pytester.path / "o.jsonl")))
    session = next(s for s in spans if s.name == "probability.session")
    assert session.attributes["test.suite.run.status"] == "failure"
    assert _json.loads((pytester.path / "r.json").read_text())["exit_status"] == 1


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

XDIST = [pytest.param([], id="serial"), pytest.param(["-n", "2"], id="xdist")]


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


# -- verdicts a new user meets ------------------------------------------------------------------------

ALL_SKIPPED = """
import pytest


@pytest.mark.probability(runs=4, min_passes=3)
def bench_counted(n):
    pytest.skip("no provider key")


@pytest.mark.probability(runs=4, min_rate=0.5)
def bench_rated(n):
    pytest.skip("no provider key")


@pytest.mark.probability(runs=4, min_passes=3)
def bench_partly(n):
    if n == 1:
        pytest.skip("rate limited")
"""


@pytest.mark.parametrize("xdist", XDIST)
def test_a_gate_whose_runs_all_skip_is_skipped_not_failed(pytester: pytest.Pytester, bench, xdist) -> None:
    bench(ALL_SKIPPED)
    result = subprocess_run(pytester, "-v", "-rs", "--prob-json=report.json", *xdist)
    outcomes = verbose_outcomes(result)
    assert outcomes["bench_x.py::bench_counted::gate"] == "SKIPPED"
    assert outcomes["bench_x.py::bench_rated::gate"] == "SKIPPED"
    assert outcomes["bench_x.py::bench_partly::gate"] == "PASSED"  # 3 of 3 counted runs pass
    assert "gate of counted: SKIPPED: every run of this case was skipped" in result.stdout.str()
    result.assert_outcomes(passed=3 + 1, skipped=4 + 4 + 1 + 2)
    assert result.ret == pytest.ExitCode.OK
    assert gates_section(result) == [
        "  Gates:   1 passed, 0 failed, 0 undecided, 2 skipped",
        "    counted  0/0               >= 3 passes  SKIPPED",
        "    rated    0/0               >= 50%       SKIPPED",
        "    partly   3/3  [29%, 100%]  >= 3 passes  PASS",
    ]
    data = report(pytester)
    assert data["gates"] == {"passed": 1, "failed": 0, "undecided": 0, "skipped": 2}
    rows = {row["label"]: row for row in data["rows"]}
    assert (rows["counted"]["verdict"], rows["counted"]["gate"]["verdict"], rows["counted"]["status"]) == (
        "skip",
        "skip",
        "skip",
    )
    assert data["exit_status"] == 0


def test_without_gate_items_a_skipped_gate_does_not_fail_the_session(pytester: pytest.Pytester, bench) -> None:
    bench(ALL_SKIPPED)
    result = pytester.runpytest("-p", "no:cacheprovider", "--prob-no-gate-items")
    result.assert_outcomes(passed=3, skipped=9)
    assert result.ret == pytest.ExitCode.OK


EXCLUDED = """
import pytest


@pytest.mark.probability(runs=12, min_rate=0.3)
def bench_shaky(n):
    if n > 8:
        raise ConnectionError("provider down")
    assert n != 1
"""


@pytest.mark.parametrize("xdist", XDIST)
def test_gates_line_under_errors_exclude_counts_as_the_gate_does(pytester: pytest.Pytester, bench, xdist) -> None:
    """7 passes, 1 fail, 4 errors: the row says 7/12, the gate (and its interval) 7/8."""
    bench(EXCLUDED, ini="prob_errors = exclude\n")
    result = subprocess_run(pytester, "--prob-json=report.json", *xdist)
    assert section(result)[0].split()[:2] == ["shaky", "7/12"]
    assert gates_section(result)[1] == "    shaky  7/8  [47%,  99%]  >= 30%  PASS (4 errored left out)"
    gate = report(pytester)["rows"][0]["gate"]
    assert (gate["passes"], gate["total"], gate["excluded"]) == (7, 8, 4)
    assert (gate["low"], gate["high"]) == (pytest.approx(0.4734903), pytest.approx(0.9968403))  # exact 7/8


GATED_FIXTURE_ERRORS = """
import pytest


@pytest.fixture
def fragile(n):
    if n == 1:
        raise ConnectionError("setup: provider down")
    yield
    if n == 2:
        raise ConnectionError("teardown: provider down")


@pytest.mark.probability(runs=10, min_passes=8)
def bench_gated(fragile, n):
    pass


@pytest.mark.probability(runs=2)
def bench_ungated(fragile, n):
    pass
"""


@pytest.mark.parametrize("xdist", XDIST)
def test_errors_of_a_gated_case_fail_the_session_unless_excluded(pytester: pytest.Pytester, bench, xdist) -> None:
    """As in 0.3.0 (prob_errors = count, the default): an errored run of a gated case, in any phase,
    fails the session as an error always does, and counts as a non-pass in its gate; only its failed
    runs (asserts) are xfailed. Under prob_errors = exclude the errors are xfailed and left out."""
    bench(GATED_FIXTURE_ERRORS)
    result = subprocess_run(pytester, "-v", "--prob-json=report.json", *xdist, "-k", "gated and not ungated")
    # run1 errors in setup, run2 in teardown (its call passed): 8/10 counted passes, need 8
    result.assert_outcomes(passed=8 + 1 + 1, errors=2)
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    assert gates_section(result)[1].endswith("PASS")  # the gate itself passes: 8 of 10
    records = {r["run"]: r for r in report(pytester)["records"]}
    assert (records[1]["outcome"], records[1]["phase"]) == ("error", "setup")
    assert (records[2]["outcome"], records[2]["phase"]) == ("error", "teardown")
    # -x stops at the first errored run, as at any error
    stopped = subprocess_run(pytester, *xdist, "-x", "-k", "gated and not ungated")
    assert stopped.ret != pytest.ExitCode.OK and "stopping after 1 failures" in stopped.stdout.str()  # xdist: 2
    # prob_errors = exclude: xfailed, left out of the gate (8 of 8)
    excluded = subprocess_run(pytester, *xdist, "-rx", "-o", "prob_errors=exclude", "-k", "gated and not ungated")
    excluded.assert_outcomes(passed=10, xfailed=2)
    assert excluded.ret == pytest.ExitCode.OK
    excluded.stdout.fnmatch_lines(
        ["*XFAIL*bench_gated*run1* - probability gate, error excluded: ConnectionError: setup: provider down"]
    )
    # an ungated case's fixture errors are errors
    ungated = subprocess_run(pytester, *xdist, "-k", "ungated")
    ungated.assert_outcomes(passed=1, errors=2)
    assert ungated.ret == pytest.ExitCode.TESTS_FAILED
    # and --runxfail reports excluded ones as errors again
    runxfail = subprocess_run(
        pytester, *xdist, "--runxfail", "-o", "prob_errors=exclude", "-k", "gated and not ungated"
    )
    runxfail.assert_outcomes(passed=10, errors=2)


CUT_SHORT = """
import pytest


@pytest.mark.probability(runs=10, min_passes=3)
def bench_counted(n):
    pass


@pytest.mark.probability(runs=10, min_rate=0.1)
def bench_rated(n):
    pass


@pytest.mark.probability(runs=10, min_passes=10)
def bench_hopeless(n):
    assert n > 1


@pytest.mark.probability(runs=10)
def bench_stopper(n):
    assert n != 5
"""


@pytest.mark.parametrize("stop", ["-x", "--maxfail=1"])
def test_verdicts_after_a_stop_say_the_runs_were_cut_short(pytester: pytest.Pytester, bench, stop) -> None:
    """Run-major order; stopper.run5 fails and stops the session with 5 of 10 runs of each gated case reported."""
    bench(CUT_SHORT)
    result = pytester.runpytest("-p", "no:cacheprovider", "--prob-transpose", "--prob-json=report.json", stop)
    assert "stopping after 1 failures" in result.stdout.str()
    assert gates_section(result) == [
        "  Gates:   0 passed, 1 failed, 2 undecided (undecided counts as fail)",
        "    counted   5/5  [48%, 100%]  >= 3 passes   UNDECIDED (runs cut short: 5 of 10 reported)",
        "    rated     5/5  [48%, 100%]  >= 10%        UNDECIDED (runs cut short: 5 of 10 reported)",
        # 4 passes: even 5 more could not make 10
        "    hopeless  4/5  [28%,  99%]  >= 10 passes  FAIL (runs cut short: 5 of 10 reported)",
    ]
    rows = {row["label"]: row for row in report(pytester)["rows"]}
    assert {label: (row["verdict"], row["runs_missing"]) for label, row in rows.items()} == {
        "counted": ("undecided", 5),
        "rated": ("undecided", 5),
        "hopeless": ("fail", 5),
        "stopper": (None, 5),
    }
    assert result.ret == pytest.ExitCode.TESTS_FAILED


def test_verdicts_after_a_stop_under_xdist_are_never_pass_on_missing_runs(pytester: pytest.Pytester, bench) -> None:
    """Which runs report before the stop depends on the workers; whichever did, no PASS without all of them."""
    bench(CUT_SHORT.replace("runs=10", "runs=40").replace("n != 5", "n != 2"))
    result = subprocess_run(pytester, "-n", "2", "-x", "--prob-transpose", "--prob-json=report.json")
    assert "stopping after 1 failures" in result.stdout.str()
    rows = {row["label"]: row for row in report(pytester)["rows"]}
    lines = {line.split()[0]: line for line in gates_section(result)[1:]}
    for label in ("counted", "rated", "hopeless"):
        row = rows[label]
        reported = row["passes"] + row["fails"] + row["errors"] + row["skipped"]
        assert row["runs_missing"] == 40 - reported
        if row["runs_missing"]:
            assert row["verdict"] != "pass"
            assert lines[label].endswith(f"(runs cut short: {reported} of 40 reported)")
    assert any(rows[label]["runs_missing"] for label in ("counted", "rated", "hopeless"))


def test_latency_gate_without_an_upper_bound_gets_a_warning(pytester: pytest.Pytester, bench) -> None:
    # p95 at 0.95 confidence has an upper order statistic from 72 runs (0.95**72 <= 0.025 < 0.95**71)
    bench(
        "import pytest\n\n@pytest.mark.probability(runs=71, max_latency=1)\ndef bench_short(n):\n    pass\n\n"
        "@pytest.mark.probability(runs=72, max_latency=1)\ndef bench_enough(n):\n    pass\n\n"
        "@pytest.mark.probability(runs=10, latency_quantile=0.5, max_latency=1)\ndef bench_median(n):\n    pass\n"
    )
    result = pytester.runpytest("-p", "no:cacheprovider", "--collect-only", "-q")
    text = "\n".join(plain(result))
    assert (
        "InfeasibleGateWarning: gate of short cannot pass with 71 runs: p95 latency <= 1s at 0.95 confidence "
        "has no upper bound before 72 timed runs"
    ) in text
    warnings = text.split("warnings summary")[1]
    assert "enough" not in warnings and "median" not in warnings  # p50 of 10: ranks 2 and 9
    run = pytester.runpytest("-p", "no:cacheprovider", "-k", "short")
    assert run.ret == pytest.ExitCode.TESTS_FAILED  # and indeed it cannot pass
    assert "UNDECIDED" in gates_section(run)[1]


@pytest.mark.parametrize("xdist", XDIST)
def test_the_closer_mark_wins_between_min_passes_and_min_rate(pytester: pytest.Pytester, bench, xdist) -> None:
    bench(
        """
import pytest


@pytest.mark.probability(runs=10, min_passes=9)
@pytest.mark.parametrize("case", [
    "counted",
    pytest.param("rated", marks=pytest.mark.probability(min_rate=0.5)),
])
def bench_function_count(case, n):
    assert n != 1


@pytest.mark.probability(runs=10, min_rate=0.99)
@pytest.mark.parametrize("case", [pytest.param("counted", marks=pytest.mark.probability(min_passes=9))])
def bench_function_rate(case, n):
    assert n != 1
"""
    )
    result = subprocess_run(pytester, "--prob-json=report.json", *xdist)
    assert result.ret == pytest.ExitCode.OK, result.stdout.str()
    gates = {row["label"]: row["gate"] for row in report(pytester)["rows"]}
    assert {label: (gate["rule"], gate.get("min_passes"), gate.get("min_rate")) for label, gate in gates.items()} == {
        "function_count::counted": ("count", 9, None),
        "function_count::rated": ("rate", None, 0.5),
        "function_rate::counted": ("count", 9, None),
    }
    assert "ProbabilityGateWarning" not in result.stdout.str()  # function_rate's 0.99 applies to no case


def test_add_gate_runs_brings_the_runs_once_and_only_for_gates_without_any(pytester: pytest.Pytester) -> None:
    from pytest_probability.collect import order

    pytester.makeini("[pytest]\n")
    pytester.makepyfile(
        bench_x="import pytest\n\n@pytest.mark.probability(runs=3, min_passes=1)\n"
        "@pytest.mark.parametrize('c', ['a', 'b'])\ndef bench_g(c):\n    pass\n"
    )
    recorder = pytester.inline_run("-p", "no:cacheprovider", "--collect-only")
    by_name = {call.item.name: call.item for call in recorder.getcalls("pytest_itemcollected")}
    assert len(by_name) == 8
    gate_a, gate_b = by_name["a[gate]"], by_name["b[gate]"]
    selected = [gate_a, gate_a, by_name["b[run2]"], gate_b]
    added = order.add_gate_runs(selected)
    assert [item.name for item in added] == ["a[run1]", "a[run2]", "a[run3]"]
    assert [item.name for item in selected] == [
        "a[run1]",
        "a[run2]",
        "a[run3]",
        "a[gate]",
        "a[gate]",
        "b[run2]",
        "b[gate]",
    ]
    # and order_gates puts a gate after the last of its runs, leaving the rest in place
    shuffled = [gate_b, by_name["b[run1]"], by_name["a[run1]"], by_name["b[run3]"], gate_a, by_name["a[run2]"]]
    order.order_gates(shuffled)
    assert [item.name for item in shuffled] == ["b[run1]", "a[run1]", "b[run3]", "b[gate]", "a[run2]", "a[gate]"]


@pytest.mark.parametrize("xdist", XDIST)
def test_runs_deselected_by_last_failed_are_not_cut_short(pytester: pytest.Pytester, bench, xdist) -> None:
    """--lf deselects in a hook wrapper, after every ordinary modifyitems hook: not a missing run."""
    bench("import pytest\n\n@pytest.mark.probability(runs=4)\ndef bench_case(n):\n    assert n != 2\n")
    first = pytester.runpytest_subprocess(*xdist)
    assert first.ret == pytest.ExitCode.TESTS_FAILED
    bench("import pytest\n\n@pytest.mark.probability(runs=4, min_passes=1)\ndef bench_case(n):\n    pass\n")
    again = pytester.runpytest_subprocess("--lf", "--prob-json=report.json", *xdist)
    assert gates_section(again) == [
        "  Gates:   1 passed, 0 failed, 0 undecided",
        "    case  1/1  [ 3%, 100%]  >= 1 passes  PASS",
    ]
    (row,) = report(pytester)["rows"]
    assert (row["verdict"], row["runs_missing"]) == ("pass", 0)


def test_a_skipped_gate_has_no_verdict_gauge_point(pytester: pytest.Pytester, bench) -> None:
    pytest.importorskip("opentelemetry.proto")
    from otlp_receiver import flatten_metrics

    from pytest_probability.otel import otlp_json

    bench(ALL_SKIPPED)
    result = subprocess_run(pytester, "--prob-otel-file=otel.jsonl")
    assert result.ret == pytest.ExitCode.OK
    points = flatten_metrics(list(otlp_json.read_file(pytester.path / "otel.jsonl")))
    verdicts = {
        p.attributes["probability.benchmark"]: p.value for p in points if p.name == "probability.case.gate.verdict"
    }
    assert verdicts == {"partly": 1}
    bars = {p.attributes["probability.benchmark"] for p in points if p.name == "probability.case.min_rate"}
    assert bars == {"counted", "rated", "partly"}  # the bar is still the case's


DESELECTED_GATE = """
import pytest


@pytest.mark.probability(runs=10, min_rate=0.5)
@pytest.mark.parametrize("case", ["never", "solid"])
def bench_g(case, n):
    assert case != "never"
"""


@pytest.mark.parametrize("xdist", XDIST)
@pytest.mark.parametrize(
    "how",
    [["-k", "not gate"], ["--deselect", "bench_x.py::bench_g::never[gate]"], ["--prob-no-gate-items"]],
    ids=["k", "deselect", "no-gate-items"],
)
def test_a_failed_gate_fails_the_session_even_when_its_item_does_not_run(
    pytester: pytest.Pytester, bench, xdist: list[str], how: list[str]
) -> None:
    """As in 0.3.0: without its gate item (deselected, or none), a FAIL gate still sets exit status 1 at
    the session's end, and the gates section and the JSON say FAIL."""
    bench(DESELECTED_GATE)
    result = subprocess_run(pytester, *xdist, *how, "--prob-json=report.json")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    assert " failed" not in result.outlines[-1]  # no item failed: the session's end did it
    result.assert_outcomes(passed=11 if how[0] == "--deselect" else 10, xfailed=10)  # solid's gate item, if any
    assert any(line.strip().startswith("g::never") and line.endswith("FAIL") for line in gates_section(result))
    data = report(pytester)
    assert data["exit_status"] == 1
    assert {row["case"]: row["verdict"] for row in data["rows"]} == {"g::never": "fail", "g::solid": "pass"}
    # the same session with its gate item: one failed item, exit status 1 (the verdict is not counted twice)
    whole = subprocess_run(pytester, *xdist)
    assert whole.ret == pytest.ExitCode.TESTS_FAILED
    whole.assert_outcomes(passed=11, failed=1, xfailed=10)
