"""Planning before anything runs: the runs each gated, baselined or compared case needs.

``--prob-plan`` prints :func:`plan_lines` and runs nothing.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..config.compare import CompareConfig
from ..config.settings import StatsConfig
from ..config.spec import case_spec
from ..maths import stats, twostats
from ..model.case import CaseRef
from .pairs import is_baselined

if TYPE_CHECKING:
    from .baseline import Baseline


def plan_lines(items: list[Any], config: CompareConfig, baseline: Baseline | None, stats_config: StatsConfig) -> list[str]:
    """What ``--prob-plan`` prints: runs each gated, baselined or compared case needs."""
    alpha = 1.0 - stats_config.confidence
    cases = _cases(items)
    baselined = [key for key, case in cases.items() if baseline is not None and is_baselined(baseline, key, case.label, dict(case.params))]
    family = max(1, len(baselined))
    tail = alpha / 2.0 / (family if config.adjust != "none" else 1)
    lines = [
        f"Plan (--prob-plan, nothing runs): power {config.plan_power:g}, one-sided level {alpha / 2:g}"
        + (f" / {family} cases ({config.adjust})" if family > 1 and config.adjust != "none" else ""),
    ]
    for key, case in cases.items():
        marks = dict(case.marks)
        parts = []
        try:
            spec = case_spec(marks, case.runs, stats_config)
        except ValueError:
            spec = None
        if spec is not None and spec.gate is not None and spec.gate.rule == "rate":
            needed = stats.runs_needed(spec.gate.bar, spec.gate.confidence, spec.gate.method, spec.gate.prior)
            parts.append(f"gate >= {spec.gate.bar:g}: an always-passing case needs {needed if needed else 'more than 100000'} runs")
        if key in baselined and baseline is not None:
            base = baseline.find(case.key, case.label)
            if base is not None and base.total:
                rate = base.passes / base.total
                drop = marks.get("margin", config.margin) or config.plan_drop
                factor = base.total / case.runs
                needed = twostats.runs_to_detect(rate, drop, factor, tail, config.plan_power)
                parts.append(
                    f"baseline {base.passes}/{base.total} ({rate:.0%}): detecting a drop of {drop * 100:g} points needs "
                    f"{needed if needed else 'no number of'} runs"
                )
        axis = marks.get("compare") or (config.compare_axis if config.compare_axis in dict(case.params) else None)
        if axis is not None:
            drop = marks.get("margin", config.margin) or config.plan_drop
            needed = twostats.runs_to_detect(0.9, drop, 1.0, alpha / 2.0, config.plan_power)
            parts.append(f"A/B on {axis}: a {drop * 100:g}-point drop from 90% needs {needed} runs per arm and input")
        if parts:
            lines.append(f"  {case.label} ({case.runs} runs): " + "; ".join(parts))
    if len(lines) == 1:
        lines.append("  no gated, baselined or compared case")
    return lines


def _cases(items: list[Any]) -> dict[str, CaseRef]:
    """The cases of the session's runs, by key, in collection order."""
    cases: dict[str, CaseRef] = {}
    for item in items:
        case = getattr(item, "prob_case", None)
        if case is not None:
            cases.setdefault(case.key, case)
    return cases
