"""How every measure's statistics reach every output: intervals, gates, latency, pass^k/pass@k and scores.

:class:`StatisticsFacet` gives a table column for the interval, one for
latency and one for a session's one score name, the function-level lines
(``report/benchmark_lines.py``), the gates section (every gate of every
measure), the metrics and scores sections, JSON row fields and sections, and
the gate and score gauges. All of them read the same
:class:`~pytest_probability.decide.analysis.Analysis` and the same scores
(:mod:`.scored`).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ..config.spec import ScoreRules
from ..decide.analysis import Analysis, RowAnalysis
from ..decide.gates import cut_short_text
from ..maths import stats
from ..maths.interval import Interval
from ..model.outputs import Line, Series, case_attributes
from ..model.rows import Row
from ..protocols import Facet
from ..text import label_text
from ..vocabulary import FAILED, PASSED, SKIPPED, UNDECIDED, VERDICT_VALUES
from .benchmark_lines import aggregate_lines, metric_lines
from .scored import Scored, score_cell, score_lines, score_series
from .terminal import fraction

if TYPE_CHECKING:
    from ..config.settings import StatsConfig
    from ..decide.results import Results
    from ..model.case import CaseRef

_VERDICT_MARKUP = {
    PASSED: {"green": True},
    FAILED: {"red": True},
    UNDECIDED: {"yellow": True},
    SKIPPED: {"yellow": True},
}
_VERDICT_WORDS = {SKIPPED: "SKIPPED"}


def duration(seconds: float | None) -> str:
    """``850ms``, ``1.23s``, ``95s``; ``∞`` for no bound."""
    if seconds is None:
        return "∞"
    if seconds < 0.001:
        return f"{seconds * 1e6:.0f}µs"
    if seconds < 0.01:
        return f"{seconds * 1000:.1f}ms"
    if seconds < 1:
        return f"{seconds * 1000:.0f}ms"
    if seconds < 60:
        return f"{seconds:.2f}s"
    return f"{seconds:.0f}s"


def interval_cell(result: RowAnalysis | None) -> str:
    if result is None or result.interval is None or result.row.counts.total <= 1:
        return ""
    return _interval_text(result.interval)


@functools.lru_cache(maxsize=4096)
def _interval_text(interval: Interval) -> str:
    """An interval's cell, once per distinct interval: rows mostly share theirs (``analysis._interval``),
    and the table reads each row's cell twice (widths, then lines)."""
    return stats.format_percent_interval(interval.low, interval.high)


def latency_cell(result: RowAnalysis | None) -> str:
    if result is None or result.latency is None or result.latency.estimate is None:
        return ""
    lat = result.latency
    low = "-" if lat.low is None else duration(lat.low)
    return f"p{lat.quantile * 100:g} {duration(lat.estimate)} [{low}, {duration(lat.high)}]"


def gates_section(analysis: Analysis) -> list[Line]:
    gated = analysis.gated
    if not gated:
        return []
    totals = analysis.gate_totals()
    lines: list[Line] = [("", {})]
    summary = f"  Gates:   {totals['passed']} passed, {totals['failed']} failed, {totals['undecided']} undecided"
    if totals["skipped"]:
        summary += f", {totals['skipped']} skipped"
    if totals["undecided"]:
        summary += f" (undecided counts as {analysis.config.undecided})"
    lines.append((summary, {"bold": True}))
    cells = []
    for result in gated:
        shown = []
        bars = []
        notes = []
        # The gate's own fraction: under prob_errors=exclude it leaves errored runs out, like its interval.
        frac = fraction(result.row) if result.gate is None else f"{result.gate.passes}/{result.gate.total}"
        if result.gate is not None and result.gate.excluded:
            notes.append(f"{result.gate.excluded} errored left out")
        if result.missing:
            notes.append(cut_short_text(result.missing, len(result.row.records)))
        if result.rescheduled:
            notes.append(f"a worker crash rescheduled {result.rescheduled} run(s) past its gate item")
        if result.gate is not None:
            bars.append(result.gate.bar_text)
            if result.gate.shown:
                shown.append(result.gate.shown)
        if result.latency is not None and result.latency.max_latency is not None:
            bars.append(f"p{result.latency.quantile * 100:g} <= {duration(result.latency.max_latency)}")
            if latency_cell(result):
                shown.append(latency_cell(result))
        for gate in result.scores:
            bars.append(gate.bar_text)
            if gate.shown:
                shown.append(gate.shown)
        bar = ", ".join(bars)
        verdict = result.verdict or UNDECIDED
        word = _VERDICT_WORDS.get(verdict, verdict.upper())
        if notes:
            word += f" ({'; '.join(notes)})"
        cells.append(([label_text(result.row.label), frac, ", ".join(shown), bar], word, _VERDICT_MARKUP[verdict]))
    widths = [max(len(c[0][i]) for c in cells) for i in range(4)]
    for (label, frac, interval, bar), word, markup in cells:
        parts = [label.ljust(widths[0]), frac.rjust(widths[1])]
        if widths[2]:  # no column of blanks when no gated case has an interval
            parts.append(interval.ljust(widths[2]))
        parts += [bar.ljust(widths[3]), word]
        lines.append(("    " + "  ".join(parts), markup))
    return lines


def json_row(analysis: Analysis, row: Row) -> dict[str, Any]:
    result = analysis.by_key.get(row.case.key)
    if result is None:
        return {}
    return {
        "ci": result.interval.to_dict() if result.interval else None,
        "gate": result.gate.to_dict(row.case.runs) if result.gate else None,
        "latency": result.latency.to_dict() if result.latency else None,
        "metrics": result.metrics,
        "verdict": result.verdict,
        "runs_missing": result.missing,
    }


def gate_series(analysis: Analysis) -> list[Series]:
    """Gauges per case: interval bounds, bar and verdict; per score gate, its bar and verdict."""
    lower = Series("probability.case.interval.lower", "gauge", "1", "Lower bound of the case's pass fraction interval")
    upper = Series("probability.case.interval.upper", "gauge", "1", "Upper bound of the case's pass fraction interval")
    bar = Series("probability.case.min_rate", "gauge", "1", "The gated case's bar (min_rate, or min_passes/runs)")
    # Unit "" (not "1"): -1/0/1 is not a ratio, and Prometheus would append _ratio.
    verdict = Series("probability.case.gate.verdict", "gauge", "", "Gate verdict: 1 pass, 0 undecided, -1 fail")
    score_bar = Series("probability.case.score.min_score", "gauge", "1", "The case's bar on a mean score (min_score)")
    score_verdict = Series(
        "probability.case.score.gate.verdict", "gauge", "", "Score gate verdict: 1 pass, 0 undecided, -1 fail"
    )
    for result in analysis.rows:
        case = result.row.case
        attributes = case_attributes(case)
        # A gated case's bounds are its gate's (own confidence/method), so that an alert
        # on "upper bound below bar" agrees with the verdict.
        interval = result.gate.interval if result.gate is not None and result.gate.interval else result.interval
        if interval is not None:
            lower.points.append((attributes, interval.low))
            upper.points.append((attributes, interval.high))
        if result.gate is not None:
            bar.points.append((attributes, result.gate.spec.bar))
        if result.verdict in VERDICT_VALUES:  # a skipped gate decided nothing: no value
            verdict.points.append((attributes, VERDICT_VALUES[result.verdict]))
        for gate in result.scores:
            named = {**attributes, "probability.score.name": gate.spec.name}
            score_bar.points.append((named, gate.bar))
            if gate.verdict in VERDICT_VALUES:
                score_verdict.points.append((named, VERDICT_VALUES[gate.verdict]))
    found = [lower, upper, bar, verdict]
    return found + ([score_bar, score_verdict] if score_bar.points else [])


class StatisticsFacet(Facet):
    """The statistics of every measure in every output, read from the session's analysis and its scores."""

    def __init__(self, results: Results, config: StatsConfig, rules: Callable[[CaseRef], ScoreRules]) -> None:
        """``rules``: a case's score rules (its range: ``config.spec.Specs``)."""
        self.results = results
        self.config = config
        self.rules = rules
        self._scored: tuple[object, Scored] | None = None

    def scored(self) -> Scored:
        """The session's scores, once per summary."""
        summary = self.results.summary()
        if self._scored is None or self._scored[0] is not summary:
            self._scored = (summary, Scored(summary, self.config, self.rules))
        return self._scored[1]

    def cells(self, row: Row) -> Sequence[str]:
        result = self.results.analysis().by_key.get(row.case.key)
        score = score_cell(self.scored(), row)
        if self.config.intervals:
            return (interval_cell(result), latency_cell(result), score)
        return (latency_cell(result), score)

    def lines(self) -> Sequence[Line]:
        analysis = self.results.analysis()
        shown = aggregate_lines(analysis.aggregates) if self.config.intervals else []
        scores = score_lines(self.scored(), self.results.summary().rows, self.config.confidence)
        return shown + gates_section(analysis) + metric_lines(analysis.aggregates) + scores

    def row_fields(self, row: Row) -> Mapping[str, Any]:
        analysis = self.results.analysis()
        fields = json_row(analysis, row)
        found = self.scored().cases.get(row.case.key)
        scores: dict[str, Any] = found.to_dict() if found is not None else {}
        result = analysis.by_key.get(row.case.key)
        for gate in result.scores if result is not None else ():
            scores.setdefault(gate.spec.name, {"n": 0, "mean": None, "sd": None, "ci": None})
            scores[gate.spec.name]["gate"] = gate.to_dict()
        fields["scores"] = scores
        return fields

    def report_fields(self) -> Mapping[str, Any]:
        analysis = self.results.analysis()
        return {
            "stats_config": self.config.to_dict(),
            "gates": analysis.gate_totals(),
            "aggregates": [a.to_dict() for a in analysis.aggregates],
            "score_aggregates": self.scored().aggregates,
        }

    def series(self) -> list[Series]:
        return gate_series(self.results.analysis()) + score_series(self.scored(), self.results.summary().rows)
