"""What a case asks for: its marker keywords and the session's settings combined into a :class:`CaseSpec`.

Pure and pytest-free. :func:`case_spec` runs at collection, so a
contradiction is a collection error, and again wherever a verdict is needed;
:class:`Specs` makes one spec per distinct (marks, runs) and shares it
between collection, the runs' decisions and the verdicts.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..maths import stats
from ..vocabulary import FAILED, PASSED, UNDECIDED
from .settings import StatsConfig

if TYPE_CHECKING:
    from ..model.case import CaseRef


@dataclass(frozen=True)
class GateSpec:
    rule: str  # "rate" or "count"
    bar: float  # min_rate, or min_passes / runs for display
    min_passes: int | None
    confidence: float
    method: str
    prior: tuple[float, float]
    errors: str
    #: Early stopping of this case: "curtail", "sequential" or None.
    stop: str | None = None

    def decide(self, passes: int, total: int) -> str:
        """The fixed-n verdict of ``passes`` of ``total`` counted runs."""
        if total == 0:
            return UNDECIDED
        if self.rule == "count":
            assert self.min_passes is not None
            return PASSED if passes >= self.min_passes else FAILED
        low, high = stats.interval(self.method, passes, total, self.confidence, self.prior)
        return stats.verdict(low, high, self.bar)


@dataclass(frozen=True)
class CaseSpec:
    """What a case's marker keywords and the session settings ask of it."""

    gate: GateSpec | None
    latency_quantile: float
    max_latency: float | None
    #: The conditions features add to the case's gate (its score bars): ``protocols.Criterion``.
    criteria: tuple[Any, ...] = ()

    @property
    def gated(self) -> bool:
        return self.gate is not None or self.max_latency is not None or bool(self.criteria)

    @property
    def stoppable(self) -> bool:
        """Whether the case may stop before its last run (a gate, or a criterion, with a ``stop`` mode)."""
        return (self.gate is not None and self.gate.stop is not None) or any(c.stops for c in self.criteria)


#: What makes a case's criteria (a feature's: ``roles.wiring.Feature.criteria``) from its marker keywords,
#: runs and the session's statistics settings; raises ValueError on a bad combination.
CriteriaMaker = Callable[[Mapping[str, Any], int, "StatsConfig"], Sequence[Any]]


def case_spec(
    kwargs: Mapping[str, Any], runs: int, config: StatsConfig, makers: Sequence[CriteriaMaker] = ()
) -> CaseSpec:
    """Combine marker keywords with the session settings; raise ValueError on contradictions."""
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
    criteria = tuple(criterion for make in makers for criterion in make(kwargs, runs, config))
    return CaseSpec(gate, kwargs.get("latency_quantile", config.latency_quantile), kwargs.get("max_latency"), criteria)


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

    def __init__(self, config: StatsConfig, makers: Sequence[CriteriaMaker] = ()) -> None:
        """``makers``: the features' criteria makers (a score's bars), in the features' order."""
        self.config = config
        self.makers = tuple(makers)
        self.cache: dict[Any, CaseSpec] = {}

    def extend(self, makers: Sequence[CriteriaMaker]) -> None:
        """A woken feature's criteria makers (``roles.wiring.Sleeper``). The specs made before stay: a feature
        wakes on the marker keywords its makers read, before a spec of marks that hold them is made, so the
        makers would have added nothing to those."""
        self.makers += tuple(makers)

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
            return case_spec(dict(marks), runs, self.config, self.makers)
        if spec is None:
            spec = self.cache[key] = case_spec(dict(marks), runs, self.config, self.makers)
        return spec
