"""Comparisons: tonight against a baseline, and A/B arms of one parametrize axis, for every measure.

Pure and pytest-free: a :class:`Pair` is one case (baseline) or one input
(A/B) of one measure, the pass fraction or a named score
(``measures``); a :class:`Comparison` pools a benchmark's (or an arm's)
pairs of one measure. Both are built from rows by :mod:`.pairs` and judged
by :mod:`.judging`, whichever the measure: its own statistics are behind
its interface. Every output (terminal, JSON, metrics, verdict items) renders
the same :class:`Comparisons`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ...maths.interval import Interval
from ...measures.measure import FRACTION, PASS, SCORE, Measure
from ...vocabulary import BASELINE_KIND, FAILED, PASSED, UNDECIDED, verdict_key

if TYPE_CHECKING:
    from .baseline import Baseline  # read only with a baseline option
    from .compare_config import CompareConfig

#: From this many pairs on (ini ``prob_min_inputs``), a pooled comparison treats its inputs (or
#: cases) as a sample: sign-flip test over inputs and its inverted interval; below, no verdict.
MIN_INPUTS = 10


# -- results ------------------------------------------------------------------


@dataclass
class Pair:
    """One case (baseline) or one input (A/B) of one measure: tonight's (the arm's) sample against the baseline's."""

    measure: Measure[Any]
    key: str  # case key (baseline) or input id (A/B)
    label: str
    #: The measure's samples (``measure.of_row``, ``measure.of_baseline``): tonight or the arm, and the baseline.
    arm: Any
    base: Any
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
    def paired(self) -> bool:
        """Both sides hold something to compare."""
        return bool(self.measure.count(self.arm) and self.measure.count(self.base))

    @property
    def difference(self) -> float | None:
        if not self.paired:
            return None
        arm, base = self.measure.estimate(self.arm), self.measure.estimate(self.base)
        assert arm is not None and base is not None
        return arm - base

    def to_dict(self, kind: str, family: int) -> dict[str, Any]:
        """One input of a comparison in the JSON report (``family``: its comparison's ``input_family``)."""
        measure = self.measure
        data: dict[str, Any] = {
            "input": self.label,
            "nodeid": self.key if kind == BASELINE_KIND else None,
            "baseline": measure.side_dict(self.base),
            "arm": measure.side_dict(self.arm),
            "difference": self.difference,
            "ci": self.ci.to_dict() if self.ci else None,
            "p": self.p,
            "p_method": measure.pair_method if self.p is not None else None,
            "p_adjusted": self.p_adjusted,
        }
        if measure.unit == FRACTION:  # as the JSON report has always had it
            data["family"] = family
        data.update(verdict=self.verdict, note=self.note or None)
        return data


@dataclass
class Comparison:
    """One benchmark's pairs of one measure against its baseline, or one A/B arm's against the baseline variant."""

    measure: Measure[Any]
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
    #: Case keys the comparison is made of (tonight's; both arms' for A/B): rerun by ``--lf``.
    cases: list[str] = field(default_factory=list)
    #: Why there is no verdict from the interval ("fewer than 10 paired inputs"), else None.
    suppressed: str | None = None
    #: Monte Carlo patterns or bootstrap resamples and their seed (None when nothing was drawn).
    resamples: int | None = None
    seed: int | None = None
    #: The Pearson correlation of the two sides' per-pair estimates (how much pairing by input narrows the
    #: interval, Miller 2024, section 4); None below 2 pairs or when a side's estimates are all equal.
    correlation: float | None = None

    @property
    def key(self) -> str:
        """The decision key, and node id, of the benchmark's verdict item this comparison is part of."""
        return verdict_key(self.scope, self.kind, self.arm if self.kind != BASELINE_KIND else "")

    @property
    def paired(self) -> int:
        return sum(1 for p in self.pairs if p.paired)

    @property
    def margin_points(self) -> float:
        """The margin in the measure's units (``margin`` is a share of its range)."""
        return self.margin * self.measure.span

    def to_dict(self) -> dict[str, Any]:
        return _SHAPES[self.measure.unit](self)


def _fraction_dict(c: Comparison) -> dict[str, Any]:
    """A pass fraction's comparison in the JSON report (its keys as they have always been)."""
    return {
        "kind": c.kind,
        "function": c.function,
        "scope": c.scope,
        "axis": c.axis,
        "baseline": c.baseline,
        "arm": c.arm,
        "pairs": c.paired,
        "unpaired": list(c.unpaired),
        "difference": c.difference,
        "ci": c.ci.to_dict() if c.ci else None,
        "p": c.p,
        "p_method": c.p_method,
        "exact": c.exact if c.p is not None else None,
        "p_adjusted": c.p_adjusted,
        "adjustment": c.adjustment,
        "family": c.family,
        "exploratory": c.adjustment == "none" and c.family > 1,
        "margin": c.margin if c.judged else None,
        "equivalence": c.equivalence,
        "verdict": c.verdict,
        "suppressed": c.suppressed,
        "resamples": c.resamples,
        "seed": c.seed,
        "cost_ratio": c.cost_ratio,
        "correlation": c.correlation,
        "inputs": [p.to_dict(c.kind, c.input_family) for p in c.pairs],
    }


def _score_dict(c: Comparison) -> dict[str, Any]:
    """A mean score's comparison in the JSON report: under its verdict's fraction comparison, by score name."""
    return {
        "name": c.measure.name,
        "range": [c.measure.low, c.measure.high],
        "pairs": c.paired,
        "difference": c.difference,
        "ci": c.ci.to_dict() if c.ci else None,
        "p": c.p,
        "p_method": c.p_method,
        "p_adjusted": c.p_adjusted,
        "adjustment": c.adjustment,
        "family": c.family,
        "margin": c.margin if c.judged else None,
        "equivalence": c.equivalence,
        "verdict": c.verdict,
        "suppressed": c.suppressed,
        "resamples": c.resamples,
        "seed": c.seed,
        "correlation": c.correlation,
        "inputs": [p.to_dict(c.kind, c.input_family) for p in c.pairs],
    }


#: The JSON shape of a comparison, by the kind of its measure: the report's keys stay as they were written
#: (a score's comparison sits under its verdict's fraction comparison, named, with its range).
_SHAPES: dict[str, Callable[[Comparison], dict[str, Any]]] = {FRACTION: _fraction_dict, SCORE: _score_dict}


@dataclass
class Comparisons:
    """Everything the session compared, of every measure."""

    config: CompareConfig
    confidence: float
    undecided: str
    #: Every comparison: the pass fraction's of each verdict (its head), then the scores'.
    comparisons: list[Comparison] = field(default_factory=list)
    #: Baseline: per-case pairs by (case key, measure key) (what the gauges read).
    cases: dict[tuple[str, str], Pair] = field(default_factory=dict)
    new: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    changed: list[str] = field(default_factory=list)
    baseline: Baseline | None = None

    def passed(self, verdict: str | None) -> bool:
        return verdict == PASSED or (verdict == UNDECIDED and self.undecided == PASSED)

    @property
    def heads(self) -> list[Comparison]:
        """The pass fraction's comparisons: one per verdict item, which its measures' comparisons join."""
        return [c for c in self.comparisons if c.measure.key == PASS]

    @property
    def failed(self) -> list[Comparison]:
        """The comparisons that fail the session (FAIL, or UNDECIDED as ``--prob-undecided`` says), of every measure."""
        return [c for c in self.comparisons if c.judged and not self.passed(c.verdict)]

    @property
    def failed_cases(self) -> list[str]:
        """Case keys of the failed verdicts, which ``--lf`` reruns."""
        return list(dict.fromkeys(key for c in self.failed for key in c.cases))

    def find(self, key: str) -> Comparison | None:
        """The pass fraction's comparison of the verdict item with node id ``key``."""
        return next((c for c in self.heads if c.key == key), None)

    def of(self, key: str) -> list[Comparison]:
        """Every comparison of the verdict item with node id ``key``, the pass fraction's first."""
        return [c for c in self.comparisons if c.key == key]

    def pairs(self, measures: Callable[[str], bool] = lambda key: key == PASS) -> dict[str, Pair]:
        """Baseline: the per-case pairs of the measures ``measures`` selects by key (the pass fraction's), by case key."""
        return {case: pair for (case, key), pair in self.cases.items() if measures(key)}

    def comparison_dict(self, comparison: Comparison) -> dict[str, Any]:
        """One verdict's comparisons in the JSON report: its pass fraction's, with its ``scores``."""
        joined = [c.to_dict() for c in self.of(comparison.key) if c is not comparison]
        return {**comparison.to_dict(), "scores": joined}

    def baseline_dict(self) -> dict[str, Any] | None:
        """The JSON report's ``baseline``: its base keys (``path``, ``created``, ``margin``, ``paired``,
        ``only_current``, ``only_baseline``, ``comparisons``, one per benchmark) first, then the rest."""
        if self.baseline is None:
            return None
        base = self.baseline
        fractions = [p for (_, key), p in self.cases.items() if key == PASS]
        scores = [p for (_, key), p in self.cases.items() if key != PASS]
        data: dict[str, Any] = {
            "path": ", ".join(self.config.baselines) if self.config.baselines else ", ".join(base.paths),
            "created": max(base.created, default="") or None,
            "margin": self.config.margin if self.config.margin_given else None,
            "paired": len(fractions),
            "only_current": sorted(self.new),
            "only_baseline": sorted(self.removed),
            "comparisons": [self.comparison_dict(c) for c in self.heads if c.kind == BASELINE_KIND],
        }
        data.update(base.to_dict())
        data.update(
            adjustment=self.config.adjust,
            changed=list(self.changed),
            verdicts=_verdicts(fractions),
            score_verdicts=_verdicts(scores),
        )
        return data


def _verdicts(pairs: Iterable[Pair]) -> dict[str, int]:
    found = list(pairs)
    return {v: sum(1 for p in found if p.verdict == v) for v in (PASSED, FAILED, UNDECIDED)}
