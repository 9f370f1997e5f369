"""planning against scipy and statsmodels (test-only oracles) and against 0.3.0's observed ``--prob-plan`` output.

Part 1 (a gate's run budget): the pass set of every run count is the gate's
interval from scipy/statsmodels, its chance a sum of ``scipy.stats.binom``
probabilities; a flake is caught with ``1 - binom.pmf(0, n, q)``. Part 2 (an
A/B over inputs, Miller 2024): the variance components against a one-way
ANOVA of the 0/1 outcomes and direct computation on simulated data, the
sample size and power against ``statsmodels.stats.power``.
"""

from __future__ import annotations

import math
import random

import pytest

from pytest_probability.config.spec import GateSpec
from pytest_probability.features.compare import compare_config
from pytest_probability.features.compare import plan as plan_table
from pytest_probability.maths import ab_planning, run_budget, stats
from pytest_probability.maths.ab_planning import Components
from pytest_probability.maths.run_budget import GateRule

np = pytest.importorskip("numpy")
scipy_stats = pytest.importorskip("scipy.stats")
proportion = pytest.importorskip("statsmodels.stats.proportion")
smpower = pytest.importorskip("statsmodels.stats.power")

LEVEL = 0.95


# -- Part 1: oracles ----------------------------------------------------------------


def lower_bounds(gate: GateRule, n: int) -> np.ndarray:
    """The gate's interval lower bound for every pass count 0..n, from scipy/statsmodels."""
    k = np.arange(n + 1)
    alpha = 1.0 - gate.confidence
    if gate.method == "exact":
        return proportion.proportion_confint(k, n, alpha=alpha, method="beta")[0]
    if gate.method == "wilson":
        return proportion.proportion_confint(k, n, alpha=alpha, method="wilson")[0]
    a, b = gate.prior
    return scipy_stats.beta.ppf(alpha / 2.0, a + k, b + n - k)


def pass_set(gate: GateRule, n: int) -> np.ndarray:
    if gate.rule == "count":
        return np.arange(n + 1) >= gate.min_passes
    return np.nan_to_num(lower_bounds(gate, n), nan=0.0) >= gate.bar


def oracle_chance(gate: GateRule, n: int, rate: float) -> float:
    """Sum of the binomial probabilities of the pass counts the gate accepts."""
    accepted = pass_set(gate, n)
    return float(scipy_stats.binom.pmf(np.arange(n + 1)[accepted], n, rate).sum())


def oracle_runs_for(gate: GateRule, rate: float, target: float, cap: int) -> int | None:
    for n in range(1, cap + 1):
        if oracle_chance(gate, n, rate) >= target:
            return n
    return None


GATES = {
    "exact 0.9": GateRule.rate(0.9),
    "wilson 0.95": GateRule.rate(0.95, method="wilson"),
    "bayes 0.8 uniform": GateRule.rate(0.8, method="bayes", prior=(1, 1)),
    "bayes 0.9 jeffreys 0.99": GateRule.rate(0.9, confidence=0.99, method="bayes", prior=(0.5, 0.5)),
    "exact 0.7 at 0.9": GateRule.rate(0.7, confidence=0.9),
    "count 19": GateRule.count(19),
}


@pytest.mark.parametrize("name", list(GATES))
def test_pass_counts_are_one_upper_tail_and_the_chance_is_the_binomial_sum(name):
    gate = GATES[name]
    for n in (1, 5, 19, 20, 36, 40, 73, 100, 257):
        accepted = pass_set(gate, n)
        critical = run_budget.critical_passes(gate, n)
        if not accepted.any():
            assert critical is None
        else:
            first = int(np.argmax(accepted))
            assert accepted[first:].all(), "the passing counts are an upper tail"
            assert critical == first
        for rate in (0.5, 0.9, 0.97, 0.999):
            assert run_budget.pass_chance(gate, n, rate) == pytest.approx(
                oracle_chance(gate, n, rate), rel=1e-9, abs=1e-14
            ), (n, rate)


@pytest.mark.parametrize("name", list(GATES))
def test_min_runs_is_the_first_all_pass_that_passes(name):
    gate = GATES[name]
    expected = next(n for n in range(1, 2000) if pass_set(gate, n)[n])
    assert run_budget.min_runs(gate) == expected
    assert run_budget.pass_chance(gate, expected - 1, 0.999999) == 0.0


@pytest.mark.parametrize(
    "name, rate",
    [
        ("exact 0.9", 0.97),
        ("exact 0.9", 0.99),
        ("wilson 0.95", 0.99),
        ("bayes 0.8 uniform", 0.97),
        ("bayes 0.9 jeffreys 0.99", 0.97),
        ("exact 0.7 at 0.9", 0.8),
        ("count 19", 0.97),
        ("count 19", 0.99),
    ],
)
def test_runs_for_chance_is_the_first_run_count_with_the_target_chance(name, rate):
    gate = GATES[name]
    expected = oracle_runs_for(gate, rate, 0.8, 400)
    assert expected is not None
    assert run_budget.runs_for_chance(gate, rate, 0.8, 10_000) == expected
    # The chance saw-tooths: it is not monotone in n, which is why every n is tried.
    assert run_budget.pass_chance(gate, expected, rate) >= 0.8


def test_runs_for_chance_scans_past_saw_tooth_dips():
    gate = GATES["exact 0.9"]
    chances = [run_budget.pass_chance(gate, n, 0.97) for n in range(36, 101)]
    assert any(later < earlier for earlier, later in zip(chances, chances[1:], strict=False)), "the chance dips"
    assert run_budget.runs_for_chance(gate, 0.97) == 100


def test_runs_for_chance_never_and_beyond_the_cap():
    gate = GATES["exact 0.9"]
    assert run_budget.runs_for_chance(gate, 0.97, cap=99) is None
    assert plan_table.format_runs_for_chance(None, gate, 0.97, cap=99) == ">99"
    assert run_budget.runs_for_chance(gate, 0.97, cap=100) == 100
    for bar in (0.97, 0.98):
        high = GateRule.rate(bar)
        assert run_budget.never_passes(high, 0.97)
        assert run_budget.runs_for_chance(high, 0.97) is None
        assert plan_table.format_runs_for_chance(None, high, 0.97) == "never"
    assert not run_budget.never_passes(GateRule.count(19), 0.5)
    assert run_budget.min_runs(GateRule.rate(1.0)) is None  # the exact lower bound never reaches 1
    assert plan_table.format_min_runs(None) == ">100,000"


def test_gate_rule_agrees_with_the_gate_spec_verdict():
    for spec in (
        GateSpec("rate", 0.9, None, 0.95, "exact", (1.0, 1.0), "count"),
        GateSpec("rate", 0.8, None, 0.9, "wilson", (1.0, 1.0), "count"),
        GateSpec("rate", 0.85, None, 0.95, "bayes", (0.5, 0.5), "count"),
        GateSpec("count", 19 / 20, 19, 0.95, "exact", (1.0, 1.0), "count"),
    ):
        rule = GateRule.from_spec(spec)
        for n in range(1, 31):
            for k in range(n + 1):
                assert rule.passes(k, n) == (spec.decide(k, n) == "pass"), (spec, k, n)


@pytest.mark.parametrize("flake", [0.5, 0.1, 0.05, 0.01, 0.001])
def test_catch_chance_is_one_minus_the_binomial_chance_of_no_failure(flake):
    for n in (0, 1, 20, 29, 40, 299, 1000):
        expected = 1.0 - scipy_stats.binom.pmf(0, n, flake)
        assert run_budget.catch_chance(flake, n) == pytest.approx(expected, rel=1e-12, abs=1e-300)
    for level in (0.9, 0.95, 0.99):
        needed = run_budget.runs_to_catch(flake, level)
        assert 1.0 - scipy_stats.binom.pmf(0, needed, flake) >= level
        assert needed == 1 or 1.0 - scipy_stats.binom.pmf(0, needed - 1, flake) < level
    assert run_budget.catch_chance(1.0, 3) == 1.0


def test_runs_to_catch_the_documented_flakes():
    assert run_budget.runs_to_catch(0.1) == 29
    assert run_budget.runs_to_catch(0.01) == 299


# The table 0.3.0's --prob-plan printed (bench_plan.py in the module's report: -o prob_runs=40), as observed.
OBSERVED_030 = [
    # gate, runs, assume, flakes, cells
    (GateRule.rate(0.9), 40, 0.97, (0.1, 0.01), ["40", "36", "100", "30%", "99%", "33%"]),
    (GateRule.count(19), 20, 0.97, (0.1, 0.01), ["20", "19", "20", "88%", "88%", "18%"]),
    (GateRule.rate(0.95, method="wilson"), 100, 0.97, (0.1, 0.01), ["100", "73", "779", "5%", "99%", "63%"]),
    (GateRule.rate(0.8, method="bayes", prior=(1, 1)), 30, 0.97, (0.1, 0.01), ["30", "16", "25", "77%", "96%", "26%"]),
    (GateRule.rate(0.98), 50, 0.97, (0.1, 0.01), ["50", "183", "never", "0%", "99%", "39%"]),
    (None, 40, 0.97, (0.1, 0.01), ["40", "\u2014", "\u2014", "\u2014", "99%", "33%"]),
    (GateRule.rate(0.9), 40, 0.99, (0.05, 0.001), ["40", "36", "54", "67%", "87%", "4%"]),
    (GateRule.count(19), 20, 0.99, (0.05, 0.001), ["20", "19", "19", "98%", "64%", "2%"]),
    (GateRule.rate(0.95, method="wilson"), 100, 0.99, (0.05, 0.001), ["100", "73", "142", "37%", "99%", "10%"]),
    (GateRule.rate(0.968), 200, 0.97, (0.1, 0.01), ["200", "114", ">10,000", "2%", "99%", "87%"]),
    (GateRule.rate(0.9), 1, 0.97, (0.1, 0.01), ["1", "36", "100", "0%", "10%", "1%"]),
]


@pytest.mark.parametrize("gate, runs, assume, flakes, cells", OBSERVED_030)
def test_the_cells_of_030s_plan(gate, runs, assume, flakes, cells):
    plan = run_budget.plan_case(gate, runs, assume, flakes)
    assert plan_table.plan_cells(plan) == cells


# 0.3.0's --prob-plan with latency gates (bench_lat.py in the module's report), as observed.
OBSERVED_030_LATENCY = [
    # gate, runs, latency quantile, cells
    (None, 40, 0.95, ["40", "72", "\u2014", "\u2014", "99%", "33%"]),
    (GateRule.rate(0.9), 40, 0.95, ["40", "72", "100*", "30%*", "99%", "33%"]),
    (GateRule.rate(0.9), 100, 0.5, ["100", "36", "100*", "82%*", "99%", "63%"]),
    (None, 400, 0.99, ["400", "368", "\u2014", "\u2014", "99%", "98%"]),
    (None, 10, None, ["10", "\u2014", "\u2014", "\u2014", "65%", "10%"]),
]


@pytest.mark.parametrize("gate, runs, quantile, cells", OBSERVED_030_LATENCY)
def test_the_cells_of_030s_plan_with_latency_gates(gate, runs, quantile, cells):
    assert plan_table.plan_cells(run_budget.plan_case(gate, runs, latency_quantile=quantile)) == cells


@pytest.mark.parametrize("quantile", [0.5, 0.9, 0.95, 0.99])
@pytest.mark.parametrize("confidence", [0.9, 0.95, 0.99])
def test_latency_min_runs_is_the_first_quantile_interval_with_an_upper_end(quantile, confidence):
    # The upper order statistic X_(u) covers the quantile with P(B <= u - 1) >= 1 - alpha/2, B ~ Binomial(n, q):
    # some u <= n exists iff P(B <= n - 1) = 1 - q^n >= 1 - alpha/2 (scipy's binomial).
    half = (1 - confidence) / 2
    expected = next(n for n in range(1, 5000) if scipy_stats.binom.sf(n - 1, n, quantile) <= half)
    assert run_budget.latency_min_runs(quantile, confidence) == expected


def test_030_header_and_cost_column():
    assert plan_table.plan_header(priced=True) == [
        "case",
        "runs",
        "min runs",
        "runs for 80%",
        "chance now",
        "catch 10%",
        "catch 1%",
        "cost",
    ]
    assert plan_table.plan_header((0.05, 0.001), gated=False) == ["case", "runs", "catch 5%", "catch 0.1%"]
    per_run = run_budget.cost_per_run(0.08, 40)
    plan = run_budget.plan_case(GateRule.rate(0.9), 40, per_run=per_run)
    assert plan_table.plan_cells(plan, priced=True)[-1] == "$0.0800"
    assert plan_table.plan_cells(run_budget.plan_case(None, 40), gated=False, priced=True) == ["40", "99%", "33%", ""]
    assert run_budget.cost_per_run(1.0, 0) is None
    assert run_budget.projected_cost(None, 10) is None


def test_formatting():
    fc = plan_table.format_chance
    assert [fc(0.0), fc(1e-12), fc(0.005), fc(0.015), fc(0.3), fc(0.994), fc(0.9951), fc(1.0)] == [
        "0%",
        "1%",
        "1%",
        "2%",
        "30%",
        "99%",
        "99%",
        "99%",
    ]
    assert [stats.format_rate(r) for r in (0.1, 0.01, 0.001, 0.975, 0.8)] == ["10%", "1%", "0.1%", "97.5%", "80%"]
    assert plan_table.format_runs(10_000) == "10,000"
    assert plan_table.format_cost(0.2) == "$0.2000" and plan_table.format_cost(None) == ""


def test_parsing_rates():
    assert compare_config.parse_plan_rates("0.1, 0.01,0.1") == (0.1, 0.01)
    assert compare_config.parse_plan_rate("0.97") == 0.97
    for bad, hint in (("95", "0.95"), ("5%", "0.05"), (97, "0.97")):
        with pytest.raises(ValueError, match=hint):
            compare_config.parse_plan_rate(bad)
    for bad in ("0", "1", "x", "nan", True, "-0.1"):
        with pytest.raises(ValueError):
            compare_config.parse_plan_rate(bad)
    with pytest.raises(ValueError, match="comma-separated"):
        compare_config.parse_plan_rates("0.1,")
    with pytest.raises(TypeError):
        compare_config.parse_plan_rates(0.1)


def test_part1_validation():
    with pytest.raises(ValueError, match="rule"):
        GateRule("percent")
    with pytest.raises(ValueError, match="min_passes"):
        GateRule.count(0)
    with pytest.raises(ValueError, match="min_rate"):
        GateRule.rate(1.5)
    with pytest.raises(ValueError, match="method"):
        GateRule.rate(0.9, method="normal")
    with pytest.raises(ValueError, match="confidence"):
        GateRule.rate(0.9, confidence=95)
    with pytest.raises(TypeError):
        run_budget.pass_chance("gate", 10, 0.9)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="rate"):
        run_budget.pass_chance(GateRule.rate(0.9), 10, 1.2)
    with pytest.raises(ValueError, match="passes"):
        GateRule.rate(0.9).passes(11, 10)
    with pytest.raises(TypeError):
        run_budget.catch_chance(0.1, 2.5)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="flake must be positive"):
        run_budget.runs_to_catch(0.0)
    with pytest.raises(ValueError, match="target"):
        run_budget.runs_for_chance(GateRule.rate(0.9), 0.97, target=1.0)
    with pytest.raises(ValueError, match="assume"):
        run_budget.plan_case(GateRule.rate(0.9), 40, assume=1.0)


# -- Part 2: variance components --------------------------------------------------------


def simulate_counts(rng, rates, runs):
    """Per-input (passes, runs) with the given true rates and runs per input."""
    return [
        (int(x), int(k)) for x, k in zip(rng.binomial(runs, rates), np.broadcast_to(runs, rates.shape), strict=False)
    ]


def test_equal_runs_components_are_the_one_way_anova_estimates():
    rng = np.random.default_rng(11)
    n, k = 40, 8
    rates = rng.beta(3.0, 1.5, size=n)
    outcomes = (rng.random((n, k)) < rates[:, None]).astype(float)
    counts = [(int(row.sum()), k) for row in outcomes]
    arm = ab_planning.arm_components(counts)
    group_means = outcomes.mean(axis=1)
    msw = ((outcomes - group_means[:, None]) ** 2).sum() / (n * (k - 1))
    msb = k * ((group_means - outcomes.mean()) ** 2).sum() / (n - 1)
    f_stat = scipy_stats.f_oneway(*outcomes).statistic
    assert msb / msw == pytest.approx(f_stat, rel=1e-9)
    assert arm.within == pytest.approx(msw, rel=1e-12)
    assert arm.between_raw == pytest.approx((msb - msw) / k, rel=1e-9, abs=1e-15)
    assert arm.mean == pytest.approx(outcomes.mean(), rel=1e-12)
    assert (arm.inputs, arm.runs) == (n, n * k)


def test_unequal_runs_components_by_direct_computation():
    rng = np.random.default_rng(12)
    rates = rng.beta(2.0, 3.0, size=30)
    runs = rng.integers(2, 15, size=30)
    counts = simulate_counts(rng, rates, runs)
    x = np.array([c[0] for c in counts], dtype=float)
    k = np.array([c[1] for c in counts], dtype=float)
    s = x / k
    noise = np.mean(s * (1 - s) / (k - 1))
    arm = ab_planning.arm_components(counts)
    assert arm.between_raw == pytest.approx(np.var(s, ddof=1) - noise, rel=1e-9)
    assert arm.within == pytest.approx(np.mean(k / (k - 1) * s * (1 - s)), rel=1e-12)


def test_components_are_unbiased_with_unequal_runs():
    # Beta(2, 3): Var(p) = ab / ((a+b)^2 (a+b+1)) = 0.04; E[p (1-p)] = E[p] - E[p^2] = 0.4 - 0.2 = 0.2.
    rng = np.random.default_rng(13)
    between, within = [], []
    for _ in range(600):
        rates = rng.beta(2.0, 3.0, size=30)
        runs = rng.integers(2, 13, size=30)
        arm = ab_planning.arm_components(simulate_counts(rng, rates, runs))
        between.append(arm.between_raw)
        within.append(arm.within)
    for values, truth in ((between, 0.04), (within, 0.2)):
        mean = float(np.mean(values))
        se = float(np.std(values, ddof=1)) / math.sqrt(len(values))
        assert abs(mean - truth) < 4 * se, (mean, truth, se)


def paired_population(rng, n):
    """p_B ~ Beta(2, 2), p_A = (p_B + U) / 2 with U ~ Beta(2, 2) independent: Var(p_B) = 0.05,
    Var(p_A) = 0.025, cov = 0.025, Var(p_A - p_B) = 0.025; E[p_B(1-p_B)] = 0.2, E[p_A(1-p_A)] = 0.225."""
    p_b = rng.beta(2.0, 2.0, size=n)
    p_a = 0.5 * p_b + 0.5 * rng.beta(2.0, 2.0, size=n)
    return p_a, p_b


TRUE_PAIRED = Components(between=0.025, within_a=0.225, within_b=0.2)


def test_paired_components_covariance_and_correlation():
    rng = np.random.default_rng(14)
    p_a, p_b = paired_population(rng, 60)
    a = simulate_counts(rng, p_a, 6)
    b = simulate_counts(rng, p_b, 6)
    est = ab_planning.paired_components(a, b)
    fa = np.array([x / k for x, k in a])
    fb = np.array([x / k for x, k in b])
    assert est.covariance == pytest.approx(np.cov(fa, fb, ddof=1)[0, 1], rel=1e-9)
    assert est.correlation == pytest.approx(scipy_stats.pearsonr(fa, fb).statistic, rel=1e-9)
    assert ab_planning.paired_correlation(a, b) == est.correlation
    noise = np.mean(fa * (1 - fa) / 5) + np.mean(fb * (1 - fb) / 5)
    assert est.components.between == pytest.approx(max(0.0, np.var(fa - fb, ddof=1) - noise), rel=1e-9)
    assert est.components.between == pytest.approx(
        max(0.0, est.a.between_raw + est.b.between_raw - 2 * est.covariance), rel=1e-9
    )
    assert est.rate_correlation == pytest.approx(est.covariance / math.sqrt(est.a.between * est.b.between))
    assert ab_planning.paired_correlation([(1, 2), (1, 2)], [(0, 2), (2, 2)]) is None


def test_paired_components_estimate_the_population():
    rng = np.random.default_rng(15)
    p_a, p_b = paired_population(rng, 5000)
    est = ab_planning.paired_components(simulate_counts(rng, p_a, 5), simulate_counts(rng, p_b, 5))
    assert est.components.between == pytest.approx(TRUE_PAIRED.between, abs=0.006)
    assert est.components.within_a == pytest.approx(TRUE_PAIRED.within_a, abs=0.006)
    assert est.components.within_b == pytest.approx(TRUE_PAIRED.within_b, abs=0.006)
    assert est.covariance == pytest.approx(0.025, abs=0.004)


def test_variance_of_the_mean_difference_matches_simulation():
    rng = np.random.default_rng(16)
    sessions, n, k = 20_000, 10, 4
    p_a, p_b = paired_population(rng, sessions * n)
    d = (rng.binomial(k, p_a) - rng.binomial(k, p_b)).reshape(sessions, n) / k
    simulated = float(np.var(d.mean(axis=1), ddof=1))
    formula = ab_planning.variance_of_difference(TRUE_PAIRED, n, k)
    assert formula == pytest.approx((0.025 + (0.225 + 0.2) / 4) / 10)
    assert simulated == pytest.approx(formula, rel=0.04)
    # One arm: Var(mean) = (sigma_b^2 + sigma_w^2 / k) / n.
    arm = ab_planning.ArmEstimate(n, n * k, 0.5, 0.05, 0.2, 0.05)
    means_b = rng.binomial(k, rng.beta(2.0, 2.0, size=(sessions, n))).mean(axis=1) / k
    assert float(np.var(means_b, ddof=1)) == pytest.approx(ab_planning.variance_of_mean(arm, n, k), rel=0.04)


def test_assumed_components():
    c = ab_planning.assumed_components(0.04, 0.09, 0.2, 0.1, 0.5)
    assert c.between == pytest.approx(0.04 + 0.09 - 2 * 0.5 * 0.2 * 0.3)
    assert ab_planning.assumed_components(0.04, 0.04, 0.2, 0.2, 1.0).between == 0.0


# -- Part 2: sample size and power --------------------------------------------------------

PLANS = [
    (ab_planning.assumed_components(0.0375, 0.0375, 0.15, 0.15, 0.6), 0.05, 1),
    (ab_planning.assumed_components(0.0375, 0.0375, 0.15, 0.15, 0.6), 0.10, 5),
    (ab_planning.assumed_components(0.1125, 0.1125, 0.075, 0.075, 0.6), 0.05, 20),
    (TRUE_PAIRED, 0.1, 3),
    (Components(0.0, 0.09, 0.09), 0.2, 1),
]


@pytest.mark.parametrize("components, delta, runs", PLANS)
@pytest.mark.parametrize("alpha, power", [(0.05, 0.8), (0.01, 0.9), (0.1, 0.5)])
def test_inputs_needed_and_power_match_statsmodels(components, delta, runs, alpha, power):
    sd = math.sqrt(ab_planning.per_input_variance(components, runs))
    effect = delta / sd
    n = ab_planning.inputs_needed(components, delta, runs, alpha, power)
    # One-sample (paired) z-test: NormalIndPower with ratio=0, both tails, solved numerically.
    nobs = smpower.NormalIndPower().solve_power(effect_size=effect, alpha=alpha, power=power, ratio=0)
    assert n == max(1, math.ceil(nobs - 1e-9))
    assert n == max(
        1, math.ceil(smpower.zt_ind_solve_power(effect_size=effect, alpha=alpha, power=power, ratio=0) - 1e-9)
    )
    for inputs in (n - 1, n, 3 * n):
        if inputs >= 1:
            expected = smpower.NormalIndPower().power(effect, inputs, alpha, ratio=0)
            assert ab_planning.ab_power(components, delta, inputs, runs, alpha) == pytest.approx(expected, rel=1e-9)
    # The t-test needs a little more: z vs t, about z_{1-alpha/2}^2 / 2 inputs more (Guenther 1981).
    t_nobs = smpower.tt_solve_power(effect_size=effect, alpha=alpha, power=power)
    extra = scipy_stats.norm.ppf(1 - alpha / 2) ** 2 / 2
    assert n <= math.ceil(t_nobs) <= n + math.ceil(extra) + 1
    # The minimum detectable difference with n inputs is at most delta (and above it with n - 1): statsmodels'
    # solver for the effect size, with both tails; Miller's closed form leaves the far tail out, a little larger.
    mde = ab_planning.detectable_difference(components, n, runs, alpha, power)
    assert mde <= delta
    if n > 1:
        assert ab_planning.detectable_difference(components, n - 1, runs, alpha, power) > delta
    solved = smpower.NormalIndPower().solve_power(nobs1=n, alpha=alpha, power=power, ratio=0)
    assert mde == pytest.approx(solved * sd, rel=1e-5)  # up to the solver's tolerance
    closed = (scipy_stats.norm.ppf(1 - alpha / 2) + scipy_stats.norm.ppf(power)) * sd / math.sqrt(n)
    assert mde <= closed * (1 + 1e-12)
    assert mde == pytest.approx(closed, rel=2e-3)


def test_inputs_needed_closed_form():
    c = PLANS[0][0]
    z = scipy_stats.norm.ppf(0.975) + scipy_stats.norm.ppf(0.8)
    var1 = 0.03 + 0.3
    assert ab_planning.per_input_variance(c, 1) == pytest.approx(var1)
    assert ab_planning.inputs_needed(c, 0.05, 1) == math.ceil(z * z * var1 / 0.05**2)
    assert ab_planning.inputs_floor(c, 0.05) == math.ceil(z * z * 0.03 / 0.05**2)
    assert ab_planning.inputs_needed(Components(0.0, 0.0, 0.0), 0.05, 1) == 1


def narrowing_oracle(c: Components, k: int) -> float:
    return 1 - math.sqrt(
        (c.between + (c.within_a + c.within_b) / (2 * k)) / (c.between + (c.within_a + c.within_b) / k)
    )


@pytest.mark.parametrize("components", [PLANS[0][0], PLANS[2][0], TRUE_PAIRED, Components(0.001, 0.2, 0.25)])
@pytest.mark.parametrize("threshold", [0.05, 0.1, 0.2])
def test_runs_stop_helping_is_where_doubling_narrows_less_than_the_threshold(components, threshold):
    k = ab_planning.runs_stop_helping(components, threshold)
    assert k is not None
    values = [narrowing_oracle(components, j) for j in range(1, k + 50)]
    assert all(a > b for a, b in zip(values, values[1:], strict=False)), "doubling helps less and less"
    assert values[k - 1] < threshold
    assert k == 1 or values[k - 2] >= threshold
    assert ab_planning.narrowing(components, k) == pytest.approx(values[k - 1], rel=1e-12)


def test_runs_stop_helping_edges():
    assert ab_planning.runs_stop_helping(Components(0.0, 0.2, 0.2)) is None  # no floor: every doubling narrows 29%
    assert ab_planning.narrowing(Components(0.0, 0.2, 0.2), 7) == pytest.approx(1 - 1 / math.sqrt(2))
    assert ab_planning.runs_stop_helping(Components(0.05, 0.0, 0.0)) == 1
    assert ab_planning.runs_stop_helping(Components(0.0, 0.2, 0.2), threshold=0.3) == 1


def test_tradeoff_rows_and_statement():
    c = PLANS[0][0]
    rows = ab_planning.tradeoff(c, 0.05)
    assert [r.runs for r in rows] == [1, 2, 5, 10, 20, 50, 100]
    assert [r.inputs for r in rows] == [ab_planning.inputs_needed(c, 0.05, r.runs) for r in rows]
    assert all(r.total_runs == 2 * r.inputs * r.runs for r in rows)
    assert [r.inputs for r in rows] == sorted((r.inputs for r in rows), reverse=True)
    assert rows[-1].inputs >= ab_planning.inputs_floor(c, 0.05)
    text = ab_planning.tradeoff_statement(c, 0.05)
    stop = ab_planning.runs_stop_helping(c)
    assert f"1 run per input needs {rows[0].inputs:,} inputs" in text
    assert f"From {stop} runs per input on" in text
    assert f"at least {ab_planning.inputs_floor(c, 0.05):,} inputs" in text
    assert "keep paying" in ab_planning.tradeoff_statement(Components(0.0, 0.2, 0.2), 0.1)


def test_part2_validation():
    good = [(3, 5), (4, 5), (1, 5)]
    with pytest.raises(ValueError, match="runs"):
        ab_planning.arm_components([(1, 1), (0, 1)])  # one run per input can't split the components
    with pytest.raises(ValueError, match="passes"):
        ab_planning.arm_components([(6, 5), (1, 5)])
    with pytest.raises(ValueError, match="at least 2 inputs"):
        ab_planning.arm_components([(1, 5)])
    with pytest.raises(TypeError):
        ab_planning.arm_components([(True, 5), (1, 5)])
    with pytest.raises(TypeError):
        ab_planning.arm_components("3/5")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="same inputs"):
        ab_planning.paired_components(good, good[:2])
    c = PLANS[0][0]
    for delta in (0.0, -0.1, 1.5):
        with pytest.raises(ValueError, match="delta"):
            ab_planning.inputs_needed(c, delta, 1)
    with pytest.raises(ValueError, match="alpha"):
        ab_planning.inputs_needed(c, 0.05, 1, alpha=1.0)
    with pytest.raises(ValueError, match="power must exceed"):
        ab_planning.inputs_needed(c, 0.05, 1, alpha=0.2, power=0.05)
    with pytest.raises(ValueError, match="runs"):
        ab_planning.inputs_needed(c, 0.05, 0)
    with pytest.raises(ValueError, match="correlation"):
        ab_planning.assumed_components(0.1, 0.1, 0.1, 0.1, 1.5)
    with pytest.raises(ValueError, match="between_a"):
        ab_planning.assumed_components(-0.1, 0.1, 0.1, 0.1, 0.5)
    with pytest.raises(TypeError):
        ab_planning.variance_of_difference((0.1, 0.1, 0.1), 10, 1)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="threshold"):
        ab_planning.runs_stop_helping(c, 0.0)
    # A PairedEstimate plans as its components.
    est = ab_planning.paired_components(good, [(2, 5), (4, 5), (0, 5)])
    assert ab_planning.inputs_needed(est, 0.2, 5) == ab_planning.inputs_needed(est.components, 0.2, 5)


def test_random_gates_agree_with_the_oracle():
    rng = random.Random(5)
    for _ in range(25):
        gate = GateRule.rate(
            rng.choice([0.5, 0.6, 0.75, 0.8]),
            confidence=rng.choice([0.9, 0.95]),
            method=rng.choice(["exact", "wilson", "bayes"]),
        )
        n = rng.randint(1, 120)
        rate = rng.uniform(0.5, 0.99)
        assert run_budget.pass_chance(gate, n, rate) == pytest.approx(oracle_chance(gate, n, rate), rel=1e-9, abs=1e-14)


def test_a_criterions_fewest_runs_join_min_runs() -> None:
    """A score gate's fewest runs (plan_case's others) raise the case's min runs; 0 (never) makes it none."""
    assert run_budget.plan_case(GateRule.rate(0.8), 30, others=[40]).min_runs == 40
    assert run_budget.plan_case(GateRule.rate(0.8), 30, others=[5]).min_runs == run_budget.min_runs(GateRule.rate(0.8))
    assert run_budget.plan_case(None, 30, others=[12]).min_runs == 12
    assert run_budget.plan_case(None, 30, others=[0]).min_runs is None
    assert run_budget.plan_case(None, 30, others=[12]).others
    assert plan_table.plan_cells(run_budget.plan_case(None, 30, others=[0]))[1] == ">100,000"
    marked = plan_table.plan_cells(run_budget.plan_case(GateRule.rate(0.8), 30, others=[40]))
    assert marked[2].endswith("**") and marked[3].endswith("**")
