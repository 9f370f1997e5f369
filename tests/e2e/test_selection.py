"""End to end: run counts, ordering, pacing and selection of runs.

``--prob-runs`` / the ``probability`` marker / ``prob_runs``, ``--prob-transpose``,
``--prob-delay``, and pytest's own selection (``-k``, ``-m``, ``-x``, node ids,
``--collect-only``, ``--junitxml``, ``--lf``/``--ff``) applied per run.
"""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET

import pytest
from printed import node_ids, table


def run_counts(ids: list[str]) -> dict[str, int]:
    """Runs per case key (node id without the run part; a one-run case's id is its key), in first-seen order."""
    counts: dict[str, int] = {}
    for node in ids:
        match = re.fullmatch(r"(.+?)(?:::run(\d+)|\[run(\d+)\])", node)
        key = match.group(1) if match else node
        counts[key] = counts.get(key, 0) + 1
    return counts


def executed(result: pytest.RunResult) -> list[tuple[str, str]]:
    """(node id, outcome) of every item in ``-v`` output order."""
    found = []
    for line in result.outlines:
        match = re.match(r"^(\S+::\S+) (PASSED|FAILED|ERROR|SKIPPED)", line)
        if match:
            found.append((match.group(1), match.group(2)))
    return found


# -- run counts ---------------------------------------------------------------

COUNTS_FILE = """
import pytest

def bench_ini():
    pass

@pytest.mark.probability(runs=2)
def bench_fn():
    pass

@pytest.mark.probability(runs=2)
@pytest.mark.parametrize("p", [pytest.param("a", marks=pytest.mark.probability(runs=4)), "b"])
def bench_param(p):
    pass

@pytest.mark.parametrize("p", [pytest.param("a", marks=pytest.mark.probability(runs=5)), "b"])
def bench_param_only(p):
    pass

@pytest.mark.probability(runs=6)
class BenchC:
    def bench_class_mark(self):
        pass

    @pytest.mark.probability(runs=1)
    def bench_own_mark(self):
        pass
"""

MARK_COUNTS = {
    "bench_counts.py::bench_fn": 2,
    "bench_counts.py::bench_param::a": 4,
    "bench_counts.py::bench_param::b": 2,
    "bench_counts.py::bench_param_only::a": 5,
    "bench_counts.py::BenchC::bench_class_mark": 6,
    "bench_counts.py::BenchC::bench_own_mark": 1,
}


def test_runs_default_is_one(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(bench_counts=COUNTS_FILE)
    result = pytester.runpytest("--collect-only", "-q")
    assert run_counts(node_ids(result)) == {
        "bench_counts.py::bench_ini": 1,
        **MARK_COUNTS,
        "bench_counts.py::bench_param_only::b": 1,
    }


def test_mark_beats_ini_and_param_mark_beats_function_mark(pytester: pytest.Pytester) -> None:
    pytester.makeini("[pytest]\nprob_runs = 3\n")
    pytester.makepyfile(bench_counts=COUNTS_FILE)
    result = pytester.runpytest("--collect-only", "-q")
    expected = {
        "bench_counts.py::bench_ini": 3,
        **MARK_COUNTS,
        "bench_counts.py::bench_param_only::b": 3,
    }
    assert run_counts(node_ids(result)) == expected
    assert list(run_counts(node_ids(result))) == [
        "bench_counts.py::bench_ini",
        "bench_counts.py::bench_fn",
        "bench_counts.py::bench_param::a",
        "bench_counts.py::bench_param::b",
        "bench_counts.py::bench_param_only::a",
        "bench_counts.py::bench_param_only::b",
        "bench_counts.py::BenchC::bench_class_mark",
        "bench_counts.py::BenchC::bench_own_mark",
    ]
    result = pytester.runpytest("--prob-json=report.json")
    result.assert_outcomes(passed=sum(expected.values()))
    report = json.loads((pytester.path / "report.json").read_text())
    assert {row["nodeid"]: row["runs"] for row in report["rows"]} == expected
    assert {row["nodeid"]: row["total"] for row in report["rows"]} == expected
    assert report["settings"]["runs"] == 3 and report["settings"]["runs_from_command_line"] is False


def test_command_line_beats_mark_and_ini(pytester: pytest.Pytester) -> None:
    pytester.makeini("[pytest]\nprob_runs = 3\n")
    pytester.makepyfile(bench_counts=COUNTS_FILE)
    result = pytester.runpytest("--collect-only", "-q", "--prob-runs=7")
    counts = run_counts(node_ids(result))
    assert len(counts) == 8 and set(counts.values()) == {7}
    # A case's node id (without the run part) selects all of its runs.
    result = pytester.runpytest(
        "--prob-runs=7", "bench_counts.py::bench_param::a", "bench_counts.py::bench_param_only::a"
    )
    result.assert_outcomes(passed=14)
    assert table(result) == ["param::a 7/7", "param_only::a 7/7"]


# -- ordering and pacing --------------------------------------------------------

ORDER_FILES = {
    "bench_one": """
        import pytest

        @pytest.mark.parametrize("p", ["a", "b"])
        def bench_first(p):
            pass

        def bench_second():
            pass
        """,
    "bench_two": "def bench_third():\n    pass\n",
    "test_plain": "def test_plain():\n    pass\n",
}


def test_default_order_is_case_major(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(**ORDER_FILES)
    result = pytester.runpytest("--collect-only", "-q", "--prob-runs=2")
    assert node_ids(result) == [
        "bench_one.py::bench_first::a[run1]",
        "bench_one.py::bench_first::a[run2]",
        "bench_one.py::bench_first::b[run1]",
        "bench_one.py::bench_first::b[run2]",
        "bench_one.py::bench_second::run1",
        "bench_one.py::bench_second::run2",
        "bench_two.py::bench_third::run1",
        "bench_two.py::bench_third::run2",
        "test_plain.py::test_plain",
    ]


TRANSPOSED = [
    "bench_one.py::bench_first::a[run1]",
    "bench_one.py::bench_first::b[run1]",
    "bench_one.py::bench_second::run1",
    "bench_two.py::bench_third::run1",
    "bench_one.py::bench_first::a[run2]",
    "bench_one.py::bench_first::b[run2]",
    "bench_one.py::bench_second::run2",
    "bench_two.py::bench_third::run2",
    "bench_one.py::bench_first::a[run3]",
    "bench_one.py::bench_first::b[run3]",
    "bench_one.py::bench_second::run3",
    "bench_two.py::bench_third::run3",
    "test_plain.py::test_plain",
]


def test_transpose_option_orders_run_major_across_the_session(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(**ORDER_FILES)
    result = pytester.runpytest("--collect-only", "-q", "--prob-runs=3", "--prob-transpose")
    assert node_ids(result) == TRANSPOSED


def test_transpose_ini_orders_execution_and_keeps_rows_in_collection_order(pytester: pytest.Pytester) -> None:
    pytester.makeini("[pytest]\nprob_transpose = true\nprob_runs = 3\n")
    pytester.makepyfile(**ORDER_FILES)
    result = pytester.runpytest("-v")
    assert [node for node, _ in executed(result)] == TRANSPOSED
    assert table(result) == ["first::a 3/3", "first::b 3/3", "second 3/3", "third 3/3"]


def test_delay_sleeps_between_runs_never_before_the_first(pytester: pytest.Pytester) -> None:
    delay = 0.1
    pytester.makeconftest(
        """
        import time
        import pytest

        STAMPS = []

        def pytest_collection_finish(session):
            STAMPS.append(("collected", time.monotonic()))

        @pytest.fixture(autouse=True)
        def stamp(request):
            STAMPS.append((request.node.nodeid, time.monotonic()))

        def pytest_sessionfinish(session):
            with open(session.config.rootpath / "stamps.txt", "w") as handle:
                for name, when in STAMPS:
                    handle.write(f"{name} {when!r}\\n")
        """
    )
    pytester.makepyfile(
        bench_paced="""
        import pytest

        @pytest.mark.parametrize("p", ["a", "b"])
        def bench_p(p):
            pass
        """,
        test_plain="def test_fast():\n    pass\n",
    )
    result = pytester.runpytest("--prob-runs=2", f"--prob-delay={delay}")
    result.assert_outcomes(passed=5)
    stamps = [line.rsplit(" ", 1) for line in (pytester.path / "stamps.txt").read_text().splitlines()]
    names = [name for name, _ in stamps]
    times = [float(when) for _, when in stamps]
    assert names[0] == "collected" and names[-1] == "test_plain.py::test_fast"
    gaps = [b - a for a, b in zip(times, times[1:], strict=False)]
    assert gaps[0] < delay, f"slept before the first run: {gaps[0]:.3f}s"
    assert all(gap >= delay * 0.95 for gap in gaps[1:4]), gaps
    assert gaps[4] < delay, "a normal test is not paced"


# -- selection ----------------------------------------------------------------

SELECT_FILE = """
import pytest

@pytest.mark.parametrize(
    "task",
    ["is_question", "identify_pii", pytest.param("extract_amount", marks=pytest.mark.slow)],
)
def bench_classify(task):
    pass

def bench_always():
    pass

class BenchK:
    def bench_m(self):
        pass
"""


def test_k_selects_case_ids_and_run_numbers(pytester: pytest.Pytester) -> None:
    pytester.makeini("[pytest]\nmarkers =\n    slow: slow cases\n")
    pytester.makepyfile(bench_sel=SELECT_FILE)
    result = pytester.runpytest("-q", "--collect-only", "--prob-runs=4", "-k", "identify_pii")
    assert node_ids(result) == [f"bench_sel.py::bench_classify::identify_pii[run{n}]" for n in range(1, 5)]

    result = pytester.runpytest("-q", "--collect-only", "--prob-runs=4", "-k", "run3")
    assert node_ids(result) == [
        "bench_sel.py::bench_classify::is_question[run3]",
        "bench_sel.py::bench_classify::identify_pii[run3]",
        "bench_sel.py::bench_classify::extract_amount[run3]",
        "bench_sel.py::bench_always::run3",
        "bench_sel.py::BenchK::bench_m::run3",
    ]

    result = pytester.runpytest("--prob-runs=4", "-k", "not identify_pii and not always and not BenchK")
    result.assert_outcomes(passed=8, deselected=12)
    assert table(result) == ["classify::is_question 4/4", "classify::extract_amount 4/4"]


def test_m_selects_cases_marked_through_pytest_param(pytester: pytest.Pytester) -> None:
    pytester.makeini("[pytest]\nmarkers =\n    slow: slow cases\n")
    pytester.makepyfile(bench_sel=SELECT_FILE)
    result = pytester.runpytest("-q", "--collect-only", "--prob-runs=2", "-m", "slow")
    assert node_ids(result) == [
        "bench_sel.py::bench_classify::extract_amount[run1]",
        "bench_sel.py::bench_classify::extract_amount[run2]",
    ]
    result = pytester.runpytest("--prob-runs=2", "-m", "not slow")
    result.assert_outcomes(passed=8, deselected=2)
    assert table(result) == [
        "classify::is_question 2/2",
        "classify::identify_pii 2/2",
        "always 2/2",
        "BenchK.m 2/2",
    ]


def test_x_stops_after_the_first_failing_run(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        bench_stop="""
        def bench_flaky(request):
            assert not request.node.name.endswith("run2")

        def bench_never_reached():
            pass
        """
    )
    result = pytester.runpytest("-x", "--prob-runs=4", "--prob-json=report.json")
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(["*stopping after 1 failures*"])
    assert table(result) == ["flaky 1/2 FLAKY"]
    report = json.loads((pytester.path / "report.json").read_text())
    assert [(r["nodeid"], r["outcome"]) for r in report["records"]] == [
        ("bench_stop.py::bench_flaky::run1", "pass"),
        ("bench_stop.py::bench_flaky::run2", "fail"),
    ]
    assert report["exit_status"] == 1


def test_node_ids_on_the_command_line(pytester: pytest.Pytester) -> None:
    pytester.makeini("[pytest]\nmarkers =\n    slow: slow cases\n")
    pytester.makepyfile(bench_sel=SELECT_FILE)

    def selected(*args: str) -> list[str]:
        return node_ids(pytester.runpytest("-q", "--collect-only", "--prob-runs=4", *args))

    assert selected("bench_sel.py::bench_classify::identify_pii[run3]") == [
        "bench_sel.py::bench_classify::identify_pii[run3]"
    ]
    assert selected("bench_sel.py::bench_always::run2", "bench_sel.py::BenchK::bench_m::run4") == [
        "bench_sel.py::bench_always::run2",
        "bench_sel.py::BenchK::bench_m::run4",
    ]
    assert selected("bench_sel.py::bench_always") == [f"bench_sel.py::bench_always::run{n}" for n in range(1, 5)]
    assert selected("bench_sel.py::bench_classify") == [
        f"bench_sel.py::bench_classify::{case}[run{n}]"
        for case in ("is_question", "identify_pii", "extract_amount")
        for n in range(1, 5)
    ]
    assert selected("bench_sel.py::BenchK") == [f"bench_sel.py::BenchK::bench_m::run{n}" for n in range(1, 5)]

    result = pytester.runpytest("--prob-runs=4", "bench_sel.py::bench_classify::identify_pii[run3]")
    result.assert_outcomes(passed=1)
    assert table(result) == ["classify::identify_pii 1/1"]


def test_junitxml_has_one_testcase_per_run(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        bench_junit="""
        import pytest

        @pytest.mark.parametrize("task", ["is_question", "identify_pii"])
        def bench_classify(task, request):
            assert not (task == "identify_pii" and request.node.name.endswith("[run2]"))

        def bench_always():
            pass

        class BenchK:
            def bench_m(self):
                pass
        """,
        test_plain="def test_plain():\n    pass\n",
    )
    result = pytester.runpytest("--prob-runs=2", "--junitxml=junit.xml")
    result.assert_outcomes(passed=8, failed=1)
    root = ET.parse(pytester.path / "junit.xml").getroot()
    cases = [
        (case.get("classname"), case.get("name"), case.find("failure") is not None) for case in root.iter("testcase")
    ]
    assert cases == [
        ("bench_junit.bench_classify", "is_question[run1]", False),
        ("bench_junit.bench_classify", "is_question[run2]", False),
        ("bench_junit.bench_classify", "identify_pii[run1]", False),
        ("bench_junit.bench_classify", "identify_pii[run2]", True),
        ("bench_junit.bench_always", "run1", False),
        ("bench_junit.bench_always", "run2", False),
        ("bench_junit.BenchK.bench_m", "run1", False),
        ("bench_junit.BenchK.bench_m", "run2", False),
        ("test_plain", "test_plain", False),
    ]
    suite = root if root.tag == "testsuite" else root.find("testsuite")
    assert suite is not None and suite.get("tests") == "9" and suite.get("failures") == "1"


# -- --lf / --ff ------------------------------------------------------------------

LAST_FAILED_FILE = """
import re
import pytest

FAILING = {2, 5}

def run_number(request):
    return int(re.search(r"run(\\d+)\\]?$", request.node.name).group(1))

@pytest.mark.parametrize("case", ["plain", pytest.param("x", id="a::b"), pytest.param("y", id="q[1]"), "ü"])
def bench_cases(case, request):
    if case in ("plain", "x", "y"):
        assert run_number(request) not in FAILING

def bench_always(request):
    assert run_number(request) != 4

class BenchK:
    def bench_m(self, request):
        pass
"""

LAST_FAILED_TEST = """
def test_passes():
    pass
"""


def _failed_ids(result: pytest.RunResult) -> list[str]:
    return sorted(line.split(" ")[1] for line in result.outlines if line.startswith("FAILED "))


def test_last_failed_reruns_exactly_the_failed_runs(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(bench_lf=LAST_FAILED_FILE, test_plain=LAST_FAILED_TEST)
    first = pytester.runpytest("--prob-runs=5", "-rf")
    first.assert_outcomes(passed=24, failed=7)
    failed = _failed_ids(first)
    assert len(failed) == 7
    assert "bench_lf.py::bench_cases::a::b[run2]" in failed
    assert "bench_lf.py::bench_cases::q[1][run5]" in failed
    assert "bench_lf.py::bench_always::run4" in failed
    cached = json.loads((pytester.path / ".pytest_cache" / "v" / "cache" / "lastfailed").read_text())
    assert sorted(cached) == failed

    rerun = pytester.runpytest("--prob-runs=5", "-rf", "-v", "--lf")
    rerun.assert_outcomes(failed=7, deselected=24)
    assert sorted(node for node, _ in executed(rerun)) == failed
    assert _failed_ids(rerun) == failed
    rerun.stdout.fnmatch_lines(["run-last-failure: rerun previous 7 failures*"])
    assert table(rerun) == [
        "cases::plain 0/2 FAIL",
        "cases::a::b 0/2 FAIL",
        "cases::q[1] 0/2 FAIL",
        "always 0/1 FAIL",
    ]


def test_failed_first_runs_failed_runs_first(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(bench_lf=LAST_FAILED_FILE, test_plain=LAST_FAILED_TEST)
    first = pytester.runpytest("--prob-runs=5", "-rf")
    failed = _failed_ids(first)
    assert len(failed) == 7
    again = pytester.runpytest("--prob-runs=5", "-v", "--ff")
    again.assert_outcomes(passed=24, failed=7)
    order = [node for node, _ in executed(again)]
    assert len(order) == 31
    assert sorted(order[:7]) == failed
    assert [outcome for _, outcome in executed(again)][:7] == ["FAILED"] * 7


# -- --lf after a failed gate (issue 23, item 16) -------------------------------------------------

LF_GATED = """
import pathlib
import pytest


@pytest.mark.probability(runs=3, min_passes=3)
@pytest.mark.parametrize("case", {cases})
def bench_gated(case, request):
    with open("ran.txt", "a") as ran:
        ran.write(request.node.nodeid + "\\n")
    assert not (case == "broken" and request.node.prob_run == 2 and pathlib.Path("broken").exists())
"""


def _ran(pytester: pytest.Pytester) -> list[str]:
    path = pytester.path / "ran.txt"
    ran = sorted(path.read_text().split()) if path.exists() else []
    path.unlink(missing_ok=True)
    return ran


@pytest.mark.parametrize("xdist", [[], ["-n", "2"]], ids=["serial", "xdist"])
@pytest.mark.parametrize("cases", [["broken"], ["broken", "fine"]], ids=["one-case", "two-cases"])
def test_last_failed_after_a_failed_gate_reruns_that_case_and_its_gate_only(
    pytester: pytest.Pytester, cases: list[str], xdist: list[str]
) -> None:
    """--lf after a failed gate reruns the failed case's runs and its gate item, nothing else: in a
    one-case session that is every item (4 of 4: the report of 'every item rerun' was this). Once the
    gate passes, nothing failed is left, and --lf then runs everything, as pytest does for any
    session without recorded failures ('no previously failed tests')."""
    pytester.makepyfile(bench_lf=LF_GATED.format(cases=cases))
    (pytester.path / "broken").write_text("x")
    first = pytester.runpytest_subprocess("-rf", *xdist)
    assert first.ret == pytest.ExitCode.TESTS_FAILED
    assert len(_ran(pytester)) == 3 * len(cases)
    failed_case = [f"bench_lf.py::bench_gated::broken[run{i}]" for i in (1, 2, 3)]

    again = pytester.runpytest_subprocess("-rf", "--lf", *xdist)
    assert again.ret == pytest.ExitCode.TESTS_FAILED
    assert _ran(pytester) == failed_case
    assert "FAILED bench_lf.py::bench_gated::broken[gate]" in again.stdout.str()
    outcomes = again.parseoutcomes()
    assert outcomes["passed"] + outcomes["failed"] + outcomes.get("xfailed", 0) == 4, outcomes  # 3 runs + gate
    if not xdist:  # workers deselect under xdist; the controller reports no count
        assert outcomes.get("deselected", 0) == 4 * (len(cases) - 1), outcomes

    (pytester.path / "broken").unlink()  # fixed: the rerun's gate passes
    fixed = pytester.runpytest_subprocess("-rf", "--lf", *xdist)
    assert fixed.ret == pytest.ExitCode.OK
    assert _ran(pytester) == failed_case
    cached = pytester.path / ".pytest_cache" / "v" / "cache" / "lastfailed"
    assert not json.loads(cached.read_text()) if cached.exists() else True

    everything = pytester.runpytest_subprocess("-rf", "--lf", *xdist)
    assert everything.ret == pytest.ExitCode.OK
    assert len(_ran(pytester)) == 3 * len(cases)
    if not xdist:  # the controller prints no collection header of its own
        everything.stdout.fnmatch_lines(["*run-last-failure: no previously failed tests, not deselecting items.*"])
