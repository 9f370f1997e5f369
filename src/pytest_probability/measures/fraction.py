"""The pass fraction as a measure: :data:`PASS_FRACTION`, over a :class:`Tally` of passes and counted runs.

Its statistics (docs/user-guide.md, "Comparing and catching drops"): the
case's interval by the session's method (Clopper-Pearson, Wilson or a Beta
posterior: ``maths.stats.interval``); per pair, Fisher's exact test (two-sided:
twice the smaller one-sided tail) and Newcombe's hybrid score interval;
pooled over pairs, the mean of the per-pair differences with, below
``min_inputs`` pairs, the pairs taken as fixed (Fisher's test for one, the
exact stratified test for several, and :func:`maths.twostats.mean_difference_interval`),
from ``min_inputs`` on the sign-flip test over pairs and the interval that
inverts it.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, NamedTuple

from ..maths import stats, twostats
from ..maths.interval import Interval
from .measure import FRACTION, PASS, BaselineSide, PairTest, Pooled, Pooling

if TYPE_CHECKING:
    from ..model.rows import Row


class Tally(NamedTuple):
    """A pass fraction's sample: passes of counted runs."""

    passes: int
    total: int


def pp(value: float) -> str:
    """Percentage points as a verdict's line says them: ``+10.0``, ``−25.0`` (a real minus), ``0.0``."""
    text = f"{value * 100:+.1f}"
    if text in ("+0.0", "-0.0"):
        return "0.0"
    return text.replace("-", "\u2212")


@dataclass(frozen=True)
class PassFraction:
    """The share of a case's counted runs that passed. ``method`` and ``prior``: its interval's
    (``maths.stats.METHODS``)."""

    method: str = "exact"
    prior: tuple[float, float] = (1.0, 1.0)
    key: str = PASS
    name: str = PASS
    unit: str = FRACTION
    low: float = 0.0
    high: float = 1.0
    untested: str = "no counted runs on one side"
    pair_method: str = "fisher"

    @property
    def span(self) -> float:
        return self.high - self.low

    def of_row(self, row: Row) -> Tally:
        return Tally(row.counts.passes, row.counts.total)

    def of_baseline(self, case: BaselineSide) -> Tally:
        return Tally(case.passes, case.total)

    def count(self, sample: Tally) -> int:
        return sample.total

    def estimate(self, sample: Tally) -> float | None:
        return sample.passes / sample.total if sample.total else None

    def interval(self, sample: Tally, level: float, planned: int | None = None) -> Interval | None:
        if not sample.total:
            return None
        low, high = stats.interval(self.method, sample.passes, sample.total, level, self.prior)
        return Interval(self.method, level, low, high)

    def out_of_range(self, sample: Tally) -> str | None:
        return None

    def pair_test(self, arm: Tally, base: Tally) -> PairTest | str | None:
        if not arm.total or not base.total:
            return None
        return PairTest(
            twostats.fisher_less(arm.passes, arm.total, base.passes, base.total),
            twostats.fisher_greater(arm.passes, arm.total, base.passes, base.total),
        )

    def pair_interval(self, arm: Tally, base: Tally, tail: float) -> tuple[float, float, str]:
        low, high = twostats.newcombe(arm.passes, arm.total, base.passes, base.total, tail)
        return low, high, "newcombe"

    def pooled(self, pairs: Sequence[tuple[Tally, Tally]], how: Pooling) -> Pooled:
        confidence, min_inputs, resamples, seed, unit = how
        strata = [twostats.Stratum(a.passes, a.total, b.passes, b.total) for a, b in pairs]
        if not strata:
            return Pooled(suppressed="no paired inputs")
        difference = twostats.mean(s.x1 / s.n1 - s.x2 / s.n2 for s in strata)
        tail = (1.0 - confidence) / 2.0
        suppressed = None
        exact, drawn, seeded = True, None, None
        if len(strata) >= min_inputs:
            flip = twostats.sign_flip(
                [(s.x1 * s.n2 - s.x2 * s.n1, s.n1 * s.n2) for s in strata], seed=seed, resamples=resamples
            )
            p_less, p_greater, method, exact = flip.p_less, flip.p_greater, "sign-flip", flip.exact
            if not exact:
                drawn, seeded = resamples, seed
            low, high = flip.interval(tail)
            low, high, shown = max(-1.0, low), min(1.0, high), "sign-flip"
        else:
            if len(strata) == 1:
                p_less, p_greater, method = (
                    twostats.fisher_less(*strata[0]),
                    twostats.fisher_greater(*strata[0]),
                    "fisher",
                )
            else:
                p_less = twostats.stratified_less(strata)
                p_greater = twostats.stratified_greater(strata)
                method = "stratified-exact"
            low, high, shown = twostats.mean_difference_interval(strata, tail)
            suppressed = f"fewer than {min_inputs} paired {unit}"
        return Pooled(
            difference=difference,
            p_less=p_less,
            p_greater=p_greater,
            p=min(1.0, 2.0 * min(p_less, p_greater)),
            p_method=method,
            exact=exact,
            ci=Interval(shown, confidence, low, high),
            suppressed=suppressed,
            resamples=drawn,
            seed=seeded,
            correlation=_correlation(strata),
        )

    def side_dict(self, sample: Tally) -> dict[str, object]:
        return {"passes": sample.passes, "total": sample.total}

    def points(self, value: float | None) -> str:
        return "-" if value is None else f"{value * 100:+.1f}"

    def interval_text(self, ci: Interval | None) -> str:
        return "" if ci is None else f"[{ci.low * 100:+.1f}, {ci.high * 100:+.1f}]"

    def said(self, value: float) -> str:
        return f"{pp(value)} pp"

    def said_interval(self, ci: Interval) -> str:
        return f"[{pp(ci.low)}, {pp(ci.high)}]"

    def margin_said(self, margin: float, equivalence: bool) -> str:
        shown = f"{margin * 100:g}"
        if equivalence:
            return f"\u00b1{shown} pp"
        return "\u2265\u2212" + f"{shown} pp" if margin else ">0 pp"

    def margin_shown(self, margin: float, equivalence: bool) -> str:
        return f"within \u00b1{margin * 100:g}" if equivalence else f"margin {margin * 100:g}"

    def sides_text(self, arm: Tally, base: Tally) -> str:
        return f"{arm.passes}/{arm.total} vs {base.passes}/{base.total}"

    def side_note(self, arm: Tally, base: Tally) -> str:
        if not base.total:
            return "no counted runs in the baseline"
        if not arm.total:
            return "no counted runs tonight"
        return ""


def _correlation(strata: Sequence[twostats.Stratum]) -> float | None:
    """Pearson's correlation of the two sides' per-pair pass fractions (``statistics.correlation``); None below 2
    pairs, or when one side's fractions are all equal."""
    if len(strata) < 2:
        return None
    try:
        return statistics.correlation([s.x1 / s.n1 for s in strata], [s.x2 / s.n2 for s in strata])
    except statistics.StatisticsError:
        return None


#: The pass fraction of the comparisons, whose interval method does not matter (they test pairs).
PASS_FRACTION = PassFraction()
