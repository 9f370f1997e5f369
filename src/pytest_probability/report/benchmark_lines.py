"""The function-level and Overall lines, and the pass^k / pass@k block.

Read from the analysis' :class:`~pytest_probability.aggregate.benchmarks.InputsAggregate`
objects: the same numbers the JSON's ``aggregates[]`` holds::

      classify  N=12 inputs × k=10    75.0%  [50.0%, 100.0%]  ρ=1.00
                runs ×2 → interval ±0%  ·  inputs ×2 → −29%  ·  each +$0.1200
      Overall   N=23 inputs × k=9–10  72.6%  [58.3%,  85.2%]  ρ=0.48
"""

from __future__ import annotations

from collections.abc import Sequence

from ..aggregate.benchmarks import OVERALL, InputsAggregate
from ..maths.inputs import format_change
from ..model.outputs import Line
from ..text import label_text


def percent(value: float) -> str:
    """One decimal and ``%``; ``0.0%`` and ``100.0%`` only for exactly 0 and 1 (a rounded 0 or 1 would claim
    what was not seen)."""
    text = f"{value * 100:.1f}"
    if text == "100.0" and value < 1:
        text = "99.9"
    elif text == "0.0" and value > 0:
        text = "0.1"
    return f"{text}%"


def _runs(aggregate: InputsAggregate) -> str:
    est = aggregate.estimate
    return f"k={est.runs_min}" if est.runs_min == est.runs_max else f"k={est.runs_min}\u2013{est.runs_max}"


def _size(aggregate: InputsAggregate) -> str:
    inputs = aggregate.estimate.inputs
    return f"N={inputs} input{'s' if inputs != 1 else ''} \u00d7 {_runs(aggregate)}"


def aggregate_lines(aggregates: Sequence[InputsAggregate]) -> list[Line]:
    """A line per function with at least ``prob_min_inputs`` cases, Overall last when it spans more
    than one function, each with its projection line when ρ is defined."""
    shown = [a for a in aggregates if a.shown]
    if not shown:
        return []
    names = [label_text(a.name) for a in shown]
    sizes = [_size(a) for a in shown]
    estimates = [percent(a.estimate.estimate) for a in shown]
    lows = [percent(a.estimate.ci[0]) if a.estimate.ci else "" for a in shown]
    highs = [percent(a.estimate.ci[1]) if a.estimate.ci else "" for a in shown]
    name_width, size_width = max(map(len, names)), max(map(len, sizes))
    estimate_width, low_width, high_width = max(map(len, estimates)), max(map(len, lows)), max(map(len, highs))
    lines: list[Line] = [("", {})]
    for aggregate, name, size, estimate, low, high in zip(shown, names, sizes, estimates, lows, highs, strict=False):
        est = aggregate.estimate
        bold = {"bold": aggregate.scope == OVERALL}
        head = f"  {name.ljust(name_width)}  {size.ljust(size_width)}"
        if est.ci is None:
            lines.append((f"{head}  interval hidden: {est.suppressed}", bold))
            continue
        text = f"{head}  {estimate.rjust(estimate_width)}  [{low.rjust(low_width)}, {high.rjust(high_width)}]"
        if est.icc is not None:
            text += f"  \u03c1={est.icc:.2f}"
        lines.append((text, bold))
        if est.runs_change is not None and est.inputs_change is not None:
            more = (
                f"runs \u00d72 \u2192 interval {format_change(est.runs_change)}  \u00b7  "
                f"inputs \u00d72 \u2192 {format_change(est.inputs_change)}"
            )
            if aggregate.cost:
                more += f"  \u00b7  each +${aggregate.cost:.4f}"
            lines.append((" " * (name_width + 4) + more, {}))
    return lines


def metric_lines(aggregates: Sequence[InputsAggregate]) -> list[Line]:
    """The ``pass^k`` / ``pass@k`` block: per function and Overall, the mean over the inputs with at
    least k runs, with the interval from ``prob_min_inputs`` inputs; a glossary after."""
    listed = [a for a in aggregates if a.metrics and (a.scope != OVERALL or a.functions > 1)]
    if not listed:
        return []
    rows: list[tuple[str, str, str, str, str, str, bool]] = []
    for aggregate in listed:
        for index, (metric, value) in enumerate(aggregate.metrics.items()):
            size = f"N={value.inputs} input{'s' if value.inputs != 1 else ''}"
            estimate = "-" if value.estimate is None else percent(value.estimate)
            low = percent(value.ci[0]) if value.ci else ""
            high = percent(value.ci[1]) if value.ci else ""
            note = f"{value.left_out} left out (fewer than {value.k} runs)" if value.left_out else ""
            rows.append(
                (
                    label_text(aggregate.name) if index == 0 else "",
                    metric,
                    size,
                    estimate,
                    f"[{low.rjust(6)}, {high.rjust(6)}]" if value.ci else "",
                    note,
                    aggregate.scope == OVERALL,
                )
            )
    widths = [max(len(text) for text in column) for column in zip(*(row[:5] for row in rows), strict=True)]
    lines: list[Line] = [("", {}), ("  Metrics (pass^k, pass@k over inputs):", {"bold": True})]
    for name, metric, size, estimate, interval, note, overall in rows:
        parts = [name.ljust(widths[0]), metric.ljust(widths[1]), size.ljust(widths[2]), estimate.rjust(widths[3])]
        if widths[4]:
            parts.append(interval.ljust(widths[4]))
        if note:
            parts.append(note)
        lines.append(("    " + "  ".join(parts).rstrip(), {"bold": overall}))
    kinds = {metric[:5] for a in listed for metric in a.metrics}
    if "pass^" in kinds:
        lines.append(("    pass^k: the chance that k runs of an input all pass (reliability)", {}))
    if "pass@" in kinds:
        lines.append(("    pass@k: the chance that at least one of k runs of an input passes (capability)", {}))
    return lines
