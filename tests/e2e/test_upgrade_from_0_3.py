"""Upgrading from the published 0.3.0: its documented behaviour, end to end (issue 22).

Each of the issue's items has its end-to-end test; those that belong with a
feature live with it, the others here:

1. baselines: ``test_compare.py`` (``test_an_unchanged_suite_passes_against_its_baseline``,
   ``test_a_drop_beyond_the_margin_fails_its_benchmark_item_and_the_session``,
   ``test_without_a_margin_a_drop_only_reports``, ``test_fewer_cases_than_min_inputs_leave_the_verdict_undecided``);
2. deselected gate items: ``test_gate_verdicts.py::test_a_failed_gate_fails_the_session_even_when_its_item_does_not_run``;
3. errors of a gated case: ``test_gate_verdicts.py::test_errors_of_a_gated_case_fail_the_session_unless_excluded``;
4. A/B margins: ``test_compare.py::test_an_arm_worse_than_its_margin_fails_its_item_and_the_session``;
5. options and ini keys: here, and ``test_compare.py::test_plan_prints_0_3_0s_run_budget``;
6. public names: here;
7. the JSON's shape and 0.3.0's jq recipes: here;
8. node ids with one run: ``test_case_ids.py`` (``ONE_RUN``);
9. function-level and Overall lines: here;
10. ``--prob-explain``: here.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess

import pytest
from sessions import ANSI
from sessions import session as run

pytestmark = pytest.mark.usefixtures("no_hang")


def text(result: pytest.RunResult) -> str:
    return "\n".join(ANSI.sub("", line) for line in result.outlines)


# 0.3.0's "rich" fixture: a function whose inputs are consistently right or wrong (ρ = 1), one whose
# runs vary (ρ = 0), and a one-case function that skips once; cost and usage recorded.
RICH = """
import collections, pytest
from pytest_probability import TokenUsage, record_cost, record_usage
C = collections.Counter()

@pytest.mark.parametrize("i", [f"c{j:02d}" for j in range(12)])
def bench_classify(i):
    C[i] += 1
    record_cost(0.001)
    assert int(i[1:]) % 4 != 0, "consistently wrong"

@pytest.mark.parametrize("i", [f"t{j:02d}" for j in range(10)])
def bench_triage(i):
    C[i] += 1
    record_usage(TokenUsage(model="m-small", input_tokens=100, output_tokens=5, cost=0.0005))
    assert (C[i] + int(i[1:])) % 3 != 0, "sometimes wrong"

def bench_skipper():
    C["s"] += 1
    if C["s"] == 2:
        pytest.skip("skip myself")
"""

# What the published 0.3.0 prints for RICH with --prob-runs=10 (verbatim), and this version with
# ini prob_inputs_interval = bootstrap: 0.3.0's percentile cluster bootstrap, seed 0, 5,000 resamples.
LINES_030 = """\
  classify  N=12 inputs × k=10    75.0%  [50.0%, 100.0%]  ρ=1.00
            runs ×2 → interval ±0%  ·  inputs ×2 → −29%  ·  each +$0.1200
  triage    N=10 inputs × k=10    67.0%  [64.0%,  70.0%]  ρ=0.00
            runs ×2 → interval −29%  ·  inputs ×2 → −29%  ·  each +$0.0500
  Overall   N=23 inputs × k=9–10  72.6%  [58.3%,  85.2%]  ρ=0.48
            runs ×2 → interval −2%  ·  inputs ×2 → −29%  ·  each +$0.1700"""
METRICS_030 = [
    "classify  pass^3  N=12 inputs   75.0%  [ 50.0%, 100.0%]",
    "triage    pass^3  N=10 inputs   25.4%  [ 21.7%,  29.2%]",
    "Overall   pass^3  N=23 inputs   54.5%  [ 37.9%,  71.2%]",
]


def test_function_level_and_overall_lines_as_0_3_0_printed_them(pytester: pytest.Pytester) -> None:
    """Item 9: with 0.3.0's interval the lines are 0.3.0's, number for number."""
    pytester.makepyfile(bench_rich=RICH)
    result = run(
        pytester, "--prob-runs=10", "--prob-metric=pass^3", "-o", "prob_inputs_interval=bootstrap", "--prob-json=r.json"
    )
    out = text(result)
    assert LINES_030 in out, out
    for line in METRICS_030:
        assert "    " + line in out, out
    aggregates = {a["name"]: a for a in json.loads((pytester.path / "r.json").read_text())["aggregates"]}
    assert list(aggregates) == ["classify", "skipper", "triage", "Overall"]
    classify = aggregates["classify"]
    assert classify["ci"] == {"method": "bootstrap", "level": 0.95, "low": 0.5, "high": 1.0}
    assert (classify["icc"], classify["width_factor"], classify["resamples"], classify["seed"]) == (1.0, 1.0, 5000, 0)
    assert classify["normal_ci"]["high"] > 1.0  # 0.3.0: not clipped
    assert aggregates["Overall"]["icc"] == pytest.approx(0.4792361766507892, rel=1e-12)  # 0.3.0's, unrounded
    skipper = aggregates["skipper"]
    assert (skipper["ci"], skipper["normal_ci"], skipper["suppressed"], skipper["icc"]) == (
        None,
        None,
        "fewer than 10 inputs",
        None,
    )

    # The same seed gives the same intervals; another seed draws other resamples.
    def intervals(*args: str) -> list:
        run(pytester, "--prob-runs=10", "-o", "prob_inputs_interval=bootstrap", "--prob-json=s.json", *args)
        return [a["ci"] for a in json.loads((pytester.path / "s.json").read_text())["aggregates"]]

    first = intervals("--prob-bootstrap=200")  # few resamples, so that the seed shows
    assert intervals("--prob-bootstrap=200", "--prob-seed=0") == first
    assert intervals("--prob-bootstrap=200", "--prob-seed=7") != first


def test_by_default_the_interval_is_the_cluster_adjusted_wilson_one(pytester: pytest.Pytester) -> None:
    """A deliberate difference: the Wilson interval over inputs keeps its coverage with few inputs
    (docs/performance.md), where the bootstrap's is a point when every input looks the same."""
    pytester.makepyfile(bench_rich=RICH)
    result = run(pytester, "--prob-runs=10", "--prob-json=r.json")
    out = text(result)
    assert "  classify  N=12 inputs × k=10    75.0%  [42.2%, 92.5%]  ρ=1.00" in out, out
    assert "runs ×2 → interval ±0%  ·  inputs ×2 → −29%  ·  each +$0.1200" in out
    aggregates = json.loads((pytester.path / "r.json").read_text())["aggregates"]
    assert aggregates[0]["ci"]["method"] == "wilson" and aggregates[0]["resamples"] is None
    hidden = run(pytester, "--prob-runs=10", "--prob-no-intervals")
    assert "N=12 inputs" not in text(hidden)
    fewer = run(pytester, "--prob-runs=10", "-o", "prob_min_inputs=20")
    assert "N=12 inputs" not in text(fewer) and "  Overall  N=23 inputs × k=9–10  72.6%" in text(fewer)


OPTIONS_030 = [
    "--prob-explain",
    "--prob-bootstrap=2000",
    "--prob-seed=-3",
    "--prob-plan-assume=0.99",
    "--prob-plan-flake=0.05",
    "--prob-compare=i",
]
INI_030 = """[pytest]
prob_explain = false
prob_bootstrap = 3000
prob_seed = 5
prob_min_inputs = 10
prob_compare =
"""


def test_every_option_and_ini_key_of_0_3_0_is_accepted(pytester: pytest.Pytester) -> None:
    """Item 5: 0.3.0's options start a session; its ini keys are known under --strict-config."""
    pytester.makepyfile(bench_rich=RICH)
    pytester.makeini(INI_030)
    result = run(pytester, "--strict-config", "--prob-runs=2", *OPTIONS_030)
    assert result.ret == pytest.ExitCode.TESTS_FAILED, text(result)  # classify's failing runs, as in 0.3.0
    assert "unrecognized arguments" not in result.stderr.str() and "Unknown config option" not in text(result)
    report = run(pytester, "--strict-config", "--prob-runs=2", "--prob-json=r.json")
    config = json.loads((pytester.path / "r.json").read_text())["stats_config"]
    assert (config["resamples"], config["seed"], config["min_inputs"]) == (3000, 5, 10)
    assert report.ret == pytest.ExitCode.TESTS_FAILED


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--prob-bootstrap=0"], "--prob-bootstrap must be at least 1, got 0"),
        (["--prob-bootstrap=x"], "argument --prob-bootstrap: invalid int value: 'x'"),
        (["--prob-seed=abc"], "argument --prob-seed: invalid int value: 'abc'"),
        (["-o", "prob_min_inputs=1"], "prob_min_inputs must be at least 2, got '1'"),
        (["-o", "prob_min_inputs=x"], "prob_min_inputs must be an integer, got 'x'"),
        (["--prob-plan", "--prob-plan-assume=1"], "--prob-plan-assume must be strictly between 0 and 1, got '1'"),
    ],
)
def test_bad_values_of_0_3_0s_options_are_usage_errors(pytester: pytest.Pytester, args, message) -> None:
    pytester.makepyfile(bench_rich=RICH)
    result = run(pytester, *args)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert message in result.stderr.str()


def test_0_3_0s_public_names_import_and_filter(pytester: pytest.Pytester) -> None:
    """Item 6: TokenUsage, InfeasibleGateWarning and CurtailmentWarning import, and -W / filterwarnings
    entries that name the warnings work."""
    pytester.makepyfile(
        bench_w="""
import dataclasses
import pytest
from pytest_probability import CurtailmentWarning, InfeasibleGateWarning, TokenUsage, record_cost, record_usage

def bench_names():
    usage = TokenUsage(model="m")
    usage.input_tokens += 120  # mutable, as 0.3.0's dataclass
    assert dataclasses.asdict(usage) == {"model": "m", "input_tokens": 120, "output_tokens": 0,
                                         "cached_input_tokens": 0, "cost": 0.0}
    record_usage(usage)
    assert issubclass(InfeasibleGateWarning, pytest.PytestWarning) and issubclass(CurtailmentWarning, pytest.PytestWarning)

@pytest.mark.probability(runs=10, min_rate=0.9)
def bench_hopeful():
    pass
"""
    )
    warned = run(pytester, "-W", "ignore::pytest_probability.CurtailmentWarning", "--prob-json=r.json")
    assert warned.ret == pytest.ExitCode.TESTS_FAILED, text(warned)  # hopeful's gate cannot pass: UNDECIDED
    assert "InfeasibleGateWarning: gate of hopeful cannot pass with 10 runs" in text(warned)
    assert json.loads((pytester.path / "r.json").read_text())["totals"]["usage"]["m"]["input_tokens"] == 120
    ignored = run(pytester, "-W", "ignore::pytest_probability.InfeasibleGateWarning")
    assert "InfeasibleGateWarning" not in text(ignored)
    pytester.makeini("[pytest]\nfilterwarnings =\n    error::pytest_probability.InfeasibleGateWarning\n")
    strict = run(pytester)
    assert strict.ret == pytest.ExitCode.INTERRUPTED  # a collection error before any run, as in 0.3.0


# 0.3.0's docs/json-report.md, "Recipes", verbatim (recipe 3 needs --prob-explain: see the explain test).
RECIPES = [
    """jq '.rows[] | select(.gate and .gate.verdict != "pass") | {case, verdict: .gate.verdict, low: .gate.low, high: .gate.high}' report.json""",
    """jq '.rows[] | select(.ci.low < 0.8) | {case, low: .ci.low, high: .ci.high}' report.json""",
    """jq '.rows[] | {case, p: .latency.quantile, est: .latency.estimate, low: .latency.ci.low, high: .latency.ci.high}' report.json""",
    """jq '.rows[] | select(.latency.verdict and .latency.verdict != "pass") | {case, verdict: .latency.verdict, max: .latency.max_latency}' report.json""",
    """jq '.aggregates[] | select(.icc != null) | {name, icc, width_factor}' report.json""",
    """jq '.aggregates[] | {name, pass_rate: .estimate, "pass^3": .metrics["pass^3"].estimate, left_out: .metrics["pass^3"].left_out}' report.json""",
    """jq '.aggregates[] | select(.ci) | {name, inputs, estimate, low: .ci.low, high: .ci.high, normal: .normal_ci}' report.json""",
    """jq '.comparisons[] | {function, arm, baseline, pairs, difference, low: .ci.low, high: .ci.high, p: .p_adjusted, verdict}' report.json""",
    """jq '.stopping, [.rows[] | select(.stopped) | {case, verdict: .stopped.verdict, after: .stopped.after, planned: .stopped.planned}]' report.json""",
    """jq '.rows[] | select(.status == "flaky") | {case, pass_rate}' report.json""",
    """jq -e '.totals.pass_rate >= 60' report.json > /dev/null || { echo "pass rate below 60%"; exit 1; }""",
    """jq '.baseline.comparisons[] | {function, pairs, difference, low: .ci.low, high: .ci.high, verdict}' report.json""",
    """jq '.baseline | {only_current, only_baseline}' report.json""",
]


@pytest.mark.skipif(
    shutil.which("jq") is None and not os.environ.get("CI"), reason="jq is not installed (.ci/run installs it)"
)
def test_0_3_0s_jq_recipes_run_on_this_versions_report(pytester: pytest.Pytester) -> None:
    """Item 7: every recipe of 0.3.0's JSON docs runs on this version's report and finds what it looks for."""
    pytester.makepyfile(
        bench_rich=RICH
        + """

@pytest.mark.probability(min_rate=0.5, stop="curtail")
def bench_gated():
    pass

@pytest.mark.probability(compare="style", margin=0.05)
@pytest.mark.parametrize("style", ["a", "b"])
@pytest.mark.parametrize("q", [f"q{j:02d}" for j in range(10)])
def bench_ab(style, q):
    pass
"""
    )
    run(pytester, "--prob-runs=10", "--prob-json=main.json")
    run(pytester, "--prob-runs=10", "--prob-metric=pass^3", "--prob-baseline=main.json", "--prob-json=report.json")
    found = []
    for recipe in RECIPES:
        done = subprocess.run(["bash", "-c", recipe], cwd=pytester.path, capture_output=True, text=True, timeout=30)
        assert done.returncode == 0, (recipe, done.stderr)
        found.append(done.stdout)
    assert '"case": "classify::c00"' in found[1]  # an interval below 80%
    assert '"icc": 1' in found[4] and '"name": "Overall"' in found[4]
    assert '"pass^3": 0.75' in found[5]
    assert '"inputs": 12' in found[6]
    assert '"arm": "b"' in found[7] and '"verdict": "pass"' in found[7]
    # stop= on a marker alone is this version's: the mode says so
    assert '"mode": "marker"' in found[8] and '"verdict": "pass"' in found[8] and '"planned": 10' in found[8]
    assert '"function": "classify"' in found[11]
    assert '"only_current": []' in found[12]


GATED = """
import collections, os, pytest
C = collections.Counter()

@pytest.mark.probability(min_rate=0.5)
@pytest.mark.parametrize("i", ["never", "solid", "coin"])
def bench_g(i):
    C[i] += 1
    if i == "never":
        assert False, "never passes"
    if i == "coin" and C[i] % 2:
        raise RuntimeError("boom")
"""


def test_explain_reads_every_line_and_fills_the_json(pytester: pytest.Pytester) -> None:
    """Item 10: --prob-explain (or ini prob_explain) reads each gated case, failing row, function-level
    line, metric and comparison in plain words, with a next step, and puts the same text in the JSON."""
    pytester.makepyfile(bench_g=GATED, bench_rich=RICH)
    result = run(pytester, "--prob-runs=10", "--prob-metric=pass^3", "--prob-explain", "--prob-json=r.json")
    out = text(result)
    assert "  Explained (--prob-explain):" in out and "  Methods used:" in out, out
    flat = " ".join(out.split())  # the readings are wrapped to the terminal
    assert (
        "0 of 10 runs passed. The true pass rate is probably between 0% and 31% (95% confidence). Your bar is "
        "50%, and that whole range is below it, so this case falls short of the bar."
    ) in flat
    assert "Next: look at the failing runs: -rx lists them with their assert messages" in flat
    assert (
        "5 of the runs that didn't pass errored (raised an exception other than a failed assert); they count "
        "as non-passes."
    ) in flat
    assert "Until that's settled, the case fails the test session (--prob-undecided=pass would let it through)." in flat
    assert "classify's 12 inputs passed 75.0% of their runs on average, each input counting equally." in flat
    assert "With twice the runs of every input the range would be no narrower" in flat
    assert "Next: to narrow the range, add inputs." in flat
    assert "pass^3 is the chance that 3 runs of an input all pass." in flat
    assert "Run with --prob-explain" not in out
    data = json.loads((pytester.path / "r.json").read_text())
    rows = {row["case"]: row for row in data["rows"]}
    never = rows["g::never"]
    assert never["gate"]["explanation"].startswith("0 of 10 runs passed.") and "Next:" in never["gate"]["explanation"]
    assert never["explanation"].startswith("None of the 10 runs passed.")
    assert rows["triage::t00"]["explanation"].startswith("7 of 10 runs passed; the others failed")
    aggregate = next(a for a in data["aggregates"] if a["name"] == "classify")
    assert aggregate["explanation"].startswith("classify's 12 inputs passed 75.0%")
    assert aggregate["metrics"]["pass^3"]["explanation"].startswith("pass^3 is the chance")
    # 0.3.0's recipe 3, verbatim, needs --prob-explain
    if shutil.which("jq"):
        recipe = (
            'jq -r \'.rows[] | select(.gate and .gate.verdict != "pass") | '
            '"\\(.case): \\(.gate.verdict | ascii_upcase)\\n\\(.gate.explanation)\\n"\' r.json'
        )
        done = subprocess.run(["bash", "-c", recipe], cwd=pytester.path, capture_output=True, text=True, timeout=30)
        assert done.returncode == 0 and "g::never: FAIL\n0 of 10 runs passed." in done.stdout, done.stderr
    # ini prob_explain does the same; without either, the summary ends with 0.3.0's hint
    pytester.makeini("[pytest]\nprob_explain = true\n")
    assert "Explained (--prob-explain)" in text(run(pytester, "--prob-runs=10"))
    pytester.makeini("[pytest]\n")
    assert "  Run with --prob-explain for a plain-language reading." in text(run(pytester, "--prob-runs=10"))
    quiet = run(pytester, "--prob-runs=10", "-k", "solid")
    assert "Run with --prob-explain" not in text(quiet)  # nothing worth reading: a gate that passed


def test_explain_reads_comparisons_and_the_baseline(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        bench_ab="""
import pytest

@pytest.mark.probability(compare="style", margin=0.02)
@pytest.mark.parametrize("style", ["terse", "few_shot"])
@pytest.mark.parametrize("q", [f"in{j:02d}" for j in range(12)])
def bench_triage(q, style):
    assert style == "terse", "few_shot wrong"
"""
    )
    run(pytester, "--prob-runs=4", "--prob-json=main.json")
    result = run(
        pytester,
        "--prob-runs=4",
        "--prob-explain",
        "--prob-baseline=main.json",
        "--prob-margin=0.05",
        "--prob-json=r.json",
    )
    flat = " ".join(text(result).split())
    assert (
        "Over the 12 inputs both arms ran, few_shot passed 100.0 points fewer of its runs than terse on average" in flat
    ), flat
    assert "Your margin is 2 points: few_shot passes if it is at most 2 points worse than terse" in flat
    assert "This run is set against an earlier report, main.json" in flat
    assert "With --prob-margin=0.05, each function's verdict decides" in flat
    data = json.loads((pytester.path / "r.json").read_text())
    assert data["comparisons"][0]["explanation"].startswith("Over the 12 inputs both arms ran")
    assert data["baseline"]["explanation"].startswith("This run is set against an earlier report, main.json")
    assert data["baseline"]["comparisons"][0]["explanation"].startswith("Over the 24 cases of triage in both reports")
