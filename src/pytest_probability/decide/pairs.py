"""Comparisons built from rows: tonight's cases paired with the baseline's, and A/B arms paired by input.

Pure and pytest-free: :func:`compare_all` matches the rows (and a
:class:`~.baseline.Baseline`) into :class:`~.compare.Pair` objects, judges
each family with :mod:`.compare`, and returns the session's
:class:`~.compare.Comparisons`; :func:`case_verdict_text` is a baselined
case's verdict item's line.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Iterable, Mapping, Sequence

from ..config.compare import CompareConfig
from ..model.outputs import Interval
from ..model.rows import Row
from ..vocabulary import BASELINE_KIND, UNDECIDED
from .compare import Comparison, Comparisons, Pair, judge_pairs, judge_pooled, pair_tests, pooled_tests

if TYPE_CHECKING:
    from .baseline import Baseline


# -- building the comparisons from rows ---------------------------------------------


def _marks(row: Row) -> dict[str, Any]:
    return dict(row.case.marks)


def _params(row: Row) -> dict[str, str]:
    return {k: v for k, v in row.case.params}


def baseline_pairs(rows: Iterable[Row], baseline: Baseline, config: CompareConfig) -> tuple[list[tuple[Row, Pair]], list[str], list[str], list[str]]:
    """Match tonight's rows with the baseline: (compared, new, removed, changed)."""
    compared: list[tuple[Row, Pair]] = []
    new: list[str] = []
    changed: list[str] = []
    matched: set[int] = set()
    for row in rows:
        case = baseline.find(row.case.key, row.label)
        if case is None:
            new.append(row.label)
            continue
        matched.add(id(case))
        if case.params is not None and case.params != _params(row):
            changed.append(row.label)
            continue
        marks = _marks(row)
        pair = Pair(
            key=row.case.key,
            label=row.label,
            x1=row.counts.passes,
            n1=row.counts.total,
            x2=case.passes,
            n2=case.total,
            cost1=row.cost,
            cost2=case.cost,
            margin=marks.get("margin", config.margin),
            equivalence=marks.get("equivalence", False),
        )
        if not pair.n2:
            pair.note = "no counted runs in the baseline"
        elif not pair.n1:
            pair.note = "no counted runs tonight"
        compared.append((row, pair))
    removed = [case.label for case in baseline.cases if id(case) not in matched]
    return compared, new, sorted(removed), changed


def is_baselined(baseline: Baseline | None, key: str, label: str, params: Mapping[str, str]) -> bool:
    """At collection: whether this case will be compared with the baseline."""
    if baseline is None:
        return False
    case = baseline.find(key, label)
    return case is not None and (case.params is None or case.params == dict(params))


def compare_baseline(result: Comparisons, rows: Sequence[Row], baseline: Baseline) -> None:
    config = result.config
    compared, result.new, result.removed, result.changed = baseline_pairs(rows, baseline, config)
    result.baseline = baseline
    for _, pair in compared:
        pair_tests(pair)
    pairs = [pair for _, pair in compared]
    judge_pairs(pairs, config.adjust, result.confidence)
    result.cases = {pair.key: pair for pair in pairs}
    benchmarks: dict[str, list[tuple[Row, Pair]]] = {}
    for row, pair in compared:
        benchmarks.setdefault(row.case.benchmark, []).append((row, pair))
    pooled = []
    for name, members in benchmarks.items():
        margins = {pair.margin for _, pair in members}
        comparison = Comparison(
            kind=BASELINE_KIND,
            function=name,
            axis=None,
            baseline="baseline",
            arm="current",
            pairs=[pair for _, pair in members],
            unpaired=[],
            margin=min(margins),
            equivalence=all(pair.equivalence for _, pair in members),
            judged=True,
            adjustment=config.adjust,
            input_family=len(pairs),
        )
        pooled_tests(comparison)
        pooled.append(comparison)
    judge_pooled(pooled, config.adjust, result.confidence)
    result.comparisons.extend(pooled)


def _axis_of(row: Row, config: CompareConfig) -> str | None:
    marks = _marks(row)
    axis = marks.get("compare")
    if axis is None and config.compare_axis is not None and config.compare_axis in _params(row):
        axis = config.compare_axis
    return axis


def compare_arms(result: Comparisons, rows: Sequence[Row]) -> None:
    """A/B: each value of a benchmark's compare axis against its baseline variant."""
    config = result.config
    groups: dict[tuple[str, str], list[Row]] = {}
    for row in rows:
        axis = _axis_of(row, config)
        if axis is None or axis not in _params(row):
            continue
        groups.setdefault((row.case.benchmark, axis), []).append(row)
    arms: list[Comparison] = []
    all_inputs: list[Pair] = []
    for (function, axis), members in groups.items():
        members.sort(key=lambda r: r.case.order)
        variants: list[str] = []
        for row in members:
            value = _params(row)[axis]
            if value not in variants:
                variants.append(value)
        wanted = next((_marks(r).get("baseline") for r in members if "baseline" in _marks(r)), None)
        base_value = wanted if wanted is not None else variants[0]
        by_input: dict[str, dict[str, Row]] = {}
        for row in members:
            params = _params(row)
            key = "-".join(v for k, v in params.items() if k != axis) or "(no other parameters)"
            by_input.setdefault(key, {})[params[axis]] = row
        for arm in variants:
            if arm == base_value:
                continue
            margin = None
            equivalence = False
            pairs: list[Pair] = []
            unpaired: list[str] = []
            for input_id, cells in sorted(by_input.items()):
                if arm not in cells or base_value not in cells:
                    if arm in cells or base_value in cells:
                        unpaired.append(input_id)
                    continue
                arm_row, base_row = cells[arm], cells[base_value]
                marks = _marks(arm_row)
                if "margin" in marks:
                    margin = marks["margin"]
                equivalence = equivalence or bool(marks.get("equivalence", False))
                pairs.append(
                    Pair(
                        key=input_id,
                        label=input_id,
                        x1=arm_row.counts.passes,
                        n1=arm_row.counts.total,
                        x2=base_row.counts.passes,
                        n2=base_row.counts.total,
                        cost1=arm_row.cost,
                        cost2=base_row.cost,
                    )
                )
            if margin is None and config.margin_given:
                margin = config.margin
            judged = margin is not None
            for pair in pairs:
                pair.margin = margin or 0.0
                pair.equivalence = equivalence
                pair.judged = judged
                pair_tests(pair)
            comparison = Comparison(
                kind="compare",
                function=function,
                axis=axis,
                baseline=base_value,
                arm=arm,
                pairs=pairs,
                unpaired=unpaired,
                margin=margin or 0.0,
                equivalence=equivalence,
                judged=judged,
                adjustment=config.adjust,
            )
            pooled_tests(comparison)
            arms.append(comparison)
            all_inputs.extend(pairs)
    judge_pairs(all_inputs, config.adjust, result.confidence)
    judge_pooled(arms, config.adjust, result.confidence)
    tested_inputs = sum(1 for p in all_inputs if p.p is not None)
    for comparison in arms:
        comparison.input_family = tested_inputs
    result.comparisons.extend(arms)


def compare_all(rows: Sequence[Row], baseline: Baseline | None, config: CompareConfig, confidence: float, undecided: str) -> Comparisons:
    result = Comparisons(config, confidence, undecided)
    if baseline is not None:
        compare_baseline(result, rows, baseline)
    compare_arms(result, rows)
    return result


# -- text ----------------------------------------------------------------------


def points(value: float | None) -> str:
    """A difference in percentage points: ``-12.3``; ``-`` when unknown."""
    return "-" if value is None else f"{value * 100:+.1f}"


def interval_text(ci: Interval | None) -> str:
    if ci is None:
        return ""
    return f"[{ci.low * 100:+.1f}, {ci.high * 100:+.1f}]"


def p_text(p: float | None) -> str:
    if p is None:
        return "-"
    return f"{p:.2g}" if p >= 0.001 else f"{p:.1e}"


def case_verdict_text(result: Comparisons, key: str) -> tuple[bool, str]:
    """(passed, one line) for the verdict item of a baselined case."""
    pair = result.cases.get(key)
    if pair is None:
        return False, "UNDECIDED: no run of this case reported"
    verdict = pair.verdict or UNDECIDED
    reports = len(result.baseline.paths) if result.baseline else 0
    what = f"{pair.x1}/{pair.n1} vs baseline {pair.x2}/{pair.n2} ({reports} report{'s' if reports != 1 else ''})"
    if pair.ci is None:
        return result.passed(verdict), f"{verdict.upper()}: {what}: {pair.note or 'not compared'}"
    family = sum(1 for p in result.cases.values() if p.p is not None)
    rule = f"within ±{pair.margin * 100:g} points" if pair.equivalence else f"margin {pair.margin * 100:g} points"
    text = (
        f"{verdict.upper()}: {what}: difference {points(pair.difference)} points, "
        f"{pair.ci.level * 100:.4g}% interval {interval_text(pair.ci)}, p {p_text(pair.p)}, "
        f"adjusted p {p_text(pair.p_adjusted)} ({result.config.adjust} over {family}), {rule}"
    )
    return result.passed(verdict), text
