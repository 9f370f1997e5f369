"""Tests for pytest_probability.maths.stats: the normal and beta quantiles, the binomial intervals, the gates'
helpers, the parsers and the formatting (its quantiles and pass^k are in test_stats_quantiles.py, split for size).

Reference values come from scipy / statsmodels / numpy (skipped when not
installed) and, where possible, from exact rational arithmetic.
"""

from __future__ import annotations

import math
import random
import re
import statistics
import warnings
from fractions import Fraction

import pytest

from pytest_probability.maths import stats
from pytest_probability.maths.stats import (
    METHODS,
    beta_credible,
    beta_isf,
    beta_ppf,
    clopper_pearson,
    format_percent_interval,
    interval,
    normal_ppf,
    parse_confidence,
    parse_method,
    parse_prior,
    regularized_beta,
    runs_needed,
    verdict,
    wilson,
)

# ---------------------------------------------------------------------------
# Helpers and fixtures
# ---------------------------------------------------------------------------

NS = [1, 2, 3, 4, 5, 7, 10, 20, 50, 100, 333, 1000, 2500, 10000]
CONFIDENCES = [0.5, 0.6, 0.8, 0.9, 0.95, 0.99, 0.995, 0.999]
PRIORS = [(1.0, 1.0), (0.5, 0.5), (2.0, 3.0), (0.1, 5.0)]
REL_TOL = 1e-9
ABS_TOL_NEAR_ZERO = 1e-12


def ks_for(n):
    """Edge cases and a few interior pass counts for n runs."""
    cand = {0, 1, 2, 3, n // 10, n // 3, n // 2, (n + 1) // 2, 2 * n // 3, n - 3, n - 2, n - 1, n}
    return sorted(k for k in cand if 0 <= k <= n)


def grid():
    for n in NS:
        for k in ks_for(n):
            for c in CONFIDENCES:
                yield k, n, c


def assert_close(ours, ref, what, rel=REL_TOL, abs_=ABS_TOL_NEAR_ZERO):
    ref = float(ref)
    assert abs(ours - ref) <= max(rel * abs(ref), abs_), f"{what}: got {ours!r}, reference {ref!r}"


def rel_err(ours, ref):
    ref = float(ref)
    if ours == ref:
        return 0.0
    return abs(ours - ref) / abs(ref) if ref != 0 else abs(ours)


def exact_beta_tails(x, a, b):
    """Exact (I_x(a, b), 1 - I_x(a, b)) for integer a, b, rounded once to float.

    Uses I_x(a, b) = P(Binomial(a + b - 1, x) >= a) with x as an exact binary
    fraction; cheap when min(a, b) is small.
    """
    frac = Fraction(x)
    num, den = frac.numerator, frac.denominator
    rest = den - num
    total = a + b - 1
    whole = den**total
    if a <= b:
        inner = sum(math.comb(total, j) * num**j * rest ** (a - 1 - j) for j in range(a))
        lower_binom = inner * rest ** (total - a + 1)  # P(Bin < a) * whole
        return (whole - lower_binom) / whole, lower_binom / whole
    inner = sum(math.comb(total, j) * num ** (j - a) * rest ** (total - j) for j in range(a, total + 1))
    upper_binom = inner * num**a
    return upper_binom / whole, (whole - upper_binom) / whole


# ---------------------------------------------------------------------------
# Normal quantile
# ---------------------------------------------------------------------------


class TestNormalPpf:
    PS = [
        1e-300,
        1e-100,
        1e-20,
        1e-10,
        1e-5,
        5e-4,
        0.001,
        0.01,
        0.025,
        0.05,
        0.1,
        0.2,
        0.25,
        0.3,
        0.4,
        0.45,
        0.5,
        0.55,
        0.6,
        0.75,
        0.9,
        0.95,
        0.975,
        0.99,
        0.999,
        1 - 1e-10,
    ]

    def test_matches_scipy(self, sp_stats):
        for p in self.PS:
            assert_close(normal_ppf(p), sp_stats.norm.ppf(p), f"normal_ppf({p})", rel=1e-14, abs_=1e-15)

    def test_matches_statistics_module(self):
        nd = statistics.NormalDist()
        for p in self.PS[1:]:
            assert_close(normal_ppf(p), nd.inv_cdf(p), f"normal_ppf({p})", rel=1e-14, abs_=1e-15)

    def test_symmetry_and_limits(self):
        assert normal_ppf(0.5) == 0.0
        assert normal_ppf(0.0) == -math.inf
        assert normal_ppf(1.0) == math.inf
        for p in [2.0**-30, 2.0**-10, 0.03125, 0.25, 0.375]:  # 1 - p is exact
            assert normal_ppf(p) == pytest.approx(-normal_ppf(1 - p), rel=1e-14)
        assert normal_ppf(0.975) == pytest.approx(1.959963984540054, rel=1e-15)

    @pytest.mark.parametrize("bad", [-0.1, 1.5, math.nan])
    def test_rejects_out_of_range(self, bad):
        with pytest.raises(ValueError, match=re.escape(repr(bad))):
            normal_ppf(bad)


# ---------------------------------------------------------------------------
# Incomplete beta function and its inverse
# ---------------------------------------------------------------------------


class TestRegularizedBeta:
    @pytest.mark.parametrize(
        "a,b,x",
        [
            (1, 1, 0.3),
            (2, 2, 0.5),
            (3, 50, 0.01),
            (50, 3, 0.9),
            (1, 10000, 2e-4),
            (4, 9997, 0.0005108888597031691),
            (9997, 4, 0.9994891111402968),
            (2, 300, 0.004),
            (1000, 2, 0.999),
            (3, 10, 0.9),
            (10, 3, 1e-4),
            (7, 7, 0.123),
        ],
    )
    def test_exact_integer_parameters(self, a, b, x):
        lower, upper = exact_beta_tails(x, a, b)
        assert rel_err(regularized_beta(x, a, b), lower) <= 1e-13
        if x >= 0.5:  # 1 - x is exact: check the complement, tiny tails included
            assert rel_err(regularized_beta(1 - x, b, a), upper) <= 1e-13

    def test_matches_scipy_random(self, sp_special):
        rng = random.Random(20240501)
        worst = 0.0
        for _ in range(1500):
            a = 10 ** rng.uniform(-1.5, 4.5)
            b = 10 ** rng.uniform(-1.5, 4.5)
            mean = a / (a + b)
            sd = math.sqrt(a * b / ((a + b) ** 2 * (a + b + 1)))
            x = min(max(mean + rng.uniform(-6, 6) * sd, 1e-12), 1 - 1e-12)
            ref = sp_special.betainc(a, b, x)
            if ref < 1e-250:
                continue
            err = rel_err(regularized_beta(x, a, b), ref)
            worst = max(worst, err)
            assert err <= 1e-10, (a, b, x)
        assert worst < 1e-10

    def test_edges(self):
        assert regularized_beta(0.0, 2, 3) == 0.0
        assert regularized_beta(1.0, 2, 3) == 1.0
        assert regularized_beta(0.25, 1, 1) == pytest.approx(0.25, rel=1e-15)
        assert regularized_beta(0.5, 3.5, 3.5) == pytest.approx(0.5, rel=1e-14)

    @pytest.mark.parametrize("args,needle", [((0.5, 0, 1), "a=0"), ((0.5, 1, -2.0), "b=-2.0"), ((1.5, 1, 1), "1.5")])
    def test_errors(self, args, needle):
        with pytest.raises(ValueError, match=re.escape(needle)):
            regularized_beta(*args)


class TestBetaQuantile:
    def test_grid_matches_scipy(self, sp_stats, sp_special):
        worst = 0.0
        disagreements = []
        for a in [0.1, 0.5, 1.0, 2.0, 3.0, 10.5, 100.0, 5001.0]:
            for b in [0.1, 0.5, 1.0, 2.0, 7.0, 99.5, 10001.0]:
                for p in [1e-12, 5e-4, 0.005, 0.025, 0.05, 0.25, 0.5, 0.75, 0.975, 0.9995]:
                    ours = beta_ppf(p, a, b)
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore", RuntimeWarning)
                        ref = sp_stats.beta.ppf(p, a, b)
                        ref_isf = sp_stats.beta.isf(1 - p, a, b)
                    if ref > 1e-300 and rel_err(ours, ref) <= REL_TOL:  # relative even near 0
                        worst = max(worst, rel_err(ours, ref))
                    else:
                        # Disagreement: ours must then solve I_x(a, b) = p better
                        # than scipy does, judged by scipy's own betainc.
                        assert abs(sp_special.betainc(a, b, ours) - p) < abs(sp_special.betainc(a, b, ref) - p)
                        disagreements.append((p, a, b, ours, ref))
                    assert_close(beta_isf(1 - p, a, b), ref_isf, f"beta_isf({1 - p}, {a}, {b})")
        assert worst < 1e-11
        # Only boost's known failure for a tiny quantile (~4e-25, where it
        # returns 2e-27 and warns that its root finder gave up).
        assert [d[:3] for d in disagreements] == [(1e-12, 0.5, 2.0)], disagreements

    def test_residual_is_tiny(self):
        for a, b, p in [
            (0.5, 0.5, 0.025),
            (2, 3, 0.001),
            (1, 10000, 0.025),
            (5000, 5000, 0.0005),
            (0.1, 5, 1e-6),
            (30, 1, 0.3),
        ]:
            x = beta_ppf(p, a, b)
            assert regularized_beta(x, a, b) == pytest.approx(p, rel=1e-12)
            x = beta_isf(p, a, b)
            assert 1 - regularized_beta(x, a, b) == pytest.approx(p, rel=1e-9)

    def test_closed_forms(self):
        # Beta(a, 1) has CDF x**a; Beta(1, b) has CDF 1 - (1 - x)**b.
        for a in [0.5, 1.0, 3.0, 40.0]:
            for p in [1e-8, 0.025, 0.5, 0.9]:
                assert beta_ppf(p, a, 1.0) == pytest.approx(p ** (1 / a), rel=1e-14)
                assert beta_ppf(p, 1.0, a) == pytest.approx(-math.expm1(math.log1p(-p) / a), rel=1e-13)

    def test_extremes(self):
        assert beta_ppf(0.0, 2, 3) == 0.0
        assert beta_ppf(1.0, 2, 3) == 1.0
        assert beta_isf(0.0, 2, 3) == 1.0
        assert beta_isf(1.0, 2, 3) == 0.0
        # A quantile far below the smallest double underflows to 0.0.
        assert beta_ppf(1e-10, 0.01, 100) == 0.0
        # Tiny but representable quantiles keep full relative precision.
        assert beta_ppf(1e-10, 0.5, 1.0) == pytest.approx(1e-20, rel=1e-13)


# ---------------------------------------------------------------------------
# Binomial intervals vs references
# ---------------------------------------------------------------------------


class TestIntervalsAgainstReferences:
    def test_clopper_pearson_matches_statsmodels(self, proportion_confint):
        worst = 0.0
        for k, n, c in grid():
            low, high = clopper_pearson(k, n, c)
            ref_low, ref_high = proportion_confint(k, n, alpha=1 - c, method="beta")
            assert_close(low, ref_low, f"exact low k={k} n={n} c={c}")
            assert_close(high, ref_high, f"exact high k={k} n={n} c={c}")
            worst = max(worst, rel_err(low, ref_low), rel_err(high, ref_high))
        assert worst < 1e-12  # measured ~2e-14

    def test_wilson_matches_statsmodels(self, proportion_confint):
        for k, n, c in grid():
            low, high = wilson(k, n, c)
            ref_low, ref_high = proportion_confint(k, n, alpha=1 - c, method="wilson")
            assert_close(low, ref_low, f"wilson low k={k} n={n} c={c}")
            assert_close(high, ref_high, f"wilson high k={k} n={n} c={c}")

    @pytest.mark.parametrize("prior", PRIORS, ids=str)
    def test_beta_credible_matches_scipy(self, sp_stats, prior):
        a0, b0 = prior
        for k, n, c in grid():
            low, high = beta_credible(k, n, c, prior)
            a, b = a0 + k, b0 + n - k
            half = (1 - c) / 2
            assert_close(low, sp_stats.beta.ppf(half, a, b), f"bayes low k={k} n={n} c={c}")
            assert_close(high, sp_stats.beta.isf(half, a, b), f"bayes high k={k} n={n} c={c}")

    def test_jeffreys_matches_statsmodels(self, proportion_confint):
        for k, n, c in [(0, 10, 0.95), (3, 10, 0.9), (50, 100, 0.99), (9999, 10000, 0.95)]:
            low, high = beta_credible(k, n, c, prior=(0.5, 0.5))
            ref_low, ref_high = proportion_confint(k, n, alpha=1 - c, method="jeffreys")
            assert_close(low, ref_low, "jeffreys low")
            assert_close(high, ref_high, "jeffreys high")

    def test_exact_endpoints(self):
        for n in [1, 2, 10, 10000]:
            for c in [0.5, 0.95, 0.999]:
                assert clopper_pearson(0, n, c)[0] == 0.0
                assert clopper_pearson(n, n, c)[1] == 1.0
                assert wilson(0, n, c)[0] == 0.0
                assert wilson(n, n, c)[1] == 1.0
                assert 0.0 < clopper_pearson(n, n, c)[0] < 1.0
                assert 0.0 < clopper_pearson(0, n, c)[1] < 1.0
                low, high = beta_credible(0, n, c)
                assert 0.0 < low < high < 1.0

    def test_known_values(self):
        # n = 1: Clopper-Pearson reduces to [0, 1 - alpha/2] and [alpha/2, 1].
        assert clopper_pearson(0, 1, 0.95) == (0.0, pytest.approx(0.975, rel=1e-15))
        assert clopper_pearson(1, 1, 0.95) == (pytest.approx(0.025, rel=1e-15), 1.0)
        # All-pass Wilson lower bound is n / (n + z^2).
        z = normal_ppf(0.975)
        assert wilson(10, 10, 0.95)[0] == pytest.approx(10 / (10 + z * z), rel=1e-14)
        # Uniform prior, no data is not allowed; 0/1 gives Beta(1, 2).
        low, high = beta_credible(0, 1, 0.9)
        assert low == pytest.approx(1 - math.sqrt(0.95), rel=1e-13)
        assert high == pytest.approx(1 - math.sqrt(0.05), rel=1e-13)


# ---------------------------------------------------------------------------
# Interval invariants
# ---------------------------------------------------------------------------


SMALL_NS = [1, 2, 3, 5, 8, 13, 30, 64, 101]


class TestIntervalInvariants:
    @pytest.mark.parametrize("method", ["exact", "wilson"])
    def test_contains_point_estimate(self, method):
        for n in SMALL_NS + [1000]:
            for k in range(0, n + 1, max(1, n // 40)):
                for c in [0.5, 0.9, 0.999]:
                    low, high = interval(method, k, n, c)
                    assert 0.0 <= low <= k / n <= high <= 1.0, (method, k, n, c, low, high)

    @pytest.mark.parametrize("method", METHODS)
    def test_bounds_ordered_and_in_unit_interval(self, method):
        for n in SMALL_NS:
            for k in range(n + 1):
                low, high = interval(method, k, n, 0.95, (0.5, 0.5))
                assert 0.0 <= low < high <= 1.0

    @pytest.mark.parametrize("method", METHODS)
    def test_monotone_in_confidence(self, method):
        confs = [0.5, 0.6, 0.7, 0.8, 0.9, 0.95, 0.99, 0.999]
        for n in [1, 5, 20, 500]:
            for k in sorted({0, 1, n // 2, n - 1, n}):
                lows, highs = zip(*(interval(method, k, n, c, (2.0, 3.0)) for c in confs), strict=False)
                assert all(x >= y for x, y in zip(lows, lows[1:], strict=False)), (method, k, n, lows)
                assert all(x <= y for x, y in zip(highs, highs[1:], strict=False)), (method, k, n, highs)
                if 0 < k:
                    assert lows[0] > lows[-1]
                if k < n:
                    assert highs[0] < highs[-1]

    @pytest.mark.parametrize("method", METHODS)
    def test_monotone_in_passes(self, method):
        for n in [3, 17, 200]:
            bounds = [interval(method, k, n, 0.9) for k in range(n + 1)]
            for (l1, h1), (l2, h2) in zip(bounds, bounds[1:], strict=False):
                assert l1 < l2 or l1 == l2 == 0.0
                assert h1 < h2 or h1 == h2 == 1.0

    @pytest.mark.parametrize("method", ["exact", "wilson"])
    def test_symmetry(self, method):
        for n in SMALL_NS + [1000, 10000]:
            for k in ks_for(n):
                for c in [0.5, 0.95, 0.999]:
                    low, high = interval(method, k, n, c)
                    low_m, high_m = interval(method, n - k, n, c)
                    assert low == pytest.approx(1 - high_m, rel=1e-12, abs=1e-15)
                    assert high == pytest.approx(1 - low_m, rel=1e-12, abs=1e-15)

    def test_symmetry_bayes_with_mirrored_prior(self):
        for n in [1, 4, 50, 1000]:
            for k in ks_for(n):
                for prior in PRIORS:
                    low, high = beta_credible(k, n, 0.95, prior)
                    low_m, high_m = beta_credible(n - k, n, 0.95, prior[::-1])
                    assert low == pytest.approx(1 - high_m, rel=1e-12, abs=1e-15)
                    assert high == pytest.approx(1 - low_m, rel=1e-12, abs=1e-15)

    def test_clopper_pearson_coverage_is_conservative(self, sp_stats):
        n, c = 20, 0.9
        bounds = [clopper_pearson(k, n, c) for k in range(n + 1)]
        for i in range(1, 100):
            p = i / 100
            cover = sum(sp_stats.binom.pmf(k, n, p) for k, (lo, hi) in enumerate(bounds) if lo <= p <= hi)
            assert cover >= c - 1e-12, (p, cover)

    def test_interval_dispatch(self):
        assert interval("exact", 3, 10, 0.9) == clopper_pearson(3, 10, 0.9)
        assert interval("wilson", 3, 10, 0.9) == wilson(3, 10, 0.9)
        assert interval("bayes", 3, 10, 0.9) == beta_credible(3, 10, 0.9)
        assert interval("bayes", 3, 10, 0.9, (0.5, 0.5)) == beta_credible(3, 10, 0.9, (0.5, 0.5))
        assert interval(" Wilson ", 3, 10, 0.9) == wilson(3, 10, 0.9)
        # The prior only matters for "bayes".
        assert interval("exact", 3, 10, 0.9, (5.0, 5.0)) == clopper_pearson(3, 10, 0.9)

    @pytest.mark.parametrize("method", METHODS)
    def test_large_n_is_fast_and_tight(self, method):
        low, high = interval(method, 99_000, 100_000, 0.99)
        assert 0.988 < low < 0.99 < high < 0.992


class TestIntervalErrors:
    @pytest.mark.parametrize("func", [clopper_pearson, wilson, beta_credible])
    def test_zero_runs(self, func):
        with pytest.raises(ValueError, match=r"n \(number of runs\) must be >= 1, got 0"):
            func(0, 0, 0.95)

    @pytest.mark.parametrize("func", [clopper_pearson, wilson, beta_credible])
    @pytest.mark.parametrize("k", [-1, 11])
    def test_k_out_of_range(self, func, k):
        with pytest.raises(ValueError, match=rf"got {k}"):
            func(k, 10, 0.95)

    @pytest.mark.parametrize("func", [clopper_pearson, wilson, beta_credible])
    def test_confidence_as_percentage(self, func):
        with pytest.raises(ValueError, match=r"invalid confidence 95\b.*0\.95"):
            func(3, 10, 95)

    @pytest.mark.parametrize("bad", [0, 1, 1.0, -0.5, math.nan])
    def test_bad_confidence(self, bad):
        with pytest.raises(ValueError, match=re.escape(repr(bad))):
            clopper_pearson(3, 10, bad)

    def test_types(self):
        with pytest.raises(TypeError, match=r"2\.5"):
            clopper_pearson(2.5, 10, 0.9)
        with pytest.raises(TypeError, match="True"):
            wilson(1, True, 0.9)
        with pytest.raises(TypeError, match="'0.9'"):
            wilson(1, 3, "0.9")

    @pytest.mark.parametrize("prior", [(0.0, 1.0), (1.0, -1.0), (1.0,), (1, 2, 3), (math.inf, 1.0)])
    def test_bad_prior(self, prior):
        with pytest.raises(ValueError, match=re.escape(repr(prior))):
            beta_credible(1, 2, 0.9, prior)

    def test_bad_method(self):
        with pytest.raises(ValueError, match="'clopper'.*'exact', 'wilson', 'bayes'"):
            interval("clopper", 1, 2, 0.9)


# ---------------------------------------------------------------------------
# Gate helpers
# ---------------------------------------------------------------------------


def all_pass_low(method, n, confidence, prior=(1.0, 1.0)):
    return interval(method, n, n, confidence, prior)[0]


class TestRunsNeeded:
    CASES = [(method, prior) for method in ("exact", "wilson") for prior in [(1.0, 1.0)]] + [
        ("bayes", prior) for prior in PRIORS
    ]

    @pytest.mark.parametrize("method,prior", CASES, ids=str)
    def test_all_pass_lower_bound_is_monotone(self, method, prior):
        """The claim binary search relies on: the all-pass lower bound never decreases in n."""
        ns = list(range(1, 301)) + [int(10 ** (i / 20)) for i in range(50, 101)]
        for c in [0.5, 0.9, 0.95, 0.999]:
            lows = [all_pass_low(method, n, c, prior) for n in ns]
            assert all(x <= y for x, y in zip(lows, lows[1:], strict=False)), (method, prior, c)
            assert lows[-1] < 1.0

    @pytest.mark.parametrize("method,prior", CASES, ids=str)
    def test_result_is_minimal(self, method, prior):
        for rate in [0.0, 0.3, 0.5, 0.8, 0.9, 0.95, 0.99, 0.999]:
            for c in [0.5, 0.9, 0.95, 0.99]:
                n = runs_needed(rate, c, method, prior)
                assert n is not None
                assert all_pass_low(method, n, c, prior) >= rate
                if n > 1:
                    assert all_pass_low(method, n - 1, c, prior) < rate
                # Consistent with the gate: n all-pass runs give a "pass" verdict.
                low, high = interval(method, n, n, c, prior)
                assert verdict(low, high, rate) == "pass"

    def test_exact_closed_form(self):
        for rate in [0.5, 0.8, 0.9, 0.95, 0.99, 0.995]:
            for c in [0.8, 0.9, 0.95, 0.99]:
                half = (1 - c) / 2
                expected = math.ceil(math.log(half) / math.log(rate))
                assert runs_needed(rate, c, "exact") == expected
        assert runs_needed(0.9, 0.95) == 36  # the documented default method is exact

    def test_wilson_closed_form(self):
        for rate in [0.5, 0.8, 0.9, 0.95, 0.99]:
            for c in [0.8, 0.95, 0.99]:
                z = normal_ppf((1 + c) / 2)
                expected = math.ceil(rate * z * z / (1 - rate))
                assert runs_needed(rate, c, "wilson") == expected

    @pytest.mark.parametrize("method", METHODS)
    def test_impossible(self, method):
        assert runs_needed(1.0, 0.95, method) is None
        assert runs_needed(0.999, 0.95, method, max_runs=100) is None
        assert runs_needed(0.0, 0.95, method) == 1

    def test_max_runs_boundary(self):
        n = runs_needed(0.99, 0.95, "exact")
        assert runs_needed(0.99, 0.95, "exact", max_runs=n) == n
        assert runs_needed(0.99, 0.95, "exact", max_runs=n - 1) is None

    def test_near_one_is_efficient(self):
        # Binary search over 100000 runs: a handful of interval evaluations.
        assert runs_needed(0.9999, 0.95, "bayes", prior=(0.5, 0.5)) == 25118
        assert runs_needed(0.9999, 0.95, "exact") == 36887

    @pytest.mark.parametrize(
        "kwargs,needle",
        [
            ({"min_rate": 1.5}, "1.5"),
            ({"min_rate": -0.1}, "-0.1"),
            ({"max_runs": 0}, "max_runs must be >= 1, got 0"),
            ({"method": "best"}, "'best'"),
            ({"confidence": 99}, "0.99"),
            ({"prior": (0.0, 1.0)}, "(0.0, 1.0)"),
        ],
    )
    def test_errors(self, kwargs, needle):
        args = {"min_rate": 0.9, "confidence": 0.95, **kwargs}
        with pytest.raises(ValueError, match=re.escape(needle)):
            runs_needed(**args)


class TestVerdict:
    @pytest.mark.parametrize(
        "low,high,bar,expected",
        [
            (0.9, 1.0, 0.9, "pass"),  # low == bar passes
            (0.95, 0.99, 0.9, "pass"),
            (0.1, 0.89, 0.9, "fail"),
            (0.1, 0.9, 0.9, "undecided"),  # high == bar is not below the bar
            (0.5, 0.95, 0.9, "undecided"),
            (0.0, 1.0, 0.0, "pass"),
            (0.0, 1.0, 1.0, "undecided"),
        ],
    )
    def test_cases(self, low, high, bar, expected):
        assert verdict(low, high, bar) == expected

    def test_errors(self):
        with pytest.raises(ValueError, match="low=0.8, high=0.7"):
            verdict(0.8, 0.7, 0.5)
        with pytest.raises(ValueError, match="nan"):
            verdict(math.nan, 0.7, 0.5)


# ---------------------------------------------------------------------------
# Parsing helpers
# ---------------------------------------------------------------------------


class TestParseConfidence:
    @pytest.mark.parametrize(
        "value,expected", [(0.95, 0.95), ("0.95", 0.95), (" 0.9 ", 0.9), ("1e-3", 0.001), (0.5, 0.5), (0.999, 0.999)]
    )
    def test_valid(self, value, expected):
        assert parse_confidence(value) == expected

    @pytest.mark.parametrize(
        "value,suggestion",
        [(95, "0.95"), ("95", "0.95"), (99.9, "0.999"), ("90", "0.9"), ("95%", "0.95"), (50, "0.5")],
    )
    def test_percentage_suggests_fraction(self, value, suggestion):
        with pytest.raises(ValueError) as info:
            parse_confidence(value)
        message = str(info.value)
        assert repr(value) in message
        assert f"did you mean {suggestion}?" in message

    @pytest.mark.parametrize("value", [0, 1, 1.0, -0.5, 100, 250, "abc", "", math.nan, math.inf, True, None])
    def test_invalid_names_the_value(self, value):
        with pytest.raises(ValueError, match=re.escape(repr(value))):
            parse_confidence(value)


class TestParsePrior:
    @pytest.mark.parametrize(
        "value,expected",
        [
            ("1,1", (1.0, 1.0)),
            (" 0.5 , 0.5 ", (0.5, 0.5)),
            ("2,3", (2.0, 3.0)),
            ((2, 3), (2.0, 3.0)),
            ([0.1, 5], (0.1, 5.0)),
        ],
    )
    def test_valid(self, value, expected):
        assert parse_prior(value) == expected

    @pytest.mark.parametrize(
        "value", ["1", "1,0", "0,1", "-1,1", "a,b", "1,2,3", "", "1;1", "inf,1", "nan,1", (1,), (1, 0), 5, None]
    )
    def test_invalid_names_the_value(self, value):
        with pytest.raises(ValueError, match=re.escape(repr(value))):
            parse_prior(value)


class TestParseMethod:
    @pytest.mark.parametrize("value,expected", [("exact", "exact"), ("Wilson", "wilson"), (" bayes ", "bayes")])
    def test_valid(self, value, expected):
        assert parse_method(value) == expected

    @pytest.mark.parametrize("value", ["clopper-pearson", "", "beta", None, 3])
    def test_invalid_lists_choices(self, value):
        with pytest.raises(ValueError) as info:
            parse_method(value)
        message = str(info.value)
        assert repr(value) in message
        for name in METHODS:
            assert repr(name) in message


# ---------------------------------------------------------------------------
# Formatting
# ---------------------------------------------------------------------------


class TestFormatPercentInterval:
    @pytest.mark.parametrize(
        "low,high,expected",
        [
            (0.0, 1.0, "[ 0%, 100%]"),
            (0.35, 0.93, "[35%,  93%]"),
            (0.354, 0.926, "[35%,  93%]"),
            (0.001, 0.999, "[ 1%,  99%]"),  # inexact bounds never print as 0% / 100%
            (1e-300, 0.9999999, "[ 1%,  99%]"),
            (0.004, 0.996, "[ 1%,  99%]"),
            (0.005, 0.995, "[ 1%,  99%]"),
            (0.015, 0.5, "[ 2%,  50%]"),
            (0.125, 0.875, "[13%,  88%]"),  # half rounds up
            (0.0, 0.05, "[ 0%,   5%]"),
            (0.95, 1.0, "[95%, 100%]"),
            (0.5, 0.5, "[50%,  50%]"),
        ],
    )
    def test_examples(self, low, high, expected):
        assert format_percent_interval(low, high) == expected

    def test_fixed_width(self):
        for low, high in [(0.0, 0.01), (0.2, 0.3), (0.99, 1.0), (0.0, 1.0), (0.07, 0.99)]:
            assert len(format_percent_interval(low, high)) == 11

    def test_real_intervals(self):
        assert format_percent_interval(*clopper_pearson(0, 10, 0.95)) == "[ 0%,  31%]"
        assert format_percent_interval(*clopper_pearson(10, 10, 0.95)) == "[69%, 100%]"
        assert format_percent_interval(*clopper_pearson(7, 10, 0.95)) == "[35%,  93%]"

    @pytest.mark.parametrize("low,high,needle", [(-0.1, 0.5, "-0.1"), (0.1, 1.5, "1.5"), (math.nan, 0.5, "nan")])
    def test_errors(self, low, high, needle):
        with pytest.raises(ValueError, match=re.escape(needle)):
            format_percent_interval(low, high)


# ---------------------------------------------------------------------------
# Module hygiene
# ---------------------------------------------------------------------------


def test_stdlib_only_and_documented():
    import ast
    import inspect
    import sys

    tree = ast.parse(inspect.getsource(stats))
    imported = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            imported.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            imported.add(node.module.split(".")[0])
    assert imported <= set(sys.stdlib_module_names) | {"__future__"}, imported
    for name in stats.__all__:
        obj = getattr(stats, name)
        if callable(obj):
            assert obj.__doc__ and obj.__doc__.strip(), name
