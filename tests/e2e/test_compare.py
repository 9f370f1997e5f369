"""End to end: baselines (--prob-baseline, --prob-history), their verdict items, A/B comparisons, --prob-plan.

Outcomes depend only on the run number (fixture ``n``) and on ``NIGHT`` in the
benchmark file, which a test rewrites between sessions, so a case's fraction
is the same whichever worker runs which run.
"""

from __future__ import annotations

import json
import re
import shutil
from functools import partial
from pathlib import Path

import pytest
from sessions import ANSI, CONFTEST, session

DATA = Path(__file__).parent / "data"

# Night 1: every case of both benchmarks passes 10/10. Night 2: every case of "cls" drops to 3/10
# (a drop of 70 points, which 12 paired cases show), "same" stays 10/10.
NIGHTS = """
import pytest

NIGHT = {night}
CASES = [f"c{{i:02d}}" for i in range(12)]


@pytest.mark.probability(runs=10)
@pytest.mark.parametrize("case", CASES)
def bench_cls(case, n):
    if NIGHT == 2:
        assert n <= 3, "dropped"


@pytest.mark.probability(runs=10)
@pytest.mark.parametrize("case", CASES)
def bench_same(case, n):
    pass
"""


pytestmark = pytest.mark.usefixtures("no_hang")


@pytest.fixture
def nights(pytester: pytest.Pytester):
    pytester.makeconftest(CONFTEST)

    def night(number: int) -> None:
        pytester.makepyfile(bench_x=NIGHTS.format(night=number))

    return night


def lines(result) -> list[str]:
    return [ANSI.sub("", line) for line in result.outlines]


def has(out: str, nodeid: str, outcome: str) -> bool:
    """``nodeid OUTCOME`` (serial -v) or ``[gwN] [ x%] OUTCOME nodeid`` (xdist -v)."""
    node = re.escape(nodeid)
    return bool(re.search(rf"{node} {outcome}|{outcome} {node}", out))


run = partial(session, gate_timeout=60)


@pytest.mark.parametrize("xdist", [[], ["-n", "2"]], ids=["serial", "xdist"])
def test_a_drop_beyond_the_margin_fails_its_benchmark_item_and_the_session(pytester, nights, xdist) -> None:
    nights(1)
    assert run(pytester, "--prob-json=night1.json").ret == 0
    nights(2)
    result = run(
        pytester,
        "-v",
        "-rx",
        *xdist,
        "--prob-baseline=night1.json",
        "--prob-margin=0.05",
        "--prob-json=night2.json",
        "--junitxml=junit.xml",
    )
    out = "\n".join(lines(result))
    assert result.ret == 1, out
    # One verdict item per benchmark, beside it, after all of its runs (0.3.0's ids).
    assert has(out, "bench_x.py::bench_same[baseline]", "PASSED"), out
    assert has(out, "bench_x.py::bench_cls[baseline]", "FAILED"), out
    # The failing runs of the baselined cases are xfailed: the benchmark's verdict decides.
    assert has(out, "bench_x.py::bench_cls::c00[run6]", "XFAIL"), out
    assert "probability baseline: dropped" in out
    outcomes = result.parseoutcomes()
    assert outcomes["failed"] == 1 and outcomes["xfailed"] == 84 and outcomes["passed"] == 157
    assert (
        "baseline: cls  current \u2212 baseline  \u221270.0 pp [\u221270.0, \u221270.0]  12 paired  \u2265\u22125 pp  FAIL"
        in out
    )
    junit = (pytester.path / "junit.xml").read_text()
    assert 'classname="bench_x" name="bench_cls[baseline]"' in junit and 'name="bench_same[baseline]"' in junit
    assert '<property name="probability_verdict" value="same  current' in junit
    report = json.loads((pytester.path / "night2.json").read_text())
    base = report["baseline"]
    assert (base["path"], base["margin"], base["paired"], base["only_current"], base["only_baseline"]) == (
        "night1.json",
        0.05,
        24,
        [],
        [],
    )
    assert report["comparisons"] == []  # the A/B arms' key; the baseline's comparisons are under "baseline"
    cls, same = base["comparisons"]
    assert (cls["function"], cls["axis"], cls["baseline"], cls["arm"], cls["pairs"]) == (
        "cls",
        None,
        "baseline",
        "current",
        12,
    )
    assert cls["verdict"] == "fail" and same["verdict"] == "pass" and cls["margin"] == 0.05
    assert cls["p_method"] == "sign-flip" and cls["ci"]["level"] == 0.95 and cls["ci"]["high"] < -0.05
    assert cls["difference"] == pytest.approx(-0.7) and cls["adjustment"] == "holm" and cls["family"] == 2
    drop = next(i for i in cls["inputs"] if i["input"] == "cls::c00")
    assert drop["arm"] == {"passes": 3, "total": 10} and drop["baseline"] == {"passes": 10, "total": 10}
    assert drop["difference"] == pytest.approx(-0.7) and drop["ci"]["method"] == "newcombe"


@pytest.mark.parametrize("margin", [["--prob-margin=0.05"], []], ids=["margin", "no-margin"])
def test_an_unchanged_suite_passes_against_its_baseline(pytester, nights, margin) -> None:
    """0.3.0's recipe on an unchanged suite exits 0, with a margin (its items pass) and without (no item)."""
    nights(1)
    assert run(pytester, "--prob-json=night1.json").ret == 0
    result = run(pytester, "-v", "--prob-baseline=night1.json", *margin)
    out = "\n".join(lines(result))
    assert result.ret == 0, out
    if margin:
        assert has(out, "bench_x.py::bench_cls[baseline]", "PASSED") and result.parseoutcomes()["passed"] == 242
    else:
        assert "[baseline]" not in out and result.parseoutcomes()["passed"] == 240
        assert "reporting only (--prob-margin=M makes each benchmark's verdict decide)" in out


def test_without_a_margin_a_drop_only_reports(pytester, nights) -> None:
    """0.3.0: without --prob-margin the baseline only reports; the dropped runs fail as they would anyway."""
    nights(1)
    run(pytester, "--prob-json=night1.json")
    nights(2)
    result = run(pytester, "--prob-baseline=night1.json", "--prob-json=night2.json")
    assert result.ret == 1
    assert result.parseoutcomes() == {"failed": 84, "passed": 156}
    report = json.loads((pytester.path / "night2.json").read_text())
    assert report["baseline"]["margin"] is None
    assert [c["verdict"] for c in report["baseline"]["comparisons"]] == [None, None]


def test_fewer_cases_than_min_inputs_leave_the_verdict_undecided(pytester) -> None:
    """0.3.0's documented trap: 3 paired cases have no verdict; --prob-undecided=pass lets them through.
    This version also warns at collection (InfeasibleGateWarning) and shows the fixed-case interval."""
    pytester.makeconftest(CONFTEST)
    pytester.makepyfile(bench_x=NIGHTS.format(night=1).replace("range(12)", "range(3)"))
    run(pytester, "--prob-json=night1.json")
    result = run(pytester, "--prob-baseline=night1.json", "--prob-margin=0.05")
    out = "\n".join(lines(result))
    assert result.ret == 1, out
    assert "FAILED bench_x.py::bench_cls[baseline]" in out
    assert "InfeasibleGateWarning: baseline verdict of cls cannot pass: 3 of its cases are in the baseline" in out
    assert "UNDECIDED  (fewer than 10 paired cases: no verdict from the interval)" in out
    assert run(pytester, "--prob-baseline=night1.json", "--prob-margin=0.05", "--prob-undecided=pass").ret == 0
    # Ini prob_min_inputs lowered to 3: no warning, and the sign-flip interval of 3 cases (8 sign
    # patterns) cannot exclude anything at 95%, so the verdict stays UNDECIDED.
    lowered = run(pytester, "--prob-baseline=night1.json", "--prob-margin=0.05", "-o", "prob_min_inputs=3")
    lowered_out = "\n".join(lines(lowered))
    assert lowered.ret == 1 and "InfeasibleGateWarning" not in lowered_out
    assert "0.0 pp [\u2212100.0, +100.0]  3 paired  \u2265\u22125 pp  UNDECIDED" in lowered_out


@pytest.mark.parametrize(
    "deselect",
    [["-k", "not baseline"], ["--deselect", "bench_x.py::bench_cls[baseline]"], ["--prob-no-gate-items"]],
    ids=["k", "deselect", "no-gate-items"],
)
def test_a_failed_verdict_without_its_item_still_fails_the_session(pytester, nights, deselect) -> None:
    nights(1)
    run(pytester, "--prob-json=night1.json")
    nights(2)
    result = run(pytester, "-v", "--prob-baseline=night1.json", "--prob-margin=0.05", *deselect)
    out = "\n".join(lines(result))
    assert "bench_cls[baseline] PASSED" not in out and "bench_cls[baseline] FAILED" not in out
    assert result.ret == 1, out
    assert result.parseoutcomes()["xfailed"] == 84 and "failed" not in result.parseoutcomes()


def test_the_verdict_item_alone_brings_its_runs(pytester, nights) -> None:
    nights(1)
    run(pytester, "--prob-json=night1.json")
    nights(2)
    result = run(pytester, "--prob-baseline=night1.json", "--prob-margin=0.05", "bench_x.py::bench_cls[baseline]")
    assert result.ret == 1
    assert result.parseoutcomes() == {"failed": 1, "passed": 36, "xfailed": 84}


def test_terminal_section_lists_new_removed_and_changed_cases(pytester, nights) -> None:
    nights(2)
    pytester.makepyfile(
        bench_y="""
import pytest

@pytest.mark.parametrize("prompt", ["v1"], ids=["p"])
def bench_param(prompt):
    pass

def bench_brand_new():
    pass
"""
    )
    baseline = {
        "rows": [
            {
                "case": "cls::c00",
                "nodeid": "bench_x.py::bench_cls::c00",
                "params": {"case": "c00"},
                "passes": 10,
                "total": 10,
            },
            {
                "case": "param::p",
                "nodeid": "bench_y.py::bench_param::p",
                "params": {"prompt": "v0"},
                "passes": 3,
                "total": 3,
            },
            {"case": "gone", "nodeid": "bench_z.py::bench_gone", "params": {}, "passes": 1, "total": 1},
        ]
    }
    (pytester.path / "base.json").write_text(json.dumps(baseline))
    result = run(pytester, "--prob-baseline=base.json")
    out = "\n".join(lines(result))
    assert "Baseline: 1 cases compared with 1 report; reporting only" in out, out
    assert "new (not compared): cls::c01, cls::c02, " in out and "… (14 more)" in out
    assert "removed: gone" in out
    assert "changed parameters (not compared): param::p" in out
    assert result.ret == 1  # cls's dropped runs fail: without a margin nothing xfails them


def test_pooled_baselines_by_glob(pytester, nights) -> None:
    nights(1)
    for name in ("nightA.json", "nightB.json"):
        assert run(pytester, f"--prob-json=reports/{name}").ret == 0
    nights(2)
    result = run(pytester, "--prob-baseline=reports/night*.json", "--prob-json=out.json")
    out = "\n".join(lines(result))
    assert "compared with 2 reports" in out, out
    report = json.loads((pytester.path / "out.json").read_text())
    drop = next(i for i in report["baseline"]["comparisons"][0]["inputs"] if i["input"] == "cls::c00")
    assert drop["baseline"] == {"passes": 20, "total": 20}
    assert len(report["baseline"]["paths"]) == 2


def test_history_folder_keeps_the_last_k_reports(pytester, nights) -> None:
    nights(1)
    pytester.makeini("[pytest]\nprob_history_depth = 2\n")
    first = run(pytester, "--prob-history=hist")
    assert first.ret == 0
    assert "Baseline:" not in "\n".join(lines(first))  # the first night has nothing to compare with
    assert len(list((pytester.path / "hist").glob("prob-report-*.json"))) == 1
    for _ in range(2):
        assert run(pytester, "--prob-history=hist").ret == 0
    assert len(list((pytester.path / "hist").glob("prob-report-*.json"))) == 3
    nights(2)
    result = run(pytester, "--prob-history=hist", "--prob-json=out.json")
    out = "\n".join(lines(result))
    assert "compared with 2 reports" in out, out  # depth 2 of the 3 stored
    assert result.ret == 1
    report = json.loads((pytester.path / "out.json").read_text())
    assert report["baseline"]["verdicts"]["fail"] == 12  # per case: each of cls's cases dropped
    assert len(list((pytester.path / "hist").glob("prob-report-*.json"))) == 4


def test_report_written_by_0_3_0_as_baseline(pytester, nights) -> None:
    """report-0.3.0-nights.json was written by the published 0.3.0 on night 1 (with one more case,
    same::retired): its rows pair by label."""
    nights(2)
    shutil.copy(DATA / "report-0.3.0-nights.json", pytester.path / "old.json")
    result = run(pytester, "-v", "--prob-baseline=old.json", "--prob-margin=0.05", "--prob-json=out.json")
    out = "\n".join(lines(result))
    assert has(out, "bench_x.py::bench_same[baseline]", "PASSED"), out
    assert has(out, "bench_x.py::bench_cls[baseline]", "FAILED"), out
    assert "removed: same::retired" in out
    report = json.loads((pytester.path / "out.json").read_text())
    assert report["baseline"]["versions"] == ["0.3.0"] and report["baseline"]["only_baseline"] == ["same::retired"]
    assert report["baseline"]["created"] == json.loads((DATA / "report-0.3.0-nights.json").read_text())["created"]


AB = """
import pytest
from pytest_probability import record_cost


@pytest.mark.probability(runs=10, compare="style", baseline="terse", margin=0.1)
@pytest.mark.parametrize("style", ["cot", "terse"])
@pytest.mark.parametrize("q", list("abcdefghijkl"))
def bench_ab(style, q, n):
    record_cost(0.001 if style == "terse" else 0.004)
    if style == "terse":
        assert n <= 6
"""


@pytest.mark.parametrize("xdist", [[], ["-n", "2"]], ids=["serial", "xdist"])
def test_compare_marker_pairs_inputs(pytester, xdist) -> None:
    pytester.makeconftest(CONFTEST)
    pytester.makepyfile(bench_ab=AB)
    result = run(pytester, "-v", *xdist, "--prob-json=ab.json")
    out = "\n".join(lines(result))
    assert "Comparisons (A/B)" in out and "ab [style] cot vs terse" in out and "cost ×4.00" in out, out
    # margin= on the mark gates the function: the arm's item passes, every failing run is xfailed.
    assert result.ret == 0, out
    assert has(out, "bench_ab.py::bench_ab[compare:cot]", "PASSED"), out
    assert result.parseoutcomes() == {"passed": 193, "xfailed": 48}
    [arm] = json.loads((pytester.path / "ab.json").read_text())["comparisons"]
    assert (arm["function"], arm["axis"], arm["baseline"], arm["arm"]) == ("ab", "style", "terse", "cot")
    assert arm["pairs"] == 12 and arm["unpaired"] == []
    assert arm["difference"] == pytest.approx(0.4) and arm["cost_ratio"] == pytest.approx(4.0)
    assert arm["p_method"] == "sign-flip" and arm["verdict"] == "pass" and arm["margin"] == 0.1
    assert [i["input"] for i in arm["inputs"]] == list("abcdefghijkl")
    assert all(
        i["arm"] == {"passes": 10, "total": 10} and i["baseline"] == {"passes": 6, "total": 10} for i in arm["inputs"]
    )
    assert all(i["family"] == 12 for i in arm["inputs"])


@pytest.mark.parametrize("xdist", [[], ["-n", "2"]], ids=["serial", "xdist"])
def test_an_arm_worse_than_its_margin_fails_its_item_and_the_session(pytester, xdist) -> None:
    """0.3.0: a margin gates the function; the failing arm's [compare:ARM] item fails, and every
    failing run of the function, the baseline arm's included, is xfailed."""
    pytester.makeconftest(CONFTEST)
    pytester.makepyfile(bench_ab=AB.replace('baseline="terse"', 'baseline="cot"'))
    result = run(pytester, "-v", "-rx", *xdist, "--junitxml=junit.xml")
    out = "\n".join(lines(result))
    assert result.ret == 1, out
    assert has(out, "bench_ab.py::bench_ab[compare:terse]", "FAILED"), out
    assert (
        "compare: ab[style]  terse \u2212 cot  \u221240.0 pp [\u221240.0, \u221240.0]  12 paired  \u2265\u221210 pp  FAIL"
        in out
    )
    assert "probability comparison: " in out
    assert result.parseoutcomes() == {"failed": 1, "passed": 192, "xfailed": 48}
    assert 'name="bench_ab[compare:terse]"' in (pytester.path / "junit.xml").read_text()
    for deselect in (["-k", "not compare"], ["--prob-no-gate-items"]):
        assert run(pytester, *xdist, *deselect).ret == 1


def test_prob_compare_option_first_value_is_the_baseline(pytester) -> None:
    pytester.makeconftest(CONFTEST)
    pytester.makepyfile(bench_ab=AB.replace('compare="style", baseline="terse", margin=0.1', ""))
    run(pytester, "--prob-compare=style", "--prob-json=ab.json")
    [arm] = json.loads((pytester.path / "ab.json").read_text())["comparisons"]
    assert (arm["baseline"], arm["arm"]) == ("cot", "terse")
    assert arm["difference"] == pytest.approx(-0.4)
    assert arm["verdict"] is None and arm["margin"] is None  # no margin: no verdict


@pytest.mark.parametrize("xdist", [[], ["-n", "2"]], ids=["serial", "xdist"])
def test_plan_runs_nothing(pytester, nights, xdist) -> None:
    nights(1)
    run(pytester, "--prob-json=night1.json")
    pytester.makepyfile(
        bench_gate="""
import pytest

@pytest.mark.probability(runs=5, min_rate=0.9)
def bench_gated():
    raise AssertionError("must not run")
"""
    )
    result = run(pytester, *xdist, "--prob-plan", "--prob-baseline=night1.json", "--prob-history=hist")
    out = "\n".join(lines(result))
    assert result.ret == 0, out
    assert "probability: plan" in out
    assert re.search(r"^  gated +5 +36 +100 +0% +41% +5%$", out, re.M), out  # 0.3.0's columns
    assert "  Plan:    25 cases, 245 runs; nothing was run." in out
    assert re.search(
        r"cls::c00 \(10 runs\): baseline 10/10 \(100%\): detecting a drop of 20 points needs \d+ runs", out
    )
    assert "must not run" not in out and "passed" not in out.split("probability: plan")[1]
    assert not list((pytester.path / "hist").glob("*.json"))  # a plan is no night of the history
    nothing = run(pytester, *xdist, "--prob-plan", "-k", "matches_nothing")
    assert nothing.ret == pytest.ExitCode.NO_TESTS_COLLECTED  # as in 0.3.0


# The published 0.3.0's own --prob-plan on this file (-o prob_runs=40 --prob-plan --prob-plan-report=last.json),
# verbatim: this version prints the same table.
PLAN_030 = """
import pytest

@pytest.mark.probability(min_rate=0.9)
@pytest.mark.parametrize("kind", ["refund", "billing"])
def bench_classify(kind):
    pass

@pytest.mark.probability(min_passes=19, runs=20)
def bench_smoke():
    pass

@pytest.mark.probability(min_rate=0.95, method="wilson", runs=100)
def bench_wilson():
    pass

@pytest.mark.probability(min_rate=0.8, method="bayes", prior=(1, 1), runs=30)
def bench_bayes():
    pass

@pytest.mark.probability(min_rate=0.98, runs=50)
def bench_above_assumed():
    pass

@pytest.mark.probability(runs=40)
def bench_ungated():
    pass
"""
PLAN_030_OUT = """\
  case               runs  min runs  runs for 80%  chance now  catch 10%  catch 1%     cost
  classify::refund     40        36           100         30%        99%       33%  $0.0800
  classify::billing    40        36           100         30%        99%       33%
  smoke                20        19            20         88%        88%       18%  $0.2000
  wilson              100        73           779          5%        99%       63%
  bayes                30        16            25         77%        96%       26%
  above_assumed        50       183         never          0%        99%       39%
  ungated              40         \u2014             \u2014           \u2014        99%       33%

  Plan:    7 cases, 320 runs; nothing was run.
  Cost:    $0.2800 projected from last.json (5 cases not in it)
"""


def test_plan_prints_0_3_0s_run_budget(pytester) -> None:
    pytester.makepyfile(bench_plan=PLAN_030)
    (pytester.path / "last.json").write_text(
        json.dumps(
            {
                "rows": [
                    {"case": "classify::refund", "passes": 40, "fails": 0, "errors": 0, "total": 40, "cost": 0.08},
                    {"case": "smoke", "passes": 20, "fails": 0, "errors": 0, "total": 20, "cost": 0.2},
                ]
            }
        )
    )
    result = run(pytester, "-o", "prob_runs=40", "--prob-plan", "--prob-plan-report=last.json")
    out = "\n".join(lines(result))
    assert result.ret == 0, out
    assert PLAN_030_OUT in out, out
    assert "catch 10%     The chance the planned runs show at least one failure if 10% of" in out
    assume = run(
        pytester,
        "-o",
        "prob_runs=40",
        "--prob-plan",
        "--prob-plan-assume=0.99",
        "--prob-plan-flake=0.05,0.001",
        "-k",
        "classify or wilson or smoke",
    )
    text = "\n".join(lines(assume))
    assert "  case               runs  min runs  runs for 80%  chance now  catch 5%  catch 0.1%" in text, text
    assert re.search(r"^  classify::refund +40 +36 +54 ", text, re.M) and re.search(
        r"^  wilson +100 +73 +142 ", text, re.M
    )
    assert re.search(r"^  smoke +20 +19 +19 ", text, re.M)


def test_plan_sizes_an_ab_comparison_from_a_report(pytester) -> None:
    """Beyond 0.3.0 (Miller 2024): the inputs x runs per input that detect the margin, from a report's
    per-input variances, and when more runs stop helping."""
    pytester.makeconftest(CONFTEST)
    pytester.makepyfile(bench_ab=AB)
    run(pytester, "--prob-json=ab.json")
    result = run(pytester, "--prob-plan", "--prob-plan-report=ab.json")
    out = "\n".join(lines(result))
    assert result.ret == 0, out
    assert "A/B: inputs \u00d7 runs per input (Miller 2024, from the per-input variances of ab.json)" in out
    assert "ab[style] cot vs terse: 12 inputs; between-input variance of the difference" in out
    assert "To detect a difference of 10 points with 80% power (two-sided 5%): 1 run per input needs" in out
    alone = run(pytester, "--prob-plan")
    assert "ab[style] cot vs terse: no report to estimate variances from" in "\n".join(lines(alone))


@pytest.mark.parametrize(
    "setup, args, message",
    [
        (None, ["--prob-baseline=missing.json"], "--prob-baseline: missing.json: no such file"),
        ("{not json", ["--prob-baseline=bad.json"], "is not JSON"),
        (
            '{"rows": [{"case": "x", "passes": 3, "total": 2}]}',
            ["--prob-baseline=bad.json"],
            "more passes (3) than counted runs (2)",
        ),
        ('{"totals": {}}', ["--prob-baseline=bad.json"], "is not a --prob-json report"),
        (None, ["--prob-baseline=nights/*.json"], "no file matches nights/*.json"),
        (None, ["--prob-compare=nope"], "--prob-compare=nope: no benchmark has a parametrize argument 'nope'"),
        (None, ["--prob-adjust=sidak"], "invalid choice: 'sidak'"),
        (None, ["--prob-margin=5"], "did you mean 0.05?"),
        (None, ["--prob-margin=0.05"], "--prob-margin needs --prob-baseline (or --prob-history)"),
        (None, ["--prob-plan", "--prob-plan-report=nope.json"], "--prob-plan-report: cannot read "),
        (None, ["--prob-plan", "--prob-plan-assume=1"], "--prob-plan-assume must be strictly between 0 and 1, got '1'"),
        (None, ["--prob-plan", "--prob-plan-flake=0.1,2"], "got '2'; did you mean 0.02?"),
    ],
)
def test_bad_input_is_a_usage_error_before_any_run(pytester, nights, setup, args, message) -> None:
    nights(2)
    if setup is not None:
        (pytester.path / "bad.json").write_text(setup)
    result = run(pytester, *args)
    err = result.stderr.str()
    assert result.ret in (pytest.ExitCode.USAGE_ERROR, 2), err
    assert message in err, err
    assert "passed" not in result.stdout.str()


def test_a_corrupt_history_report_names_prob_history(pytester, nights) -> None:
    """A report of the --prob-history folder that cannot be read names the option that found it; a
    --prob-baseline file beside it is still named --prob-baseline."""
    nights(2)
    (pytester.path / "history").mkdir()
    (pytester.path / "history" / "prob-report-20261201T000000.000000Z-1.json").write_text("{not json")
    result = run(pytester, "--prob-history=history")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--prob-history: *prob-report-20261201T000000.000000Z-1.json is not JSON*"])
    (pytester.path / "bad.json").write_text('{"totals": {}}')
    both = run(pytester, "--prob-history=history", "--prob-baseline=bad.json")
    both.stderr.fnmatch_lines(["*--prob-baseline: */bad.json is not a --prob-json report*"])


def test_unknown_axis_in_the_marker_is_a_usage_error(pytester) -> None:
    pytester.makepyfile(bench_ab=AB.replace('compare="style"', 'compare="nope"'))
    result = run(pytester)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert (
        "probability(compare='nope') is not a parametrize argument of it (its arguments: q, style)"
        in result.stderr.str()
    )


def test_unknown_baseline_variant_is_a_usage_error(pytester) -> None:
    pytester.makepyfile(bench_ab=AB.replace('baseline="terse"', 'baseline="verbose"'))
    result = run(pytester)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert (
        "ab: probability(baseline='verbose') is not a value of 'style' (its values: cot, terse)" in result.stderr.str()
    )


PLAIN = """
import pytest


@pytest.mark.probability(runs=3)
@pytest.mark.parametrize("q", ["a", "b"])
def bench_plain(q):
    pass
"""


@pytest.mark.parametrize("xdist", [[], ["-n", "2"]], ids=["serial", "xdist"])
def test_an_ini_compare_axis_that_no_selected_benchmark_has_compares_nothing(pytester, xdist) -> None:
    """Issue 36, 0.3.0 parity: ini ``prob_compare``, shared by a repository's jobs, names an axis that the
    benchmarks a job selects may lack. As in 0.3.0, the functions that have it are compared, and with none
    nothing; ``--prob-compare`` on the command line stays an error (docs/migrating-from-0.3.md)."""
    pytester.makeconftest(CONFTEST)
    pytester.makeini("[pytest]\nprob_compare = style\n")
    pytester.makepyfile(bench_ab=AB.replace('compare="style", baseline="terse", margin=0.1', ""), bench_plain=PLAIN)
    alone = run(pytester, *xdist, "bench_plain.py", "--prob-json=plain.json")
    assert alone.ret == 0, alone.stdout.str() + alone.stderr.str()
    assert json.loads((pytester.path / "plain.json").read_text())["comparisons"] == []
    both = run(pytester, *xdist, "--prob-json=both.json")
    assert both.ret == 1, both.stdout.str()  # terse's failing runs: ungated
    [arm] = json.loads((pytester.path / "both.json").read_text())["comparisons"]
    assert (arm["function"], arm["baseline"], arm["arm"]) == ("ab", "cot", "terse")
    given = run(pytester, "bench_plain.py", "--prob-compare=style")  # serial: a worker's usage error is exit 3
    assert given.ret == pytest.ExitCode.USAGE_ERROR
    assert "--prob-compare=style: no benchmark has a parametrize argument 'style'" in given.stderr.str()
