"""Comparisons: tonight against a baseline, and A/B arms of one parametrize axis; how a family is judged.

Pure and pytest-free: :class:`Pair` and :class:`Comparison` objects (built
from rows by :mod:`.pairs`) get their tests, intervals and verdicts here.
Every output (terminal, JSON, metrics, verdict items) renders the same
:class:`Comparisons`.

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
  test rejects. A pooled interval is drawn at the session's confidence,
  unadjusted (a benchmark's verdict reads it): its adjusted p is reported
  beside it.
* **Per-case verdicts** (what the drop alerts read) against ``margin`` ``m``:
  FAIL when the adjusted exact test rejects in the direction of a drop and
  the upper bound is below ``-m``; PASS when the lower bound is above ``-m``
  (with ``equivalence``: within ``(-m, m)``; FAIL also when the lower bound is
  above ``m``); UNDECIDED otherwise. Where the exact test is more cautious
  than the interval (the interval below ``-m`` but no rejection), the
  displayed upper bound is raised to ``-m`` so that the interval agrees with
  the verdict.
* **A benchmark's verdict** (its ``[baseline]`` or ``[compare:ARM]`` item;
  only under a margin): PASS when the pooled interval lies above
  ``-m`` (within ``(-m, m)`` with ``equivalence``), FAIL when it lies below
  ``-m`` (or above ``m`` with ``equivalence``), UNDECIDED otherwise, and
  UNDECIDED with fewer than ``min_inputs`` pairs, whose inputs are taken as
  fixed and so say nothing of other inputs.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Sequence

from .settings import CompareConfig
from .verdicts import case_verdict, margin_verdict
from ...maths import stats, twostats
from ...model.outputs import Interval
from ...vocabulary import BASELINE_KIND, FAILED, PASSED, UNDECIDED, verdict_key

if TYPE_CHECKING:
    from .baseline import Baseline  # read only with a baseline option
    from .score_pairs import ScoreComparison, ScorePair

#: From this many pairs on (ini ``prob_min_inputs``), a pooled comparison treats its inputs (or
#: cases) as a sample: sign-flip test over inputs and its inverted interval; below, no verdict.
MIN_INPUTS = 10


# -- results ------------------------------------------------------------------


@dataclass
class Pair:
    """One case (baseline) or one input (A/B): tonight/arm against baseline."""

    key: str  # case key (baseline) or input id (A/B)
    label: str
    x1: int
    n1: int
    x2: int
    n2: int
    cost1: float = 0.0
    cost2: float = 0.0
    margin: float = 0.0
    equivalence: bool = False
    judged: bool = True  # False: A/B without a margin (no verdict)
    p_less: float | None = None
    p_greater: float | None = None
    p: float | None = None
    p_adjusted: float | None = None
    local_level: float | None = None
    ci: Interval | None = None
    verdict: str | None = None
    note: str = ""

    @property
    def difference(self) -> float | None:
        if not self.n1 or not self.n2:
            return None
        return self.x1 / self.n1 - self.x2 / self.n2


@dataclass
class Comparison:
    """One benchmark against its baseline, or one A/B arm against the baseline variant."""

    kind: str  # "baseline" or "compare"
    function: str
    #: The benchmark's node id (its verdict item's key is ``<scope>[kind]``/``<scope>[compare:ARM]``).
    scope: str
    axis: str | None
    baseline: str
    arm: str
    pairs: list[Pair]
    unpaired: list[str]
    margin: float
    equivalence: bool
    judged: bool
    difference: float | None = None
    ci: Interval | None = None
    p: float | None = None
    p_less: float | None = None
    p_greater: float | None = None
    p_method: str | None = None
    p_adjusted: float | None = None
    local_level: float | None = None
    adjustment: str = "holm"
    family: int = 0
    input_family: int = 0
    verdict: str | None = None
    cost_ratio: float | None = None
    exact: bool = True
    flip: Any = field(default=None, repr=False)
    #: Case keys the comparison is made of (tonight's; both arms' for A/B): rerun by ``--lf``.
    cases: list[str] = field(default_factory=list)
    #: Why there is no verdict from the interval ("fewer than 10 paired inputs"), else None.
    suppressed: str | None = None
    #: Monte Carlo sign-flip patterns and their seed (None when the test was exact or not a sign flip).
    resamples: int | None = None
    seed: int | None = None
    #: A/B: the Pearson correlation of the two arms' per-input pass fractions (how much pairing by input
    #: narrows the interval, Miller 2024, section 4); None below 2 pairs or when an arm's fractions are all equal.
    correlation: float | None = None

    @property
    def key(self) -> str:
        """The decision key, and node id, of the benchmark's verdict item of this comparison."""
        return verdict_key(self.scope, self.kind, self.arm if self.kind != BASELINE_KIND else "")

    @property
    def paired(self) -> int:
        return sum(1 for p in self.pairs if p.n1 and p.n2)

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "function": self.function,
            "scope": self.scope,
            "axis": self.axis,
            "baseline": self.baseline,
            "arm": self.arm,
            "pairs": sum(1 for p in self.pairs if p.n1 and p.n2),
            "unpaired": list(self.unpaired),
            "difference": self.difference,
            "ci": self.ci.to_dict() if self.ci else None,
            "p": self.p,
            "p_method": self.p_method,
            "exact": self.exact if self.p is not None else None,
            "p_adjusted": self.p_adjusted,
            "adjustment": self.adjustment,
            "family": self.family,
            "exploratory": self.adjustment == "none" and self.family > 1,
            "margin": self.margin if self.judged else None,
            "equivalence": self.equivalence,
            "verdict": self.verdict,
            "suppressed": self.suppressed,
            "resamples": self.resamples,
            "seed": self.seed,
            "cost_ratio": self.cost_ratio,
            "correlation": self.correlation,
            "inputs": [
                {
                    "input": p.label,
                    "nodeid": p.key if self.kind == BASELINE_KIND else None,
                    "baseline": {"passes": p.x2, "total": p.n2},
                    "arm": {"passes": p.x1, "total": p.n1},
                    "difference": p.difference,
                    "ci": p.ci.to_dict() if p.ci else None,
                    "p": p.p,
                    "p_method": "fisher" if p.p is not None else None,
                    "p_adjusted": p.p_adjusted,
                    "family": self.input_family,
                    "verdict": p.verdict,
                    "note": p.note or None,
                }
                for p in self.pairs
            ],
        }


@dataclass
class Comparisons:
    """Everything the session compared."""

    config: CompareConfig
    confidence: float
    undecided: str
    comparisons: list[Comparison] = field(default_factory=list)
    #: Baseline: per-case pairs by case key (what verdict items and gauges read).
    cases: dict[str, Pair] = field(default_factory=dict)
    new: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    changed: list[str] = field(default_factory=list)
    baseline: Baseline | None = None
    #: Comparisons of mean scores (``.score_pairs``), per benchmark or A/B arm and score name; each joins the
    #: verdict item of the fractions' comparison with its key.
    scores: list[ScoreComparison] = field(default_factory=list)
    #: Baseline: per-case score pairs, by (case key, score name) (what the score gauges read).
    score_cases: dict[tuple[str, str], ScorePair] = field(default_factory=dict)

    def passed(self, verdict: str | None) -> bool:
        return verdict == PASSED or (verdict == UNDECIDED and self.undecided == PASSED)

    @property
    def failed(self) -> list[Comparison | ScoreComparison]:
        """The benchmarks' verdicts that fail the session (FAIL, or UNDECIDED as ``--prob-undecided`` says),
        of fractions and of scores."""
        found: list[Comparison | ScoreComparison] = [c for c in self.comparisons if c.judged and not self.passed(c.verdict)]
        return found + [c for c in self.scores if c.judged and not self.passed(c.verdict)]

    @property
    def failed_cases(self) -> list[str]:
        """Case keys of the failed verdicts, which ``--lf`` reruns."""
        return list(dict.fromkeys(key for c in self.failed for key in c.cases))

    def find(self, key: str) -> Comparison | None:
        """The comparison whose verdict item has node id ``key``."""
        return next((c for c in self.comparisons if c.key == key), None)

    def scores_of(self, key: str) -> list[ScoreComparison]:
        """The score comparisons that join the verdict item with node id ``key``."""
        return [c for c in self.scores if c.key == key]

    def comparison_dict(self, comparison: Comparison) -> dict[str, Any]:
        """One comparison in the JSON report, with its ``scores`` (the score comparisons of its verdict)."""
        return {**comparison.to_dict(), "scores": [c.to_dict() for c in self.scores_of(comparison.key)]}

    def baseline_dict(self) -> dict[str, Any] | None:
        """The JSON report's ``baseline``: its base keys (``path``, ``created``, ``margin``, ``paired``,
        ``only_current``, ``only_baseline``, ``comparisons``, one per benchmark) first, then the rest."""
        if self.baseline is None:
            return None
        base = self.baseline
        data: dict[str, Any] = {
            "path": ", ".join(self.config.baselines) if self.config.baselines else ", ".join(base.paths),
            "created": max(base.created, default="") or None,
            "margin": self.config.margin if self.config.margin_given else None,
            "paired": len(self.cases),
            "only_current": sorted(self.new),
            "only_baseline": sorted(self.removed),
            "comparisons": [self.comparison_dict(c) for c in self.comparisons if c.kind == BASELINE_KIND],
        }
        data.update(base.to_dict())
        data.update(
            adjustment=self.config.adjust,
            changed=list(self.changed),
            verdicts={v: sum(1 for p in self.cases.values() if p.verdict == v) for v in (PASSED, FAILED, UNDECIDED)},
            score_verdicts={v: sum(1 for p in self.score_cases.values() if p.verdict == v)
                            for v in (PASSED, FAILED, UNDECIDED)},
        )
        return data


# -- the decisions ---------------------------------------------------------------


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
    pvalues = [p.p for p in pairs if p.p is not None]
    for pair, result in zip(tested, twostats.adjust(pvalues, adjustment, alpha)):
        pair.p_adjusted = result.p_adjusted
        pair.local_level = result.local_level
        tail = result.local_level / 2.0
        low, high = twostats.newcombe(pair.x1, pair.n1, pair.x2, pair.n2, tail)
        drop_side = (pair.p_less or 1.0) <= (pair.p_greater or 1.0)
        verdict, high = case_verdict(pair.difference, low, high, result.rejected, drop_side, pair.margin, pair.equivalence)
        pair.ci = Interval("newcombe", 1.0 - result.local_level, low, high)
        pair.verdict = verdict if pair.judged else None
    for pair in pairs:
        if pair.p is None and pair.judged:
            pair.verdict = UNDECIDED
            pair.note = pair.note or "no counted runs on one side"


def pooled_tests(comparison: Comparison, min_inputs: int = MIN_INPUTS, resamples: int = twostats.SIGN_FLIP_RESAMPLES,
                 seed: int = 0) -> None:
    """The pooled test of a comparison's pairs (by their number: Fisher, the stratified exact test or the
    sign-flip test from ``min_inputs`` pairs on), its mean difference and cost ratio, in place."""
    strata = [twostats.Stratum(p.x1, p.n1, p.x2, p.n2) for p in comparison.pairs if p.n1 and p.n2]
    if not strata:
        return
    comparison.difference = twostats.mean(s.x1 / s.n1 - s.x2 / s.n2 for s in strata)
    if len(strata) >= min_inputs:
        flip = twostats.sign_flip([(s.x1 * s.n2 - s.x2 * s.n1, s.n1 * s.n2) for s in strata], seed=seed,
                                  resamples=resamples)
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



def judge_pooled(comparisons: Sequence[Comparison], adjustment: str, confidence: float,
                 min_inputs: int = MIN_INPUTS) -> None:
    """Adjust a family of pooled comparisons' p-values, and give each its interval (at ``confidence``)
    and, under a margin, its verdict (:func:`margin_verdict`; UNDECIDED below ``min_inputs`` pairs)."""
    alpha = 1.0 - confidence
    tested = [c for c in comparisons if c.p is not None]
    pvalues = [c.p for c in comparisons if c.p is not None]
    for comparison, result in zip(tested, twostats.adjust(pvalues, adjustment, alpha)):
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
