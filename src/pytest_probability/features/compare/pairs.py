"""Comparisons built from rows: tonight's cases paired with the baseline's, and A/B arms paired by input.

Pure and pytest-free: :func:`compare_all` matches the rows (and a
:class:`~.baseline.Baseline`) into :class:`~.compare.Pair` objects, judges
each family with :mod:`.compare`, and returns the session's
:class:`~.compare.Comparisons`; :func:`verdict_line` is a benchmark
verdict's line (its verdict item's message).
"""

from __future__ import annotations

import statistics
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ...config.settings import StatsConfig
from ...maths.twostats import SIGN_FLIP_RESAMPLES
from ...model.outputs import Interval
from ...model.rows import Row
from ...vocabulary import BASELINE_KIND, COMPARE_KIND, UNDECIDED
from . import score_pairs
from .comparisons import MIN_INPUTS, Comparison, Comparisons, Pair
from .judging import judge_pairs, judge_pooled, pair_tests, pooled_tests
from .settings import CompareConfig

#: A case's score range from its marks (``StatsConfig.range_of``).
RangeOf = Callable[[Mapping[str, Any]], "tuple[float, float]"]

if TYPE_CHECKING:
    from .baseline import Baseline


# -- building the comparisons from rows ---------------------------------------------


def _marks(row: Row) -> dict[str, Any]:
    return dict(row.case.marks)


def _params(row: Row) -> dict[str, str]:
    return {k: v for k, v in row.case.params}


def baseline_pairs(
    rows: Iterable[Row], baseline: Baseline, config: CompareConfig
) -> tuple[list[tuple[Row, Pair]], list[str], list[str], list[str]]:
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


def baseline_margin(marks: Mapping[str, Any], config: CompareConfig) -> float | None:
    """The margin a benchmark's baseline verdict is judged against: ``margin=`` on the mark of a
    benchmark without ``compare=``, else ``--prob-margin`` (or ini ``prob_margin``); None without
    either, and the comparison only reports (no verdict item, no exit status)."""
    if "margin" in marks and "compare" not in marks:
        return float(marks["margin"])
    return config.margin if config.margin_given else None


def compare_baseline(
    result: Comparisons,
    rows: Sequence[Row],
    baseline: Baseline,
    min_inputs: int = MIN_INPUTS,
    resamples: int = SIGN_FLIP_RESAMPLES,
    seed: int = 0,
    range_of: RangeOf = StatsConfig().range_of,
) -> None:
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
        benchmarks.setdefault(row.case.scope, []).append((row, pair))
    new_by_scope: dict[str, list[str]] = {}
    new = set(result.new)
    for row in rows:
        if row.label in new:
            new_by_scope.setdefault(row.case.scope, []).append(row.case.case)
    pooled = []
    for scope, members in benchmarks.items():
        margin = baseline_margin(_marks(members[0][0]), config)
        comparison = Comparison(
            kind=BASELINE_KIND,
            function=members[0][0].case.benchmark,
            scope=scope,
            axis=None,
            baseline="baseline",
            arm="current",
            pairs=[pair for _, pair in members],
            unpaired=new_by_scope.get(scope, []),
            margin=margin or 0.0,
            equivalence=any(pair.equivalence for _, pair in members),
            judged=margin is not None,
            adjustment=config.adjust,
            input_family=len(pairs),
            cases=[row.case.key for row, _ in members],
        )
        pooled_tests(comparison, min_inputs, resamples, seed)
        pooled.append(comparison)
    judge_pooled(pooled, config.adjust, result.confidence, min_inputs)
    result.comparisons.extend(pooled)
    _baseline_scores(result, compared, baseline, pooled, min_inputs, resamples, seed, range_of)


def _baseline_scores(
    result: Comparisons,
    compared: Sequence[tuple[Row, Pair]],
    baseline: Baseline,
    benchmarks: Sequence[Comparison],
    min_inputs: int,
    resamples: int,
    seed: int,
    range_of: RangeOf,
) -> None:
    """Tonight's mean scores against the baseline's, per case and per benchmark (``.score_pairs``)."""
    found = [(row, pair, baseline.find(row.case.key, row.label)) for row, pair in compared]
    with_scores = [(row, pair, case) for row, pair, case in found if case is not None and case.scores]
    if not with_scores:
        return
    ranges = {row.case.key: range_of(_marks(row)) for row, _, _ in with_scores}
    cases = score_pairs.baseline_score_pairs(with_scores, ranges)
    score_pairs.judge_pairs([pair for _, pair in cases], result.config.adjust, result.confidence)
    result.score_cases = {(pair.key, pair.name): pair for _, pair in cases}
    by_scope: dict[str, dict[str, list[score_pairs.ScorePair]]] = {}
    for row, pair in cases:
        by_scope.setdefault(row.case.scope, {}).setdefault(pair.name, []).append(pair)
    _pool_scores(
        result,
        [(c, by_scope[c.scope]) for c in benchmarks if c.scope in by_scope],
        min_inputs,
        resamples,
        seed,
        len(cases),
    )


def _pool_scores(
    result: Comparisons,
    fractions: Sequence[tuple[Comparison, Mapping[str, list[score_pairs.ScorePair]]]],
    min_inputs: int,
    resamples: int,
    seed: int,
    inputs: int,
) -> None:
    """Each fractions' comparison's score comparisons (one per score name): pooled, then judged as one family."""
    pooled = [c for fraction, by_name in fractions for c in _score_comparisons(fraction, by_name)]
    for comparison in pooled:
        score_pairs.pooled(comparison, result.confidence, min_inputs, resamples, seed)
        comparison.input_family = inputs
    score_pairs.judge_pooled(pooled, result.config.adjust, result.confidence)
    result.scores.extend(pooled)


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
    """A/B: each value of a benchmark's compare axis against its baseline variant. Only ``margin=`` on
    the benchmark's mark judges the arms (``--prob-margin`` is the baseline's only)."""
    config = result.config
    groups: dict[tuple[str, str], list[Row]] = {}
    for row in rows:
        axis = _axis_of(row, config)
        if axis is None or axis not in _params(row):
            continue
        groups.setdefault((row.case.scope, axis), []).append(row)
    arms: list[Comparison] = []
    all_inputs: list[Pair] = []
    scored: list[tuple[Comparison, dict[str, list[score_pairs.ScorePair]]]] = []
    for (scope, axis), members in groups.items():
        members.sort(key=lambda r: r.case.order)
        base_value, variants = arms_of([row.case for row in members], axis)
        marks = _marks(members[0])
        margin = marks.get("margin") if "compare" in marks else None
        equivalence = bool(marks.get("equivalence", False))
        by_input: dict[str, dict[str, Row]] = {}
        for row in members:
            params = _params(row)
            key = "-".join(v for k, v in params.items() if k != axis) or "(no other parameters)"
            by_input.setdefault(key, {})[params[axis]] = row
        for arm in variants:
            if arm == base_value:
                continue
            pairs: list[Pair] = []
            unpaired: list[str] = []
            paired_rows: list[tuple[str, Row, Row]] = []
            for input_id, cells in sorted(by_input.items()):
                if arm not in cells or base_value not in cells:
                    if arm in cells or base_value in cells:
                        unpaired.append(input_id)
                    continue
                arm_row, base_row = cells[arm], cells[base_value]
                paired_rows.append((input_id, arm_row, base_row))
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
                        margin=margin or 0.0,
                        equivalence=equivalence,
                        judged=margin is not None,
                    )
                )
            for pair in pairs:
                pair_tests(pair)
            comparison = Comparison(
                kind=COMPARE_KIND,
                function=members[0].case.benchmark,
                scope=scope,
                axis=axis,
                baseline=base_value,
                arm=arm,
                pairs=pairs,
                unpaired=unpaired,
                margin=margin or 0.0,
                equivalence=equivalence,
                judged=margin is not None,
                adjustment=config.adjust,
                cases=[row.case.key for row in members if _params(row)[axis] in (arm, base_value)],
            )
            comparison.correlation = arm_correlation(pairs)
            pooled_tests(comparison, min_inputs, resamples, seed)
            arms.append(comparison)
            all_inputs.extend(pairs)
            ranges = {row.case.key: range_of(marks) for _, row, _ in paired_rows}
            by_name = score_pairs.arm_score_pairs(paired_rows, ranges, margin or 0.0, equivalence, margin is not None)
            if by_name:
                scored.append((comparison, by_name))
    judge_pairs(all_inputs, config.adjust, result.confidence)
    judge_pooled(arms, config.adjust, result.confidence, min_inputs)
    tested_inputs = sum(1 for p in all_inputs if p.p is not None)
    for comparison in arms:
        comparison.input_family = tested_inputs
    result.comparisons.extend(arms)
    score_inputs = [pair for _, by_name in scored for pairs in by_name.values() for pair in pairs]
    score_pairs.judge_pairs(score_inputs, config.adjust, result.confidence)
    _pool_scores(result, scored, min_inputs, resamples, seed, sum(1 for p in score_inputs if p.p is not None))


def arm_correlation(pairs: Sequence[Pair]) -> float | None:
    """Pearson's correlation of the arm's and the baseline variant's per-input pass fractions
    (``statistics.correlation``); None below 2 pairs, or when one side's fractions are all equal."""
    counted = [p for p in pairs if p.n1 and p.n2]
    if len(counted) < 2:
        return None
    try:
        return statistics.correlation([p.x1 / p.n1 for p in counted], [p.x2 / p.n2 for p in counted])
    except statistics.StatisticsError:
        return None


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
    """Every comparison of the session's rows, of fractions and of mean scores: with the baseline (per
    case, and per benchmark), and the A/B arms; ``min_inputs``, ``resamples`` and ``seed`` as ini
    ``prob_min_inputs``, ``--prob-bootstrap`` and ``--prob-seed`` say, ``range_of`` each case's score range."""
    result = Comparisons(config, confidence, undecided)
    if baseline is not None:
        compare_baseline(result, rows, baseline, min_inputs, resamples, seed, range_of)
    compare_arms(result, rows, min_inputs, resamples, seed, range_of)
    return result


def _score_comparisons(
    fraction: Comparison, by_name: Mapping[str, list[score_pairs.ScorePair]]
) -> list[score_pairs.ScoreComparison]:
    """One benchmark's (or arm's) score comparisons, one per score name, beside its fractions' ``fraction``."""
    out = []
    for name, pairs in by_name.items():
        low, high = pairs[0].low, pairs[0].high
        out.append(
            score_pairs.ScoreComparison(
                kind=fraction.kind,
                function=fraction.function,
                scope=fraction.scope,
                axis=fraction.axis,
                baseline=fraction.baseline,
                arm=fraction.arm,
                name=name,
                pairs=pairs,
                margin=fraction.margin,
                equivalence=fraction.equivalence,
                judged=fraction.judged,
                low=low,
                high=high,
                adjustment=fraction.adjustment,
                cases=list(fraction.cases),
            )
        )
    return out


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


def pp(value: float) -> str:
    """Percentage points: ``+10.0``, ``−25.0`` (a real minus), ``0.0``."""
    text = f"{value * 100:+.1f}"
    if text in ("+0.0", "-0.0"):
        return "0.0"
    return text.replace("-", "\u2212")


def margin_text(margin: float, equivalence: bool) -> str:
    """``≥−5 pp`` (non-inferiority), ``>0 pp`` (margin 0), ``±2 pp`` (equivalence)."""
    points_ = f"{margin * 100:g}"
    if equivalence:
        return f"\u00b1{points_} pp"
    return "\u2265\u2212" + f"{points_} pp" if margin else ">0 pp"


def verdict_line(comparison: Comparison, with_p: bool = True) -> str:
    """One benchmark verdict's line, in a fixed layout (its verdict item's message has no p):
    ``cls  current − baseline  −25.0 pp [−37.5, −12.5]  12 paired, 1 unpaired  ≥−5 pp  FAIL``."""
    if comparison.kind == BASELINE_KIND:
        head = f"{comparison.function}  current \u2212 baseline"
    else:
        head = f"{comparison.function}[{comparison.axis}]  {comparison.arm} \u2212 {comparison.baseline}"
    parts = [head]
    if comparison.difference is not None:
        value = f"{pp(comparison.difference)} pp"
        if comparison.ci is not None:
            value += f" [{pp(comparison.ci.low)}, {pp(comparison.ci.high)}]"
        parts.append(value)
    if with_p and comparison.p_adjusted is not None:
        parts.append(f"p={p_text(comparison.p_adjusted)}")
    paired = f"{comparison.paired} paired"
    if comparison.unpaired:
        paired += f", {len(comparison.unpaired)} unpaired"
    parts.append(paired)
    if comparison.judged:
        parts.append(margin_text(comparison.margin, comparison.equivalence))
        parts.append((comparison.verdict or UNDECIDED).upper())
        if comparison.suppressed is not None and comparison.verdict == UNDECIDED:
            parts.append(f"({comparison.suppressed}: no verdict from the interval)")
    return "  ".join(parts)


def benchmark_verdict(result: Comparisons, key: str) -> tuple[bool, str]:
    """(passed, line) of the benchmark verdict item with node id ``key``: its fractions' comparison and
    its score comparisons (one per score name) all pass, or it fails; one line each."""
    comparison = result.find(key)
    if comparison is None:
        return result.passed(UNDECIDED), "UNDECIDED: no run of this benchmark reported"
    graded = result.scores_of(key)
    passed = result.passed(comparison.verdict) and all(result.passed(c.verdict) for c in graded)
    lines = [verdict_line(comparison, with_p=False)] + [score_pairs.verdict_line(c) for c in graded]
    return passed, "\n".join(lines)
