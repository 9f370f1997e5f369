"""Early stopping of gated cases: curtailment and an anytime-valid sequential test.

Pure and pytest-free. Two ways to stop paying for a case whose verdict is known:

* **curtail** (:func:`completion_verdict`): the verdict every outcome of the
  runs still to come would lead to. Stopping then cannot change the verdict.
* **sequential** (:func:`sequential_verdict`): a one-sided *mixture
  sequential probability ratio test* on each side of the bar, with a
  beta-binomial mixture (a uniform prior truncated to the alternative).
  Its likelihood ratio against the bar is a non-negative supermartingale
  under the null, so by Ville's inequality it crosses ``1/alpha`` with
  probability at most ``alpha`` *at any time* (Robbins 1970; Howard, Ramdas,
  McAuliffe & Sekhon 2021, Annals of Statistics 49(2); Ramdas, Grünwald,
  Vovk & Shafer 2023, Statistical Science 38(4)). It may be looked at after
  every run, which a fixed-n interval may not: re-checking a fixed-n
  interval after every run inflates its error rate.

Each side is tested at ``alpha = (1 - confidence) / 2``, as each side of the
two-sided intervals the fixed-n gates use.
"""

from __future__ import annotations

import math
from collections.abc import Callable

from ..vocabulary import FAILED, PASSED
from . import stats

CURTAIL = "curtail"
SEQUENTIAL = "sequential"
MODES = (CURTAIL, SEQUENTIAL)
OFF = "off"


def parse_mode(value: object) -> str | None:
    """``curtail``, ``sequential``; ``off``, ``none`` or empty: no stopping (``None``)."""
    if value is None:
        return None
    text = str(value).strip().lower()
    if text in ("", OFF, "none", "no", "false"):
        return None
    if text not in MODES:
        raise ValueError(f"the stop mode must be one of {', '.join(MODES)} or off, got {value!r}")
    return text


def _log_mass(passes: int, fails: int, bar: float, above: bool) -> float:
    """log of the integral of q^passes (1-q)^fails over (bar, 1] (above) or [0, bar)."""
    return stats.log_incomplete_beta(bar, passes + 1.0, fails + 1.0, upper=above)


def log_evalue_above(passes: int, total: int, bar: float) -> float:
    """log of the mixture likelihood ratio against H0: rate <= bar.

    ``M_n = [∫_bar^1 q^s (1-q)^f dq / (1 - bar)] / [bar^s (1-bar)^f]``, with
    ``s`` passes and ``f`` non-passes: the likelihood under a uniform prior
    on the alternative (bar, 1] over the likelihood at the bar. Each
    component ``q > bar`` is a supermartingale under every ``p <= bar``, so
    the mixture is too. ``-inf`` when the bar is 1 (no rate is above it).
    """
    fails = total - passes
    if bar >= 1.0:
        return -math.inf
    return _log_mass(passes, fails, bar, True) - math.log1p(-bar) - passes * math.log(bar) - fails * math.log1p(-bar)


def log_evalue_below(passes: int, total: int, bar: float) -> float:
    """log of the mixture likelihood ratio against H0: rate >= bar (uniform prior on [0, bar))."""
    fails = total - passes
    if bar >= 1.0:
        # H0: rate >= 1 means every run passes; one non-pass refutes it for sure.
        return math.inf if fails else 0.0
    return _log_mass(passes, fails, bar, False) - math.log(bar) - passes * math.log(bar) - fails * math.log1p(-bar)


def threshold(confidence: float) -> float:
    """log(1/alpha) with alpha = (1 - confidence) / 2: the crossing that decides one side."""
    return -math.log((1.0 - confidence) / 2.0)


def _log_max_ratio(passes: int, total: int, bar: float) -> float:
    """n * KL(p_hat || bar): the log likelihood ratio at the best rate, a bound on any mixture of it."""
    p_hat = passes / total
    value = 0.0
    if passes:
        value += passes * math.log(p_hat / bar)
    if passes < total:
        value += (total - passes) * (math.log1p(-p_hat) - math.log1p(-bar)) if bar < 1.0 else math.inf
    return value


def sequential_verdict(passes: int, total: int, bar: float, confidence: float) -> str | None:
    """PASSED / FAILED once the mixture SPRT rejects one side, else None.

    Only the side the observed rate points to can reject, and only once the
    likelihood ratio at the observed rate (which bounds every mixture of it)
    reaches the threshold, so most calls cost no incomplete beta function.
    """
    if total <= 0:
        return None
    level = threshold(confidence)
    p_hat = passes / total
    if p_hat == bar or _log_max_ratio(passes, total, bar) < level:
        return None
    if p_hat > bar:
        return PASSED if log_evalue_above(passes, total, bar) >= level else None
    return FAILED if log_evalue_below(passes, total, bar) >= level else None


def completion_verdict(
    decide: Callable[[int, int], str], passes: int, total: int, remaining: int, bar: float | None = None
) -> str | None:
    """The verdict every outcome of ``remaining`` more runs leads to, or None.

    ``decide(passes, total)`` is the fixed-n rule of the gate (``pass``,
    ``fail`` or ``undecided``). Each remaining run passes, does not pass, or
    is not counted (skipped, or an excluded error), so the final counts are
    ``(passes + a, total + a + b)`` with ``a + b <= remaining``. Interval
    bounds rise with passes at a fixed total and fall with the total at fixed
    passes (Clopper-Pearson, Wilson, Beta), so the lowest lower bound is at
    "every remaining run fails" and the highest upper bound at "every
    remaining run passes": checking those two corners checks every
    completion (``tests/unit/test_stopping.py`` enumerates them all to
    confirm it). Give ``bar`` when the interval always contains the observed
    rate (Clopper-Pearson, Wilson): a corner whose observed rate is on the
    wrong side of the bar is then skipped without computing its interval.
    """
    if remaining <= 0:
        verdict = decide(passes, total) if total else "undecided"
        return verdict if verdict in (PASSED, FAILED) else None
    if total == 0:
        return None  # every remaining run could be skipped: nothing counted
    skip_pass = skip_fail = False
    if bar is not None:
        skip_pass = passes / (total + remaining) < bar  # low <= estimate < bar: not PASS
        skip_fail = (passes + remaining) / (total + remaining) >= bar  # high >= estimate >= bar: not FAIL
    if not skip_pass and decide(passes, total + remaining) == PASSED and decide(passes, total) == PASSED:
        return PASSED
    if not skip_fail and decide(passes + remaining, total + remaining) == FAILED and decide(passes, total) == FAILED:
        return FAILED
    return None


def count_completion(passes: int, remaining: int, min_passes: int) -> str | None:
    """``min_passes`` gates: PASSED once reached, FAILED once out of reach."""
    if passes >= min_passes:
        return PASSED
    if passes + remaining < min_passes:
        return FAILED
    return None
