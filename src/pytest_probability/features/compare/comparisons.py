"""Comparisons: tonight against a baseline, and A/B arms of one parametrize axis.

Pure and pytest-free: :class:`Pair` and :class:`Comparison` objects (built
from rows by :mod:`.pairs`) hold their tests, intervals and verdicts.
Every output (terminal, JSON, metrics, verdict items) renders the same
:class:`Comparisons`. How they are tested and judged (docs/user-guide.md, "Comparing and catching
drops"): :mod:`.judging`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ...model.outputs import Interval
from ...vocabulary import BASELINE_KIND, FAILED, PASSED, UNDECIDED, verdict_key

if TYPE_CHECKING:
    from .baseline import Baseline  # read only with a baseline option
    from .score_pairs import ScoreComparison, ScorePair
    from .settings import CompareConfig

#: From this many pairs on (ini ``prob_min_inputs``), a pooled comparison treats its inputs (or
#: cases) as a sample: sign-flip test over inputs and its inverted interval; below, no verdict.
MIN_INPUTS = 10


# -- results ------------------------------------------------------------------


@dataclass
class Pair:
    """One case (baseline) or one input (A/B): tonight/arm against baseline."""

    key: str  # case key (baseline) or input id (A/B)
    label: str
    x1: int
    n1: int
    x2: int
    n2: int
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
    def difference(self) -> float | None:
        if not self.n1 or not self.n2:
            return None
        return self.x1 / self.n1 - self.x2 / self.n2


@dataclass
class Comparison:
    """One benchmark against its baseline, or one A/B arm against the baseline variant."""

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
    flip: Any = field(default=None, repr=False)
    #: Case keys the comparison is made of (tonight's; both arms' for A/B): rerun by ``--lf``.
    cases: list[str] = field(default_factory=list)
    #: Why there is no verdict from the interval ("fewer than 10 paired inputs"), else None.
    suppressed: str | None = None
    #: Monte Carlo sign-flip patterns and their seed (None when the test was exact or not a sign flip).
    resamples: int | None = None
    seed: int | None = None
    #: A/B: the Pearson correlation of the two arms' per-input pass fractions (how much pairing by input
    #: narrows the interval, Miller 2024, section 4); None below 2 pairs or when an arm's fractions are all equal.
    correlation: float | None = None

    @property
    def key(self) -> str:
        """The decision key, and node id, of the benchmark's verdict item of this comparison."""
        return verdict_key(self.scope, self.kind, self.arm if self.kind != BASELINE_KIND else "")

    @property
    def paired(self) -> int:
        return sum(1 for p in self.pairs if p.n1 and p.n2)

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "function": self.function,
            "scope": self.scope,
            "axis": self.axis,
            "baseline": self.baseline,
            "arm": self.arm,
            "pairs": sum(1 for p in self.pairs if p.n1 and p.n2),
            "unpaired": list(self.unpaired),
            "difference": self.difference,
            "ci": self.ci.to_dict() if self.ci else None,
            "p": self.p,
            "p_method": self.p_method,
            "exact": self.exact if self.p is not None else None,
            "p_adjusted": self.p_adjusted,
            "adjustment": self.adjustment,
            "family": self.family,
            "exploratory": self.adjustment == "none" and self.family > 1,
            "margin": self.margin if self.judged else None,
            "equivalence": self.equivalence,
            "verdict": self.verdict,
            "suppressed": self.suppressed,
            "resamples": self.resamples,
            "seed": self.seed,
            "cost_ratio": self.cost_ratio,
            "correlation": self.correlation,
            "inputs": [
                {
                    "input": p.label,
                    "nodeid": p.key if self.kind == BASELINE_KIND else None,
                    "baseline": {"passes": p.x2, "total": p.n2},
                    "arm": {"passes": p.x1, "total": p.n1},
                    "difference": p.difference,
                    "ci": p.ci.to_dict() if p.ci else None,
                    "p": p.p,
                    "p_method": "fisher" if p.p is not None else None,
                    "p_adjusted": p.p_adjusted,
                    "family": self.input_family,
                    "verdict": p.verdict,
                    "note": p.note or None,
                }
                for p in self.pairs
            ],
        }


@dataclass
class Comparisons:
    """Everything the session compared."""

    config: CompareConfig
    confidence: float
    undecided: str
    comparisons: list[Comparison] = field(default_factory=list)
    #: Baseline: per-case pairs by case key (what verdict items and gauges read).
    cases: dict[str, Pair] = field(default_factory=dict)
    new: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    changed: list[str] = field(default_factory=list)
    baseline: Baseline | None = None
    #: Comparisons of mean scores (``.score_pairs``), per benchmark or A/B arm and score name; each joins the
    #: verdict item of the fractions' comparison with its key.
    scores: list[ScoreComparison] = field(default_factory=list)
    #: Baseline: per-case score pairs, by (case key, score name) (what the score gauges read).
    score_cases: dict[tuple[str, str], ScorePair] = field(default_factory=dict)

    def passed(self, verdict: str | None) -> bool:
        return verdict == PASSED or (verdict == UNDECIDED and self.undecided == PASSED)

    @property
    def failed(self) -> list[Comparison | ScoreComparison]:
        """The benchmarks' verdicts that fail the session (FAIL, or UNDECIDED as ``--prob-undecided`` says),
        of fractions and of scores."""
        found: list[Comparison | ScoreComparison] = [
            c for c in self.comparisons if c.judged and not self.passed(c.verdict)
        ]
        return found + [c for c in self.scores if c.judged and not self.passed(c.verdict)]

    @property
    def failed_cases(self) -> list[str]:
        """Case keys of the failed verdicts, which ``--lf`` reruns."""
        return list(dict.fromkeys(key for c in self.failed for key in c.cases))

    def find(self, key: str) -> Comparison | None:
        """The comparison whose verdict item has node id ``key``."""
        return next((c for c in self.comparisons if c.key == key), None)

    def scores_of(self, key: str) -> list[ScoreComparison]:
        """The score comparisons that join the verdict item with node id ``key``."""
        return [c for c in self.scores if c.key == key]

    def comparison_dict(self, comparison: Comparison) -> dict[str, Any]:
        """One comparison in the JSON report, with its ``scores`` (the score comparisons of its verdict)."""
        return {**comparison.to_dict(), "scores": [c.to_dict() for c in self.scores_of(comparison.key)]}

    def baseline_dict(self) -> dict[str, Any] | None:
        """The JSON report's ``baseline``: its base keys (``path``, ``created``, ``margin``, ``paired``,
        ``only_current``, ``only_baseline``, ``comparisons``, one per benchmark) first, then the rest."""
        if self.baseline is None:
            return None
        base = self.baseline
        data: dict[str, Any] = {
            "path": ", ".join(self.config.baselines) if self.config.baselines else ", ".join(base.paths),
            "created": max(base.created, default="") or None,
            "margin": self.config.margin if self.config.margin_given else None,
            "paired": len(self.cases),
            "only_current": sorted(self.new),
            "only_baseline": sorted(self.removed),
            "comparisons": [self.comparison_dict(c) for c in self.comparisons if c.kind == BASELINE_KIND],
        }
        data.update(base.to_dict())
        data.update(
            adjustment=self.config.adjust,
            changed=list(self.changed),
            verdicts={v: sum(1 for p in self.cases.values() if p.verdict == v) for v in (PASSED, FAILED, UNDECIDED)},
            score_verdicts={
                v: sum(1 for p in self.score_cases.values() if p.verdict == v) for v in (PASSED, FAILED, UNDECIDED)
            },
        )
        return data
