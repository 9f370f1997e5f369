"""The typed objects a JSON report is read into (:mod:`.reader` reads it): the runs, the comparisons of every
measure and what every output shows of a night (its rows: :mod:`.report_rows`).

A field a report of another version lacks is its default (None, 0, empty). The
measures are read alike: a row's :attr:`ReportRow.gates` are its gates of every
measure (the pass fraction's ``gate``, each score's ``scores.NAME.gate``), and a
comparison's :attr:`ReportComparison.measures` its pass fraction's and its
scores'.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .report_rows import ReportInterval, ReportRow

if TYPE_CHECKING:
    from ..model.concurrency_figures import Concurrency


@dataclass(frozen=True)
class RecordScore:
    """``records[].scores[]``."""

    name: str = ""
    value: float | None = None
    threshold: float | None = None
    explanation: str | None = None


@dataclass(frozen=True)
class ReportRecord:
    """``records[]``: one run, as the pages show it."""

    case: str = ""
    case_key: str | None = None
    run: int | None = None
    nodeid: str | None = None
    outcome: str | None = None
    phase: str | None = None
    message: str | None = None
    error: str | None = None
    trace_id: str | None = None
    span_id: str | None = None
    transcript: list[dict[str, Any]] = field(default_factory=list)
    transcript_dropped: int = 0
    scores: list[RecordScore] = field(default_factory=list)

    @property
    def low_score(self) -> bool:
        """Whether a score of the run is below its threshold (a run that passed may have one, recorded late)."""
        return any(s.value is not None and s.threshold is not None and s.value < s.threshold for s in self.scores)


@dataclass(frozen=True)
class ReportSide:
    """One side of a compared input: a pass fraction's counts, or a score's n and mean."""

    passes: int | None = None
    total: int | None = None
    n: int | None = None
    mean: float | None = None


@dataclass(frozen=True)
class ReportInput:
    """``comparisons[].inputs[]``: one case (baseline) or one input (A/B) of a comparison."""

    input: str | None = None
    nodeid: str | None = None
    baseline: ReportSide | None = None
    arm: ReportSide | None = None
    difference: float | None = None
    ci: ReportInterval | None = None
    p_adjusted: float | None = None
    verdict: str | None = None
    note: str | None = None

    @property
    def key(self) -> str:
        return self.nodeid or self.input or ""


@dataclass
class ReportComparison:
    """``comparisons[]`` and ``baseline.comparisons[]``: one verdict's comparison of the pass fraction, with
    its scores' (``scores[]``, each named, with its range)."""

    kind: str | None = None
    function: str | None = None
    arm: str | None = None
    baseline: str | None = None
    axis: str | None = None
    name: str | None = None
    pairs: int | None = None
    difference: float | None = None
    ci: ReportInterval | None = None
    p_adjusted: float | None = None
    margin: float | None = None
    verdict: str | None = None
    suppressed: str | None = None
    cost_ratio: float | None = None
    #: A score's range (``[low, high]``): its margin and differences are in those units.
    range: list[float] = field(default_factory=list)
    inputs: list[ReportInput] = field(default_factory=list)
    scores: list[ReportComparison] = field(default_factory=list)

    @property
    def span(self) -> float:
        """What a margin of 1 is in the measure's units: 1 for a pass fraction, a score's range's width."""
        if len(self.range) == 2 and self.range[1] > self.range[0]:
            return self.range[1] - self.range[0]
        return 1.0

    @property
    def measure(self) -> str:
        """``pass``, or ``score:NAME`` for a score's comparison."""
        return f"score:{self.name}" if self.name is not None else "pass"

    @property
    def measures(self) -> list[ReportComparison]:
        """This comparison and its scores': one per measure, the pass fraction's first."""
        return [self, *self.scores]


@dataclass(frozen=True)
class ReportUsage:
    """``totals.usage.MODEL``."""

    input_tokens: int = 0
    output_tokens: int = 0


@dataclass(frozen=True)
class ReportTotals:
    """``totals``."""

    passes: int | None = None
    count: int | None = None
    pass_fraction: float | None = None
    rows: int | None = None
    cost: float | None = None
    statuses: dict[str, int] = field(default_factory=dict)
    usage: dict[str, ReportUsage] = field(default_factory=dict)

    @property
    def tokens(self) -> int:
        """Input and output tokens over every model."""
        return sum(u.input_tokens + u.output_tokens for u in self.usage.values())


@dataclass(frozen=True)
class ReportBaseline:
    """``baseline``: the comparison with earlier reports."""

    comparisons: list[ReportComparison] = field(default_factory=list)
    paired: int | None = None
    adjustment: str | None = None
    verdicts: dict[str, int] = field(default_factory=dict)
    score_verdicts: dict[str, int] = field(default_factory=dict)


@dataclass(frozen=True)
class ReportGates:
    """``gates``: the session's gates by verdict."""

    passed: int = 0
    failed: int = 0
    undecided: int = 0
    skipped: int = 0


@dataclass(frozen=True)
class ReportBudget:
    reason: str | None = None
    runs_not_executed: int | None = None
    #: Runs in flight when the budget was reached (``--prob-concurrency``) that finished after it, and their cost.
    runs_after_reached: int | None = None
    spent_after_reached: float | None = None


@dataclass(frozen=True)
class ReportStopping:
    active: bool | None = None
    mode: str | None = None
    cases_stopped: int | None = None
    runs_saved: int | None = None
    runs_executed: int | None = None


@dataclass(frozen=True)
class ReportStates:
    """``states``: each case's state across nights."""

    rule: dict[str, Any] | None = None
    changes: dict[str, list[Any]] = field(default_factory=dict)
    counts: dict[str, int] = field(default_factory=dict)
    nights_read: int | None = None


@dataclass(frozen=True)
class ReportQuarantineTotals:
    cases: int | None = None
    failing: int | None = None
    expired: list[Any] = field(default_factory=list)


@dataclass(frozen=True)
class ReportMerged:
    shards: int | None = None


@dataclass(frozen=True)
class ReportVersions:
    pytest_probability: str | None = None


@dataclass(frozen=True)
class ReportSettings:
    """``settings``: what the pages read of them."""

    shard: str | None = None


@dataclass
class Report:
    """A JSON report, read: what every output that renders one shows."""

    rows: list[ReportRow] = field(default_factory=list)
    records: list[ReportRecord] = field(default_factory=list)
    created: str | None = None
    created_utc: str | None = None
    versions: ReportVersions = field(default_factory=ReportVersions)
    exit_status: int | None = None
    settings: ReportSettings = field(default_factory=ReportSettings)
    totals: ReportTotals = field(default_factory=ReportTotals)
    comparisons: list[ReportComparison] = field(default_factory=list)
    baseline: ReportBaseline | None = None
    gates: ReportGates | None = None
    budget: ReportBudget | None = None
    stopping: ReportStopping | None = None
    states: ReportStates | None = None
    quarantine: ReportQuarantineTotals | None = None
    merged: ReportMerged | None = None
    #: ``concurrency``: what concurrent runs (``--prob-concurrency``) did, over the session's processes.
    concurrency: Concurrency | None = None
    #: ``cases``: the cases the session collected (with their marks), as written: read by :func:`cases_of`.
    cases: list[dict[str, Any]] = field(default_factory=list)
    #: ``stats_config``: the settings the report was decided with, as written (None in 0.3.0's): read by
    #: :func:`stats_of`, which a report of another version may not satisfy.
    stats_config: dict[str, Any] | None = None
    #: The file it was read from (its name), for the pages that list several.
    source: str = ""

    @property
    def version(self) -> str:
        """The plugin's version that wrote it (0.3.0's reports say none)."""
        return self.versions.pytest_probability or "0.3.0"

    @property
    def when(self) -> str:
        """``created_utc`` (sorts across time zones), else ``created`` (local time)."""
        return self.created_utc or self.created or ""

    @property
    def baseline_comparisons(self) -> list[ReportComparison]:
        """The baseline's comparisons, under ``baseline``; 0.4.0's development reports had them among the
        top-level ``comparisons``, with ``kind`` ``baseline``."""
        if self.baseline is not None and self.baseline.comparisons:
            return self.baseline.comparisons
        return [c for c in self.comparisons if c.kind == "baseline"]

    @property
    def all_comparisons(self) -> list[ReportComparison]:
        """The baseline's comparisons, then the A/B arms'."""
        listed = self.baseline.comparisons if self.baseline is not None else []
        return [*listed, *self.comparisons]
