"""Decisions from rows: intervals, gates, latency quantiles, pass^k and pass@k.

Pure and pytest-free: a :class:`StatsConfig` and a case's marker keywords in,
:class:`RowAnalysis` objects out. Every reporter and exporter renders the
same analysis.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Mapping, Sequence

from .maths import stats, stopping
from .model.case import CaseRef
from .model.run import RunRecord
from .vocabulary import ERROR, FAIL, PASS
from .model.rows import Row, Summary

PASSED, FAILED, UNDECIDED = "pass", "fail", "undecided"
#: The verdict of a gated case every run of which skipped: no sample, nothing decided, not a failure.
SKIPPED = "skip"
#: Gate verdict as a number, for metrics: pass 1, undecided 0, fail -1 (a skipped gate has no value).
VERDICT_VALUES = {PASSED: 1, UNDECIDED: 0, FAILED: -1}


@dataclass(frozen=True)
class StatsConfig:
    """Session-wide statistics settings (command line and ini)."""

    method: str = "exact"
    confidence: float = 0.95
    prior: tuple[float, float] = (1.0, 1.0)
    intervals: bool = True
    min_rate: float | None = None
    undecided: str = FAILED  # what an UNDECIDED gate counts as: fail or pass
    errors: str = "count"  # count: errored runs are non-passes in gates; exclude: left out
    latency: bool = False
    latency_quantile: float = 0.95
    metrics: tuple[tuple[str, int], ...] = ()
    gate_items: bool = True
    #: Early stopping of gated cases: "curtail", "sequential" or None.
    stop: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "method": self.method,
            "level": self.confidence,
            "prior": list(self.prior),
            "intervals": self.intervals,
            "min_rate": self.min_rate,
            "undecided": self.undecided,
            "errors": self.errors,
            "latency": self.latency,
            "latency_quantile": self.latency_quantile,
            "metrics": [f"{kind}{k}" for kind, k in self.metrics],
            "gate_items": self.gate_items,
            "stop": self.stop,
        }


# -- marker keywords ----------------------------------------------------------


def _rate(value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"probability(min_rate=...) must be a number in (0, 1], got {value!r}")
    if not 0 < value <= 1:
        raise ValueError(f"probability(min_rate=...) must be in (0, 1], got {value!r}")
    return float(value)


def _passes(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"probability(min_passes=...) must be a whole number of at least 1, got {value!r}")
    return value


def _seconds(value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value <= 0:
        raise ValueError(f"probability(max_latency=...) must be a positive number of seconds, got {value!r}")
    return float(value)


def _quantile(value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 < value < 1:
        raise ValueError(f"probability(latency_quantile=...) must be between 0 and 1 (e.g. 0.95), got {value!r}")
    return float(value)


def _named(parse: Any, keyword: str) -> Any:
    def wrapped(value: Any) -> Any:
        try:
            return parse(value)
        except (TypeError, ValueError) as exc:
            raise ValueError(f"probability({keyword}=...): {exc}") from None

    return wrapped


#: Marker keywords of this module, registered into options.MARKER_KEYWORDS.
MARKER_KEYWORDS = {
    "min_rate": _rate,
    "min_passes": _passes,
    "confidence": _named(stats.parse_confidence, "confidence"),
    "method": _named(stats.parse_method, "method"),
    "prior": _named(stats.parse_prior, "prior"),
    "latency_quantile": _quantile,
    "max_latency": _seconds,
    "stop": _named(stopping.parse_mode, "stop"),
}


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

    @property
    def gated(self) -> bool:
        return self.gate is not None or self.max_latency is not None


def case_spec(kwargs: Mapping[str, Any], runs: int, config: StatsConfig) -> CaseSpec:
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
    return CaseSpec(gate, kwargs.get("latency_quantile", config.latency_quantile), kwargs.get("max_latency"))


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


# -- results ------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Interval:
    method: str
    level: float
    low: float
    high: float

    def to_dict(self) -> dict[str, Any]:
        return {"method": self.method, "level": self.level, "low": self.low, "high": self.high}


@dataclass(frozen=True)
class GateResult:
    spec: GateSpec
    passes: int
    total: int
    excluded: int
    interval: Interval | None
    verdict: str
    #: Runs of the case not executed (stopped early or by a budget).
    missing: int = 0
    #: True when the sequential test, not the fixed-n rule, gave the verdict.
    sequential: bool = False

    def to_dict(self, runs: int) -> dict[str, Any]:
        data: dict[str, Any] = {"rule": self.spec.rule}
        if self.spec.rule == "count":
            data["min_passes"] = self.spec.min_passes
        else:
            data["min_rate"] = self.spec.bar
        data.update(
            confidence=self.spec.confidence,
            method=self.spec.method,
            prior=list(self.spec.prior),
            errors=self.spec.errors,
            runs=runs,
            passes=self.passes,
            total=self.total,
            excluded=self.excluded,
            low=self.interval.low if self.interval else None,
            high=self.interval.high if self.interval else None,
            verdict=self.verdict,
        )
        if self.spec.stop is not None or self.missing:
            data.update(stop=self.spec.stop, not_executed=self.missing,
                        decided_by="sequential" if self.sequential else self.spec.rule)
        return data


@dataclass(frozen=True)
class LatencyResult:
    quantile: float
    total: int
    excluded: int
    estimate: float | None
    low: float | None
    high: float | None
    ranks: tuple[int | None, int | None]
    level: float
    max_latency: float | None
    verdict: str | None

    def to_dict(self) -> dict[str, Any]:
        ci = None
        if self.estimate is not None:
            ci = {
                "method": "order-statistic",
                "level": self.level,
                "low": self.low,
                "high": self.high,
                "ranks": list(self.ranks),
            }
        return {
            "quantile": self.quantile,
            "total": self.total,
            "excluded": self.excluded,
            "estimate": self.estimate,
            "ci": ci,
            "max_latency": self.max_latency,
            "verdict": self.verdict,
        }


@dataclass(slots=True)
class RowAnalysis:
    row: Row
    spec: CaseSpec
    interval: Interval | None
    gate: GateResult | None
    latency: LatencyResult | None
    metrics: dict[str, float | None] = field(default_factory=dict)
    #: Runs of the case that were selected but never reported (the session was cut short).
    missing: int = 0

    @property
    def verdict(self) -> str | None:
        """The case's combined verdict: fail if any gate fails, pass if all pass, skip if all skip."""
        verdicts = [v for v in (self.gate.verdict if self.gate else None, self.latency.verdict if self.latency else None) if v]
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


def cut_short_text(missing: int, reported: int) -> str:
    """How a verdict says that some of its runs never reported."""
    return f"runs cut short: {reported} of {reported + missing} reported"


def counts_as_pass(verdict: str | None, undecided: str) -> bool | None:
    """Whether a verdict lets the session pass: PASS and SKIPPED do, UNDECIDED as ``undecided`` says."""
    if verdict is None:
        return None
    return verdict in (PASSED, SKIPPED) or (verdict == UNDECIDED and undecided == PASSED)


def evaluate_gate(spec: GateSpec, passes: int, fails: int, errors: int, missing: int = 0, *,
                  skipped: int = 0, cut_short: int = 0) -> GateResult:
    """The gate's verdict.

    ``missing``: runs not executed by a decision (stopped early, or by a
    budget). A count gate with runs missing passes once it has ``min_passes``
    and fails only once ``min_passes`` is out of reach even had every missing
    run passed; in between it is UNDECIDED. A rate gate's interval is over the
    runs that executed. Under ``stop="sequential"`` a rate gate whose
    sequential test has decided takes that verdict (see :mod:`stopping`).

    ``skipped``: runs that skipped; when every run did (and none is missing or
    cut short), the verdict is SKIPPED.

    ``cut_short``: selected runs that never reported because the session was
    cut short (``-x``, ``--maxfail``, Ctrl-C). The verdict is then never PASS,
    and a count gate FAILs only when those runs could not have reached
    ``min_passes`` either.
    """
    excluded = errors if spec.errors == "exclude" else 0
    total = passes + fails + errors - excluded
    if passes + fails + errors == 0 and skipped and not missing and not cut_short:
        return GateResult(spec, passes, total, excluded, None, SKIPPED, missing)
    interval = None
    if total:
        low, high = stats.interval(spec.method, passes, total, spec.confidence, spec.prior)
        interval = Interval(spec.method, spec.confidence, low, high)
    sequential = False
    if spec.rule == "count":  # PASS or FAIL: never UNDECIDED, unless runs are missing or cut short
        assert spec.min_passes is not None
        verdict = stopping.count_completion(passes, missing + cut_short, spec.min_passes) or UNDECIDED
    elif interval is None:
        verdict = UNDECIDED
    else:
        verdict = stats.verdict(interval.low, interval.high, spec.bar)
        if spec.stop == stopping.SEQUENTIAL:
            decided = stopping.sequential_verdict(passes, total, spec.bar, spec.confidence)
            if decided is not None:
                verdict, sequential = decided, True
    if cut_short and verdict == PASSED:
        verdict = UNDECIDED
    return GateResult(spec, passes, total, excluded, interval, verdict, missing, sequential)


def early_verdict(spec: CaseSpec, passes: int, fails: int, errors: int, remaining: int) -> str | None:
    """The verdict that lets a case stop before its ``remaining`` runs, or None.

    Only cases with a rate or count gate and a stop mode stop. A case that
    also has a latency gate stops only on a failing gate (its latency needs
    the runs). ``curtail``: the verdict every completion leads to.
    ``sequential``: that, or the sequential test's decision (rate gates).
    """
    gate = spec.gate
    if gate is None or gate.stop is None or remaining <= 0:
        return None
    excluded = errors if gate.errors == "exclude" else 0
    total = passes + fails + errors - excluded
    if gate.rule == "count":
        assert gate.min_passes is not None
        verdict = stopping.count_completion(passes, remaining, gate.min_passes)
    else:
        # Clopper-Pearson and Wilson intervals contain the observed rate; a Beta posterior's need not.
        bar = gate.bar if gate.method in ("exact", "wilson") else None
        verdict = stopping.completion_verdict(gate.decide, passes, total, remaining, bar)
        if verdict is None and gate.stop == stopping.SEQUENTIAL:
            verdict = stopping.sequential_verdict(passes, total, gate.bar, gate.confidence)
    if verdict == PASSED and spec.max_latency is not None:
        return None
    return verdict


def evaluate_latency(records: Sequence[RunRecord], quantile: float, confidence: float, max_latency: float | None,
                     cut_short: int = 0) -> LatencyResult:
    """``cut_short``: selected runs that never reported; a latency gate then never PASSes."""
    durations = [r.duration for r in records if r.outcome in (PASS, FAIL)]
    excluded = sum(1 for r in records if r.outcome == ERROR)
    if not durations:
        verdict = None
        if max_latency is not None:
            verdict = SKIPPED if records and not excluded and not cut_short else UNDECIDED
        return LatencyResult(quantile, 0, excluded, None, None, None, (None, None), confidence, max_latency, verdict)
    estimate = stats.quantile_interval(durations, quantile, confidence)
    ranks = stats.quantile_ranks(len(durations), quantile, confidence)
    verdict = None
    if max_latency is not None:
        if estimate.high is not None and estimate.high <= max_latency:
            verdict = PASSED
        elif estimate.low is not None and estimate.low > max_latency:
            verdict = FAILED
        else:
            verdict = UNDECIDED
        if cut_short and verdict == PASSED:
            verdict = UNDECIDED
    return LatencyResult(quantile, len(durations), excluded, estimate.estimate, estimate.low, estimate.high,
                         ranks, confidence, max_latency, verdict)


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


def analyze_row(row: Row, spec: CaseSpec, config: StatsConfig, missing: int = 0) -> RowAnalysis:
    """``missing``: runs of the case selected for the session that never reported, the session having been
    cut short (``cut_short`` of :func:`evaluate_gate`)."""
    counts = row.counts
    interval = _interval(config.method, config.confidence, tuple(config.prior), counts.passes, counts.total) if counts.total > 0 else None
    gate = None
    if spec.gate:
        gate = evaluate_gate(spec.gate, counts.passes, counts.fails, counts.errors, counts.stopped,
                             skipped=counts.skipped, cut_short=missing)
    latency = None
    if config.latency or spec.max_latency is not None:
        latency = evaluate_latency(row.records, spec.latency_quantile, config.confidence, spec.max_latency,
                                   cut_short=missing)
    metrics = {f"{kind}{k}": metric_value(kind, k, counts.passes, counts.total) for kind, k in config.metrics} or _NO_METRICS
    return RowAnalysis(row, spec, interval, gate, latency, metrics, missing)


@dataclass
class MetricAggregate:
    name: str  # benchmark name, or "Overall"
    scope: str  # "benchmark" or "overall"
    values: dict[str, float | None]
    cases: dict[str, int]  # metric -> cases averaged
    left_out: dict[str, int]  # metric -> cases with fewer than k runs

    def to_dict(self) -> dict[str, Any]:
        return {
            "scope": self.scope,
            "name": self.name,
            "metrics": {
                metric: {"estimate": self.values[metric], "cases": self.cases[metric], "left_out": self.left_out[metric]}
                for metric in self.values
            },
        }


def _aggregate(name: str, scope: str, rows: Iterable[RowAnalysis], metrics: Sequence[str]) -> MetricAggregate:
    rows = list(rows)
    values, cases, left_out = {}, {}, {}
    for metric in metrics:
        present = [r.metrics[metric] for r in rows if r.metrics.get(metric) is not None]
        values[metric] = sum(present) / len(present) if present else None  # type: ignore[arg-type]
        cases[metric] = len(present)
        left_out[metric] = len(rows) - len(present)
    return MetricAggregate(name, scope, values, cases, left_out)


@dataclass
class Analysis:
    config: StatsConfig
    rows: list[RowAnalysis]
    aggregates: list[MetricAggregate]

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
        for row in self.gated:
            totals[names[row.verdict]] += 1  # type: ignore[index]
        return totals

    @property
    def failed_gates(self) -> list[RowAnalysis]:
        return [r for r in self.gated if not r.decided_pass(self.config.undecided)]


def analyze(summary: Summary, config: StatsConfig, spec_of: Callable[[CaseRef], CaseSpec] | None = None,
            missing: Mapping[str, int] | None = None) -> Analysis:
    """``spec_of``: a case's CaseSpec (without it every case gets the session defaults);
    ``missing``: case key -> selected runs that never reported (none if absent).

    A callable, not a mapping of every case: at 50,000 cases an index of every
    row would be built here only to be read once per row."""
    default = case_spec({}, 1, config)
    missing = missing or {}
    rows = [analyze_row(row, spec_of(row.case) if spec_of is not None else default, config, missing.get(row.case.key, 0))
            for row in summary.rows]
    names = [f"{kind}{k}" for kind, k in config.metrics]
    aggregates: list[MetricAggregate] = []
    if names:
        benchmarks: dict[str, list[RowAnalysis]] = {}
        for row in rows:
            benchmarks.setdefault(row.row.case.benchmark, []).append(row)
        aggregates = [_aggregate(name, "benchmark", group, names) for name, group in benchmarks.items()]
        aggregates.append(_aggregate("Overall", "overall", rows, names))
    return Analysis(config, rows, aggregates)
