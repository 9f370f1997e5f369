"""Comparisons of graded results: tonight's mean scores against the baseline's, and A/B arms' by input.

Pure and pytest-free, beside :mod:`.pairs` (the fractions'): for every score
name both sides recorded, the same pairs as the fractions' (a baselined case
with its baseline case; an A/B input's arm with its baseline variant) get a
:class:`ScorePair`, and each benchmark (or arm) a :class:`ScoreComparison`
whose key is the fractions' comparison's, so its verdict joins the same
``[baseline]`` or ``[compare:ARM]`` item.

Method (docs/user-guide.md, "Graded results"):

* **Per case** (or per A/B input): the difference of the two mean scores; the
  one-sided Welch t-tests (two-sided p: twice the smaller), the interval of
  Newcombe's hybrid with the betting intervals of each side
  (``maths.scores.difference_interval``) at the hypothesis's local level, and
  the fractions' per-case verdict rule (:func:`.verdicts.case_verdict`):
  FAIL needs the adjusted test to reject toward a drop *and* the interval
  below ``-margin``.
* **Pooled** (per benchmark or A/B arm), paired by case or input: the mean of
  the per-input differences with the paired bootstrap over inputs
  (``maths.scores.paired_difference``, seeded by ``--prob-seed``, with
  ``--prob-bootstrap`` resamples), its percentile interval at the session's
  confidence and 0.3.0's margin rule (:func:`.verdicts.margin_verdict`);
  UNDECIDED with fewer than ``prob_min_inputs`` pairs.
* **Margins** are shares of the score range: ``--prob-margin=0.05`` on a 0-10
  score is half a point.
* **Families**, each adjusted with ``--prob-adjust`` apart from the
  fractions': the session's per-case baseline score comparisons, its
  per-benchmark ones, its A/B arms' and its A/B inputs'.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ...maths import scores, twostats
from ...model.outputs import Interval
from ...model.run import scores_named
from ...vocabulary import BASELINE_KIND, UNDECIDED, verdict_key
from .verdicts import case_verdict, margin_verdict

if TYPE_CHECKING:
    from ...model.rows import Row
    from .baseline import BaselineCase


@dataclass
class ScorePair:
    """One case (baseline) or one input (A/B) of one score name: the arm's scores against the baseline's."""

    key: str
    label: str
    name: str
    arm: list[float]
    base: list[float]
    low: float = 0.0
    high: float = 1.0
    margin: float = 0.0
    equivalence: bool = False
    judged: bool = True
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
        if not self.arm or not self.base:
            return None
        return statistics.fmean(self.arm) - statistics.fmean(self.base)

    def to_dict(self, kind: str) -> dict[str, Any]:
        return {
            "input": self.label,
            "nodeid": self.key if kind == BASELINE_KIND else None,
            "baseline": _side(self.base),
            "arm": _side(self.arm),
            "difference": self.difference,
            "ci": self.ci.to_dict() if self.ci else None,
            "p": self.p,
            "p_method": "welch" if self.p is not None else None,
            "p_adjusted": self.p_adjusted,
            "verdict": self.verdict,
            "note": self.note or None,
        }


def _side(values: Sequence[float]) -> dict[str, Any]:
    return {"n": len(values), "mean": statistics.fmean(values) if values else None}


@dataclass
class ScoreComparison:
    """One benchmark's (or A/B arm's) mean score of one name against its baseline, paired by case or input."""

    kind: str
    function: str
    scope: str
    axis: str | None
    baseline: str
    arm: str
    name: str
    pairs: list[ScorePair]
    margin: float
    equivalence: bool
    judged: bool
    low: float = 0.0
    high: float = 1.0
    adjustment: str = "holm"
    difference: float | None = None
    ci: Interval | None = None
    p: float | None = None
    p_adjusted: float | None = None
    family: int = 0
    input_family: int = 0
    verdict: str | None = None
    suppressed: str | None = None
    correlation: float | None = None
    resamples: int | None = None
    seed: int | None = None
    #: Case keys the comparison is made of (rerun by ``--lf`` when it fails).
    cases: list[str] = field(default_factory=list)
    paired: Any = field(default=None, repr=False)

    @property
    def key(self) -> str:
        """The node id of the benchmark's verdict item this comparison joins (the fractions' comparison's)."""
        return verdict_key(self.scope, self.kind, self.arm if self.kind != BASELINE_KIND else "")

    @property
    def margin_points(self) -> float:
        """The margin in the score's units (``margin`` is a share of the score range)."""
        return self.margin * (self.high - self.low)

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "range": [self.low, self.high],
            "pairs": sum(1 for p in self.pairs if p.arm and p.base),
            "difference": self.difference,
            "ci": self.ci.to_dict() if self.ci else None,
            "p": self.p,
            "p_method": scores.PAIRED_BOOTSTRAP if self.p is not None else None,
            "p_adjusted": self.p_adjusted,
            "adjustment": self.adjustment,
            "family": self.family,
            "margin": self.margin if self.judged else None,
            "equivalence": self.equivalence,
            "verdict": self.verdict,
            "suppressed": self.suppressed,
            "resamples": self.resamples,
            "seed": self.seed,
            "correlation": self.correlation,
            "inputs": [p.to_dict(self.kind) for p in self.pairs],
        }


# -- building -----------------------------------------------------------------------


def _in_range(values: Sequence[float], low: float, high: float) -> bool:
    return all(low <= v <= high for v in values)


def _names(*sides: Sequence[Any]) -> list[str]:
    """Score names every side recorded, in the first side's order."""
    found = [list(dict.fromkeys(s.name for record in side for s in record.scores)) for side in sides]
    return [name for name in found[0] if all(name in other for other in found[1:])]


def baseline_score_pairs(
    compared: Sequence[tuple[Row, Any, BaselineCase]], ranges: Mapping[str, tuple[float, float]]
) -> list[tuple[Row, ScorePair]]:
    """Each baselined case's score pairs: one per score name recorded both tonight and in the baseline.
    ``compared``: (tonight's row, its fractions' pair, the baseline case); ``ranges``: each row's score range."""
    out: list[tuple[Row, ScorePair]] = []
    for row, pair, case in compared:
        low, high = ranges[row.case.key]
        names = list(dict.fromkeys(s.name for record in row.records for s in record.scores))
        for name in names:
            base = case.scores.get(name)
            if not base:
                continue
            score = ScorePair(
                row.case.key,
                row.label,
                name,
                scores_named(row.records, name),
                list(base),
                low,
                high,
                pair.margin,
                pair.equivalence,
                pair.judged,
            )
            if not _in_range(score.base, low, high):
                score.base = []
                score.note = f"baseline scores outside the score range [{low:g}, {high:g}]"
            out.append((row, score))
    return out


def arm_score_pairs(
    arm_rows: Sequence[tuple[str, Row, Row]],
    ranges: Mapping[str, tuple[float, float]],
    margin: float,
    equivalence: bool,
    judged: bool,
) -> dict[str, list[ScorePair]]:
    """One A/B arm's score pairs by score name: ``arm_rows`` is (input id, arm row, baseline row) per input."""
    by_name: dict[str, list[ScorePair]] = {}
    for input_id, arm_row, base_row in arm_rows:
        low, high = ranges[arm_row.case.key]
        for name in _names(arm_row.records, base_row.records):
            by_name.setdefault(name, []).append(
                ScorePair(
                    input_id,
                    input_id,
                    name,
                    scores_named(arm_row.records, name),
                    scores_named(base_row.records, name),
                    low,
                    high,
                    margin,
                    equivalence,
                    judged,
                )
            )
    return by_name


# -- judging --------------------------------------------------------------------------


def pair_tests(pair: ScorePair) -> None:
    """The one-sided Welch t-tests of one pair, in place (none with fewer than two scores on a side)."""
    if not pair.arm or not pair.base:
        return
    tested = scores.welch_test(pair.arm, pair.base)
    if tested is None:
        pair.note = pair.note or "fewer than 2 scores on a side"
        return
    pair.p_less, pair.p_greater = tested
    pair.p = min(1.0, 2.0 * min(tested))


def judge_pairs(pairs: Sequence[ScorePair], adjustment: str, confidence: float) -> None:
    """Adjust a family of score pairs and give each its interval and verdict, in place."""
    for pair in pairs:
        pair_tests(pair)
    tested = [p for p in pairs if p.p is not None]
    adjusted = twostats.adjust([p.p for p in tested if p.p is not None], adjustment, 1.0 - confidence)
    for pair, result in zip(tested, adjusted, strict=False):
        pair.p_adjusted = result.p_adjusted
        pair.local_level = result.local_level
        interval = scores.difference_interval(
            pair.arm, pair.base, result.local_level / 2.0, low=pair.low, high=pair.high
        )
        drop_side = (pair.p_less or 1.0) <= (pair.p_greater or 1.0)
        margin = pair.margin * (pair.high - pair.low)
        verdict, upper = case_verdict(
            pair.difference, interval.low, interval.high, result.rejected, drop_side, margin, pair.equivalence
        )
        pair.ci = Interval(interval.method, 1.0 - result.local_level, interval.low, upper)
        pair.verdict = verdict if pair.judged else None
    for pair in pairs:
        if pair.p is None and pair.judged:
            pair.verdict = UNDECIDED
            pair.note = pair.note or "no scores on one side"


def pooled(comparison: ScoreComparison, confidence: float, min_inputs: int, resamples: int, seed: int) -> None:
    """The paired bootstrap of a comparison's pairs (those with scores on both sides), in place."""
    usable = [(p.arm, p.base) for p in comparison.pairs if p.arm and p.base]
    if not usable:
        comparison.suppressed = "no paired inputs"
        return
    result = scores.paired_difference(usable, confidence, comparison.low, comparison.high, resamples, seed, min_inputs)
    comparison.paired = result
    comparison.difference = result.difference
    comparison.correlation = result.correlation
    comparison.suppressed = result.suppressed
    if result.ci is not None:
        comparison.ci = Interval(result.ci.method, result.ci.level, result.ci.low, result.ci.high)
        comparison.p = result.p
        comparison.resamples, comparison.seed = result.resamples, result.seed


def judge_pooled(comparisons: Sequence[ScoreComparison], adjustment: str, confidence: float) -> None:
    """Adjust a family of pooled score comparisons' p-values and give each, under a margin, its verdict."""
    tested = [c for c in comparisons if c.p is not None]
    adjusted = twostats.adjust([c.p for c in tested if c.p is not None], adjustment, 1.0 - confidence)
    for comparison, result in zip(tested, adjusted, strict=False):
        comparison.p_adjusted = result.p_adjusted
    for comparison in comparisons:
        comparison.family = len(tested)
        if not comparison.judged:
            comparison.verdict = None
        elif comparison.ci is None:
            comparison.verdict = UNDECIDED
        else:
            comparison.verdict = margin_verdict(
                comparison.ci.low, comparison.ci.high, comparison.margin_points, comparison.equivalence
            )


# -- text ---------------------------------------------------------------------------------


def number(value: float | None) -> str:
    """A difference of mean scores: ``-0.123``; ``-`` when unknown."""
    if value is None or math.isnan(value):
        return "-"
    return f"{value:+.3f}"


def interval_text(ci: Interval | None) -> str:
    return "" if ci is None else f"[{ci.low:+.3f}, {ci.high:+.3f}]"


def verdict_line(comparison: ScoreComparison) -> str:
    """A score comparison's part of its benchmark verdict's line:
    ``score faithfulness −0.120 [−0.200, −0.050]  12 paired  ≥−0.05  FAIL``."""
    parts = [f"mean {comparison.name}"]
    if comparison.difference is not None:
        value = number(comparison.difference).replace("-", "\u2212")
        if comparison.ci is not None:
            value += " " + interval_text(comparison.ci).replace("-", "\u2212")
        parts.append(value)
    parts.append(f"{sum(1 for p in comparison.pairs if p.arm and p.base)} paired")
    if comparison.judged:
        bound = f"{comparison.margin_points:g}"
        parts.append(
            f"\u00b1{bound}" if comparison.equivalence else ("\u2265\u2212" + bound if comparison.margin else ">0")
        )
        parts.append((comparison.verdict or UNDECIDED).upper())
        if comparison.suppressed is not None and comparison.verdict == UNDECIDED:
            parts.append(f"({comparison.suppressed}: no verdict from the interval)")
    return "  ".join(parts)
