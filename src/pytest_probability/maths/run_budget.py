"""The run budget of one gated case (``--prob-plan``'s table): how many runs a gate needs, and its chance to pass.

Pure and standard-library only, like :mod:`stats` (whose intervals and
verdict it reuses, so a plan agrees with the verdict a session would give).
Every public function validates its arguments (:mod:`checks`).

The table has one row per case with the columns
``case  runs  min runs  runs for 80%  chance now  catch 10%  catch 1%  cost``.
``runs`` is the case's planned run count (after ``-k``/``-m`` selection) and
is not computed here; each other column is one function:

* ``min runs`` -- :func:`min_runs`: the fewest runs with which the gate can
  PASS at all, and then only if every one of them passes. A rate gate's is
  :func:`stats.runs_needed` (the smallest ``n`` whose all-pass interval has
  its lower bound at or above the bar); a count gate's is ``min_passes``. A
  latency gate's (:func:`latency_min_runs`) is the fewest runs whose
  quantile interval has an upper end (72 for p95 at 95%); a case with both
  gates needs the larger, and its power columns, the rate gate's alone, are
  marked ``*``. A latency gate's chance would need an assumed run time, so a
  latency-only case shows ``—`` there.
* ``runs for 80%`` -- :func:`runs_for_chance`: the fewest runs whose *power*
  -- the chance of a PASS verdict when each run passes independently with
  the assumed rate (``--prob-plan-assume``, default 0.97) -- is at least 80%.
  ``never`` (:func:`never_passes`) when a rate gate's bar is at or above the
  assumed rate: more runs then make a PASS *less* likely. ``>10,000`` when
  even 10,000 runs fall short.
* ``chance now`` -- :func:`pass_chance`: that power at the planned runs.
* ``catch F`` -- :func:`catch_chance`: ``1 - (1 - F)**runs``, the chance the
  planned runs show at least one failure when a fraction ``F`` of runs fail
  (``--prob-plan-flake``, default ``0.1,0.01``); :func:`runs_to_catch` gives
  the runs that make it the session's confidence (29 at 10%, 299 at 1%, for
  95%).
* ``cost`` -- :func:`cost_per_run` (an earlier report's ``cost / total`` for
  the case, ``--prob-plan-report``) times the planned runs
  (:func:`projected_cost`); blank for a case the report doesn't have.

The power is exact: the passing counts of ``n`` runs are one upper tail
(more passes out of the same runs never lower an interval bound), so the
power is the Binomial(n, rate) probability of at least
:func:`critical_passes` passes, the boundary found with the gate's own
verdict (:func:`stats.interval` and :func:`stats.verdict`). It saw-tooths in
``n`` (the boundary moves in whole runs), so :func:`runs_for_chance` tries
every ``n`` from ``min runs`` up rather than bisecting.

:func:`plan_case` computes a whole row (:class:`CasePlan`); ``--prob-plan`` prints it
(``features.compare.plan``: the header, the cells and their formatting).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import NamedTuple, Protocol

from ..vocabulary import PASSED
from . import stats
from .checks import nonnegative, open_unit, unit, whole

#: The defaults of ``--prob-plan``: the assumed true pass rate, the failure rates to catch,
#: the chance a plan asks a gate to pass with, and how far it looks.
PLAN_ASSUME = 0.97
PLAN_FLAKES: tuple[float, ...] = (0.1, 0.01)
PLAN_TARGET = 0.8
PLAN_CAP = 10_000
_RULES = ("rate", "count")


class GateSpecLike(Protocol):
    """What :meth:`GateRule.from_spec` reads of a gate's spec (``config.spec.GateSpec``)."""

    @property
    def rule(self) -> str: ...
    @property
    def bar(self) -> float: ...
    @property
    def min_passes(self) -> int | None: ...
    @property
    def confidence(self) -> float: ...
    @property
    def method(self) -> str: ...
    @property
    def prior(self) -> tuple[float, float]: ...


@dataclass(frozen=True)
class GateRule:
    """The rule of one case's gate, as far as a plan needs it (hashable, so results are cached per gate).

    ``rule="rate"``: PASS when the gate's interval (``method`` at
    ``confidence``, ``prior`` for ``bayes``) has its lower bound at or above
    ``bar`` (``min_rate``). ``rule="count"``: PASS when passes >=
    ``min_passes``. This is ``config.spec.GateSpec.decide`` for ``total >= 1``;
    :meth:`from_spec` builds one from such a spec. Errors don't enter a
    plan: the assumed rate is the chance a run passes.
    """

    rule: str
    bar: float = 0.0
    min_passes: int | None = None
    confidence: float = 0.95
    method: str = "exact"
    prior: tuple[float, float] = (1.0, 1.0)

    def __post_init__(self) -> None:
        if self.rule not in _RULES:
            raise ValueError(f"a gate's rule must be 'rate' or 'count', got {self.rule!r}")
        object.__setattr__(self, "confidence", stats.parse_confidence(self.confidence))
        object.__setattr__(self, "method", stats.parse_method(self.method))
        object.__setattr__(self, "prior", stats.parse_prior(self.prior))
        if self.rule == "rate":
            object.__setattr__(self, "bar", unit(self.bar, "min_rate"))
            if self.min_passes is not None:
                raise ValueError(f"a rate gate has no min_passes, got {self.min_passes!r}")
        else:
            if self.min_passes is None:
                raise ValueError("a count gate needs min_passes")
            object.__setattr__(self, "min_passes", whole(self.min_passes, "min_passes", 1))

    @classmethod
    def rate(
        cls, min_rate: float, confidence: float = 0.95, method: str = "exact", prior: tuple[float, float] = (1.0, 1.0)
    ) -> GateRule:
        """A ``min_rate`` gate."""
        return cls("rate", min_rate, None, confidence, method, prior)

    @classmethod
    def count(cls, min_passes: int) -> GateRule:
        """A ``min_passes`` gate (the interval settings don't matter to it)."""
        return cls("count", 0.0, min_passes)

    @classmethod
    def from_spec(cls, spec: GateSpecLike) -> GateRule:
        """From anything with ``rule``, ``bar``, ``min_passes``, ``confidence``, ``method`` and ``prior``
        (``config.spec.GateSpec``); a count spec's ``bar`` (min_passes / runs) is for display only."""
        rule = spec.rule
        if rule == "count":
            assert spec.min_passes is not None, "a count gate has its min_passes"
            return cls.count(spec.min_passes)
        return cls.rate(spec.bar, spec.confidence, spec.method, spec.prior)

    def passes(self, passes: int, runs: int) -> bool:
        """Whether ``passes`` out of ``runs`` (>= 1) gets the PASS verdict."""
        runs = whole(runs, "runs", 1)
        passes = whole(passes, "passes", 0)
        if passes > runs:
            raise ValueError(f"passes must be between 0 and runs={runs}, got {passes!r}")
        return self._passes(passes, runs)

    def _passes(self, passes: int, runs: int) -> bool:
        min_passes = self.min_passes
        if min_passes is not None:  # a count gate: the only rule with min_passes (__post_init__)
            return passes >= min_passes
        low, high = stats.interval(self.method, passes, runs, self.confidence, self.prior)
        return stats.verdict(low, high, self.bar) == PASSED


def _gate(gate: object) -> GateRule:
    if not isinstance(gate, GateRule):
        raise TypeError(f"gate must be a GateRule, got {gate!r}")
    return gate


def min_runs(gate: GateRule, max_runs: int = 100_000) -> int | None:
    """Column ``min runs``: the fewest runs with which the gate can PASS at all -- all of them passing.

    A rate gate's all-pass lower bound only rises with ``n`` (for every
    method), so this is :func:`stats.runs_needed` (bisection); ``None`` when
    even ``max_runs`` runs are not enough (``min_rate=1``, for instance). A
    count gate needs ``min_passes`` runs (``None`` if that exceeds
    ``max_runs``).
    """
    gate = _gate(gate)
    max_runs = whole(max_runs, "max_runs", 1)
    min_passes = gate.min_passes
    if min_passes is not None:  # a count gate: the only rule with min_passes (GateRule.__post_init__)
        return min_passes if min_passes <= max_runs else None
    return stats.runs_needed(gate.bar, gate.confidence, gate.method, gate.prior, max_runs)


def latency_min_runs(quantile: float, confidence: float = 0.95) -> int:
    """Column ``min runs`` of a latency gate (``max_latency=``): the fewest runs whose order-statistic interval
    of the ``quantile`` has an upper end, so the gate can pass at all (however fast the runs).

    The upper rank exists once ``quantile**n <= (1 - confidence) / 2`` (:func:`stats.quantile_ranks`):
    ``ceil(ln((1 - confidence) / 2) / ln(quantile))``, corrected against :func:`stats.quantile_ranks` itself so
    rounding at the boundary cannot make it one off. 72 for p95, 6 for p50, 368 for p99 at 95%.
    """
    q = open_unit(quantile, "quantile")
    confidence = stats.parse_confidence(confidence)
    n = max(1, math.ceil(math.log((1.0 - confidence) / 2.0) / math.log(q)))
    while n > 1 and stats.quantile_ranks(n - 1, q, confidence)[1] is not None:
        n -= 1
    while stats.quantile_ranks(n, q, confidence)[1] is None:
        n += 1
    return n


@lru_cache(maxsize=4096)
def _critical(gate: GateRule, runs: int) -> int | None:
    min_passes = gate.min_passes
    if min_passes is not None:  # a count gate: the only rule with min_passes (GateRule.__post_init__)
        return min_passes if min_passes <= runs else None
    if not gate._passes(runs, runs):
        return None
    low, high = -1, runs  # _passes(low) is False (or out of range), _passes(high) is True
    while high - low > 1:
        mid = (low + high) // 2
        if gate._passes(mid, runs):
            high = mid
        else:
            low = mid
    return high


def critical_passes(gate: GateRule, runs: int) -> int | None:
    """The fewest passes out of ``runs`` that make the verdict PASS; ``None`` when even all of them don't.

    With the runs fixed every interval bound rises with the passes, so the
    passing counts are exactly ``critical_passes`` .. ``runs`` (one upper
    tail) and bisection over the count, through the gate's own verdict, finds
    the boundary. ``runs=0`` has no verdict: ``None``.
    """
    gate = _gate(gate)
    runs = whole(runs, "runs", 0)
    if runs == 0:
        return None
    return _critical(gate, runs)


def _at_least(passes: int, runs: int, rate: float) -> float:
    """P(X >= passes) for X ~ Binomial(runs, rate): ``I_rate(passes, runs - passes + 1)``, exact in the tail."""
    if passes <= 0:
        return 1.0
    if passes > runs:
        return 0.0
    return stats.regularized_beta(rate, passes, runs - passes + 1)


def pass_chance(gate: GateRule, runs: int, rate: float) -> float:
    """Column ``chance now``: the chance ``runs`` runs get a PASS verdict when each passes with ``rate``.

    The power of the gate: ``P(X >= critical_passes(gate, runs))`` for
    ``X ~ Binomial(runs, rate)``, i.e. the sum of the binomial probabilities
    of every pass count the gate's verdict accepts. 0 when no count passes
    (fewer runs than :func:`min_runs`).
    """
    gate = _gate(gate)
    runs = whole(runs, "runs", 0)
    rate = unit(rate, "rate")
    if runs == 0:
        return 0.0
    critical = _critical(gate, runs)
    if critical is None:
        return 0.0
    return _at_least(critical, runs, rate)


def never_passes(gate: GateRule, rate: float) -> bool:
    """Whether a plan shows ``never`` in ``runs for 80%``: a rate gate whose bar is at or above ``rate``.

    A case that really passes at or below the bar gets a PASS only by luck
    (for the exact method less than ``(1 - confidence) / 2`` of the time),
    and more runs make it less likely.
    """
    gate = _gate(gate)
    return gate.rule == "rate" and unit(rate, "rate") <= gate.bar


@lru_cache(maxsize=1024)
def _runs_for(gate: GateRule, rate: float, target: float, cap: int) -> int | None:
    if never_passes(gate, rate):
        return None
    start = min_runs(gate, cap)
    if start is None:
        return None
    if gate.rule == "count":
        # The passing count is fixed, so the chance only grows with the runs: bisection.
        return stats.smallest_enough(lambda n: n >= start and _at_least(start, n, rate) >= target, cap)
    if pass_chance(gate, cap, rate) < target:
        return None
    critical = _critical(gate, start)
    assert critical is not None  # start runs all passing pass
    for n in range(start, cap + 1):
        if n > start:
            # One run more: a count that failed still fails (one more failure lowers every bound, for
            # exact and bayes a stochastic ordering of the Beta quantile), so only step up from there.
            while critical <= n and not gate._passes(critical, n):
                critical += 1
            if critical > n:  # pragma: no cover - n/n passes from min_runs on (runs_needed)
                continue
            if gate.method == "wilson":
                # The Wilson bound has no such theorem behind it: step down again if needed.
                while critical > 0 and gate._passes(critical - 1, n):
                    critical -= 1
        if _at_least(critical, n, rate) >= target:
            return n
    return cap  # pragma: no cover - the chance at cap was checked


def runs_for_chance(
    gate: GateRule, rate: float = PLAN_ASSUME, target: float = PLAN_TARGET, cap: int = PLAN_CAP
) -> int | None:
    """Column ``runs for 80%``: the fewest runs whose :func:`pass_chance` at ``rate`` is at least ``target``.

    Method (exact): ``None`` when :func:`never_passes` (shown
    ``never``), and when ``cap`` runs themselves fall short of ``target``
    (shown ``>10,000``). Otherwise every ``n`` from :func:`min_runs` up is
    tried in turn, because the chance saw-tooths in ``n``: the passing count
    moves in whole runs, and it is tracked incrementally (about one verdict
    per ``n``). For a count gate the chance only grows with ``n``, so
    bisection finds it. Results are cached per gate, rate, target and cap.
    """
    gate = _gate(gate)
    rate = unit(rate, "rate")
    target = open_unit(target, "target")
    cap = whole(cap, "cap", 1)
    return _runs_for(gate, rate, target, cap)


def catch_chance(flake: float, runs: int) -> float:
    """Column ``catch F``: ``1 - (1 - flake)**runs``, the chance ``runs`` runs show at least one failure
    when each fails independently with probability ``flake``. Computed as ``-expm1(runs * log1p(-flake))``."""
    flake = unit(flake, "flake")
    runs = whole(runs, "runs", 0)
    if runs == 0:
        return 0.0
    if flake == 1.0:
        return 1.0
    return -math.expm1(runs * math.log1p(-flake))


def runs_to_catch(flake: float, level: float = 0.95) -> int:
    """The fewest runs whose :func:`catch_chance` is at least ``level``: ``ceil(ln(1 - level) / ln(1 - flake))``
    (29 at 10% and 299 at 1% for 95%), corrected by whole runs against :func:`catch_chance` so rounding at an
    exact boundary cannot make it one off. The column note of ``catch F``."""
    flake = unit(flake, "flake")
    level = open_unit(level, "level")
    if flake == 0.0:
        raise ValueError("flake must be positive: a run that never fails is never caught")
    if flake == 1.0:
        return 1
    n = max(1, math.ceil(math.log1p(-level) / math.log1p(-flake)))
    while n > 1 and catch_chance(flake, n - 1) >= level:
        n -= 1
    while catch_chance(flake, n) < level:
        n += 1
    return n


def cost_per_run(cost: float, total: int) -> float | None:
    """A case's cost per run in an earlier report: its row's ``cost / total``; ``None`` without runs."""
    cost = nonnegative(cost, "cost")
    total = whole(total, "total", 0)
    return cost / total if total else None


def projected_cost(per_run: float | None, runs: int) -> float | None:
    """Column ``cost``: planned runs times the cost per run; ``None`` (blank) for an unpriced case."""
    runs = whole(runs, "runs", 0)
    if per_run is None:
        return None
    return nonnegative(per_run, "per_run") * runs


class CasePlan(NamedTuple):
    """One row of the plan. The gate columns are ``None`` for an ungated case (shown ``—``); ``min_runs`` is the
    larger of the rate (or count) gate's and the latency gate's (``latency``: its quantile) minimum."""

    runs: int
    gate: GateRule | None
    min_runs: int | None
    runs_for_chance: int | None
    chance: float | None
    #: ``(flake rate, catch_chance)`` per ``--prob-plan-flake`` rate.
    catches: tuple[tuple[float, float], ...]
    cost: float | None
    assume: float = PLAN_ASSUME
    target: float = PLAN_TARGET
    cap: int = PLAN_CAP
    latency: float | None = None
    #: Whether a feature's criterion (a score gate) gates the case too; its minimum is in ``min_runs``.
    others: bool = False


def plan_case(
    gate: GateRule | None,
    runs: int,
    assume: float = PLAN_ASSUME,
    flakes: Sequence[float] = PLAN_FLAKES,
    per_run: float | None = None,
    target: float = PLAN_TARGET,
    cap: int = PLAN_CAP,
    latency_quantile: float | None = None,
    latency_confidence: float = 0.95,
    others: Sequence[int] = (),
) -> CasePlan:
    """Every column of one case's row: ``runs`` planned runs, the gate (``None``: no rate or count gate), the
    assumed true pass rate, the failure rates to catch, the cost per run from a report (``None``: unpriced),
    the quantile of a latency gate if it has one (``None``: none) with its confidence, and the fewest runs
    of the case's other criteria (score gates; 0: never), which ``min_runs`` includes."""
    runs = whole(runs, "runs", 0)
    assume = open_unit(assume, "assume")
    target = open_unit(target, "target")
    cap = whole(cap, "cap", 1)
    rates = tuple(open_unit(f, "flake") for f in flakes)
    catches = tuple((f, catch_chance(f, runs)) for f in rates)
    cost = projected_cost(per_run, runs)
    latency_min = None if latency_quantile is None else latency_min_runs(latency_quantile, latency_confidence)
    minima = [whole(n, "others", 0) for n in others]

    def with_others(least: int | None) -> int | None:
        if not minima or (least is None and gate is not None):
            return least  # no other criterion, or the rate gate's own minimum is out of reach (None)
        return None if 0 in minima else max([least or 0, *minima])  # 0: a criterion no count passes

    if gate is None:
        return CasePlan(
            runs,
            None,
            with_others(latency_min),
            None,
            None,
            catches,
            cost,
            assume,
            target,
            cap,
            latency_quantile,
            bool(minima),
        )
    gate = _gate(gate)
    least = min_runs(gate)
    if latency_min is not None:
        least = max(latency_min, least if least is not None else 0)
    return CasePlan(
        runs,
        gate,
        with_others(least),
        runs_for_chance(gate, assume, target, cap),
        pass_chance(gate, runs, assume),
        catches,
        cost,
        assume,
        target,
        cap,
        latency_quantile,
        bool(minima),
    )
