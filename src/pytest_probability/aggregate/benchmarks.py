"""Function-level and Overall estimates: each bench function's mean pass rate over its inputs.

Pure and pytest-free. From the session's rows, :func:`aggregates` builds one
:class:`InputsAggregate` per bench function (grouped and sorted by name:
same-named functions of different files are one), then one for the whole
session: the mean of the per-case pass fractions with its interval over
inputs, ICC(1), the runs-or-inputs projection, and pass^k / pass@k averaged
the same way. The maths is :mod:`pytest_probability.maths.inputs`; every
output (the terminal's lines, the JSON's ``aggregates[]``, ``--prob-explain``)
reads these objects.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..maths import inputs
from ..model.rows import Row
from ..value_classes import Record
from ..vocabulary import DECIDED

#: The interval's method as the JSON's ``ci.method`` names it: the percentile interval is "bootstrap" there.
JSON_METHODS = {inputs.WILSON: "wilson", inputs.PERCENTILE: "bootstrap", inputs.STUDENT_T: "t"}
FUNCTION, OVERALL = "function", "overall"


class InputsAggregate(Record):
    """One bench function's (``scope`` ``function``) or the session's (``overall``) estimate over inputs."""

    scope: str
    #: The function's short name (``classify``), or ``Overall``.
    name: str
    estimate: inputs.InputEstimate
    #: ``pass^3`` -> its estimate over the inputs with at least 3 runs.
    metrics: dict[str, inputs.MetricEstimate]
    #: The recorded cost of its runs: what doubling the runs or the inputs would add again.
    cost: float
    level: float
    resamples: int
    seed: int
    min_inputs: int
    #: Functions the Overall estimate spans (1 for a function).
    functions: int

    FIELDS = ("scope", "name", "estimate", "metrics", "cost", "level", "resamples", "seed", "min_inputs", "functions")

    def __init__(
        self,
        scope: str,
        name: str,
        estimate: inputs.InputEstimate,
        metrics: dict[str, inputs.MetricEstimate] | None = None,
        cost: float = 0.0,
        level: float = 0.95,
        resamples: int = inputs.RESAMPLES,
        seed: int = inputs.SEED,
        min_inputs: int = inputs.MIN_INPUTS,
        functions: int = 1,
    ) -> None:
        self.scope = scope
        self.name = name
        self.estimate = estimate
        self.metrics = {} if metrics is None else metrics
        self.cost = cost
        self.level = level
        self.resamples = resamples
        self.seed = seed
        self.min_inputs = min_inputs
        self.functions = functions

    def to_dict(self) -> dict[str, Any]:
        """The JSON's ``aggregates[]`` entry: its base keys (``scope`` to ``stopped``) first, in a fixed order,
        then ``runs_change``, ``inputs_change`` and ``cost``."""
        est = self.estimate
        return {
            "scope": self.scope,
            "name": self.name,
            "inputs": est.inputs,
            "runs": {"min": est.runs_min, "mean": est.runs_mean, "max": est.runs_max},
            "estimate": est.estimate,
            "ci": self._interval(est.method, est.ci),
            "normal_ci": self._interval("normal", est.check_ci),
            "resamples": self.resamples if est.method == inputs.PERCENTILE else None,
            "seed": self.seed if est.method == inputs.PERCENTILE else None,
            "resampling_unit": "input",
            "note": "inputs treated as a sample",
            "suppressed": est.suppressed,
            "icc": est.icc,
            "width_factor": est.width_factor,
            "metrics": {name: self._metric(metric) for name, metric in self.metrics.items()},
            "stopped": est.stopped,
            "runs_change": est.runs_change,
            "inputs_change": est.inputs_change,
            "cost": self.cost,
        }

    def _interval(self, method: str, bounds: tuple[float, float] | None) -> dict[str, Any] | None:
        if bounds is None:
            return None
        return {"method": JSON_METHODS.get(method, method), "level": self.level, "low": bounds[0], "high": bounds[1]}

    def _metric(self, metric: inputs.MetricEstimate) -> dict[str, Any]:
        return {
            "k": metric.k,
            "inputs": metric.inputs,
            "left_out": metric.left_out,
            "estimate": metric.estimate,
            "ci": self._interval(metric.method, metric.ci),
            "normal_ci": self._interval("normal", metric.normal_ci),
            "suppressed": metric.suppressed,
            "stopped": metric.stopped,
            "cases": metric.inputs,
        }

    @property
    def shown(self) -> bool:
        """Whether the terminal has a line for it: ``prob_min_inputs`` inputs, and, for Overall, more than
        one function. The JSON lists every aggregate."""
        return self.estimate.inputs >= self.min_inputs and (self.scope == FUNCTION or self.functions > 1)


def aggregates(
    rows: Sequence[Row],
    metrics: Sequence[tuple[str, int]] = (),
    *,
    level: float = 0.95,
    resamples: int = inputs.RESAMPLES,
    seed: int = inputs.SEED,
    min_inputs: int = inputs.MIN_INPUTS,
    interval: str = inputs.WILSON,
) -> list[InputsAggregate]:
    """One aggregate per bench function, sorted by name, then Overall; ``[]`` without a counted run.

    A case counts with every counted run (errors as non-passes, whatever ``prob_errors`` says); a case
    without one is left out. Cases enter in case-id order (what the bootstrap draws from)."""
    counted = [row for row in rows if row.counts.total > 0]
    if not counted:
        return []
    groups: dict[str, list[Row]] = {}
    for row in counted:
        groups.setdefault(row.case.benchmark, []).append(row)
    settings = {"level": level, "resamples": resamples, "seed": seed, "min_inputs": min_inputs, "interval": interval}
    made = [_aggregate(FUNCTION, name, groups[name], metrics, settings) for name in sorted(groups)]
    overall = _aggregate(OVERALL, "Overall", counted, metrics, settings)
    overall.functions = len(groups)
    return [*made, overall]


def _aggregate(
    scope: str, name: str, rows: Sequence[Row], metrics: Sequence[tuple[str, int]], settings: dict[str, Any]
) -> InputsAggregate:
    ordered = sorted(rows, key=lambda row: row.label)
    counts = [(row.counts.passes, row.counts.total) for row in ordered]
    stopped = [bool(row.counts.stopped) and any(r.stopped == DECIDED for r in row.records) for row in ordered]
    estimate = inputs.input_estimate(counts, stopped=stopped, **settings)
    shown = {f"{kind}{k}": inputs.metric_estimate(counts, kind, k, stopped=stopped, **settings) for kind, k in metrics}
    return InputsAggregate(
        scope,
        name,
        estimate,
        shown,
        sum(row.cost for row in ordered),
        settings["level"],
        settings["resamples"],
        settings["seed"],
        settings["min_inputs"],
    )
