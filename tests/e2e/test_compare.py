"""End to end: baselines (--prob-baseline, --prob-history), their verdict items, A/B comparisons, --prob-plan.

Outcomes depend only on the run number (fixture ``n``) and on ``NIGHT`` in the
benchmark file, which a test rewrites between sessions, so a case's fraction
is the same whichever worker runs which run.
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from sessions import ANSI, CONFTEST, alarm

DATA = Path(__file__).parent / "data"

# Night 1: both cases 20/20. Night 2: "drop" passes 5/20, "same" stays 20/20.
# The margin of 0.25 lets an unchanged case PASS: 20/20 against 20/20 gives a
# Newcombe interval of about [-16, +16] points.
NIGHTS = """
import pytest

NIGHT = {night}


@pytest.mark.probability(runs=20, margin=0.25)
@pytest.mark.parametrize("case", ["same", "drop"])
def bench_cls(case, n):
    if case == "drop" and NIGHT == 2:
        assert n <= 5
"""


@pytest.fixture(autouse=True)
def no_hang():
    with alarm(120):
        yield


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


def run(pytester: pytest.Pytester, *args: str):
    return pytester.runpytest_subprocess("-p", "no:cacheprovider", "-o", "prob_gate_timeout=60", *args, timeout=90)


@pytest.mark.parametrize("xdist", [[], ["-n", "2"]], ids=["serial", "xdist"])
def test_regressed_case_fails_its_item_and_the_session(pytester, nights, xdist) -> None:
    nights(1)
    assert run(pytester, "--prob-json=night1.json").ret == 0
    nights(2)
    result = run(pytester, "-v", "-rx", *xdist, "--prob-baseline=night1.json", "--prob-json=night2.json", "--junitxml=junit.xml")
    out = "\n".join(lines(result))
    assert result.ret == 1, out
    assert has(out, "bench_x.py::bench_cls::same[baseline]", "PASSED"), out
    assert has(out, "bench_x.py::bench_cls::drop[baseline]", "FAILED"), out
    # The failing runs of the compared case are xfailed: its comparison decides.
    assert has(out, "bench_x.py::bench_cls::drop[run6]", "XFAIL"), out
    assert "compared case: its baseline item decides" in out
    outcomes = result.parseoutcomes()
    assert outcomes["failed"] == 1 and outcomes["xfailed"] == 15
    assert "baseline comparison of cls::drop: FAIL: 5/20 vs baseline 20/20 (1 report)" in out
    junit = (pytester.path / "junit.xml").read_text()
    assert 'name="drop[baseline]"' in junit and 'name="same[baseline]"' in junit
    report = json.loads((pytester.path / "night2.json").read_text())
    assert report["baseline"]["compared"] == 2 and report["baseline"]["verdicts"] == {"pass": 1, "fail": 1, "undecided": 0}
    [pooled] = report["comparisons"]
    assert pooled["function"] == "cls" and pooled["axis"] is None and pooled["arm"] == "current"
    assert pooled["pairs"] == 2 and pooled["adjustment"] == "holm" and pooled["p_method"] == "stratified-exact"
    drop = next(i for i in pooled["inputs"] if i["input"] == "cls::drop")
    assert drop["arm"] == {"passes": 5, "total": 20} and drop["baseline"] == {"passes": 20, "total": 20}
    assert drop["difference"] == pytest.approx(-0.75) and drop["verdict"] == "fail"
    assert drop["ci"]["method"] == "newcombe" and drop["ci"]["high"] < -0.25
    assert drop["p_adjusted"] <= 0.05 and drop["family"] == 2
    same = next(i for i in pooled["inputs"] if i["input"] == "cls::same")
    assert same["verdict"] == "pass" and same["ci"]["low"] > -0.25


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
            {"case": "cls::same", "nodeid": "bench_x.py::bench_cls::same", "params": {"case": "same"}, "passes": 20, "total": 20},
            {"case": "param::p", "nodeid": "bench_y.py::bench_param::p", "params": {"prompt": "v0"}, "passes": 3, "total": 3},
            {"case": "gone", "nodeid": "bench_z.py::bench_gone", "params": {}, "passes": 1, "total": 1},
        ]
    }
    (pytester.path / "base.json").write_text(json.dumps(baseline))
    result = run(pytester, "--prob-baseline=base.json")
    out = "\n".join(lines(result))
    assert "Baseline: 1 cases compared with 1 report: 1 passed, 0 failed, 0 undecided" in out, out
    assert "new (not compared): cls::drop, brand_new" in out
    assert "removed: gone" in out
    assert "changed parameters (not compared): param::p" in out
    assert result.ret == 1  # cls::drop fails its runs: it was not compared, so nothing xfails them


def test_pooled_baselines_by_glob(pytester, nights) -> None:
    nights(1)
    for name in ("nightA.json", "nightB.json"):
        assert run(pytester, f"--prob-json=reports/{name}").ret == 0
    nights(2)
    result = run(pytester, "--prob-baseline=reports/night*.json", "--prob-json=out.json")
    out = "\n".join(lines(result))
    assert "compared with 2 reports" in out, out
    report = json.loads((pytester.path / "out.json").read_text())
    drop = next(i for i in report["comparisons"][0]["inputs"] if i["input"] == "cls::drop")
    assert drop["baseline"] == {"passes": 40, "total": 40}
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
    assert report["baseline"]["verdicts"]["fail"] == 1
    assert len(list((pytester.path / "hist").glob("prob-report-*.json"))) == 4


def test_report_written_by_0_3_0_as_baseline(pytester, nights) -> None:
    nights(2)
    shutil.copy(DATA / "report-0.3.0.json", pytester.path / "old.json")
    result = run(pytester, "-v", "--prob-baseline=old.json", "--prob-json=out.json")
    out = "\n".join(lines(result))
    assert has(out, "bench_x.py::bench_cls::same[baseline]", "PASSED"), out
    assert has(out, "bench_x.py::bench_cls::drop[baseline]", "FAILED"), out
    assert "removed: cls::retired" in out
    report = json.loads((pytester.path / "out.json").read_text())
    assert report["baseline"]["versions"] == ["0.3.0"]


def test_no_gate_items_still_fails_the_session(pytester, nights) -> None:
    nights(1)
    run(pytester, "--prob-json=night1.json")
    nights(2)
    result = run(pytester, "-v", "--prob-baseline=night1.json", "--prob-no-gate-items")
    out = "\n".join(lines(result))
    assert "[baseline]" not in out.split("probability")[0]
    assert result.ret == 1
    assert result.parseoutcomes()["xfailed"] == 15


AB = """
import pytest
from pytest_probability import record_cost


@pytest.mark.probability(runs=10, compare="style", baseline="terse", margin=0.1)
@pytest.mark.parametrize("style", ["cot", "terse"])
@pytest.mark.parametrize("q", ["a", "b", "c"])
def bench_ab(style, q, n):
    record_cost(0.001 if style == "terse" else 0.004)
    if style == "terse":
        assert n <= 6
"""


@pytest.mark.parametrize("xdist", [[], ["-n", "2"]], ids=["serial", "xdist"])
def test_compare_marker_pairs_inputs(pytester, xdist) -> None:
    pytester.makeconftest(CONFTEST)
    pytester.makepyfile(bench_ab=AB)
    result = run(pytester, *xdist, "--prob-json=ab.json")
    out = "\n".join(lines(result))
    assert "Comparisons (A/B)" in out and "ab [style] cot vs terse" in out and "cost ×4.00" in out, out
    [arm] = json.loads((pytester.path / "ab.json").read_text())["comparisons"]
    assert (arm["function"], arm["axis"], arm["baseline"], arm["arm"]) == ("ab", "style", "terse", "cot")
    assert arm["pairs"] == 3 and arm["unpaired"] == []
    assert arm["difference"] == pytest.approx(0.4) and arm["cost_ratio"] == pytest.approx(4.0)
    assert arm["p_method"] == "stratified-exact" and arm["verdict"] == "pass" and arm["margin"] == 0.1
    assert [i["input"] for i in arm["inputs"]] == ["a", "b", "c"]
    assert all(i["arm"] == {"passes": 10, "total": 10} and i["baseline"] == {"passes": 6, "total": 10} for i in arm["inputs"])
    assert all(i["family"] == 3 for i in arm["inputs"])


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
    assert "Plan (--prob-plan, nothing runs)" in out
    assert "gated (5 runs): gate >= 0.9: an always-passing case needs 36 runs" in out
    assert re.search(r"cls::drop \(20 runs\): baseline 20/20 \(100%\): detecting a drop of 25 points needs \d+ runs", out)
    assert "must not run" not in out and "passed" not in out.split("Plan")[1]
    assert not list((pytester.path / "hist").glob("*.json"))  # a plan is no night of the history


@pytest.mark.parametrize(
    "setup, args, message",
    [
        (None, ["--prob-baseline=missing.json"], "--prob-baseline: missing.json: no such file"),
        ("{not json", ["--prob-baseline=bad.json"], "is not JSON"),
        ('{"rows": [{"case": "x", "passes": 3, "total": 2}]}', ["--prob-baseline=bad.json"], "more passes (3) than counted runs (2)"),
        ('{"totals": {}}', ["--prob-baseline=bad.json"], "is not a --prob-json report"),
        (None, ["--prob-baseline=nights/*.json"], "no file matches nights/*.json"),
        (None, ["--prob-compare=nope"], "--prob-compare=nope: no benchmark has a parametrize argument 'nope'"),
        (None, ["--prob-adjust=sidak"], "invalid choice: 'sidak'"),
        (None, ["--prob-margin=5"], "did you mean 0.05?"),
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


def test_unknown_axis_in_the_marker_is_a_usage_error(pytester) -> None:
    pytester.makepyfile(bench_ab=AB.replace('compare="style"', 'compare="nope"'))
    result = run(pytester)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert "probability(compare='nope') is not a parametrize argument of it (its arguments: q, style)" in result.stderr.str()


def test_unknown_baseline_variant_is_a_usage_error(pytester) -> None:
    pytester.makepyfile(bench_ab=AB.replace('baseline="terse"', 'baseline="verbose"'))
    result = run(pytester)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert "ab: probability(baseline='verbose') is not a value of 'style' (its values: cot, terse)" in result.stderr.str()
