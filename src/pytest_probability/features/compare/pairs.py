"""Comparisons built from rows, for every measure: tonight's cases paired with the baseline's, A/B arms paired by input.

Pure and pytest-free: :func:`compare_all` matches the rows (and a
:class:`~.baseline.Baseline`) into :class:`~.comparisons.Pair` objects, one
per case (or input) and measure (the pass fraction, and each score both
sides recorded), judges each family with :mod:`.judging`, and returns the
session's :class:`~.comparisons.Comparisons`; :func:`verdict_line` is one
comparison's line of a benchmark verdict (its verdict item's message).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ...config.settings import StatsConfig
from ...maths.twostats import SIGN_FLIP_RESAMPLES
from ...measures.fraction import PASS_FRACTION
from ...measures.measure import PASS, Measure
from ...measures.score import MeanScore
from ...model.rows import Row
from ...vocabulary import BASELINE_KIND, COMPARE_KIND, UNDECIDED
from .compare_config import CompareConfig
from .comparisons import MIN_INPUTS, Comparison, Comparisons, Pair
from .judging import judge_pairs, judge_pooled, pool

#: A case's score range from its marks (``StatsConfig.range_of``).
RangeOf = Callable[[Mapping[str, Any]], "tuple[float, float]"]

if TYPE_CHECKING:
    from .baseline import Baseline, BaselineCase


# -- building the comparisons from rows ---------------------------------------------


def _marks(row: Row) -> dict[str, Any]:
    return dict(row.case.marks)


def _params(row: Row) -> dict[str, str]:
    return {k: v for k, v in row.case.params}


def _score_names(*sides: Iterable[Any]) -> list[str]:
    """Score names every side's records hold, in the first side's order."""
    found = [list(dict.fromkeys(s.name for record in side for s in record.scores)) for side in sides]
    return [name for name in found[0] if all(name in other for other in found[1:])]


def match_baseline(
    rows: Iterable[Row], baseline: Baseline
) -> tuple[list[tuple[Row, BaselineCase]], list[str], list[str], list[str]]:
    """Tonight's rows matched with the baseline's cases: (matched, new, removed, changed)."""
    matched: list[tuple[Row, BaselineCase]] = []
    new: list[str] = []
    changed: list[str] = []
    seen: set[int] = set()
    for row in rows:
        case = baseline.find(row.case.key, row.label)
        if case is None:
            new.append(row.label)
            continue
        seen.add(id(case))
        if case.params is not None and case.params != _params(row):
            changed.append(row.label)
            continue
        matched.append((row, case))
    removed = [case.label for case in baseline.cases if id(case) not in seen]
    return matched, new, sorted(removed), changed


def baseline_measures(row: Row, case: BaselineCase, range_of: RangeOf) -> list[Measure[Any]]:
    """The measures a baselined case is compared by: its pass fraction, and each score it recorded tonight that
    the baseline has (on tonight's range)."""
    measures: list[Measure[Any]] = [PASS_FRACTION]
    if case.scores:
        low, high = range_of(_marks(row))
        names = _score_names(row.records)
        measures += [MeanScore(name, low, high) for name in names if case.scores.get(name)]
    return measures


def baseline_pairs(
    rows: Iterable[Row], baseline: Baseline, config: CompareConfig, range_of: RangeOf = StatsConfig().range_of
) -> tuple[list[tuple[Row, Pair]], list[str], list[str], list[str]]:
    """Tonight's rows paired with the baseline, one pair per case and measure: (compared, new, removed, changed)."""
    matched, new, removed, changed = match_baseline(rows, baseline)
    compared: list[tuple[Row, Pair]] = []
    for row, case in matched:
        marks = _marks(row)
        for measure in baseline_measures(row, case, range_of):
            arm, base = measure.of_row(row), measure.of_baseline(case)
            pair = Pair(
                measure,
                key=row.case.key,
                label=row.label,
                arm=arm,
                base=base,
                cost1=row.cost,
                cost2=case.cost,
                margin=marks.get("margin", config.margin),
                equivalence=marks.get("equivalence", False),
                note=measure.side_note(arm, base),
            )
            outside = measure.out_of_range(base)
            if outside is not None:  # a score of the baseline outside tonight's range: nothing to compare it with
                pair.base, pair.note = (), outside
            compared.append((row, pair))
    return compared, new, removed, changed


def is_baselined(baseline: Baseline | None, key: str, label: str, params: Mapping[str, str]) -> bool:
    """At collection: whether this case will be compared with the baseline."""
    if baseline is None:
        return False
    case = baseline.find(key, label)
    return case is not None and (case.params is None or case.params == dict(params))


def baseline_margin(marks: Mapping[str, Any], config: CompareConfig) -> float | None:
    """The margin a benchmark's baseline verdict is judged against: ``margin=`` on the mark of a
    benchmark without ``compare=``, else ``--prob-margin`` (or ini ``prob_margin``); None without
    either, and the comparison only reports (no verdict item, no exit status)."""
    if "margin" in marks and "compare" not in marks:
        return float(marks["margin"])
    return config.margin if config.margin_given else None


def _families(items: Iterable[Any], measure_of: Callable[[Any], Measure[Any]]) -> list[list[Any]]:
    """``items`` split into the families each is adjusted in: one per kind of measure (fractions, scores)."""
    families: dict[str, list[Any]] = {}
    for item in items:
        families.setdefault(measure_of(item).unit, []).append(item)
    return list(families.values())


def compare_baseline(
    result: Comparisons,
    rows: Sequence[Row],
    baseline: Baseline,
    min_inputs: int = MIN_INPUTS,
    resamples: int = SIGN_FLIP_RESAMPLES,
    seed: int = 0,
    range_of: RangeOf = StatsConfig().range_of,
) -> None:
    """Tonight against the baseline, per case and per benchmark, for every measure both sides have."""
    config = result.config
    compared, result.new, result.removed, result.changed = baseline_pairs(rows, baseline, config, range_of)
    result.baseline = baseline
    pairs = [pair for _, pair in compared]
    for family in _families(pairs, lambda pair: pair.measure):
        judge_pairs(family, config.adjust, result.confidence)
    result.cases = {(pair.key, pair.measure.key): pair for pair in pairs}
    benchmarks: dict[str, list[tuple[Row, Pair]]] = {}
    for row, pair in compared:
        benchmarks.setdefault(row.case.scope, []).append((row, pair))
    new_by_scope: dict[str, list[str]] = {}
    new = set(result.new)
    for row in rows:
        if row.label in new:
            new_by_scope.setdefault(row.case.scope, []).append(row.case.case)
    per_unit = Counter(pair.measure.unit for pair in pairs)  # each family's pairs
    pooled: list[Comparison] = []
    for scope, members in benchmarks.items():
        first = members[0][0]
        margin = baseline_margin(_marks(first), config)
        fractions = [pair for _, pair in members if pair.measure.key == PASS]
        cases = [row.case.key for row, pair in members if pair.measure.key == PASS]
        by_measure: dict[str, list[Pair]] = {}
        for _, pair in members:
            by_measure.setdefault(pair.measure.key, []).append(pair)
        for key, measured in by_measure.items():
            comparison = Comparison(
                measured[0].measure,
                kind=BASELINE_KIND,
                function=first.case.benchmark,
                scope=scope,
                axis=None,
                baseline="baseline",
                arm="current",
                pairs=measured,
                unpaired=new_by_scope.get(scope, []) if key == PASS else [],
                margin=margin or 0.0,
                equivalence=any(pair.equivalence for pair in fractions),
                judged=margin is not None,
                adjustment=config.adjust,
                input_family=per_unit[measured[0].measure.unit],
                cases=list(cases),
            )
            pool(comparison, result.confidence, min_inputs, resamples, seed)
            pooled.append(comparison)
    for family in _families(pooled, lambda comparison: comparison.measure):
        judge_pooled(family, config.adjust, result.confidence)
    result.comparisons.extend(pooled)


def _axis_of(row: Row, config: CompareConfig) -> str | None:
    marks = _marks(row)
    axis = marks.get("compare")
    if axis is None and config.compare_axis is not None and config.compare_axis in _params(row):
        axis = config.compare_axis
    return axis


def arms_of(cases: Sequence[Any], axis: str) -> tuple[str, list[str]]:
    """(baseline variant, every variant in collection order) of one benchmark's A/B axis; ``cases``
    are its CaseRefs, in collection order (``baseline=`` on the mark names the baseline variant,
    else it is the first)."""
    variants: list[str] = []
    wanted = None
    for case in cases:
        params = dict(case.params)
        if axis not in params:
            continue
        if params[axis] not in variants:
            variants.append(params[axis])
        wanted = dict(case.marks).get("baseline", wanted)
    return (wanted if wanted is not None else variants[0] if variants else ""), variants


def compare_arms(
    result: Comparisons,
    rows: Sequence[Row],
    min_inputs: int = MIN_INPUTS,
    resamples: int = SIGN_FLIP_RESAMPLES,
    seed: int = 0,
    range_of: RangeOf = StatsConfig().range_of,
) -> None:
    """A/B: each value of a benchmark's compare axis against its baseline variant, for every measure both
    variants have (the pass fraction, and each score both recorded on an input). Only ``margin=`` on the
    benchmark's mark judges the arms (``--prob-margin`` is the baseline's only)."""
    config = result.config
    groups: dict[tuple[str, str], list[Row]] = {}
    for row in rows:
        axis = _axis_of(row, config)
        if axis is None or axis not in _params(row):
            continue
        groups.setdefault((row.case.scope, axis), []).append(row)
    arms: list[Comparison] = []
    inputs: list[Pair] = []
    for (scope, axis), members in groups.items():
        members.sort(key=lambda r: r.case.order)
        base_value, variants = arms_of([row.case for row in members], axis)
        marks = _marks(members[0])
        margin = marks.get("margin") if "compare" in marks else None
        equivalence = bool(marks.get("equivalence", False))
        low, high = range_of(marks)
        by_input: dict[str, dict[str, Row]] = {}
        for row in members:
            params = _params(row)
            key = "-".join(v for k, v in params.items() if k != axis) or "(no other parameters)"
            by_input.setdefault(key, {})[params[axis]] = row
        for arm in variants:
            if arm == base_value:
                continue
            by_measure: dict[str, list[Pair]] = {PASS: []}
            unpaired: list[str] = []
            for input_id, cells in sorted(by_input.items()):
                if arm not in cells or base_value not in cells:
                    if arm in cells or base_value in cells:
                        unpaired.append(input_id)
                    continue
                arm_row, base_row = cells[arm], cells[base_value]
                measures: list[Measure[Any]] = [PASS_FRACTION]
                measures += [MeanScore(name, low, high) for name in _score_names(arm_row.records, base_row.records)]
                for measure in measures:
                    by_measure.setdefault(measure.key, []).append(
                        Pair(
                            measure,
                            key=input_id,
                            label=input_id,
                            arm=measure.of_row(arm_row),
                            base=measure.of_row(base_row),
                            cost1=arm_row.cost,
                            cost2=base_row.cost,
                            margin=margin or 0.0,
                            equivalence=equivalence,
                            judged=margin is not None,
                        )
                    )
            for key, measured in by_measure.items():
                comparison = Comparison(
                    measured[0].measure if measured else PASS_FRACTION,
                    kind=COMPARE_KIND,
                    function=members[0].case.benchmark,
                    scope=scope,
                    axis=axis,
                    baseline=base_value,
                    arm=arm,
                    pairs=measured,
                    unpaired=unpaired if key == PASS else [],
                    margin=margin or 0.0,
                    equivalence=equivalence,
                    judged=margin is not None,
                    adjustment=config.adjust,
                    cases=[row.case.key for row in members if _params(row)[axis] in (arm, base_value)],
                )
                pool(comparison, result.confidence, min_inputs, resamples, seed)
                arms.append(comparison)
                inputs.extend(measured)
    for family in _families(inputs, lambda pair: pair.measure):
        judge_pairs(family, config.adjust, result.confidence)
    for family in _families(arms, lambda comparison: comparison.measure):
        judge_pooled(family, config.adjust, result.confidence)
        tested = sum(1 for c in family for p in c.pairs if p.p is not None)
        for comparison in family:
            comparison.input_family = tested
    result.comparisons.extend(arms)


def compare_all(
    rows: Sequence[Row],
    baseline: Baseline | None,
    config: CompareConfig,
    confidence: float,
    undecided: str,
    min_inputs: int = MIN_INPUTS,
    resamples: int = SIGN_FLIP_RESAMPLES,
    seed: int = 0,
    range_of: RangeOf = StatsConfig().range_of,
) -> Comparisons:
    """Every comparison of the session's rows, for every measure: with the baseline (per case, and per
    benchmark), and the A/B arms; ``min_inputs``, ``resamples`` and ``seed`` as ini ``prob_min_inputs``,
    ``--prob-bootstrap`` and ``--prob-seed`` say, ``range_of`` each case's score range."""
    result = Comparisons(config, confidence, undecided)
    if baseline is not None:
        compare_baseline(result, rows, baseline, min_inputs, resamples, seed, range_of)
    compare_arms(result, rows, min_inputs, resamples, seed, range_of)
    # The pass fraction's comparisons first (each heads its verdict), then the scores' joining them.
    result.comparisons.sort(key=lambda comparison: comparison.measure.key != PASS)
    return result


# -- text ----------------------------------------------------------------------


def p_text(p: float | None) -> str:
    if p is None:
        return "-"
    return f"{p:.2g}" if p >= 0.001 else f"{p:.1e}"


def verdict_line(comparison: Comparison, with_p: bool = True) -> str:
    """One comparison's line of a benchmark verdict, in a fixed layout (its verdict item's message has no p):
    ``cls  current − baseline  −25.0 pp [−37.5, −12.5]  12 paired, 1 unpaired  ≥−5 pp  FAIL`` for the pass
    fraction, ``mean faithfulness  −0.120 [−0.200, −0.050]  12 paired  ≥−0.05  FAIL`` for a score."""
    c, measure = comparison, comparison.measure
    if measure.key != PASS:
        head = f"mean {measure.name}"
    elif c.kind == BASELINE_KIND:
        head = f"{c.function}  current \u2212 baseline"
    else:
        head = f"{c.function}[{c.axis}]  {c.arm} \u2212 {c.baseline}"
    parts = [head]
    if c.difference is not None:
        value = measure.said(c.difference)
        if c.ci is not None:
            value += " " + measure.said_interval(c.ci)
        parts.append(value)
    if with_p and c.p_adjusted is not None and measure.key == PASS:
        parts.append(f"p={p_text(c.p_adjusted)}")
    paired = f"{c.paired} paired"
    if c.unpaired:
        paired += f", {len(c.unpaired)} unpaired"
    parts.append(paired)
    if c.judged:
        parts.append(measure.margin_said(c.margin, c.equivalence))
        parts.append((c.verdict or UNDECIDED).upper())
        if c.suppressed is not None and c.verdict == UNDECIDED:
            parts.append(f"({c.suppressed}: no verdict from the interval)")
    return "  ".join(parts)


def benchmark_verdict(result: Comparisons, key: str) -> tuple[bool, str]:
    """(passed, lines) of the benchmark verdict item with node id ``key``: each of its measures' comparisons
    (the pass fraction's first) passes, or it fails; one line each."""
    if result.find(key) is None:
        return result.passed(UNDECIDED), "UNDECIDED: no run of this benchmark reported"
    joined = result.of(key)
    passed = all(result.passed(c.verdict) for c in joined)
    return passed, "\n".join(verdict_line(c, with_p=False) for c in joined)
