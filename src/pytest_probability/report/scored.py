"""The scores' part of the statistics in every output: each case's mean score with its interval, each benchmark's
over its inputs.

:class:`Scored` reads the session's rows once per summary: for each case and
score name, n, the mean, the standard deviation and the interval of the mean
(``maths.scores.summarize``, at the session's confidence, on the case's
range); for each benchmark (and Overall, across benchmarks) and score name,
the mean over its inputs with the cluster bootstrap
(``maths.scores.input_estimate``). The statistics' facet
(:mod:`.statistics`) shows them: a table column (one score name in the
session) or a ``Scores`` block (several), the JSON's ``rows[].scores`` and
``score_aggregates``, the score gauges and the histogram of run scores (its
buckets the tenths of the cases' score ranges, its exemplars the runs of each
point's lowest scores). A session that records no score gets no column, no
block, no series, and empty fields.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from ..config.spec import ScoreRules
from ..maths import scores as maths
from ..maths.inputs import InputEstimate
from ..model.outputs import EXEMPLARS, Line, Series, case_attributes
from ..model.run import scores_named
from ..text import label_text
from ..value_classes import Record

if TYPE_CHECKING:
    from ..config.settings import StatsConfig
    from ..model.case import CaseRef
    from ..model.rows import Row, Summary

OVERALL = "Overall"


class CaseScores(Record):
    """One case's scores by name: the summary, the threshold its runs gave (when one), and runs below it."""

    rules: ScoreRules
    by_name: dict[str, maths.ScoreSummary]
    thresholds: dict[str, float]
    below: dict[str, int]
    bars: dict[str, float]

    FIELDS = ("rules", "by_name", "thresholds", "below", "bars")

    def __init__(
        self,
        rules: ScoreRules,
        by_name: dict[str, maths.ScoreSummary] | None = None,
        thresholds: dict[str, float] | None = None,
        below: dict[str, int] | None = None,
        bars: dict[str, float] | None = None,
    ) -> None:
        self.rules = rules
        self.by_name = {} if by_name is None else by_name
        self.thresholds = {} if thresholds is None else thresholds
        self.below = {} if below is None else below
        self.bars = {} if bars is None else bars

    def to_dict(self) -> dict[str, Any]:
        out = {}
        for name, summary in self.by_name.items():
            data = summary.to_dict()
            if name in self.thresholds:
                data["threshold"] = self.thresholds[name]
                data["below"] = self.below.get(name, 0)
            if name in self.bars:
                data["min_score"] = self.bars[name]
            out[name] = data
        for name, bar in self.bars.items():  # a bar whose score no run recorded
            out.setdefault(name, {"n": 0, "mean": None, "sd": None, "ci": None, "min_score": bar})
        return out


class Scored:
    """The session's scores, computed once per summary."""

    def __init__(self, summary: Summary, config: StatsConfig, rules: Callable[[CaseRef], ScoreRules]) -> None:
        self.config = config
        self.cases: dict[str, CaseScores] = {}
        self.names: list[str] = []
        seen: dict[str, None] = {}
        for row in summary.rows:
            found = self._case(row, rules(row.case))
            if found is not None:
                self.cases[row.case.key] = found
                seen.update(dict.fromkeys(found.by_name))
        self.names = list(seen)
        self.aggregates = self._aggregates(summary) if self.names else []

    def _case(self, row: Row, rules: ScoreRules) -> CaseScores | None:
        names = list(dict.fromkeys(score.name for record in row.records for score in record.scores))
        if not names and not rules.bars:
            return None
        found = CaseScores(rules, bars=dict(rules.bars))
        for name in names:
            values = scores_named(row.records, name)
            found.by_name[name] = maths.summarize(values, self.config.confidence, rules.low, rules.high)
            thresholds = {
                score.threshold
                for record in row.records
                for score in record.scores
                if score.name == name and score.threshold is not None
            }
            if len(thresholds) == 1:
                (threshold,) = thresholds
                found.thresholds[name] = threshold
                found.below[name] = sum(1 for value in values if value < threshold)
        return found

    def _aggregates(self, summary: Summary) -> list[dict[str, Any]]:
        """Each benchmark's (then, across benchmarks, Overall's) mean score over its inputs, per score name."""
        config = self.config
        groups: dict[str, list[Row]] = {}
        for row in summary.rows:
            groups.setdefault(row.case.benchmark, []).append(row)
        out = []
        scopes = list(groups.items()) + ([(OVERALL, list(summary.rows))] if len(groups) > 1 else [])
        for scope, rows in scopes:
            for name in self.names:
                scored = [(row, scores_named(row.records, name)) for row in rows if row.case.key in self.cases]
                scored = [(row, values) for row, values in scored if values]
                ranges = {
                    (self.cases[row.case.key].rules.low, self.cases[row.case.key].rules.high) for row, _ in scored
                }
                if len(ranges) != 1:
                    continue  # no score of this name here, or scores on different ranges: no mean of them
                ((low, high),) = ranges
                values = [values for _, values in scored]
                estimate = maths.input_estimate(
                    values,
                    config.confidence,
                    low,
                    high,
                    resamples=config.resamples,
                    seed=config.seed,
                    min_inputs=config.min_inputs,
                )
                out.append(
                    {
                        "scope": "overall" if scope == OVERALL else "function",
                        "name": scope,
                        "score": name,
                        **_estimate_dict(estimate, config.confidence),
                    }
                )
        return out


def _estimate_dict(estimate: InputEstimate, level: float) -> dict[str, Any]:
    ci = estimate.ci
    return {
        "inputs": estimate.inputs,
        "mean": estimate.estimate,
        "ci": None if ci is None else {"low": ci[0], "high": ci[1], "method": estimate.method, "level": level},
        "icc": estimate.icc,
        "runs_change": estimate.runs_change,
        "inputs_change": estimate.inputs_change,
        "suppressed": estimate.suppressed,
        "method": estimate.method,
    }


def score_text(summary: maths.ScoreSummary) -> str:
    """``0.82 [0.74, 0.88]``; the mean alone with one score."""
    if summary.mean is None:
        return ""
    if summary.ci is None or summary.n < 2:
        return f"{summary.mean:.3g}"
    return f"{summary.mean:.3g} [{summary.ci.low:.3g}, {summary.ci.high:.3g}]"


def score_cell(scored: Scored, row: Row) -> str:
    """The table's score column: ``faithfulness 0.82 [0.74, 0.88]`` when the session has one score name, else ""
    (several: the ``Scores`` block)."""
    if len(scored.names) != 1:
        return ""
    found = scored.cases.get(row.case.key)
    summary = found.by_name.get(scored.names[0]) if found is not None else None
    if summary is None:
        return ""
    return f"{scored.names[0]} {score_text(summary)}"


def score_lines(scored: Scored, rows: Sequence[Row], confidence: float) -> list[Line]:
    """The ``Scores`` block (several score names in the session) and the ``Scores over inputs`` lines."""
    lines: list[Line] = []
    if len(scored.names) > 1:
        shown: list[tuple[str, str, str]] = []
        labels = {row.case.key: label_text(row.label) for row in rows}
        for key, found in scored.cases.items():
            for name, summary in found.by_name.items():
                shown.append((labels.get(key, key), name, f"{score_text(summary)}  n={summary.n}"))
        if shown:
            widths = [max(len(r[i]) for r in shown) for i in range(2)]
            lines += [("", {}), (f"  Scores: mean [{confidence:.0%} interval]", {"bold": True})]
            lines += [
                (f"    {label.ljust(widths[0])}  {name.ljust(widths[1])}  {text}", {}) for label, name, text in shown
            ]
    aggregates = [a for a in scored.aggregates if a["ci"] is not None]  # as the fractions': shown with enough inputs
    if aggregates and len(scored.cases) > 1:
        lines += [("", {}), ("  Scores over inputs:", {"bold": True})]
        for aggregate in aggregates:
            head = f"    {label_text(aggregate['name'])}  {aggregate['score']}  {aggregate['inputs']} inputs"
            ci = aggregate["ci"]
            text = f"{head}  {aggregate['mean']:.3g} [{ci['low']:.3g}, {ci['high']:.3g}]"
            if aggregate["icc"] is not None:
                text += f"  \u03c1={aggregate['icc']:.2f}"
            lines.append((text, {"bold": aggregate["scope"] == "overall"}))
    return lines


def score_series(scored: Scored, rows: Sequence[Row]) -> list[Series]:
    """Per case and score name: the mean and its interval's bounds, and the histogram of the runs' scores."""
    if not scored.names:
        return []
    mean = Series("probability.case.score.mean", "gauge", "1", "The case's mean score, per score name")
    lower = Series("probability.case.score.lower", "gauge", "1", "Lower bound of the mean score's interval")
    upper = Series("probability.case.score.upper", "gauge", "1", "Upper bound of the mean score's interval")
    ranges = {(found.rules.low, found.rules.high) for found in scored.cases.values() if found.by_name}
    runs = Series(
        "probability.run.score",
        "histogram",
        "1",
        "Scores of runs, per case and score name",
        buckets=tuple(sorted({round(low + (high - low) * k / 10, 12) for low, high in ranges for k in range(11)})),
    )
    by_key = {row.case.key: row for row in rows}
    for key, found in scored.cases.items():
        row = by_key[key]
        for name, summary in found.by_name.items():
            attributes = {**case_attributes(row.case), "probability.score.name": name}
            if summary.mean is not None:
                mean.points.append((attributes, summary.mean))
            if summary.ci is not None:
                lower.points.append((attributes, summary.ci.low))
                upper.points.append((attributes, summary.ci.high))
            values = [
                (score.value, record)
                for record in sorted(row.records, key=lambda r: r.run)
                for score in record.scores
                if score.name == name
            ]
            lowest = sorted((pair for pair in values if pair[1].span_id), key=lambda pair: (pair[0], -pair[1].run))[
                :EXEMPLARS
            ]
            if lowest:  # the runs of the lowest scores (the latest first among equal ones)
                runs.exemplars[len(runs.points)] = [record for _, record in lowest]
                runs.exemplar_values[len(runs.points)] = [value for value, _ in lowest]
            runs.points.append((attributes, [value for value, _ in values]))
    return [mean, lower, upper, runs]
