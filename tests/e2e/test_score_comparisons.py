"""End to end: comparisons of graded results, against a baseline and between A/B arms.

Every score depends only on the input, the run number and ``SHIFT`` (the
night's drop, read from ``shift.txt``), so both nights' scores are known and
the same whichever worker runs which run. The numbers are checked against
``maths.scores`` on the same values and the per-case tests against scipy's
Welch t-test (the maths itself is checked against scipy in
tests/unit/test_scores.py).
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from sessions import CONFTEST, report, session

from pytest_probability.maths import scores as maths
from pytest_probability.maths import twostats

XDIST = pytest.mark.parametrize("xdist", [[], ["-n", "2"]], ids=["serial", "xdist"])

INPUTS = 12
RUNS = 10

GRADED = f"""
import pathlib
import pytest
from pytest_probability import record_score

SHIFT = float(pathlib.Path("shift.txt").read_text())
INPUTS = [f"q{{i:02d}}" for i in range({INPUTS})]


def value(i, n, shift):
    return max(0.0, 0.55 + 0.4 * ((n * 7 + i * 3) % 10) / 10 - shift * (1 + (i % 3) / 10))


@pytest.mark.probability(runs={RUNS})
@pytest.mark.parametrize("q", INPUTS)
def bench_answer(q, n):
    record_score(value(INPUTS.index(q), n, SHIFT), "faithfulness")
"""

AB = """
import pytest
from pytest_probability import record_score

INPUTS = [f"q{i:02d}" for i in range(12)]


def value(i, n, shift):
    return max(0.0, 0.55 + 0.4 * ((n * 7 + i * 3) % 10) / 10 - shift * (1 + (i % 3) / 10))


@pytest.mark.probability(runs=8, compare="prompt", margin=0.05)
@pytest.mark.parametrize("prompt", ["a", "b", "c"])
@pytest.mark.parametrize("q", INPUTS)
def bench_ab(q, prompt, n):
    record_score(value(INPUTS.index(q), n, {"a": 0.0, "b": 0.3, "c": 0.0}[prompt]))
"""


def value(i: int, n: int, shift: float) -> float:
    return max(0.0, 0.55 + 0.4 * ((n * 7 + i * 3) % 10) / 10 - shift * (1 + (i % 3) / 10))


def night(i: int, shift: float, runs: int = RUNS) -> list[float]:
    return [value(i, n, shift) for n in range(1, runs + 1)]


def run(pytester: pytest.Pytester, *args: str, shift: float = 0.0, ret: int | None = None) -> pytest.RunResult:
    (pytester.path / "shift.txt").write_text(str(shift), encoding="utf-8")
    return session(pytester, *args, ret=ret)


@pytest.fixture
def graded(pytester: pytest.Pytester) -> pytest.Pytester:
    pytester.makeconftest(CONFTEST)
    pytester.makepyfile(bench_graded=GRADED)
    run(pytester, "--prob-json=night1.json", ret=0)
    return pytester


@XDIST
def test_a_drop_of_the_mean_score_fails_the_benchmarks_baseline_verdict(
    graded: pytest.Pytester, xdist: list[str]
) -> None:
    result = run(
        graded, *xdist, "--prob-baseline=night1.json", "--prob-margin=0.05", "--prob-json=night2.json", shift=0.2, ret=1
    )
    data = report(graded, "night2.json")
    [benchmark] = data["baseline"]["comparisons"]
    assert benchmark["verdict"] == "pass"  # every run passes both nights: the fractions did not move
    [score] = benchmark["scores"]
    expected = maths.paired_difference([(night(i, 0.2), night(i, 0.0)) for i in range(INPUTS)], 0.95)
    assert score["name"] == "faithfulness" and score["range"] == [0.0, 1.0]
    assert score["pairs"] == INPUTS and score["margin"] == 0.05
    assert score["difference"] == pytest.approx(expected.difference)
    assert score["ci"]["method"] == "paired-bootstrap" and score["ci"]["level"] == 0.95
    assert (score["ci"]["low"], score["ci"]["high"]) == pytest.approx((expected.ci.low, expected.ci.high))
    assert score["ci"]["high"] < -0.05 and score["verdict"] == "fail"
    assert score["p"] == pytest.approx(expected.p) and score["p_method"] == "paired-bootstrap"
    assert [entry["input"] for entry in score["inputs"]] == [f"answer::q{i:02d}" for i in range(INPUTS)]
    assert all(
        entry["nodeid"] == f"bench_graded.py::bench_answer::{entry['input'].split('::')[1]}"
        for entry in score["inputs"]
    )
    assert data["baseline"]["score_verdicts"]["fail"] + data["baseline"]["score_verdicts"]["undecided"] == INPUTS
    result.stdout.fnmatch_lines(
        [
            "_*bench_answer?baseline?*_",
            "baseline: answer  current \u2212 baseline  0.0 pp [0.0, 0.0]  12 paired  \u2265\u22125 pp  PASS",
            "mean faithfulness  \u2212*12 paired  \u2265\u22120.05  FAIL",
        ]
    )
    result.stdout.fnmatch_lines(["FAILED bench_graded.py::bench_answer[[]baseline[]]*"])
    result.stdout.fnmatch_lines(
        ["*mean scores, current minus baseline*", "*answer faithfulness*12 cases*-0.2*margin 0.05  FAIL"]
    )


def test_each_cases_score_test_is_welchs_and_its_interval_at_the_adjusted_level(pytester: pytest.Pytester) -> None:
    scipy_stats = pytest.importorskip("scipy.stats")
    pytester.makeconftest(CONFTEST)
    pytester.makepyfile(bench_graded=GRADED.replace(f"runs={RUNS}", "runs=40"))
    run(pytester, "--prob-json=night1.json", ret=0)
    run(pytester, "--prob-baseline=night1.json", "--prob-margin=0.05", "--prob-json=night2.json", shift=0.3, ret=1)
    [score] = report(pytester, "night2.json")["baseline"]["comparisons"][0]["scores"]
    ps = []
    for i, entry in enumerate(score["inputs"]):
        tonight, before = night(i, 0.3, 40), night(i, 0.0, 40)
        welch = scipy_stats.ttest_ind(tonight, before, equal_var=False)
        assert entry["p"] == pytest.approx(welch.pvalue, rel=1e-6)
        assert entry["p_method"] == "welch"
        assert entry["arm"] == {"n": 40, "mean": pytest.approx(sum(tonight) / 40)}
        assert entry["baseline"] == {"n": 40, "mean": pytest.approx(sum(before) / 40)}
        ps.append(entry["p"])
    adjusted = twostats.adjust(ps, "holm", 0.05)
    for i, (entry, result) in enumerate(zip(score["inputs"], adjusted, strict=False)):
        assert entry["p_adjusted"] == pytest.approx(result.p_adjusted)
        interval = maths.difference_interval(night(i, 0.3, 40), night(i, 0.0, 40), result.local_level / 2)
        assert entry["ci"]["low"] == pytest.approx(interval.low)
        assert entry["ci"]["level"] == pytest.approx(1 - result.local_level)
        assert entry["verdict"] == ("fail" if result.rejected and entry["ci"]["high"] < -0.05 else "undecided")
    assert any(entry["verdict"] == "fail" for entry in score["inputs"])


@XDIST
def test_the_same_scores_pass_and_reporting_only_decides_nothing(graded: pytest.Pytester, xdist: list[str]) -> None:
    run(graded, *xdist, "--prob-baseline=night1.json", "--prob-margin=0.05", "--prob-json=same.json", ret=0)
    [score] = report(graded, "same.json")["baseline"]["comparisons"][0]["scores"]
    assert score["difference"] == 0.0 and score["verdict"] == "pass"
    result = run(graded, *xdist, "--prob-baseline=night1.json", "--prob-json=free.json", shift=0.2, ret=0)
    [score] = report(graded, "free.json")["baseline"]["comparisons"][0]["scores"]
    assert score["verdict"] is None and score["margin"] is None and score["difference"] < -0.19
    assert "[baseline]" not in result.stdout.str()


def test_lf_reruns_the_cases_of_a_failed_score_verdict(graded: pytest.Pytester) -> None:
    graded.runpytest_subprocess("--prob-baseline=night1.json", "--prob-margin=0.05", timeout=180)  # cache on
    (graded.path / "shift.txt").write_text("0.2", encoding="utf-8")
    failed = graded.runpytest_subprocess("--prob-baseline=night1.json", "--prob-margin=0.05", timeout=180)
    assert failed.ret == 1
    again = graded.runpytest_subprocess("--lf", "--prob-baseline=night1.json", "--prob-margin=0.05", "-q", timeout=180)
    again.stdout.fnmatch_lines([f"*1 failed, {INPUTS * RUNS} passed*"])
    assert "run with --lf" not in again.stdout.str()


def test_a_baseline_without_scores_compares_fractions_only(graded: pytest.Pytester) -> None:
    old = report(graded, "night1.json")
    for record in old["records"]:
        record.pop("scores")  # a 0.3.0 or 0.4.0 report: no scores in its records
    (graded.path / "old.json").write_text(json.dumps(old), encoding="utf-8")
    result = run(graded, "--prob-baseline=old.json", "--prob-margin=0.05", "--prob-json=night2.json", shift=0.3, ret=0)
    data = report(graded, "night2.json")
    assert data["baseline"]["comparisons"][0]["scores"] == []
    assert data["baseline"]["score_verdicts"] == {"pass": 0, "fail": 0, "undecided": 0}
    assert "mean scores" not in result.stdout.str()


def test_margins_are_shares_of_the_score_range_and_out_of_range_baselines_are_left_out(
    pytester: pytest.Pytester,
) -> None:
    pytester.makeconftest(CONFTEST)
    pytester.makepyfile(
        bench_graded=GRADED.replace(
            "@pytest.mark.probability(runs=10)", "@pytest.mark.probability(runs=10, score_range=(0, 10))"
        ).replace(
            'record_score(value(INPUTS.index(q), n, SHIFT), "faithfulness")',
            'record_score(10 * value(INPUTS.index(q), n, SHIFT), "faithfulness")',
        )
    )
    run(pytester, "--prob-json=night1.json", ret=0)
    result = run(
        pytester, "--prob-baseline=night1.json", "--prob-margin=0.05", "--prob-json=night2.json", shift=0.03, ret=0
    )
    [score] = report(pytester, "night2.json")["baseline"]["comparisons"][0]["scores"]
    assert score["range"] == [0.0, 10.0] and -0.4 < score["difference"] < -0.3  # within half a point
    assert score["verdict"] == "pass"
    result.stdout.fnmatch_lines(["*answer faithfulness*margin 0.5  PASS"])
    old = report(pytester, "night1.json")
    for record in old["records"][:RUNS]:
        record["scores"][0]["value"] = 11.0  # outside tonight's range
    (pytester.path / "odd.json").write_text(json.dumps(old), encoding="utf-8")
    run(pytester, "--prob-baseline=odd.json", "--prob-margin=0.05", "--prob-json=night3.json", ret=0)
    [score] = report(pytester, "night3.json")["baseline"]["comparisons"][0]["scores"]
    first = score["inputs"][0]
    assert first["note"] == "baseline scores outside the score range [0, 10]" and first["p"] is None
    assert score["pairs"] == INPUTS - 1


@XDIST
def test_ab_arms_mean_scores_paired_by_input(pytester: pytest.Pytester, xdist: list[str]) -> None:
    pytester.makeconftest(CONFTEST)
    pytester.makepyfile(bench_ab=AB)
    result = run(pytester, *xdist, "--prob-json=ab.json", ret=1)
    arms = {c["arm"]: c for c in report(pytester, "ab.json")["comparisons"]}
    assert arms["b"]["verdict"] == arms["c"]["verdict"] == "pass"  # the fractions: every run passes
    [b], [c] = arms["b"]["scores"], arms["c"]["scores"]
    expected = maths.paired_difference([(night(i, 0.3, 8), night(i, 0.0, 8)) for i in range(12)], 0.95)
    assert b["difference"] == pytest.approx(expected.difference) and b["verdict"] == "fail"
    assert (b["ci"]["low"], b["ci"]["high"]) == pytest.approx((expected.ci.low, expected.ci.high))
    assert c["difference"] == 0.0 and c["verdict"] == "pass"
    assert [entry["input"] for entry in b["inputs"]] == [f"q{i:02d}" for i in range(12)]
    assert b["family"] == c["family"] == 2
    result.stdout.fnmatch_lines(["FAILED bench_ab.py::bench_ab[[]compare:b[]]*"])
    assert "compare:c] " not in result.stdout.str().split("short test summary")[-1]


def test_the_merged_shards_compare_scores_as_the_unsharded_session(graded: pytest.Pytester) -> None:
    args = ("--prob-baseline=night1.json", "--prob-margin=0.05")
    run(graded, *args, "--prob-json=whole.json", shift=0.2, ret=1)
    for k in (1, 2):
        run(graded, *args, f"--prob-shard={k}/2", f"--prob-json=s{k}.json", *(["-n", "2"] if k == 2 else []), shift=0.2)
    merged = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest_probability",
            "merge",
            "s1.json",
            "s2.json",
            "-o",
            "m.json",
            "--prob-baseline=night1.json",
        ],
        cwd=graded.path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert merged.returncode == 1, merged.stdout + merged.stderr
    whole, both = report(graded, "whole.json"), report(graded, "m.json")
    assert both["baseline"]["comparisons"][0]["scores"] == whole["baseline"]["comparisons"][0]["scores"]
    assert both["baseline"]["score_verdicts"] == whole["baseline"]["score_verdicts"]


def test_the_score_drop_gauges(graded: pytest.Pytester) -> None:
    pytest.importorskip("opentelemetry.proto")
    from otlp_receiver import flatten_metrics

    from pytest_probability.otel import otlp_json

    run(
        graded,
        "--prob-baseline=night1.json",
        "--prob-margin=0.05",
        "--prob-json=night2.json",
        "--prob-otel-file=otel.jsonl",
        shift=0.3,
        ret=1,
    )
    [score] = report(graded, "night2.json")["baseline"]["comparisons"][0]["scores"]
    points = flatten_metrics(list(otlp_json.read_file(graded.path / "otel.jsonl")))
    gauges: dict[str, dict[str, float]] = {}
    for point in points:
        if point.name.startswith("probability.case.baseline.score."):
            assert point.attributes["probability.score.name"] == "faithfulness"
            assert point.unit == ("" if point.name.endswith(".verdict") else "1")
            gauges.setdefault(point.name, {})[point.attributes["probability.case"]] = point.value
    by_case = {entry["input"].split("::")[1]: entry for entry in score["inputs"]}
    assert set(gauges) == {
        f"probability.case.baseline.score.{name}"
        for name in ("mean", "difference", "difference.lower", "difference.upper", "p_adjusted", "verdict")
    }
    for case, entry in by_case.items():
        assert gauges["probability.case.baseline.score.difference"][case] == pytest.approx(entry["difference"])
        assert gauges["probability.case.baseline.score.difference.upper"][case] == pytest.approx(entry["ci"]["high"])
        assert gauges["probability.case.baseline.score.mean"][case] == entry["baseline"]["mean"]
        assert gauges["probability.case.baseline.score.p_adjusted"][case] == entry["p_adjusted"]
        assert (
            gauges["probability.case.baseline.score.verdict"][case]
            == {"fail": -1, "undecided": 0, "pass": 1}[entry["verdict"]]
        )
