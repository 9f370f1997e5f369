"""How a family of comparisons is judged, whichever the measure: the tests, intervals and verdicts of :mod:`.comparisons`.

Method (docs/user-guide.md, "Comparing and catching drops" and "Graded
results"); each measure's own statistics are behind its interface
(``measures``: Fisher's exact test and Newcombe's interval for pass
fractions, Welch's test and Newcombe's MOVER with betting intervals for
scores):

* **Per case** (or per A/B input): the difference of the two sides'
  estimates; the measure's one-sided tests (two-sided p: twice the smaller)
  and its interval of the difference.
* **Pooled** (per benchmark, or per A/B arm), paired by case or input: the
  mean of the per-pair differences (:meth:`~pytest_probability.measures.measure.Measure.pooled`):
  for fractions, with fewer than ``min_inputs`` pairs (ini
  ``prob_min_inputs``, default 10) the inputs taken as fixed (Fisher's test,
  the exact stratified test, the mean of Agresti-Caffo differences), with
  more the sign-flip test over inputs and its inverted interval; for scores
  the paired bootstrap over inputs, from ``min_inputs`` pairs on.
* **Multiplicity**: each family (the session's per-case baseline
  comparisons of one kind of measure; its per-benchmark ones; its A/B arms;
  its A/B inputs) is adjusted with ``--prob-adjust``. A per-case interval is
  drawn at the hypothesis's *local level* (``twostats.adjust``), so it
  excludes the null exactly when the adjusted test rejects. A pooled
  interval is drawn at the session's confidence, as 0.3.0 drew it: its
  adjusted p is reported beside it.
* **Per-case verdicts** (what the drop alerts read) against ``margin`` ``m``
  (a share of the measure's range): :func:`.verdicts.case_verdict`.
* **A benchmark's verdict** (its ``[baseline]`` or ``[compare:ARM]`` item;
  only under a margin), 0.3.0's rule (:func:`.verdicts.margin_verdict`),
  UNDECIDED when the pooled interval decides nothing (fewer than
  ``min_inputs`` pairs, whose inputs are taken as fixed and so say nothing
  of other inputs).
"""

from __future__ import annotations

from collections.abc import Sequence

from ...maths import twostats
from ...maths.interval import Interval
from ...measures.measure import FRACTION, PairTest, Pooling
from ...vocabulary import BASELINE_KIND, UNDECIDED
from .comparisons import MIN_INPUTS, Comparison, Pair
from .verdicts import case_verdict, margin_verdict


def pair_tests(pair: Pair) -> None:
    """The measure's one-sided tests of one pair and the two-sided p, in place (a note when they cannot be made)."""
    tested = pair.measure.pair_test(pair.arm, pair.base)
    if isinstance(tested, PairTest):
        pair.p_less, pair.p_greater = tested
        pair.p = min(1.0, 2.0 * min(tested))
    elif tested is not None:
        pair.note = pair.note or tested


def judge_pairs(pairs: Sequence[Pair], adjustment: str, confidence: float) -> None:
    """Test a family of pairs, adjust them, and give each its interval and verdict (in place)."""
    for pair in pairs:
        pair_tests(pair)
    tested = [p for p in pairs if p.p is not None]
    found = twostats.adjust([p.p for p in tested if p.p is not None], adjustment, 1.0 - confidence)
    for pair, result in zip(tested, found, strict=True):
        pair.p_adjusted = result.p_adjusted
        pair.local_level = result.local_level
        low, high, method = pair.measure.pair_interval(pair.arm, pair.base, result.local_level / 2.0)
        drop_side = (pair.p_less or 1.0) <= (pair.p_greater or 1.0)
        margin = pair.margin * pair.measure.span
        verdict, high = case_verdict(pair.difference, low, high, result.rejected, drop_side, margin, pair.equivalence)
        pair.ci = Interval(method, 1.0 - result.local_level, low, high)
        pair.verdict = verdict if pair.judged else None
    for pair in pairs:
        if pair.p is None and pair.judged:
            pair.verdict = UNDECIDED
            pair.note = pair.note or pair.measure.untested


def pool(
    comparison: Comparison,
    confidence: float,
    min_inputs: int = MIN_INPUTS,
    resamples: int = twostats.SIGN_FLIP_RESAMPLES,
    seed: int = 0,
) -> None:
    """The comparison's pairs (both sides counted) pooled by its measure: the mean difference, its test and
    interval, in place; for the pass fraction (whose counts are runs) also the cost ratio of the two sides' runs."""
    paired = [p for p in comparison.pairs if p.paired]
    unit = "cases" if comparison.kind == BASELINE_KIND else "inputs"
    pooled = comparison.measure.pooled(
        [(p.arm, p.base) for p in paired], Pooling(confidence, min_inputs, resamples, seed, unit)
    )
    comparison.difference = pooled.difference
    comparison.p_less, comparison.p_greater, comparison.p = pooled.p_less, pooled.p_greater, pooled.p
    comparison.p_method, comparison.exact, comparison.ci = pooled.p_method, pooled.exact, pooled.ci
    comparison.suppressed, comparison.correlation = pooled.suppressed, pooled.correlation
    comparison.resamples, comparison.seed = pooled.resamples, pooled.seed
    if paired and comparison.measure.unit == FRACTION:
        per_run1 = sum(p.cost1 for p in paired) / sum(comparison.measure.count(p.arm) for p in paired)
        per_run2 = sum(p.cost2 for p in paired) / sum(comparison.measure.count(p.base) for p in paired)
        comparison.cost_ratio = per_run1 / per_run2 if per_run1 > 0 and per_run2 > 0 else None


def judge_pooled(comparisons: Sequence[Comparison], adjustment: str, confidence: float) -> None:
    """Adjust a family of pooled comparisons' p-values and give each, under a margin, its verdict
    (:func:`margin_verdict` of its interval; UNDECIDED when the interval decides nothing)."""
    tested = [c for c in comparisons if c.p is not None]
    found = twostats.adjust([c.p for c in tested if c.p is not None], adjustment, 1.0 - confidence)
    for comparison, result in zip(tested, found, strict=True):
        comparison.p_adjusted = result.p_adjusted
        comparison.local_level = result.local_level
    for comparison in comparisons:
        comparison.family = len(tested)
        if not comparison.judged:
            comparison.verdict = None
        elif comparison.suppressed is not None or comparison.ci is None:
            comparison.verdict = UNDECIDED
        else:
            comparison.verdict = margin_verdict(
                comparison.ci.low, comparison.ci.high, comparison.margin_points, comparison.equivalence
            )
