"""End to end: what a gate that cannot pass warns at collection, and bad gate input: errors at
collection or usage errors, before any run (the rest of the gates' tests: test_gates.py)."""

from __future__ import annotations

import re

import pytest
from gate_sessions import (
    GATES,
    plain,
)

from pytest_probability import InfeasibleGateWarning, ProbabilityGateWarning

pytestmark = pytest.mark.usefixtures("no_hang")
HANG_LIMIT = 80
#: What ``bench()`` writes when given no source (tests/conftest.py).
BENCH = GATES


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
