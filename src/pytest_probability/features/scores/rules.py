"""Each case's score rules (its range and bars) and its score gates, the criteria of its gate.

A case's range is its mark's ``score_range`` or ini ``prob_score_range``
(default 0..1); its bars its mark's ``min_score`` (one bar for the score
named ``score``, or bars by name) or ``--prob-min-score`` / ini
``prob_min_score``. Each bar is a :class:`ScoreGate`: PASS when the interval
of the case's mean score is at or above the bar, FAIL when it is below,
UNDECIDED otherwise; under ``stop="sequential"`` the hedged capital betting
sequence at the bar decides as soon as it can, and the case stops
(``maths.scores.ScoreSequence``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ...maths import stopping
from ...model.outputs import Judgement
from ...model.run import scores_named
from ...protocols import Criterion
from ...vocabulary import FAILED, PASSED, UNDECIDED

if TYPE_CHECKING:
    from ...config.settings import StatsConfig
    from ...model.case import CaseRef
    from ...model.rows import Row
    from ...model.run import RunRecord

#: The score a bare ``min_score=BAR`` (or ``--prob-min-score=BAR``) gates, and ``record_score()``'s default name.
DEFAULT_NAME = "score"


@dataclass(frozen=True)
class ScoreRules:
    """What a case's scores are checked against: their range, and the bars by score name."""

    low: float = 0.0
    high: float = 1.0
    bars: tuple[tuple[str, float], ...] = ()

    @property
    def range_text(self) -> str:
        return f"[{self.low:g}, {self.high:g}]"


def bars_of(marks: Mapping[str, Any], config: StatsConfig) -> tuple[tuple[str, float], ...]:
    """The bars of a case: its mark's ``min_score`` (a number: the bar of ``score``), else the session's."""
    given = marks.get("min_score")
    if given is None:
        return config.min_scores
    if isinstance(given, (int, float)):
        return ((DEFAULT_NAME, float(given)),)
    return tuple((str(name), float(bar)) for name, bar in given)


def rules_of(marks: Mapping[str, Any], config: StatsConfig) -> ScoreRules:
    """A case's rules from its marker keywords and the session's settings; ValueError for a bar outside the range."""
    low, high = config.range_of(marks)
    rules = ScoreRules(low, high, bars_of(marks, config))
    for name, bar in rules.bars:
        if not rules.low <= bar <= rules.high:
            raise ValueError(f"the bar of score {name!r}, {bar:g}, is outside its score range {rules.range_text}")
    return rules


def criteria(kwargs: Mapping[str, Any], runs: int, config: StatsConfig) -> Sequence[Criterion]:
    """The score gates of a case (``config.spec.CriteriaMaker``)."""
    rules = rules_of(kwargs, config)
    confidence = float(kwargs.get("confidence", config.confidence))
    stop = kwargs.get("stop", config.stop)
    return [ScoreGate(name, bar, rules.low, rules.high, confidence, stop) for name, bar in rules.bars]


class ScoreGate(Criterion):
    """A case's bar on the mean of one of its scores."""

    def __init__(self, name: str, bar: float, low: float, high: float, confidence: float, stop: str | None) -> None:
        self.name = name
        self.bar = bar
        self.low = low
        self.high = high
        self.confidence = confidence
        self.stop = stop
        self.stops = stop == stopping.SEQUENTIAL
        self._fewest: int | None = None

    def __repr__(self) -> str:
        return f"ScoreGate({self.name!r}, {self.bar:g})"

    def _horizon(self, case: CaseRef) -> int | None:
        """A sequential gate's bets are tuned to the case's planned runs, so that its verdict after the last
        run is the fixed-N interval's (``maths.scores.ScoreSequence``)."""
        return case.runs if self.stops else None

    def judge(self, row: Row, missing: int) -> Judgement:
        values = scores_named(row.records, self.name)
        bar = f"{self.name} >= {self.bar:g}"
        if not values:
            return Judgement(self.name, UNDECIDED, f"score {self.name!r}: none recorded: UNDECIDED", "", bar)
        from ...maths import scores as maths  # the aggregating process's: a worker collects and never judges

        horizon = self._horizon(row.case)
        if horizon is not None and horizon < len(values):
            horizon = len(values)  # several scores of one name per run
        ci = maths.score_interval(values, self.confidence, self.low, self.high, horizon=horizon)
        verdict = PASSED if ci.low >= self.bar else FAILED if ci.high < self.bar else UNDECIDED
        if self.stops:
            decided = maths.sequential_score_verdict(values, self.bar, self.confidence, self.low, self.high, horizon)
            verdict = decided or verdict
        if missing and verdict == PASSED:
            verdict = UNDECIDED  # a session cut short never passes a gate on the runs it happened to finish
        mean = sum(values) / len(values)
        shown = f"{self.name} {mean:.3g} [{ci.low:.3g}, {ci.high:.3g}]"
        text = (
            f"score {self.name!r} mean {mean:.3g} of {len(values)}, {self.confidence:g} {ci.method} interval "
            f"[{ci.low:.3g}, {ci.high:.3g}] vs bar {self.bar:g}: {verdict.upper()}"
        )
        return Judgement(self.name, verdict, text, shown, bar)

    def fewest_runs(self) -> int:
        """Every score at the top of the range: the fewest runs whose interval's lower bound reaches the bar
        (computed once per gate: a spec, and its gates, are shared by the cases with the same marks)."""
        if self._fewest is None:
            from ...maths import scores as maths  # with a score gate only

            self._fewest = maths.fewest_runs(self.bar, self.confidence, self.low, self.high) or 0
        return self._fewest

    def unreachable(self, runs: int) -> str | None:
        needed = self.fewest_runs()
        what = f"min_score {self.name}={self.bar:g} at {self.confidence:g} confidence (betting interval)"
        if needed == 0:
            return f"{what} is out of reach at any number of runs (a bar at the top of the range {self.low:g}..{self.high:g})"
        if needed > runs:
            return f"{what} needs at least {needed} runs, even if every score is {self.high:g}"
        return None

    def early(self, records: Sequence[RunRecord], planned: int) -> str | None:
        if not self.stops:
            return None
        values = scores_named(records, self.name)
        if not values:
            return None
        from ...maths import scores as maths  # the aggregating process's

        return maths.sequential_score_verdict(
            values, self.bar, self.confidence, self.low, self.high, max(planned, len(values))
        )
