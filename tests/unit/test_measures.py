"""measures/: each measure's interface against the maths it wraps, and against scipy where scipy has the method."""

from __future__ import annotations

import random
import statistics

import pytest

from pytest_probability.maths import scores as score_maths
from pytest_probability.maths import stats, twostats
from pytest_probability.measures.fraction import PASS_FRACTION, PassFraction, Tally
from pytest_probability.measures.measure import PASS, PairTest, Pooling, score_key
from pytest_probability.measures.score import MeanScore
from pytest_probability.model.case import CaseRef
from pytest_probability.model.rows import Counts, Row
from pytest_probability.model.run import RunRecord, Score


def scored_row(values: list[float], name: str = "faithfulness", passes: int | None = None) -> Row:
    case = CaseRef("bench_a.py::bench_a::x", "a", "x")
    records = [
        RunRecord(case, run, f"{case.key}[run{run}]", "pass", scores=(Score(name, value),))
        for run, value in enumerate(values, start=1)
    ]
    passed = len(values) if passes is None else passes
    return Row(case, records, Counts(passes=passed, fails=len(values) - passed), "pass", 0.0, {})


def test_keys_units_and_spans():
    assert PASS_FRACTION.key == PASS and PASS_FRACTION.unit == "fraction" and PASS_FRACTION.span == 1.0
    score = MeanScore("faithfulness", 0.0, 10.0)
    assert score.key == score_key("faithfulness") == "score:faithfulness"
    assert score.unit == "score" and score.span == 10.0


def test_values_from_a_row_in_run_order():
    row = scored_row([0.2, 0.9, 0.4], passes=2)
    assert PASS_FRACTION.of_row(row) == Tally(2, 3)
    assert MeanScore("faithfulness").of_row(row) == (0.2, 0.9, 0.4)
    assert MeanScore("other").of_row(row) == ()
    assert PASS_FRACTION.estimate(Tally(2, 3)) == 2 / 3 and PASS_FRACTION.estimate(Tally(0, 0)) is None
    assert MeanScore("s").estimate((0.2, 0.9, 0.4)) == statistics.fmean([0.2, 0.9, 0.4])


@pytest.mark.parametrize("method", ["exact", "wilson", "bayes"])
def test_the_pass_fractions_interval_is_the_sessions_method(method):
    interval = PassFraction(method, (1.0, 1.0)).interval(Tally(7, 10), 0.9)
    assert (interval.low, interval.high) == stats.interval(method, 7, 10, 0.9, (1.0, 1.0))
    assert interval.method == method and interval.level == 0.9
    assert PASS_FRACTION.interval(Tally(0, 0), 0.9) is None


def test_a_scores_interval_is_the_betting_interval_tuned_to_the_planned_runs():
    values = (0.2, 0.9, 0.4, 0.7, 0.8)
    interval = MeanScore("s", 0.0, 1.0).interval(values, 0.95, planned=20)
    expected = score_maths.score_interval(values, 0.95, horizon=20)
    assert (interval.low, interval.high, interval.method) == (expected.low, expected.high, "betting")
    assert MeanScore("s").interval((), 0.95) is None


def test_the_pass_fractions_pair_test_is_fishers_exact_test():
    scipy_stats = pytest.importorskip("scipy.stats")
    tested = PASS_FRACTION.pair_test(Tally(3, 10), Tally(9, 10))
    assert isinstance(tested, PairTest)
    table = [[3, 7], [9, 1]]
    assert tested.p_less == pytest.approx(scipy_stats.fisher_exact(table, alternative="less").pvalue, rel=1e-12)
    assert tested.p_greater == pytest.approx(scipy_stats.fisher_exact(table, alternative="greater").pvalue, rel=1e-12)
    assert PASS_FRACTION.pair_test(Tally(0, 0), Tally(9, 10)) is None
    low, high, method = PASS_FRACTION.pair_interval(Tally(3, 10), Tally(9, 10), 0.025)
    assert (low, high, method) == (*twostats.newcombe(3, 10, 9, 10, 0.025), "newcombe")


def test_a_scores_pair_test_is_welchs():
    scipy_stats = pytest.importorskip("scipy.stats")
    arm, base = (0.2, 0.4, 0.5, 0.3), (0.7, 0.9, 0.6, 0.8, 0.75)
    tested = MeanScore("s").pair_test(arm, base)
    assert isinstance(tested, PairTest)
    assert tested.p_less == pytest.approx(
        scipy_stats.ttest_ind(arm, base, equal_var=False, alternative="less").pvalue, rel=1e-9
    )
    assert MeanScore("s").pair_test((0.5,), base) == "fewer than 2 scores on a side"
    assert MeanScore("s").pair_test((), base) is None
    low, high, method = MeanScore("s", 0.0, 1.0).pair_interval(arm, base, 0.025)
    expected = score_maths.difference_interval(arm, base, 0.025)
    assert (low, high, method) == (expected.low, expected.high, "mover-betting")


def test_the_pass_fractions_pooled_test_by_the_number_of_pairs():
    rng = random.Random(4)
    pairs = [(Tally(rng.randint(3, 10), 10), Tally(rng.randint(5, 10), 10)) for _ in range(12)]
    few = PASS_FRACTION.pooled(pairs[:3], Pooling(0.95, 10, 100, 0, "cases"))
    strata = [twostats.Stratum(a.passes, a.total, b.passes, b.total) for a, b in pairs]
    assert few.p_method == "stratified-exact" and few.p_less == twostats.stratified_less(strata[:3])
    assert few.suppressed == "fewer than 10 paired cases" and few.ci is not None
    assert (few.ci.low, few.ci.high, few.ci.method) == twostats.mean_difference_interval(strata[:3], (1 - 0.95) / 2)
    one = PASS_FRACTION.pooled(pairs[:1], Pooling(0.95, 10, 100, 0, "inputs"))
    assert one.p_method == "fisher" and one.ci.method == "newcombe"
    many = PASS_FRACTION.pooled(pairs, Pooling(0.95, 10, 100, 0, "cases"))
    flip = twostats.sign_flip([(s.x1 * s.n2 - s.x2 * s.n1, s.n1 * s.n2) for s in strata], seed=0, resamples=100)
    assert many.p_method == "sign-flip" and many.suppressed is None and many.exact
    assert (many.ci.low, many.ci.high) == flip.interval((1 - 0.95) / 2)
    assert many.difference == twostats.mean(s.x1 / s.n1 - s.x2 / s.n2 for s in strata)
    assert PASS_FRACTION.pooled([], Pooling(0.95, 10, 1, 0, "cases")).suppressed == ("no paired inputs")


def test_a_scores_pooled_test_is_the_paired_bootstrap():
    rng = random.Random(5)
    pairs = [(tuple(rng.random() for _ in range(4)), tuple(rng.random() for _ in range(4))) for _ in range(11)]
    pooled = MeanScore("s").pooled(pairs, Pooling(0.9, 10, 300, 7, "inputs"))
    expected = score_maths.paired_difference(pairs, 0.9, 0.0, 1.0, 300, 7, 10)
    assert pooled.difference == expected.difference and pooled.p == expected.p
    assert (pooled.ci.low, pooled.ci.high, pooled.ci.method) == (expected.ci.low, expected.ci.high, "paired-bootstrap")
    assert (pooled.resamples, pooled.seed, pooled.correlation) == (300, 7, expected.correlation)
    few = MeanScore("s").pooled(pairs[:3], Pooling(0.9, 10, 300, 7, "inputs"))
    assert few.ci is None and few.suppressed == "fewer than 10 inputs" and few.difference is not None


def test_the_text_of_each_measure():
    assert PASS_FRACTION.said(-0.25) == "\u221225.0 pp" and PASS_FRACTION.said(0.0) == "0.0 pp"
    assert (
        PASS_FRACTION.margin_said(0.05, False) == "\u2265\u22125 pp" and PASS_FRACTION.margin_said(0, False) == ">0 pp"
    )
    assert PASS_FRACTION.sides_text(Tally(3, 5), Tally(4, 5)) == "3/5 vs 4/5"
    score = MeanScore("s", 0.0, 10.0)
    assert score.said(-0.12) == "\u22120.120" and score.margin_said(0.05, False) == "\u2265\u22120.5"
    assert score.margin_shown(0.05, True) == "within \u00b10.5" and score.sides_text((1.0,), (2.0, 3.0)) == "n 1 vs 2"
    assert score.out_of_range((11.0,)) == "baseline scores outside the score range [0, 10]"
    assert score.side_dict((1.0, 3.0)) == {"n": 2, "mean": 2.0} and PASS_FRACTION.side_dict(Tally(1, 2)) == {
        "passes": 1,
        "total": 2,
    }
