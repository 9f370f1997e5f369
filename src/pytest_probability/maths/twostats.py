"""Statistics of comparisons: two pass rates, and a family of comparisons.

Pure, standard-library-only, like :mod:`stats` (whose Wilson interval it
builds on). Group 1 is always *tonight* (or the arm), group 2 the baseline
(or the baseline variant); a difference is ``p1 - p2``, so a drop is negative.

* :func:`fisher_less`, :func:`fisher_greater`: one-sided tails of Fisher's
  exact test (the hypergeometric distribution of the passes of group 1 given
  both groups' totals and the total passes), summed in exact integers and
  rounded once; :func:`fisher_two_sided` doubles the smaller tail.
* :func:`stratified_less`, :func:`stratified_greater`: the exact conditional
  test of several 2x2 tables with a common effect (Birch 1964; the exact
  Cochran-Mantel-Haenszel test): the statistic is the total of group 1's
  passes, whose null distribution is the convolution of the strata's
  hypergeometric distributions. With one run per group and stratum it is the
  exact McNemar (sign) test.
* :func:`newcombe`: Newcombe's hybrid score interval for ``p1 - p2``
  (Newcombe 1998, method 10), from two Wilson intervals, with separate lower
  and upper tail levels.
* :func:`adjust`: Holm, Bonferroni, Benjamini-Hochberg or no adjustment of a
  family of p-values, returning the adjusted p-values (as statsmodels'
  ``multipletests`` does) and, per hypothesis, the *local level*: the level
  at which the procedure judged it. A one-sided bound at that local level
  excludes the null exactly when the adjusted p-value is at most ``alpha``
  (for a test and bound that agree), so intervals drawn at it agree with the
  adjusted verdicts.
* :func:`sign_flip`: the sign-flip (paired permutation) test of the mean of
  per-input differences, treating the inputs as a sample, and the interval
  obtained by inverting it (exact over all ``2**k`` sign patterns up to
  ``k = 16`` inputs, else a seeded Monte Carlo sample of patterns). The
  bounds are order statistics of the means of the flipped subsets, so the
  interval excludes a value exactly when the test rejects it.
* :func:`mean_difference_interval`: the interval of the mean of per-stratum
  differences with the strata taken as fixed: Newcombe's with one stratum,
  else a Wald interval of the mean of Agresti-Caffo adjusted differences
  (each ``(x + 1) / (n + 2)``).
* :func:`runs_to_detect`: runs per night needed to detect a drop with a given
  power (normal approximation; a planning aid, not a test).
"""

from __future__ import annotations

import math
import random
from collections.abc import Iterable, Sequence
from functools import lru_cache
from typing import NamedTuple

from ..vocabulary import ADJUSTMENTS
from . import stats


def _check(x: int, n: int, name: str) -> None:
    if isinstance(x, bool) or isinstance(n, bool) or not isinstance(x, int) or not isinstance(n, int):
        raise TypeError(f"{name}: counts must be integers, got {x!r}/{n!r}")
    if n < 1 or not 0 <= x <= n:
        raise ValueError(f"{name}: need 0 <= passes <= runs and runs >= 1, got {x}/{n}")


# -- Fisher's exact test -------------------------------------------------------


@lru_cache(maxsize=65536)
def _hypergeom_tails(x1: int, n1: int, x2: int, n2: int) -> tuple[float, float]:
    """(P(X <= x1), P(X >= x1)) for X ~ passes of group 1 given the margins."""
    total_passes = x1 + x2
    low = max(0, total_passes - n2)
    high = min(n1, total_passes)
    weights = [math.comb(n1, x) * math.comb(n2, total_passes - x) for x in range(low, high + 1)]
    whole = sum(weights)
    below = sum(weights[: x1 - low + 1])
    above = sum(weights[x1 - low :])
    return min(1.0, below / whole), min(1.0, above / whole)


def fisher_less(x1: int, n1: int, x2: int, n2: int) -> float:
    """One-sided Fisher exact p-value for ``p1 < p2`` (group 1 worse).

    Equals ``scipy.stats.fisher_exact([[x1, n1 - x1], [x2, n2 - x2]], alternative="less")``.
    """
    _check(x1, n1, "group 1")
    _check(x2, n2, "group 2")
    return _hypergeom_tails(x1, n1, x2, n2)[0]


def fisher_greater(x1: int, n1: int, x2: int, n2: int) -> float:
    """One-sided Fisher exact p-value for ``p1 > p2``."""
    _check(x1, n1, "group 1")
    _check(x2, n2, "group 2")
    return _hypergeom_tails(x1, n1, x2, n2)[1]


def fisher_two_sided(x1: int, n1: int, x2: int, n2: int) -> float:
    """Two-sided Fisher p-value by doubling the smaller one-sided tail (capped at 1)."""
    return min(1.0, 2.0 * min(fisher_less(x1, n1, x2, n2), fisher_greater(x1, n1, x2, n2)))


# -- stratified exact test -------------------------------------------------------


class Stratum(NamedTuple):
    """One input (or case): passes and runs of group 1 and of group 2."""

    x1: int
    n1: int
    x2: int
    n2: int


def _stratum_pmf(s: Stratum) -> tuple[int, list[float]]:
    total = s.x1 + s.x2
    low = max(0, total - s.n2)
    high = min(s.n1, total)
    weights = [math.comb(s.n1, x) * math.comb(s.n2, total - x) for x in range(low, high + 1)]
    whole = sum(weights)
    return low, [w / whole for w in weights]


def _stratified_tails(strata: Sequence[Stratum]) -> tuple[float, float]:
    if not strata:
        raise ValueError("the stratified test needs at least one stratum")
    for s in strata:
        _check(s.x1, s.n1, "group 1")
        _check(s.x2, s.n2, "group 2")
    offset, pmf = 0, [1.0]
    for s in strata:
        low, part = _stratum_pmf(s)
        if len(part) == 1:  # a stratum without information (all pass or all fail)
            offset += low
            continue
        merged = [0.0] * (len(pmf) + len(part) - 1)
        for i, a in enumerate(pmf):
            if a == 0.0:
                continue
            for j, b in enumerate(part):
                merged[i + j] += a * b
        pmf = merged
        offset += low
    observed = sum(s.x1 for s in strata) - offset
    below = math.fsum(pmf[: observed + 1])
    above = math.fsum(pmf[observed:])
    return min(1.0, below), min(1.0, above)


def stratified_less(strata: Sequence[Stratum]) -> float:
    """Exact conditional p-value for group 1 worse, over strata (Birch 1964)."""
    return _stratified_tails(list(strata))[0]


def stratified_greater(strata: Sequence[Stratum]) -> float:
    return _stratified_tails(list(strata))[1]


def stratified_two_sided(strata: Sequence[Stratum]) -> float:
    below, above = _stratified_tails(list(strata))
    return min(1.0, 2.0 * min(below, above))


# -- Newcombe's interval ---------------------------------------------------------


def newcombe(
    x1: int, n1: int, x2: int, n2: int, lower_tail: float, upper_tail: float | None = None
) -> tuple[float, float]:
    """Newcombe's hybrid score interval for ``p1 - p2``.

    ``lower_tail`` and ``upper_tail`` are the one-sided error rates of the two
    bounds (``0.025`` each for a two-sided 95% interval); each bound is built
    from Wilson intervals at the two-sided level ``1 - 2 * tail``, so with
    equal tails this is statsmodels' ``confint_proportions_2indep(...,
    method="newcomb", alpha=2 * tail)``.
    """
    _check(x1, n1, "group 1")
    _check(x2, n2, "group 2")
    if upper_tail is None:
        upper_tail = lower_tail
    p1, p2 = x1 / n1, x2 / n2
    diff = p1 - p2
    low_level = _level(lower_tail)
    high_level = _level(upper_tail)
    l1, _ = stats.wilson(x1, n1, low_level)
    _, u2 = stats.wilson(x2, n2, low_level)
    _, u1 = stats.wilson(x1, n1, high_level)
    l2, _ = stats.wilson(x2, n2, high_level)
    low = diff - math.sqrt((p1 - l1) ** 2 + (u2 - p2) ** 2)
    high = diff + math.sqrt((u1 - p1) ** 2 + (p2 - l2) ** 2)
    return max(-1.0, low), min(1.0, high)


def mean_difference_interval(strata: Sequence[Stratum], tail: float) -> tuple[float, float, str]:
    """``(low, high, method)``: the interval of the mean of the per-stratum differences ``x1/n1 - x2/n2`` at
    one-sided error ``tail`` per bound, the strata taken as fixed: :func:`newcombe` for one stratum, else the
    Wald interval of the mean of Agresti-Caffo adjusted differences (``agresti-caffo-mean``)."""
    if len(strata) == 1:
        s = strata[0]
        low, high = newcombe(s.x1, s.n1, s.x2, s.n2, tail)
        return low, high, "newcombe"
    k = len(strata)
    centre = 0.0
    variance = 0.0
    for s in strata:
        q1 = (s.x1 + 1) / (s.n1 + 2)
        q2 = (s.x2 + 1) / (s.n2 + 2)
        centre += q1 - q2
        variance += q1 * (1 - q1) / (s.n1 + 2) + q2 * (1 - q2) / (s.n2 + 2)
    centre /= k
    half = -stats.normal_ppf(tail) * math.sqrt(variance) / k
    return max(-1.0, centre - half), min(1.0, centre + half), "agresti-caffo-mean"


def _level(tail: float) -> float:
    if not 0.0 < tail < 0.5:
        raise ValueError(f"a one-sided error rate must be in (0, 0.5), got {tail!r}")
    return 1.0 - 2.0 * tail


# -- multiplicity -----------------------------------------------------------------


class Adjusted(NamedTuple):
    """One hypothesis of a family after adjustment."""

    p_adjusted: float
    #: The level at which the procedure judged it: reject iff p <= local_level.
    local_level: float
    rejected: bool


def parse_adjustment(value: object) -> str:
    text = str(value).strip().lower()
    if text not in ADJUSTMENTS:
        raise ValueError(f"adjustment must be one of {', '.join(ADJUSTMENTS)}, got {value!r}")
    return text


def adjust(pvalues: Sequence[float], method: str, alpha: float) -> list[Adjusted]:
    """Adjust a family of p-values (in their given order).

    * ``holm``: Holm's step-down (1979). Adjusted ``p_(i) = max_{j<=i} min(1,
      (m-j+1) p_(j))``; local level ``alpha / (m - i + 1)`` for the ``i``-th
      smallest while every smaller one is rejected, and the level of the first
      non-rejected one for it and all after it.
    * ``bonferroni``: adjusted ``min(1, m p)``, local level ``alpha / m``.
    * ``bh``: Benjamini-Hochberg (1995) step-up: adjusted ``p_(i) = min_{j>=i}
      min(1, m p_(j) / j)``; with ``k`` rejections, local level ``k alpha / m``
      (``alpha / m`` when none), the level of Benjamini and Yekutieli's (2005)
      FCR-adjusted intervals.
    * ``none``: unchanged, local level ``alpha``.

    The adjusted p-values equal statsmodels' ``multipletests(p, method=
    {"holm", "bonferroni", "fdr_bh"})[1]``.
    """
    method = parse_adjustment(method)
    m = len(pvalues)
    if m == 0:
        return []
    for p in pvalues:
        if not 0.0 <= p <= 1.0 or math.isnan(p):
            raise ValueError(f"p-values must be in [0, 1], got {p!r}")
    if method == "none":
        return [Adjusted(p, alpha, p <= alpha) for p in pvalues]
    if method == "bonferroni":
        return [Adjusted(min(1.0, m * p), alpha / m, m * p <= alpha) for p in pvalues]
    order = sorted(range(m), key=lambda i: pvalues[i])
    adjusted = [0.0] * m
    local = [0.0] * m
    if method == "holm":
        running = 0.0
        stopped_level = None
        for rank, i in enumerate(order):
            running = max(running, min(1.0, (m - rank) * pvalues[i]))
            adjusted[i] = running
            level = alpha / (m - rank)
            if stopped_level is None and pvalues[i] > level:
                stopped_level = level
            local[i] = level if stopped_level is None else stopped_level
    else:  # bh
        running = 1.0
        for rank in range(m - 1, -1, -1):
            i = order[rank]
            running = min(running, min(1.0, m * pvalues[i] / (rank + 1)))
            adjusted[i] = running
        rejected = max((rank + 1 for rank, i in enumerate(order) if pvalues[i] <= (rank + 1) * alpha / m), default=0)
        level = max(rejected, 1) * alpha / m
        local = [level] * m
    return [Adjusted(adjusted[i], local[i], adjusted[i] <= alpha) for i in range(m)]


# -- sign-flip test over inputs ------------------------------------------------------

EXACT_SIGN_FLIP_INPUTS = 16
#: Monte Carlo sign patterns beyond EXACT_SIGN_FLIP_INPUTS inputs: the default of --prob-bootstrap.
SIGN_FLIP_RESAMPLES = 5_000


class SignFlip(NamedTuple):
    p_less: float
    p_greater: float
    exact: bool
    #: Means of the flipped subsets (one per sign pattern but the identity), sorted.
    means: tuple[float, ...]

    def interval(self, tail: float) -> tuple[float, float]:
        """Bounds not rejected by the one-sided tests at level ``tail`` each."""
        total = len(self.means) + 1  # the identity pattern always counts
        # p_greater(d) = (1 + #{t <= d}) / total > tail  <=>  #{t <= d} >= m
        m = max(0, math.floor(tail * total - 1 + 1e-12) + 1)
        if m == 0 or not self.means:
            return -math.inf, math.inf
        if m > len(self.means):
            return -math.inf, math.inf
        return self.means[m - 1], self.means[-m]


def sign_flip(differences: Sequence[tuple[int, int]], seed: int = 0, resamples: int = SIGN_FLIP_RESAMPLES) -> SignFlip:
    """Sign-flip test of ``mean(d) = 0`` for per-input differences ``d = num / den``.

    ``differences`` are exact fractions ``(numerator, denominator)``; the test
    statistic is the sum. ``p_less`` is ``P(S* <= S)`` and ``p_greater``
    ``P(S* >= S)`` over the sign patterns (ties counted, as
    ``scipy.stats.permutation_test(..., permutation_type="samples")``
    does): over all ``2**k`` patterns up to :data:`EXACT_SIGN_FLIP_INPUTS`
    inputs, else over ``resamples`` patterns drawn with ``random.Random(seed)``. Flipping a subset ``J`` moves the statistic below the observed one
    exactly when the mean of ``d`` over ``J`` is positive, which gives both
    the p-values and the inverted interval from the subset means.
    """
    if not differences:
        raise ValueError("the sign-flip test needs at least one input")
    denominator = 1
    for _, den in differences:
        denominator = denominator * den // math.gcd(denominator, den)
    nums = [num * (denominator // den) for num, den in differences]
    k = len(nums)
    patterns: Iterable[int]
    if k <= EXACT_SIGN_FLIP_INPUTS:
        patterns = range(1, 2**k)
        exact = True
    else:
        rng = random.Random(seed)
        drawn: list[int] = []
        if resamples < 1:
            raise ValueError(f"the sign-flip test needs at least one resample, got {resamples}")
        while len(drawn) < resamples:
            pattern = rng.getrandbits(k)
            if pattern:  # the identity is counted once, below
                drawn.append(pattern)
        patterns = drawn
        exact = False
    below = above = 1  # the identity pattern: S* = S
    means: list[float] = []
    for pattern in patterns:
        flipped = [nums[i] for i in range(k) if pattern >> i & 1]
        total = sum(flipped)
        # S* - S = -2 * sum(flipped): S* <= S iff the flipped sum is >= 0.
        below += total >= 0
        above += total <= 0
        means.append(total / (denominator * len(flipped)))
    count = len(means) + 1
    return SignFlip(min(1.0, below / count), min(1.0, above / count), exact, tuple(sorted(means)))


# -- planning ----------------------------------------------------------------------


def runs_to_detect(
    rate: float, drop: float, baseline_runs_factor: float, tail: float, power: float, max_runs: int = 100_000
) -> int | None:
    """Runs per night to detect ``rate -> rate - drop`` with ``power`` at one-sided level ``tail``.

    Normal approximation to the two-proportion test with tonight's ``n`` runs
    against a baseline of ``baseline_runs_factor * n`` runs (7 for a 7-night
    baseline, 1 for an A/B arm): the smallest ``n`` with
    ``z_tail * sqrt(pbar qbar (1/n + 1/(f n))) + z_power * sqrt(p1 q1 / n + p2 q2 / (f n)) <= drop``.
    None when even ``max_runs`` is not enough (or the drop is not a drop).
    """
    p2 = float(rate)
    p1 = p2 - float(drop)
    if not (0.0 <= p1 < p2 <= 1.0):
        return None
    f = float(baseline_runs_factor)
    z_a = -stats.normal_ppf(tail)
    z_b = -stats.normal_ppf(1.0 - power)
    pbar = (p1 + p2 * f) / (1.0 + f)

    def enough(n: int) -> bool:
        null_sd = math.sqrt(pbar * (1.0 - pbar) * (1.0 / n + 1.0 / (f * n)))
        alt_sd = math.sqrt(p1 * (1.0 - p1) / n + p2 * (1.0 - p2) / (f * n))
        return z_a * null_sd + z_b * alt_sd <= drop

    return stats.smallest_enough(enough, max_runs)


def binom_cdf_le(k: int, n: int, p: float) -> float:
    """P(X <= k) for X ~ Binomial(n, p): ``I_{1-p}(n - k, k + 1)``, accurate in the far tail."""
    if k < 0:
        return 0.0
    if k >= n or p <= 0.0:
        return 1.0
    if p >= 1.0:
        return 0.0
    return stats.regularized_beta(1.0 - p, n - k, k + 1)


def sign_test_less(worse: int, better: int) -> float:
    """Exact one-sided sign test of discordant pairs: P(X <= better), X ~ Binomial(worse + better, 1/2).

    Equals ``scipy.stats.binomtest(better, worse + better, 0.5, alternative="less").pvalue``.
    """
    if worse + better == 0:
        return 1.0
    return binom_cdf_le(better, worse + better, 0.5)


def mean(values: Iterable[float]) -> float:
    values = list(values)
    return math.fsum(values) / len(values)
