"""End to end: intervals, latency and pass^k / pass@k in the table, the sections and the JSON report.

Every session runs in-process with ``pytester``; outcomes depend only on the
run number (fixture ``n``), and latencies are made deterministic by a
conftest hook that replaces the call phase's measured duration with
``DURATION(n)`` when the benchmark module defines it.
"""

from __future__ import annotations

import re

import pytest
from sessions import report, section

from pytest_probability.report import statistics as report_stats

BENCH = """
import pytest


@pytest.mark.probability(runs=10)
@pytest.mark.parametrize("case", ["seven", "zero", "all"])
def bench_classify(case, n):
    if case == "seven":
        assert n not in (2, 5, 9)
    elif case == "zero":
        assert False, "never"


def bench_once():
    pass
"""


def table(result: pytest.RunResult) -> list[str]:
    """The rows of the table (up to the blank line before Overall)."""
    lines = section(result)
    return lines[: lines.index("")]


pytestmark = pytest.mark.usefixtures("no_hang")
HANG_LIMIT = 60


# -- intervals in the table ---------------------------------------------------------------


def test_default_exact_interval_after_the_fraction(pytester: pytest.Pytester, bench) -> None:
    bench()
    result = pytester.runpytest("-p", "no:cacheprovider")
    assert table(result) == [
        "  classify::seven   7/10  [35%,  93%]  FLAKY",
        "  classify::zero    0/10  [ 0%,  31%]  FAIL",
        "  classify::all    10/10  [69%, 100%]",
        "  once               1/1",
    ]
    assert result.ret == 1


@pytest.mark.parametrize(
    ("args", "ini", "seven", "zero", "full"),
    [
        (["--prob-method=wilson"], "", "[40%,  89%]", "[ 0%,  28%]", "[72%, 100%]"),
        (["--prob-method=BAYES"], "", "[39%,  89%]", "[ 1%,  28%]", "[72%,  99%]"),
        (["--prob-method=bayes"], "prob_prior = 5, 5\n", "[38%,  80%]", "[ 9%,  46%]", "[54%,  91%]"),
        ([], "prob_method = bayes\nprob_prior = 5,5\n", "[38%,  80%]", "[ 9%,  46%]", "[54%,  91%]"),
        (["--prob-confidence=0.9"], "", "[39%,  91%]", "[ 0%,  26%]", "[74%, 100%]"),
        ([], "prob_confidence = 0.9\n", "[39%,  91%]", "[ 0%,  26%]", "[74%, 100%]"),
        ([], "prob_method = wilson\nprob_confidence = 0.9\n", "[44%,  87%]", "[ 0%,  21%]", "[79%, 100%]"),
        # the command line wins over the ini file
        (
            ["--prob-method=exact", "--prob-confidence=0.95"],
            "prob_method = wilson\nprob_confidence = 0.9\n",
            "[35%,  93%]",
            "[ 0%,  31%]",
            "[69%, 100%]",
        ),
    ],
    ids=[
        "wilson",
        "bayes",
        "bayes-prior",
        "ini-bayes-prior",
        "confidence",
        "ini-confidence",
        "ini-wilson-90",
        "cli-wins",
    ],
)
def test_methods_levels_and_priors(pytester: pytest.Pytester, bench, args, ini, seven, zero, full) -> None:
    bench(ini=ini)
    result = pytester.runpytest("-p", "no:cacheprovider", *args)
    rows = table(result)
    assert re.fullmatch(r"  classify::seven +7/10  " + re.escape(seven) + "  FLAKY", rows[0]), rows
    assert re.fullmatch(r"  classify::zero +0/10  " + re.escape(zero) + "  FAIL", rows[1]), rows
    assert re.fullmatch(r"  classify::all +10/10  " + re.escape(full), rows[2]), rows
    assert re.fullmatch(r"  once +1/1", rows[3]), rows


def test_bounds_near_zero_and_one_never_print_as_certain(pytester: pytest.Pytester, bench) -> None:
    bench(
        """
import pytest

@pytest.mark.probability(runs=50)
@pytest.mark.parametrize("case", ["one", "most"])
def bench_rare(case, n):
    assert (n == 1) if case == "one" else (n != 1)
"""
    )
    result = pytester.runpytest("-p", "no:cacheprovider")
    # exact: 1/50 -> [0.0005, 0.106], 49/50 -> [0.894, 0.9995]
    assert table(result) == [
        "  rare::one    1/50  [ 1%,  11%]  FLAKY",
        "  rare::most  49/50  [89%,  99%]  FLAKY",
    ]


@pytest.mark.parametrize(("args", "ini"), [(["--prob-no-intervals"], ""), ([], "prob_intervals = false\n")])
def test_no_intervals(pytester: pytest.Pytester, bench, args, ini) -> None:
    bench(ini=ini)
    result = pytester.runpytest("-p", "no:cacheprovider", "--prob-json=report.json", *args)
    assert table(result) == [
        "  classify::seven   7/10  FLAKY",
        "  classify::zero    0/10  FAIL",
        "  classify::all    10/10",
        "  once               1/1",
    ]
    data = report(pytester)
    assert data["stats_config"]["intervals"] is False
    assert data["rows"][0]["ci"]["low"] == pytest.approx(0.34754714994000296)  # the JSON keeps them


def test_only_counted_runs_make_an_interval(pytester: pytest.Pytester, bench) -> None:
    bench(
        """
import pytest

@pytest.mark.probability(runs=3)
def bench_mostly_skipped(n):
    if n > 1:
        pytest.skip("not today")
"""
    )
    result = pytester.runpytest("-p", "no:cacheprovider")
    assert table(result) == ["  mostly_skipped  1/1  (2 skipped)"]


# -- JSON ------------------------------------------------------------------------------------


def test_json_ci_per_row_and_stats_config(pytester: pytest.Pytester, bench) -> None:
    bench(ini="prob_prior = 2, 3\n")
    result = pytester.runpytest(
        "-p", "no:cacheprovider", "--prob-json=report.json", "--prob-method=wilson", "--prob-confidence=0.9"
    )
    assert result.ret == 1
    data = report(pytester)
    rows = {row["label"]: row for row in data["rows"]}
    assert rows["classify::seven"]["ci"] == {
        "method": "wilson",
        "level": 0.9,
        "low": pytest.approx(0.44169979586983493, rel=1e-9),  # statsmodels proportion_confint(7, 10, 0.1, "wilson")
        "high": pytest.approx(0.873123416096802, rel=1e-9),
    }
    assert rows["classify::zero"]["ci"]["low"] == 0.0
    assert rows["classify::all"]["ci"]["high"] == 1.0
    assert rows["once"]["ci"]["method"] == "wilson"  # JSON has it even for one run
    for row in rows.values():
        assert row["gate"] is None and row["verdict"] is None
        assert row["latency"] is None and row["metrics"] == {}
    assert data["stats_config"] == {
        "method": "wilson",
        "level": 0.9,
        "prior": [2.0, 3.0],
        "resamples": 5000,
        "seed": 0,
        "min_inputs": 10,
        "inputs_interval": "wilson",
        "intervals": True,
        "min_rate": None,
        "undecided": "fail",
        "errors": "count",
        "latency": False,
        "latency_quantile": 0.95,
        "metrics": [],
        "gate_items": True,
        "stop": None,
        "explain": False,
    }
    assert data["gates"] == {"passed": 0, "failed": 0, "undecided": 0, "skipped": 0}
    assert [a["name"] for a in data["aggregates"]] == ["classify", "once", "Overall"]


# -- latency ---------------------------------------------------------------------------------

LATENCY = """
import pytest

DURATION = lambda n: n * {scale}


@pytest.mark.probability(runs=20, latency_quantile=0.5)
def bench_median(n):
    pass


@pytest.mark.probability(runs=20)
def bench_tail(n):
    pass
"""


@pytest.mark.parametrize(
    ("scale", "median", "tail"),
    [
        # p50 of n*scale, n = 1..20: 10.5*scale, order statistics 6 and 15; p95: 19.05*scale, [17*scale, -]
        ("0.01", "p50 105ms [60ms, 150ms]", "p95 190ms [170ms, ∞]"),
        ("0.5", "p50 5.25s [3.00s, 7.50s]", "p95 9.53s [8.50s, ∞]"),
        ("0.0001", "p50 1.1ms [600µs, 1.5ms]", "p95 1.9ms [1.7ms, ∞]"),
        ("5", "p50 52.50s [30.00s, 75s]", "p95 95s [85s, ∞]"),
    ],
    ids=["ms", "s", "sub-10ms", "minutes"],
)
def test_latency_column(pytester: pytest.Pytester, bench, scale, median, tail) -> None:
    bench(LATENCY.format(scale=scale))
    result = pytester.runpytest("-p", "no:cacheprovider", "--prob-latency")
    rows = table(result)
    assert re.fullmatch(r"  median +20/20  \[83%, 100%\] +" + re.escape(median), rows[0]), rows
    assert re.fullmatch(r"  tail +20/20  \[83%, 100%\] +" + re.escape(tail), rows[1]), rows
    assert result.ret == 0


def test_latency_off_by_default_and_from_ini(pytester: pytest.Pytester, bench) -> None:
    bench(LATENCY.format(scale="0.01"), ini="prob_latency = true\nprob_latency_quantile = 0.9\n")
    result = pytester.runpytest("-p", "no:cacheprovider", "--prob-json=report.json")
    rows = table(result)
    assert rows[0].endswith("p50 105ms [60ms, 150ms]")  # the marker wins over the ini quantile
    assert "p90 " in rows[1]
    latency = report(pytester)["rows"][0]["latency"]
    assert latency == {
        "quantile": 0.5,
        "total": 20,
        "excluded": 0,
        "estimate": pytest.approx(0.105),
        "ci": {
            "method": "order-statistic",
            "level": 0.95,
            "low": pytest.approx(0.06),
            "high": pytest.approx(0.15),
            "ranks": [6, 15],
        },
        "max_latency": None,
        "verdict": None,
    }
    pytester.makeini("[pytest]\n")
    plain = pytester.runpytest("-p", "no:cacheprovider")
    assert not any("p50" in line or "ms" in line for line in table(plain))


@pytest.mark.parametrize(
    ("seconds", "text"),
    [
        (None, "∞"),
        (0.0000004, "0µs"),
        (0.00042, "420µs"),
        (0.0042, "4.2ms"),
        (0.042, "42ms"),
        (0.999, "999ms"),
        (1.0, "1.00s"),
        (59.99, "59.99s"),
        (60.0, "60s"),
        (3600.0, "3600s"),
    ],
)
def test_duration_format(seconds, text) -> None:
    assert report_stats.duration(seconds) == text


# -- pass^k and pass@k ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "ini"),
    [
        (["--prob-metric=pass^3,pass@5"], ""),
        (["--prob-metric=pass^3", "--prob-metric= PASS@5 ,pass^3"], ""),
        ([], "prob_metric = pass^3, pass@5\n"),
    ],
    ids=["comma", "repeated", "ini"],
)
def test_metrics_section(pytester: pytest.Pytester, bench, args, ini) -> None:
    bench(ini=ini)
    result = pytester.runpytest("-p", "no:cacheprovider", *args)
    lines = section(result)
    start = lines.index("  Metrics (pass^k, pass@k over inputs):")
    # seven: C(7,3)/C(10,3) = 0.2917, pass@5 = 1; zero: 0, 0; all: 1, 1. 0.3.0's layout: no interval
    # with fewer than prob_min_inputs (10) inputs, and the inputs left out named.
    assert lines[start:] == [
        "  Metrics (pass^k, pass@k over inputs):",
        "    classify  pass^3  N=3 inputs  43.1%",
        "              pass@5  N=3 inputs  66.7%",
        "    once      pass^3  N=0 inputs      -  1 left out (fewer than 3 runs)",
        "              pass@5  N=0 inputs      -  1 left out (fewer than 5 runs)",
        "    Overall   pass^3  N=3 inputs  43.1%  1 left out (fewer than 3 runs)",
        "              pass@5  N=3 inputs  66.7%  1 left out (fewer than 5 runs)",
        "    pass^k: the chance that k runs of an input all pass (reliability)",
        "    pass@k: the chance that at least one of k runs of an input passes (capability)",
        "",
        "  Run with --prob-explain for a plain-language reading.",  # 0.3.0's hint: a metric is shown
    ]


def test_metrics_in_json(pytester: pytest.Pytester, bench) -> None:
    bench()
    pytester.runpytest("-p", "no:cacheprovider", "--prob-json=report.json", "--prob-metric=pass^3,pass@5")
    data = report(pytester)
    rows = {row["label"]: row for row in data["rows"]}
    assert rows["classify::seven"]["metrics"] == {"pass^3": pytest.approx(35 / 120), "pass@5": 1.0}
    assert rows["classify::zero"]["metrics"] == {"pass^3": 0.0, "pass@5": 0.0}
    assert rows["once"]["metrics"] == {"pass^3": None, "pass@5": None}
    assert data["stats_config"]["metrics"] == ["pass^3", "pass@5"]
    aggregates = {a["name"]: a for a in data["aggregates"]}
    assert [(a["scope"], a["name"]) for a in data["aggregates"]] == [
        ("function", "classify"),
        ("function", "once"),
        ("overall", "Overall"),
    ]

    def metric(name: str, key: str) -> tuple:
        entry = aggregates[name]["metrics"][key]
        return entry["estimate"], entry["inputs"], entry["left_out"], entry["ci"], entry["suppressed"]

    assert metric("classify", "pass^3") == (pytest.approx((35 / 120 + 1) / 3), 3, 0, None, "fewer than 10 inputs")
    assert metric("classify", "pass@5") == (pytest.approx(2 / 3), 3, 0, None, "fewer than 10 inputs")
    assert metric("once", "pass^3") == (None, 0, 1, None, "no input with at least 3 runs")
    assert metric("Overall", "pass@5") == (pytest.approx(2 / 3), 3, 1, None, "fewer than 10 inputs")
    # The function-level estimate: the mean of the cases' fractions, 7/10, 0/10, 10/10.
    assert aggregates["classify"]["estimate"] == pytest.approx((0.7 + 0 + 1) / 3)
    assert aggregates["classify"]["inputs"] == 3 and aggregates["classify"]["suppressed"] == "fewer than 10 inputs"


def test_no_metrics_no_section(pytester: pytest.Pytester, bench) -> None:
    bench()
    result = pytester.runpytest("-p", "no:cacheprovider")
    assert not any("Metrics" in line for line in section(result))


# -- bad input: usage errors before any run ---------------------------------------------------

SENTINEL = """
import pathlib


def bench_spend():
    pathlib.Path("ran").write_text("a run spent money")
"""


@pytest.mark.parametrize(
    ("args", "ini", "message"),
    [
        (["--prob-confidence=95"], "", r"--prob-confidence: .*'95'.*did you mean 0\.95\?"),
        (["--prob-confidence=95%"], "", r"--prob-confidence: .*'95%'.*did you mean 0\.95\?"),
        ([], "prob_confidence = 95\n", r"ini prob_confidence: .*'95'.*did you mean 0\.95\?"),
        (["--prob-confidence=1"], "", r"--prob-confidence: invalid confidence '1'"),
        (["--prob-confidence=0"], "", r"--prob-confidence: invalid confidence '0'"),
        (["--prob-confidence=high"], "", r"--prob-confidence: invalid confidence 'high'"),
        (["--prob-method=jeffreys"], "", r"--prob-method: invalid interval method 'jeffreys'"),
        ([], "prob_method = agresti\n", r"ini prob_method: invalid interval method 'agresti'"),
        ([], "prob_prior = 1\n", r"ini prob_prior: invalid prior '1'"),
        ([], "prob_prior = a,b\n", r"ini prob_prior: invalid prior 'a,b'"),
        ([], "prob_prior = 0,1\n", r"ini prob_prior: invalid prior '0,1'"),
        (["--prob-metric=pass^0"], "", r"--prob-metric: invalid metric 'pass\^0'"),
        (["--prob-metric=pass@x"], "", r"--prob-metric: invalid metric 'pass@x'"),
        (["--prob-metric=pass^3,pass@"], "", r"--prob-metric: invalid metric 'pass@'"),
        ([], "prob_metric = pass^2, pass~3\n", r"invalid metric ' pass~3'"),
        ([], "prob_latency_quantile = 95\n", r"ini prob_latency_quantile: .*'95'"),
    ],
)
def test_bad_settings_are_usage_errors_before_any_run(pytester: pytest.Pytester, args, ini, message) -> None:
    pytester.makeini("[pytest]\n" + ini)
    pytester.makepyfile(bench_x=SENTINEL)
    result = pytester.runpytest("-p", "no:cacheprovider", *args)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert re.search(message, result.stderr.str()), result.stderr.str()
    assert not (pytester.path / "ran").exists()
