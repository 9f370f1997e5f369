"""Planning an A/B comparison over inputs (Miller 2024): the inputs and runs per input a difference needs.

Pure and standard-library only. Every public function validates its arguments (:mod:`checks`).

Evan Miller, "Adding Error Bars to Evals: A Statistical Approach to Language
Model Evaluations" (2024, arXiv:2411.00640) treats the inputs (questions) as
a sample from a super-population. Input ``i`` has a true pass rate ``p_i``
in each arm; ``k`` runs of it give the fraction ``s_i`` with
``Var(s_i) = Var(p) + E[p (1 - p)] / k``, so the mean of ``n`` inputs has

    ``Var(mean) = (sigma_b**2 + sigma_w**2 / k) / n``                (Miller, section 3.1)

with the *between-input* variance ``sigma_b**2 = Var(p_i)`` and the
*within-input* variance ``sigma_w**2 = E[p_i (1 - p_i)]``. A paired A/B over
the same inputs compares the per-input differences ``d_i = s_A,i - s_B,i``
(Miller, section 4): ``Var_b(d) = sigma_b,A**2 + sigma_b,B**2 - 2 cov_AB``
and

    ``Var(mean d) = (Var_b(d) + sigma_w,A**2 / k_A + sigma_w,B**2 / k_B) / n``.

The number of inputs needed to detect a difference ``delta`` with a
two-sided level ``alpha`` test and power ``1 - beta`` is the standard
one-sample (paired) normal power formula applied to that variance (Miller,
section 5; e.g. Chow, Shao & Wang, *Sample Size Calculations in Clinical
Research*, section 3.1):

    ``n = (z_{1 - alpha/2} + z_{1 - beta})**2 * Var_1 / delta**2``, rounded up,

``Var_1 = Var_b(d) + sigma_w,A**2 / k_A + sigma_w,B**2 / k_B`` being the
per-input variance of the difference. More runs per input shrink only the
within term: the floor ``Var_b(d) / n`` stays, and from some ``k`` on more
inputs, not more runs, are what narrows the interval
(:func:`runs_stop_helping`, :func:`tradeoff`, :func:`tradeoff_statement`).

* :func:`arm_components`, :func:`paired_components`, :func:`paired_correlation`:
  the components estimated from one report's per-input counts;
  :func:`assumed_components` builds them from assumed numbers.
* :func:`variance_of_mean`, :func:`variance_of_difference`,
  :func:`inputs_needed`, :func:`ab_power`, :func:`detectable_difference`,
  :func:`inputs_floor`.

The planner uses the normal approximation; the test the plugin runs on an A/B
with at least 10 inputs is the sign-flip test over the inputs
(:func:`twostats.sign_flip`), which it approximates well from a few dozen
inputs on (``benchmarks/planner_power.py`` measures how well). Clustered
inputs (several inputs sharing a passage, Miller section 2.2) are not
modelled: each input is its own cluster.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import NamedTuple

from . import stats
from .checks import nonnegative, open_unit, real, whole

#: Runs per input listed by :func:`tradeoff` (1, 2, 5, 10, 20, ...).
AB_RUNS: tuple[int, ...] = (1, 2, 5, 10, 20, 50, 100)


class ArmEstimate(NamedTuple):
    """One arm's variance components, estimated from its per-input counts (Miller 2024, section 3.1).

    ``mean`` is the mean of the per-input pass fractions (each input weighs
    the same, as in the plugin's A/B difference). ``between`` is
    ``sigma_b**2``, the variance of the inputs' true pass rates, floored at 0
    (``between_raw`` unfloored); ``within`` is ``sigma_w**2 = E[p (1 - p)]``,
    the variance of one run of an input around its rate, averaged over the
    inputs.
    """

    inputs: int
    runs: int
    mean: float
    between: float
    within: float
    between_raw: float


class Components(NamedTuple):
    """The variance components of a paired per-input difference ``d = s_A - s_B``.

    ``between`` is ``Var_b(d) = sigma_b,A**2 + sigma_b,B**2 - 2 cov_AB``, the
    variance of the inputs' true differences (>= 0); ``within_a``,
    ``within_b`` are the arms' within-input variances ``sigma_w**2``.
    """

    between: float
    within_a: float
    within_b: float


class PairedEstimate(NamedTuple):
    """A paired A/B's components estimated from one report (Miller 2024, sections 3.1 and 4).

    ``covariance`` is the sample covariance of the per-input fractions, an
    unbiased estimate of the covariance of the true rates (the arms' runs are
    independent given the input). ``correlation`` is the Pearson correlation
    of the per-input fractions (:func:`paired_correlation`: what the A/B line
    shows); ``rate_correlation`` that of the true rates, ``cov /
    sqrt(sigma_b,A**2 sigma_b,B**2)`` clamped to [-1, 1] (``None`` when an
    arm's ``between`` is 0): the fractions' correlation is diluted by the
    within-input noise.
    """

    inputs: int
    a: ArmEstimate
    b: ArmEstimate
    covariance: float
    correlation: float | None
    rate_correlation: float | None
    components: Components


class TradeoffRow(NamedTuple):
    """Runs per input ``runs``: the inputs needed, the runs that costs (both arms), and how much doubling
    the runs per input would narrow the interval (:func:`narrowing`)."""

    runs: int
    inputs: int
    total_runs: int
    narrowing: float


def _counts(counts: object, name: str) -> list[tuple[int, int]]:
    if isinstance(counts, (str, bytes)) or not isinstance(counts, Sequence):
        raise TypeError(f"{name} must be a sequence of (passes, runs) per input, got {counts!r}")
    result = []
    for i, item in enumerate(counts):
        try:
            passes, runs = item
        except (TypeError, ValueError):
            raise TypeError(f"{name}[{i}] must be a pair (passes, runs), got {item!r}") from None
        runs = whole(runs, f"{name}[{i}] runs", 2)
        passes = whole(passes, f"{name}[{i}] passes", 0)
        if passes > runs:
            raise ValueError(f"{name}[{i}]: passes must be between 0 and runs={runs}, got {passes}")
        result.append((passes, runs))
    if len(result) < 2:
        raise ValueError(f"{name} needs at least 2 inputs to estimate a variance between them, got {len(result)}")
    return result


def _sample_variance(values: Sequence[float]) -> float:
    centre = math.fsum(values) / len(values)
    return math.fsum((v - centre) ** 2 for v in values) / (len(values) - 1)


def _arm(counts: list[tuple[int, int]]) -> ArmEstimate:
    fractions = [x / k for x, k in counts]
    # Unbiased per-input variance of one run: k/(k-1) * p(1-p) (the sample variance of its 0/1 outcomes).
    within_i = [k / (k - 1) * (x / k) * (1 - x / k) for x, k in counts]
    # Var(s_i) = sigma_b**2 + sigma_i**2 / k_i, so subtract the mean of sigma_i**2 / k_i = p(1-p)/(k-1).
    noise = math.fsum(w / k for w, (_, k) in zip(within_i, counts, strict=False)) / len(counts)
    raw = _sample_variance(fractions) - noise
    return ArmEstimate(
        inputs=len(counts),
        runs=sum(k for _, k in counts),
        mean=math.fsum(fractions) / len(fractions),
        between=max(0.0, raw),
        within=math.fsum(within_i) / len(within_i),
        between_raw=raw,
    )


def arm_components(counts: Sequence[tuple[int, int]]) -> ArmEstimate:
    """One arm's ``sigma_b**2`` and ``sigma_w**2`` from per-input ``(passes, runs)`` (Miller 2024, section 3.1).

    With ``s_i = x_i / k_i``: ``sigma_w**2`` is the mean over inputs of
    ``k_i / (k_i - 1) * s_i (1 - s_i)`` (unbiased for ``p_i (1 - p_i)``);
    ``sigma_b**2`` is the sample variance of the ``s_i`` (divisor ``n - 1``)
    minus the mean of ``s_i (1 - s_i) / (k_i - 1)`` (the run-to-run part of
    ``Var(s_i) = sigma_b**2 + p_i (1 - p_i) / k_i``), floored at 0. Both are
    unbiased before the floor, also with unequal runs per input; with equal
    ``k`` they are the one-way ANOVA (random effects) estimates
    ``(MSB - MSW) / k`` and ``MSW`` of the 0/1 outcomes grouped by input.
    Needs at least 2 inputs and 2 runs of every input (one run per input
    cannot tell the two components apart).
    """
    return _arm(_counts(counts, "counts"))


def _correlation(xs: Sequence[float], ys: Sequence[float]) -> float | None:
    mx = math.fsum(xs) / len(xs)
    my = math.fsum(ys) / len(ys)
    sxy = math.fsum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=False))
    sxx = math.fsum((x - mx) ** 2 for x in xs)
    syy = math.fsum((y - my) ** 2 for y in ys)
    if sxx == 0.0 or syy == 0.0:
        return None
    return max(-1.0, min(1.0, sxy / math.sqrt(sxx * syy)))


def _paired_counts(counts_a: object, counts_b: object) -> tuple[list[tuple[int, int]], list[tuple[int, int]]]:
    a = _counts(counts_a, "counts_a")
    b = _counts(counts_b, "counts_b")
    if len(a) != len(b):
        raise ValueError(f"a paired A/B needs the same inputs in both arms, got {len(a)} and {len(b)}")
    return a, b


def paired_correlation(counts_a: Sequence[tuple[int, int]], counts_b: Sequence[tuple[int, int]]) -> float | None:
    """Pearson correlation of the two arms' per-input pass fractions, paired by position (the A/B line's
    correlation; Miller 2024, section 4: the higher it is, the more pairing narrows the interval).
    ``None`` when an arm's fractions are all equal."""
    a, b = _paired_counts(counts_a, counts_b)
    return _correlation([x / k for x, k in a], [x / k for x, k in b])


def paired_components(counts_a: Sequence[tuple[int, int]], counts_b: Sequence[tuple[int, int]]) -> PairedEstimate:
    """Both arms' components and their covariance from per-input counts, paired by position.

    ``Var_b(d)`` is estimated directly from the per-input differences, the
    sample variance of ``s_A,i - s_B,i`` minus the mean run-to-run part of
    both arms, and floored at 0 once (equal to ``sigma_b,A**2 + sigma_b,B**2 -
    2 cov`` with the unfloored components). Miller 2024, sections 3.1 and 4.
    """
    a_counts, b_counts = _paired_counts(counts_a, counts_b)
    a, b = _arm(a_counts), _arm(b_counts)
    fa = [x / k for x, k in a_counts]
    fb = [x / k for x, k in b_counts]
    ma, mb = math.fsum(fa) / len(fa), math.fsum(fb) / len(fb)
    covariance = math.fsum((x - ma) * (y - mb) for x, y in zip(fa, fb, strict=False)) / (len(fa) - 1)
    between = a.between_raw + b.between_raw - 2.0 * covariance
    rate_correlation = None
    if a.between > 0.0 and b.between > 0.0:
        rate_correlation = max(-1.0, min(1.0, covariance / math.sqrt(a.between * b.between)))
    return PairedEstimate(
        inputs=len(a_counts),
        a=a,
        b=b,
        covariance=covariance,
        correlation=_correlation(fa, fb),
        rate_correlation=rate_correlation,
        components=Components(max(0.0, between), a.within, b.within),
    )


def assumed_components(
    between_a: float, between_b: float, within_a: float, within_b: float, correlation: float
) -> Components:
    """Components from assumed numbers: each arm's ``sigma_b**2`` and ``sigma_w**2`` and the correlation of the
    true rates, ``Var_b(d) = sigma_b,A**2 + sigma_b,B**2 - 2 rho sigma_b,A sigma_b,B``. For a rate ``p`` and an
    intra-class correlation ``icc``: ``sigma_b**2 = icc p (1 - p)``, ``sigma_w**2 = (1 - icc) p (1 - p)``."""
    between_a = nonnegative(between_a, "between_a")
    between_b = nonnegative(between_b, "between_b")
    within_a = nonnegative(within_a, "within_a")
    within_b = nonnegative(within_b, "within_b")
    rho = real(correlation, "correlation")
    if not -1.0 <= rho <= 1.0:
        raise ValueError(f"correlation must be between -1 and 1, got {correlation!r}")
    between = between_a + between_b - 2.0 * rho * math.sqrt(between_a * between_b)
    return Components(max(0.0, between), within_a, within_b)


def _components(components: object) -> Components:
    if isinstance(components, PairedEstimate):
        return components.components
    if not isinstance(components, Components):
        raise TypeError(f"components must be Components (or a PairedEstimate), got {components!r}")
    return Components(
        nonnegative(components.between, "between"),
        nonnegative(components.within_a, "within_a"),
        nonnegative(components.within_b, "within_b"),
    )


def variance_of_mean(arm: ArmEstimate, inputs: int, runs: int) -> float:
    """Variance of one arm's mean pass rate over ``inputs`` inputs with ``runs`` runs each:
    ``(sigma_b**2 + sigma_w**2 / runs) / inputs`` (Miller 2024, section 3.1)."""
    if not isinstance(arm, ArmEstimate):
        raise TypeError(f"arm must be an ArmEstimate, got {arm!r}")
    inputs = whole(inputs, "inputs", 1)
    runs = whole(runs, "runs", 1)
    return (arm.between + arm.within / runs) / inputs


def per_input_variance(components: Components, runs: int, runs_b: int | None = None) -> float:
    """``Var_1``, the variance of one input's observed difference: ``Var_b(d) + sigma_w,A**2 / runs +
    sigma_w,B**2 / runs_b`` (``runs_b`` defaults to ``runs``)."""
    c = _components(components)
    runs = whole(runs, "runs", 1)
    runs_b = runs if runs_b is None else whole(runs_b, "runs_b", 1)
    return c.between + c.within_a / runs + c.within_b / runs_b


def variance_of_difference(components: Components, inputs: int, runs: int, runs_b: int | None = None) -> float:
    """``Var(mean d) = (Var_b(d) + sigma_w,A**2 / k_A + sigma_w,B**2 / k_B) / n`` for ``n = inputs`` paired
    inputs with ``k_A = runs`` and ``k_B = runs_b`` (default ``runs``) runs each (Miller 2024, section 4)."""
    inputs = whole(inputs, "inputs", 1)
    return per_input_variance(components, runs, runs_b) / inputs


def _z_sum(alpha: object, power: object) -> float:
    alpha = open_unit(alpha, "alpha")
    power = open_unit(power, "power")
    if power <= alpha / 2.0:
        raise ValueError(f"power must exceed alpha / 2 = {alpha / 2:g} (the test's own chance), got {power!r}")
    # z_{1 - alpha/2} + z_{1 - beta}, each as an upper quantile (no rounding of 1 - alpha/2).
    return -stats.normal_ppf(alpha / 2.0) + stats.normal_ppf(power)


def _phi(x: float) -> float:
    return 0.5 * math.erfc(-x / math.sqrt(2.0))


def _delta(delta: object) -> float:
    delta = real(delta, "delta")
    if not 0.0 < delta <= 1.0:
        raise ValueError(f"delta (the difference in pass rate to detect) must be in (0, 1], got {delta!r}")
    return delta


def _power(shift: float, z: float) -> float:
    """Two-sided z-test power for a true shift of ``shift`` standard errors at critical value ``z``."""
    return _phi(shift - z) + _phi(-shift - z)


def ab_power(
    components: Components, delta: float, inputs: int, runs: int, alpha: float = 0.05, runs_b: int | None = None
) -> float:
    """The chance the two-sided level-``alpha`` z-test of the mean difference detects a true difference ``delta``
    with ``inputs`` paired inputs and ``runs`` runs each: ``Phi(delta / se - z) + Phi(-delta / se - z)`` with
    ``se = sqrt(variance_of_difference)`` and ``z = z_{1 - alpha/2}`` (both tails, as statsmodels'
    ``NormalIndPower(ratio=0)``). 1 when the variance is 0."""
    delta = _delta(delta)
    alpha = open_unit(alpha, "alpha")
    variance = variance_of_difference(components, inputs, runs, runs_b)
    if variance == 0.0:
        return 1.0
    return _power(delta / math.sqrt(variance), -stats.normal_ppf(alpha / 2.0))


def inputs_needed(
    components: Components, delta: float, runs: int, alpha: float = 0.05, power: float = 0.8, runs_b: int | None = None
) -> int:
    """The paired inputs needed to detect ``delta`` with ``power`` at two-sided level ``alpha``, ``runs`` runs each.

    ``n = ceil((z_{1 - alpha/2} + z_{1 - beta})**2 * Var_1 / delta**2)`` (Miller 2024, section 5; the standard
    paired / one-sample power formula with the per-input variance of the difference
    :func:`per_input_variance`), then moved by whole inputs so that it is exactly the smallest ``n`` with
    :func:`ab_power` >= ``power`` (whose far tail the closed form leaves out; float rounding at an integer).
    At least 1. The plugin's A/B test over inputs needs at least 10 of them (``features.compare.comparisons.MIN_INPUTS``).
    """
    delta = _delta(delta)
    z = _z_sum(alpha, power)
    var1 = per_input_variance(components, runs, runs_b)
    if var1 == 0.0:
        return 1
    n = max(1, math.ceil(z * z * var1 / (delta * delta)))
    while n > 1 and ab_power(components, delta, n - 1, runs, alpha, runs_b) >= power:
        n -= 1
    while ab_power(components, delta, n, runs, alpha, runs_b) < power:
        n += 1
    return n


def detectable_difference(
    components: Components, inputs: int, runs: int, alpha: float = 0.05, power: float = 0.8, runs_b: int | None = None
) -> float:
    """The minimum detectable difference: the ``delta`` that ``inputs`` inputs with ``runs`` runs each detect
    with ``power`` at two-sided level ``alpha`` (Miller 2024, section 5).

    Miller's closed form is ``(z_{1 - alpha/2} + z_{1 - beta}) * sqrt(Var(mean d))``; it leaves out the far
    tail of the two-sided test, so the difference returned is the root of :func:`ab_power` = ``power``
    (bisection below the closed form), which keeps it consistent with :func:`inputs_needed`: ``n`` inputs
    detect ``delta`` exactly when this is at most ``delta``. It may exceed 1 (nothing that small is
    detectable); 0 when the variance is 0.
    """
    total = _z_sum(alpha, power)
    se = math.sqrt(variance_of_difference(components, inputs, runs, runs_b))
    if se == 0.0:
        return 0.0
    z = -stats.normal_ppf(open_unit(alpha, "alpha") / 2.0)
    low, high = 0.0, total  # in standard errors: _power(high) >= power
    for _ in range(200):
        mid = 0.5 * (low + high)
        if mid in (low, high):
            break
        if _power(mid, z) >= power:
            high = mid
        else:
            low = mid
    return high * se


def inputs_floor(components: Components, delta: float, alpha: float = 0.05, power: float = 0.8) -> int:
    """The inputs needed however many runs each gets: ``ceil(z**2 Var_b(d) / delta**2)`` (the limit of
    :func:`inputs_needed` as the runs grow); 1 when ``Var_b(d) = 0``."""
    c = _components(components)
    delta = _delta(delta)
    z = _z_sum(alpha, power)
    return max(1, math.ceil(z * z * c.between / (delta * delta)))


def narrowing(components: Components, runs: int) -> float:
    """How much doubling the runs per input from ``runs`` narrows the interval of the mean difference, as a
    fraction of its width: ``1 - sqrt(Var_1(2 runs) / Var_1(runs))``, the same for every number of inputs.
    At most ``1 - 1/sqrt(2)`` (29%, with no between-input variance); 0 with no within-input variance."""
    c = _components(components)
    runs = whole(runs, "runs", 1)
    now = per_input_variance(c, runs)
    if now == 0.0:
        return 0.0
    return 1.0 - math.sqrt(per_input_variance(c, 2 * runs) / now)


def runs_stop_helping(components: Components, threshold: float = 0.1) -> int | None:
    """The runs per input from which doubling them narrows the interval by less than ``threshold`` (10%).

    With ``B = Var_b(d)`` and ``W = sigma_w,A**2 + sigma_w,B**2`` the width
    goes as ``sqrt(B + W / k)``; doubling ``k`` narrows it by less than ``t``
    when ``B + W / (2k) > (1 - t)**2 (B + W / k)``, i.e. for
    ``k > W ((1 - t)**2 - 1/2) / (B (1 - (1 - t)**2))`` (1.63 ``W / B`` at
    10%): from there the floor ``B / n`` dominates and more inputs, not more
    runs, are needed. The smallest such integer ``k >= 1``, checked against
    :func:`narrowing`. ``None`` when ``B = 0`` and ``threshold`` is below
    ``1 - 1/sqrt(2)``: then every doubling still narrows it by 29%.
    """
    c = _components(components)
    t = open_unit(threshold, "threshold")
    keep = (1.0 - t) ** 2
    w = c.within_a + c.within_b
    if w == 0.0 or keep <= 0.5:
        return 1  # doubling can never narrow it by t: with no within variance, or t >= 29%
    if c.between == 0.0:
        return None
    k = max(1, math.floor(w * (keep - 0.5) / (c.between * (1.0 - keep))))
    while k > 1 and narrowing(c, k - 1) < t:
        k -= 1
    while narrowing(c, k) >= t:
        k += 1
    return k


def tradeoff(
    components: Components, delta: float, alpha: float = 0.05, power: float = 0.8, runs: Sequence[int] = AB_RUNS
) -> list[TradeoffRow]:
    """For each runs per input ``k`` in ``runs`` (1, 2, 5, 10, 20, 50, 100): the inputs :func:`inputs_needed`,
    the total runs ``2 n k`` (both arms), and :func:`narrowing` at ``k``."""
    if isinstance(runs, (str, bytes)) or not isinstance(runs, Sequence) or not runs:
        raise ValueError(f"runs must be a non-empty sequence of runs per input, got {runs!r}")
    rows = []
    for k in runs:
        n = inputs_needed(components, delta, k, alpha, power)
        rows.append(TradeoffRow(k, n, 2 * n * k, narrowing(components, k)))
    return rows


def tradeoff_statement(
    components: Components,
    delta: float,
    alpha: float = 0.05,
    power: float = 0.8,
    threshold: float = 0.1,
    runs: Sequence[int] = AB_RUNS,
) -> str:
    """A plain statement of the trade between runs per input and inputs, for the estimated components.

    For ``assumed_components(0.0375, 0.0375, 0.15, 0.15, 0.6)`` (pass rates near 0.75, ICC 0.2, arms
    correlated 0.6) and ``delta=0.05``: ``To detect a difference of 5 points with 80% power (two-sided 5%):
    1 run per input needs 1,037 inputs, 2 runs 566, 5 runs 283, 10 runs 189, 20 runs 142, 50 runs 114,
    100 runs 104. From 17 runs per input on, doubling them narrows the interval by less than 10%: the
    inputs' own differences dominate, so add inputs instead; however many runs, at least 95 inputs.``
    """
    c = _components(components)
    rows = tradeoff(c, delta, alpha, power, runs)
    alpha = open_unit(alpha, "alpha")
    parts = []
    for i, row in enumerate(rows):
        noun = (
            ("run per input" if row.runs == 1 else "runs per input") if i == 0 else ("run" if row.runs == 1 else "runs")
        )
        verb = " needs" if i == 0 else ""
        plural = "input" if row.inputs == 1 else "inputs"
        parts.append(f"{row.runs} {noun}{verb} {row.inputs:,}" + (f" {plural}" if i == 0 else ""))
    text = (
        f"To detect a difference of {_delta(delta) * 100:g} points with {stats.format_rate(power)} power "
        f"(two-sided {stats.format_rate(alpha)}): " + ", ".join(parts) + "."
    )
    stop = runs_stop_helping(c, threshold)
    if stop is None:
        text += (
            " The inputs' true differences don't vary, so more runs per input keep paying: each doubling "
            "narrows the interval by about 29%."
        )
        return text
    plural = "run" if stop == 1 else "runs"
    text += (
        f" From {stop} {plural} per input on, doubling them narrows the interval by less than "
        f"{stats.format_rate(threshold)}: the inputs' own differences dominate, so add inputs instead"
    )
    floor = inputs_floor(c, delta, alpha, power)
    text += f"; however many runs, at least {floor:,} input{'s' if floor != 1 else ''}."
    return text
