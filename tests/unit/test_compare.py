"""compare.py and baseline.py on hand-built rows and reports."""

from __future__ import annotations

import json
import random

import pytest

from pytest_probability.aggregate.cases import row_status
from pytest_probability.features.compare import baseline as baseline_mod
from pytest_probability.features.compare import judging as compare
from pytest_probability.features.compare import pairs
from pytest_probability.features.compare.compare_config import CompareConfig
from pytest_probability.features.compare.comparisons import Pair
from pytest_probability.maths import twostats
from pytest_probability.measures.fraction import PASS_FRACTION, Tally
from pytest_probability.model.case import CaseRef
from pytest_probability.model.rows import Counts, Row
from pytest_probability.model.run import RunRecord


def row(
    benchmark: str,
    case_id: str,
    passes: int,
    total: int,
    order: int = 0,
    cost: float = 0.0,
    marks: tuple = (),
    **params: str,
) -> Row:
    label = f"{benchmark}::{case_id}" if case_id else benchmark
    ref = CaseRef(
        key=f"bench_{benchmark}.py::bench_{benchmark}::{case_id}"
        if case_id
        else f"bench_{benchmark}.py::bench_{benchmark}",
        benchmark=benchmark,
        case=case_id,
        label=label,
        order=order,
        runs=total,
        params=tuple(params.items()),
        marks=marks,
    )
    records = [RunRecord(ref, i + 1, f"{ref.key}[run{i + 1}]", "pass" if i < passes else "fail") for i in range(total)]
    counts = Counts(passes=passes, fails=total - passes)
    return Row(ref, records, counts, row_status(counts), cost, {})


def report(rows: list[Row]) -> dict:
    return {
        "rows": [
            {
                "case": r.label,
                "nodeid": r.case.key,
                "params": dict(r.case.params),
                "passes": r.counts.passes,
                "total": r.counts.total,
                "cost": r.cost,
            }
            for r in rows
        ]
    }


def load(tmp_path, *reports: dict) -> baseline_mod.Baseline:
    paths = []
    for i, data in enumerate(reports):
        path = tmp_path / f"r{i}.json"
        path.write_text(json.dumps(data))
        paths.append(path)
    return baseline_mod.load(paths)


def test_drop_fails_and_unchanged_stays_undecided_at_margin_zero(tmp_path):
    base = load(tmp_path, report([row("a", "x", 30, 30, case="x"), row("a", "y", 27, 30, order=1, case="y")]))
    tonight = [row("a", "x", 12, 30, case="x"), row("a", "y", 27, 30, order=1, case="y")]
    result = pairs.compare_all(tonight, base, CompareConfig(), 0.95, "fail")
    x, y = result.pairs()["bench_a.py::bench_a::x"], result.pairs()["bench_a.py::bench_a::y"]
    assert x.verdict == "fail" and x.ci.high < 0
    # No drop, but "no drop at all" cannot be shown: undecided (the per-case verdicts the drop alerts read).
    assert y.verdict == "undecided" and y.ci.low < 0 < y.ci.high
    # Without a margin the comparison only reports, as in 0.3.0: nothing fails the session.
    [pooled] = result.comparisons
    assert (pooled.judged, pooled.verdict, result.failed, result.failed_cases) == (False, None, [], [])


def test_a_margin_judges_the_benchmark_and_too_few_cases_leave_it_undecided(tmp_path):
    base = load(tmp_path, report([row("a", "x", 30, 30, case="x"), row("a", "y", 27, 30, order=1, case="y")]))
    tonight = [row("a", "x", 12, 30, case="x"), row("a", "y", 27, 30, order=1, case="y")]
    judged = CompareConfig(margin=0.05, margin_given=True)
    result = pairs.compare_all(tonight, base, judged, 0.95, "fail")
    [pooled] = result.comparisons
    # Two paired cases, fewer than prob_min_inputs (10): the cases are taken as fixed, the interval is
    # shown, and the verdict is UNDECIDED, which fails under --prob-undecided=fail only.
    assert pooled.judged and pooled.verdict == "undecided" and pooled.suppressed == "fewer than 10 paired cases"
    assert pooled.ci is not None and pooled.ci.method == "agresti-caffo-mean"
    assert result.failed_cases == ["bench_a.py::bench_a::x", "bench_a.py::bench_a::y"]
    assert pairs.compare_all(tonight, base, judged, 0.95, "pass").failed_cases == []


@pytest.mark.parametrize("tonight_passes, verdict", [(30, "pass"), (10, "fail")])
def test_from_min_inputs_cases_the_interval_decides_against_the_margin(tmp_path, tonight_passes, verdict):
    cases = [f"c{i:02d}" for i in range(12)]
    base = load(tmp_path, report([row("a", c, 30, 30, order=i, case=c) for i, c in enumerate(cases)]))
    tonight = [row("a", c, tonight_passes, 30, order=i, case=c) for i, c in enumerate(cases)]
    result = pairs.compare_all(tonight, base, CompareConfig(margin=0.05, margin_given=True), 0.95, "fail")
    [pooled] = result.comparisons
    assert pooled.p_method == "sign-flip" and pooled.suppressed is None and pooled.ci.level == 0.95
    assert pooled.verdict == verdict
    assert pooled.key == "bench_a.py::bench_a[baseline]"
    assert bool(result.failed) == (verdict == "fail")
    # With fewer cases than ini prob_min_inputs says, the same data cannot decide.
    fewer = pairs.compare_all(tonight, base, CompareConfig(margin=0.05, margin_given=True), 0.95, "fail", min_inputs=13)
    assert fewer.comparisons[0].verdict == "undecided"


def test_pooling_several_reports_adds_counts(tmp_path):
    night = report([row("a", "", 9, 10)])
    base = load(tmp_path, night, night, night)
    [case] = base.cases
    assert (case.passes, case.total, case.reports) == (27, 30, 3)


def test_0_3_0_rows_match_by_label(tmp_path):
    old = {"rows": [{"case": "a::x", "passes": 8, "fails": 1, "errors": 1, "pass_rate": 80.0}]}
    base = load(tmp_path, old)
    assert base.versions == ["0.3.0"]
    [case] = base.cases
    assert (case.passes, case.total, case.nodeid, case.params) == (8, 10, None, None)
    assert pairs.is_baselined(base, "anything.py::bench_a::x", "a::x", {"case": "x"})


def test_new_removed_changed(tmp_path):
    base = load(
        tmp_path,
        report([row("a", "x", 3, 3, case="x"), row("a", "gone", 3, 3, case="gone"), row("a", "p", 3, 3, case="old")]),
    )
    tonight = [row("a", "x", 3, 3, case="x"), row("a", "p", 3, 3, case="new"), row("a", "fresh", 3, 3, case="fresh")]
    result = pairs.compare_all(tonight, base, CompareConfig(), 0.95, "fail")
    assert list(result.pairs()) == ["bench_a.py::bench_a::x"]
    assert (result.new, result.removed, result.changed) == (["a::fresh"], ["a::gone"], ["a::p"])


def test_bad_reports_are_baseline_errors(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text('{"rows": [{"case": "x", "passes": -1, "total": 3}]}')
    with pytest.raises(baseline_mod.BaselineError, match=r"rows\[0\]\.passes must be a whole number, got -1"):
        baseline_mod.load([bad])
    with pytest.raises(baseline_mod.BaselineError, match="no such file"):
        baseline_mod.expand(["nope.json"], tmp_path)


def test_history_names_sort_by_time(tmp_path):
    import datetime as dt

    early = baseline_mod.history_name(dt.datetime(2026, 1, 2, 3, 4, 5, tzinfo=dt.timezone.utc))
    late = baseline_mod.history_name(dt.datetime(2026, 1, 12, 3, 4, 5, tzinfo=dt.timezone.utc))
    assert early < late
    for name in (late, early, "other.json"):
        (tmp_path / name).write_text("{}")
    assert [p.name for p in baseline_mod.history_reports(tmp_path, 1)] == [late]
    assert [p.name for p in baseline_mod.history_reports(tmp_path, 7)] == [early, late]


@pytest.mark.parametrize("adjustment", ["holm", "bonferroni", "bh", "none"])
@pytest.mark.parametrize("equivalence", [False, True])
def test_displayed_interval_agrees_with_the_verdict(adjustment, equivalence):
    rng = random.Random(5)
    for _ in range(40):
        margin = rng.choice([0.0, 0.05, 0.2])
        family = []
        for i in range(rng.randint(1, 30)):
            n1, n2 = rng.choice([5, 10, 30]), rng.choice([10, 70, 210])
            p = rng.choice([0.5, 0.8, 0.95, 1.0])
            x1 = sum(rng.random() < p - rng.choice([0, 0, 0.3]) for _ in range(n1))
            x2 = sum(rng.random() < p for _ in range(n2))
            pair = Pair(
                PASS_FRACTION, str(i), str(i), Tally(x1, n1), Tally(x2, n2), margin=margin, equivalence=equivalence
            )
            family.append(pair)
        compare.judge_pairs(family, adjustment, 0.95)
        for pair in family:
            low, high = pair.ci.low, pair.ci.high
            if pair.verdict == "fail":
                assert high < -margin or (equivalence and low > margin)
                assert high < -margin or low > margin
            elif pair.verdict == "pass":
                assert low > -margin and (not equivalence or high < margin)
            else:
                assert not high < -margin and not (equivalence and low > margin)
                assert not (low > -margin and (not equivalence or high < margin))
            if high < -margin:
                # Below the margin only when the adjusted exact test rejected a drop.
                assert pair.p_adjusted <= 0.05 and pair.p_less <= pair.p_greater


def test_pooled_comparison_of_one_stratum_is_the_case_comparison(tmp_path):
    base = load(tmp_path, report([row("a", "x", 30, 30, case="x")]))
    result = pairs.compare_all([row("a", "x", 20, 30, case="x")], base, CompareConfig(adjust="none"), 0.95, "fail")
    [pooled] = result.comparisons
    [case] = result.pairs().values()
    assert pooled.p == case.p and pooled.ci.low == case.ci.low
    # The case's verdict is per case (what the drop alerts read); without a margin the benchmark has none.
    assert case.verdict == "fail" and pooled.verdict is None and not pooled.judged


def test_pooled_interval_of_one_stratum_matches_agresti_caffo_scale():
    proportion = pytest.importorskip("statsmodels.stats.proportion")
    strata = [twostats.Stratum(7, 10, 9, 12), twostats.Stratum(3, 10, 8, 12)]
    low, high, method = twostats.mean_difference_interval(strata, 0.025)
    assert method == "agresti-caffo-mean"
    # Each stratum's Agresti-Caffo interval has the half-width z*sd_i; the mean's is z*sqrt(sum sd_i^2)/k.
    halves = []
    for s in strata:
        lo, hi = proportion.confint_proportions_2indep(s.x1, s.n1, s.x2, s.n2, method="agresti-caffo", alpha=0.05)
        halves.append((hi - lo) / 2)
    assert (high - low) / 2 == pytest.approx((halves[0] ** 2 + halves[1] ** 2) ** 0.5 / 2, rel=1e-9)


def test_ab_arms_pair_inputs_and_leave_unpaired_out():
    rows = [
        row("t", "a-terse", 6, 10, order=0, cost=0.01, q="a", style="terse"),
        row("t", "a-cot", 10, 10, order=1, cost=0.04, q="a", style="cot"),
        row("t", "b-terse", 6, 10, order=2, cost=0.01, q="b", style="terse"),
        row("t", "c-cot", 10, 10, order=3, cost=0.04, q="c", style="cot"),
    ]
    result = pairs.compare_all(rows, None, CompareConfig(compare_axis="style"), 0.95, "fail")
    [arm] = result.comparisons
    assert (arm.baseline, arm.arm, arm.unpaired) == ("terse", "cot", ["b", "c"])
    assert [p.key for p in arm.pairs] == ["a"] and arm.p_method == "fisher"
    assert arm.cost_ratio == pytest.approx(4.0) and arm.verdict is None
    assert arm.to_dict()["pairs"] == 1


@pytest.mark.slow
def test_simulated_false_alarms_and_power_meet_the_goals():
    """A short run of benchmarks/compare_false_alarms.py (the full table is in the user guide)."""
    pytest.importorskip("numpy")
    import importlib.util
    from pathlib import Path

    path = Path(__file__).parents[2] / "benchmarks" / "compare_false_alarms.py"
    spec = importlib.util.spec_from_file_location("compare_false_alarms", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    unchanged = module.simulate(10, 150, seed=1)
    assert unchanged["false_alarm_nights_new"] <= 0.05
    assert unchanged["false_alarm_nights_old"] >= 0.8  # the old rule pages almost every night
    drop = module.simulate(30, 150, seed=2, drop_to=0.5)
    assert drop["power_new"] >= 0.8 and drop["false_alarm_nights_new"] <= 0.05


def test_many_inputs_use_the_sign_flip_test_and_its_interval():
    rows = []
    marks = (("compare", "style"), ("margin", 0.0))  # margin= on the mark judges the arm
    for i in range(12):
        rows.append(row("t", f"q{i}-a", 5 + i % 3, 10, order=2 * i, marks=marks, q=f"q{i}", style="a"))
        rows.append(row("t", f"q{i}-b", 8 + i % 3 - (i % 2), 10, order=2 * i + 1, marks=marks, q=f"q{i}", style="b"))
    result = pairs.compare_all(rows, None, CompareConfig(margin=0.3, margin_given=True, adjust="none"), 0.95, "fail")
    [arm] = result.comparisons
    assert arm.margin == 0.0 and arm.key == "bench_t.py::bench_t[compare:b]"  # --prob-margin is the baseline's
    assert arm.p_method == "sign-flip" and arm.exact and arm.ci.method == "sign-flip"
    assert arm.difference > 0 and arm.ci.low > 0 and arm.verdict == "pass"
    diffs = [(p.arm.passes * p.base.total - p.base.passes * p.arm.total, p.arm.total * p.base.total) for p in arm.pairs]
    assert arm.p == min(1.0, 2 * min(twostats.sign_flip(diffs).p_less, twostats.sign_flip(diffs).p_greater))
    assert arm.to_dict()["exact"] is True
    unjudged = pairs.compare_all(
        [row("t", r.case.case, r.counts.passes, 10, order=r.case.order, **dict(r.case.params)) for r in rows],
        None,
        CompareConfig(compare_axis="style", margin=0.3, margin_given=True),
        0.95,
        "fail",
    )
    assert [(a.judged, a.verdict) for a in unjudged.comparisons] == [(False, None)]  # --prob-compare: reports only


def test_an_arm_reports_the_correlation_between_its_arms_per_input_fractions():
    """Miller 2024, section 4: the paired A/B line shows how alike the arms are input by input."""
    scipy_stats = pytest.importorskip("scipy.stats")
    rng = random.Random(3)
    rows, a, b = [], [], []
    for i in range(12):
        x1, x2 = rng.randint(0, 10), rng.randint(0, 10)
        a.append(x1 / 10)
        b.append(x2 / 10)
        rows.append(row("t", f"q{i}-a", x2, 10, order=2 * i, q=f"q{i}", style="a"))
        rows.append(row("t", f"q{i}-b", x1, 10, order=2 * i + 1, q=f"q{i}", style="b"))
    [arm] = pairs.compare_all(rows, None, CompareConfig(compare_axis="style"), 0.95, "fail").comparisons
    assert arm.correlation == pytest.approx(scipy_stats.pearsonr(a, b).statistic, rel=1e-12)
    assert arm.to_dict()["correlation"] == arm.correlation
    constant = [row("t", f"q{i}-{s}", 10, 10, order=i, q=f"q{i}", style=s) for i in range(3) for s in "ab"]
    assert (
        pairs.compare_all(constant, None, CompareConfig(compare_axis="style"), 0.95, "fail").comparisons[0].correlation
        is None
    )
