"""Graded results: a case's mean score with an interval, score gates that may stop early, paired comparisons.

Pure, standard-library-only and pytest-free, like :mod:`stats`. A *score* is a
finite real number in a known range ``[low, high]`` (the user's
``prob_score_range``, default ``0,1``). Every method here works on the scores
rescaled to [0, 1], ``(x - low) / (high - low)``, and maps its results back,
so a range of 1..5 gives the same coverage as 0..1. Scores are given **in run
order** (run number), never in arrival order: the betting interval depends on
the order of its observations (any fixed order independent of the values is
valid), so the same runs give the same interval in every process, under
xdist and after a shard merge. Arguments are validated: a wrong type raises
:class:`TypeError` and a bad value :class:`ValueError`, naming the value.

The methods (``benchmarks/score_coverage.py`` and
``benchmarks/score_sequential.py`` measure them):

* **The interval of a case's mean score** (:func:`score_interval`,
  ``method="betting"``, the default): the *hedged capital* confidence
  interval of Waudby-Smith & Ramdas (2024), "Estimating means of bounded
  random variables by betting", JRSS-B 86(1), 1-27 (arXiv:2010.09686):
  their Theorem 3 capital process with the bets tuned to a fixed ``n``
  (their Remark 3, "Hedged-CI"). For a candidate mean ``m`` two gamblers bet
  against it,

  ``K+_t(m) = prod_{i<=t} (1 + min(lam_i, c/m) (y_i - m))``,
  ``K-_t(m) = prod_{i<=t} (1 - min(lam_i, c/(1-m)) (y_i - m))``,

  and ``m`` is excluded once ``max(theta K+_t(m), (1-theta) K-_t(m)) >=
  1/alpha`` at some ``t <= n`` (the running intersection of the sets; by
  Ville's inequality the mean is ever excluded with probability at most
  ``alpha``, for *any* distribution on [0, 1] and any ``n``). The variant,
  exactly as in the authors' reference implementation (``confseq``,
  ``betting.betting_ci`` with the settings of the paper's fixed-time figure,
  ``m_trunc=True, trunc_scale=3/4``; ``betting_strategies.lambda_predmix_eb``):

  - ``theta = 1/2``, the maximum (not the sum) of the two weighted capitals,
    so each side is a one-sided test at ``alpha/2`` (as each side of the
    fraction gates' two-sided intervals and of :mod:`stopping`'s SPRT);
  - the predictable plug-in bets ``lam_t = sqrt(2 log(1/(alpha theta)) /
    (n sigma2_{t-1}))`` with ``sigma2_t = (1/4 + sum_{i<=t} (y_i -
    mu_i)**2) / (t + 1)``, ``mu_t = (1/2 + sum_{i<=t} y_i) / (t + 1)``
    (one fake observation of prior mean 1/2 and variance 1/4), ``sigma2_0
    = 1/4``; no truncation of ``lam`` itself;
  - the truncation ``c = 3/4`` applied through ``c/m`` and ``c/(1-m)``, which
    keeps every factor at least ``1 - c > 0``;
  - the bounds found exactly by root-finding instead of confseq's grid of
    1,000 points: every factor is positive and non-increasing in ``m`` for
    ``K+`` (non-decreasing for ``K-``), so the running maximum of ``K+``
    over ``t`` is non-increasing in ``m``, the excluded set below the mean is
    an interval ``[0, L]`` and above it ``[U, 1]``, and ``L`` is the one root
    of a monotone function (:func:`log_peak_capital`). The root is bracketed
    and found by the Illinois method to ``1e-10`` on the [0, 1] scale, and
    the bracket's excluded end is returned, so the interval is never
    narrower than the exact one. ``U`` is ``1 - L`` of the reflected scores
    ``1 - y`` (the construction is symmetric).

  The interval is widened to contain the sample mean when it does not (which
  the simulations never met; widening keeps the coverage). It is
  deterministic: the same scores in the same order give the same interval,
  bit for bit. Why this one, by simulation (``benchmarks/score_coverage.py``):
  it is the narrowest of the intervals that hold at every N = 5-200, mean
  0.02-0.98 and shape (Beta, two-point, heavily skewed); the Student t
  interval, the bootstrap-t, BCa and the percentile bootstrap fall far below
  95% near 0 or 1 and for skewed or two-point scores at small N, where most
  samples have few or no distinct values. See docs for the table.
* ``method="betting-cs"``: the same capital process with Theorem 3's
  *time-uniform* bets ``lam_t = sqrt(2 log(1/(alpha theta)) / (t log(1 + t)
  sigma2_{t-1}))`` and ``c = 1/2`` (``confseq.betting.hedged_cs``): a
  confidence *sequence*, valid at every ``t`` with no ``n`` fixed in advance.
* ``method="t"``: Student's t interval ``mean +- t_{n-1} s / sqrt(n)``, clipped
  to the range, the conventional cross-check (it fails near 0 or 1).
* **Sequential score gates** (:class:`ScoreSequence`,
  :func:`sequential_score_verdict`): the hedged capital process at the bar
  ``b``, updated after every run in O(1): PASS once ``theta K+_t(b) >=
  1/alpha`` (the whole sequence's lower bound is at or above the bar), FAIL
  once ``(1-theta) K-_t(b) >= 1/alpha`` (its upper bound is below it). It may
  be looked at after every run: by Ville's inequality each wrong verdict has
  probability at most ``alpha/2`` at any stopping time (``alpha = 1 -
  confidence``), the same threshold as :func:`stopping.threshold`. With a
  ``horizon`` (the case's planned runs) the bets are the fixed-``n`` ones of
  the default interval: the sequential verdict after the last run is then the
  fixed-N interval's, and stopping earlier changes nothing but the runs spent.
  Without one the bets are the time-uniform ones of ``betting-cs``.
* **Paired comparisons** (:func:`paired_difference`): two arms (an A/B arm
  and its baseline variant, or tonight's cases and the baseline's) paired by
  input: per input the difference of the arms' mean scores, their mean over
  the inputs, and the paired bootstrap over inputs (each resample draws
  inputs with replacement, each keeping both arms' runs: the cluster
  bootstrap of :mod:`inputs`, with its seeding, ``resamples`` and percentile
  interval, over the per-input differences). The one-sided p-values are the
  tails at which the percentile bounds reach 0, so a bound at tail ``tau``
  excludes 0 exactly when its p-value is below ``tau`` and intervals drawn at
  :func:`twostats.adjust`'s local levels agree with the adjusted verdicts.
  :func:`difference_interval` is one case's difference of two independent
  mean scores (runs not paired): Newcombe's hybrid (MOVER; Newcombe 1998,
  Zou & Donner 2008) with the betting intervals in place of Wilson's, with
  separate tails as :func:`twostats.newcombe`; :func:`welch_test` gives its
  one-sided Welch p-values.
* **Averages over inputs** (:func:`input_estimate`): a benchmark's mean
  score over its inputs (each input's mean score counts once), with the
  cluster bootstrap over inputs (:func:`inputs.interval_of`: the percentile
  interval by default, ``t`` or ``wilson`` as for fractions), ρ by the
  one-way ANOVA ICC(1) of the per-run scores (:func:`score_icc`) and the
  runs-or-inputs projection (:func:`inputs.width_factor`,
  :func:`inputs.width_change`), under 0.3.0's suppression rules.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Iterable, Sequence
from typing import Any, Final

from ..value_classes import Value
from ..vocabulary import FAILED, PASSED
from . import inputs, stats
from .interval import Interval

__all__ = [
    "BETTING",
    "BETTING_CS",
    "CI_TRUNCATION",
    "CS_TRUNCATION",
    "DEFAULT_RANGE",
    "METHODS",
    "PAIRED_BOOTSTRAP",
    "PairedScores",
    "STUDENT_T",
    "ScoreSequence",
    "ScoreSummary",
    "THETA",
    "XTOL",
    "betting_bets",
    "check_range",
    "difference_interval",
    "fewest_runs",
    "input_estimate",
    "log_peak_capital",
    "mean_and_sd",
    "paired_difference",
    "parse_method",
    "parse_range",
    "percentile_p_values",
    "rescale",
    "score_icc",
    "score_interval",
    "sequential_score_verdict",
    "summarize",
    "welch_test",
]

#: The default score range, ``prob_score_range = 0,1``.
DEFAULT_RANGE: tuple[float, float] = (0.0, 1.0)

#: Interval methods: the hedged capital CI (the default), its time-uniform sequence, Student's t.
BETTING = "betting"
BETTING_CS = "betting-cs"
STUDENT_T = "t"
METHODS: tuple[str, ...] = (BETTING, BETTING_CS, STUDENT_T)
#: The method name of :func:`paired_difference`'s interval.
PAIRED_BOOTSTRAP = "paired-bootstrap"

#: The hedging weight, and the truncation ``c`` of the fixed-n interval and of the sequence.
THETA = 0.5
CI_TRUNCATION = 0.75
CS_TRUNCATION = 0.5
#: The regularized plug-in estimates start from one fake observation of this mean and variance.
_PRIOR_MEAN = 0.5
_PRIOR_VARIANCE = 0.25
#: Root-finding tolerance on the [0, 1] scale.
XTOL = 1e-10
_MAX_ITERATIONS = 200
#: Multiply this many factors at most before taking a logarithm (no overflow or underflow).
_LOG_SPAN = 600.0


# -- validation ------------------------------------------------------------------------


def _level(level: object) -> float:
    if isinstance(level, str):
        raise TypeError(f"level must be a number, got the string {level!r}; use stats.parse_confidence() for text")
    return stats.parse_confidence(level)


def check_range(low: object = 0.0, high: object = 1.0) -> tuple[float, float]:
    """``(low, high)`` as floats: finite numbers with ``low < high``."""
    lo = stats.as_real(low, "the score range's low end")
    hi = stats.as_real(high, "the score range's high end")
    if not lo < hi:
        raise ValueError(f"the score range needs low < high, got {low!r}, {high!r}")
    return lo, hi


def parse_range(value: object) -> tuple[float, float]:
    """A score range from text (``"0,1"``, ``"1, 5"``) or a pair of numbers; see :func:`check_range`."""
    if isinstance(value, str):
        parts = [part.strip() for part in value.split(",")]
        if len(parts) != 2 or not all(parts):
            raise ValueError(f"a score range is two numbers separated by a comma, such as 0,1; got {value!r}")
        numbers = []
        for part in parts:
            try:
                numbers.append(float(part))
            except ValueError:
                raise ValueError(
                    f"a score range is two numbers separated by a comma, such as 0,1; got {value!r}"
                ) from None
        return check_range(numbers[0], numbers[1])
    if isinstance(value, (bytes, bool)) or not isinstance(value, (tuple, list)) or len(value) != 2:
        raise TypeError(f"a score range is 'low,high' text or a pair of numbers, got {value!r}")
    return check_range(value[0], value[1])


def parse_method(value: object) -> str:
    """Validate an interval method name (case-insensitive): ``betting``, ``betting-cs`` or ``t``."""
    if isinstance(value, str) and value.strip().lower() in METHODS:
        return value.strip().lower()
    raise ValueError(f"the score interval must be one of {', '.join(METHODS)}, got {value!r}")


def _values(scores: Iterable[float], name: str = "scores") -> list[float]:
    if isinstance(scores, (str, bytes)):
        raise TypeError(f"{name} must be an iterable of numbers, got {scores!r}")
    return [stats.as_real(value, "each score") for value in scores]


def rescale(scores: Iterable[float], low: float = 0.0, high: float = 1.0) -> list[float]:
    """The scores mapped from ``[low, high]`` onto [0, 1]; a score outside the range is a :class:`ValueError`."""
    lo, hi = check_range(low, high)
    return _unit(scores, lo, hi)


_PLAIN = (float, int)


def _unit(scores: Iterable[float], lo: float, hi: float) -> list[float]:
    """:func:`rescale` with a checked range. Plain floats and ints within the range (the usual case)
    are checked in bulk; anything else one by one, for the message."""
    if isinstance(scores, (str, bytes)):
        raise TypeError(f"scores must be an iterable of numbers, got {scores!r}")
    data = scores if isinstance(scores, list) else list(scores)
    if (
        data
        and set(map(type, data)) <= {float, int}
        and lo <= min(data)
        and max(data) <= hi
        and math.isfinite(sum(data))
    ):
        values = [float(v) for v in data]
    else:
        values = _values(data)
        for value in values:
            if not lo <= value <= hi:
                raise ValueError(f"the score {value!r} is outside the score range [{lo:g}, {hi:g}]")
    if lo == 0.0 and hi == 1.0:
        return values
    span = hi - lo
    return [min(1.0, max(0.0, (value - lo) / span)) for value in values]


def _horizon(horizon: object, n: int) -> int:
    if horizon is None:
        return n
    count = stats.as_int(horizon, "horizon")
    if count < 1:
        raise ValueError(f"horizon must be at least 1, got {horizon!r}")
    return count


# -- results -------------------------------------------------------------------------------


class ScoreSummary(Value):
    """One case's score of one name: ``n`` runs, their mean, sample standard deviation and interval.

    ``mean`` and ``ci`` are ``None`` with no score; ``sd`` (divisor ``n - 1``) is
    ``None`` below two scores, where it is not defined.
    """

    n: Final[int]
    mean: Final[float | None]
    sd: Final[float | None]
    ci: Final[Interval | None]

    __slots__ = FIELDS = ("n", "mean", "sd", "ci")

    def __init__(self, n: int, mean: float | None, sd: float | None, ci: Interval | None) -> None:
        self.n = n
        self.mean = mean
        self.sd = sd
        self.ci = ci

    def to_dict(self) -> dict[str, Any]:
        return {"n": self.n, "mean": self.mean, "sd": self.sd, "ci": self.ci.to_dict() if self.ci else None}


def mean_and_sd(scores: Iterable[float]) -> tuple[int, float | None, float | None]:
    """``(n, mean, sd)``: :func:`statistics.fmean` and the sample standard deviation
    (``ddof=1``, :func:`statistics.stdev`); the mean is ``None`` with no score and
    the standard deviation ``None`` below two."""
    data = _values(scores)
    if not data:
        return 0, None, None
    mean = statistics.fmean(data)
    sd = statistics.stdev(data, mean) if len(data) > 1 else None
    return len(data), mean, sd


def summarize(
    scores: Sequence[float],
    level: float = 0.95,
    low: float = 0.0,
    high: float = 1.0,
    method: str = BETTING,
    horizon: int | None = None,
) -> ScoreSummary:
    """n, mean, sd and :func:`score_interval` of one case's scores (in run order); no interval with no score."""
    lo, hi = check_range(low, high)
    rescale(scores, lo, hi)  # validated even when empty of an interval
    n, mean, sd = mean_and_sd(scores)
    ci = score_interval(scores, level, lo, hi, method, horizon) if n else None
    return ScoreSummary(n, mean, sd, ci)


# -- the betting interval ------------------------------------------------------------------


def betting_bets(
    values: Sequence[float], level: float, horizon: int | None = None, time_uniform: bool = False
) -> list[float]:
    """The predictable plug-in bets ``lam_1..lam_n`` of scores already on [0, 1] (in run order).

    ``lam_t = sqrt(2 log(1/(alpha theta)) / (s_t sigma2_{t-1}))`` with ``s_t =
    horizon`` (fixed n: ``horizon`` defaults to ``len(values)``) or, with
    ``time_uniform``, ``s_t = t log(1 + t)``; ``sigma2`` is the regularized
    running variance of the module docstring. ``lam_t`` uses the scores before
    ``t`` only. The same bets serve both gamblers (``theta = 1/2``).
    """
    alpha = 1.0 - _level(level)
    return _bets(list(values), alpha, _horizon(horizon, len(values)), time_uniform)


def _bets(values: list[float], alpha: float, horizon: int, time_uniform: bool) -> list[float]:
    numerator = 2.0 * math.log(1.0 / (alpha * THETA))
    sqrt, log1p = math.sqrt, math.log1p
    total = 0.0
    squares = 0.0
    variance = _PRIOR_VARIANCE
    bets: list[float] = []
    append = bets.append
    if time_uniform:
        t = 0
        for y in values:
            t += 1
            append(sqrt(numerator / (t * log1p(t) * variance)))
            total += y
            deviation = y - (_PRIOR_MEAN + total) / (t + 1)
            squares += deviation * deviation
            variance = (_PRIOR_VARIANCE + squares) / (t + 1)
        return bets
    scaled = numerator / horizon
    t = 1
    for y in values:
        append(sqrt(scaled / variance))
        total += y
        t += 1
        deviation = y - (_PRIOR_MEAN + total) / t
        squares += deviation * deviation
        variance = (_PRIOR_VARIANCE + squares) / t
    return bets


class _Gambler:
    """The gambler betting on a mean above ``m``: its bets, scores and the parts of its factors
    that do not depend on ``m`` (``1 + lam_i y_i``), for :meth:`log_peak`."""

    __slots__ = ("bets", "values", "offsets", "top", "c", "span")

    def __init__(self, bets: list[float], values: list[float], c: float) -> None:
        self.bets = bets
        self.values = values
        self.offsets = [1.0 + bet * y for bet, y in zip(bets, values, strict=False)]
        self.top = max(bets) if bets else 0.0
        self.c = c
        # Each factor lies in [1 - c, 1 + top]: multiply at most `span` of them before a logarithm.
        spread = max(math.log1p(self.top), -math.log1p(-c))
        self.span = max(1, int(_LOG_SPAN / spread))

    def log_peak(self, m: float) -> float:
        """``log max(1, max_t K+_t(m))``."""
        cap = self.c / m if m > 0.0 else math.inf
        n = len(self.values)
        if self.span >= n:
            return math.log(self._peak(0, n, m, cap)[0])
        log_best = base = 0.0
        for start in range(0, n, self.span):
            best, product = self._peak(start, min(n, start + self.span), m, cap)
            log_best = max(log_best, base + math.log(best))
            base += math.log(product)
        return log_best

    def _peak(self, start: int, stop: int, m: float, cap: float) -> tuple[float, float]:
        """(the highest running product, or 1; the last) of the factors ``start..stop-1``."""
        product = best = 1.0
        if self.top <= cap:  # no bet truncated at this m: the factor is 1 + lam y - lam m
            if start == 0 and stop == len(self.values):
                pairs = zip(self.offsets, self.bets, strict=False)
            else:
                pairs = zip(self.offsets[start:stop], self.bets[start:stop], strict=False)
            for offset, bet in pairs:
                product *= offset - bet * m
                if product > best:
                    best = product
            return best, product
        for bet, y in zip(self.bets[start:stop], self.values[start:stop], strict=False):
            if bet > cap:
                bet = cap
            product *= 1.0 + bet * (y - m)
            if product > best:
                best = product
        return best, product


def log_peak_capital(bets: Sequence[float], values: Sequence[float], m: float, c: float) -> float:
    """``log max(1, max_{t<=n} K+_t(m))``: the log of the highest capital the gambler betting
    on a mean above ``m`` reaches, ``K+_t(m) = prod_{i<=t} (1 + min(lam_i, c/m) (y_i - m))``.

    Non-increasing and continuous in ``m`` on [0, 1] (each factor is positive, at
    least ``1 - c``, and non-increasing in ``m``), so ``{m: theta K+ >= 1/alpha}`` is
    an interval ``[0, L]``. Products of up to ``_LOG_SPAN`` nats are formed
    before each logarithm, so nothing overflows or underflows at any ``n``.
    """
    return _Gambler(list(bets), list(values), c).log_peak(m)


def _guess(s1: float, s1y: float, s2: float, s2y: float, s2yy: float, threshold: float) -> float:
    """A first guess of ``L``: the root nearest below the mean of the second-order expansion of
    ``log K+_n(m)``, ``sum lam_i (y_i - m) - sum lam_i**2 (y_i - m)**2 / 2 = threshold`` (no
    truncation, no running maximum), from the sums of ``lam``, ``lam y``, ``lam**2``, ``lam**2 y``
    and ``lam**2 y**2``."""
    # -s2/2 m**2 + (s2y - s1) m + (s1y - s2yy/2 - threshold) = 0: the expansion exceeds the
    # threshold between its two roots, both below the mean; L is the larger one.
    a2, a1, a0 = -0.5 * s2, s2y - s1, s1y - 0.5 * s2yy - threshold
    discriminant = a1 * a1 - 4.0 * a2 * a0
    if discriminant < 0.0 or a2 == 0.0:
        return 0.0
    return (-a1 - math.sqrt(discriminant)) / (2.0 * a2)


def _lower_bound(gambler: _Gambler, mean: float, threshold: float, guess: float) -> float:
    """``L``: the largest ``m`` with ``gambler.log_peak(m) >= threshold`` (within XTOL, on the
    excluded side), or 0 when no ``m`` is excluded."""
    log_peak = gambler.log_peak

    # Bracket the root around the first guess, then the Illinois method (modified regula
    # falsi) keeps excess(low) >= 0 > excess(high); excess(1) < 0 always (K+_t(1) <= 1).
    guess = min(max(guess, 0.0), mean)
    step = max(1e-4, 0.25 * (mean - guess))
    f_guess = log_peak(guess) - threshold
    if f_guess >= 0.0:
        low, f_low = guess, f_guess
        high = min(1.0, guess + step)
        f_high = log_peak(high) - threshold
        while f_high >= 0.0:
            low, f_low = high, f_high
            step *= 4.0
            high = min(1.0, high + step)
            f_high = log_peak(high) - threshold
    else:
        if guess <= 0.0:
            return 0.0
        high, f_high = guess, f_guess
        low = max(0.0, guess - step)
        f_low = log_peak(low) - threshold
        while f_low < 0.0:
            if low <= 0.0:
                return 0.0  # nothing below the mean is excluded
            high, f_high = low, f_low
            step *= 4.0
            low = max(0.0, low - step)
            f_low = log_peak(low) - threshold
    side = 0
    nudge = 0.5 * XTOL
    for _ in range(_MAX_ITERATIONS):
        if high - low <= XTOL:
            break
        x = high - f_high * (high - low) / (f_high - f_low)
        # Near a root the secant hugs one end: step at least XTOL/2 inside, so the next point
        # falls on the other side of the root and the bracket closes.
        if not x - low >= nudge:  # also NaN
            x = low + nudge
        elif not high - x >= nudge:
            x = high - nudge
        f_x = log_peak(x) - threshold
        if f_x >= 0.0:
            low, f_low = x, f_x
            if side == -1:
                f_high *= 0.5
            side = -1
        else:
            high, f_high = x, f_x
            if side == 1:
                f_low *= 0.5
            side = 1
    return low


def _betting_unit(values: list[float], level: float, horizon: int, time_uniform: bool) -> tuple[float, float]:
    """The betting interval of scores on [0, 1] (validated, at least one)."""
    alpha = 1.0 - level
    c = CS_TRUNCATION if time_uniform else CI_TRUNCATION
    threshold = math.log(1.0 / (THETA * alpha))  # log(1/(theta alpha)) = log(1/((1-theta) alpha)) at theta = 1/2
    bets = _bets(values, alpha, horizon, time_uniform)
    mean = math.fsum(values) / len(values)
    s1 = s1y = s2 = s2y = s2yy = 0.0
    for bet, y in zip(bets, values, strict=False):
        square = bet * bet
        s1 += bet
        s1y += bet * y
        s2 += square
        s2y += square * y
        s2yy += square * y * y
    low = _lower_bound(_Gambler(bets, values, c), mean, threshold, _guess(s1, s1y, s2, s2y, s2yy, threshold))
    # The upper bound is 1 - L of the reflected scores 1 - y (the same bets); their sums follow from these.
    mirrored = [1.0 - y for y in values]
    guess = _guess(s1, s1 - s1y, s2, s2 - s2y, s2 - 2.0 * s2y + s2yy, threshold)
    high = 1.0 - _lower_bound(_Gambler(bets, mirrored, c), 1.0 - mean, threshold, guess)
    return min(low, mean), max(high, mean)


def _t_unit(values: Sequence[float], level: float) -> tuple[float, float]:
    if len(values) < 2:
        return 0.0, 1.0
    low, high = inputs.t_interval(values, level)
    return max(0.0, low), min(1.0, high)


def score_interval(
    scores: Sequence[float],
    level: float = 0.95,
    low: float = 0.0,
    high: float = 1.0,
    method: str = BETTING,
    horizon: int | None = None,
) -> Interval:
    """The interval for the mean of one case's ``scores`` (in run order, at least one) at ``level``.

    ``method``: ``betting`` (the default; the bets tuned to ``horizon`` runs,
    default ``len(scores)``: give the planned runs after a sequential stop, so
    the interval is the sequence's, see :class:`ScoreSequence`), ``betting-cs``
    (time-uniform bets) or ``t`` (one score: the whole range). The bounds are in
    the scores' units, within ``[low, high]``.
    """
    lo, hi = check_range(low, high)
    level = _level(level)
    name = parse_method(method)
    values = _unit(scores, lo, hi)
    if not values:
        raise ValueError("need at least one score for an interval")
    planned = _horizon(horizon, len(values))
    if name == STUDENT_T:
        unit_low, unit_high = _t_unit(values, level)
    else:
        unit_low, unit_high = _betting_unit(values, level, planned, name == BETTING_CS)
    span = hi - lo
    return Interval(name, level, max(lo, lo + span * unit_low), min(hi, lo + span * unit_high))


# -- sequential score gates ------------------------------------------------------------------------


class ScoreSequence:
    """The sequential rule of one score gate: feed each run's score (in run order), read the verdict.

    ``bar`` is the gate's ``min_score`` in the scores' units; ``confidence`` the
    session's. After each :meth:`add` the verdict is PASSED once the hedged
    capital betting on a mean above the bar reaches ``1/(theta alpha)`` (the
    confidence sequence's lower bound is at or above the bar), FAILED once the
    one betting below it does (its upper bound is below the bar), else None. A
    verdict, once reached, stays (the case may stop). ``horizon``: the case's
    planned runs (the bets of the default fixed-N interval), or None for the
    time-uniform bets. A bar at or below the range's low end passes at the
    first run, one above its high end fails (as the fixed-N intervals' verdicts
    do). O(1) per score.
    """

    __slots__ = (
        "bar",
        "confidence",
        "low",
        "high",
        "horizon",
        "runs",
        "verdict",
        "_b",
        "_numerator",
        "_threshold",
        "_cap_above",
        "_cap_below",
        "_total",
        "_squares",
        "_variance",
        "_log_above",
        "_log_below",
        "_span",
    )

    def __init__(
        self, bar: float, confidence: float, low: float = 0.0, high: float = 1.0, horizon: int | None = None
    ) -> None:
        self.low, self.high = check_range(low, high)
        self.bar = stats.as_real(bar, "bar")
        self.confidence = _level(confidence)
        self.horizon = None if horizon is None else _horizon(horizon, 1)
        alpha = 1.0 - self.confidence
        self._b = (self.bar - self.low) / (self.high - self.low)
        self._numerator = 2.0 * math.log(1.0 / (alpha * THETA))
        self._threshold = math.log(1.0 / (alpha * THETA))
        c = CS_TRUNCATION if self.horizon is None else CI_TRUNCATION
        b = self._b
        self._cap_above = c / b if b > 0.0 else math.inf
        self._cap_below = c / (1.0 - b) if b < 1.0 else math.inf
        self._span = float(self.horizon) if self.horizon is not None else 0.0
        self.runs = 0
        self.verdict: str | None = None
        self._total = 0.0
        self._squares = 0.0
        self._variance = _PRIOR_VARIANCE
        self._log_above = 0.0
        self._log_below = 0.0

    def add(self, score: float) -> str | None:
        """Take the next run's score; return the verdict (None while undecided)."""
        value = stats.as_real(score, "the score")
        if not self.low <= value <= self.high:
            raise ValueError(f"the score {value!r} is outside the score range [{self.low:g}, {self.high:g}]")
        y = min(1.0, max(0.0, (value - self.low) / (self.high - self.low)))
        self.runs += 1
        t = self.runs
        if self.verdict is None:
            b = self._b
            if b <= 0.0:
                self.verdict = PASSED
            elif b > 1.0:
                self.verdict = FAILED
            else:
                scale = self._span if self.horizon is not None else t * math.log1p(t)
                bet = math.sqrt(self._numerator / (scale * self._variance))
                above = bet if bet < self._cap_above else self._cap_above
                below = bet if bet < self._cap_below else self._cap_below
                self._log_above += math.log(1.0 + above * (y - b))
                self._log_below += math.log(1.0 - below * (y - b))
                if self._log_above >= self._threshold:
                    self.verdict = PASSED
                elif self._log_below >= self._threshold:
                    self.verdict = FAILED
        self._total += y
        deviation = y - (_PRIOR_MEAN + self._total) / (t + 1)
        self._squares += deviation * deviation
        self._variance = (_PRIOR_VARIANCE + self._squares) / (t + 1)
        return self.verdict

    def extend(self, scores: Iterable[float]) -> str | None:
        """:meth:`add` each score in turn; return the verdict."""
        for score in _values(scores):
            self.add(score)
        return self.verdict

    @property
    def log_capitals(self) -> tuple[float, float]:
        """``(log K+_t(bar), log K-_t(bar))`` at the last score taken before the verdict (frozen after it)."""
        return self._log_above, self._log_below


def sequential_score_verdict(
    scores: Iterable[float],
    bar: float,
    confidence: float,
    low: float = 0.0,
    high: float = 1.0,
    horizon: int | None = None,
) -> str | None:
    """PASSED / FAILED once the sequential rule has decided on ``scores`` (in run order), else None.

    :class:`ScoreSequence` over all the scores; pure, for a case re-judged from its records.
    """
    sequence = ScoreSequence(bar, confidence, low, high, horizon)
    return sequence.extend(scores)


# -- one case's difference of two mean scores -------------------------------------------------------


def difference_interval(
    arm: Sequence[float],
    base: Sequence[float],
    lower_tail: float,
    upper_tail: float | None = None,
    low: float = 0.0,
    high: float = 1.0,
) -> Interval:
    """An interval for ``mean(arm) - mean(base)`` of two independent sets of runs (not paired).

    Newcombe's hybrid (MOVER: Newcombe 1998; Zou & Donner 2008) with the betting
    intervals in place of Wilson's: ``d - sqrt((m1 - l1)**2 + (u2 - m2)**2)`` and
    ``d + sqrt((u1 - m1)**2 + (m2 - l2)**2)``, each bound from intervals at the
    two-sided level ``1 - 2 tail`` (``lower_tail`` and ``upper_tail``, the
    one-sided error rates of the two bounds, as :func:`twostats.newcombe`), so a
    bound drawn at a hypothesis's local level (:func:`twostats.adjust`) is
    ``1 - local level / 2`` one-sided. Within ``[-(high - low), high - low]``.
    """
    lo, hi = check_range(low, high)
    if upper_tail is None:
        upper_tail = lower_tail
    low_level = _tail_level(lower_tail)
    high_level = _tail_level(upper_tail)
    if not arm or not base:
        raise ValueError("each side needs at least one score")
    m1 = statistics.fmean(_values(arm))
    m2 = statistics.fmean(_values(base))
    l1 = score_interval(arm, low_level, lo, hi).low
    u2 = score_interval(base, low_level, lo, hi).high
    u1 = score_interval(arm, high_level, lo, hi).high
    l2 = score_interval(base, high_level, lo, hi).low
    d = m1 - m2
    span = hi - lo
    lower = d - math.sqrt((m1 - l1) ** 2 + (u2 - m2) ** 2)
    upper = d + math.sqrt((u1 - m1) ** 2 + (m2 - l2) ** 2)
    return Interval("mover-" + BETTING, 1.0 - lower_tail - upper_tail, max(-span, lower), min(span, upper))


def _tail_level(tail: object) -> float:
    value = stats.as_real(tail, "tail")
    if not 0.0 < value < 0.5:
        raise ValueError(f"a one-sided error rate must be in (0, 0.5), got {tail!r}")
    return 1.0 - 2.0 * value


def _t_cdf(t: float, df: float) -> float:
    """P(T <= t) for Student's t with ``df`` degrees of freedom (``df / (df + t**2) ~ Beta(df/2, 1/2)``)."""
    if math.isinf(t):
        return 1.0 if t > 0 else 0.0
    tail = 0.5 * stats.regularized_beta(df / (df + t * t), df / 2.0, 0.5)
    return 1.0 - tail if t > 0 else tail


def welch_test(arm: Sequence[float], base: Sequence[float]) -> tuple[float, float] | None:
    """One-sided Welch t-test p-values ``(p_less, p_greater)`` for ``mean(arm) < mean(base)`` and ``>``.

    ``scipy.stats.ttest_ind(arm, base, equal_var=False, alternative="less" / "greater")``.
    None when a side has fewer than two scores (no variance to estimate). With
    no spread on either side the statistic is infinite (p 0 on the side the
    means point to, 1 on the other), or undefined when the means are equal too
    (both p-values 1).
    """
    a, b = _values(arm), _values(base)
    if len(a) < 2 or len(b) < 2:
        return None
    m1, m2 = statistics.fmean(a), statistics.fmean(b)
    v1 = statistics.variance(a, m1) / len(a)
    v2 = statistics.variance(b, m2) / len(b)
    if v1 + v2 == 0.0:
        if m1 == m2:
            return 1.0, 1.0
        return (0.0, 1.0) if m1 < m2 else (1.0, 0.0)
    t = (m1 - m2) / math.sqrt(v1 + v2)
    df = (v1 + v2) ** 2 / (v1 * v1 / (len(a) - 1) + v2 * v2 / (len(b) - 1))
    below = _t_cdf(t, df)
    return below, _t_cdf(-t, df)


# -- paired comparisons over inputs ---------------------------------------------------------------


def percentile_p_values(means: Sequence[float]) -> tuple[float, float]:
    """``(p_less, p_greater)`` of a bootstrap distribution of a difference (sorted ascending).

    ``p_greater`` is the tail ``tau`` at which the percentile lower bound
    (:func:`inputs.percentile_interval`'s type-7 quantile at ``tau``) reaches 0,
    so the lower bound at tail ``tau`` is above 0 exactly when ``p_greater <
    tau``; ``p_less`` likewise for the upper bound. Without ties at 0 they add
    up to 1, and ``p_greater`` is within ``1/B`` of the share of resampled means
    at or below 0 (Efron & Tibshirani 1993, ch. 16's achieved significance level).
    """
    count = len(means)
    if count == 0:
        raise ValueError("need at least one resampled mean")
    if count == 1:
        only = means[0]
        return (0.0 if only < 0.0 else 1.0), (0.0 if only > 0.0 else 1.0)
    last = count - 1

    def crossing(k: int) -> float:
        """The fractional index where the interpolated quantile reaches 0 between ``means[k-1] < 0 <= ...``."""
        before, after = means[k - 1], means[k]
        return (k - 1) + (0.0 - before) / (after - before) if after != before else float(k - 1)

    at_most = sum(1 for v in means if v <= 0.0)  # q(h) <= 0 up to the crossing above them
    if at_most == 0:
        p_greater = 0.0
    elif at_most == count:
        p_greater = 1.0
    else:
        k = at_most
        before, after = means[k - 1], means[k]
        h = (k - 1) + (0.0 - before) / (after - before)
        p_greater = h / last
    below = sum(1 for v in means if v < 0.0)
    if below == 0:
        p_less = 1.0
    elif below == count:
        p_less = 0.0
    else:
        p_less = 1.0 - crossing(below) / last
    return min(1.0, max(0.0, p_less)), min(1.0, max(0.0, p_greater))


class PairedScores(Value):
    """Two arms' mean scores compared over inputs, paired by input (arm minus baseline).

    ``differences``: per input, in the order given, ``mean(arm) - mean(base)``;
    ``difference`` their mean (None with no input). ``ci`` is the paired
    bootstrap's percentile interval at ``level``, ``t_ci`` Student's t interval
    of the differences (the cross-check, as ``normal_ci`` is for fractions),
    ``p_less``/``p_greater``/``p`` the bootstrap's p-values (two-sided: twice the
    smaller one-sided, at most 1); all None, with ``suppressed`` saying why, below
    ``min_inputs`` inputs. ``correlation``: Pearson's, of the two arms'
    per-input means (None below 2 inputs or with no spread on a side).
    """

    inputs: Final[int]
    difference: Final[float | None]
    differences: Final[tuple[float, ...]]
    ci: Final[Interval | None]
    t_ci: Final[Interval | None]
    p_less: Final[float | None]
    p_greater: Final[float | None]
    p: Final[float | None]
    resamples: Final[int]
    seed: Final[int]
    correlation: Final[float | None]
    suppressed: Final[str | None]
    #: The resampled mean differences, sorted (empty when suppressed).
    means: Final[tuple[float, ...]]

    __slots__ = FIELDS = (
        "inputs",
        "difference",
        "differences",
        "ci",
        "t_ci",
        "p_less",
        "p_greater",
        "p",
        "resamples",
        "seed",
        "correlation",
        "suppressed",
        "means",
    )

    def __init__(
        self,
        inputs: int,
        difference: float | None,
        differences: tuple[float, ...],
        ci: Interval | None,
        t_ci: Interval | None,
        p_less: float | None,
        p_greater: float | None,
        p: float | None,
        resamples: int,
        seed: int,
        correlation: float | None,
        suppressed: str | None,
        means: tuple[float, ...] = (),
    ) -> None:
        self.inputs = inputs
        self.difference = difference
        self.differences = differences
        self.ci = ci
        self.t_ci = t_ci
        self.p_less = p_less
        self.p_greater = p_greater
        self.p = p
        self.resamples = resamples
        self.seed = seed
        self.correlation = correlation
        self.suppressed = suppressed
        self.means = means

    def interval(self, tail: float) -> tuple[float, float] | None:
        """The percentile bounds at one-sided error ``tail`` each (a local level's ``alpha / 2``)."""
        if not self.means:
            return None
        value = stats.as_real(tail, "tail")
        if not 0.0 < value < 0.5:
            raise ValueError(f"a one-sided error rate must be in (0, 0.5), got {tail!r}")
        return stats.sample_quantile(self.means, value), stats.sample_quantile(self.means, 1.0 - value)


def _side(values: object, name: str, lo: float, hi: float) -> list[float]:
    if isinstance(values, (str, bytes)) or not isinstance(values, Iterable):
        raise TypeError(f"{name} must be a sequence of scores, got {values!r}")
    checked = _values(values, name)
    if not checked:
        raise ValueError(f"{name} needs at least one score for each input")
    rescale(checked, lo, hi)
    return checked


def paired_difference(
    pairs: Iterable[tuple[Sequence[float], Sequence[float]]],
    level: float = 0.95,
    low: float = 0.0,
    high: float = 1.0,
    resamples: int = inputs.RESAMPLES,
    seed: int = inputs.SEED,
    min_inputs: int = inputs.MIN_INPUTS,
) -> PairedScores:
    """The mean over inputs of ``mean(arm scores) - mean(baseline scores)``, with the paired bootstrap.

    ``pairs``: per input, in input-id order, ``(arm scores, baseline scores)``,
    each side at least one run's score. The bootstrap is
    :func:`inputs.bootstrap_means` of the per-input differences (``resamples``
    draws of N inputs through ``random.Random(seed)``: the same pairs give the
    same numbers in any process) and :func:`inputs.percentile_interval`; the
    differences are in the scores' units. Below ``min_inputs`` inputs (ini
    ``prob_min_inputs``) only the estimate is given.
    """
    lo, hi = check_range(low, high)
    level = _level(level)
    count = stats.as_int(resamples, "resamples")
    if count < 1:
        raise ValueError(f"resamples must be at least 1, got {resamples!r}")
    seed = stats.as_int(seed, "seed")
    least = stats.as_int(min_inputs, "min_inputs")
    if least < 2:
        raise ValueError(f"min_inputs must be at least 2, got {min_inputs!r}")
    if isinstance(pairs, (str, bytes)):
        raise TypeError(f"pairs must be (arm scores, baseline scores) per input, got {pairs!r}")
    arm_means: list[float] = []
    base_means: list[float] = []
    for pair in pairs:
        try:
            arm, base = pair
        except (TypeError, ValueError):
            raise TypeError(f"each input must be an (arm scores, baseline scores) pair, got {pair!r}") from None
        arm_means.append(statistics.fmean(_side(arm, "the arm", lo, hi)))
        base_means.append(statistics.fmean(_side(base, "the baseline", lo, hi)))
    differences = tuple(a - b for a, b in zip(arm_means, base_means, strict=False))
    n = len(differences)
    correlation = None
    if n >= 2:
        try:
            correlation = statistics.correlation(arm_means, base_means)
        except statistics.StatisticsError:
            correlation = None
    if n == 0:
        return PairedScores(0, None, (), None, None, None, None, None, count, seed, None, inputs.fewer_inputs(least))
    estimate = math.fsum(differences) / n
    if n < least:
        return PairedScores(
            n, estimate, differences, None, None, None, None, None, count, seed, correlation, inputs.fewer_inputs(least)
        )
    means = tuple(sorted(float(v) for v in inputs.bootstrap_means(differences, count, seed)))
    span = hi - lo
    ci_low, ci_high = inputs.percentile_interval(means, level)
    t_low, t_high = inputs.t_interval(differences, level)
    p_less, p_greater = percentile_p_values(means)
    return PairedScores(
        inputs=n,
        difference=estimate,
        differences=differences,
        ci=Interval(PAIRED_BOOTSTRAP, level, max(-span, float(ci_low)), min(span, float(ci_high))),
        t_ci=Interval(STUDENT_T, level, float(t_low), float(t_high)),
        p_less=p_less,
        p_greater=p_greater,
        p=min(1.0, 2.0 * min(p_less, p_greater)),
        resamples=count,
        seed=seed,
        correlation=correlation,
        suppressed=None,
        means=means,
    )


# -- averages over inputs -------------------------------------------------------------------------------


def score_icc(groups: Sequence[Sequence[float]], clip: bool = True) -> float | None:
    """ICC(1) of per-run scores with inputs as groups: one-way random-effects ANOVA.

    ``SSB = sum k_i (mean_i - grand)**2`` on ``G - 1`` degrees of freedom and
    ``SSW = sum_i sum_j (y_ij - mean_i)**2`` on ``M - G`` (``grand`` the mean of
    all ``M`` runs), ``k0 = (M - sum k_i**2 / M) / (G - 1)``, ``rho = (MSB -
    MSW) / (MSB + (k0 - 1) MSW)``: ``(F - 1) / (F + k0 - 1)`` with ``F`` the
    ANOVA's F (scipy's ``f_oneway``). The score analogue of
    :func:`inputs.icc`; clipped to [0, 1] unless ``clip`` is false. None below 2
    groups, with one run per group, or when the denominator is not positive
    (no spread at all).
    """
    data = [_values(group, "each input's scores") for group in groups]
    if any(not group for group in data):
        raise ValueError("each input needs at least one score")
    count = len(data)
    runs = sum(len(group) for group in data)
    if count < 2 or runs == count:
        return None
    grand = math.fsum(math.fsum(group) for group in data) / runs
    means = [statistics.fmean(group) for group in data]
    ssb = math.fsum(len(group) * (mean - grand) ** 2 for group, mean in zip(data, means, strict=False))
    ssw = math.fsum(math.fsum((y - mean) ** 2 for y in group) for group, mean in zip(data, means, strict=False))
    msb = ssb / (count - 1)
    msw = ssw / (runs - count)
    k0 = (runs - math.fsum(len(group) ** 2 for group in data) / runs) / (count - 1)
    denominator = msb + (k0 - 1.0) * msw
    if denominator <= 0.0:
        return None
    rho = (msb - msw) / denominator
    return min(1.0, max(0.0, rho)) if clip else rho


def input_estimate(
    groups: Sequence[Sequence[float]],
    level: float = 0.95,
    low: float = 0.0,
    high: float = 1.0,
    resamples: int = inputs.RESAMPLES,
    seed: int = inputs.SEED,
    min_inputs: int = inputs.MIN_INPUTS,
    stopped: Iterable[bool] | None = None,
    interval: str = inputs.PERCENTILE,
) -> inputs.InputEstimate:
    """The mean score over inputs (``groups``: each input's scores, in case-id order, at least one input).

    The per-input mean scores, rescaled to [0, 1], go through
    :func:`inputs.interval_of` (the cluster bootstrap's percentile interval by
    default, with ``resamples`` and ``seed``; ``t``; or ``wilson``, capped at the
    total runs), and the result is mapped back to the scores' units. The
    interval needs ``min_inputs`` inputs and none ``stopped`` early (0.3.0's
    rules, :func:`inputs.fewer_inputs`, :func:`inputs.stopped_early`); ρ
    (:func:`score_icc`) and the projection are computed either way.
    """
    lo, hi = check_range(low, high)
    level = _level(level)
    method = inputs.parse_interval(interval)
    count = stats.as_int(resamples, "resamples")
    if count < 1:
        raise ValueError(f"resamples must be at least 1, got {resamples!r}")
    seed = stats.as_int(seed, "seed")
    least = stats.as_int(min_inputs, "min_inputs")
    if least < 2:
        raise ValueError(f"min_inputs must be at least 2, got {min_inputs!r}")
    if isinstance(groups, (str, bytes)):
        raise TypeError(f"groups must be a sequence of each input's scores, got {groups!r}")
    unit = [rescale(group, lo, hi) for group in groups]
    if not unit:
        raise ValueError("need at least one input")
    if any(not group for group in unit):
        raise ValueError("each input needs at least one score")
    flags = [False] * len(unit) if stopped is None else list(stopped)
    if len(flags) != len(unit) or any(not isinstance(flag, bool) for flag in flags):
        raise ValueError(f"stopped must have one boolean per input ({len(unit)})")
    halted = sum(flags)
    totals = [len(group) for group in unit]
    values = [statistics.fmean(group) for group in unit]
    return inputs.over_inputs(
        values, totals, score_icc(unit), level, count, seed, least, halted, method, (lo, hi), inputs.t_interval
    )


# -- planning --------------------------------------------------------------------------------------------


def fewest_runs(bar: float, level: float = 0.95, low: float = 0.0, high: float = 1.0, cap: int = 100_000) -> int | None:
    """The fewest runs with which a score gate at ``bar`` can pass at all: every score at the top of the
    range, the default interval's lower bound (:func:`score_interval`) at or above the bar. None when not
    even ``cap`` runs reach it (a bar at the top of the range never passes).

    That lower bound only rises with the number of runs (every score the same, the bets tuned to ``n``),
    so the count is found by doubling, then bisection: ``log2(n)`` intervals of at most ``n`` scores.
    """
    lo, hi = check_range(low, high)
    value = stats.as_real(bar, "bar")
    level = _level(level)
    most = stats.as_int(cap, "cap")
    if most < 1:
        raise ValueError(f"cap must be at least 1, got {cap!r}")

    def passes(n: int) -> bool:
        return score_interval([hi] * n, level, lo, hi).low >= value

    if value >= hi:
        return None  # the capital betting against the top of the range never grows: its bound stays below it
    if passes(1):
        return 1
    below, above = 1, 2
    while not passes(above):
        if above >= most:
            return None
        below, above = above, min(2 * above, most)
    while above - below > 1:
        middle = (below + above) // 2
        if passes(middle):
            above = middle
        else:
            below = middle
    return above
