"""How intervals, gates, latency and pass^k/pass@k reach every output: the statistics' facet.

:class:`StatsFacet` gives a table column for the interval and one for
latency, the function-level lines (``report/benchmark_lines.py``), the gates and
metrics sections, JSON row fields and sections, and the gate gauges. All of them read the same
:class:`~pytest_probability.decide.analysis.Analysis`.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ..decide.analysis import Analysis, RowAnalysis
from ..decide.gates import cut_short_text
from ..maths import stats
from ..model.outputs import Interval, Line, Series, case_attributes
from ..model.rows import Row
from ..protocols import Facet
from ..text import label_text
from ..vocabulary import FAILED, PASSED, SKIPPED, UNDECIDED, VERDICT_VALUES
from .benchmark_lines import aggregate_lines, metric_lines
from .terminal import fraction

if TYPE_CHECKING:
    from ..config.settings import StatsConfig
    from ..decide.results import Results

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
        bar = ""
        shown = []
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
            spec = result.gate.spec
            bar = f">= {spec.min_passes} passes" if spec.rule == "count" else f">= {bar_percent(spec.bar)}"
            interval = result.gate.interval
            if interval is not None:
                shown.append(stats.format_percent_interval(interval.low, interval.high))
        if result.latency is not None and result.latency.max_latency is not None:
            lat = f"p{result.latency.quantile * 100:g} <= {duration(result.latency.max_latency)}"
            bar = f"{bar}, {lat}" if bar else lat
            if latency_cell(result):
                shown.append(latency_cell(result))
        for judgement in result.judgements:  # a feature's (a score's bar)
            bar = f"{bar}, {judgement.bar}" if bar and judgement.bar else bar or judgement.bar
            if judgement.shown:
                shown.append(judgement.shown)
        verdict = result.verdict or UNDECIDED
        word = _VERDICT_WORDS.get(verdict, verdict.upper())
        if notes:
            word += f" ({'; '.join(notes)})"
        cells.append(([label_text(result.row.label), frac, ", ".join(shown), bar], word, _VERDICT_MARKUP[verdict]))
    widths = [max(len(c[0][i]) for c in cells) for i in range(4)]
    for (label, frac, shown, bar), word, markup in cells:
        parts = [label.ljust(widths[0]), frac.rjust(widths[1])]
        if widths[2]:  # no column of blanks when no gated case has an interval
            parts.append(shown.ljust(widths[2]))
        parts += [bar.ljust(widths[3]), word]
        lines.append(("    " + "  ".join(parts), markup))
    return lines


def bar_percent(rate: float) -> str:
    """A bar as given, in percent: ``80%``, ``99.9%``; ``100%`` only for a bar of exactly 1."""
    text = f"{rate * 100:.6g}"
    return f"{'99.9999' if text == '100' and rate < 1 else text}%"


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
    """Gauges per case: interval bounds, bar and verdict."""
    lower = Series("probability.case.interval.lower", "gauge", "1", "Lower bound of the case's pass fraction interval")
    upper = Series("probability.case.interval.upper", "gauge", "1", "Upper bound of the case's pass fraction interval")
    bar = Series("probability.case.min_rate", "gauge", "1", "The gated case's bar (min_rate, or min_passes/runs)")
    # Unit "" (not "1"): -1/0/1 is not a ratio, and Prometheus would append _ratio.
    verdict = Series("probability.case.gate.verdict", "gauge", "", "Gate verdict: 1 pass, 0 undecided, -1 fail")
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
    return [lower, upper, bar, verdict]


class StatsFacet(Facet):
    """The statistics in every output, read from the session's analysis."""

    def __init__(self, results: Results, config: StatsConfig) -> None:
        self.results = results
        self.config = config

    def cells(self, row: Row) -> Sequence[str]:
        result = self.results.analysis().by_key.get(row.case.key)
        if self.config.intervals:
            return (interval_cell(result), latency_cell(result))
        return (latency_cell(result),)

    def lines(self) -> Sequence[Line]:
        analysis = self.results.analysis()
        shown = aggregate_lines(analysis.aggregates) if self.config.intervals else []
        return shown + gates_section(analysis) + metric_lines(analysis.aggregates)

    def row_fields(self, row: Row) -> Mapping[str, Any]:
        return json_row(self.results.analysis(), row)

    def report_fields(self) -> Mapping[str, Any]:
        analysis = self.results.analysis()
        return {
            "stats_config": self.config.to_dict(),
            "gates": analysis.gate_totals(),
            "aggregates": [a.to_dict() for a in analysis.aggregates],
        }

    def series(self) -> list[Series]:
        return gate_series(self.results.analysis())
