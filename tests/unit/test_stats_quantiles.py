"""Tests for pytest_probability.maths.stats: its quantiles (the sample quantile, its ranks and interval),
pass^k and pass@k, and the metrics' parser; the intervals, gates and the rest are in test_stats.py (split
for size).

Reference values come from scipy and numpy (skipped when not installed).
"""

from __future__ import annotations

import math
import random
import re
from fractions import Fraction

import pytest

from pytest_probability.maths.stats import (
    QuantileEstimate,
    parse_metric,
    parse_metrics,
    pass_at_k,
    pass_hat_k,
    quantile_interval,
    quantile_ranks,
    sample_quantile,
)

# ---------------------------------------------------------------------------
# Quantiles
# ---------------------------------------------------------------------------


class TestSampleQuantile:
    def test_matches_numpy_linear(self, np):
        rng = random.Random(7)
        for n in [1, 2, 3, 10, 57, 1000]:
            xs = [rng.lognormvariate(0, 1) for _ in range(n)]
            for q in [0.0, 0.01, 0.1, 0.25, 0.5, 0.9, 0.95, 0.99, 1.0]:
                ref = float(np.quantile(xs, q, method="linear"))
                assert sample_quantile(xs, q) == pytest.approx(ref, rel=1e-14)
                if 0 < q < 1:
                    est = quantile_interval(xs, q, 0.9).estimate
                    assert est == pytest.approx(ref, rel=1e-14)

    def test_simple_values(self):
        assert sample_quantile([3, 1, 2], 0.5) == 2
        assert sample_quantile([1, 2, 3, 4], 0.5) == 2.5
        assert sample_quantile(range(1, 11), 0.95) == pytest.approx(9.55)
        assert sample_quantile([5.0], 0.3) == 5.0


class TestQuantileRanks:
    def test_tail_masses_and_coverage_exact(self, sp_stats):
        binom = sp_stats.binom
        for n in [1, 2, 5, 10, 20, 29, 30, 59, 100, 299, 1000, 5000]:
            for q in [0.01, 0.1, 0.5, 0.9, 0.95, 0.99]:
                for c in [0.5, 0.8, 0.9, 0.95, 0.99]:
                    half = (1 - c) / 2
                    low, high = quantile_ranks(n, q, c)
                    # low is None exactly when even X(1) has too much lower-tail mass
                    # (not asserted at exact ties such as q**n == alpha/2, where
                    # the comparison is decided by rounding).
                    if abs(binom.cdf(0, n, q) - half) > 1e-12:
                        assert (low is None) == (binom.cdf(0, n, q) > half)
                    if abs(binom.sf(n - 1, n, q) - half) > 1e-12:
                        assert (high is None) == (binom.sf(n - 1, n, q) > half)
                    lower_tail = 0.0
                    upper_tail = 0.0
                    if low is not None:
                        assert 1 <= low <= n
                        lower_tail = binom.cdf(low - 1, n, q)  # P(X(low) > xi)
                        assert lower_tail <= half + 1e-12
                        if low < n:  # maximal: the next order statistic would break it
                            assert binom.cdf(low, n, q) > half - 1e-12
                    if high is not None:
                        assert 1 <= high <= n
                        upper_tail = binom.sf(high - 1, n, q)  # P(X(high) < xi)
                        assert upper_tail <= half + 1e-12
                        if high > 1:  # minimal
                            assert binom.sf(high - 2, n, q) > half - 1e-12
                    if low is not None and high is not None:
                        assert low < high
                        coverage = binom.cdf(high - 1, n, q) - binom.cdf(low - 1, n, q)
                        assert coverage >= c - 1e-12
                    # In all cases the (possibly half-open) interval has coverage >= c.
                    assert 1 - lower_tail - upper_tail >= c - 1e-12

    def test_known_values(self):
        # Classical median interval for n = 100 at 95%: X(40), X(61).
        assert quantile_ranks(100, 0.5, 0.95) == (40, 61)
        # p95 from 10 samples: no order statistic bounds it from above.
        assert quantile_ranks(10, 0.95, 0.95) == (8, None)
        assert quantile_ranks(10, 0.05, 0.95) == (None, 3)
        # The smallest n giving an upper bound for p95 at 95%: 0.95**n <= 0.025.
        assert quantile_ranks(71, 0.95, 0.95)[1] is None
        assert quantile_ranks(72, 0.95, 0.95)[1] == 72

    def test_large_n(self):
        low, high = quantile_ranks(1_000_000, 0.99, 0.95)
        assert low < 990_000 < high
        assert high - low < 500

    def test_errors(self):
        with pytest.raises(ValueError, match="got 0"):
            quantile_ranks(0, 0.5, 0.9)
        with pytest.raises(ValueError, match="got 1.0"):
            quantile_ranks(10, 1.0, 0.9)
        with pytest.raises(ValueError, match="0.9"):
            quantile_ranks(10, 0.5, 90)


class TestQuantileInterval:
    def test_values_are_order_statistics(self):
        xs = list(range(100, 0, -1))  # unsorted input
        est = quantile_interval(xs, 0.5, 0.95)
        assert isinstance(est, QuantileEstimate)
        assert est == QuantileEstimate(50.5, 40.0, 61.0)
        assert quantile_interval(iter(xs), 0.5, 0.95) == est  # any iterable

    def test_small_sample_open_side(self):
        est = quantile_interval([float(i) for i in range(1, 11)], 0.95, 0.95)
        assert est.high is None
        assert est.low == 8.0
        assert est.estimate == pytest.approx(9.55)
        est = quantile_interval([3.0], 0.5, 0.95)
        assert est == QuantileEstimate(3.0, None, None)

    def test_ties(self):
        est = quantile_interval([1.0] * 50 + [2.0] * 50, 0.5, 0.9)
        assert est.low == 1.0 and est.high == 2.0
        assert est.estimate == 1.5

    @pytest.mark.parametrize(
        "samples,q,needle,exc",
        [
            ([], 0.5, "empty", ValueError),
            ([1.0, math.nan], 0.5, "nan", ValueError),
            ([1.0, 2.0], 0.0, "got 0.0", ValueError),
            ([1.0, 2.0], 1.5, "got 1.5", ValueError),
            (["1"], 0.5, "'1'", TypeError),
            ("123", 0.5, "'123'", TypeError),
        ],
    )
    def test_errors(self, samples, q, needle, exc):
        with pytest.raises(exc, match=re.escape(needle)):
            quantile_interval(samples, q, 0.9)

    @pytest.mark.slow
    def test_monte_carlo_coverage(self, sp_stats):
        """Seeded simulation: empirical coverage matches the exact binomial value."""
        binom = sp_stats.binom
        rng = random.Random(12345)
        trials = 20000
        settings = [(50, 0.9, 0.9), (200, 0.99, 0.95), (25, 0.5, 0.95), (10, 0.95, 0.95), (120, 0.95, 0.8)]
        for n, q, c in settings:
            xi = -math.log1p(-q)  # q-quantile of Exp(1)
            low_rank, high_rank = quantile_ranks(n, q, c)
            lower_miss = 0.0 if low_rank is None else binom.cdf(low_rank - 1, n, q)
            upper_miss = 0.0 if high_rank is None else binom.sf(high_rank - 1, n, q)
            expected = 1 - lower_miss - upper_miss
            assert expected >= c - 1e-12
            hits = 0
            for _ in range(trials):
                est = quantile_interval([rng.expovariate(1.0) for _ in range(n)], q, c)
                if (est.low is None or est.low <= xi) and (est.high is None or xi <= est.high):
                    hits += 1
            sigma = math.sqrt(expected * (1 - expected) / trials)
            assert abs(hits / trials - expected) <= 4.5 * sigma + 1e-9, (n, q, c, hits / trials, expected)

        # Discrete data (ties): coverage is at least the nominal level.
        n, q, c = 40, 0.9, 0.9
        support = list(range(10))
        weights = [0.3, 0.2, 0.15, 0.1, 0.08, 0.07, 0.04, 0.03, 0.02, 0.01]
        cumulative = 0.0
        for value, weight in zip(support, weights, strict=False):
            cumulative += weight
            if cumulative >= q - 1e-12:
                xi = value
                break
        hits = 0
        for _ in range(trials):
            est = quantile_interval(rng.choices(support, weights, k=n), q, c)
            if (est.low is None or est.low <= xi) and (est.high is None or xi <= est.high):
                hits += 1
        assert hits / trials >= c - 4.5 * math.sqrt(c * (1 - c) / trials)


# ---------------------------------------------------------------------------
# pass^k and pass@k
# ---------------------------------------------------------------------------


def codex_pass_at_k(np, n, c, k):
    """Reference implementation from Chen et al. (2021)."""
    if n - c < k:
        return 1.0
    return 1.0 - np.prod(1.0 - k / np.arange(n - c + 1, n + 1))


class TestPassK:
    def test_exact_against_fractions(self):
        rng = random.Random(3)
        for _ in range(1500):
            n = rng.randint(1, 200)
            c = rng.randint(0, n)
            k = rng.randint(1, n)
            assert pass_hat_k(n, c, k) == float(Fraction(math.comb(c, k), math.comb(n, k)))
            assert pass_at_k(n, c, k) == float(1 - Fraction(math.comb(n - c, k), math.comb(n, k)))

    def test_matches_codex_reference(self, np):
        for n, c, k in [(10, 3, 1), (10, 3, 5), (200, 17, 10), (1000, 999, 100), (100000, 10, 5000)]:
            assert pass_at_k(n, c, k) == pytest.approx(float(codex_pass_at_k(np, n, c, k)), rel=1e-10)

    def test_large_n(self):
        n = 100_000
        # Closed forms.
        assert pass_hat_k(n, n - 1, 50_000) == 0.5
        assert pass_at_k(n, 1, 50_000) == 0.5
        assert pass_hat_k(n, 60_000, 1) == 0.6
        assert pass_at_k(n, 60_000, 1) == 0.6
        assert pass_hat_k(n, n, n) == 1.0
        assert pass_hat_k(n, n - 1, n) == 0.0
        assert pass_at_k(n, 0, n) == 0.0
        assert pass_at_k(n, 1, n) == 1.0
        # Underflow / saturation without huge intermediate integers.
        assert pass_hat_k(n, 60_000, 50_000) == 0.0
        assert pass_at_k(n, 60_000, 50_000) == 1.0
        # Against a float product.
        ratio = math.exp(math.fsum(math.log((99_000 - i) / (n - i)) for i in range(500)))
        assert pass_hat_k(n, 99_000, 500) == pytest.approx(ratio, rel=1e-10)
        miss = math.exp(math.fsum(math.log((n - 10 - i) / (n - i)) for i in range(5000)))
        assert pass_at_k(n, 10, 5000) == pytest.approx(1 - miss, rel=1e-10)

    def test_properties(self):
        n = 30
        for c in range(n + 1):
            hats = [pass_hat_k(n, c, k) for k in range(1, n + 1)]
            ats = [pass_at_k(n, c, k) for k in range(1, n + 1)]
            assert hats[0] == ats[0] == pytest.approx(c / n)
            assert all(x >= y for x, y in zip(hats, hats[1:], strict=False))
            assert all(x <= y for x, y in zip(ats, ats[1:], strict=False))
            assert all(0.0 <= h <= a <= 1.0 for h, a in zip(hats, ats, strict=False))

    def test_unbiased_for_p_to_the_k(self):
        # E[pass^k] over Binomial(n, p) pass counts equals p**k exactly.
        n, p = 12, Fraction(3, 10)
        for k in [1, 2, 5, 12]:
            expected = sum(
                math.comb(n, c) * p**c * (1 - p) ** (n - c) * Fraction(math.comb(c, k), math.comb(n, k))
                for c in range(n + 1)
            )
            assert expected == p**k
            approx = sum(
                math.comb(n, c) * float(p) ** c * (1 - float(p)) ** (n - c) * pass_hat_k(n, c, k) for c in range(n + 1)
            )
            assert approx == pytest.approx(float(p) ** k, rel=1e-12)

    @pytest.mark.parametrize(
        "args,needle",
        [
            ((3, 1, 4), "k=4 exceeds the number of runs n=3"),
            ((3, 1, 0), "k must be >= 1, got 0"),
            ((3, 4, 1), "got 4"),
            ((3, -1, 1), "got -1"),
            ((0, 0, 1), "got 0"),
        ],
    )
    @pytest.mark.parametrize("func", [pass_hat_k, pass_at_k])
    def test_errors(self, func, args, needle):
        with pytest.raises(ValueError, match=re.escape(needle)):
            func(*args)

    def test_type_errors(self):
        with pytest.raises(TypeError, match="2.0"):
            pass_hat_k(3, 1, 2.0)


class TestParseMetric:
    @pytest.mark.parametrize(
        "text,expected",
        [
            ("pass^3", ("pass^", 3)),
            ("pass@5", ("pass@", 5)),
            ("  pass ^ 10  ", ("pass^", 10)),
            ("\tpass@ 1\n", ("pass@", 1)),
            ("PASS@2", ("pass@", 2)),
            ("pass^007", ("pass^", 7)),
        ],
    )
    def test_valid(self, text, expected):
        assert parse_metric(text) == expected

    @pytest.mark.parametrize(
        "text", ["pass^0", "pass@x", "pass^-1", "foo", "", "pass", "pass^1.5", "pass^3,pass@5", "pass#3"]
    )
    def test_invalid_names_the_text(self, text):
        with pytest.raises(ValueError, match=re.escape(repr(text))):
            parse_metric(text)

    def test_parse_metrics(self):
        assert parse_metrics(["pass^1,pass^3", " pass@5 ", "pass^3", "pass^1, pass@5,"]) == [
            ("pass^", 1),
            ("pass^", 3),
            ("pass@", 5),
        ]
        assert parse_metrics("pass@1, pass^2") == [("pass@", 1), ("pass^", 2)]
        assert parse_metrics([]) == []
        assert parse_metrics(iter(["pass^2", "pass ^ 2"])) == [("pass^", 2)]

    def test_parse_metrics_error_names_item(self):
        with pytest.raises(ValueError, match=re.escape("' pass@x'")):
            parse_metrics(["pass^1, pass@x"])
