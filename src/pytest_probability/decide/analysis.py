"""What the rows mean: each case's interval, gate and latency verdicts, pass^k / pass@k, and the estimates over inputs.

Pure and pytest-free: a :class:`~pytest_probability.model.rows.Summary` and
the session's :class:`~pytest_probability.config.settings.StatsConfig` in,
an :class:`Analysis` out, which every reporter and exporter renders.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping

from ..aggregate.benchmarks import InputsAggregate, aggregates
from ..config.settings import StatsConfig
from ..config.spec import CaseSpec, case_spec
from ..maths import stats
from ..maths.interval import Interval
from ..model.case import CaseRef
from ..model.outputs import Verdict
from ..model.rows import Row, Summary
from ..value_classes import Record
from ..vocabulary import FAILED, PASSED, SKIPPED, UNDECIDED
from .gates import (
    GateResult,
    LatencyResult,
    ScoreGateResult,
    counts_as_pass,
    cut_short_text,
    evaluate_gate,
    evaluate_latency,
    evaluate_score_gate,
)


class RowAnalysis(Record):
    row: Row
    spec: CaseSpec
    interval: Interval | None
    gate: GateResult | None
    latency: LatencyResult | None
    metrics: dict[str, float | None]
    #: Runs of the case that were selected but never reported (the session was cut short).
    missing: int
    #: Runs a worker crash rescheduled past the case's gate item, which was released UNDECIDED then
    #: (``DecisionBook.release_rescheduled``): the case's verdict is UNDECIDED in every output.
    rescheduled: int
    #: The case's score gates judged, in the spec's order.
    scores: tuple[ScoreGateResult, ...]

    __slots__ = FIELDS = ("row", "spec", "interval", "gate", "latency", "metrics", "missing", "rescheduled", "scores")

    def __init__(
        self,
        row: Row,
        spec: CaseSpec,
        interval: Interval | None,
        gate: GateResult | None,
        latency: LatencyResult | None,
        metrics: dict[str, float | None] | None = None,
        missing: int = 0,
        rescheduled: int = 0,
        scores: tuple[ScoreGateResult, ...] = (),
    ) -> None:
        self.row = row
        self.spec = spec
        self.interval = interval
        self.gate = gate
        self.latency = latency
        self.metrics = {} if metrics is None else metrics
        self.missing = missing
        self.rescheduled = rescheduled
        self.scores = scores

    @property
    def gates(self) -> tuple[GateResult | ScoreGateResult, ...]:
        """Every gate of the case judged, one per measure: its pass fraction's first, then its scores'."""
        return ((self.gate,) if self.gate is not None else ()) + self.scores

    @property
    def verdict(self) -> str | None:
        """The case's combined verdict: fail if any gate fails, pass if all pass, skip if all skip;
        UNDECIDED when its gate item was released on a worker crash."""
        if self.rescheduled and (self.gate is not None or self.latency is not None or self.scores):
            return UNDECIDED
        verdicts = [
            v for v in (self.gate.verdict if self.gate else None, self.latency.verdict if self.latency else None) if v
        ]
        verdicts += [gate.verdict for gate in self.scores]
        if not verdicts:
            return None
        if FAILED in verdicts:
            return FAILED
        for decided in (PASSED, SKIPPED):
            if all(v == decided for v in verdicts):
                return decided
        return UNDECIDED

    def decided_pass(self, undecided: str) -> bool | None:
        """True/False: the case passes/fails the session; None: not gated. A skipped gate does not fail it."""
        return counts_as_pass(self.verdict, undecided)


def metric_value(kind: str, k: int, passes: int, total: int) -> float | None:
    if total < k:
        return None
    return stats.pass_hat_k(total, passes, k) if kind == "pass^" else stats.pass_at_k(total, passes, k)


#: The metrics of every row when none is asked for (one shared empty dict: analyses are read, never changed).
_NO_METRICS: dict[str, float | None] = {}


@functools.lru_cache(maxsize=4096)
def _interval(method: str, confidence: float, prior: tuple[float, float], passes: int, total: int) -> Interval:
    """A row's interval, one shared object per (settings, passes, total): rows of a session mostly
    share their run count, so 10,000 rows of one run have two intervals, not 10,000."""
    low, high = stats.interval(method, passes, total, confidence, prior)
    return Interval(method, confidence, low, high)


def analyze_row(row: Row, spec: CaseSpec, config: StatsConfig, missing: int = 0, rescheduled: int = 0) -> RowAnalysis:
    """``missing``: runs of the case selected for the session that never reported, the session having been
    cut short (``cut_short`` of :func:`evaluate_gate`); ``rescheduled``: runs a worker crash rescheduled
    past the case's gate item (:attr:`RowAnalysis.rescheduled`)."""
    counts = row.counts
    interval = (
        _interval(config.method, config.confidence, tuple(config.prior), counts.passes, counts.total)
        if counts.total > 0
        else None
    )
    gate = None
    if spec.gate:
        gate = evaluate_gate(
            spec.gate,
            counts.passes,
            counts.fails,
            counts.errors,
            counts.stopped,
            skipped=counts.skipped,
            cut_short=missing,
        )
        if rescheduled:
            gate = gate.replace(verdict=UNDECIDED, rescheduled=rescheduled)
    latency = None
    if config.latency or spec.max_latency is not None:
        latency = evaluate_latency(
            row.records, spec.latency_quantile, config.confidence, spec.max_latency, cut_short=missing
        )
    metrics = {
        f"{kind}{k}": metric_value(kind, k, counts.passes, counts.total) for kind, k in config.metrics
    } or _NO_METRICS
    score_gates = tuple(evaluate_score_gate(score, row, missing) for score in spec.scores)
    return RowAnalysis(row, spec, interval, gate, latency, metrics, missing, rescheduled, score_gates)


class Analysis(Record):
    config: StatsConfig
    rows: list[RowAnalysis]
    #: Each bench function's estimate over its inputs, then Overall (``aggregate.benchmarks``).
    aggregates: list[InputsAggregate]

    FIELDS = ("config", "rows", "aggregates")

    def __init__(self, config: StatsConfig, rows: list[RowAnalysis], aggregates: list[InputsAggregate]) -> None:
        self.config = config
        self.rows = rows
        self.aggregates = aggregates

    @functools.cached_property
    def by_key(self) -> dict[str, RowAnalysis]:
        """Case key -> row analysis, built once (reporters look rows up by key, once per cell)."""
        return {r.row.case.key: r for r in self.rows}

    @property
    def gated(self) -> list[RowAnalysis]:
        return [r for r in self.rows if r.verdict is not None]

    def gate_totals(self) -> dict[str, int]:
        totals = {"passed": 0, "failed": 0, "undecided": 0, "skipped": 0}
        names = {PASSED: "passed", FAILED: "failed", UNDECIDED: "undecided", SKIPPED: "skipped"}
        for row in self.rows:
            if row.verdict is not None:  # the gated rows
                totals[names[row.verdict]] += 1
        return totals

    @property
    def failed_gates(self) -> list[RowAnalysis]:
        return [r for r in self.gated if not r.decided_pass(self.config.undecided)]


def analyze(
    summary: Summary,
    config: StatsConfig,
    spec_of: Callable[[CaseRef], CaseSpec] | None = None,
    missing: Mapping[str, int] | None = None,
    rescheduled: Mapping[str, int] | None = None,
) -> Analysis:
    """``spec_of``: a case's CaseSpec (without it every case gets the session defaults);
    ``missing``: case key -> selected runs that never reported (none if absent); ``rescheduled``:
    case key -> runs a worker crash rescheduled past its released gate item.

    A callable, not a mapping of every case: at 50,000 cases an index of every
    row would be built here only to be read once per row."""
    default = case_spec({}, 1, config)
    missing = missing or {}
    rescheduled = rescheduled or {}
    rows = [
        analyze_row(
            row,
            spec_of(row.case) if spec_of is not None else default,
            config,
            missing.get(row.case.key, 0),
            rescheduled.get(row.case.key, 0) if rescheduled else 0,
        )
        for row in summary.rows
    ]
    found = aggregates(
        summary.rows,
        config.metrics,
        level=config.confidence,
        resamples=config.resamples,
        seed=config.seed,
        min_inputs=config.min_inputs,
        interval=config.inputs_interval,
    )
    return Analysis(config, rows, found)


def verdict_text(result: RowAnalysis, undecided: str) -> Verdict:
    """The verdict of a case, with its one-line explanation."""
    verdict = result.verdict or UNDECIDED
    if verdict == SKIPPED:
        return Verdict(True, "SKIPPED: every run of this case was skipped", skipped=True)
    parts = []
    if result.gate is not None:
        gate = result.gate
        interval = gate.interval
        shown = f"[{interval.low:.1%}, {interval.high:.1%}]" if interval else "no counted runs"
        if gate.spec.rule == "count":
            parts.append(f"{gate.passes}/{gate.total} passes, need {gate.spec.min_passes}: {gate.verdict.upper()}")
        elif gate.sequential:
            parts.append(
                f"{gate.passes}/{gate.total} passes, {gate.spec.confidence:g} sequential test (mixture SPRT) "
                f"vs bar {gate.spec.bar:g}: {gate.verdict.upper()}"
            )
        else:
            parts.append(
                f"{gate.passes}/{gate.total} passes, {gate.spec.confidence:g} {gate.spec.method} interval {shown} "
                f"vs bar {gate.spec.bar:g}: {gate.verdict.upper()}"
            )
    lat = result.latency
    if lat is not None and lat.verdict is not None:
        high = "∞" if lat.high is None else f"{lat.high:.3g}s"
        low = "-" if lat.low is None else f"{lat.low:.3g}s"
        parts.append(
            f"p{lat.quantile * 100:g} latency interval [{low}, {high}] vs {lat.max_latency:g}s: {lat.verdict.upper()}"
        )
    parts += [gate.text for gate in result.scores]
    if result.gate is not None and result.gate.missing:
        parts.append(f"{result.gate.missing} run(s) not executed")
    if result.missing:
        parts.append(cut_short_text(result.missing, len(result.row.records)))
    passed = bool(counts_as_pass(verdict, undecided))
    return Verdict(passed, f"{verdict.upper()}: " + "; ".join(parts))
