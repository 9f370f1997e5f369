"""A JSON report's rows as they are read (:mod:`.reader`): each case's counts, interval, gates of every measure,
scores, state across nights, quarantine and source.

A row's :attr:`ReportRow.gates` are its gates of every measure, read alike: the
pass fraction's (``rows[].gate``) and each score's (``rows[].scores.NAME.gate``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


def _percent(value: float | None) -> str:
    """A bar as given, in percent: ``80%``, ``99.9%``; ``100%`` only for a bar of exactly 1."""
    if value is None:
        return "–"
    text = f"{value * 100:.6g}"
    return f"{'99.9999' if text == '100' and value < 1 else text}%"


@dataclass(frozen=True)
class ReportInterval:
    """An interval as a report writes it (``ci``): its bounds (either may be missing), method and level."""

    low: float | None = None
    high: float | None = None
    method: str | None = None
    level: float | None = None

    @property
    def bounds(self) -> tuple[float, float] | None:
        return (self.low, self.high) if self.low is not None and self.high is not None else None


@dataclass(frozen=True)
class ReportGate:
    """One gate of a case, of one measure, as every output shows it: the pass fraction's (``rows[].gate``)
    or a score's (``rows[].scores.NAME.gate``)."""

    #: ``pass``, ``score:faithfulness``.
    measure: str
    #: ``pass``, ``faithfulness``.
    name: str
    #: What it must reach: ``>= 90%``, ``>= 8 passes``, ``faithfulness >= 0.6``.
    bar_text: str
    bar: float | None
    n: int | None
    estimate: float | None
    low: float | None
    high: float | None
    verdict: str | None
    passes: int | None = None
    total: int | None = None

    @property
    def score(self) -> bool:
        return self.measure != "pass"


@dataclass(frozen=True)
class PassGate:
    """``rows[].gate``: the pass fraction's gate."""

    rule: str | None = None
    min_rate: float | None = None
    min_passes: int | None = None
    confidence: float | None = None
    passes: int | None = None
    total: int | None = None
    low: float | None = None
    high: float | None = None
    verdict: str | None = None

    def reading(self) -> ReportGate:
        bar = f">= {self.min_passes} passes" if self.rule == "count" else f">= {_percent(self.min_rate)}"
        rate = self.passes / self.total if self.passes is not None and self.total else None
        return ReportGate(
            "pass",
            "pass",
            bar,
            self.min_rate,
            self.total,
            rate,
            self.low,
            self.high,
            self.verdict,
            self.passes,
            self.total,
        )


@dataclass(frozen=True)
class ScoreGateRead:
    """``rows[].scores.NAME.gate``: a score's gate."""

    min_score: float | None = None
    confidence: float | None = None
    n: int | None = None
    mean: float | None = None
    low: float | None = None
    high: float | None = None
    verdict: str | None = None


@dataclass(frozen=True)
class ReportScore:
    """``rows[].scores.NAME``: one score of a case: its runs' scores summarized, its bar and gate."""

    n: int | None = None
    mean: float | None = None
    sd: float | None = None
    ci: ReportInterval | None = None
    threshold: float | None = None
    below: int | None = None
    min_score: float | None = None
    gate: ScoreGateRead | None = None


@dataclass(frozen=True)
class ReportRate:
    """A rate with its interval (``rows[].history.flake_rate``)."""

    fraction: float | None = None
    low: float | None = None
    high: float | None = None


@dataclass(frozen=True)
class ReportHistory:
    """``rows[].history``: the case's state across nights."""

    state: str | None = None
    since: str | None = None
    first_flaky: str | None = None
    changed: bool | None = None
    nights: int | None = None
    flake_rate: ReportRate | None = None


@dataclass(frozen=True)
class ReportQuarantine:
    """``rows[].quarantine``."""

    owner: str | None = None
    until: str | None = None
    failing: bool | None = None


@dataclass(frozen=True)
class ReportSource:
    """``rows[].source``: where the benchmark is defined."""

    path: str | None = None
    line: int | None = None


@dataclass(frozen=True)
class ReportStopped:
    """``rows[].stopped``."""

    reason: str | None = None


@dataclass
class ReportRow:
    """``rows[]``: one case (0.3.0's rows are named by ``case``, count by ``count`` and give ``pass_rate`` in
    percent: they are read as the newer ones)."""

    label: str = ""
    case: str | None = None
    nodeid: str | None = None
    benchmark: str | None = None
    case_id: str | None = None
    params: dict[str, Any] | None = None
    passes: int | None = None
    fails: int | None = None
    errors: int | None = None
    skipped: int | None = None
    total: int | None = None
    count: int | None = None
    runs: int | None = None
    pass_fraction: float | None = None
    pass_rate: float | None = None
    status: str | None = None
    cost: float | None = None
    ci: ReportInterval | None = None
    gate: PassGate | None = None
    verdict: str | None = None
    scores: dict[str, ReportScore] = field(default_factory=dict)
    stopped: ReportStopped | None = None
    history: ReportHistory | None = None
    quarantine: ReportQuarantine | None = None
    source: ReportSource | None = None

    def __post_init__(self) -> None:
        self.label = self.label or self.case or ""
        if self.total is None:
            self.total = self.count
        if self.total is None and self.passes is not None and self.fails is not None:
            self.total = self.passes + self.fails + (self.errors or 0)
        if self.pass_fraction is None and self.pass_rate is not None:
            self.pass_fraction = self.pass_rate / 100.0

    @property
    def key(self) -> str:
        """The case's key: its node id, or its label (0.3.0's rows have no node id)."""
        return self.nodeid or self.label

    @property
    def gates(self) -> list[ReportGate]:
        """The case's gates of every measure: the pass fraction's, then each score's."""
        found = [self.gate.reading()] if self.gate is not None else []
        for name, score in self.scores.items():
            gate = score.gate
            if gate is not None:
                bar = gate.min_score if gate.min_score is not None else score.min_score
                found.append(
                    ReportGate(
                        f"score:{name}",
                        name,
                        f"{name} >= {bar:g}" if bar is not None else name,
                        bar,
                        gate.n,
                        gate.mean,
                        gate.low,
                        gate.high,
                        gate.verdict,
                    )
                )
        return found
