"""What a case asks for: its marker keywords and the session's settings combined into a :class:`CaseSpec`.

Pure and pytest-free. A case's gates are one per measure it is gated on: its
pass fraction's (:class:`GateSpec`: a rate or a count of passes) and each of
its scores' (:class:`ScoreGateSpec`: a bar on a mean score, on the case's
score range, :class:`ScoreRules`). :func:`case_spec` runs at collection, so a
contradiction is a collection error, and again wherever a verdict is needed;
:class:`Specs` makes one spec per distinct (marks, runs) and shares it
between collection, the runs' decisions and the verdicts.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Final

from ..maths import stats, stopping
from ..value_classes import Value
from ..vocabulary import FAILED, PASSED, UNDECIDED
from .settings import StatsConfig

if TYPE_CHECKING:
    from ..measures.fraction import PassFraction
    from ..measures.score import MeanScore
    from ..model.case import CaseRef


class GateSpec(Value):
    rule: Final[str]  # "rate" or "count"
    bar: Final[float]  # min_rate, or min_passes / runs for display
    min_passes: Final[int | None]
    confidence: Final[float]
    method: Final[str]
    prior: Final[tuple[float, float]]
    errors: Final[str]
    #: Early stopping of this case: "curtail", "sequential" or None.
    stop: Final[str | None]

    __slots__ = FIELDS = ("rule", "bar", "min_passes", "confidence", "method", "prior", "errors", "stop")

    def __init__(
        self,
        rule: str,
        bar: float,
        min_passes: int | None,
        confidence: float,
        method: str,
        prior: tuple[float, float],
        errors: str,
        stop: str | None = None,
    ) -> None:
        self.rule = rule
        self.bar = bar
        self.min_passes = min_passes
        self.confidence = confidence
        self.method = method
        self.prior = prior
        self.errors = errors
        self.stop = stop

    @property
    def measure(self) -> PassFraction:
        """The pass fraction, with the gate's interval method."""
        from ..measures.fraction import PassFraction  # the aggregating process's: a worker never judges

        return PassFraction(self.method, self.prior)

    def decide(self, passes: int, total: int) -> str:
        """The fixed-n verdict of ``passes`` of ``total`` counted runs."""
        if total == 0:
            return UNDECIDED
        if self.rule == "count":
            assert self.min_passes is not None
            return PASSED if passes >= self.min_passes else FAILED
        low, high = stats.interval(self.method, passes, total, self.confidence, self.prior)
        return stats.verdict(low, high, self.bar)


#: The score a bare ``min_score=BAR`` (or ``--prob-min-score=BAR``) gates, and ``record_score()``'s default name.
DEFAULT_SCORE = "score"


class ScoreRules(Value):
    """What a case's scores are checked against: their range, and the bars by score name."""

    low: Final[float]
    high: Final[float]
    bars: Final[tuple[tuple[str, float], ...]]

    __slots__ = FIELDS = ("low", "high", "bars")

    def __init__(self, low: float = 0.0, high: float = 1.0, bars: tuple[tuple[str, float], ...] = ()) -> None:
        self.low = low
        self.high = high
        self.bars = bars

    @property
    def range_text(self) -> str:
        return f"[{self.low:g}, {self.high:g}]"


def score_bars(marks: Mapping[str, Any], config: StatsConfig) -> tuple[tuple[str, float], ...]:
    """The bars of a case: its mark's ``min_score`` (a number: the bar of ``score``), else the session's."""
    given = marks.get("min_score")
    if given is None:
        return config.min_scores
    if isinstance(given, (int, float)):
        return ((DEFAULT_SCORE, float(given)),)
    return tuple((str(name), float(bar)) for name, bar in given)


def score_rules(marks: Mapping[str, Any], config: StatsConfig) -> ScoreRules:
    """A case's score rules from its marker keywords and the session's settings (its mark's ``score_range`` or
    ini ``prob_score_range``; its bars); ValueError for a bar outside the range."""
    low, high = config.range_of(marks)
    rules = ScoreRules(low, high, score_bars(marks, config))
    for name, bar in rules.bars:
        if not rules.low <= bar <= rules.high:
            raise ValueError(f"the bar of score {name!r}, {bar:g}, is outside its score range {rules.range_text}")
    return rules


@functools.lru_cache(maxsize=256)
def _fewest_score_runs(bar: float, confidence: float, low: float, high: float) -> int:
    from ..maths import scores  # with a score gate only

    return scores.fewest_runs(bar, confidence, low, high) or 0


class ScoreGateSpec(Value):
    """A case's bar on the mean of one of its scores: PASS when the betting interval of the mean is at or above
    ``bar``, FAIL when it is below, UNDECIDED otherwise; under ``stop="sequential"`` the hedged capital betting
    sequence at the bar decides as soon as it can (``maths.scores.ScoreSequence``)."""

    name: Final[str]
    bar: Final[float]
    low: Final[float]
    high: Final[float]
    confidence: Final[float]
    stop: Final[str | None]

    __slots__ = FIELDS = ("name", "bar", "low", "high", "confidence", "stop")

    def __init__(
        self, name: str, bar: float, low: float, high: float, confidence: float, stop: str | None = None
    ) -> None:
        self.name = name
        self.bar = bar
        self.low = low
        self.high = high
        self.confidence = confidence
        self.stop = stop

    @property
    def measure(self) -> MeanScore:
        from ..measures.score import MeanScore  # the aggregating process's: a worker never judges

        return MeanScore(self.name, self.low, self.high)

    @property
    def stops(self) -> bool:
        """Whether the case may stop once this gate is decided (``stop="sequential"``)."""
        return self.stop == stopping.SEQUENTIAL

    @property
    def bar_text(self) -> str:
        return f"{self.name} >= {self.bar:g}"

    def fewest_runs(self) -> int:
        """Every score at the top of the range: the fewest runs whose interval's lower bound reaches the bar
        (``--prob-plan``'s ``min runs``); 0 when no number of runs can."""
        return _fewest_score_runs(self.bar, self.confidence, self.low, self.high)

    def unreachable(self, runs: int) -> str | None:
        """Why the gate cannot pass with ``runs`` runs (a warning at collection), else None."""
        needed = self.fewest_runs()
        what = f"min_score {self.name}={self.bar:g} at {self.confidence:g} confidence (betting interval)"
        if needed == 0:
            return f"{what} is out of reach at any number of runs (a bar at the top of the range {self.low:g}..{self.high:g})"
        if needed > runs:
            return f"{what} needs at least {needed} runs, even if every score is {self.high:g}"
        return None


#: The score rules of a case that says nothing of scores: the range 0..1, no bar.
NO_SCORE_RULES = ScoreRules()


class CaseSpec(Value):
    """What a case's marker keywords and the session settings ask of it."""

    gate: Final[GateSpec | None]
    latency_quantile: Final[float]
    max_latency: Final[float | None]
    #: The gates of the case's scores (its ``min_score`` bars), in the order the bars were given.
    scores: Final[tuple[ScoreGateSpec, ...]]
    #: The range every score of the case is checked against (``record_score``), and its bars.
    score_rules: Final[ScoreRules]

    __slots__ = FIELDS = ("gate", "latency_quantile", "max_latency", "scores", "score_rules")

    def __init__(
        self,
        gate: GateSpec | None,
        latency_quantile: float,
        max_latency: float | None,
        scores: tuple[ScoreGateSpec, ...] = (),
        score_rules: ScoreRules = NO_SCORE_RULES,
    ) -> None:
        self.gate = gate
        self.latency_quantile = latency_quantile
        self.max_latency = max_latency
        self.scores = scores
        self.score_rules = score_rules

    @property
    def gates(self) -> tuple[GateSpec | ScoreGateSpec, ...]:
        """One gate per measure the case is gated on: its pass fraction's first, then its scores'."""
        return ((self.gate,) if self.gate is not None else ()) + self.scores

    @property
    def gated(self) -> bool:
        return self.gate is not None or self.max_latency is not None or bool(self.scores)

    @property
    def stoppable(self) -> bool:
        """Whether the case may stop before its last run (a gate with a ``stop`` mode)."""
        return (self.gate is not None and self.gate.stop is not None) or any(g.stops for g in self.scores)


def case_spec(kwargs: Mapping[str, Any], runs: int, config: StatsConfig) -> CaseSpec:
    """Combine marker keywords with the session settings; raise ValueError on contradictions."""
    gate = pass_gate(kwargs, runs, config)
    rules = score_rules(kwargs, config)
    confidence = float(kwargs.get("confidence", config.confidence))
    stop = kwargs.get("stop", config.stop)
    score_gates = tuple(ScoreGateSpec(name, bar, rules.low, rules.high, confidence, stop) for name, bar in rules.bars)
    return CaseSpec(
        gate, kwargs.get("latency_quantile", config.latency_quantile), kwargs.get("max_latency"), score_gates, rules
    )


def pass_gate(kwargs: Mapping[str, Any], runs: int, config: StatsConfig) -> GateSpec | None:
    """The gate of a case's pass fraction (``min_rate``, ``min_passes`` or the session's ``--prob-min-rate``), or
    None; raise ValueError on contradictions."""
    min_rate = kwargs.get("min_rate")
    min_passes = kwargs.get("min_passes")
    if min_rate is not None and min_passes is not None:
        raise ValueError(
            f"probability(min_rate={min_rate!r}, min_passes={min_passes!r}): give min_rate or min_passes, not both"
        )
    if min_passes is not None and min_passes > runs:
        raise ValueError(f"probability(min_passes={min_passes}) is more than the case's {runs} runs")
    if min_rate is None and min_passes is None:
        min_rate = config.min_rate
    confidence = kwargs.get("confidence", config.confidence)
    method = kwargs.get("method", config.method)
    prior = kwargs.get("prior", config.prior)
    stop = kwargs.get("stop", config.stop)
    gate = None
    if min_passes is not None:
        gate = GateSpec("count", min_passes / runs, min_passes, confidence, method, prior, config.errors, stop)
    elif min_rate is not None:
        gate = GateSpec("rate", min_rate, None, confidence, method, prior, config.errors, stop)
    return gate


def latency_unreachable(spec: CaseSpec, runs: int, confidence: float) -> int | None:
    """Runs a latency gate needs when ``runs`` timed runs cannot give its quantile an upper bound, else None.

    A latency gate passes only on an upper bound at or below the limit; the
    order-statistic interval (:func:`stats.quantile_ranks`) has one from the
    smallest ``n`` with ``q**n <= (1 - confidence) / 2``.
    """
    if spec.max_latency is None:
        return None
    q = spec.latency_quantile
    if stats.quantile_ranks(runs, q, confidence)[1] is not None:
        return None
    # Closed form, then corrected against quantile_ranks itself (rounding at the boundary).
    needed = max(runs + 1, math.ceil(math.log((1 - confidence) / 2) / math.log(q)))
    while needed > runs + 1 and stats.quantile_ranks(needed - 1, q, confidence)[1] is not None:
        needed -= 1
    while stats.quantile_ranks(needed, q, confidence)[1] is None:
        needed += 1
    return needed


def unreachable(spec: CaseSpec, runs: int) -> int | None:
    """Runs a rate gate needs when ``runs`` cannot ever pass it, else None (reachable).

    Returns 0 when no number of runs can pass it (e.g. min_rate=1 with exact intervals).
    """
    gate = spec.gate
    if gate is None or gate.rule != "rate":
        return None
    needed = stats.runs_needed(gate.bar, gate.confidence, gate.method, gate.prior)
    if needed is None:
        return 0
    return needed if needed > runs else None


class Specs:
    """One :class:`CaseSpec` per distinct (marker keywords, runs), for the session's statistics settings.

    A CaseSpec is immutable and the session's settings are fixed, so the cases that share
    their keywords and runs (usually all of them) share one spec: collection, the runs'
    decisions and the verdicts ask the same cache.
    """

    def __init__(self, config: StatsConfig) -> None:
        self.config = config
        self.cache: dict[Any, CaseSpec] = {}

    def of(self, case: CaseRef) -> CaseSpec:
        """The case's spec."""
        return self.for_marks(case.marks, case.runs)

    def for_marks(self, marks: tuple[tuple[str, Any], ...], runs: int) -> CaseSpec:
        """The spec of a case's marker keywords (sorted, without ``runs``) and runs; raises
        :func:`case_spec`'s ValueError, and caches only what it built."""
        key = (marks, runs)
        try:
            spec = self.cache.get(key)
        except TypeError:  # a keyword's value that cannot be hashed: no sharing
            return case_spec(dict(marks), runs, self.config)
        if spec is None:
            spec = self.cache[key] = case_spec(dict(marks), runs, self.config)
        return spec
