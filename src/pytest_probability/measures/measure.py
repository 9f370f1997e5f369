"""The interface every measure has: :class:`Measure`, and what its tests hand back (:class:`PairTest`, :class:`Pooled`).

A measure is what a case's runs are measured by: the pass fraction
(``pass``) or one named score (``score:<name>``). Each keeps its own
statistics behind this interface (Clopper-Pearson and Wilson intervals,
Fisher's and the stratified exact tests for fractions; the betting interval,
Welch's test, Newcombe's MOVER and the paired bootstrap for scores), so that
gates, comparisons and every output are written once, over measures.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, NamedTuple, Protocol, TypeVar

if TYPE_CHECKING:
    from ..maths.interval import Interval
    from ..model.rows import Row

#: The pass fraction's key; a score's is ``score:<name>`` (:func:`score_key`).
PASS = "pass"
#: The kinds of measure (:attr:`Measure.unit`): a fraction of runs that passed, a mean of scores.
FRACTION, SCORE = "fraction", "score"


def score_key(name: str) -> str:
    """``score:faithfulness``: the key of the mean of the score named ``name``."""
    return f"score:{name}"


class Pooling(NamedTuple):
    """How a comparison's pairs are pooled: at ``confidence``; ``min_inputs`` pairs make them a sample;
    ``resamples`` and ``seed`` drive any resampling; ``unit`` names the pairs (``cases``, ``inputs``)."""

    confidence: float
    min_inputs: int
    resamples: int
    seed: int
    unit: str


class PairTest(NamedTuple):
    """The one-sided p-values of a pair's test: tonight (the arm) below, and above, the baseline."""

    p_less: float
    p_greater: float


@dataclass(frozen=True)
class Pooled:
    """A comparison's pairs pooled: the mean of the per-pair differences, its test and its interval at the
    session's confidence (``ci``; None, with ``suppressed`` saying why, when there is none to decide by)."""

    difference: float | None = None
    p_less: float | None = None
    p_greater: float | None = None
    p: float | None = None
    p_method: str | None = None
    #: Whether the test enumerated every case (False: a seeded Monte Carlo sample, of ``resamples`` and ``seed``).
    exact: bool = True
    ci: Interval | None = None
    #: Why the interval decides nothing (``fewer than 10 paired cases``), else None.
    suppressed: str | None = None
    resamples: int | None = None
    seed: int | None = None
    #: Pearson's correlation of the two sides' per-pair estimates (how much pairing narrows the interval).
    correlation: float | None = None


class BaselineSide(Protocol):
    """What a baseline holds of one case: its counted runs and passes, and its scores by name."""

    @property
    def passes(self) -> int: ...

    @property
    def total(self) -> int: ...

    @property
    def scores(self) -> Mapping[str, Sequence[float]]: ...


S = TypeVar("S")


class Measure(Protocol[S]):
    """One measure of a case's runs. ``S`` is its sample: a :class:`~.fraction.Tally` of passes and runs, or a
    case's scores of one name in run order."""

    @property
    def key(self) -> str:
        """``pass``, ``score:faithfulness``: unique among a case's measures."""
        ...

    @property
    def name(self) -> str:
        """``pass``, ``faithfulness``."""
        ...

    @property
    def unit(self) -> str:
        """:data:`FRACTION` or :data:`SCORE`."""
        ...

    @property
    def low(self) -> float:
        """The low end of its values' range; a margin is a share of the range."""
        ...

    @property
    def high(self) -> float:
        """The high end of its values' range."""
        ...

    @property
    def span(self) -> float:
        """``high - low``: what a margin of 1 is in the measure's own units."""
        ...

    # -- values ------------------------------------------------------------------------------

    def of_row(self, row: Row) -> S:
        """The sample of a row (tonight's side, or an A/B arm's)."""
        ...

    def of_baseline(self, case: BaselineSide) -> S:
        """The sample of a baseline case (pooled over the baseline's reports)."""
        ...

    def count(self, sample: S) -> int:
        """How many values the sample holds (counted runs, scores); 0: nothing to compare."""
        ...

    def estimate(self, sample: S) -> float | None:
        """The sample's mean (a pass fraction, a mean score); None when it is empty."""
        ...

    def interval(self, sample: S, level: float, planned: int | None = None) -> Interval | None:
        """The interval of the mean at ``level`` (``planned``: the runs the case planned, where the method is tuned
        to them); None when the sample is empty."""
        ...

    def out_of_range(self, sample: S) -> str | None:
        """Why a sample read back from a baseline cannot be compared (a score outside the range), else None."""
        ...

    # -- comparisons ------------------------------------------------------------------------

    def pair_test(self, arm: S, base: S) -> PairTest | str | None:
        """The one-sided tests of one pair; a note when they cannot be made for a reason worth saying on every
        pair, None when a side is empty (:attr:`untested` is then the judged pair's note)."""
        ...

    @property
    def untested(self) -> str:
        """A judged pair's note when it could not be tested."""
        ...

    def pair_interval(self, arm: S, base: S, tail: float) -> tuple[float, float, str]:
        """``(low, high, method)``: the interval of ``estimate(arm) - estimate(base)`` at one-sided error ``tail``
        per bound (a local level's half)."""
        ...

    def pooled(self, pairs: Sequence[tuple[S, S]], how: Pooling) -> Pooled:
        """The pairs (both sides counted) pooled as ``how`` says (its ``unit`` names them in ``suppressed``)."""
        ...

    @property
    def pair_method(self) -> str:
        """The method of :meth:`pair_test` (``fisher``, ``welch``), as the JSON report names it."""
        ...

    # -- text ---------------------------------------------------------------------------------

    def side_dict(self, sample: S) -> dict[str, object]:
        """One side of a pair in the JSON report: ``{"passes", "total"}``; ``{"n", "mean"}``."""
        ...

    def points(self, value: float | None) -> str:
        """A difference as the tables show it: ``-12.3`` (points), ``-0.123``; ``-`` when unknown."""
        ...

    def interval_text(self, ci: Interval | None) -> str:
        """An interval of a difference as the tables show it; "" when none."""
        ...

    def said(self, value: float) -> str:
        """A difference as a verdict's line says it, with a real minus: ``−25.0 pp``, ``−0.120``."""
        ...

    def said_interval(self, ci: Interval) -> str:
        """An interval of a difference as a verdict's line says it: ``[−37.5, −12.5]``."""
        ...

    def margin_said(self, margin: float, equivalence: bool) -> str:
        """The rule a verdict's line names: ``≥−5 pp``, ``>0 pp``, ``±2 pp``; ``≥−0.05`` (a share of the range)."""
        ...

    def margin_shown(self, margin: float, equivalence: bool) -> str:
        """The margin as the tables show it: ``margin 5``, ``within ±2``; ``margin 0.05``."""
        ...

    def sides_text(self, arm: S, base: S) -> str:
        """A pair's two sides as the tables show them: ``3/5 vs 4/5``; ``n 14 vs 9``."""
        ...

    def side_note(self, arm: S, base: S) -> str:
        """A pair's note for a side with nothing counted (``no counted runs tonight``), else ""."""
        ...
