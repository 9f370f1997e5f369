"""maths.inputs against scipy, statsmodels and numpy (test-only oracles), to 1e-9 relative unless told."""

from __future__ import annotations

import itertools
import math
import random
import statistics
import warnings

import pytest

from pytest_probability.maths import inputs, stats

np = pytest.importorskip("numpy")
scipy_stats = pytest.importorskip("scipy.stats")
sm = pytest.importorskip("statsmodels.api")
proportion = pytest.importorskip("statsmodels.stats.proportion")

MINUS = "\u2212"


def random_counts(rng: random.Random, groups: int, runs: int | tuple[int, int]) -> list[tuple[int, int]]:
    """``groups`` cases, each with its own rate; ``runs`` fixed or drawn from a range."""
    counts = []
    for _ in range(groups):
        total = runs if isinstance(runs, int) else rng.randint(*runs)
        rate = rng.betavariate(0.8, 0.3)
        counts.append((sum(rng.random() < rate for _ in range(total)), total))
    return counts


def outcomes(counts: list[tuple[int, int]]) -> tuple:
    """The per-run 0/1 outcomes and their case index, as numpy arrays."""
    y = np.concatenate([[1.0] * p + [0.0] * (t - p) for p, t in counts])
    g = np.concatenate([[i] * t for i, (_, t) in enumerate(counts)])
    return y, g


COUNT_SETS = [
    random_counts(random.Random(seed), groups, runs)
    for seed, (groups, runs) in enumerate(
        [(12, 10), (40, 5), (3, 2), (25, (1, 20)), (10, (2, 3)), (60, (5, 40)), (2, (1, 9)), (15, 1 + 1)]
    )
]


# -- ICC(1) --------------------------------------------------------------------------------


def anova_icc(counts: list[tuple[int, int]]) -> float:
    """ρ from scipy's one-way ANOVA F and the adjusted group size k0 of the group sizes."""
    groups = [np.array([1.0] * p + [0.0] * (t - p)) for p, t in counts]
    f = scipy_stats.f_oneway(*groups).statistic
    sizes = np.array([t for _, t in counts], dtype=float)
    k0 = (sizes.sum() - (sizes**2).sum() / sizes.sum()) / (len(sizes) - 1)
    return (f - 1.0) / (f + k0 - 1.0)


def anova_mean_squares(counts: list[tuple[int, int]]) -> tuple[float, float]:
    """MSB and MSW of the per-run outcomes, computed from the data with numpy."""
    y, g = outcomes(counts)
    grand = y.mean()
    means = np.array([y[g == i].mean() for i in range(len(counts))])
    sizes = np.array([t for _, t in counts], dtype=float)
    ssb = float((sizes * (means - grand) ** 2).sum())
    ssw = float(((y - means[g]) ** 2).sum())
    return ssb / (len(counts) - 1), ssw / (len(y) - len(counts))


@pytest.mark.parametrize("counts", COUNT_SETS, ids=lambda c: f"N={len(c)}")
def test_icc_is_the_one_way_anova_intraclass_correlation(counts):
    expected = anova_icc(counts)
    assert inputs.icc(counts, clip=False) == pytest.approx(expected, rel=1e-9, abs=1e-12)
    assert inputs.icc(counts) == pytest.approx(min(1.0, max(0.0, expected)), rel=1e-9, abs=1e-12)
    msb, msw = anova_mean_squares(counts)
    assert msb / msw == pytest.approx(scipy_stats.f_oneway(*[[1] * p + [0] * (t - p) for p, t in counts]).statistic)


def test_icc_with_unequal_run_counts_uses_the_adjusted_group_size():
    rng = random.Random(3)
    for _ in range(30):
        counts = random_counts(rng, rng.randint(2, 30), (1, 25))
        if len({t for _, t in counts}) < 2 or all(t == 1 for _, t in counts) or inputs.icc(counts) is None:
            continue
        assert inputs.icc(counts, clip=False) == pytest.approx(anova_icc(counts), rel=1e-9, abs=1e-12), counts
        # The plain mean group size would give a different ρ whenever the sizes differ.
        msb, msw = anova_mean_squares(counts)
        mean_size = statistics.fmean(t for _, t in counts)
        assert inputs.icc(counts, clip=False) != pytest.approx((msb - msw) / (msb + (mean_size - 1) * msw), rel=1e-6)


def test_icc_is_undefined_without_groups_runs_or_variation():
    assert inputs.icc([(3, 5)]) is None  # one input
    assert inputs.icc([]) is None
    assert inputs.icc([(1, 1), (0, 1), (1, 1)]) is None  # every input ran once
    assert inputs.icc([(5, 5), (3, 3), (10, 10)]) is None  # every run passed
    assert inputs.icc([(0, 5), (0, 3)]) is None  # every run failed


def test_icc_bounds():
    # Every input consistent, inputs differ: all the variance is between inputs.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # scipy warns that F is infinite
        assert math.isinf(scipy_stats.f_oneway([1.0] * 4, [0.0] * 4, [1.0] * 4).statistic)
    assert inputs.icc([(4, 4), (0, 4), (4, 4)]) == 1.0
    # Identical fractions: no spread between inputs; raw ρ = -1/(k0 - 1), clipped to 0.
    counts = [(2, 4), (2, 4), (2, 4)]
    assert inputs.icc(counts, clip=False) == pytest.approx(anova_icc(counts)) == pytest.approx(-1 / 3)
    assert inputs.icc(counts) == 0.0


# -- standard errors and analytic intervals ------------------------------------------------


@pytest.mark.parametrize("counts", [c for c in COUNT_SETS if len({t for _, t in c}) == 1], ids=lambda c: f"N={len(c)}")
def test_cluster_se_is_the_cr1_cluster_robust_se_of_ols_on_the_runs(counts):
    y, g = outcomes(counts)
    fit = sm.OLS(y, np.ones((len(y), 1))).fit(cov_type="cluster", cov_kwds={"groups": g})
    assert statistics.fmean(inputs.fractions(counts)) == pytest.approx(fit.params[0], rel=1e-12)
    assert inputs.cluster_se(counts) == pytest.approx(fit.bse[0], rel=1e-9)


@pytest.mark.parametrize("counts", [c for c in COUNT_SETS if len({t for _, t in c}) > 1], ids=lambda c: f"N={len(c)}")
def test_cluster_se_with_unequal_runs_is_the_cr1_se_of_the_equally_weighted_mean(counts):
    # OLS would estimate the pooled (run-weighted) rate; weighting each run by 1/k_i gives the mean of the fractions.
    y, g = outcomes(counts)
    weights = np.concatenate([[1.0 / t] * t for _, t in counts])
    fit = sm.WLS(y, np.ones((len(y), 1)), weights=weights).fit(cov_type="cluster", cov_kwds={"groups": g})
    assert statistics.fmean(inputs.fractions(counts)) == pytest.approx(fit.params[0], rel=1e-12)
    assert inputs.cluster_se(counts) == pytest.approx(fit.bse[0], rel=1e-9)
    assert inputs.standard_error(inputs.fractions(counts)) == pytest.approx(scipy_stats.sem(inputs.fractions(counts)))


@pytest.mark.parametrize("level", [0.8, 0.9, 0.95, 0.99])
def test_normal_and_t_intervals_match_scipy(level):
    for counts in COUNT_SETS:
        values = inputs.fractions(counts)
        mean, sem = float(np.mean(values)), float(scipy_stats.sem(values))
        if sem == 0.0:
            assert inputs.normal_interval(values, level) == (mean, mean)
            continue
        assert inputs.normal_interval(values, level) == pytest.approx(
            scipy_stats.norm.interval(level, loc=mean, scale=sem), rel=1e-9
        )
        assert inputs.t_interval(values, level) == pytest.approx(
            scipy_stats.t.interval(level, len(values) - 1, loc=mean, scale=sem), rel=1e-9
        )


def test_normal_interval_is_not_clipped():
    low, high = inputs.normal_interval([1.0] * 9 + [0.0], 0.95)
    assert high > 1.0 and low < 0.9


@pytest.mark.parametrize("df", [0.5, 1, 2, 2.5, 3, 9, 19, 49, 199, 10_000])
def test_student_t_ppf_matches_scipy(df):
    for p in [1e-12, 1e-6, 0.0005, 0.005, 0.025, 0.05, 0.1, 0.3, 0.49, 0.5, 0.51, 0.9, 0.975, 0.995, 1 - 1e-9]:
        assert inputs.student_t_ppf(p, df) == pytest.approx(scipy_stats.t.ppf(p, df), rel=1e-10, abs=1e-14), (p, df)
    assert inputs.student_t_ppf(0.0, df) == -math.inf and inputs.student_t_ppf(1.0, df) == math.inf


def statsmodels_wilson(values: list[float], level: float, trials: float) -> tuple[float, float]:
    """statsmodels' Wilson interval at Korn & Graubard's df-adjusted effective sample size n_eff (z / t)^2."""
    n = len(values)
    p, sem = float(np.mean(values)), float(scipy_stats.sem(values))
    effective = min(p * (1 - p) / sem**2 if sem > 0 else n - 1, trials)
    z, t = scipy_stats.norm.ppf((1 + level) / 2), scipy_stats.t.ppf((1 + level) / 2, n - 1)
    adjusted = effective * (z / t) ** 2
    return proportion.proportion_confint(p * adjusted, adjusted, alpha=1 - level, method="wilson")


@pytest.mark.parametrize("level", [0.9, 0.95, 0.99])
@pytest.mark.parametrize("counts", COUNT_SETS, ids=lambda c: f"N={len(c)}")
def test_wilson_interval_is_wilson_at_the_df_adjusted_effective_runs(counts, level):
    values = inputs.fractions(counts)
    runs = sum(t for _, t in counts)
    assert inputs.wilson_interval(values, level, runs) == pytest.approx(
        statsmodels_wilson(values, level, runs), rel=1e-9, abs=1e-12
    )


def test_wilson_effective_runs():
    # One run per input: the outcomes' own spread says n_eff = N - 1 (the largest variance values in [0, 1] can have).
    values = [1.0] * 7 + [0.0] * 3
    adjusted = 9 * (scipy_stats.norm.ppf(0.975) / scipy_stats.t.ppf(0.975, 9)) ** 2
    expected = proportion.proportion_confint(0.7 * adjusted, adjusted, alpha=0.05, method="wilson")
    assert inputs.wilson_interval(values, 0.95, 10) == pytest.approx(expected, rel=1e-9)
    # Less spread between inputs than binomial: n_eff would exceed the runs, so the cap holds.
    counts = [(5, 10), (5, 10), (6, 10), (4, 10)]
    uncapped = inputs.wilson_interval(inputs.fractions(counts), 0.95)
    capped = inputs.wilson_interval(inputs.fractions(counts), 0.95, 40)
    assert capped == pytest.approx(statsmodels_wilson(inputs.fractions(counts), 0.95, 40))
    assert capped[1] - capped[0] > uncapped[1] - uncapped[0]


def test_wilson_is_never_a_point():
    # No spread: N - 1 effective runs, whatever the run counts; the bound at an all-pass mean is exactly 1.
    low, high = inputs.wilson_interval([1.0] * 10, 0.95, 200)
    assert high == 1.0 and low == pytest.approx(statsmodels_wilson([1.0] * 10, 0.95, 200)[0])
    assert low == pytest.approx(9 / (9 + scipy_stats.t.ppf(0.975, 9) ** 2))
    low, high = inputs.wilson_interval([0.0] * 12, 0.95, 12)
    assert low == 0.0 and 0.0 < high < 0.5
    low, high = inputs.wilson_interval([0.5] * 12, 0.95, 120)
    assert low < 0.5 < high
    assert inputs.bootstrap_interval([1.0] * 10, 0.95, 200) == inputs.t_interval([1.0] * 10, 0.95) == (1.0, 1.0)


# -- the cluster bootstrap -------------------------------------------------------------------


def test_sample_quantile_is_type_7():
    rng = random.Random(5)
    for size in (1, 2, 7, 100, 5000):
        xs = [rng.random() for _ in range(size)]
        for q in (0.0, 0.005, 0.025, 0.1, 0.5, 0.9, 0.975, 0.995, 1.0, rng.random()):
            assert stats.sample_quantile(xs, q) == pytest.approx(float(np.quantile(xs, q, method="linear")), rel=1e-12)


def test_bootstrap_means_are_seeded_choices_of_the_cases():
    values = inputs.fractions(COUNT_SETS[0])
    rng = random.Random(7)
    expected = [statistics.fmean(rng.choices(values, k=len(values))) for _ in range(300)]
    assert inputs.bootstrap_means(values, 300, seed=7) == expected  # exactly
    assert inputs.bootstrap_means(values, 300, seed=7) == inputs.bootstrap_means(values, 300, seed=7)


def test_bootstrap_leaves_the_global_random_state_alone():
    random.seed(123)
    state = random.getstate()
    inputs.bootstrap_interval([0.1, 0.5, 0.9], 0.95, 100, seed=0)
    assert random.getstate() == state


@pytest.mark.parametrize("level", [0.8, 0.95, 0.99])
def test_percentile_interval_is_numpys_linear_percentile_of_the_resampled_means(level):
    values = inputs.fractions(COUNT_SETS[1])
    means = inputs.bootstrap_means(values, 2000, seed=3)
    tail = (1 - level) / 2
    expected = np.quantile(means, [tail, 1 - tail], method="linear")
    assert inputs.percentile_interval(means, level) == pytest.approx(tuple(expected), rel=1e-12)
    assert inputs.bootstrap_interval(values, level, 2000, seed=3) == inputs.percentile_interval(means, level)


def test_bootstrap_interval_is_close_to_scipys_percentile_bootstrap():
    values = inputs.fractions(COUNT_SETS[1])  # 40 inputs
    theirs = scipy_stats.bootstrap(
        (np.array(values),),
        np.mean,
        n_resamples=5000,
        confidence_level=0.95,
        method="percentile",
        random_state=np.random.default_rng(0),
    ).confidence_interval
    ours = inputs.bootstrap_interval(values, 0.95, 5000, seed=0)
    se = inputs.standard_error(values)
    # Two Monte Carlo estimates of the same quantiles: a few hundredths of a standard error apart.
    assert abs(ours[0] - theirs.low) < 0.1 * se and abs(ours[1] - theirs.high) < 0.1 * se
    assert ours[0] < statistics.fmean(values) < ours[1]


def test_another_seed_gives_different_but_close_bounds():
    values = inputs.fractions(COUNT_SETS[5])  # 60 inputs
    a = inputs.bootstrap_interval(values, 0.95, 5000, seed=0)
    b = inputs.bootstrap_interval(values, 0.95, 5000, seed=1)
    assert a != b
    se = inputs.standard_error(values)
    assert abs(a[0] - b[0]) < 0.15 * se and abs(a[1] - b[1]) < 0.15 * se


def test_bootstrap_of_identical_values_is_a_point():
    assert inputs.bootstrap_interval([0.75] * 12, 0.95, 500) == (0.75, 0.75)


# -- width factor and projection -------------------------------------------------------------------


@pytest.mark.parametrize("between, within", [(0.0, 1.0), (0.01, 0.2), (0.05, 0.1), (0.2, 0.05), (1.0, 0.0)])
@pytest.mark.parametrize("k", [1, 2, 5, 10, 37.5])
def test_width_factor_is_the_variance_components_standard_error(between, within, k):
    n = 24
    rho = between / (between + within)
    variance = (between + within / k) / n  # Var of the mean over n inputs of k runs
    assert inputs.width_factor(k, rho) ** 2 * (between + within) / n == pytest.approx(variance, rel=1e-12)
    doubled_runs = (between + within / (2 * k)) / n
    doubled_inputs = (between + within / k) / (2 * n)
    assert inputs.width_change(k, rho, runs=2) == pytest.approx(
        math.sqrt(doubled_runs / variance) - 1, rel=1e-12, abs=1e-15
    )
    assert inputs.width_change(k, rho, inputs=2) == pytest.approx(math.sqrt(doubled_inputs / variance) - 1)
    assert inputs.width_change(k, rho, inputs=2) == pytest.approx(1 / math.sqrt(2) - 1)


def test_harmonic_runs_make_the_width_factor_exact_for_unequal_runs():
    runs = [1, 2, 5, 10, 40]
    k = inputs.harmonic_runs([(0, t) for t in runs])
    assert k == pytest.approx(scipy_stats.hmean(runs))
    between, within = 0.03, 0.13
    variance = statistics.fmean(between + within / t for t in runs) / len(runs)  # (1/N^2) sum of each input's variance
    rho = between / (between + within)
    assert inputs.width_factor(k, rho) ** 2 * (between + within) / len(runs) == pytest.approx(variance, rel=1e-12)


def test_width_factor_matches_a_beta_binomial_simulation():
    rng = np.random.default_rng(11)
    mean, n, k, reps = 0.8, 20, 5, 20_000
    for rho in (0.1, 0.5, 0.9):
        a_plus_b = 1 / rho - 1
        rates = rng.beta(mean * a_plus_b, (1 - mean) * a_plus_b, size=(reps, n))
        estimates = (rng.binomial(k, rates) / k).mean(axis=1)
        predicted = math.sqrt(mean * (1 - mean)) * inputs.width_factor(k, rho) / math.sqrt(n)
        assert float(estimates.std()) == pytest.approx(predicted, rel=0.03), rho


def test_documented_projections_at_ten_runs():
    # docs/reference.md (0.3.0), "Runs or inputs?": k = 10 going to 20 runs.
    for rho, text in [(0.025, "22"), (0.3, "5"), (0.6, "2")]:
        assert inputs.format_change(inputs.width_change(10, rho, runs=2)) == f"{MINUS}{text}%"
    assert inputs.format_change(inputs.width_change(10, 0.5, inputs=2)) == f"{MINUS}29%"
    assert inputs.width_change(10, 1.0, runs=2) == 0.0
    assert inputs.format_change(inputs.width_change(10, 1.0, runs=2)) == "\u00b10%"


def test_format_change():
    assert inputs.format_change(-0.2929) == f"{MINUS}29%"
    assert inputs.format_change(-0.005000001) == f"{MINUS}1%"  # half up
    assert inputs.format_change(-0.0049) == f"{MINUS}<1%"
    assert inputs.format_change(-1e-9) == f"{MINUS}<1%"
    assert inputs.format_change(0.0) == inputs.format_change(-1e-13) == inputs.format_change(1e-13) == "\u00b10%"
    assert inputs.format_change(0.05) == "+5%"
    assert inputs.format_change(0.001) == "+<1%"
    assert "-" not in inputs.format_change(-0.5)


# -- pass^k and pass@k over inputs ------------------------------------------------------------------


def brute_force(kind: str, passes: int, total: int, k: int) -> float:
    """The share of the k-subsets of the runs that all pass (pass^k) or hold a pass (pass@k)."""
    runs = [True] * passes + [False] * (total - passes)
    subsets = list(itertools.combinations(runs, k))
    hits = sum(all(s) if kind == "pass^" else any(s) for s in subsets)
    return hits / len(subsets)


METRIC_COUNTS = [(p, t) for p, t in random_counts(random.Random(9), 14, (1, 9))] + [(4, 4), (0, 6), (2, 2)]


@pytest.mark.parametrize("kind, k", [("pass^", 1), ("pass^", 3), ("pass@", 2), ("pass@", 5)])
def test_metric_estimate_averages_the_cases_with_enough_runs(kind, k):
    kept = [(p, t) for p, t in METRIC_COUNTS if t >= k]
    values = [brute_force(kind, p, t, k) for p, t in kept]
    result = inputs.metric_estimate(METRIC_COUNTS, kind, k, min_inputs=5, resamples=1000, seed=4)
    assert (result.kind, result.k, result.inputs, result.left_out) == (
        kind,
        k,
        len(kept),
        len(METRIC_COUNTS) - len(kept),
    )
    assert result.estimate == pytest.approx(statistics.fmean(values), rel=1e-12)
    assert result.ci == pytest.approx(inputs.bootstrap_interval(values, 0.95, 1000, seed=4), rel=1e-12)
    assert result.normal_ci == pytest.approx(
        scipy_stats.norm.interval(0.95, loc=np.mean(values), scale=scipy_stats.sem(values)), rel=1e-9
    )
    assert result.suppressed is None and result.stopped == 0


def test_metric_wilson_interval_is_capped_at_the_draws_of_k_runs():
    counts = [(p, 12) for p in range(13)] + [(2, 2)]
    result = inputs.metric_estimate(counts, "pass@", 3, interval="wilson")
    values = [brute_force("pass@", p, t, 3) for p, t in counts if t >= 3]
    assert result.ci == pytest.approx(inputs.wilson_interval(values, 0.95, 13 * 12 / 3), rel=1e-12)
    assert result.ci == pytest.approx(statsmodels_wilson(values, 0.95, 13 * 12 / 3), rel=1e-9)


def test_metric_value_is_the_per_case_estimate():
    for passes, total in [(0, 5), (3, 5), (5, 5), (7, 9)]:
        for k in range(1, total + 1):
            assert inputs.metric_value("pass^", passes, total, k) == pytest.approx(
                brute_force("pass^", passes, total, k)
            )
            assert inputs.metric_value("pass@", passes, total, k) == pytest.approx(
                brute_force("pass@", passes, total, k)
            )
    with pytest.raises(ValueError):
        inputs.metric_value("pass^", 2, 3, 4)


def test_pass_k_one_is_the_pass_rate():
    rate = inputs.input_estimate(METRIC_COUNTS, min_inputs=5, resamples=500)
    for kind in inputs.METRIC_KINDS:
        metric = inputs.metric_estimate(METRIC_COUNTS, kind, 1, min_inputs=5, resamples=500)
        assert metric.estimate == pytest.approx(rate.estimate, rel=1e-12)
        assert metric.ci == pytest.approx(rate.ci, rel=1e-12)


def test_metric_suppression():
    none_long = inputs.metric_estimate([(2, 3), (1, 4)], "pass@", 5)
    assert none_long == inputs.MetricEstimate(
        "pass@", 5, 0, 2, None, None, None, "no input with at least 5 runs", 0, "percentile"
    )
    few = inputs.metric_estimate([(2, 3), (5, 6), (6, 6)], "pass^", 3)
    assert (few.inputs, few.estimate is not None, few.ci, few.normal_ci, few.suppressed) == (
        3,
        True,
        None,
        None,
        "fewer than 10 inputs",
    )
    counts = [(p, 10) for p in range(10)] + [(1, 2)]
    stopped = [False] * 9 + [True, True]  # the short case stopped too, but is left out of pass^3
    held = inputs.metric_estimate(counts, "pass^", 3, stopped=stopped, resamples=200)
    assert (held.ci, held.normal_ci, held.suppressed, held.stopped, held.left_out) == (
        None,
        None,
        "1 case stopped early",
        1,
        1,
    )


# -- the function-level aggregate -------------------------------------------------------------------


def test_input_estimate_fields():
    counts = COUNT_SETS[3]  # 25 inputs of 1..20 runs
    result = inputs.input_estimate(counts, level=0.9, resamples=800, seed=2)
    values = inputs.fractions(counts)
    totals = [t for _, t in counts]
    assert result.inputs == 25
    assert (result.runs_min, result.runs_mean, result.runs_max) == (min(totals), statistics.fmean(totals), max(totals))
    assert result.runs_harmonic == pytest.approx(scipy_stats.hmean(totals))
    assert result.estimate == pytest.approx(float(np.mean(values)), rel=1e-12)
    assert result.ci == inputs.bootstrap_interval(values, 0.9, 800, seed=2)
    assert result.check_ci == inputs.normal_interval(values, 0.9)
    assert result.icc == inputs.icc(counts)
    assert result.width_factor == inputs.width_factor(result.runs_harmonic, result.icc)
    assert result.runs_change == inputs.width_change(result.runs_harmonic, result.icc, runs=2)
    assert result.inputs_change == pytest.approx(1 / math.sqrt(2) - 1)
    assert (result.suppressed, result.stopped, result.method) == (None, 0, "percentile")
    t = inputs.input_estimate(counts, level=0.9, interval="t")
    assert (t.ci, t.method) == (inputs.t_interval(values, 0.9), "t")
    assert t._replace(ci=None, method=None) == result._replace(ci=None, method=None)
    wilson = inputs.input_estimate(counts, level=0.9, interval="Wilson")
    assert (wilson.ci, wilson.method) == (inputs.wilson_interval(values, 0.9, sum(totals)), "wilson")


def test_every_run_counts_and_one_input_counts_once():
    # A case of 40 runs weighs as much as one of 2: the mean of fractions, not the pooled rate.
    result = inputs.input_estimate([(40, 40), (0, 2)])
    assert result.estimate == 0.5
    assert (result.ci, result.suppressed) == (None, "fewer than 10 inputs")


def test_all_consistent_inputs_as_0_3_0_printed():
    # 0.3.0: "classify  N=12 inputs × k=10  75.0%  ...  ρ=1.00 / runs ×2 → interval ±0%  ·  inputs ×2 → −29%"
    result = inputs.input_estimate([(10, 10)] * 9 + [(0, 10)] * 3)
    assert (result.estimate, result.icc, result.width_factor) == (0.75, 1.0, 1.0)
    assert inputs.format_change(result.runs_change) == "\u00b10%"
    assert inputs.format_change(result.inputs_change) == f"{MINUS}29%"
    assert result.ci[0] < 0.75 < result.ci[1] <= 1.0


def test_input_estimate_suppression():
    few = inputs.input_estimate(COUNT_SETS[2])  # 3 inputs
    assert (few.ci, few.check_ci, few.suppressed) == (None, None, "fewer than 10 inputs")
    assert few.icc == inputs.icc(COUNT_SETS[2])  # still computed, as data
    assert inputs.input_estimate(COUNT_SETS[2], min_inputs=3).suppressed is None
    assert inputs.input_estimate(COUNT_SETS[2], min_inputs=4).suppressed == "fewer than 4 inputs"
    counts = COUNT_SETS[0]
    flags = [i in (2, 5) for i in range(len(counts))]
    held = inputs.input_estimate(counts, stopped=flags)
    assert (held.ci, held.check_ci, held.suppressed, held.stopped) == (None, None, "2 cases stopped early", 2)
    assert held.estimate == inputs.input_estimate(counts).estimate and held.icc is not None
    # Too few inputs is the reason that stays.
    assert inputs.input_estimate(counts, min_inputs=20, stopped=flags).suppressed == "fewer than 20 inputs"
    single = inputs.input_estimate([(1, 1)] * 12 + [(0, 1)] * 3)  # every case ran once: no ρ, no projection
    assert single.ci is not None and (single.icc, single.width_factor, single.runs_change, single.inputs_change) == (
        None,
        None,
        None,
        None,
    )


def test_suppression_texts():
    assert inputs.fewer_inputs(10) == "fewer than 10 inputs"
    assert inputs.no_input_with_runs(5) == "no input with at least 5 runs"
    assert (inputs.stopped_early(1), inputs.stopped_early(3)) == ("1 case stopped early", "3 cases stopped early")


@pytest.mark.parametrize(
    "call, error",
    [
        (lambda: inputs.input_estimate([]), ValueError),
        (lambda: inputs.input_estimate([(3, 2)]), ValueError),
        (lambda: inputs.input_estimate([(0, 0)]), ValueError),
        (lambda: inputs.input_estimate([(-1, 2)]), ValueError),
        (lambda: inputs.input_estimate([(1.0, 2)]), TypeError),
        (lambda: inputs.input_estimate([(True, 2)]), TypeError),
        (lambda: inputs.input_estimate([(1, 2, 3)]), TypeError),
        (lambda: inputs.input_estimate([(1, 2)], level=95), ValueError),
        (lambda: inputs.input_estimate([(1, 2)], level="0.95"), TypeError),
        (lambda: inputs.input_estimate([(1, 2)], resamples=0), ValueError),
        (lambda: inputs.input_estimate([(1, 2)], min_inputs=1), ValueError),
        (lambda: inputs.input_estimate([(1, 2)], interval="bca"), ValueError),
        (lambda: inputs.input_estimate([(1, 2)], stopped=[True, False]), ValueError),
        (lambda: inputs.input_estimate([(1, 2)], stopped=[1]), TypeError),
        (lambda: inputs.metric_estimate([(1, 2)], "pass", 2), ValueError),
        (lambda: inputs.metric_estimate([(1, 2)], "pass^", 0), ValueError),
        (lambda: inputs.width_factor(0.5, 0.2), ValueError),
        (lambda: inputs.width_factor(3, 1.2), ValueError),
        (lambda: inputs.width_change(3, 0.2, runs=0), ValueError),
        (lambda: inputs.bootstrap_means([], 10), ValueError),
        (lambda: inputs.bootstrap_means([0.5, math.nan], 10), ValueError),
        (lambda: inputs.normal_interval([0.5], 0.95), ValueError),
        (lambda: inputs.student_t_ppf(0.5, 0), ValueError),
        (lambda: inputs.wilson_interval([0.5, 1.5], 0.95), ValueError),
        (lambda: inputs.wilson_interval([0.5, 1.0], 0.95, 0), ValueError),
        (lambda: inputs.format_change("5%"), TypeError),
    ],
)
def test_bad_arguments_are_rejected(call, error):
    with pytest.raises(error):
        call()
