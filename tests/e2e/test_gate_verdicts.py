"""End to end: the verdicts a new user meets: gates whose runs all skip, errors excluded or counted, fixture
errors of a gated case, verdicts after a stop, deselected gate items (the rest of the gates' tests: test_gates.py)."""

from __future__ import annotations

import pytest
from gate_sessions import (
    GATES,
    XDIST,
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
