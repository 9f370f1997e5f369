"""Statistics used by pytest-probability.

Pure, standard-library-only helpers (no pytest, numpy or scipy needed at run
time).  Every public function validates its arguments and raises
:class:`ValueError` (or :class:`TypeError` for a wrong type) with a message
that names the offending value.

Contents
--------

Binomial intervals for ``k`` passes out of ``n`` runs at a two-sided
``confidence`` level (``0 < confidence < 1``), each returning ``(low, high)``:

* :func:`clopper_pearson` -- exact (conservative) interval,
* :func:`wilson` -- Wilson score interval without continuity correction,
* :func:`beta_credible` -- equal-tailed Bayesian credible interval of the
  ``Beta(a + k, b + n - k)`` posterior,
* :func:`interval` -- dispatch on ``"exact" | "wilson" | "bayes"``.

They rest on the numerical building blocks :func:`regularized_beta` (the
regularized incomplete beta function ``I_x(a, b)``), :func:`beta_ppf` /
:func:`beta_isf` (its inverse) and :func:`normal_ppf` (standard normal
quantile), all implemented here to (close to) full double precision.

Gate helpers: :func:`runs_needed` and :func:`verdict`.

Distribution-free latency quantiles: :func:`quantile_interval` (and the
underlying :func:`quantile_ranks` and :func:`sample_quantile`).

pass^k / pass@k: :func:`pass_hat_k`, :func:`pass_at_k`, :func:`parse_metric`,
:func:`parse_metrics`.

Parsing and formatting: :func:`parse_confidence`, :func:`parse_prior`,
:func:`parse_method`, :func:`format_percent_interval`.
"""

from __future__ import annotations

import math
import operator
import re
from collections.abc import Callable, Iterable, Sequence
from functools import lru_cache
from typing import NamedTuple, SupportsFloat, SupportsIndex, cast

__all__ = [
    "METHODS",
    "QuantileEstimate",
    "beta_credible",
    "beta_isf",
    "beta_ppf",
    "clopper_pearson",
    "format_percent_interval",
    "interval",
    "log_incomplete_beta",
    "normal_ppf",
    "parse_confidence",
    "parse_method",
    "parse_metric",
    "parse_metrics",
    "parse_prior",
    "pass_at_k",
    "pass_hat_k",
    "quantile_interval",
    "quantile_ranks",
    "regularized_beta",
    "runs_needed",
    "sample_quantile",
    "verdict",
    "wilson",
]

#: Valid interval method names, in the order they are listed in messages.
METHODS: tuple[str, ...] = ("exact", "wilson", "bayes")

_EPS = 2.220446049250313e-16  # sys.float_info.epsilon
_TINY = 1e-300  # modified Lentz: stand-in for a zero denominator
_CF_MAX_ITER = 1_000_000  # continued fraction; needs O(sqrt(max(a, b)))
_SOLVER_MAX_ITER = 400  # beta quantile solver; even pure bisection needs < 200 steps
_MIN_SUBNORMAL = 5e-324

# ---------------------------------------------------------------------------
# Argument validation (shared)
# ---------------------------------------------------------------------------


def as_int(value: object, name: str) -> int:
    """Return *value* as an ``int``; bools and non-integers are rejected."""
    if isinstance(value, bool):
        raise TypeError(f"{name} must be an integer, got {value!r}")
    try:
        # operator.index is the check: anything without __index__ raises the TypeError caught here
        return operator.index(cast(SupportsIndex, value))
    except TypeError:
        raise TypeError(f"{name} must be an integer, got {value!r}") from None


def as_real(value: object, name: str) -> float:
    """Return *value* as a finite ``float`` (strings and bools rejected)."""
    if isinstance(value, (bool, str, bytes)):
        raise TypeError(f"{name} must be a number, got {value!r}")
    try:
        # float() is the check: anything it cannot convert raises the TypeError or ValueError caught here
        result = float(cast(SupportsFloat, value))
    except (TypeError, ValueError):
        raise TypeError(f"{name} must be a number, got {value!r}") from None
    if not math.isfinite(result):
        raise ValueError(f"{name} must be finite, got {value!r}")
    return result


def _check_counts(k: object, n: object) -> tuple[int, int]:
    n_ = as_int(n, "n")
    k_ = as_int(k, "k")
    if n_ < 1:
        raise ValueError(f"n (number of runs) must be >= 1, got {n!r}")
    if not 0 <= k_ <= n_:
        raise ValueError(f"k (number of passes) must be between 0 and n={n_}, got {k!r}")
    return k_, n_


def _check_confidence(confidence: object) -> float:
    if isinstance(confidence, str):
        raise TypeError(
            f"confidence must be a number, got the string {confidence!r}; use parse_confidence() to convert text"
        )
    return parse_confidence(confidence)


def _check_prior(prior: object) -> tuple[float, float]:
    if isinstance(prior, str):
        raise TypeError(f"prior must be a pair of numbers, got the string {prior!r}; use parse_prior() to convert text")
    return parse_prior(prior)


def _check_shape(a: float, b: float) -> None:
    if not (a > 0 and b > 0 and math.isfinite(a) and math.isfinite(b)):
        raise ValueError(f"beta shape parameters must be positive and finite, got a={a!r}, b={b!r}")


def _check_probability(p: object, name: str) -> float:
    p_ = as_real(p, name)
    if not 0.0 <= p_ <= 1.0:
        raise ValueError(f"{name} must be between 0 and 1, got {p!r}")
    return p_


# ---------------------------------------------------------------------------
# Standard normal quantile
# ---------------------------------------------------------------------------


def normal_ppf(p: float) -> float:
    """Quantile (inverse CDF) of the standard normal distribution.

    Wichura's algorithm AS241 (PPND16, Applied Statistics 37(3), 1988), whose
    rational approximations are accurate to about 1e-16 relative, so no
    refinement step is needed.  ``normal_ppf(0) == -inf`` and
    ``normal_ppf(1) == inf``.  For an upper quantile ``z_{1-a}`` prefer
    ``-normal_ppf(a)``, which avoids rounding ``1 - a``.
    """
    p = _check_probability(p, "p")
    if p == 0.0:
        return -math.inf
    if p == 1.0:
        return math.inf
    q = p - 0.5
    if abs(q) <= 0.425:
        r = 0.180625 - q * q
        num = (
            (
                (
                    (
                        (
                            ((2.5090809287301226727e3 * r + 3.3430575583588128105e4) * r + 6.7265770927008700853e4) * r
                            + 4.5921953931549871457e4
                        )
                        * r
                        + 1.3731693765509461125e4
                    )
                    * r
                    + 1.9715909503065514427e3
                )
                * r
                + 1.3314166789178437745e2
            )
            * r
            + 3.3871328727963666080e0
        ) * q
        den = (
            (
                (
                    (
                        ((5.2264952788528545610e3 * r + 2.8729085735721942674e4) * r + 3.9307895800092710610e4) * r
                        + 2.1213794301586595867e4
                    )
                    * r
                    + 5.3941960214247511077e3
                )
                * r
                + 6.8718700749205790830e2
            )
            * r
            + 4.2313330701600911252e1
        ) * r + 1.0
        return num / den
    r = p if q <= 0.0 else 1.0 - p
    r = math.sqrt(-math.log(r))
    if r <= 5.0:
        r -= 1.6
        num = (
            (
                (
                    (
                        ((7.74545014278341407640e-4 * r + 2.27238449892691845833e-2) * r + 2.41780725177450611770e-1)
                        * r
                        + 1.27045825245236838258e0
                    )
                    * r
                    + 3.64784832476320460504e0
                )
                * r
                + 5.76949722146069140550e0
            )
            * r
            + 4.63033784615654529590e0
        ) * r + 1.42343711074968357734e0
        den = (
            (
                (
                    (
                        ((1.05075007164441684324e-9 * r + 5.47593808499534494600e-4) * r + 1.51986665636164571966e-2)
                        * r
                        + 1.48103976427480074590e-1
                    )
                    * r
                    + 6.89767334985100004550e-1
                )
                * r
                + 1.67638483018380384940e0
            )
            * r
            + 2.05319162663775882187e0
        ) * r + 1.0
    else:
        r -= 5.0
        num = (
            (
                (
                    (
                        ((2.01033439929228813265e-7 * r + 2.71155556874348757815e-5) * r + 1.24266094738807843860e-3)
                        * r
                        + 2.65321895265761230930e-2
                    )
                    * r
                    + 2.96560571828504891230e-1
                )
                * r
                + 1.78482653991729133580e0
            )
            * r
            + 5.46378491116411436990e0
        ) * r + 6.65790464350110377720e0
        den = (
            (
                (
                    (
                        ((2.04426310338993978564e-15 * r + 1.42151175831644588870e-7) * r + 1.84631831751005468180e-5)
                        * r
                        + 7.86869131145613259100e-4
                    )
                    * r
                    + 1.48753612908506148525e-2
                )
                * r
                + 1.36929880922735805310e-1
            )
            * r
            + 5.99832206555887937690e-1
        ) * r + 1.0
    x = num / den
    return -x if q < 0.0 else x


# ---------------------------------------------------------------------------
# Regularized incomplete beta function and its inverse
# ---------------------------------------------------------------------------


_HALF_LOG_2PI = 0.9189385332046728  # log(2 * pi) / 2


def _stirling_correction(x: float) -> float:
    """``lgamma(x) - ((x - 1/2) log x - x + log(2 pi)/2)`` for ``x >= 10``.

    Asymptotic series with Bernoulli-number coefficients; the first omitted
    term is below 3e-17 at ``x = 10``.
    """
    r = 1.0 / x
    r2 = r * r
    return r * (
        1.0 / 12.0
        + r2
        * (
            -1.0 / 360.0
            + r2 * (1.0 / 1260.0 + r2 * (-1.0 / 1680.0 + r2 * (1.0 / 1188.0 + r2 * (-691.0 / 360360.0 + r2 / 156.0))))
        )
    )


def _lbeta(a: float, b: float) -> float:
    """``log B(a, b)`` accurate to a few ulps of its magnitude.

    Plain :func:`math.lgamma` sums lose about ``eps * b * log(b)`` absolute
    when a parameter is large (1e-11 at b = 1e4), which would limit the
    quantiles to ~1e-10 relative.  For large arguments the Stirling series is
    combined algebraically so that the large terms cancel exactly (as in
    TOMS 708 ``betaln``).
    """
    if a > b:
        a, b = b, a
    if b < 10.0:
        return math.lgamma(a) + math.lgamma(b) - math.lgamma(a + b)
    corr = _stirling_correction(b) - _stirling_correction(a + b)
    if a < 10.0:
        # lgamma(b) - lgamma(a + b) by Stirling, rearranged without cancellation.
        return math.lgamma(a) - (b - 0.5) * math.log1p(a / b) - a * math.log(a + b) + a + corr
    return (
        _HALF_LOG_2PI
        - 0.5 * math.log(b)
        + _stirling_correction(a)
        + corr
        + (a - 0.5) * math.log(a / (a + b))
        - b * math.log1p(a / b)
    )


def _log1mexp(x: float) -> float:
    """``log(1 - exp(x))`` for ``x <= 0``, accurate over the whole range."""
    if x > -0.6931471805599453:  # -log(2)
        return math.log(-math.expm1(x)) if x < 0.0 else -math.inf
    return math.log1p(-math.exp(x))


def _rlog1(e: float) -> float:
    """``e - log(1 + e)`` for ``e > -1``, accurate also for small ``|e|``.

    Uses ``log(1 + e) = 2 atanh(s)`` with ``s = e / (2 + e)``, so that
    ``e - log(1 + e) = e*s - 2*(s**3/3 + s**5/5 + ...)`` near 0.
    """
    if abs(e) > 0.25:
        return e - math.log1p(e)
    s = e / (2.0 + e)
    s2 = s * s
    term = s * s2
    total = 0.0
    k = 3.0
    while True:
        add = term / k
        total += add
        if abs(add) <= 1e-17 * abs(total):
            break
        term *= s2
        k += 2.0
    return e * s - 2.0 * total


def _log_front(x: float, a: float, b: float, lam: float) -> float:
    """``log(x**a * (1-x)**b / B(a, b))`` with ``lam = a - (a + b) * x``.

    For ``a, b >= 10`` the large terms are cancelled analytically as in
    TOMS 708 ``brcomp`` (Stirling for ``B`` and ``rlog1`` for the powers), so
    the absolute error is about ``eps * |lam|`` instead of ``eps * (a + b)``.
    """
    if a >= 10.0 and b >= 10.0:
        # log(x/x0) = log(1 + e1) and log(y/y0) = log(1 + e2) with x0 = a/(a+b),
        # y0 = b/(a+b); far from the mean use the ratios themselves (1 + e
        # would lose the digits of x or y).
        e1 = -lam / a
        u = _rlog1(e1) if abs(e1) <= 0.6 else e1 - math.log(x * (a + b) / a)
        e2 = lam / b
        v = _rlog1(e2) if abs(e2) <= 0.6 else e2 - math.log((1.0 - x) * (a + b) / b)
        return (
            -(a * u + b * v)
            + 0.5 * math.log(a * b / (a + b))
            - _HALF_LOG_2PI
            - (_stirling_correction(a) + _stirling_correction(b) - _stirling_correction(a + b))
        )
    return a * math.log(x) + b * math.log1p(-x) - _lbeta(a, b)


def _betacf(a: float, b: float, x: float, y: float, lam: float) -> float:
    """Continued fraction of ``I_x(a, b)``, evaluated with modified Lentz.

    Returns ``r`` with ``I_x(a, b) = x**a * y**b / B(a, b) * r`` where
    ``y = 1 - x`` and ``lam = a - (a + b) * x = (a + b) * y - b``; both are
    passed in so that the caller can compute them from whichever of ``x``,
    ``y`` is known exactly (the cancellation in ``lam`` is what makes the
    naive fraction ill-conditioned near ``x = 1``).  This is the even
    contraction used by TOMS 708 ``bfrac`` (DiDonato & Morris 1992); it
    converges quickly for ``x < (a + 1) / (a + b + 2)``, in a number of terms
    growing like ``sqrt(max(a, b))``.
    """
    c = 1.0 + lam
    c0 = b / a
    c1 = 1.0 + 1.0 / a
    yp1 = y + 1.0
    p = 1.0
    s = a + 1.0
    # Lentz for g = beta_0 + alpha_1/(beta_1 + alpha_2/(beta_2 + ...)); r = 1/g.
    f = c / c1
    if abs(f) < _TINY:
        f = _TINY
    big_c = f
    d = 0.0
    n = 0.0
    for _ in range(_CF_MAX_ITER):
        n += 1.0
        t = n / a
        w = n * (b - n) * x
        e = a / s
        alpha = p * (p + c0) * e * e * (w * x)
        e = (1.0 + t) / (c1 + t + t)
        beta = n + w / s + e * (c + n * yp1)
        p = 1.0 + t
        s += 2.0
        d = beta + alpha * d
        if abs(d) < _TINY:
            d = _TINY
        big_c = beta + alpha / big_c
        if abs(big_c) < _TINY:
            big_c = _TINY
        d = 1.0 / d
        delta = big_c * d
        f *= delta
        if abs(delta - 1.0) <= 2.0 * _EPS:
            return 1.0 / f
    raise ArithmeticError(  # pragma: no cover - not reachable for finite input
        f"incomplete beta continued fraction did not converge (x={x!r}, a={a!r}, b={b!r})"
    )


def _log_ibeta(x: float, a: float, b: float) -> tuple[float, float, float]:
    """Return ``(log I_x(a, b), log(1 - I_x(a, b)), log(x**a (1-x)**b / B(a, b)))``.

    The tail computed directly by the continued fraction (the lower one for
    ``x < (a + 1) / (a + b + 2)``, else the upper one) is accurate to a few
    ulps relative; the other is derived from it without cancellation in log
    space.  ``x`` is taken as exact: ``1 - x`` is only formed where that is
    exact (``x >= 1/2``) or harmless.
    """
    if x <= 0.0:
        return -math.inf, 0.0, -math.inf
    if x >= 1.0:
        return 0.0, -math.inf, -math.inf
    y = 1.0 - x
    lam = a - (a + b) * x if x <= 0.5 else (a + b) * y - b
    log_front = _log_front(x, a, b, lam)
    if x < (a + 1.0) / (a + b + 2.0):
        log_lower = log_front + math.log(_betacf(a, b, x, y, lam))
        return log_lower, _log1mexp(log_lower), log_front
    log_upper = log_front + math.log(_betacf(b, a, y, x, -lam))
    return _log1mexp(log_upper), log_upper, log_front


def log_incomplete_beta(x: float, a: float, b: float, upper: bool = False) -> float:
    """log of the incomplete beta integral: of ``t**(a-1) * (1-t)**(b-1)`` over ``[0, x]``, or ``[x, 1]``
    with ``upper`` (``log B(a, b)`` plus the log of the regularized tail), to full precision in the tails."""
    log_lower, log_upper, _ = _log_ibeta(x, a, b)
    return _lbeta(a, b) + (log_upper if upper else log_lower)


def regularized_beta(x: float, a: float, b: float) -> float:
    """Regularized incomplete beta function ``I_x(a, b)`` = CDF of Beta(a, b) at x.

    Continued fraction (modified Lentz) times the prefactor
    ``x**a (1-x)**b / B(a, b)``, computed in log space from
    :func:`math.lgamma` (with Stirling-series corrections for large
    arguments); the symmetry ``I_x(a, b) = 1 - I_{1-x}(b, a)`` is used where
    the fraction would converge slowly.  Relative accuracy (of the value, in
    either tail) is a few ulps for moderate parameters and stays within about
    1e-11 for ``a, b`` up to 1e6, far tails included.
    """
    x = _check_probability(x, "x")
    a = as_real(a, "a")
    b = as_real(b, "b")
    _check_shape(a, b)
    return math.exp(_log_ibeta(x, a, b)[0])


def _initial_guess(prob: float, a: float, b: float, upper: bool) -> float:
    """Starting point in (0, 1/2] for :func:`_solve_tail` (any such value works)."""
    if a > 1.0 and b > 1.0:
        # Normal approximation around the mean.
        s = a + b
        z = normal_ppf(prob)
        x = a / s + (-z if upper else z) * math.sqrt(a * b / (s * s * (s + 1.0)))
        if 0.0 < x <= 0.5:
            return x
    # Small-x asymptote I_x(a, b) ~ x**a / (a * B(a, b)).
    lower_prob = 1.0 - prob if upper else prob
    if lower_prob <= 0.0:
        return 0.5
    t = (math.log(lower_prob) + math.log(a) + _lbeta(a, b)) / a
    if t >= math.log(0.5):
        return 0.25
    return max(math.exp(t), _MIN_SUBNORMAL)


def _solve_tail(prob: float, a: float, b: float, upper: bool) -> float:
    """Find the root ``x`` in ``(0, 1/2]`` of ``P(X <= x) = prob`` (or ``P(X > x) = prob``
    when *upper*) for ``X ~ Beta(a, b)``; the caller guarantees the root is there.

    Safeguarded Newton iteration on the increasing function
    ``g = log I_x - log prob`` (``log prob - log(1 - I_x)`` when *upper*) in the
    variable ``log x``, written as the multiplicative step
    ``x <- x * exp(-g / (dg/dlog x))`` so that tiny roots keep full relative
    precision.  Every evaluation tightens a bracket ``[lo, hi]``; whenever the
    Newton point would leave it the solver bisects instead (geometrically
    while the bracket spans more than a factor of 4).  It stops when the
    Newton correction is below 1e-12 relative (quadratic convergence then
    makes the returned point exact to rounding), when the bracket collapses
    to adjacent doubles, or after a fixed iteration budget.
    """
    log_prob = math.log(prob)
    lo, hi = 0.0, 0.5  # g(lo) <= 0 <= g(hi)
    x = _initial_guess(prob, a, b, upper)
    for _ in range(_SOLVER_MAX_ITER):
        log_lower, log_upper, log_front = _log_ibeta(x, a, b)
        g = log_prob - log_upper if upper else log_lower - log_prob
        if g == 0.0:
            return x
        if g < 0.0:
            lo = x
        else:
            hi = x
            if x <= _MIN_SUBNORMAL:
                return 0.0  # the root underflows
        # dg/dlog(x) = x * pdf(x) / tail(x), and x * pdf(x) = front / (1 - x).
        log_tail = log_upper if upper else log_lower
        try:
            slope = math.exp(log_front - math.log1p(-x) - log_tail)
        except OverflowError:
            slope = math.inf
        new = math.nan
        if 0.0 < slope < math.inf:
            step = g / slope
            if abs(step) <= 1e-12:
                return x * math.exp(-step)
            if abs(step) < 700.0:
                new = x * math.exp(-step)
        if not lo < new < hi:
            if lo == 0.0:
                new = max(hi * 1e-3, _MIN_SUBNORMAL)
            elif hi > 4.0 * lo:
                new = math.sqrt(lo) * math.sqrt(hi)
            else:
                new = lo + 0.5 * (hi - lo)
            if not lo < new < hi:  # the bracket has collapsed to adjacent doubles
                return x
        x = new
    return x


def _beta_quantile(prob: float, a: float, b: float, upper: bool) -> float:
    """``x`` with ``P(X <= x) = prob`` (``P(X > x) = prob`` if *upper*), 0 < prob < 1.

    The root is located relative to 1/2 first; a root above 1/2 is found as
    ``1 - y`` where ``y`` solves the mirrored problem for ``1 - X ~ Beta(b, a)``.
    Either way the solver works on a variable below 1/2, so the result has
    full relative precision both near 0 and (as ``1 - x``) near 1.
    """
    log_lower, log_upper, _ = _log_ibeta(0.5, a, b)
    log_prob = math.log(prob)
    if (log_upper <= log_prob) if upper else (log_lower >= log_prob):
        return _solve_tail(prob, a, b, upper)
    return 1.0 - _solve_tail(prob, b, a, not upper)


def beta_ppf(p: float, a: float, b: float) -> float:
    """Quantile of Beta(a, b): the ``x`` with ``P(X <= x) = p``.

    Solved by :func:`_solve_tail` to full double precision; the result is
    as accurate as :func:`regularized_beta` allows (typically 1e-14 relative
    or better, also for tiny quantiles).  Returns 0.0 when the quantile
    underflows the smallest double.
    """
    p = _check_probability(p, "p")
    a = as_real(a, "a")
    b = as_real(b, "b")
    _check_shape(a, b)
    if p == 0.0:
        return 0.0
    if p == 1.0:
        return 1.0
    if p <= 0.5:
        return _beta_quantile(p, a, b, upper=False)
    return _beta_quantile(1.0 - p, a, b, upper=True)


def beta_isf(q: float, a: float, b: float) -> float:
    """Inverse survival function of Beta(a, b): the ``x`` with ``P(X > x) = q``.

    Use this rather than ``beta_ppf(1 - q, ...)`` for upper quantiles: it
    avoids rounding ``1 - q``.
    """
    q = _check_probability(q, "q")
    a = as_real(a, "a")
    b = as_real(b, "b")
    _check_shape(a, b)
    if q == 0.0:
        return 1.0
    if q == 1.0:
        return 0.0
    if q <= 0.5:
        return _beta_quantile(q, a, b, upper=True)
    return _beta_quantile(1.0 - q, a, b, upper=False)


# ---------------------------------------------------------------------------
# Binomial intervals
# ---------------------------------------------------------------------------


def clopper_pearson(k: int, n: int, confidence: float) -> tuple[float, float]:
    """Clopper-Pearson ("exact") two-sided interval for a binomial proportion.

    ``low`` is the ``alpha/2`` quantile of Beta(k, n-k+1) and ``high`` the
    ``1-alpha/2`` quantile of Beta(k+1, n-k), with ``alpha = 1 - confidence``.
    ``low == 0.0`` exactly when ``k == 0`` and ``high == 1.0`` exactly when
    ``k == n``.  Coverage is at least ``confidence`` for every true rate.

    >>> clopper_pearson(10, 10, 0.95)[1]
    1.0
    """
    k, n = _check_counts(k, n)
    half = (1.0 - _check_confidence(confidence)) / 2.0
    if k == 0:
        low = 0.0
    elif k == n:
        low = math.exp(math.log(half) / n)  # Beta(n, 1) has CDF x**n
    else:
        low = beta_ppf(half, k, n - k + 1)
    if k == n:
        high = 1.0
    elif k == 0:
        high = -math.expm1(math.log(half) / n)  # 1 - half**(1/n), no cancellation
    else:
        high = beta_isf(half, k + 1, n - k)
    return low, high


def _wilson_small_k(k: int, n: int, z: float) -> tuple[float, float]:
    p = k / n
    z2 = z * z
    denom = 1.0 + z2 / n
    center = (p + z2 / (2.0 * n)) / denom
    dist = z * math.sqrt(p * (1.0 - p) / n + z2 / (4.0 * n * n)) / denom
    high = center + dist
    # Vieta: the bounds are the roots of denom*x^2 - (2p + z2/n)*x + p^2 = 0,
    # so low = p^2 / (denom * high), free of the cancellation in center - dist.
    low = p * p / denom / high
    return min(max(low, 0.0), 1.0), min(high, 1.0)


def wilson(k: int, n: int, confidence: float) -> tuple[float, float]:
    """Wilson score interval (no continuity correction), clipped to [0, 1].

    The bounds are the two solutions ``x`` of ``|k/n - x| = z * sqrt(x(1-x)/n)``
    with ``z = Phi^-1(1 - alpha/2)``.  Computed without cancellation (the
    smaller root via Vieta's formula, the case ``k > n/2`` by the symmetry
    ``(low, high)(k) = (1 - high, 1 - low)(n - k)``), so ``low == 0.0`` when
    ``k == 0`` and ``high == 1.0`` when ``k == n``.  Coverage is close to
    ``confidence`` on average but not guaranteed for every rate.
    """
    k, n = _check_counts(k, n)
    z = -normal_ppf((1.0 - _check_confidence(confidence)) / 2.0)
    if 2 * k > n:
        low, high = _wilson_small_k(n - k, n, z)
        return 1.0 - high, 1.0 - low
    return _wilson_small_k(k, n, z)


def beta_credible(
    k: int,
    n: int,
    confidence: float,
    prior: tuple[float, float] = (1.0, 1.0),
) -> tuple[float, float]:
    """Equal-tailed credible interval of the Beta(a + k, b + n - k) posterior.

    ``prior=(a, b)`` is the Beta prior on the pass rate: ``(1, 1)`` is uniform,
    ``(0.5, 0.5)`` Jeffreys.  ``low``/``high`` are the posterior
    ``alpha/2`` and ``1 - alpha/2`` quantiles; they are never exactly 0 or 1.
    """
    k, n = _check_counts(k, n)
    half = (1.0 - _check_confidence(confidence)) / 2.0
    a0, b0 = _check_prior(prior)
    a = a0 + k
    b = b0 + (n - k)
    return beta_ppf(half, a, b), beta_isf(half, a, b)


def interval(
    method: str,
    k: int,
    n: int,
    confidence: float,
    prior: tuple[float, float] = (1.0, 1.0),
) -> tuple[float, float]:
    """Interval for ``k`` passes of ``n`` runs by *method* (see :data:`METHODS`).

    ``"exact"`` -> :func:`clopper_pearson`, ``"wilson"`` -> :func:`wilson`,
    ``"bayes"`` -> :func:`beta_credible` (the only one that uses *prior*).
    """
    method = parse_method(method)
    if method == "exact":
        return clopper_pearson(k, n, confidence)
    if method == "wilson":
        return wilson(k, n, confidence)
    return beta_credible(k, n, confidence, prior)


# ---------------------------------------------------------------------------
# Gate helpers
# ---------------------------------------------------------------------------


def runs_needed(
    min_rate: float,
    confidence: float,
    method: str = "exact",
    prior: tuple[float, float] = (1.0, 1.0),
    max_runs: int = 100_000,
) -> int | None:
    """Fewest runs after which an always-passing case can pass the gate.

    Returns the smallest ``n`` such that ``interval(method, n, n, confidence,
    prior)[0] >= min_rate``, i.e. a case that passes all ``n`` runs has its
    whole interval at or above ``min_rate``.  Returns ``None`` when even
    ``max_runs`` runs are not enough (always the case for ``min_rate == 1``
    with any method: the lower bound never reaches 1).

    The all-pass lower bound is non-decreasing in ``n`` for every method
    (``(alpha/2)**(1/n)`` for exact, ``n / (n + z**2)`` for Wilson, and a
    stochastically increasing Beta(a + n, b) posterior for bayes), so a
    binary search needs about ``log2(max_runs)`` interval evaluations.  The
    returned ``n`` always satisfies the condition as computed by
    :func:`interval`, so it is consistent with :func:`verdict`.
    """
    rate = _check_probability(min_rate, "min_rate")
    confidence = _check_confidence(confidence)
    method = parse_method(method)
    prior = _check_prior(prior)
    max_runs = as_int(max_runs, "max_runs")
    if max_runs < 1:
        raise ValueError(f"max_runs must be >= 1, got {max_runs!r}")

    def enough(n: int) -> bool:
        return interval(method, n, n, confidence, prior)[0] >= rate

    return smallest_enough(enough, max_runs)


def smallest_enough(enough: Callable[[int], bool], max_runs: int) -> int | None:
    """The smallest n in 1..max_runs with ``enough(n)``, for a monotone ``enough``; None if even
    ``max_runs`` is not enough (bisection)."""
    if not enough(max_runs):
        return None
    lo, hi = 0, max_runs  # enough(hi) holds; n = lo is not a valid run count
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if enough(mid):
            hi = mid
        else:
            lo = mid
    return hi


def verdict(low: float, high: float, bar: float) -> str:
    """Gate decision for an interval ``[low, high]`` against a required rate *bar*.

    ``"pass"`` when ``low >= bar`` (the whole interval is at or above the bar),
    ``"fail"`` when ``high < bar`` (the whole interval is below it), otherwise
    ``"undecided"`` (more runs are needed to tell).
    """
    low_ = as_real(low, "low")
    high_ = as_real(high, "high")
    bar_ = as_real(bar, "bar")
    if low_ > high_:
        raise ValueError(f"low must not exceed high, got low={low!r}, high={high!r}")
    if low_ >= bar_:
        return "pass"
    if high_ < bar_:
        return "fail"
    return "undecided"


# ---------------------------------------------------------------------------
# Distribution-free quantile intervals
# ---------------------------------------------------------------------------


class QuantileEstimate(NamedTuple):
    """Sample quantile with an order-statistic confidence interval.

    ``low``/``high`` are ``None`` when no order statistic gives the required
    coverage on that side (too few samples for the requested quantile).
    """

    estimate: float
    low: float | None
    high: float | None


def _check_quantile_level(q: object) -> float:
    q_ = as_real(q, "q")
    if not 0.0 < q_ < 1.0:
        raise ValueError(f"quantile level q must be strictly between 0 and 1, got {q!r}")
    return q_


def _sorted_samples(samples: Iterable[float]) -> list[float]:
    if isinstance(samples, (str, bytes)):
        raise TypeError(f"samples must be an iterable of numbers, got {samples!r}")
    values = []
    for value in samples:
        if isinstance(value, (bool, str, bytes)):
            raise TypeError(f"samples must be numbers, got {value!r}")
        number = float(value)
        if math.isnan(number):
            raise ValueError(f"samples must not contain NaN, got {value!r}")
        values.append(number)
    if not values:
        raise ValueError("samples must not be empty")
    values.sort()
    return values


def sample_quantile(samples: Iterable[float], q: float) -> float:
    """Sample ``q``-quantile by linear interpolation between order statistics.

    This is Hyndman & Fan type 7, the default of numpy (``method="linear"``),
    R and Excel ``PERCENTILE.INC``: with the values sorted as ``x[0..n-1]`` and
    ``h = (n - 1) * q``, the result is
    ``x[floor(h)] + (h - floor(h)) * (x[floor(h) + 1] - x[floor(h)])``.
    ``q`` may be 0 (minimum) or 1 (maximum) here.
    """
    q_ = as_real(q, "q")
    if not 0.0 <= q_ <= 1.0:
        raise ValueError(f"quantile level q must be between 0 and 1, got {q!r}")
    return _type7(_sorted_samples(samples), q_)


def _type7(xs: Sequence[float], q: float) -> float:
    h = (len(xs) - 1) * q
    j = math.floor(h)
    if j >= len(xs) - 1:
        return xs[-1]
    frac = h - j
    if frac == 0.0:
        return xs[j]
    return xs[j] + frac * (xs[j + 1] - xs[j])


def _binom_cdf_sf(j: int, n: int, q: float) -> tuple[float, float]:
    """``(P(B <= j), P(B > j))`` for ``B ~ Binomial(n, q)``, ``0 <= j < n``.

    Uses ``P(B > j) = I_q(j + 1, n - j)``.
    """
    log_sf, log_cdf, _ = _log_ibeta(q, float(j + 1), float(n - j))
    return math.exp(log_cdf), math.exp(log_sf)


@lru_cache(maxsize=1024)
def _ranks(n: int, q: float, confidence: float) -> tuple[int | None, int | None]:
    half = (1.0 - confidence) / 2.0
    # Lower rank: the largest l in 1..n with P(B <= l - 1) <= half.
    if _binom_cdf_sf(0, n, q)[0] > half:
        low = None
    else:
        good, bad = 1, n + 1  # P(B <= good - 1) <= half; bad is out of range or fails
        while bad - good > 1:
            mid = (good + bad) // 2
            if _binom_cdf_sf(mid - 1, n, q)[0] <= half:
                good = mid
            else:
                bad = mid
        low = good
    # Upper rank: the smallest u in 1..n with P(B >= u) = P(B > u - 1) <= half.
    if _binom_cdf_sf(n - 1, n, q)[1] > half:
        high = None
    else:
        bad, good = 0, n
        while good - bad > 1:
            mid = (good + bad) // 2
            if _binom_cdf_sf(mid - 1, n, q)[1] <= half:
                good = mid
            else:
                bad = mid
        high = good
    return low, high


def quantile_ranks(n: int, q: float, confidence: float) -> tuple[int | None, int | None]:
    """1-based ranks ``(l, u)`` of the order statistics bounding the q-quantile.

    With ``B ~ Binomial(n, q)`` (the number of samples below the true
    quantile ``xi_q``), ``P(X_(l) <= xi_q <= X_(u)) = P(l <= B <= u - 1)``
    for a continuous distribution (and at least that with ties).  Each tail
    gets at most ``alpha/2 = (1 - confidence)/2``: ``l`` is the largest rank
    with ``P(B <= l - 1) <= alpha/2`` and ``u`` the smallest with
    ``P(B >= u) <= alpha/2``, so the coverage is at least ``confidence`` and
    the two tail masses are as equal as the discreteness allows.  A side is
    ``None`` when even the extreme order statistic cannot keep its tail below
    ``alpha/2`` (``(1-q)**n > alpha/2`` for ``l``, ``q**n > alpha/2`` for
    ``u``); the other side is still a valid one-sided ``1 - alpha/2`` bound.
    Results are cached.
    """
    n_ = as_int(n, "n")
    if n_ < 1:
        raise ValueError(f"n (number of samples) must be >= 1, got {n!r}")
    return _ranks(n_, _check_quantile_level(q), _check_confidence(confidence))


def quantile_interval(samples: Iterable[float], q: float, confidence: float) -> QuantileEstimate:
    """Distribution-free estimate and confidence interval of the q-quantile.

    ``estimate`` is :func:`sample_quantile` (linear interpolation, numpy's
    default ``"linear"`` / Hyndman-Fan type 7).  ``low``/``high`` are the
    order statistics ``X_(l)``, ``X_(u)`` chosen by :func:`quantile_ranks`;
    either is ``None`` when the sample is too small for that side (e.g. the
    upper bound of p95 with 10 samples at 95% confidence).

    >>> quantile_interval(range(1, 101), 0.5, 0.95)
    QuantileEstimate(estimate=50.5, low=40.0, high=61.0)
    """
    q_ = _check_quantile_level(q)
    confidence = _check_confidence(confidence)
    xs = _sorted_samples(samples)
    lower, upper = _ranks(len(xs), q_, confidence)
    return QuantileEstimate(
        estimate=_type7(xs, q_),
        low=None if lower is None else xs[lower - 1],
        high=None if upper is None else xs[upper - 1],
    )


# ---------------------------------------------------------------------------
# pass^k and pass@k
# ---------------------------------------------------------------------------


def _check_nck(n: object, c: object, k: object) -> tuple[int, int, int]:
    n_ = as_int(n, "n")
    c_ = as_int(c, "c")
    k_ = as_int(k, "k")
    if n_ < 1:
        raise ValueError(f"n (number of runs) must be >= 1, got {n!r}")
    if not 0 <= c_ <= n_:
        raise ValueError(f"c (number of passes) must be between 0 and n={n_}, got {c!r}")
    if k_ < 1:
        raise ValueError(f"k must be >= 1, got {k!r}")
    if k_ > n_:
        raise ValueError(f"k={k!r} exceeds the number of runs n={n_}; need at least k runs")
    return n_, c_, k_


def _log_comb_ratio(m: int, n: int, k: int) -> float:
    """Approximate ``log(C(m, k) / C(n, k))`` for ``k <= m <= n`` (abs error ~1e-10)."""
    return math.lgamma(m + 1) - math.lgamma(m - k + 1) - math.lgamma(n + 1) + math.lgamma(n - k + 1)


def _comb_ratio_terms(m: int, n: int, k: int) -> tuple[int, int]:
    """Exact integers ``(num, den)`` with ``num / den == C(m, k) / C(n, k)``.

    Uses ``C(m, k) / C(n, k) == C(n - k, n - m) / C(n, n - m)`` when that has
    the smaller lower index, so the integers stay small whenever the ratio is
    not negligible.
    """
    if n - m < k:
        return math.comb(n - k, n - m), math.comb(n, n - m)
    return math.comb(m, k), math.comb(n, k)


def pass_hat_k(n: int, c: int, k: int) -> float:
    """pass^k: probability that ``k`` of the ``n`` runs, drawn without
    replacement, all pass, given ``c`` passes: ``C(c, k) / C(n, k)``.

    This is the unbiased estimator of ``p**k`` (the chance that k fresh runs
    all pass).  Computed from exact integers with one correctly rounded
    division (Python's ``int / int``), so it is exact to the last bit and
    never overflows; a ratio that would underflow (below ~1e-330, judged
    with :func:`math.lgamma`) returns 0.0 without forming huge integers.
    """
    n, c, k = _check_nck(n, c, k)
    if c < k:
        return 0.0
    if _log_comb_ratio(c, n, k) < -760.0:
        return 0.0
    num, den = _comb_ratio_terms(c, n, k)
    return num / den


def pass_at_k(n: int, c: int, k: int) -> float:
    """pass@k: probability that at least one of ``k`` runs drawn without
    replacement passes: ``1 - C(n - c, k) / C(n, k)``.

    The unbiased pass@k estimator of Chen et al. (2021, "Evaluating Large
    Language Models Trained on Code").  Computed as
    ``(den - num) / den`` with ``num / den = C(n - c, k) / C(n, k)`` in exact
    integers (no cancellation, no overflow), rounded once; when the ratio is
    below ~4e-18 the result rounds to 1.0 and is returned directly.
    """
    n, c, k = _check_nck(n, c, k)
    if n - c < k:
        return 1.0
    if _log_comb_ratio(n - c, n, k) < -40.0:
        return 1.0
    num, den = _comb_ratio_terms(n - c, n, k)
    return (den - num) / den


_METRIC_RE = re.compile(r"\s*pass\s*([\^@])\s*(\d+)\s*", re.IGNORECASE)


def parse_metric(text: str) -> tuple[str, int]:
    """Parse ``"pass^3"`` or ``"pass@5"`` into ``(kind, k)``.

    ``kind`` is ``"pass^"`` or ``"pass@"``; ``f"{kind}{k}"`` is the canonical
    spelling.  Whitespace around and inside the text is tolerated, the word
    ``pass`` is case-insensitive, and ``k`` must be an integer >= 1.
    """
    if not isinstance(text, str):
        raise TypeError(f"metric must be a string such as 'pass^3' or 'pass@5', got {text!r}")
    match = _METRIC_RE.fullmatch(text)
    if match is None:
        raise ValueError(
            f"invalid metric {text!r}: expected 'pass^K' or 'pass@K' with an integer K >= 1, e.g. 'pass^3' or 'pass@5'"
        )
    k = int(match.group(2))
    if k < 1:
        raise ValueError(f"invalid metric {text!r}: K must be >= 1")
    return "pass" + match.group(1), k


def parse_metrics(values: Iterable[str]) -> list[tuple[str, int]]:
    """Parse metric options, each possibly comma-separated, into ``[(kind, k), ...]``.

    ``["pass^1,pass^3", "pass@5", "pass^3"]`` -> ``[("pass^", 1), ("pass^", 3),
    ("pass@", 5)]``: duplicates are dropped keeping the first occurrence, and
    empty items (e.g. from a trailing comma) are ignored.  A single string is
    treated as one value.
    """
    if isinstance(values, str):
        values = [values]
    result: list[tuple[str, int]] = []
    seen = set()
    for value in values:
        if not isinstance(value, str):
            raise TypeError(f"metric must be a string such as 'pass^3' or 'pass@5', got {value!r}")
        for item in value.split(","):
            if not item.strip():
                continue
            metric = parse_metric(item)
            if metric not in seen:
                seen.add(metric)
                result.append(metric)
    return result


# ---------------------------------------------------------------------------
# Parsing / validation of user-supplied settings
# ---------------------------------------------------------------------------


def parse_confidence(value: object) -> float:
    """Validate a confidence level given as text or a number; return a float.

    Must lie strictly between 0 and 1.  A value between 1 and 100 (``95``,
    ``"99.9"``, ``"95%"``) is rejected with a message suggesting the
    fraction (``0.95``), since it was almost certainly meant as a percentage.
    """
    if isinstance(value, bool):
        raise ValueError(f"invalid confidence {value!r}: expected a number between 0 and 1, such as 0.95")
    percent_sign = False
    if isinstance(value, str):
        text = value.strip()
        if text.endswith("%"):
            percent_sign = True
            text = text[:-1].strip()
        try:
            number = float(text)
        except ValueError:
            number = math.nan
    else:
        try:
            # float() is the check: anything it cannot convert raises the TypeError or ValueError caught here
            number = float(cast(SupportsFloat, value))
        except (TypeError, ValueError):
            number = math.nan
    if math.isnan(number):
        raise ValueError(f"invalid confidence {value!r}: expected a number between 0 and 1, such as 0.95")
    if 0.0 < number < 1.0 and not percent_sign:
        return number
    if percent_sign and 0.0 < number < 100.0 or 1.0 < number < 100.0:
        raise ValueError(
            f"invalid confidence {value!r}: it must be a fraction strictly between 0 and 1, "
            f"not a percentage; did you mean {number / 100.0:.10g}?"
        )
    raise ValueError(f"invalid confidence {value!r}: must be strictly between 0 and 1, such as 0.95")


def parse_prior(value: object) -> tuple[float, float]:
    """Parse a Beta prior ``"a,b"`` (e.g. ``"1,1"``, ``"0.5, 0.5"``) into ``(a, b)``.

    Also accepts a pair of numbers.  Both must be positive and finite.
    """
    message = (
        f"invalid prior {value!r}: expected two positive numbers 'a,b', e.g. '1,1' (uniform) or '0.5,0.5' (Jeffreys)"
    )
    if isinstance(value, str):
        parts = value.split(",")
    elif isinstance(value, (tuple, list)):
        parts = list(value)
    else:
        raise ValueError(message)
    if len(parts) != 2:
        raise ValueError(message)
    numbers = []
    for part in parts:
        if isinstance(part, bool):
            raise ValueError(message)
        try:
            number = float(part.strip() if isinstance(part, str) else part)
        except (TypeError, ValueError):
            raise ValueError(message) from None
        if not (number > 0.0 and math.isfinite(number)):
            raise ValueError(message)
        numbers.append(number)
    return numbers[0], numbers[1]


def parse_method(name: object) -> str:
    """Validate an interval method name (case-insensitive); return it lower-cased.

    One of ``"exact"`` (Clopper-Pearson), ``"wilson"``, ``"bayes"``.
    """
    if isinstance(name, str):
        method = name.strip().lower()
        if method in METHODS:
            return method
    valid = ", ".join(repr(m) for m in METHODS)
    raise ValueError(f"invalid interval method {name!r}: choose one of {valid}")


# ---------------------------------------------------------------------------
# Formatting
# ---------------------------------------------------------------------------


def _percent_text(value: float) -> str:
    if value == 0.0:
        return "0%"
    if value == 1.0:
        return "100%"
    rounded = math.floor(value * 100.0 + 0.5)  # round half up
    return f"{min(max(rounded, 1), 99)}%"


def format_percent_interval(low: float, high: float) -> str:
    """Format an interval as whole percents: ``"[35%,  93%]"``, ``"[ 0%, 100%]"``.

    Rules:

    * each bound is rounded to a whole percent (half up);
    * ``0%`` is printed only when the bound is exactly 0 and ``100%`` only when
      it is exactly 1; any other value is clamped to ``1%``..``99%``, so an
      inexact bound such as 0.001 or 0.998 never looks certain;
    * the low bound is right-aligned to width 3 and the high bound, after
      ``", "``, to width 4 (both include the ``%`` sign), so the text is always
      11 characters wide and columns line up.  (A low bound of exactly 1, the
      degenerate interval ``[1, 1]``, prints as ``[100%, 100%]``.)
    """
    low_ = _check_probability(low, "low")
    high_ = _check_probability(high, "high")
    return f"[{_percent_text(low_):>3}, {_percent_text(high_):>4}]"


def format_rate(rate: float) -> str:
    """A rate as its author wrote it, in percent: 0.1 -> ``10%``, 0.975 -> ``97.5%``, 0.001 -> ``0.1%``
    (``%g``: six significant digits)."""
    return f"{as_real(rate, 'rate') * 100:g}%"
