"""Planning before anything runs: a gate's run budget, and the inputs and runs an A/B comparison needs.

Pure and standard-library only, like :mod:`stats` (whose intervals and
verdict it reuses, so a plan agrees with the verdict a session would give).
Every public function validates its arguments and raises :class:`ValueError`
(or :class:`TypeError` for a wrong type) with a message naming the value.

Part 1: the run budget of one gated case (0.3.0's ``--prob-plan`` table)
-------------------------------------------------------------------------

0.3.0 printed one row per case with the columns
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

:func:`plan_case` computes a whole row (:class:`CasePlan`); :func:`plan_header`,
:func:`plan_cells` and the ``format_*`` helpers print it as 0.3.0 did.

Part 2: planning an A/B comparison over inputs (Miller 2024)
------------------------------------------------------------

Evan Miller, "Adding Error Bars to Evals: A Statistical Approach to Language
Model Evaluations" (2024, arXiv:2411.00640) treats the inputs (questions) as
a sample from a super-population. Input ``i`` has a true pass rate ``p_i``
in each arm; ``k`` runs of it give the fraction ``s_i`` with
``Var(s_i) = Var(p) + E[p (1 - p)] / k``, so the mean of ``n`` inputs has

    ``Var(mean) = (sigma_b**2 + sigma_w**2 / k) / n``                (Miller, section 3.1)

with the *between-input* variance ``sigma_b**2 = Var(p_i)`` and the
*within-input* variance ``sigma_w**2 = E[p_i (1 - p_i)]``. A paired A/B over
the same inputs compares the per-input differences ``d_i = s_A,i - s_B,i``
(Miller, section 4): ``Var_b(d) = sigma_b,A**2 + sigma_b,B**2 - 2 cov_AB``
and

    ``Var(mean d) = (Var_b(d) + sigma_w,A**2 / k_A + sigma_w,B**2 / k_B) / n``.

The number of inputs needed to detect a difference ``delta`` with a
two-sided level ``alpha`` test and power ``1 - beta`` is the standard
one-sample (paired) normal power formula applied to that variance (Miller,
section 5; e.g. Chow, Shao & Wang, *Sample Size Calculations in Clinical
Research*, section 3.1):

    ``n = (z_{1 - alpha/2} + z_{1 - beta})**2 * Var_1 / delta**2``, rounded up,

``Var_1 = Var_b(d) + sigma_w,A**2 / k_A + sigma_w,B**2 / k_B`` being the
per-input variance of the difference. More runs per input shrink only the
within term: the floor ``Var_b(d) / n`` stays, and from some ``k`` on more
inputs, not more runs, are what narrows the interval
(:func:`runs_stop_helping`, :func:`tradeoff`, :func:`tradeoff_statement`).

* :func:`arm_components`, :func:`paired_components`, :func:`paired_correlation`:
  the components estimated from one report's per-input counts;
  :func:`assumed_components` builds them from assumed numbers.
* :func:`variance_of_mean`, :func:`variance_of_difference`,
  :func:`inputs_needed`, :func:`ab_power`, :func:`detectable_difference`,
  :func:`inputs_floor`.

The planner uses the normal approximation; the test the plugin runs on an A/B
with at least 10 inputs is the sign-flip test over the inputs
(:func:`twostats.sign_flip`), which it approximates well from a few dozen
inputs on (``benchmarks/planner_power.py`` measures how well). Clustered
inputs (several inputs sharing a passage, Miller section 2.2) are not
modelled: each input is its own cluster.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache
from typing import NamedTuple, Sequence, Tuple

from ..vocabulary import PASSED
from . import stats

__all__ = [
    "AB_RUNS",
    "ArmEstimate",
    "CasePlan",
    "Components",
    "GateRule",
    "LATENCY_MARK",
    "PLAN_ASSUME",
    "PLAN_CAP",
    "PLAN_FLAKES",
    "PLAN_TARGET",
    "PairedEstimate",
    "TradeoffRow",
    "ab_power",
    "arm_components",
    "assumed_components",
    "catch_chance",
    "cost_per_run",
    "critical_passes",
    "detectable_difference",
    "format_chance",
    "format_cost",
    "format_min_runs",
    "format_rate",
    "format_runs",
    "format_runs_for_chance",
    "inputs_floor",
    "inputs_needed",
    "latency_min_runs",
    "min_runs",
    "narrowing",
    "never_passes",
    "paired_components",
    "paired_correlation",
    "parse_rate",
    "parse_rates",
    "pass_chance",
    "per_input_variance",
    "plan_case",
    "plan_cells",
    "plan_header",
    "projected_cost",
    "runs_for_chance",
    "runs_stop_helping",
    "runs_to_catch",
    "tradeoff",
    "tradeoff_statement",
    "variance_of_difference",
    "variance_of_mean",
]

#: 0.3.0's defaults: the assumed true pass rate, the failure rates to catch,
#: the chance a plan asks a gate to pass with, and how far it looks.
PLAN_ASSUME = 0.97
PLAN_FLAKES: Tuple[float, ...] = (0.1, 0.01)
PLAN_TARGET = 0.8
PLAN_CAP = 10_000
#: Runs per input listed by :func:`tradeoff` (1, 2, 5, 10, 20, ...).
AB_RUNS: Tuple[int, ...] = (1, 2, 5, 10, 20, 50, 100)

#: Shown in a gate column of an ungated case.
_DASH = "\u2014"
#: Suffix of the power cells of a case that also has a latency gate (those are the rate gate's alone).
LATENCY_MARK = "*"
_RULES = ("rate", "count")


# ---------------------------------------------------------------------------
# Argument validation
# ---------------------------------------------------------------------------


def _int(value: object, name: str, least: int) -> int:
    number = stats.as_int(value, name)
    if number < least:
        raise ValueError(f"{name} must be at least {least}, got {value!r}")
    return number


_real = stats.as_real


def _unit(value: object, name: str) -> float:
    """A probability in [0, 1]."""
    number = _real(value, name)
    if not 0.0 <= number <= 1.0:
        raise ValueError(f"{name} must be between 0 and 1, got {value!r}")
    return number


def _open_unit(value: object, name: str) -> float:
    """A probability strictly between 0 and 1."""
    number = _real(value, name)
    if not 0.0 < number < 1.0:
        raise ValueError(f"{name} must be strictly between 0 and 1, got {value!r}")
    return number


def _nonnegative(value: object, name: str) -> float:
    number = _real(value, name)
    if number < 0.0:
        raise ValueError(f"{name} must not be negative, got {value!r}")
    return number


# ---------------------------------------------------------------------------
# Part 1: a gate's run budget
# ---------------------------------------------------------------------------


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
    prior: Tuple[float, float] = (1.0, 1.0)

    def __post_init__(self) -> None:
        if self.rule not in _RULES:
            raise ValueError(f"a gate's rule must be 'rate' or 'count', got {self.rule!r}")
        object.__setattr__(self, "confidence", stats.parse_confidence(self.confidence))
        object.__setattr__(self, "method", stats.parse_method(self.method))
        object.__setattr__(self, "prior", stats.parse_prior(self.prior))
        if self.rule == "rate":
            object.__setattr__(self, "bar", _unit(self.bar, "min_rate"))
            if self.min_passes is not None:
                raise ValueError(f"a rate gate has no min_passes, got {self.min_passes!r}")
        else:
            if self.min_passes is None:
                raise ValueError("a count gate needs min_passes")
            object.__setattr__(self, "min_passes", _int(self.min_passes, "min_passes", 1))

    @classmethod
    def rate(cls, min_rate: float, confidence: float = 0.95, method: str = "exact",
             prior: Tuple[float, float] = (1.0, 1.0)) -> GateRule:
        """A ``min_rate`` gate."""
        return cls("rate", min_rate, None, confidence, method, prior)

    @classmethod
    def count(cls, min_passes: int) -> GateRule:
        """A ``min_passes`` gate (the interval settings don't matter to it)."""
        return cls("count", 0.0, min_passes)

    @classmethod
    def from_spec(cls, spec: object) -> GateRule:
        """From anything with ``rule``, ``bar``, ``min_passes``, ``confidence``, ``method`` and ``prior``
        (``config.spec.GateSpec``); a count spec's ``bar`` (min_passes / runs) is for display only."""
        rule = getattr(spec, "rule")
        if rule == "count":
            return cls.count(getattr(spec, "min_passes"))
        return cls.rate(getattr(spec, "bar"), getattr(spec, "confidence"), getattr(spec, "method"),
                        getattr(spec, "prior"))

    def passes(self, passes: int, runs: int) -> bool:
        """Whether ``passes`` out of ``runs`` (>= 1) gets the PASS verdict."""
        runs = _int(runs, "runs", 1)
        passes = _int(passes, "passes", 0)
        if passes > runs:
            raise ValueError(f"passes must be between 0 and runs={runs}, got {passes!r}")
        return self._passes(passes, runs)

    def _passes(self, passes: int, runs: int) -> bool:
        if self.rule == "count":
            return passes >= self.min_passes  # type: ignore[operator]
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
    max_runs = _int(max_runs, "max_runs", 1)
    if gate.rule == "count":
        return gate.min_passes if gate.min_passes <= max_runs else None  # type: ignore[operator]
    return stats.runs_needed(gate.bar, gate.confidence, gate.method, gate.prior, max_runs)


def latency_min_runs(quantile: float, confidence: float = 0.95) -> int:
    """Column ``min runs`` of a latency gate (``max_latency=``): the fewest runs whose order-statistic interval
    of the ``quantile`` has an upper end, so the gate can pass at all (however fast the runs).

    The upper rank exists once ``quantile**n <= (1 - confidence) / 2`` (:func:`stats.quantile_ranks`):
    ``ceil(ln((1 - confidence) / 2) / ln(quantile))``, corrected against :func:`stats.quantile_ranks` itself so
    rounding at the boundary cannot make it one off. 72 for p95, 6 for p50, 368 for p99 at 95%.
    """
    q = _open_unit(quantile, "quantile")
    confidence = stats.parse_confidence(confidence)
    n = max(1, math.ceil(math.log((1.0 - confidence) / 2.0) / math.log(q)))
    while n > 1 and stats.quantile_ranks(n - 1, q, confidence)[1] is not None:
        n -= 1
    while stats.quantile_ranks(n, q, confidence)[1] is None:
        n += 1
    return n


@lru_cache(maxsize=4096)
def _critical(gate: GateRule, runs: int) -> int | None:
    if gate.rule == "count":
        return gate.min_passes if gate.min_passes <= runs else None  # type: ignore[operator]
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
    runs = _int(runs, "runs", 0)
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
    runs = _int(runs, "runs", 0)
    rate = _unit(rate, "rate")
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
    return gate.rule == "rate" and _unit(rate, "rate") <= gate.bar


@lru_cache(maxsize=1024)
def _runs_for(gate: GateRule, rate: float, target: float, cap: int) -> int | None:
    if never_passes(gate, rate):
        return None
    start = min_runs(gate, cap)
    if start is None:
        return None
    if gate.rule == "count":
        # The passing count is fixed, so the chance only grows with the runs: bisection.
        return stats.smallest_enough(
            lambda n: n >= start and _at_least(start, n, rate) >= target, cap)
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


def runs_for_chance(gate: GateRule, rate: float = PLAN_ASSUME, target: float = PLAN_TARGET,
                    cap: int = PLAN_CAP) -> int | None:
    """Column ``runs for 80%``: the fewest runs whose :func:`pass_chance` at ``rate`` is at least ``target``.

    Method (exact, as 0.3.0): ``None`` when :func:`never_passes` (shown
    ``never``), and when ``cap`` runs themselves fall short of ``target``
    (shown ``>10,000``). Otherwise every ``n`` from :func:`min_runs` up is
    tried in turn, because the chance saw-tooths in ``n``: the passing count
    moves in whole runs, and it is tracked incrementally (about one verdict
    per ``n``). For a count gate the chance only grows with ``n``, so
    bisection finds it. Results are cached per gate, rate, target and cap.
    """
    gate = _gate(gate)
    rate = _unit(rate, "rate")
    target = _open_unit(target, "target")
    cap = _int(cap, "cap", 1)
    return _runs_for(gate, rate, target, cap)


def catch_chance(flake: float, runs: int) -> float:
    """Column ``catch F``: ``1 - (1 - flake)**runs``, the chance ``runs`` runs show at least one failure
    when each fails independently with probability ``flake``. Computed as ``-expm1(runs * log1p(-flake))``."""
    flake = _unit(flake, "flake")
    runs = _int(runs, "runs", 0)
    if runs == 0:
        return 0.0
    if flake == 1.0:
        return 1.0
    return -math.expm1(runs * math.log1p(-flake))


def runs_to_catch(flake: float, level: float = 0.95) -> int:
    """The fewest runs whose :func:`catch_chance` is at least ``level``: ``ceil(ln(1 - level) / ln(1 - flake))``
    (29 at 10% and 299 at 1% for 95%), corrected by whole runs against :func:`catch_chance` so rounding at an
    exact boundary cannot make it one off. The column note of ``catch F``."""
    flake = _unit(flake, "flake")
    level = _open_unit(level, "level")
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
    cost = _nonnegative(cost, "cost")
    total = _int(total, "total", 0)
    return cost / total if total else None


def projected_cost(per_run: float | None, runs: int) -> float | None:
    """Column ``cost``: planned runs times the cost per run; ``None`` (blank) for an unpriced case."""
    runs = _int(runs, "runs", 0)
    if per_run is None:
        return None
    return _nonnegative(per_run, "per_run") * runs


class CasePlan(NamedTuple):
    """One row of the plan. The gate columns are ``None`` for an ungated case (shown ``—``); ``min_runs`` is the
    larger of the rate (or count) gate's and the latency gate's (``latency``: its quantile) minimum."""

    runs: int
    gate: GateRule | None
    min_runs: int | None
    runs_for_chance: int | None
    chance: float | None
    #: ``(flake rate, catch_chance)`` per ``--prob-plan-flake`` rate.
    catches: Tuple[Tuple[float, float], ...]
    cost: float | None
    assume: float = PLAN_ASSUME
    target: float = PLAN_TARGET
    cap: int = PLAN_CAP
    latency: float | None = None


def plan_case(gate: GateRule | None, runs: int, assume: float = PLAN_ASSUME,
              flakes: Sequence[float] = PLAN_FLAKES, per_run: float | None = None,
              target: float = PLAN_TARGET, cap: int = PLAN_CAP, latency_quantile: float | None = None,
              latency_confidence: float = 0.95) -> CasePlan:
    """Every column of one case's row: ``runs`` planned runs, the gate (``None``: no rate or count gate), the
    assumed true pass rate, the failure rates to catch, the cost per run from a report (``None``: unpriced),
    and the quantile of a latency gate if it has one (``None``: none) with its confidence."""
    runs = _int(runs, "runs", 0)
    assume = _open_unit(assume, "assume")
    target = _open_unit(target, "target")
    cap = _int(cap, "cap", 1)
    rates = tuple(_open_unit(f, "flake") for f in flakes)
    catches = tuple((f, catch_chance(f, runs)) for f in rates)
    cost = projected_cost(per_run, runs)
    latency_min = None if latency_quantile is None else latency_min_runs(latency_quantile, latency_confidence)
    if gate is None:
        return CasePlan(runs, None, latency_min, None, None, catches, cost, assume, target, cap, latency_quantile)
    gate = _gate(gate)
    least = min_runs(gate)
    if latency_min is not None:
        least = max(latency_min, least if least is not None else 0)
    return CasePlan(runs, gate, least, runs_for_chance(gate, assume, target, cap),
                    pass_chance(gate, runs, assume), catches, cost, assume, target, cap, latency_quantile)


# -- formatting ------------------------------------------------------------------


def format_rate(rate: float) -> str:
    """A rate as its author wrote it, in percent: 0.1 -> ``10%``, 0.975 -> ``97.5%``, 0.001 -> ``0.1%``
    (``%g``: six significant digits). The ``catch F`` and ``runs for 80%`` headers."""
    return f"{_real(rate, 'rate') * 100:g}%"


def format_chance(chance: float) -> str:
    """A planned chance as a whole percent, rounded half up, as 0.3.0 printed it.

    ``0%`` only for exactly 0 (impossible); any positive chance shows at
    least ``1%``; and ``100%`` never: a rate strictly between 0 and 1 never
    makes anything certain, so a chance that rounds to 100% prints ``99%``.
    """
    chance = _unit(chance, "chance")
    if chance == 0.0:
        return "0%"
    whole = math.floor(chance * 100.0 + 0.5)
    return f"{min(max(whole, 1), 99)}%"


def format_runs(runs: int) -> str:
    """A run count with thousands separators: ``10,000``."""
    return f"{_int(runs, 'runs', 0):,}"


def format_min_runs(runs: int | None, max_runs: int = 100_000) -> str:
    """Column ``min runs``: the count, or ``>100,000`` when :func:`min_runs` found none up to ``max_runs``."""
    return f">{_int(max_runs, 'max_runs', 1):,}" if runs is None else format_runs(runs)


def format_runs_for_chance(runs: int | None, gate: GateRule, rate: float = PLAN_ASSUME,
                           cap: int = PLAN_CAP) -> str:
    """Column ``runs for 80%``: the count, ``never`` (:func:`never_passes`), or ``>10,000`` (``cap``)."""
    if runs is not None:
        return format_runs(runs)
    if never_passes(gate, rate):
        return "never"
    return f">{_int(cap, 'cap', 1):,}"


def format_cost(cost: float | None) -> str:
    """Column ``cost``: dollars to four places (``$0.0800``); blank for an unpriced case."""
    return "" if cost is None else f"${_nonnegative(cost, 'cost'):.4f}"


def plan_header(flakes: Sequence[float] = PLAN_FLAKES, gated: bool = True, priced: bool = False,
                target: float = PLAN_TARGET) -> list[str]:
    """The table's header: the gate columns only when some case is gated, ``cost`` only when priced."""
    header = ["case", "runs"]
    if gated:
        header += ["min runs", f"runs for {format_rate(target)}", "chance now"]
    header += [f"catch {format_rate(f)}" for f in flakes]
    if priced:
        header.append("cost")
    return header


def plan_cells(plan: CasePlan, gated: bool = True, priced: bool = False) -> list[str]:
    """A row's cells after the case name, matching :func:`plan_header` (``gated``: some case of the suite has a
    gate, latency included). ``—`` in an ungated row's gate columns, and in a latency-only row's power columns;
    a row with both gates has its power cells marked :data:`LATENCY_MARK`."""
    cells = [format_runs(plan.runs)]
    if gated:
        least = _DASH if plan.min_runs is None and plan.latency is None and plan.gate is None else (
            format_min_runs(plan.min_runs))
        if plan.gate is None:
            cells += [least, _DASH, _DASH]
        else:
            mark = LATENCY_MARK if plan.latency is not None else ""
            cells += [
                least,
                format_runs_for_chance(plan.runs_for_chance, plan.gate, plan.assume, plan.cap) + mark,
                format_chance(plan.chance) + mark,  # type: ignore[arg-type]
            ]
    cells += [format_chance(chance) for _, chance in plan.catches]
    if priced:
        cells.append(format_cost(plan.cost))
    return cells


# -- parsing ----------------------------------------------------------------------


def parse_rate(value: object, source: str = "--prob-plan-assume") -> float:
    """A rate strictly between 0 and 1, from text or a number; ``95`` or ``"95%"`` is refused with a hint
    (it was meant as a percentage). ``source`` names the option in the message."""
    text = value.strip() if isinstance(value, str) else value
    percent = isinstance(text, str) and text.endswith("%")
    if percent:
        text = text[:-1].strip()  # type: ignore[union-attr]
    try:
        number = float(text)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        number = math.nan
    if isinstance(value, bool) or not math.isfinite(number):
        raise ValueError(f"{source} must be a number strictly between 0 and 1, got {value!r}")
    if 0.0 < number < 1.0 and not percent:
        return number
    if 0.0 < number < 100.0 and (percent or number > 1.0):
        raise ValueError(f"{source} must be a fraction strictly between 0 and 1, not a percentage, "
                         f"got {value!r}; did you mean {number / 100:g}?")
    raise ValueError(f"{source} must be strictly between 0 and 1, got {value!r}")


def parse_rates(value: object, source: str = "--prob-plan-flake") -> Tuple[float, ...]:
    """Comma-separated rates (``"0.1,0.01"``), each as :func:`parse_rate`; duplicates dropped keeping the first,
    an empty item refused."""
    if not isinstance(value, str):
        raise TypeError(f"{source} must be text such as '0.1,0.01', got {value!r}")
    parts = [part.strip() for part in value.split(",")]
    if not all(parts):
        raise ValueError(f"{source} must be comma-separated rates strictly between 0 and 1 (e.g. 0.1,0.01), "
                         f"got {value!r}")
    return tuple(dict.fromkeys(parse_rate(part, source) for part in parts))


# ---------------------------------------------------------------------------
# Part 2: an A/B comparison over inputs (Miller 2024)
# ---------------------------------------------------------------------------


class ArmEstimate(NamedTuple):
    """One arm's variance components, estimated from its per-input counts (Miller 2024, section 3.1).

    ``mean`` is the mean of the per-input pass fractions (each input weighs
    the same, as in the plugin's A/B difference). ``between`` is
    ``sigma_b**2``, the variance of the inputs' true pass rates, floored at 0
    (``between_raw`` unfloored); ``within`` is ``sigma_w**2 = E[p (1 - p)]``,
    the variance of one run of an input around its rate, averaged over the
    inputs.
    """

    inputs: int
    runs: int
    mean: float
    between: float
    within: float
    between_raw: float


class Components(NamedTuple):
    """The variance components of a paired per-input difference ``d = s_A - s_B``.

    ``between`` is ``Var_b(d) = sigma_b,A**2 + sigma_b,B**2 - 2 cov_AB``, the
    variance of the inputs' true differences (>= 0); ``within_a``,
    ``within_b`` are the arms' within-input variances ``sigma_w**2``.
    """

    between: float
    within_a: float
    within_b: float


class PairedEstimate(NamedTuple):
    """A paired A/B's components estimated from one report (Miller 2024, sections 3.1 and 4).

    ``covariance`` is the sample covariance of the per-input fractions, an
    unbiased estimate of the covariance of the true rates (the arms' runs are
    independent given the input). ``correlation`` is the Pearson correlation
    of the per-input fractions (:func:`paired_correlation`: what the A/B line
    shows); ``rate_correlation`` that of the true rates, ``cov /
    sqrt(sigma_b,A**2 sigma_b,B**2)`` clamped to [-1, 1] (``None`` when an
    arm's ``between`` is 0): the fractions' correlation is diluted by the
    within-input noise.
    """

    inputs: int
    a: ArmEstimate
    b: ArmEstimate
    covariance: float
    correlation: float | None
    rate_correlation: float | None
    components: Components


class TradeoffRow(NamedTuple):
    """Runs per input ``runs``: the inputs needed, the runs that costs (both arms), and how much doubling
    the runs per input would narrow the interval (:func:`narrowing`)."""

    runs: int
    inputs: int
    total_runs: int
    narrowing: float


def _counts(counts: object, name: str) -> list[Tuple[int, int]]:
    if isinstance(counts, (str, bytes)) or not isinstance(counts, Sequence):
        raise TypeError(f"{name} must be a sequence of (passes, runs) per input, got {counts!r}")
    result = []
    for i, item in enumerate(counts):
        try:
            passes, runs = item
        except (TypeError, ValueError):
            raise TypeError(f"{name}[{i}] must be a pair (passes, runs), got {item!r}") from None
        runs = _int(runs, f"{name}[{i}] runs", 2)
        passes = _int(passes, f"{name}[{i}] passes", 0)
        if passes > runs:
            raise ValueError(f"{name}[{i}]: passes must be between 0 and runs={runs}, got {passes}")
        result.append((passes, runs))
    if len(result) < 2:
        raise ValueError(f"{name} needs at least 2 inputs to estimate a variance between them, got {len(result)}")
    return result


def _sample_variance(values: Sequence[float]) -> float:
    centre = math.fsum(values) / len(values)
    return math.fsum((v - centre) ** 2 for v in values) / (len(values) - 1)


def _arm(counts: list[Tuple[int, int]]) -> ArmEstimate:
    fractions = [x / k for x, k in counts]
    # Unbiased per-input variance of one run: k/(k-1) * p(1-p) (the sample variance of its 0/1 outcomes).
    within_i = [k / (k - 1) * (x / k) * (1 - x / k) for x, k in counts]
    # Var(s_i) = sigma_b**2 + sigma_i**2 / k_i, so subtract the mean of sigma_i**2 / k_i = p(1-p)/(k-1).
    noise = math.fsum(w / k for w, (_, k) in zip(within_i, counts)) / len(counts)
    raw = _sample_variance(fractions) - noise
    return ArmEstimate(
        inputs=len(counts),
        runs=sum(k for _, k in counts),
        mean=math.fsum(fractions) / len(fractions),
        between=max(0.0, raw),
        within=math.fsum(within_i) / len(within_i),
        between_raw=raw,
    )


def arm_components(counts: Sequence[Tuple[int, int]]) -> ArmEstimate:
    """One arm's ``sigma_b**2`` and ``sigma_w**2`` from per-input ``(passes, runs)`` (Miller 2024, section 3.1).

    With ``s_i = x_i / k_i``: ``sigma_w**2`` is the mean over inputs of
    ``k_i / (k_i - 1) * s_i (1 - s_i)`` (unbiased for ``p_i (1 - p_i)``);
    ``sigma_b**2`` is the sample variance of the ``s_i`` (divisor ``n - 1``)
    minus the mean of ``s_i (1 - s_i) / (k_i - 1)`` (the run-to-run part of
    ``Var(s_i) = sigma_b**2 + p_i (1 - p_i) / k_i``), floored at 0. Both are
    unbiased before the floor, also with unequal runs per input; with equal
    ``k`` they are the one-way ANOVA (random effects) estimates
    ``(MSB - MSW) / k`` and ``MSW`` of the 0/1 outcomes grouped by input.
    Needs at least 2 inputs and 2 runs of every input (one run per input
    cannot tell the two components apart).
    """
    return _arm(_counts(counts, "counts"))


def _correlation(xs: Sequence[float], ys: Sequence[float]) -> float | None:
    mx = math.fsum(xs) / len(xs)
    my = math.fsum(ys) / len(ys)
    sxy = math.fsum((x - mx) * (y - my) for x, y in zip(xs, ys))
    sxx = math.fsum((x - mx) ** 2 for x in xs)
    syy = math.fsum((y - my) ** 2 for y in ys)
    if sxx == 0.0 or syy == 0.0:
        return None
    return max(-1.0, min(1.0, sxy / math.sqrt(sxx * syy)))


def _paired_counts(counts_a: object, counts_b: object) -> Tuple[list[Tuple[int, int]], list[Tuple[int, int]]]:
    a = _counts(counts_a, "counts_a")
    b = _counts(counts_b, "counts_b")
    if len(a) != len(b):
        raise ValueError(f"a paired A/B needs the same inputs in both arms, got {len(a)} and {len(b)}")
    return a, b


def paired_correlation(counts_a: Sequence[Tuple[int, int]], counts_b: Sequence[Tuple[int, int]]) -> float | None:
    """Pearson correlation of the two arms' per-input pass fractions, paired by position (the A/B line's
    correlation; Miller 2024, section 4: the higher it is, the more pairing narrows the interval).
    ``None`` when an arm's fractions are all equal."""
    a, b = _paired_counts(counts_a, counts_b)
    return _correlation([x / k for x, k in a], [x / k for x, k in b])


def paired_components(counts_a: Sequence[Tuple[int, int]],
                      counts_b: Sequence[Tuple[int, int]]) -> PairedEstimate:
    """Both arms' components and their covariance from per-input counts, paired by position.

    ``Var_b(d)`` is estimated directly from the per-input differences, the
    sample variance of ``s_A,i - s_B,i`` minus the mean run-to-run part of
    both arms, and floored at 0 once (equal to ``sigma_b,A**2 + sigma_b,B**2 -
    2 cov`` with the unfloored components). Miller 2024, sections 3.1 and 4.
    """
    a_counts, b_counts = _paired_counts(counts_a, counts_b)
    a, b = _arm(a_counts), _arm(b_counts)
    fa = [x / k for x, k in a_counts]
    fb = [x / k for x, k in b_counts]
    ma, mb = math.fsum(fa) / len(fa), math.fsum(fb) / len(fb)
    covariance = math.fsum((x - ma) * (y - mb) for x, y in zip(fa, fb)) / (len(fa) - 1)
    between = a.between_raw + b.between_raw - 2.0 * covariance
    rate_correlation = None
    if a.between > 0.0 and b.between > 0.0:
        rate_correlation = max(-1.0, min(1.0, covariance / math.sqrt(a.between * b.between)))
    return PairedEstimate(
        inputs=len(a_counts),
        a=a,
        b=b,
        covariance=covariance,
        correlation=_correlation(fa, fb),
        rate_correlation=rate_correlation,
        components=Components(max(0.0, between), a.within, b.within),
    )


def assumed_components(between_a: float, between_b: float, within_a: float, within_b: float,
                       correlation: float) -> Components:
    """Components from assumed numbers: each arm's ``sigma_b**2`` and ``sigma_w**2`` and the correlation of the
    true rates, ``Var_b(d) = sigma_b,A**2 + sigma_b,B**2 - 2 rho sigma_b,A sigma_b,B``. For a rate ``p`` and an
    intra-class correlation ``icc``: ``sigma_b**2 = icc p (1 - p)``, ``sigma_w**2 = (1 - icc) p (1 - p)``."""
    between_a = _nonnegative(between_a, "between_a")
    between_b = _nonnegative(between_b, "between_b")
    within_a = _nonnegative(within_a, "within_a")
    within_b = _nonnegative(within_b, "within_b")
    rho = _real(correlation, "correlation")
    if not -1.0 <= rho <= 1.0:
        raise ValueError(f"correlation must be between -1 and 1, got {correlation!r}")
    between = between_a + between_b - 2.0 * rho * math.sqrt(between_a * between_b)
    return Components(max(0.0, between), within_a, within_b)


def _components(components: object) -> Components:
    if isinstance(components, PairedEstimate):
        return components.components
    if not isinstance(components, Components):
        raise TypeError(f"components must be Components (or a PairedEstimate), got {components!r}")
    return Components(_nonnegative(components.between, "between"), _nonnegative(components.within_a, "within_a"),
                      _nonnegative(components.within_b, "within_b"))


def variance_of_mean(arm: ArmEstimate, inputs: int, runs: int) -> float:
    """Variance of one arm's mean pass rate over ``inputs`` inputs with ``runs`` runs each:
    ``(sigma_b**2 + sigma_w**2 / runs) / inputs`` (Miller 2024, section 3.1)."""
    if not isinstance(arm, ArmEstimate):
        raise TypeError(f"arm must be an ArmEstimate, got {arm!r}")
    inputs = _int(inputs, "inputs", 1)
    runs = _int(runs, "runs", 1)
    return (arm.between + arm.within / runs) / inputs


def per_input_variance(components: Components, runs: int, runs_b: int | None = None) -> float:
    """``Var_1``, the variance of one input's observed difference: ``Var_b(d) + sigma_w,A**2 / runs +
    sigma_w,B**2 / runs_b`` (``runs_b`` defaults to ``runs``)."""
    c = _components(components)
    runs = _int(runs, "runs", 1)
    runs_b = runs if runs_b is None else _int(runs_b, "runs_b", 1)
    return c.between + c.within_a / runs + c.within_b / runs_b


def variance_of_difference(components: Components, inputs: int, runs: int, runs_b: int | None = None) -> float:
    """``Var(mean d) = (Var_b(d) + sigma_w,A**2 / k_A + sigma_w,B**2 / k_B) / n`` for ``n = inputs`` paired
    inputs with ``k_A = runs`` and ``k_B = runs_b`` (default ``runs``) runs each (Miller 2024, section 4)."""
    inputs = _int(inputs, "inputs", 1)
    return per_input_variance(components, runs, runs_b) / inputs


def _z_sum(alpha: object, power: object) -> float:
    alpha = _open_unit(alpha, "alpha")
    power = _open_unit(power, "power")
    if power <= alpha / 2.0:
        raise ValueError(f"power must exceed alpha / 2 = {alpha / 2:g} (the test's own chance), got {power!r}")
    # z_{1 - alpha/2} + z_{1 - beta}, each as an upper quantile (no rounding of 1 - alpha/2).
    return -stats.normal_ppf(alpha / 2.0) + stats.normal_ppf(power)


def _phi(x: float) -> float:
    return 0.5 * math.erfc(-x / math.sqrt(2.0))


def _delta(delta: object) -> float:
    delta = _real(delta, "delta")
    if not 0.0 < delta <= 1.0:
        raise ValueError(f"delta (the difference in pass rate to detect) must be in (0, 1], got {delta!r}")
    return delta


def _power(shift: float, z: float) -> float:
    """Two-sided z-test power for a true shift of ``shift`` standard errors at critical value ``z``."""
    return _phi(shift - z) + _phi(-shift - z)


def ab_power(components: Components, delta: float, inputs: int, runs: int, alpha: float = 0.05,
             runs_b: int | None = None) -> float:
    """The chance the two-sided level-``alpha`` z-test of the mean difference detects a true difference ``delta``
    with ``inputs`` paired inputs and ``runs`` runs each: ``Phi(delta / se - z) + Phi(-delta / se - z)`` with
    ``se = sqrt(variance_of_difference)`` and ``z = z_{1 - alpha/2}`` (both tails, as statsmodels'
    ``NormalIndPower(ratio=0)``). 1 when the variance is 0."""
    delta = _delta(delta)
    alpha = _open_unit(alpha, "alpha")
    variance = variance_of_difference(components, inputs, runs, runs_b)
    if variance == 0.0:
        return 1.0
    return _power(delta / math.sqrt(variance), -stats.normal_ppf(alpha / 2.0))


def inputs_needed(components: Components, delta: float, runs: int, alpha: float = 0.05, power: float = 0.8,
                  runs_b: int | None = None) -> int:
    """The paired inputs needed to detect ``delta`` with ``power`` at two-sided level ``alpha``, ``runs`` runs each.

    ``n = ceil((z_{1 - alpha/2} + z_{1 - beta})**2 * Var_1 / delta**2)`` (Miller 2024, section 5; the standard
    paired / one-sample power formula with the per-input variance of the difference
    :func:`per_input_variance`), then moved by whole inputs so that it is exactly the smallest ``n`` with
    :func:`ab_power` >= ``power`` (whose far tail the closed form leaves out; float rounding at an integer).
    At least 1. The plugin's A/B test over inputs needs at least 10 of them (``decide.compare.MIN_INPUTS``).
    """
    delta = _delta(delta)
    z = _z_sum(alpha, power)
    var1 = per_input_variance(components, runs, runs_b)
    if var1 == 0.0:
        return 1
    n = max(1, math.ceil(z * z * var1 / (delta * delta)))
    while n > 1 and ab_power(components, delta, n - 1, runs, alpha, runs_b) >= power:
        n -= 1
    while ab_power(components, delta, n, runs, alpha, runs_b) < power:
        n += 1
    return n


def detectable_difference(components: Components, inputs: int, runs: int, alpha: float = 0.05,
                          power: float = 0.8, runs_b: int | None = None) -> float:
    """The minimum detectable difference: the ``delta`` that ``inputs`` inputs with ``runs`` runs each detect
    with ``power`` at two-sided level ``alpha`` (Miller 2024, section 5).

    Miller's closed form is ``(z_{1 - alpha/2} + z_{1 - beta}) * sqrt(Var(mean d))``; it leaves out the far
    tail of the two-sided test, so the difference returned is the root of :func:`ab_power` = ``power``
    (bisection below the closed form), which keeps it consistent with :func:`inputs_needed`: ``n`` inputs
    detect ``delta`` exactly when this is at most ``delta``. It may exceed 1 (nothing that small is
    detectable); 0 when the variance is 0.
    """
    total = _z_sum(alpha, power)
    se = math.sqrt(variance_of_difference(components, inputs, runs, runs_b))
    if se == 0.0:
        return 0.0
    z = -stats.normal_ppf(_open_unit(alpha, "alpha") / 2.0)
    low, high = 0.0, total  # in standard errors: _power(high) >= power
    for _ in range(200):
        mid = 0.5 * (low + high)
        if mid in (low, high):
            break
        if _power(mid, z) >= power:
            high = mid
        else:
            low = mid
    return high * se


def inputs_floor(components: Components, delta: float, alpha: float = 0.05, power: float = 0.8) -> int:
    """The inputs needed however many runs each gets: ``ceil(z**2 Var_b(d) / delta**2)`` (the limit of
    :func:`inputs_needed` as the runs grow); 1 when ``Var_b(d) = 0``."""
    c = _components(components)
    delta = _delta(delta)
    z = _z_sum(alpha, power)
    return max(1, math.ceil(z * z * c.between / (delta * delta)))


def narrowing(components: Components, runs: int) -> float:
    """How much doubling the runs per input from ``runs`` narrows the interval of the mean difference, as a
    fraction of its width: ``1 - sqrt(Var_1(2 runs) / Var_1(runs))``, the same for every number of inputs.
    At most ``1 - 1/sqrt(2)`` (29%, with no between-input variance); 0 with no within-input variance."""
    c = _components(components)
    runs = _int(runs, "runs", 1)
    now = per_input_variance(c, runs)
    if now == 0.0:
        return 0.0
    return 1.0 - math.sqrt(per_input_variance(c, 2 * runs) / now)


def runs_stop_helping(components: Components, threshold: float = 0.1) -> int | None:
    """The runs per input from which doubling them narrows the interval by less than ``threshold`` (10%).

    With ``B = Var_b(d)`` and ``W = sigma_w,A**2 + sigma_w,B**2`` the width
    goes as ``sqrt(B + W / k)``; doubling ``k`` narrows it by less than ``t``
    when ``B + W / (2k) > (1 - t)**2 (B + W / k)``, i.e. for
    ``k > W ((1 - t)**2 - 1/2) / (B (1 - (1 - t)**2))`` (1.63 ``W / B`` at
    10%): from there the floor ``B / n`` dominates and more inputs, not more
    runs, are needed. The smallest such integer ``k >= 1``, checked against
    :func:`narrowing`. ``None`` when ``B = 0`` and ``threshold`` is below
    ``1 - 1/sqrt(2)``: then every doubling still narrows it by 29%.
    """
    c = _components(components)
    t = _open_unit(threshold, "threshold")
    keep = (1.0 - t) ** 2
    w = c.within_a + c.within_b
    if w == 0.0 or keep <= 0.5:
        return 1  # doubling can never narrow it by t: with no within variance, or t >= 29%
    if c.between == 0.0:
        return None
    k = max(1, math.floor(w * (keep - 0.5) / (c.between * (1.0 - keep))))
    while k > 1 and narrowing(c, k - 1) < t:
        k -= 1
    while narrowing(c, k) >= t:
        k += 1
    return k


def tradeoff(components: Components, delta: float, alpha: float = 0.05, power: float = 0.8,
             runs: Sequence[int] = AB_RUNS) -> list[TradeoffRow]:
    """For each runs per input ``k`` in ``runs`` (1, 2, 5, 10, 20, 50, 100): the inputs :func:`inputs_needed`,
    the total runs ``2 n k`` (both arms), and :func:`narrowing` at ``k``."""
    if isinstance(runs, (str, bytes)) or not isinstance(runs, Sequence) or not runs:
        raise ValueError(f"runs must be a non-empty sequence of runs per input, got {runs!r}")
    rows = []
    for k in runs:
        n = inputs_needed(components, delta, k, alpha, power)
        rows.append(TradeoffRow(k, n, 2 * n * k, narrowing(components, k)))
    return rows


def tradeoff_statement(components: Components, delta: float, alpha: float = 0.05, power: float = 0.8,
                       threshold: float = 0.1, runs: Sequence[int] = AB_RUNS) -> str:
    """A plain statement of the trade between runs per input and inputs, for the estimated components.

    For ``assumed_components(0.0375, 0.0375, 0.15, 0.15, 0.6)`` (pass rates near 0.75, ICC 0.2, arms
    correlated 0.6) and ``delta=0.05``: ``To detect a difference of 5 points with 80% power (two-sided 5%):
    1 run per input needs 1,037 inputs, 2 runs 566, 5 runs 283, 10 runs 189, 20 runs 142, 50 runs 114,
    100 runs 104. From 17 runs per input on, doubling them narrows the interval by less than 10%: the
    inputs' own differences dominate, so add inputs instead; however many runs, at least 95 inputs.``
    """
    c = _components(components)
    rows = tradeoff(c, delta, alpha, power, runs)
    alpha = _open_unit(alpha, "alpha")
    parts = []
    for i, row in enumerate(rows):
        noun = ("run per input" if row.runs == 1 else "runs per input") if i == 0 else ("run" if row.runs == 1 else "runs")
        verb = " needs" if i == 0 else ""
        plural = "input" if row.inputs == 1 else "inputs"
        parts.append(f"{row.runs} {noun}{verb} {row.inputs:,}" + (f" {plural}" if i == 0 else ""))
    text = (f"To detect a difference of {_delta(delta) * 100:g} points with {format_rate(power)} power "
            f"(two-sided {format_rate(alpha)}): " + ", ".join(parts) + ".")
    stop = runs_stop_helping(c, threshold)
    if stop is None:
        text += (" The inputs' true differences don't vary, so more runs per input keep paying: each doubling "
                 "narrows the interval by about 29%.")
        return text
    plural = "run" if stop == 1 else "runs"
    text += (f" From {stop} {plural} per input on, doubling them narrows the interval by less than "
             f"{format_rate(threshold)}: the inputs' own differences dominate, so add inputs instead")
    floor = inputs_floor(c, delta, alpha, power)
    text += f"; however many runs, at least {floor:,} input{'s' if floor != 1 else ''}."
    return text
