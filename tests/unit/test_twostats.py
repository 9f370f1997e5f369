"""twostats against scipy and statsmodels (test-only oracles), to 1e-9 relative."""

from __future__ import annotations

import itertools
import math
import random
import warnings

import pytest

from pytest_probability.maths import twostats
from pytest_probability.maths.twostats import Stratum

scipy_stats = pytest.importorskip("scipy.stats")
multitest = pytest.importorskip("statsmodels.stats.multitest")
proportion = pytest.importorskip("statsmodels.stats.proportion")

TABLES = [
    (0, 1, 0, 1),
    (1, 1, 0, 1),
    (3, 10, 9, 10),
    (8, 10, 10, 10),
    (10, 10, 10, 10),
    (0, 10, 70, 70),
    (15, 30, 189, 210),
    (27, 30, 190, 210),
    (70, 100, 630, 700),
    (88, 100, 631, 700),
    (5, 7, 2, 3),
    (0, 30, 0, 210),
    (30, 30, 0, 210),
    (400, 800, 420, 800),
]


def close(a: float, b: float, rel: float = 1e-9) -> bool:
    return math.isclose(a, b, rel_tol=rel, abs_tol=1e-300)


@pytest.mark.parametrize("table", TABLES)
def test_fisher_one_sided_tails_match_scipy(table):
    x1, n1, x2, n2 = table
    grid = [[x1, n1 - x1], [x2, n2 - x2]]
    less = scipy_stats.fisher_exact(grid, alternative="less").pvalue
    greater = scipy_stats.fisher_exact(grid, alternative="greater").pvalue
    assert close(twostats.fisher_less(*table), less)
    assert close(twostats.fisher_greater(*table), greater)
    assert twostats.fisher_two_sided(*table) == pytest.approx(min(1.0, 2 * min(less, greater)), rel=1e-9)


def test_fisher_random_tables_match_scipy():
    rng = random.Random(7)
    for _ in range(300):
        n1, n2 = rng.randint(1, 120), rng.randint(1, 400)
        x1, x2 = rng.randint(0, n1), rng.randint(0, n2)
        less = scipy_stats.fisher_exact([[x1, n1 - x1], [x2, n2 - x2]], alternative="less").pvalue
        assert close(twostats.fisher_less(x1, n1, x2, n2), less), (x1, n1, x2, n2)


def test_fisher_is_the_stratified_test_with_one_stratum():
    for table in TABLES:
        assert close(twostats.stratified_less([Stratum(*table)]), twostats.fisher_less(*table))
        assert close(twostats.stratified_greater([Stratum(*table)]), twostats.fisher_greater(*table))


def test_stratified_test_with_one_run_per_input_is_the_exact_sign_test():
    # 1 run per arm per input: only discordant inputs carry information, and the
    # conditional test is the exact McNemar test, i.e. binomtest of the discordant pairs.
    strata = (
        [Stratum(0, 1, 1, 1)] * 9 + [Stratum(1, 1, 0, 1)] * 2 + [Stratum(1, 1, 1, 1)] * 5 + [Stratum(0, 1, 0, 1)] * 3
    )
    expected = scipy_stats.binomtest(2, 11, 0.5, alternative="less").pvalue
    assert close(twostats.stratified_less(strata), expected)
    assert close(twostats.sign_test_less(9, 2), expected)
    expected_greater = scipy_stats.binomtest(2, 11, 0.5, alternative="greater").pvalue
    assert close(twostats.stratified_greater(strata), expected_greater)


def test_stratified_test_matches_brute_force_enumeration():
    strata = [Stratum(2, 4, 3, 4), Stratum(1, 3, 3, 3), Stratum(5, 6, 4, 5)]
    hyper = [scipy_stats.hypergeom(s.n1 + s.n2, s.x1 + s.x2, s.n1) for s in strata]
    supports = [range(max(0, s.x1 + s.x2 - s.n2), min(s.n1, s.x1 + s.x2) + 1) for s in strata]
    observed = sum(s.x1 for s in strata)
    below = above = 0.0
    for values in itertools.product(*supports):
        p = math.prod(h.pmf(v) for h, v in zip(hyper, values, strict=False))
        below += p if sum(values) <= observed else 0.0
        above += p if sum(values) >= observed else 0.0
    assert twostats.stratified_less(strata) == pytest.approx(below, rel=1e-9)
    assert twostats.stratified_greater(strata) == pytest.approx(above, rel=1e-9)


@pytest.mark.parametrize("table", TABLES)
@pytest.mark.parametrize("alpha", [0.05, 0.1, 0.001])
def test_newcombe_matches_statsmodels(table, alpha):
    x1, n1, x2, n2 = table
    low, high = proportion.confint_proportions_2indep(x1, n1, x2, n2, method="newcomb", compare="diff", alpha=alpha)
    ours = twostats.newcombe(x1, n1, x2, n2, alpha / 2)
    assert ours[0] == pytest.approx(max(-1.0, low), rel=1e-9, abs=1e-12)
    assert ours[1] == pytest.approx(min(1.0, high), rel=1e-9, abs=1e-12)


def test_newcombe_unequal_tails_are_the_one_sided_bounds():
    low_only = twostats.newcombe(3, 10, 9, 10, 0.01, 0.2)[0]
    assert low_only == pytest.approx(twostats.newcombe(3, 10, 9, 10, 0.01)[0], rel=1e-12)
    high_only = twostats.newcombe(3, 10, 9, 10, 0.01, 0.2)[1]
    assert high_only == pytest.approx(twostats.newcombe(3, 10, 9, 10, 0.2)[1], rel=1e-12)


@pytest.mark.parametrize("method, theirs", [("holm", "holm"), ("bonferroni", "bonferroni"), ("bh", "fdr_bh")])
def test_adjusted_p_values_match_multipletests(method, theirs):
    rng = random.Random(3)
    for size in (1, 2, 5, 40):
        for _ in range(30):
            ps = [rng.random() ** 3 for _ in range(size)]
            if size > 2:
                ps[1] = ps[0]  # ties
            reject, adjusted, _, _ = multitest.multipletests(ps, alpha=0.05, method=theirs)
            ours = twostats.adjust(ps, method, 0.05)
            for mine, their_p, their_reject in zip(ours, adjusted, reject, strict=False):
                assert mine.p_adjusted == pytest.approx(their_p, rel=1e-9, abs=1e-300)
                assert mine.rejected == bool(their_reject)


@pytest.mark.parametrize("method", ["holm", "bonferroni", "bh", "none"])
def test_local_levels_agree_with_adjusted_verdicts(method):
    # The promise the intervals rest on: p <= local level exactly when the adjusted test rejects.
    rng = random.Random(11)
    for size in (1, 3, 10, 100):
        for _ in range(50):
            ps = [rng.random() ** 4 for _ in range(size)]
            for result, p in zip(twostats.adjust(ps, method, 0.05), ps, strict=False):
                assert (p <= result.local_level) == result.rejected, (method, ps)


def test_adjust_rejects_bad_input():
    with pytest.raises(ValueError, match="adjustment must be one of"):
        twostats.parse_adjustment("sidak")
    with pytest.raises(ValueError, match="p-values"):
        twostats.adjust([1.5], "holm", 0.05)
    assert twostats.adjust([], "holm", 0.05) == []


def test_binomial_cdf_matches_scipy():
    for k, n, p in [(0, 10, 0.5), (3, 10, 0.9), (95, 100, 0.99), (2, 50, 0.5), (49, 50, 0.5)]:
        assert close(twostats.binom_cdf_le(k, n, p), scipy_stats.binom.cdf(k, n, p))


def test_runs_to_detect_is_monotone_and_sane():
    n_big = twostats.runs_to_detect(0.9, 0.2, 7, 0.025 / 100, 0.8)
    n_small = twostats.runs_to_detect(0.9, 0.4, 7, 0.025 / 100, 0.8)
    assert n_small < n_big < 200
    assert twostats.runs_to_detect(0.9, 0.0, 7, 0.025, 0.8) is None
    # Simulated check of the approximation: at the planned runs the exact test's power is near 0.8.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        n = twostats.runs_to_detect(0.9, 0.2, 7, 0.025, 0.8)
        x1 = scipy_stats.binom(n, 0.7)
        x2 = scipy_stats.binom(7 * n, 0.9)
        power = sum(
            x1.pmf(a) * x2.pmf(c)
            for a in range(n + 1)
            for c in range(7 * n + 1)
            if x1.pmf(a) * x2.pmf(c) > 1e-12 and twostats.fisher_less(a, n, c, 7 * n) <= 0.025
        )
    assert 0.7 <= power <= 0.95


def _diffs(pairs):
    return [(x1 * n2 - x2 * n1, n1 * n2) for x1, n1, x2, n2 in pairs]


@pytest.mark.parametrize("k", [2, 3, 8, 12])
def test_sign_flip_matches_scipy_permutation_test_exactly(k):
    np = pytest.importorskip("numpy")
    rng = random.Random(k)
    pairs = [(rng.randint(0, 10), 10, rng.randint(0, 10), 10) for _ in range(k)]
    diffs = _diffs(pairs)
    data = np.array([num / den for num, den in diffs])
    ours = twostats.sign_flip(diffs)
    assert ours.exact
    for alternative, mine in (("less", ours.p_less), ("greater", ours.p_greater)):
        theirs = scipy_stats.permutation_test(
            (data,), np.sum, permutation_type="samples", alternative=alternative, n_resamples=np.inf
        ).pvalue
        assert mine == pytest.approx(theirs, rel=1e-9), alternative


def test_sign_flip_interval_is_the_inverted_test():
    # The bound excludes delta exactly when the test of (d - delta) rejects at that tail.
    rng = random.Random(9)
    pairs = [(rng.randint(3, 10), 10, rng.randint(5, 10), 10) for _ in range(11)]
    diffs = _diffs(pairs)
    flip = twostats.sign_flip(diffs)
    low, high = flip.interval(0.025)
    assert low < high
    for delta in [low - 1e-9, low + 1e-9, high - 1e-9, high + 1e-9, 0.0, -0.2, 0.1]:
        shifted = twostats.sign_flip([(num * 10**9 - round(delta * 10**9) * den, den * 10**9) for num, den in diffs])
        assert (shifted.p_greater <= 0.025) == (delta < low - 1e-12), delta
        assert (shifted.p_less <= 0.025) == (delta > high + 1e-12), delta


@pytest.mark.slow
def test_sign_flip_monte_carlo_is_seeded_and_close_to_exact():
    rng = random.Random(4)
    pairs = [(rng.randint(4, 10), 10, rng.randint(6, 10), 10) for _ in range(17)]
    diffs = _diffs(pairs)
    a, b = twostats.sign_flip(diffs, seed=1), twostats.sign_flip(diffs, seed=1)
    assert not a.exact and a == b
    np = pytest.importorskip("numpy")
    data = np.array([num / den for num, den in diffs])
    exact = scipy_stats.permutation_test(
        (data,), np.sum, permutation_type="samples", alternative="less", n_resamples=np.inf
    ).pvalue
    assert a.p_less == pytest.approx(exact, abs=0.01)


@pytest.mark.parametrize("table", [(3, 10, 9, 10), (5, 10, 60, 70), (2, 8, 7, 9), (10, 15, 14, 15)])
def test_fisher_is_never_less_cautious_than_boschloo(table):
    """The documented trade-off: Boschloo's test (scipy) is at least as powerful
    (its p-value is at most Fisher's), Fisher's exact test is what the plugin uses."""
    x1, n1, x2, n2 = table
    boschloo = scipy_stats.boschloo_exact([[x1, x2], [n1 - x1, n2 - x2]], alternative="less").pvalue
    assert boschloo <= twostats.fisher_less(*table) * (1 + 1e-9)
