"""Planning before anything runs: ``--prob-plan``'s run budget, and what comparisons need.

``--prob-plan`` prints :func:`plan_lines` and runs nothing:

* **the run budget**, one row per selected case: its runs, the fewest
  runs its gate can pass with, the runs for an 80% chance to pass and the
  chance now if the case passes ``--prob-plan-assume`` of its runs, the
  chance to see a failure at each ``--prob-plan-flake`` rate, and the cost
  projected from ``--prob-plan-report`` (the maths: ``maths.run_budget``);
* **baselined cases**: the runs that detect a drop of the margin;
* **A/B arms** (Miller 2024): from per-input counts of a report (the plan
  report, else the baseline), the between- and within-input variances, the
  inputs needed for each number of runs per input, and from how many runs on
  more runs stop helping.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ...config.settings import StatsConfig
from ...config.spec import Specs
from ...maths import ab_planning, run_budget, stats, twostats
from ...maths.checks import nonnegative, unit, whole
from ...model.case import CaseRef
from .compare_config import CompareConfig
from .pairs import arms_of, is_baselined

if TYPE_CHECKING:
    from .baseline import Baseline

#: What each column of the run budget means (the notes under the table); ``{...}`` filled per session.
_NOTES = {
    "runs": "Runs planned for the case (--prob-runs, a runs= mark or prob_runs), counting only the runs -k/-m selected.",
    "min runs": "Fewest runs with which the gate can pass at all: for a pass-rate gate, only if every one of them "
    "passes; for a latency gate, however fast they are, since with fewer its percentile's interval has "
    "no upper end; for a score gate (min_score), only if every score is at the top of its range. A case "
    "with several gates needs the largest.",
    "runs for": "Runs with which the gate passes {target} of the time if the case really passes {assume} of its runs "
    "(--prob-plan-assume); never, if {assume} is not above the gate's bar.",
    "chance now": "The chance the gate passes with the planned runs, if the case really passes {assume} of its runs.",
    "*": "A latency gate also applies: the marked numbers are for the pass-rate gate alone, and the latency gate's "
    "runs aren't planned beyond its min runs.",
    "**": "A score gate (min_score) also applies: the marked numbers are for the pass-rate gate alone, and the score "
    "gate's runs aren't planned beyond its min runs (its chance would need an assumed spread of scores).",
    "catch": "The chance the planned runs show at least one failure if {flake} of runs fail; {needed} runs make it 95%.",
    "cost": "Planned runs times the case's cost per run in {report}; blank for a case it doesn't have.",
}

# -- the run budget's table ---------------------------------------------------------

#: Shown in a gate column of an ungated case.
_DASH = "\u2014"
#: Suffix of the power cells of a case that also has a latency gate (those are the rate gate's alone).
LATENCY_MARK = "*"
#: The same for a case that also has a score gate (or another feature's criterion).
OTHERS_MARK = "**"


def format_chance(chance: float) -> str:
    """A planned chance as a whole percent, rounded half up.

    ``0%`` only for exactly 0 (impossible); any positive chance shows at
    least ``1%``; and ``100%`` never: a rate strictly between 0 and 1 never
    makes anything certain, so a chance that rounds to 100% prints ``99%``.
    """
    chance = unit(chance, "chance")
    if chance == 0.0:
        return "0%"
    whole = math.floor(chance * 100.0 + 0.5)
    return f"{min(max(whole, 1), 99)}%"


def format_runs(runs: int) -> str:
    """A run count with thousands separators: ``10,000``."""
    return f"{whole(runs, 'runs', 0):,}"


def format_min_runs(runs: int | None, max_runs: int = 100_000) -> str:
    """Column ``min runs``: the count, or ``>100,000`` when :func:`maths.run_budget.min_runs` found none up to ``max_runs``."""
    return f">{whole(max_runs, 'max_runs', 1):,}" if runs is None else format_runs(runs)


def format_runs_for_chance(
    runs: int | None, gate: run_budget.GateRule, rate: float = run_budget.PLAN_ASSUME, cap: int = run_budget.PLAN_CAP
) -> str:
    """Column ``runs for 80%``: the count, ``never`` (:func:`run_budget.never_passes`), or ``>10,000`` (``cap``)."""
    if runs is not None:
        return format_runs(runs)
    if run_budget.never_passes(gate, rate):
        return "never"
    return f">{whole(cap, 'cap', 1):,}"


def format_cost(cost: float | None) -> str:
    """Column ``cost``: dollars to four places (``$0.0800``); blank for an unpriced case."""
    return "" if cost is None else f"${nonnegative(cost, 'cost'):.4f}"


def plan_header(
    flakes: Sequence[float] = run_budget.PLAN_FLAKES,
    gated: bool = True,
    priced: bool = False,
    target: float = run_budget.PLAN_TARGET,
) -> list[str]:
    """The table's header: the gate columns only when some case is gated, ``cost`` only when priced."""
    header = ["case", "runs"]
    if gated:
        header += ["min runs", f"runs for {stats.format_rate(target)}", "chance now"]
    header += [f"catch {stats.format_rate(f)}" for f in flakes]
    if priced:
        header.append("cost")
    return header


def plan_cells(plan: run_budget.CasePlan, gated: bool = True, priced: bool = False) -> list[str]:
    """A row's cells after the case name, matching :func:`plan_header` (``gated``: some case of the suite has a
    gate, latency included). ``—`` in an ungated row's gate columns, and in a latency-only row's power columns;
    a row with both gates has its power cells marked :data:`LATENCY_MARK`."""
    cells = [format_runs(plan.runs)]
    if gated:
        least = (
            _DASH
            if plan.min_runs is None and plan.latency is None and plan.gate is None and not plan.others
            else format_min_runs(plan.min_runs)
        )
        if plan.gate is None:
            cells += [least, _DASH, _DASH]
        else:
            mark = OTHERS_MARK if plan.others else LATENCY_MARK if plan.latency is not None else ""
            assert plan.chance is not None  # a gated case's plan has its chance (run_budget.plan_case)
            cells += [
                least,
                format_runs_for_chance(plan.runs_for_chance, plan.gate, plan.assume, plan.cap) + mark,
                format_chance(plan.chance) + mark,
            ]
    cells += [format_chance(chance) for _, chance in plan.catches]
    if priced:
        cells.append(format_cost(plan.cost))
    return cells


def plan_lines(
    items: list[Any], config: CompareConfig, baseline: Baseline | None, specs: Specs, report: Baseline | None = None
) -> list[str]:
    """What ``--prob-plan`` prints (after its ``probability: plan`` heading): the run budget of the selected
    cases, then what the baselined and A/B-compared ones need. ``specs``: the session's case specs, with the
    score gates."""
    stats_config = specs.config
    cases, selected = _cases(items)
    lines = budget_lines(cases, selected, config, specs, report)
    lines += comparison_lines(cases, config, baseline, stats_config)
    lines += ab_lines(cases, config, report or baseline, stats_config)
    return lines


# -- the run budget ----------------------------------------------------------------------


def budget_lines(
    cases: dict[str, CaseRef], selected: dict[str, int], config: CompareConfig, specs: Specs, report: Baseline | None
) -> list[str]:
    stats_config = specs.config
    plans: list[tuple[str, run_budget.CasePlan]] = []
    missing = 0
    for key, case in cases.items():
        try:
            spec = specs.for_marks(case.marks, case.runs)
        except ValueError:
            continue  # collecting the case reported it
        gate = run_budget.GateRule.from_spec(spec.gate) if spec.gate is not None else None
        per_run = None
        if report is not None:
            row = report.find(case.key, case.label)
            per_run = run_budget.cost_per_run(row.cost, row.total) if row is not None and row.total else None
            missing += per_run is None
        plans.append(
            (
                case.label,
                run_budget.plan_case(
                    gate,
                    selected[key],
                    config.plan_assume,
                    config.plan_flakes,
                    per_run,
                    latency_quantile=spec.latency_quantile if spec.max_latency is not None else None,
                    latency_confidence=stats_config.confidence,
                    others=[score.fewest_runs() for score in spec.scores],
                ),
            )
        )
    if not plans:
        return ["  no benchmark run selected"]
    gated = any(plan.gate is not None or plan.latency is not None or plan.others for _, plan in plans)
    priced = report is not None
    header = plan_header(config.plan_flakes, gated, priced)
    rows = [[label, *plan_cells(plan, gated, priced)] for label, plan in plans]
    widths = [max(len(row[i]) for row in [header, *rows]) for i in range(len(header))]
    lines = [
        "  "
        + "  ".join(cell.ljust(widths[0]) if i == 0 else cell.rjust(widths[i]) for i, cell in enumerate(row)).rstrip()
        for row in [header, *rows]
    ]
    total = sum(plan.runs for _, plan in plans)
    lines += ["", f"  Plan:    {len(plans)} case{'s' if len(plans) != 1 else ''}, {total:,} runs; nothing was run."]
    if report is not None:
        cost = sum(plan.cost or 0.0 for _, plan in plans)
        name = _report_name(report)
        lines.append(
            f"  Cost:    ${cost:.4f} projected from {name}" + (f" ({missing} cases not in it)" if missing else "")
        )
    notes = _notes(
        header,
        any(plan.latency is not None and plan.gate is not None and not plan.others for _, plan in plans),
        config,
        _report_name(report) if report is not None else "",
        any(plan.others and plan.gate is not None for _, plan in plans),
    )
    return lines + [""] + notes


def _notes(
    header: list[str], latency_marked: bool, config: CompareConfig, report: str, others_marked: bool = False
) -> list[str]:
    """One note per column, wrapped at 80 characters under a name column."""
    assume = stats.format_rate(config.plan_assume)
    named: list[tuple[str, str]] = []
    for column in header[1:]:
        if column == "runs":
            named.append((column, _NOTES["runs"]))
        elif column == "min runs":
            named.append((column, _NOTES["min runs"]))
        elif column.startswith("runs for "):
            named.append((column, _NOTES["runs for"].format(target=column[len("runs for ") :], assume=assume)))
        elif column == "chance now":
            named.append((column, _NOTES["chance now"].format(assume=assume)))
            if latency_marked:
                named.append(("*", _NOTES["*"]))
            if others_marked:
                named.append(("**", _NOTES["**"]))
        elif column.startswith("catch "):
            flake = column[len("catch ") :]
            rate = float(flake.rstrip("%")) / 100
            named.append((column, _NOTES["catch"].format(flake=flake, needed=f"{run_budget.runs_to_catch(rate):,}")))
        elif column == "cost":
            named.append((column, _NOTES["cost"].format(report=report)))
    width = max(len(name) for name, _ in named)
    lines: list[str] = []
    for name, text in named:
        lines += _wrapped(f"  {name.ljust(width)}  ", text)
    return lines


def _wrapped(head: str, text: str, width: int = 80) -> list[str]:
    lines: list[str] = []
    line = head
    for word in text.split():
        if len(line) + len(word) + (0 if line.endswith("  ") else 1) > width and line.strip() != head.strip():
            lines.append(line.rstrip())
            line = " " * len(head)
        line += word if line.endswith("  ") or line.isspace() else f" {word}"
    lines.append(line.rstrip())
    return lines


def _report_name(report: Baseline) -> str:
    return ", ".join(path.rsplit("/", 1)[-1] for path in report.paths)


# -- baselines ---------------------------------------------------------------------------


def comparison_lines(
    cases: dict[str, CaseRef], config: CompareConfig, baseline: Baseline | None, stats_config: StatsConfig
) -> list[str]:
    """The runs each baselined case needs to detect a drop of its margin (``--prob-plan-drop`` without one)."""
    if baseline is None:
        return []
    alpha = 1.0 - stats_config.confidence
    baselined = [
        (key, case) for key, case in cases.items() if is_baselined(baseline, key, case.label, dict(case.params))
    ]
    family = max(1, len(baselined))
    tail = alpha / 2.0 / (family if config.adjust != "none" else 1)
    lines = [
        "",
        f"  Baseline: power {config.plan_power:g}, one-sided level {alpha / 2:g}"
        + (f" / {family} cases ({config.adjust})" if family > 1 and config.adjust != "none" else ""),
    ]
    for _, case in baselined:
        base = baseline.find(case.key, case.label)
        if base is None or not base.total:
            continue
        rate = base.passes / base.total
        marks = dict(case.marks)
        drop = (marks.get("margin") if "compare" not in marks else None) or config.margin or config.plan_drop
        needed = twostats.runs_to_detect(rate, drop, base.total / case.runs, tail, config.plan_power)
        lines.append(
            f"    {case.label} ({case.runs} runs): baseline {base.passes}/{base.total} ({rate:.0%}): detecting "
            f"a drop of {drop * 100:g} points needs {needed if needed else 'no number of'} runs"
        )
    return lines


# -- A/B (Miller 2024) -------------------------------------------------------------------


def ab_lines(
    cases: dict[str, CaseRef], config: CompareConfig, source: Baseline | None, stats_config: StatsConfig
) -> list[str]:
    """Per A/B arm: the inputs × runs per input that detect its margin (``--prob-plan-drop`` without one) at
    ``--prob-plan-power``, from the per-input variances of ``source``; and when more runs stop helping."""
    benchmarks: dict[tuple[str, str], list[CaseRef]] = {}
    for case in cases.values():
        marks = dict(case.marks)
        axis = marks.get("compare") or (config.compare_axis if config.compare_axis in dict(case.params) else None)
        if axis is not None and axis in dict(case.params):
            benchmarks.setdefault((case.scope, axis), []).append(case)
    if not benchmarks:
        return []
    alpha = 1.0 - stats_config.confidence
    lines = [
        "",
        "  A/B: inputs × runs per input (Miller 2024, from the per-input variances of "
        + (_report_name(source) if source is not None else "no report")
        + ")",
    ]
    for (_, axis), members in benchmarks.items():
        base, variants = arms_of(members, axis)
        marks = dict(members[0].marks)
        delta = marks.get("margin") or config.plan_drop
        for arm in variants:
            if arm == base:
                continue
            name = f"{members[0].benchmark}[{axis}] {arm} vs {base}"
            lines += _ab_arm(name, members, axis, arm, base, source, delta, alpha, config.plan_power)
    return lines


def _ab_arm(
    name: str,
    members: Sequence[CaseRef],
    axis: str,
    arm: str,
    base: str,
    source: Baseline | None,
    delta: float,
    alpha: float,
    power: float,
) -> list[str]:
    if source is None:
        return [f"    {name}: no report to estimate variances from (give --prob-plan-report=PATH, or a baseline)"]
    by_input: dict[tuple[tuple[str, str], ...], dict[str, tuple[int, int]]] = {}
    for case in members:
        row = source.find(case.key, case.label)
        if row is None or row.total < 2:
            continue
        params = dict(case.params)
        key = tuple(p for p in case.params if p[0] != axis)
        by_input.setdefault(key, {})[params[axis]] = (row.passes, row.total)
    paired = [cells for cells in by_input.values() if arm in cells and base in cells]
    if len(paired) < 2:
        return [f"    {name}: fewer than 2 inputs with at least 2 runs of both arms in the report: no variances"]
    estimate = ab_planning.paired_components([cells[arm] for cells in paired], [cells[base] for cells in paired])
    correlation = "n/a" if estimate.correlation is None else f"{estimate.correlation:.2f}"
    head = (
        f"    {name}: {len(paired)} inputs; between-input variance of the difference "
        f"{estimate.components.between:.4f}, within-input {estimate.components.within_a:.4f} + "
        f"{estimate.components.within_b:.4f}; correlation between the arms {correlation}"
    )
    text = ab_planning.tradeoff_statement(estimate.components, delta, alpha, power)
    return [head, *_wrapped("      ", text, width=100)]


def _cases(items: list[Any]) -> tuple[dict[str, CaseRef], dict[str, int]]:
    """The cases of the session's selected runs, by key, in collection order, and their selected runs."""
    cases: dict[str, CaseRef] = {}
    selected: dict[str, int] = {}
    for item in items:
        case = getattr(item, "prob_case", None)
        if case is not None and hasattr(item, "prob_run"):
            cases.setdefault(case.key, case)
            selected[case.key] = selected.get(case.key, 0) + 1
    return cases, selected
