"""maths.scores against numpy, scipy and an independent grid implementation of the betting interval (test-only oracles)."""

from __future__ import annotations

import importlib.util
import math
import random
import statistics
import subprocess
import sys
from pathlib import Path

import pytest

from pytest_probability.maths import inputs, scores, stats
from pytest_probability.vocabulary import FAILED, PASSED

np = pytest.importorskip("numpy")
scipy_stats = pytest.importorskip("scipy.stats")

ROOT = Path(__file__).resolve().parents[2]


def samples(seed: int, count: int = 40) -> list[list[float]]:
    """Scores of every shape the intervals meet: Beta, two-point, skewed, near the ends, ties."""
    rng = random.Random(seed)
    out = []
    for i in range(count):
        n = rng.choice([1, 2, 3, 5, 8, 13, 20, 50, 120])
        kind = i % 5
        if kind == 0:
            a, b = rng.uniform(0.2, 5), rng.uniform(0.2, 5)
            out.append([rng.betavariate(a, b) for _ in range(n)])
        elif kind == 1:
            p = rng.choice([0.02, 0.1, 0.5, 0.9, 0.98])
            out.append([float(rng.random() < p) for _ in range(n)])
        elif kind == 2:
            out.append([rng.random() ** 9 for _ in range(n)])
        elif kind == 3:
            out.append([1.0 - rng.random() ** 9 for _ in range(n)])
        else:
            out.append([rng.choice([0.0, 0.25, 0.5, 1.0]) for _ in range(n)])
    return out


# -- the betting interval against an independent grid implementation -------------------------------


def grid_excluded(
    y: list[float], level: float, grid: np.ndarray, c: float = 0.75, time_uniform: bool = False
) -> np.ndarray:
    """Which candidate means the hedged capital process excludes at some t <= n, computed over a whole grid
    at once with numpy, from the definitions (WSR 2024, Theorem 3; confseq's betting_mart / lambda_predmix_eb)."""
    x = np.asarray(y, dtype=float)
    n = len(x)
    alpha = 1.0 - level
    t = np.arange(1, n + 1)
    mu = (0.5 + np.cumsum(x)) / (t + 1)
    sigma2 = (0.25 + np.cumsum((x - mu) ** 2)) / (t + 1)
    previous = np.append(0.25, sigma2[:-1])
    scale = t * np.log1p(t) if time_uniform else n
    lam = np.sqrt(2.0 * np.log(2.0 / alpha) / (scale * previous))
    m = grid[:, None]
    with np.errstate(divide="ignore"):
        plus = np.minimum(lam[None, :], c / m)
        minus = np.minimum(lam[None, :], c / (1.0 - m))
    k_plus = np.cumprod(1.0 + plus * (x[None, :] - m), axis=1)
    k_minus = np.cumprod(1.0 - minus * (x[None, :] - m), axis=1)
    capital = np.maximum(0.5 * k_plus, 0.5 * k_minus)
    return (capital >= 1.0 / alpha).any(axis=1)


@pytest.mark.parametrize("level", [0.8, 0.95, 0.99])
@pytest.mark.parametrize("method", ["betting", "betting-cs"])
def test_betting_interval_is_exactly_the_set_the_capital_process_does_not_exclude(level, method):
    grid = np.linspace(0.0, 1.0, 4001)
    for y in samples(1, 30):
        ci = scores.score_interval(y, level, method=method)
        mean = statistics.fmean(y)
        excluded = grid_excluded(
            y, level, grid, c=0.75 if method == "betting" else 0.5, time_uniform=method == "betting-cs"
        )
        inside = (grid > ci.low + 1e-9) & (grid < ci.high - 1e-9)
        outside = (grid < ci.low - 1e-9) | (grid > ci.high + 1e-9)
        assert not excluded[outside].size or excluded[outside].all(), (y, ci)
        if ci.low < mean < ci.high or len(set(y)) == 1:  # not widened to the mean (the guard never met here)
            assert not excluded[inside].any(), (y, ci)
        assert ci.method == method and ci.level == level


def test_betting_interval_matches_the_reference_implementations_numbers():
    # confseq (the authors' code) betting.betting_ci(x, alpha=0.05, breaks=20000, m_trunc=True, trunc_scale=3/4,
    # running_intersection=True), which widens each bound by one grid step of 1/20000.
    y = [0.18, 0.41, 0.05, 0.33, 0.27, 0.12, 0.6, 0.22, 0.3, 0.09, 0.44, 0.15]
    ci = scores.score_interval(y, 0.95)
    excluded = grid_excluded(y, 0.95, np.array([ci.low - 1e-6, ci.low + 1e-6, ci.high - 1e-6, ci.high + 1e-6]))
    assert excluded.tolist() == [True, False, False, True]
    assert 0.0 < ci.low < statistics.fmean(y) < ci.high < 1.0


def test_one_score_gives_the_whole_range():
    # n = 1: the highest capital is 1 + lam_1 = 1 + sqrt(8 log 40) = 6.43 < 40 = 1/(theta alpha): nothing excluded.
    for value in (0.0, 0.3, 1.0):
        assert scores.score_interval([value], 0.95).bounds == (0.0, 1.0)
    assert scores.score_interval([3.0], 0.95, low=1, high=5).bounds == (1.0, 5.0)
    assert scores.score_interval([0.7], 0.95, method="t").bounds == (0.0, 1.0)


def test_bets_are_the_predictable_plug_in_ones():
    y = [0.2, 0.9, 0.4]
    alpha = 0.05
    numerator = 2 * math.log(2 / alpha)
    # sigma2_0 = 1/4; mu_1 = (1/2 + 0.2)/2; sigma2_1 = (1/4 + (0.2 - mu_1)**2)/2; ...
    mu1 = 0.7 / 2
    s1 = (0.25 + (0.2 - mu1) ** 2) / 2
    mu2 = (0.5 + 1.1) / 3
    s2 = (0.25 + (0.2 - mu1) ** 2 + (0.9 - mu2) ** 2) / 3
    expected = [math.sqrt(numerator / (3 * v)) for v in (0.25, s1, s2)]
    assert scores.betting_bets(y, 0.95) == pytest.approx(expected, rel=1e-12)
    uniform = [math.sqrt(numerator / (t * math.log1p(t) * v)) for t, v in zip((1, 2, 3), (0.25, s1, s2), strict=False)]
    assert scores.betting_bets(y, 0.95, time_uniform=True) == pytest.approx(uniform, rel=1e-12)
    assert scores.betting_bets(y, 0.95, horizon=10) == pytest.approx(
        [e * math.sqrt(3 / 10) for e in expected], rel=1e-12
    )


def test_peak_capital_is_monotone_and_survives_long_sequences():
    rng = random.Random(5)
    y = [rng.betavariate(2, 2) for _ in range(300)]
    bets = scores.betting_bets(y, 0.95)
    values = [scores.log_peak_capital(bets, y, m / 100, 0.75) for m in range(101)]
    assert all(a >= b for a, b in zip(values, values[1:], strict=False))
    # 5,000 scores far from m: the capital passes 1e308 and is still finite in log (chunked products)
    long = [1.0] * 5000
    bets = scores.betting_bets(long, 0.95)
    expected = math.fsum(math.log1p(min(bet, 0.75 / 0.01) * 0.99) for bet in bets)
    assert scores.log_peak_capital(bets, long, 0.01, 0.75) == pytest.approx(expected, rel=1e-10)
    ci = scores.score_interval(long, 0.95)
    assert 0.99 < ci.low < 1.0 and ci.high == 1.0


# -- the t interval ---------------------------------------------------------------------------------------


def test_t_interval_is_scipys_clipped():
    for y in samples(2, 30):
        if len(y) < 2 or len(set(y)) == 1:
            continue
        low, high = scipy_stats.t.interval(0.9, len(y) - 1, loc=np.mean(y), scale=scipy_stats.sem(y))
        ci = scores.score_interval(y, 0.9, method="t")
        assert ci.low == pytest.approx(max(0.0, low), abs=1e-12)
        assert ci.high == pytest.approx(min(1.0, high), abs=1e-12)


# -- exact cases, edges and the range ------------------------------------------------------------------------


@pytest.mark.parametrize("value", [0.0, 0.37, 1.0])
@pytest.mark.parametrize("n", [2, 7, 60])
def test_all_equal_scores(value, n):
    y = [value] * n
    summary = scores.summarize(y, 0.95)
    assert summary.n == n and summary.mean == value and summary.sd == 0.0
    assert summary.ci is not None and summary.ci.low <= value <= summary.ci.high
    assert scores.score_interval(y, 0.95, method="t").bounds == (value, value)
    if value == 0.0:
        assert summary.ci.low == 0.0 and summary.ci.high > 0.0
    if value == 1.0:
        assert summary.ci.high == 1.0 and summary.ci.low < 1.0


def test_summary_of_none_and_of_one():
    assert scores.summarize([], 0.95) == scores.ScoreSummary(0, None, None, None)
    one = scores.summarize([0.4], 0.95)
    assert (one.n, one.mean, one.sd) == (1, 0.4, None)
    assert scores.mean_and_sd([0.2, 0.4, 0.9]) == (
        3,
        statistics.fmean([0.2, 0.4, 0.9]),
        statistics.stdev([0.2, 0.4, 0.9]),
    )
    assert one.to_dict() == {
        "n": 1,
        "mean": 0.4,
        "sd": None,
        "ci": {"low": 0.0, "high": 1.0, "method": "betting", "level": 0.95},
    }


def test_sd_is_the_sample_standard_deviation():
    for y in samples(3, 20):
        if len(y) > 1:
            assert scores.mean_and_sd(y)[2] == pytest.approx(float(np.std(y, ddof=1)), rel=1e-12, abs=1e-15)


def test_an_empty_list_has_no_interval():
    with pytest.raises(ValueError, match="at least one score"):
        scores.score_interval([], 0.95)


@pytest.mark.parametrize(
    "bad, error",
    [
        ([0.5, math.nan], ValueError),
        ([math.inf], ValueError),
        ([0.2, "0.3"], TypeError),
        ([True], TypeError),
        ([1.5], ValueError),
        ([-0.01], ValueError),
        ("0.5", TypeError),
        ([None], TypeError),
    ],
)
def test_bad_scores_are_refused_with_the_value(bad, error):
    with pytest.raises(error):
        scores.score_interval(bad, 0.95)
    with pytest.raises(error):
        scores.ScoreSequence(0.5, 0.95).extend(bad)


def test_bad_ranges_levels_methods_and_horizons():
    with pytest.raises(ValueError):
        scores.score_interval([0.5], 0.95, low=1, high=1)
    with pytest.raises(ValueError):
        scores.score_interval([0.5], 0.95, low=0, high=math.inf)
    with pytest.raises(ValueError):
        scores.score_interval([0.5], 95)
    with pytest.raises(TypeError):
        scores.score_interval([0.5], "0.95")
    with pytest.raises(ValueError):
        scores.score_interval([0.5], 0.95, method="bca")
    with pytest.raises(ValueError):
        scores.score_interval([0.5], 0.95, horizon=0)
    assert scores.parse_range("1, 5") == (1.0, 5.0)
    assert scores.parse_range((0, 10)) == (0.0, 10.0)
    for text in ("1", "a,b", "5,1", "1,2,3", ","):
        with pytest.raises(ValueError):
            scores.parse_range(text)
    assert scores.parse_method(" Betting ") == "betting"


@pytest.mark.parametrize("method", ["betting", "betting-cs", "t"])
def test_a_range_of_1_to_5_is_the_unit_range_rescaled(method):
    for y in samples(4, 25):
        unit = scores.score_interval(y, 0.95, method=method)
        wide = scores.score_interval([1 + 4 * v for v in y], 0.95, low=1, high=5, method=method)
        assert wide.low == pytest.approx(1 + 4 * unit.low, abs=1e-9)
        assert wide.high == pytest.approx(1 + 4 * unit.high, abs=1e-9)
        assert 1.0 <= wide.low <= wide.high <= 5.0


def test_scores_at_the_range_ends_and_reflection():
    for y in samples(6, 30):
        ci = scores.score_interval(y, 0.95)
        mirrored = scores.score_interval([1.0 - v for v in y], 0.95)
        assert mirrored.low == pytest.approx(1.0 - ci.high, abs=1e-9)
        assert mirrored.high == pytest.approx(1.0 - ci.low, abs=1e-9)
    assert scores.score_interval([0.0, 1.0] * 10, 0.95, low=0, high=1).low > 0.0


# -- properties: determinism, the mean inside, nesting in the level --------------------------------------------


def test_the_same_runs_give_the_same_interval_bit_for_bit_in_any_process():
    y = samples(7, 1)[0] + [0.25, 0.5]
    first = scores.score_interval(y, 0.95)
    assert scores.score_interval(tuple(y), 0.95) == first
    assert scores.score_interval(iter(y), 0.95) == first
    code = (
        f"import sys; sys.path.insert(0, {str(ROOT / 'src')!r}); from pytest_probability.maths import scores; "
        f"print(repr(tuple(scores.score_interval({y!r}, 0.95).bounds)))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    assert out == repr(tuple(first.bounds))


@pytest.mark.parametrize("method", ["betting", "betting-cs", "t"])
def test_the_interval_contains_the_mean(method):
    for seed in range(3):
        for y in samples(10 + seed, 40):
            ci = scores.score_interval(y, 0.95, method=method)
            assert ci.low <= statistics.fmean(y) <= ci.high


@pytest.mark.parametrize("method", ["betting", "betting-cs", "t"])
def test_a_higher_level_gives_a_wider_interval(method):
    levels = (0.5, 0.8, 0.9, 0.95, 0.99, 0.999)
    for y in samples(20, 60):
        cis = [scores.score_interval(y, level, method=method) for level in levels]
        for narrow, wide in zip(cis, cis[1:], strict=False):
            assert wide.low <= narrow.low + 1e-12 and narrow.high <= wide.high + 1e-12, (y, narrow, wide)


# -- coverage: the claims the benchmark measures, in small -----------------------------------------------------------


@pytest.mark.slow
def test_betting_covers_where_the_t_interval_does_not():
    # Two-point scores of mean 0.1 at N = 20: 12% of samples are all 0, where t gives [0, 0].
    rng = np.random.default_rng(11)
    mean, n, reps = 0.1, 20, 2000
    data = (rng.random((reps, n)) < mean).astype(float)
    betting = t = 0
    for x in data:
        y = x.tolist()
        ci = scores.score_interval(y, 0.95)
        betting += ci.low <= mean <= ci.high
        ti = scores.score_interval(y, 0.95, method="t")
        t += ti.low <= mean <= ti.high
    assert betting / reps >= 0.95
    assert t / reps < 0.90


# -- sequential gates ------------------------------------------------------------------------------------------------------


def test_the_sequence_is_the_hedged_capital_at_the_bar():
    rng = random.Random(8)
    y = [rng.betavariate(3, 2) for _ in range(30)]
    bar = 0.55
    bets = scores.betting_bets(y, 0.95, horizon=30)
    sequence = scores.ScoreSequence(bar, 0.95, horizon=30)
    above = below = 0.0
    for bet, value in zip(bets, y, strict=False):
        above += math.log1p(min(bet, 0.75 / bar) * (value - bar))
        below += math.log1p(-min(bet, 0.75 / (1 - bar)) * (value - bar))
        verdict = sequence.add(value)
        if verdict is not None:
            break
        assert sequence.log_capitals == pytest.approx((above, below), rel=1e-12, abs=1e-12)
    threshold = math.log(40)
    assert (verdict == PASSED) == (above >= threshold)


def test_with_a_horizon_the_last_verdict_is_the_fixed_n_intervals():
    rng = random.Random(9)
    agree = decided = 0
    for i in range(150):
        n = rng.choice([10, 30, 80])
        mean = rng.choice([0.3, 0.6, 0.8, 0.9])
        y = [rng.betavariate(mean * 5, (1 - mean) * 5) if i % 2 else float(rng.random() < mean) for _ in range(n)]
        bar = rng.choice([0.5, 0.75, 0.85])
        ci = scores.score_interval(y, 0.95)
        fixed = stats.verdict(ci.low, ci.high, bar)
        sequential = scores.sequential_score_verdict(y, bar, 0.95, horizon=n) or "undecided"
        decided += sequential != "undecided"
        agree += sequential == fixed
    assert agree == 150 and decided > 20


def test_verdicts_are_sticky_and_bars_at_the_range_ends():
    sequence = scores.ScoreSequence(0.5, 0.95)
    assert sequence.extend([1.0] * 20) == PASSED
    assert sequence.add(0.0) == PASSED and sequence.runs == 21
    assert scores.sequential_score_verdict([0.0] * 20, 0.5, 0.95) == FAILED
    assert scores.sequential_score_verdict([0.3], 0.0, 0.95) == PASSED  # low >= 0 always
    assert scores.sequential_score_verdict([1.0] * 500, 1.0, 0.95) is None  # never above the top
    assert scores.sequential_score_verdict([0.9] * 200, 1.0, 0.95) == FAILED
    assert scores.sequential_score_verdict([], 0.5, 0.95) is None
    assert scores.sequential_score_verdict([5.0] * 30, 4.0, 0.95, low=1, high=5) == PASSED


@pytest.mark.slow
@pytest.mark.parametrize("horizon", [None, 100])
def test_sequential_type_i_error_is_at_most_alpha_over_two_a_side(horizon):
    # The bar at the true mean, 100 runs, looked at after every run: each wrong side <= 2.5% (Ville).
    rng = np.random.default_rng(12)
    reps, n, bar = 2000, 100, 0.5
    passed = failed = 0
    for x in (rng.random((reps, n)) < bar).astype(float):
        verdict = scores.sequential_score_verdict(x.tolist(), bar, 0.95, horizon=horizon)
        passed += verdict == PASSED
        failed += verdict == FAILED
    # 2.5% plus three Monte Carlo standard errors
    limit = 0.025 + 3 * math.sqrt(0.025 * 0.975 / reps)
    assert passed / reps <= limit and failed / reps <= limit


# -- one case's difference and Welch's test ------------------------------------------------------------------------------


def test_welch_matches_scipy():
    rng = random.Random(13)
    for _ in range(40):
        a = [rng.betavariate(2, 3) for _ in range(rng.randint(2, 40))]
        b = [rng.betavariate(3, 3) for _ in range(rng.randint(2, 40))]
        less, greater = scores.welch_test(a, b)
        assert less == pytest.approx(scipy_stats.ttest_ind(a, b, equal_var=False, alternative="less").pvalue, rel=1e-9)
        assert greater == pytest.approx(
            scipy_stats.ttest_ind(a, b, equal_var=False, alternative="greater").pvalue, rel=1e-9
        )
    assert scores.welch_test([0.5], [0.2, 0.3]) is None
    assert scores.welch_test([1.0, 1.0], [0.0, 0.0]) == (1.0, 0.0)
    assert scores.welch_test([0.4, 0.4], [0.4, 0.4]) == (1.0, 1.0)


def test_difference_interval_is_newcombes_hybrid_of_betting_intervals():
    arm = [0.9, 0.8, 1.0, 0.7, 0.95, 0.85, 0.9, 1.0]
    base = [0.6, 0.7, 0.5, 0.8, 0.65, 0.7]
    ci = scores.difference_interval(arm, base, 0.025)
    a, b = scores.score_interval(arm, 0.95), scores.score_interval(base, 0.95)
    m1, m2 = statistics.fmean(arm), statistics.fmean(base)
    assert ci.low == pytest.approx(m1 - m2 - math.hypot(m1 - a.low, b.high - m2), rel=1e-12)
    assert ci.high == pytest.approx(m1 - m2 + math.hypot(a.high - m1, m2 - b.low), rel=1e-12)
    assert ci.low <= m1 - m2 <= ci.high and ci.level == pytest.approx(0.95)
    wider = scores.difference_interval(arm, base, 0.005)
    assert wider.low <= ci.low and ci.high <= wider.high


# -- the paired bootstrap over inputs ---------------------------------------------------------------------------------------


def paired_inputs(
    seed: int, count: int, effect: float = 0.03, runs: tuple[int, int] = (1, 6)
) -> list[tuple[list[float], list[float]]]:
    rng = random.Random(seed)
    pairs = []
    for _ in range(count):
        level = rng.betavariate(4, 3)
        arm = [min(1.0, max(0.0, rng.gauss(level + effect, 0.1))) for _ in range(rng.randint(*runs))]
        base = [min(1.0, max(0.0, rng.gauss(level, 0.1))) for _ in range(rng.randint(*runs))]
        pairs.append((arm, base))
    return pairs


def test_paired_bootstrap_is_the_cluster_bootstrap_of_the_differences():
    pairs = paired_inputs(14, 25)
    result = scores.paired_difference(pairs, 0.9, resamples=2000, seed=3)
    differences = [statistics.fmean(a) - statistics.fmean(b) for a, b in pairs]
    assert result.differences == pytest.approx(differences, rel=1e-12)
    means = inputs.bootstrap_means(differences, 2000, 3)
    assert result.means == tuple(sorted(means))
    assert result.ci is not None
    assert result.ci.low == pytest.approx(float(np.percentile(means, 5, method="linear")), rel=1e-12)
    assert result.ci.high == pytest.approx(float(np.percentile(means, 95, method="linear")), rel=1e-12)
    assert result.difference == pytest.approx(statistics.fmean(differences), rel=1e-12)
    # the same pairs, the same numbers; another seed, other resamples
    assert scores.paired_difference(pairs, 0.9, resamples=2000, seed=3) == result
    assert scores.paired_difference(pairs, 0.9, resamples=2000, seed=4).means != result.means


def test_paired_bootstrap_agrees_with_scipy_bootstrap_and_the_paired_t_test_on_a_large_smooth_sample():
    pairs = paired_inputs(15, 400, effect=0.02, runs=(3, 3))
    result = scores.paired_difference(pairs, 0.95, resamples=20000, seed=1)
    arm = np.array([statistics.fmean(a) for a, _ in pairs])
    base = np.array([statistics.fmean(b) for _, b in pairs])
    # the t cross-check is scipy's paired t interval exactly
    test = scipy_stats.ttest_rel(arm, base)
    low, high = test.confidence_interval(0.95)
    assert result.t_ci is not None and result.ci is not None and result.p is not None
    assert result.t_ci.low == pytest.approx(low, rel=1e-9) and result.t_ci.high == pytest.approx(high, rel=1e-9)
    # scipy's own percentile bootstrap of the mean difference (another generator): the same to Monte Carlo error
    boot = scipy_stats.bootstrap(
        (arm - base,),
        np.mean,
        confidence_level=0.95,
        method="percentile",
        n_resamples=20000,
        random_state=np.random.default_rng(2),
    )
    half = (high - low) / 2
    assert result.ci.low == pytest.approx(boot.confidence_interval.low, abs=0.05 * half)
    assert result.ci.high == pytest.approx(boot.confidence_interval.high, abs=0.05 * half)
    # and, the sample being large and smooth, the t interval and test
    assert result.ci.low == pytest.approx(low, abs=0.05 * half) and result.ci.high == pytest.approx(
        high, abs=0.05 * half
    )
    assert result.p == pytest.approx(test.pvalue, abs=0.02)
    assert result.correlation == pytest.approx(float(np.corrcoef(arm, base)[0, 1]), rel=1e-9)


def test_percentile_p_values_agree_with_the_percentile_bounds():
    rng = random.Random(16)
    for _ in range(200):
        count = rng.choice([2, 3, 10, 99, 500])
        shift = rng.uniform(-1, 1)
        means = sorted(rng.choice([round(rng.gauss(shift, 1), 1), rng.gauss(shift, 1), 0.0]) for _ in range(count))
        p_less, p_greater = scores.percentile_p_values(means)
        for tau in (0.005, 0.025, 0.05, 0.1, 0.3):
            lower = stats.sample_quantile(means, tau)
            upper = stats.sample_quantile(means, 1 - tau)
            if abs(p_greater - tau) > 1e-9:
                assert (lower > 0) == (p_greater < tau), (means, tau, p_greater)
            if abs(p_less - tau) > 1e-9:
                assert (upper < 0) == (p_less < tau), (means, tau, p_less)
    assert scores.percentile_p_values([0.0] * 50) == (1.0, 1.0)
    assert scores.percentile_p_values([0.1, 0.2]) == (1.0, 0.0)


def test_paired_difference_edges():
    assert scores.paired_difference([]).suppressed == "fewer than 10 inputs"
    few = scores.paired_difference(paired_inputs(17, 4))
    assert few.inputs == 4 and few.difference is not None and few.ci is None and few.p is None
    same = scores.paired_difference([([0.5, 0.7], [0.5, 0.7])] * 12)
    assert same.difference == 0.0 and same.p == 1.0 and same.ci is not None and same.ci.bounds == (0.0, 0.0)
    wide = scores.paired_difference([([5.0], [1.0])] * 12, low=1, high=5)
    assert wide.difference == 4.0 and wide.ci is not None and wide.ci.high == 4.0 and wide.p == 0.0
    assert wide.interval(0.025) == (4.0, 4.0)
    with pytest.raises(ValueError):
        scores.paired_difference([([], [0.5])] * 12)
    with pytest.raises(ValueError):
        scores.paired_difference([([1.5], [0.5])] * 12)
    with pytest.raises(TypeError):
        scores.paired_difference([0.5] * 12)  # type: ignore[list-item]


# -- averages over inputs ------------------------------------------------------------------------------------------------


def test_score_icc_is_the_one_way_anova_intraclass_correlation():
    rng = random.Random(18)
    for _ in range(10):
        groups = []
        for _ in range(rng.randint(3, 30)):
            level = rng.betavariate(2, 2)
            groups.append([min(1.0, max(0.0, rng.gauss(level, 0.15))) for _ in range(rng.randint(2, 12))])
        f = scipy_stats.f_oneway(*groups).statistic
        sizes = np.array([len(g) for g in groups], dtype=float)
        k0 = (sizes.sum() - (sizes**2).sum() / sizes.sum()) / (len(sizes) - 1)
        assert scores.score_icc(groups, clip=False) == pytest.approx((f - 1) / (f + k0 - 1), rel=1e-9)
    assert scores.score_icc([[0.5]] * 5) is None
    assert scores.score_icc([[0.5, 0.5], [0.5, 0.5]]) is None
    assert scores.score_icc([[0.1, 0.1], [0.9, 0.9]]) == 1.0


def test_input_estimate_is_the_cluster_bootstrap_of_the_input_means():
    rng = random.Random(19)
    groups = [[rng.betavariate(3, 2) for _ in range(rng.randint(1, 8))] for _ in range(30)]
    result = scores.input_estimate(groups, 0.95, resamples=3000, seed=5)
    means = [statistics.fmean(g) for g in groups]
    assert result.estimate == pytest.approx(statistics.fmean(means), rel=1e-12)
    assert result.ci is not None and result.check_ci is not None
    assert result.ci == pytest.approx(inputs.bootstrap_interval(means, 0.95, 3000, 5), rel=1e-12)
    low, high = scipy_stats.t.interval(0.95, len(means) - 1, loc=np.mean(means), scale=scipy_stats.sem(means))
    assert result.check_ci == pytest.approx((low, high), rel=1e-9)
    boot = scipy_stats.bootstrap(
        (np.array(means),),
        np.mean,
        confidence_level=0.95,
        method="percentile",
        n_resamples=20000,
        random_state=np.random.default_rng(3),
    )
    assert result.ci[0] == pytest.approx(boot.confidence_interval.low, abs=0.1 * (high - low) / 2)
    assert result.icc == scores.score_icc(groups)
    assert result.width_factor == pytest.approx(
        inputs.width_factor(statistics.harmonic_mean([len(g) for g in groups]), result.icc)
    )
    # a range of 1..5 maps back; the Wilson and t methods of maths.inputs; the suppression rules
    wide = scores.input_estimate([[1 + 4 * v for v in g] for g in groups], 0.95, low=1, high=5, resamples=3000, seed=5)
    assert wide.ci is not None and wide.ci[0] == pytest.approx(1 + 4 * result.ci[0], rel=1e-9)
    assert scores.input_estimate(groups, interval="wilson").method == "wilson"
    assert scores.input_estimate(groups[:5]).suppressed == "fewer than 10 inputs"
    assert scores.input_estimate(groups, stopped=[True] + [False] * 29).suppressed == "1 case stopped early"


# -- the benchmark's BCa, checked, since its coverage is compared with ours ---------------------------------------------------------


@pytest.mark.slow
def test_the_coverage_benchmarks_bca_is_scipys():
    spec = importlib.util.spec_from_file_location("score_coverage", ROOT / "benchmarks" / "score_coverage.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    rng = np.random.default_rng(21)
    for n in (10, 40):
        x = rng.beta(0.5, 3, size=n)
        found = module.bootstrap_methods(x, np.random.default_rng(1), 40000, 0.95)
        scipy_bca = scipy_stats.bootstrap(
            (x,), np.mean, confidence_level=0.95, method="BCa", n_resamples=40000, random_state=np.random.default_rng(2)
        ).confidence_interval
        scipy_perc = scipy_stats.bootstrap(
            (x,),
            np.mean,
            confidence_level=0.95,
            method="percentile",
            n_resamples=40000,
            random_state=np.random.default_rng(2),
        ).confidence_interval
        half = (scipy_bca.high - scipy_bca.low) / 2
        assert found["BCa"][0] == pytest.approx(scipy_bca.low, abs=0.05 * half)
        assert found["BCa"][1] == pytest.approx(scipy_bca.high, abs=0.05 * half)
        assert found["percentile"][0] == pytest.approx(scipy_perc.low, abs=0.05 * half)


# -- fewest_runs: the fewest runs with which a score gate can pass, against a brute-force search --------


@pytest.mark.parametrize("level", [0.9, 0.95, 0.99])
@pytest.mark.parametrize("bar", [0.05, 0.3, 0.5, 0.75, 0.9, 0.95])
def test_fewest_runs_is_the_first_count_whose_all_top_interval_reaches_the_bar(bar: float, level: float) -> None:
    brute = next(n for n in range(1, 2000) if scores.score_interval([1.0] * n, level).low >= bar)
    assert scores.fewest_runs(bar, level) == brute
    assert scores.score_interval([1.0] * (brute - 1), level).low < bar if brute > 1 else True


def test_the_range_rescales_and_the_top_never_passes() -> None:
    assert scores.fewest_runs(4.0, 0.95, 1.0, 5.0) == scores.fewest_runs(0.75, 0.95)
    assert scores.fewest_runs(5.0, 0.95, 1.0, 5.0) is None  # the bound stays below the top of the range
    assert scores.fewest_runs(1.0, 0.95) is None
    assert scores.fewest_runs(0.0) == 1  # a bar at the bottom: any run
    assert scores.fewest_runs(0.999, cap=50) is None  # not within the cap


@pytest.mark.parametrize(
    ("kwargs", "error"),
    [
        ({"bar": float("nan")}, ValueError),
        ({"bar": "x"}, TypeError),
        ({"bar": 0.5, "cap": 0}, ValueError),
        ({"bar": 0.5, "level": 1.5}, ValueError),
        ({"bar": 0.5, "low": 1, "high": 0}, ValueError),
    ],
)
def test_bad_arguments_are_refused(kwargs: dict, error: type) -> None:
    with pytest.raises(error):
        scores.fewest_runs(**kwargs)
