"""Gate verdicts: a case's runs against its gate of each measure (a rate or a pass count, a bar on a mean score)
and its latency limit.

Pure and pytest-free. :func:`evaluate_gate`, :func:`evaluate_score_gate` and
:func:`evaluate_latency` give a case's verdicts from its counts and records,
:func:`early_verdict` and :func:`early_score_verdict` whether the case may
stop before its remaining runs (``--prob-stop``). A gate's result, of either
measure, reads the same to every output: its ``measure``, ``n``,
``estimate``, ``interval``, ``bar``, ``bar_text``, ``shown`` and ``verdict``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Final

from ..config.spec import CaseSpec, GateSpec, ScoreGateSpec
from ..maths import scores, stats, stopping
from ..maths.interval import Interval
from ..model.rows import Row
from ..model.run import RunRecord, scores_named
from ..value_classes import Value
from ..vocabulary import ERROR, FAIL, FAILED, PASS, PASSED, SKIPPED, UNDECIDED

if TYPE_CHECKING:
    from ..measures.fraction import PassFraction
    from ..measures.score import MeanScore


class GateResult(Value):
    spec: Final[GateSpec]
    passes: Final[int]
    total: Final[int]
    excluded: Final[int]
    interval: Final[Interval | None]
    verdict: Final[str]
    #: Runs of the case not executed (stopped early or by a budget).
    missing: Final[int]
    #: True when the sequential test, not the fixed-n rule, gave the verdict.
    sequential: Final[bool]
    #: Runs a worker crash rescheduled past the gate item, released UNDECIDED (xdist).
    rescheduled: Final[int]

    __slots__ = FIELDS = (
        "spec",
        "passes",
        "total",
        "excluded",
        "interval",
        "verdict",
        "missing",
        "sequential",
        "rescheduled",
    )

    def __init__(
        self,
        spec: GateSpec,
        passes: int,
        total: int,
        excluded: int,
        interval: Interval | None,
        verdict: str,
        missing: int = 0,
        sequential: bool = False,
        rescheduled: int = 0,
    ) -> None:
        self.spec = spec
        self.passes = passes
        self.total = total
        self.excluded = excluded
        self.interval = interval
        self.verdict = verdict
        self.missing = missing
        self.sequential = sequential
        self.rescheduled = rescheduled

    @property
    def measure(self) -> PassFraction:
        return self.spec.measure

    @property
    def n(self) -> int:
        """The counted runs the verdict is over."""
        return self.total

    @property
    def estimate(self) -> float | None:
        return self.passes / self.total if self.total else None

    @property
    def bar(self) -> float:
        return self.spec.bar

    @property
    def bar_text(self) -> str:
        return f">= {self.spec.min_passes} passes" if self.spec.rule == "count" else f">= {percent(self.spec.bar)}"

    @property
    def shown(self) -> str:
        """The estimate as the gates section shows it: the interval, in percent."""
        return "" if self.interval is None else stats.format_percent_interval(self.interval.low, self.interval.high)

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
            data.update(
                stop=self.spec.stop,
                not_executed=self.missing,
                decided_by="sequential" if self.sequential else self.spec.rule,
            )
        if self.rescheduled:
            data["rescheduled_by_crash"] = self.rescheduled
        return data


def percent(rate: float) -> str:
    """A bar as given, in percent: ``80%``, ``99.9%``; ``100%`` only for a bar of exactly 1."""
    text = f"{rate * 100:.6g}"
    return f"{'99.9999' if text == '100' and rate < 1 else text}%"


class ScoreGateResult(Value):
    """A case's mean score of one name against its bar: ``n`` scores, their mean and the interval the verdict
    was read off (its planned runs' betting interval; None without a score)."""

    spec: Final[ScoreGateSpec]
    n: Final[int]
    estimate: Final[float | None]
    interval: Final[Interval | None]
    verdict: Final[str]
    #: True when the sequential test, not the fixed-n interval, gave the verdict.
    sequential: Final[bool]
    #: The runs the interval's bets were tuned to (the case's planned runs under ``stop="sequential"``).
    planned: Final[int | None]

    __slots__ = FIELDS = ("spec", "n", "estimate", "interval", "verdict", "sequential", "planned")

    def __init__(
        self,
        spec: ScoreGateSpec,
        n: int,
        estimate: float | None,
        interval: Interval | None,
        verdict: str,
        sequential: bool = False,
        planned: int | None = None,
    ) -> None:
        self.spec = spec
        self.n = n
        self.estimate = estimate
        self.interval = interval
        self.verdict = verdict
        self.sequential = sequential
        self.planned = planned

    @property
    def measure(self) -> MeanScore:
        return self.spec.measure

    @property
    def bar(self) -> float:
        return self.spec.bar

    @property
    def bar_text(self) -> str:
        return self.spec.bar_text

    @property
    def shown(self) -> str:
        """The estimate as the gates section shows it: ``faithfulness 0.537 [0.353, 0.697]``."""
        if self.interval is None or self.estimate is None:
            return ""
        return f"{self.spec.name} {self.estimate:.3g} [{self.interval.low:.3g}, {self.interval.high:.3g}]"

    @property
    def text(self) -> str:
        """Its part of the verdict item's line."""
        name = self.spec.name
        if self.interval is None or self.estimate is None:
            return f"score {name!r}: none recorded: UNDECIDED"
        ci = self.interval
        return (
            f"score {name!r} mean {self.estimate:.3g} of {self.n}, {self.spec.confidence:g} {ci.method} interval "
            f"[{ci.low:.3g}, {ci.high:.3g}] vs bar {self.bar:g}: {self.verdict.upper()}"
        )

    def to_dict(self) -> dict[str, Any]:
        """The gate in the JSON report (``rows[].scores.<name>.gate``)."""
        data: dict[str, Any] = {
            "min_score": self.bar,
            "confidence": self.spec.confidence,
            "method": self.interval.method if self.interval is not None else "betting",
            "n": self.n,
            "mean": self.estimate,
            "low": self.interval.low if self.interval is not None else None,
            "high": self.interval.high if self.interval is not None else None,
            "verdict": self.verdict,
        }
        if self.spec.stop is not None:
            data.update(stop=self.spec.stop, decided_by="sequential" if self.sequential else "interval")
        return data


def evaluate_score_gate(spec: ScoreGateSpec, row: Row, missing: int = 0) -> ScoreGateResult:
    """A score gate's verdict on the case's row: PASS when the interval of the mean is at or above the bar, FAIL
    when it is below, else UNDECIDED (and UNDECIDED without a score). A sequential gate's bets are tuned to the
    case's planned runs, so that its verdict after the last run is the fixed-N interval's; its sequential test's
    decision stands. ``missing``: runs selected that never reported (cut short): never PASS then."""
    values = scores_named(row.records, spec.name)
    if not values:
        return ScoreGateResult(spec, 0, None, None, UNDECIDED)
    horizon = row.case.runs if spec.stops else None
    if horizon is not None and horizon < len(values):
        horizon = len(values)  # several scores of one name per run
    interval = spec.measure.interval(tuple(values), spec.confidence, planned=horizon)
    assert interval is not None
    verdict = PASSED if interval.low >= spec.bar else FAILED if interval.high < spec.bar else UNDECIDED
    sequential = False
    if spec.stops:
        decided = scores.sequential_score_verdict(values, spec.bar, spec.confidence, spec.low, spec.high, horizon)
        if decided is not None:
            verdict, sequential = decided, True
    if missing and verdict == PASSED:
        verdict = UNDECIDED  # a session cut short never passes a gate on the runs it happened to finish
    sample = tuple(values)
    return ScoreGateResult(spec, len(values), spec.measure.estimate(sample), interval, verdict, sequential, horizon)


def early_score_verdict(spec: ScoreGateSpec, records: Sequence[RunRecord], planned: int) -> str | None:
    """PASSED or FAILED once a sequential score gate's test has decided on the runs so far, else None."""
    if not spec.stops:
        return None
    values = scores_named(records, spec.name)
    if not values:
        return None
    return scores.sequential_score_verdict(
        values, spec.bar, spec.confidence, spec.low, spec.high, max(planned, len(values))
    )


class LatencyResult(Value):
    quantile: Final[float]
    total: Final[int]
    excluded: Final[int]
    estimate: Final[float | None]
    low: Final[float | None]
    high: Final[float | None]
    ranks: Final[tuple[int | None, int | None]]
    level: Final[float]
    max_latency: Final[float | None]
    verdict: Final[str | None]

    __slots__ = FIELDS = (
        "quantile",
        "total",
        "excluded",
        "estimate",
        "low",
        "high",
        "ranks",
        "level",
        "max_latency",
        "verdict",
    )

    def __init__(
        self,
        quantile: float,
        total: int,
        excluded: int,
        estimate: float | None,
        low: float | None,
        high: float | None,
        ranks: tuple[int | None, int | None],
        level: float,
        max_latency: float | None,
        verdict: str | None,
    ) -> None:
        self.quantile = quantile
        self.total = total
        self.excluded = excluded
        self.estimate = estimate
        self.low = low
        self.high = high
        self.ranks = ranks
        self.level = level
        self.max_latency = max_latency
        self.verdict = verdict

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


def cut_short_text(missing: int, reported: int) -> str:
    """How a verdict says that some of its runs never reported."""
    return f"runs cut short: {reported} of {reported + missing} reported"


def counts_as_pass(verdict: str | None, undecided: str) -> bool | None:
    """Whether a verdict lets the session pass: PASS and SKIPPED do, UNDECIDED as ``undecided`` says."""
    if verdict is None:
        return None
    return verdict in (PASSED, SKIPPED) or (verdict == UNDECIDED and undecided == PASSED)


def evaluate_gate(
    spec: GateSpec, passes: int, fails: int, errors: int, missing: int = 0, *, skipped: int = 0, cut_short: int = 0
) -> GateResult:
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


def evaluate_latency(
    records: Sequence[RunRecord], quantile: float, confidence: float, max_latency: float | None, cut_short: int = 0
) -> LatencyResult:
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
    return LatencyResult(
        quantile,
        len(durations),
        excluded,
        estimate.estimate,
        estimate.low,
        estimate.high,
        ranks,
        confidence,
        max_latency,
        verdict,
    )
