"""A named score as a measure: :class:`MeanScore`, over a case's scores of that name in run order.

Its statistics (docs/user-guide.md, "Graded results"; ``maths.scores``): the
case's interval is the hedged betting interval (Waudby-Smith & Ramdas 2024);
per pair, the one-sided Welch t-tests and Newcombe's hybrid (MOVER) with the
betting intervals of each side; pooled over pairs, the mean of the per-pair
differences with the paired bootstrap over pairs (from ``min_inputs`` on).
Margins are shares of the score range: 0.05 on a 0-10 score is half a point.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..maths import scores
from ..maths.interval import Interval
from ..model.run import scores_named
from .measure import SCORE, BaselineSide, PairTest, Pooled, Pooling, score_key

if TYPE_CHECKING:
    from ..model.rows import Row

#: A score measure's sample: one case's scores of one name, in run order.
Scores = tuple[float, ...]


@dataclass(frozen=True)
class MeanScore:
    """The mean of the score named ``name``, on the range ``[low, high]`` (its case's)."""

    name: str
    low: float = 0.0
    high: float = 1.0
    unit: str = SCORE
    untested: str = "no scores on one side"
    pair_method: str = "welch"

    @property
    def key(self) -> str:
        return score_key(self.name)

    @property
    def span(self) -> float:
        return self.high - self.low

    def of_row(self, row: Row) -> Scores:
        return tuple(scores_named(row.records, self.name))

    def of_baseline(self, case: BaselineSide) -> Scores:
        return tuple(case.scores.get(self.name, ()))

    def count(self, sample: Scores) -> int:
        return len(sample)

    def estimate(self, sample: Scores) -> float | None:
        return statistics.fmean(sample) if sample else None

    def interval(self, sample: Scores, level: float, planned: int | None = None) -> Interval | None:
        if not sample:
            return None
        return scores.score_interval(sample, level, self.low, self.high, horizon=planned)

    def out_of_range(self, sample: Scores) -> str | None:
        if all(self.low <= value <= self.high for value in sample):
            return None
        return f"baseline scores outside the score range [{self.low:g}, {self.high:g}]"

    def pair_test(self, arm: Scores, base: Scores) -> PairTest | str | None:
        if not arm or not base:
            return None
        tested = scores.welch_test(arm, base)
        if tested is None:
            return "fewer than 2 scores on a side"
        return PairTest(*tested)

    def pair_interval(self, arm: Scores, base: Scores, tail: float) -> tuple[float, float, str]:
        found = scores.difference_interval(arm, base, tail, low=self.low, high=self.high)
        return found.low, found.high, found.method

    def pooled(self, pairs: Sequence[tuple[Scores, Scores]], how: Pooling) -> Pooled:
        if not pairs:
            return Pooled(suppressed="no paired inputs")
        found = scores.paired_difference(
            pairs, how.confidence, self.low, self.high, how.resamples, how.seed, how.min_inputs
        )
        if found.ci is None:
            return Pooled(difference=found.difference, suppressed=found.suppressed, correlation=found.correlation)
        return Pooled(
            difference=found.difference,
            p_less=found.p_less,
            p_greater=found.p_greater,
            p=found.p,
            p_method=scores.PAIRED_BOOTSTRAP if found.p is not None else None,
            ci=found.ci,
            suppressed=found.suppressed,
            resamples=found.resamples,
            seed=found.seed,
            correlation=found.correlation,
        )

    def side_dict(self, sample: Scores) -> dict[str, object]:
        return {"n": len(sample), "mean": statistics.fmean(sample) if sample else None}

    def points(self, value: float | None) -> str:
        if value is None or math.isnan(value):
            return "-"
        return f"{value:+.3f}"

    def interval_text(self, ci: Interval | None) -> str:
        return "" if ci is None else f"[{ci.low:+.3f}, {ci.high:+.3f}]"

    def said(self, value: float) -> str:
        return self.points(value).replace("-", "\u2212")

    def said_interval(self, ci: Interval) -> str:
        return self.interval_text(ci).replace("-", "\u2212")

    def margin_said(self, margin: float, equivalence: bool) -> str:
        bound = f"{margin * self.span:g}"
        if equivalence:
            return f"\u00b1{bound}"
        return "\u2265\u2212" + bound if margin else ">0"

    def margin_shown(self, margin: float, equivalence: bool) -> str:
        bound = f"{margin * self.span:g}"
        return f"within \u00b1{bound}" if equivalence else f"margin {bound}"

    def sides_text(self, arm: Scores, base: Scores) -> str:
        return f"n {len(arm)} vs {len(base)}"

    def side_note(self, arm: Scores, base: Scores) -> str:
        return ""
