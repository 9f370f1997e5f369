"""Averages over inputs: a bench function's mean (pass rate, or score) over its cases, its interval, ρ and the projection.

Pure, standard-library-only, like :mod:`stats` (whose type-7 quantile, normal
quantile, beta quantiles and pass^k / pass@k it builds on). Every input is a
*case*: a ``(passes, total)`` pair of counts, ``total`` runs of which
``passes`` passed (errored runs count as non-passes: the caller passes every
run in ``total``). The caller gives the cases in case-id order; the bootstrap
draws from them in that order, so the same results give the same numbers in
any process. Arguments are validated: a wrong type raises :class:`TypeError`
and a bad value :class:`ValueError`, each naming the offending value.

The methods (docs/statistics.md, "Averages over inputs"; docs/reference.md,
"Function-level intervals" and "Runs or inputs?"):

* **Estimate** (:func:`fractions`): the mean of the per-case fractions
  ``passes / total``, :func:`statistics.fmean`, so every input counts equally
  whatever its run count.
* **Cluster bootstrap** (:func:`bootstrap_means`, :func:`percentile_interval`,
  :func:`bootstrap_interval`): the nonparametric bootstrap with the *input*
  as the resampling unit, each keeping all its runs (resampling clusters at
  the top level: Davison & Hinkley 1997, *Bootstrap Methods and their
  Application*, section 3.8; Field & Welsh 2007, JRSS B 69(3)). Each of
  ``resamples`` draws takes ``N`` per-case fractions with replacement through
  a private ``random.Random(seed).choices``; the statistic is their mean. The
  interval is the equal-tailed percentile interval (Efron & Tibshirani 1993,
  *An Introduction to the Bootstrap*, ch. 13), the ``(1 - level)/2`` and
  ``1 - (1 - level)/2`` sample quantiles of the resampled means by linear
  interpolation (Hyndman & Fan 1996 type 7, :func:`stats.sample_quantile`).
* **Cluster-robust standard error** (:func:`standard_error`,
  :func:`cluster_se`): ``s / sqrt(N)``, ``s`` the sample standard deviation
  (``N - 1``) of the per-case fractions. With equal run counts this is the
  CR1 cluster-robust (Liang & Zeger 1986) standard error of the mean of the
  per-run 0/1 outcomes, clustered by input.
* **Normal cross-check** (:func:`normal_interval`): ``mean ± z * s / sqrt(N)``
  with ``z = normal_ppf(1 - (1 - level)/2)``, not clipped to [0, 1].
* **Student t interval** (:func:`t_interval`, :func:`student_t_ppf`):
  ``mean ± t_{N-1} * s / sqrt(N)``, the cluster-robust interval with the
  ``G - 1`` degrees of freedom recommended for few clusters (Cameron & Miller
  2015, "A Practitioner's Guide to Cluster-Robust Inference", J. Human
  Resources 50(2), section VI); ``interval="t"``.
* **Cluster-adjusted Wilson interval** (:func:`wilson_interval`): the Wilson
  score interval (Wilson 1927) at the *effective number of runs*
  ``p (1 - p) / SE**2`` (Kish's design effect), with ``t_{N-1}`` for ``z``,
  which is Korn & Graubard's (1998, Survey Methodology 24(2)) degrees-of-freedom
  adjusted effective sample size ``n_eff (z / t)**2``; ``interval="wilson"``.
  Unlike the percentile and t intervals it is never a single point: with no
  spread between the inputs it takes ``N - 1`` effective runs, as if every
  input were all or nothing, so ten inputs that all passed give about [64%,
  100%], not [100%, 100%].

  ``benchmarks/inputs_coverage.py`` measures their coverage (and BCa's) at a
  nominal 95%, mean rate 0.8, ρ 0.1-0.9, 10-200 inputs of 1-20 runs: the
  percentile interval covers 86-92% with 10 inputs and below 93% in half the
  cells, the t interval is a little better, and the Wilson interval is
  within 93-97% in 41 of the 44 cells (92.0% at worst; 97.3% and 99.3% with
  10 inputs of 5 runs and of 1). Near a rate of 1 (0.95) every interval
  under-covers with few inputs of many runs, the Wilson one by far the
  least. The plugin therefore uses the Wilson interval by default (ini
  ``prob_inputs_interval = wilson``); ``bootstrap`` gives the percentile
  interval. Here the functions' own default stays the percentile interval.
* **ICC(1)** (:func:`icc`): the intraclass correlation ρ of the per-run 0/1
  outcomes by a one-way random-effects ANOVA with inputs as groups (Fisher
  1925; Shrout & Fleiss 1979, ICC(1)), with the adjusted average group size
  ``k0`` for unequal run counts (Snedecor & Cochran; Donner 1986, Int. Stat.
  Rev. 54(1)), clipped to [0, 1].
* **Projection** (:func:`width_factor`, :func:`width_change`,
  :func:`format_change`): the design effect of clustered sampling (Kish 1965,
  *Survey Sampling*): an interval over ``N`` inputs of ``k`` runs each has a
  width proportional to ``sqrt((1 + (k - 1) ρ) / k) / sqrt(N)``.
* **pass^k and pass@k over inputs** (:func:`metric_estimate`): the mean over
  the cases with at least ``k`` runs of the unbiased per-case
  :func:`stats.pass_hat_k` / :func:`stats.pass_at_k` (Chen et al. 2021), with
  the same interval; the other cases are left out.
* **Aggregates** (:func:`input_estimate`, :func:`metric_estimate`): all of the
  above for one function (or the session), with no interval under
  ``min_inputs`` inputs or over a case stopped early (:func:`_intervals`);
  the report code builds its JSON and lines from the returned tuples.
  :func:`over_inputs` is the one estimate over inputs of any measure: each
  input's value (a pass fraction here, a mean score in ``scores``), their
  mean, its interval and cross-check, ρ and the projection, in one
  :class:`InputEstimate`.
"""

from __future__ import annotations

import math
import random
import statistics
from collections.abc import Callable, Iterable, Sequence
from typing import NamedTuple

from . import stats

__all__ = [
    "INTERVALS",
    "InputEstimate",
    "METRIC_KINDS",
    "MIN_INPUTS",
    "MetricEstimate",
    "PASS_AT",
    "PASS_HAT",
    "PERCENTILE",
    "RESAMPLES",
    "SEED",
    "STUDENT_T",
    "WILSON",
    "bootstrap_interval",
    "bootstrap_means",
    "check_counts",
    "cluster_se",
    "fewer_inputs",
    "format_change",
    "fractions",
    "harmonic_runs",
    "icc",
    "input_estimate",
    "interval_of",
    "metric_estimate",
    "metric_value",
    "no_input_with_runs",
    "normal_interval",
    "over_inputs",
    "parse_interval",
    "percentile_interval",
    "standard_error",
    "stopped_early",
    "student_t_ppf",
    "t_interval",
    "width_change",
    "width_factor",
    "wilson_interval",
]

#: Bootstrap resamples, seed and fewest inputs for an interval: the defaults of
#: ``--prob-bootstrap``, ``--prob-seed`` and ``prob_min_inputs``.
RESAMPLES = 5000
SEED = 0
MIN_INPUTS = 10

#: The function-level interval: the cluster bootstrap's percentile interval
#: (these functions' default; the plugin's is Wilson), the Student t interval on the per-case values, or
#: the cluster-adjusted Wilson interval.
PERCENTILE = "percentile"
STUDENT_T = "t"
WILSON = "wilson"
INTERVALS: tuple[str, ...] = (PERCENTILE, STUDENT_T, WILSON)

#: The metric kinds, spelled as :func:`stats.parse_metric` returns them.
PASS_HAT = "pass^"
PASS_AT = "pass@"
METRIC_KINDS: tuple[str, ...] = (PASS_HAT, PASS_AT)

_MINUS = "\u2212"  # the minus sign of the printed changes, not a hyphen
_NO_CHANGE = 1e-12  # a width change this small is none at all ("±0%")


# -- validation ---------------------------------------------------------------------


def _level(level: object) -> float:
    if isinstance(level, str):
        raise TypeError(f"level must be a number, got the string {level!r}; use stats.parse_confidence() for text")
    return stats.parse_confidence(level)


def _resamples(resamples: object) -> int:
    count = stats.as_int(resamples, "resamples")
    if count < 1:
        raise ValueError(f"resamples must be at least 1, got {resamples!r}")
    return count


def _min_inputs(min_inputs: object) -> int:
    count = stats.as_int(min_inputs, "min_inputs")
    if count < 2:
        raise ValueError(f"min_inputs must be at least 2, got {min_inputs!r}")
    return count


def _values(values: Iterable[float], least: int = 1) -> list[float]:
    if isinstance(values, (str, bytes)):
        raise TypeError(f"values must be an iterable of numbers, got {values!r}")
    result = [stats.as_real(value, "each value") for value in values]
    if len(result) < least:
        raise ValueError(f"need at least {least} value{'s' if least > 1 else ''}, got {len(result)}")
    return result


def _flags(stopped: Iterable[bool] | None, count: int) -> list[bool]:
    if stopped is None:
        return [False] * count
    flags = list(stopped)
    if len(flags) != count:
        raise ValueError(f"stopped must have one flag per case ({count}), got {len(flags)}")
    for flag in flags:
        if not isinstance(flag, bool):
            raise TypeError(f"stopped must hold booleans, got {flag!r}")
    return flags


def check_counts(counts: Iterable[tuple[int, int]]) -> list[tuple[int, int]]:
    """``counts`` as a list of ``(passes, total)`` integer pairs, validated.

    Each case needs ``total >= 1`` and ``0 <= passes <= total``; bools and
    non-integers are rejected with :class:`TypeError`. An empty list is
    returned as is (the aggregates say what they need).
    """
    if isinstance(counts, (str, bytes)):
        raise TypeError(f"counts must be (passes, total) pairs, got {counts!r}")
    result = []
    for pair in counts:
        try:
            passes, total = pair
        except (TypeError, ValueError):
            raise TypeError(f"each case must be a (passes, total) pair, got {pair!r}") from None
        passes = stats.as_int(passes, "passes")
        total = stats.as_int(total, "total")
        if total < 1:
            raise ValueError(f"a case needs at least one run, got total={total}")
        if not 0 <= passes <= total:
            raise ValueError(f"passes must be between 0 and total={total}, got {passes}")
        result.append((passes, total))
    return result


def parse_interval(value: object) -> str:
    """Validate a function-level interval name (case-insensitive): ``percentile``, ``t`` or ``wilson``."""
    if isinstance(value, str) and value.strip().lower() in INTERVALS:
        return value.strip().lower()
    raise ValueError(f"the interval must be one of {', '.join(INTERVALS)}, got {value!r}")


# -- the per-case values -------------------------------------------------------------


def fractions(counts: Iterable[tuple[int, int]]) -> list[float]:
    """Per-case pass fractions ``passes / total``, in the order given."""
    return [passes / total for passes, total in check_counts(counts)]


def harmonic_runs(counts: Iterable[tuple[int, int]]) -> float:
    """The harmonic mean of the run counts: the ``k`` at which :func:`width_factor`
    describes the equally weighted mean of the fractions exactly (its variance
    is ``mean(σ_b² + σ_w² / k_i) / N = (σ_b² + σ_w² / k) / N`` with that ``k``,
    at any ρ); the run count itself when every case has the same."""
    pairs = check_counts(counts)
    if not pairs:
        raise ValueError("need at least one case")
    return statistics.harmonic_mean([total for _, total in pairs])


def metric_value(kind: str, passes: int, total: int, k: int) -> float:
    """One case's pass^k (``kind="pass^"``) or pass@k (``"pass@"``) from its counts,
    ``k <= total`` (:func:`stats.pass_hat_k`, :func:`stats.pass_at_k`)."""
    if kind == PASS_HAT:
        return stats.pass_hat_k(total, passes, k)
    if kind == PASS_AT:
        return stats.pass_at_k(total, passes, k)
    raise ValueError(f"the metric kind must be one of {', '.join(METRIC_KINDS)}, got {kind!r}")


# -- the cluster bootstrap -----------------------------------------------------------


def bootstrap_means(values: Iterable[float], resamples: int = RESAMPLES, seed: int = SEED) -> list[float]:
    """Means of ``resamples`` bootstrap resamples of ``values``, in draw order.

    Each resample is ``random.Random(seed).choices(values, k=len(values))``
    (one private generator for all of them, so the global ``random`` state is
    never touched), and its mean is :func:`statistics.fmean`'s (an exactly
    rounded sum divided by ``N``). When ``values`` are per-case fractions this
    is the cluster bootstrap: a case is drawn with all its runs.
    """
    pool = _values(values)
    count = _resamples(resamples)
    rng = random.Random(stats.as_int(seed, "seed"))
    draw, fsum, n = rng.choices, math.fsum, len(pool)
    return [fsum(draw(pool, k=n)) / n for _ in range(count)]


def percentile_interval(samples: Iterable[float], level: float) -> tuple[float, float]:
    """The equal-tailed percentile interval of a bootstrap distribution.

    The ``(1 - level)/2`` and ``1 - (1 - level)/2`` sample quantiles of
    ``samples`` by linear interpolation between order statistics (Hyndman &
    Fan type 7, numpy's ``method="linear"``: :func:`stats.sample_quantile`).
    """
    tail = (1.0 - _level(level)) / 2.0
    ordered = sorted(_values(samples))
    return stats.sample_quantile(ordered, tail), stats.sample_quantile(ordered, 1.0 - tail)


def bootstrap_interval(
    values: Iterable[float], level: float, resamples: int = RESAMPLES, seed: int = SEED
) -> tuple[float, float]:
    """The cluster bootstrap's percentile interval of the mean of ``values``:
    :func:`percentile_interval` of :func:`bootstrap_means`."""
    return percentile_interval(bootstrap_means(values, resamples, seed), level)


# -- standard errors and analytic intervals --------------------------------------------


def standard_error(values: Iterable[float]) -> float:
    """``s / sqrt(N)``: the standard error of the mean of ``values``, ``s`` the
    sample standard deviation (divisor ``N - 1``), at least 2 values."""
    data = _values(values, least=2)
    return statistics.stdev(data, statistics.fmean(data)) / math.sqrt(len(data))


def cluster_se(counts: Iterable[tuple[int, int]]) -> float:
    """The cluster-robust standard error of the mean of the per-case fractions.

    :func:`standard_error` of :func:`fractions`: the spread of the inputs'
    fractions, so the runs of one input count as one correlated unit. With
    ``k`` runs for every case it equals the CR1 cluster-robust standard error
    of the mean of the ``N k`` per-run 0/1 outcomes clustered by input
    (Liang & Zeger 1986; the sandwich ``sum_g e_g**2 / (N k)**2``, with
    ``e_g`` the sum of case ``g``'s residuals, times the CR1 factor
    ``N / (N - 1) * (M - 1) / (M - 1)``): statsmodels'
    ``OLS(y, ones).fit(cov_type="cluster", cov_kwds={"groups": g}).bse``.
    With unequal run counts that OLS estimates the pooled rate instead, a
    different (run-weighted) mean; weighting each run by ``1 / k_i`` (``WLS``)
    gives this mean and this standard error again.
    """
    return standard_error(fractions(counts))


def normal_interval(values: Iterable[float], level: float) -> tuple[float, float]:
    """``mean ± z * s / sqrt(N)``, ``z = normal_ppf(1 - (1 - level)/2)``, not clipped.

    The normal-approximation cross-check of the bootstrap (a bound outside
    [0, 1] says the approximation is poor there). At least 2 values.
    """
    tail = (1.0 - _level(level)) / 2.0
    data = _values(values, least=2)
    mean = statistics.fmean(data)
    half = -stats.normal_ppf(tail) * statistics.stdev(data, mean) / math.sqrt(len(data))
    return mean - half, mean + half


def student_t_ppf(p: float, df: float) -> float:
    """Quantile of Student's t distribution with ``df > 0`` degrees of freedom.

    From the beta distribution: ``T**2 / (df + T**2) ~ Beta(1/2, df/2)``, so
    the upper quantile ``t`` with ``P(|T| > t) = 2 min(p, 1 - p)`` solves an
    upper beta quantile (:func:`stats.beta_isf`), or, where that is close to
    1, the lower quantile of ``df / (df + T**2) ~ Beta(df/2, 1/2)``, which
    keeps the digits of a large ``t``. ``p`` in [0, 1]; +-inf at the ends.
    """
    p = stats.as_real(p, "p")
    nu = stats.as_real(df, "df")
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"p must be between 0 and 1, got {p!r}")
    if nu <= 0.0:
        raise ValueError(f"df must be positive, got {df!r}")
    if p == 0.5:
        return 0.0
    if p in (0.0, 1.0):
        return math.inf if p == 1.0 else -math.inf
    both_tails = 2.0 * min(p, 1.0 - p)
    y = stats.beta_isf(both_tails, 0.5, nu / 2.0)
    if y <= 0.5:
        t = math.sqrt(nu * y / (1.0 - y))
    else:
        x = stats.beta_ppf(both_tails, nu / 2.0, 0.5)
        t = math.sqrt(nu * (1.0 - x) / x) if x > 0.0 else math.inf
    return t if p > 0.5 else -t


def t_interval(values: Iterable[float], level: float) -> tuple[float, float]:
    """``mean ± t_{N-1} * s / sqrt(N)``: the Student t interval of the mean, not clipped.

    With per-case fractions as ``values`` this is the cluster-robust interval
    with ``G - 1`` degrees of freedom (Cameron & Miller 2015), wider than the
    normal one by ``t_{N-1} / z`` (at 95%, 1.15 at N = 10 and 1.03 at N = 50).
    At least 2 values.
    """
    tail = (1.0 - _level(level)) / 2.0
    data = _values(values, least=2)
    mean = statistics.fmean(data)
    half = -student_t_ppf(tail, len(data) - 1) * statistics.stdev(data, mean) / math.sqrt(len(data))
    return mean - half, mean + half


def wilson_interval(values: Iterable[float], level: float, trials: float | None = None) -> tuple[float, float]:
    """The cluster-adjusted Wilson score interval of the mean of ``values`` in [0, 1].

    With ``p`` the mean and ``SE`` its :func:`standard_error`, the inputs
    carry as much information as ``n = p (1 - p) / SE**2`` independent runs
    (the runs over Kish's design effect; at least ``N - 1``, since values in
    [0, 1] with mean ``p`` have a sample variance of at most ``N p (1 - p) /
    (N - 1)``), capped at ``trials``, the number of runs there are (no cap when
    ``None``). With no spread at all (every value the same, ``SE = 0``),
    there is nothing to estimate the design effect from, and ``n = N - 1``:
    the least the formula gives, as if each input were all or nothing. The
    interval is Wilson's score interval for ``p`` out of ``n`` with the
    Student ``t_{N-1}`` quantile in place of ``z`` (equivalently Wilson at
    Korn & Graubard's ``n (z / t)**2``), so few inputs widen it as they widen
    :func:`t_interval`; clipped to [0, 1], and exactly 1 (0) at ``p = 1`` (0).
    At least 2 values.
    """
    tail = (1.0 - _level(level)) / 2.0
    data = _values(values, least=2)
    if any(not 0.0 <= v <= 1.0 for v in data):
        raise ValueError("the Wilson interval needs values between 0 and 1")
    cap = math.inf if trials is None else stats.as_real(trials, "trials")
    if cap <= 0.0:
        raise ValueError(f"trials must be positive, got {trials!r}")
    count = len(data)
    p = statistics.fmean(data)
    se = statistics.stdev(data, p) / math.sqrt(count)
    runs = p * (1.0 - p) / (se * se) if se > 0.0 else count - 1.0
    runs = min(max(runs, count - 1.0), cap)
    t2 = student_t_ppf(tail, count - 1) ** 2
    centre = (p + t2 / (2.0 * runs)) / (1.0 + t2 / runs)
    half = math.sqrt(t2 * p * (1.0 - p) / runs + t2 * t2 / (4.0 * runs * runs)) / (1.0 + t2 / runs)
    low = 0.0 if p == 0.0 else max(0.0, centre - half)
    high = 1.0 if p == 1.0 else min(1.0, centre + half)
    return low, high


def interval_of(
    values: Sequence[float],
    level: float,
    interval: str = PERCENTILE,
    resamples: int = RESAMPLES,
    seed: int = SEED,
    trials: float | None = None,
) -> tuple[float, float]:
    """The function-level interval of the mean of ``values`` by ``interval``:
    :func:`bootstrap_interval` (``"percentile"``), :func:`t_interval`
    (``"t"``) or :func:`wilson_interval` (``"wilson"``, capped at ``trials``)."""
    method = parse_interval(interval)
    if method == PERCENTILE:
        return bootstrap_interval(values, level, resamples, seed)
    _resamples(resamples)  # validated alike whichever method
    stats.as_int(seed, "seed")
    if method == STUDENT_T:
        return t_interval(values, level)
    return wilson_interval(values, level, trials)


# -- ICC(1) and the projection -----------------------------------------------------------


def icc(counts: Iterable[tuple[int, int]], clip: bool = True) -> float | None:
    """ICC(1): the intraclass correlation ρ of the per-run 0/1 outcomes, inputs as groups.

    One-way random-effects ANOVA; with ``x_i`` passes in ``k_i`` runs, ``N``
    groups and ``M = sum k_i`` runs, the sums of squares follow from the
    counts (a 0/1 outcome is its own square):

    * between inputs ``SSB = sum x_i**2 / k_i - (sum x_i)**2 / M`` on ``N - 1``
      degrees of freedom,
    * within inputs ``SSW = sum x_i (k_i - x_i) / k_i`` on ``M - N``,

    and with the adjusted average group size ``k0 = (M - sum k_i**2 / M) /
    (N - 1)`` (``k`` when every input has ``k`` runs)
    ``ρ = (MSB - MSW) / (MSB + (k0 - 1) MSW)``. That is ``(F - 1) / (F + k0 - 1)``
    with ``F = MSB / MSW`` the one-way ANOVA's F statistic. Clipped to [0, 1]
    (a negative estimate: inputs more alike than chance allows) unless
    ``clip`` is false. ``SSB``, a difference of nearly equal sums, is taken as
    at least 0, so rounding never makes a spread of nothing negative.

    ``None`` when ρ is not defined: fewer than 2 inputs, every input run once
    (``M == N``: nothing to compare within an input), or a denominator of at
    most 0, which happens when there is no variation at all (every run passed,
    or every run failed).
    """
    pairs = check_counts(counts)
    groups = len(pairs)
    runs = sum(total for _, total in pairs)
    if groups < 2 or runs == groups:
        return None
    passes = sum(x for x, _ in pairs)
    ssb = math.fsum(x * x / total for x, total in pairs) - passes * passes / runs
    ssw = math.fsum(x * (total - x) / total for x, total in pairs)
    msb = max(0.0, ssb) / (groups - 1)
    msw = ssw / (runs - groups)
    k0 = (runs - math.fsum(total * total for _, total in pairs) / runs) / (groups - 1)
    denominator = msb + (k0 - 1.0) * msw
    if denominator <= 0.0:
        return None
    rho = (msb - msw) / denominator
    return min(1.0, max(0.0, rho)) if clip else rho


def _rho(rho: object) -> float:
    value = stats.as_real(rho, "rho")
    if not 0.0 <= value <= 1.0:
        raise ValueError(f"rho must be between 0 and 1, got {rho!r}")
    return value


def width_factor(k: float, rho: float) -> float:
    """``sqrt((1 + (k - 1) ρ) / k)``: the standard deviation of one input's pass
    fraction over ``k`` runs, relative to a single run's.

    The variance-components model behind it: an input's rate varies between
    inputs with variance ``σ_b²`` and a run around it with ``σ_w²``, ``ρ =
    σ_b² / (σ_b² + σ_w²)``, so the mean over ``N`` inputs of ``k`` runs has
    variance ``(σ_b² + σ_w² / k) / N = (σ_b² + σ_w²) width_factor(k, ρ)² / N``
    (Kish's design effect ``1 + (k - 1) ρ`` over ``k``). 1/√k at ρ = 0, 1 at ρ = 1.
    ``k >= 1`` may be fractional (:func:`harmonic_runs`).
    """
    runs = stats.as_real(k, "k")
    if runs < 1.0:
        raise ValueError(f"k must be at least 1, got {k!r}")
    return math.sqrt((1.0 + (runs - 1.0) * _rho(rho)) / runs)


def width_change(k: float, rho: float, runs: float = 1.0, inputs: float = 1.0) -> float:
    """The relative change of the interval's width with ``runs`` times the runs per
    input and ``inputs`` times the inputs: ``width_factor(runs k, ρ) /
    width_factor(k, ρ) / sqrt(inputs) - 1`` (``-0.29`` is 29% narrower).

    Doubling the inputs gives ``1/√2 - 1`` (about −29%) at any ρ; doubling the
    runs gives that at ρ = 0 and exactly 0 at ρ = 1.
    """
    more_runs = stats.as_real(runs, "runs")
    more_inputs = stats.as_real(inputs, "inputs")
    if more_runs <= 0.0 or more_inputs <= 0.0:
        raise ValueError(f"runs and inputs must be positive factors, got runs={runs!r}, inputs={inputs!r}")
    before = width_factor(k, rho)
    return width_factor(stats.as_real(k, "k") * more_runs, rho) / before / math.sqrt(more_inputs) - 1.0


def format_change(change: float) -> str:
    """A width change as a whole percent with a real minus sign (U+2212): ``−22%``.

    Rounded half up on its size. A change too small to round to 1% is ``−<1%``
    (or ``+<1%``); none at all (``|change| < 1e-12``, as at ρ = 1) is ``±0%``, so
    ``−0%`` never shows. A growth is signed ``+``: ``+5%``.
    """
    value = stats.as_real(change, "change")
    if abs(value) < _NO_CHANGE:
        return "\u00b10%"
    sign = _MINUS if value < 0.0 else "+"
    percent = math.floor(abs(value) * 100.0 + 0.5)
    return f"{sign}{percent}%" if percent else f"{sign}<1%"


# -- why there is no interval ---------------------------------------------------------------


def fewer_inputs(min_inputs: int) -> str:
    """``"fewer than 10 inputs"``: the reason for no interval with too few cases."""
    return f"fewer than {min_inputs} inputs"


def no_input_with_runs(k: int) -> str:
    """``"no input with at least 5 runs"``: a metric's reason when no case has ``k`` runs."""
    return f"no input with at least {k} runs"


def stopped_early(count: int) -> str:
    """``"1 case stopped early"``, ``"3 cases stopped early"`` (``--prob-stop``)."""
    return f"{count} case stopped early" if count == 1 else f"{count} cases stopped early"


# -- the aggregates ---------------------------------------------------------------------------


class InputEstimate(NamedTuple):
    """A function's (or the session's) mean over its inputs, of any measure: the pass rate (each input's pass
    fraction counts once) or a mean score (each input's mean score counts once, ``scores.input_estimate``).

    ``ci`` (by ``method``) and ``check_ci`` (the cross-check: the normal interval for pass fractions, Student's
    t for scores) are ``None`` when ``suppressed`` says why there is no interval: ``"fewer than 10 inputs"``
    (the ``min_inputs`` given), else ``"3 cases stopped early"`` when any case stopped early. ``icc``,
    ``width_factor`` (at ``runs_harmonic``) and the two projected changes are ``None`` when ρ is not defined,
    and kept, as data, when the interval is suppressed.
    """

    inputs: int
    runs_min: int
    runs_mean: float
    runs_max: int
    #: The harmonic mean of the run counts: the ``k`` of ``width_factor``.
    runs_harmonic: float
    estimate: float
    ci: tuple[float, float] | None
    check_ci: tuple[float, float] | None
    icc: float | None
    width_factor: float | None
    #: Relative width change with twice the runs per input, and with twice the inputs.
    runs_change: float | None
    inputs_change: float | None
    suppressed: str | None
    #: Cases that stopped early (``--prob-stop``).
    stopped: int
    #: The interval's method, one of :data:`INTERVALS`.
    method: str


class MetricEstimate(NamedTuple):
    """pass^k or pass@k averaged over the inputs with at least ``k`` runs.

    ``inputs`` counts those, ``left_out`` the others. ``estimate`` is ``None``
    when ``inputs`` is 0 (``suppressed``: ``"no input with at least 5
    runs"``); ``ci`` and ``normal_ci`` are ``None`` when ``suppressed``
    (otherwise ``"fewer than 10 inputs"`` or ``"3 cases stopped early"``, of
    ``inputs``).
    """

    kind: str
    k: int
    inputs: int
    left_out: int
    estimate: float | None
    ci: tuple[float, float] | None
    normal_ci: tuple[float, float] | None
    suppressed: str | None
    stopped: int
    method: str


def _intervals(
    values: list[float],
    stopped: int,
    level: float,
    resamples: int,
    seed: int,
    min_inputs: int,
    method: str,
    trials: float,
    check: Callable[[Sequence[float], float], tuple[float, float]] = normal_interval,
) -> tuple[tuple[float, float] | None, tuple[float, float] | None, str | None]:
    """``(ci, check_ci, suppressed)`` for the mean of ``values``: none with fewer than ``min_inputs`` values
    or with a case stopped early (``suppressed`` says which); ``check`` the cross-check's interval."""
    if len(values) < min_inputs:
        # Too few inputs: the bootstrap's spread underestimates the uncertainty.
        return None, None, fewer_inputs(min_inputs)
    if stopped:
        # A stopped case's fraction leans toward its verdict: no interval over it.
        return None, None, stopped_early(stopped)
    return interval_of(values, level, method, resamples, seed, trials), check(values, level), None


def input_estimate(
    counts: Iterable[tuple[int, int]],
    level: float = 0.95,
    resamples: int = RESAMPLES,
    seed: int = SEED,
    min_inputs: int = MIN_INPUTS,
    stopped: Iterable[bool] | None = None,
    interval: str = PERCENTILE,
) -> InputEstimate:
    """The mean pass rate over ``counts`` (``(passes, total)`` per case, in case-id
    order, at least one), its interval, ρ and the runs-or-inputs projection.

    ``stopped`` flags the cases that stopped early (one per case; none by
    default). The interval needs ``min_inputs`` cases and none stopped; ρ and
    the projection are computed either way. ``interval`` picks the interval's
    method (:data:`INTERVALS`); the Wilson interval is capped at the total runs.
    """
    pairs = check_counts(counts)
    if not pairs:
        raise ValueError("need at least one case")
    level = _level(level)
    resamples = _resamples(resamples)
    seed = stats.as_int(seed, "seed")
    min_inputs = _min_inputs(min_inputs)
    method = parse_interval(interval)
    halted = sum(_flags(stopped, len(pairs)))
    values = [passes / total for passes, total in pairs]
    totals = [total for _, total in pairs]
    return over_inputs(values, totals, icc(pairs), level, resamples, seed, min_inputs, halted, method)


def over_inputs(
    values: list[float],
    totals: list[int],
    rho: float | None,
    level: float,
    resamples: int,
    seed: int,
    min_inputs: int,
    halted: int,
    method: str,
    scale: tuple[float, float] | None = None,
    check: Callable[[Sequence[float], float], tuple[float, float]] = normal_interval,
) -> InputEstimate:
    """The estimate over inputs of any measure, from each input's value on [0, 1] (``values``, in case-id
    order), its runs (``totals``) and ρ (computed from the runs by the measure's own ICC(1)): their mean, its
    interval by ``method`` (the Wilson interval capped at the total runs) and the cross-check ``check``, under
    0.3.0's suppression rules (``min_inputs`` inputs, none of the ``halted`` stopped early); arguments already
    validated. ``scale``: ``(low, high)`` when the values were rescaled from that range (scores): the mean and
    the intervals are mapped back, and the interval clipped to it."""
    k = statistics.harmonic_mean(totals)
    factor = runs_change = inputs_change = None
    if rho is not None:
        factor = width_factor(k, rho)
        runs_change = width_change(k, rho, runs=2.0)
        inputs_change = width_change(k, rho, inputs=2.0)
    ci, check_ci, suppressed = _intervals(
        values, halted, level, resamples, seed, min_inputs, method, sum(totals), check
    )
    estimate = statistics.fmean(values)
    if scale is not None:
        low, high = scale
        span = high - low
        estimate = low + span * estimate
        if ci is not None and check_ci is not None:
            ci = (max(low, low + span * float(ci[0])), min(high, low + span * float(ci[1])))
            check_ci = (low + span * float(check_ci[0]), low + span * float(check_ci[1]))
    return InputEstimate(
        inputs=len(values),
        runs_min=min(totals),
        runs_mean=statistics.fmean(totals),
        runs_max=max(totals),
        runs_harmonic=k,
        estimate=estimate,
        ci=ci,
        check_ci=check_ci,
        icc=rho,
        width_factor=factor,
        runs_change=runs_change,
        inputs_change=inputs_change,
        suppressed=suppressed,
        stopped=halted,
        method=method,
    )


def metric_estimate(
    counts: Iterable[tuple[int, int]],
    kind: str,
    k: int,
    level: float = 0.95,
    resamples: int = RESAMPLES,
    seed: int = SEED,
    min_inputs: int = MIN_INPUTS,
    stopped: Iterable[bool] | None = None,
    interval: str = PERCENTILE,
) -> MetricEstimate:
    """pass^k (``kind="pass^"``) or pass@k (``"pass@"``) averaged over the cases of
    ``counts`` with at least ``k`` runs, with the interval of
    :func:`input_estimate` over those cases (the bootstrap draws from them in
    the order given, with the same ``seed``).

    ``stopped`` flags the cases that stopped early; only those among the cases
    averaged count. The Wilson interval is capped at ``sum(total / k)``: the
    draws of ``k`` runs the cases' runs make.
    """
    pairs = check_counts(counts)
    if kind not in METRIC_KINDS:
        raise ValueError(f"the metric kind must be one of {', '.join(METRIC_KINDS)}, got {kind!r}")
    k = stats.as_int(k, "k")
    if k < 1:
        raise ValueError(f"k must be at least 1, got {k}")
    level = _level(level)
    resamples = _resamples(resamples)
    seed = stats.as_int(seed, "seed")
    min_inputs = _min_inputs(min_inputs)
    method = parse_interval(interval)
    flags = _flags(stopped, len(pairs))
    kept = [(pair, flag) for pair, flag in zip(pairs, flags, strict=False) if pair[1] >= k]
    left_out = len(pairs) - len(kept)
    if not kept:
        return MetricEstimate(kind, k, 0, left_out, None, None, None, no_input_with_runs(k), 0, method)
    values = [metric_value(kind, passes, total, k) for (passes, total), _ in kept]
    halted = sum(flag for _, flag in kept)
    # For the Wilson interval's cap: each case's runs make total / k draws of k runs.
    trials = math.fsum(total / k for (_, total), _ in kept)
    ci, normal_ci, suppressed = _intervals(values, halted, level, resamples, seed, min_inputs, method, trials)
    return MetricEstimate(
        kind, k, len(kept), left_out, statistics.fmean(values), ci, normal_ci, suppressed, halted, method
    )
