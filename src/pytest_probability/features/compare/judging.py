"""How a family of comparisons is judged: the tests, intervals and verdicts of :mod:`.comparisons`' objects.

Method (docs/user-guide.md, "Comparing and catching drops"):

* **Per case** (or per A/B input): the difference ``p_tonight - p_baseline``;
  Fisher's exact test (two-sided: the doubled smaller one-sided tail);
  Newcombe's hybrid score interval.
* **Pooled** (per benchmark, or per A/B arm), paired by case or input: the
  mean of the per-stratum differences. With fewer than ``min_inputs`` pairs
  (ini ``prob_min_inputs``, default 10), the inputs are taken as fixed: the
  exact conditional test over strata (Birch's exact Cochran-Mantel-Haenszel
  test, the exact McNemar test with one run per input) and a Wald interval of
  the mean of Agresti-Caffo adjusted differences (Newcombe's with a single
  stratum). With more, the inputs are a sample: the sign-flip test over
  inputs (exact up to 16 inputs, seeded Monte Carlo beyond) and the interval
  that inverts it.
* **Multiplicity**: each family (the session's per-case baseline comparisons;
  its per-benchmark ones; its A/B arms; its A/B inputs) is adjusted with
  ``--prob-adjust``. A per-case interval is drawn at the hypothesis's *local
  level* (twostats.adjust), so it excludes the null exactly when the adjusted
  test rejects. A pooled interval is drawn at the session's confidence, as
  0.3.0 drew it: its adjusted p is reported beside it.
* **Per-case verdicts** (what the drop alerts read) against ``margin`` ``m``:
  FAIL when the adjusted exact test rejects in the direction of a drop and
  the upper bound is below ``-m``; PASS when the lower bound is above ``-m``
  (with ``equivalence``: within ``(-m, m)``; FAIL also when the lower bound is
  above ``m``); UNDECIDED otherwise. Where the exact test is more cautious
  than the interval (the interval below ``-m`` but no rejection), the
  displayed upper bound is raised to ``-m`` so that the interval agrees with
  the verdict.
* **A benchmark's verdict** (its ``[baseline]`` or ``[compare:ARM]`` item;
  only under a margin), 0.3.0's rule: PASS when the pooled interval lies above
  ``-m`` (within ``(-m, m)`` with ``equivalence``), FAIL when it lies below
  ``-m`` (or above ``m`` with ``equivalence``), UNDECIDED otherwise, and
  UNDECIDED with fewer than ``min_inputs`` pairs, whose inputs are taken as
  fixed and so say nothing of other inputs.

"""

from __future__ import annotations

import math
from collections.abc import Sequence

from ...maths import stats, twostats
from ...model.outputs import Interval
from ...vocabulary import BASELINE_KIND, UNDECIDED
from .comparisons import MIN_INPUTS, Comparison, Pair
from .verdicts import case_verdict, margin_verdict


def pair_tests(pair: Pair) -> None:
    """Fisher's exact tests of one pair (both one-sided tails and the two-sided p), in place."""
    if pair.n1 and pair.n2:
        pair.p_less = twostats.fisher_less(pair.x1, pair.n1, pair.x2, pair.n2)
        pair.p_greater = twostats.fisher_greater(pair.x1, pair.n1, pair.x2, pair.n2)
        pair.p = min(1.0, 2.0 * min(pair.p_less, pair.p_greater))


def judge_pairs(pairs: Sequence[Pair], adjustment: str, confidence: float) -> None:
    """Adjust a family of pairs and give each its interval and verdict (in place)."""
    alpha = 1.0 - confidence
    tested = [p for p in pairs if p.p is not None]
    for pair, result in zip(tested, twostats.adjust([p.p for p in tested], adjustment, alpha), strict=False):  # type: ignore[misc]
        pair.p_adjusted = result.p_adjusted
        pair.local_level = result.local_level
        tail = result.local_level / 2.0
        low, high = twostats.newcombe(pair.x1, pair.n1, pair.x2, pair.n2, tail)
        drop_side = (pair.p_less or 1.0) <= (pair.p_greater or 1.0)
        verdict, high = case_verdict(
            pair.difference, low, high, result.rejected, drop_side, pair.margin, pair.equivalence
        )
        pair.ci = Interval("newcombe", 1.0 - result.local_level, low, high)
        pair.verdict = verdict if pair.judged else None
    for pair in pairs:
        if pair.p is None and pair.judged:
            pair.verdict = UNDECIDED
            pair.note = pair.note or "no counted runs on one side"


def pooled_tests(
    comparison: Comparison, min_inputs: int = MIN_INPUTS, resamples: int = twostats.SIGN_FLIP_RESAMPLES, seed: int = 0
) -> None:
    """The pooled test of a comparison's pairs (by their number: Fisher, the stratified exact test or the
    sign-flip test from ``min_inputs`` pairs on), its mean difference and cost ratio, in place."""
    strata = [twostats.Stratum(p.x1, p.n1, p.x2, p.n2) for p in comparison.pairs if p.n1 and p.n2]
    if not strata:
        return
    comparison.difference = twostats.mean(s.x1 / s.n1 - s.x2 / s.n2 for s in strata)
    if len(strata) >= min_inputs:
        flip = twostats.sign_flip(
            [(s.x1 * s.n2 - s.x2 * s.n1, s.n1 * s.n2) for s in strata], seed=seed, resamples=resamples
        )
        comparison.p_less, comparison.p_greater = flip.p_less, flip.p_greater
        comparison.p_method = "sign-flip"
        comparison.exact = flip.exact
        comparison.flip = flip
        if not flip.exact:
            comparison.resamples, comparison.seed = resamples, seed
    elif len(strata) == 1:
        s = strata[0]
        comparison.p_less = twostats.fisher_less(*s)
        comparison.p_greater = twostats.fisher_greater(*s)
        comparison.p_method = "fisher"
    else:
        comparison.p_less = twostats.stratified_less(strata)
        comparison.p_greater = twostats.stratified_greater(strata)
        comparison.p_method = "stratified-exact"
    comparison.p = min(1.0, 2.0 * min(comparison.p_less, comparison.p_greater))
    costs1 = [(p.cost1, p.n1) for p in comparison.pairs if p.n1 and p.n2]
    costs2 = [(p.cost2, p.n2) for p in comparison.pairs if p.n1 and p.n2]
    per_run1 = sum(c for c, _ in costs1) / sum(n for _, n in costs1)
    per_run2 = sum(c for c, _ in costs2) / sum(n for _, n in costs2)
    comparison.cost_ratio = per_run1 / per_run2 if per_run1 > 0 and per_run2 > 0 else None


def pooled_interval(strata: Sequence[twostats.Stratum], tail: float) -> tuple[float, float, str]:
    """Interval of the mean difference over strata at one-sided error ``tail`` per bound."""
    if len(strata) == 1:
        s = strata[0]
        low, high = twostats.newcombe(s.x1, s.n1, s.x2, s.n2, tail)
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


def judge_pooled(
    comparisons: Sequence[Comparison], adjustment: str, confidence: float, min_inputs: int = MIN_INPUTS
) -> None:
    """Adjust a family of pooled comparisons' p-values, and give each its interval (at ``confidence``)
    and, under a margin, its verdict (:func:`margin_verdict`; UNDECIDED below ``min_inputs`` pairs)."""
    alpha = 1.0 - confidence
    tested = [c for c in comparisons if c.p is not None]
    for comparison, result in zip(tested, twostats.adjust([c.p for c in tested], adjustment, alpha), strict=False):  # type: ignore[misc]
        comparison.p_adjusted = result.p_adjusted
        comparison.local_level = result.local_level
    for comparison in comparisons:
        comparison.family = len(tested)
        strata = [twostats.Stratum(p.x1, p.n1, p.x2, p.n2) for p in comparison.pairs if p.n1 and p.n2]
        if not strata:
            comparison.suppressed = "no paired inputs"
            comparison.verdict = UNDECIDED if comparison.judged else None
            continue
        if comparison.flip is not None:
            low, high = comparison.flip.interval(alpha / 2.0)
            low, high, method = max(-1.0, low), min(1.0, high), "sign-flip"
        else:
            low, high, method = pooled_interval(strata, alpha / 2.0)
            unit = "cases" if comparison.kind == BASELINE_KIND else "inputs"
            comparison.suppressed = f"fewer than {min_inputs} paired {unit}"
        comparison.ci = Interval(method, confidence, low, high)
        if not comparison.judged:
            comparison.verdict = None
        elif comparison.suppressed is not None:
            comparison.verdict = UNDECIDED
        else:
            comparison.verdict = margin_verdict(low, high, comparison.margin, comparison.equivalence)
