"""How baselines and A/B comparisons reach every output: the comparisons' facet.

:class:`ComparisonsFacet` gives the ``Baseline:`` and ``Comparisons (A/B)``
sections, the JSON report's ``comparisons`` and ``baseline`` keys, and the
baseline gauges, all from the same
:class:`~pytest_probability.features.compare.comparisons.Comparisons`
(:meth:`pytest_probability.features.compare.comparing.Comparing.current`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ...model.case import CaseRef
from ...model.outputs import Line, Series, case_attributes
from ...protocols import Facet
from ...vocabulary import BASELINE_KIND, FAILED, PASSED, UNDECIDED, VERDICT_VALUES

if TYPE_CHECKING:
    from .comparisons import Comparison, Comparisons
    from .score_pairs import ScoreComparison

_MARKUP = {PASSED: {"green": True}, FAILED: {"red": True}, UNDECIDED: {"yellow": True}}


class ComparisonsFacet(Facet):
    """Baselines and A/B comparisons in every output; nothing when nothing is compared."""

    def __init__(self, current: Callable[[], Comparisons | None], cases: Mapping[str, CaseRef]) -> None:
        """``current``: the session's comparisons (``Comparing.current``; None when nothing is compared);
        ``cases``: the session's CaseRefs by key, which name the gauges. Without an option of comparisons,
        nothing of them is imported until a case marked ``compare=`` has rows."""
        self.current = current
        self.cases = cases

    def lines(self) -> Sequence[Line]:
        result = self.current()
        return [] if result is None else section(result)

    def report_fields(self) -> Mapping[str, Any]:
        result = self.current()
        if result is None:
            return {"comparisons": [], "baseline": None}
        # The A/B arms here, the baseline's comparisons under "baseline".
        return {
            "comparisons": [result.comparison_dict(c) for c in result.comparisons if c.kind != BASELINE_KIND],
            "baseline": result.baseline_dict(),
        }

    def series(self) -> list[Series]:
        result = self.current()
        return [] if result is None else series(result, self.cases)


def section(result: Comparisons) -> list[Line]:
    if not result.comparisons and result.baseline is None:
        return []
    lines: list[Line] = []
    baselined = [c for c in result.comparisons if c.kind == BASELINE_KIND]
    if result.baseline is not None:
        counts = {v: sum(1 for p in result.cases.values() if p.verdict == v) for v in _MARKUP}
        reports = len(result.baseline.paths)
        head = f"  Baseline: {len(result.cases)} cases compared with {reports} report{'s' if reports != 1 else ''}"
        if any(c.judged for c in baselined):
            head += "; each benchmark's verdict decides"
            if counts["undecided"] or any(c.verdict == UNDECIDED for c in baselined):
                head += f" (undecided counts as {result.undecided})"
        else:
            head += "; reporting only (--prob-margin=M makes each benchmark's verdict decide)"
        lines += [("", {}), (head, {"bold": True})]
        lines.append(
            (
                f"    per case, for the drop alerts: {counts['pass']} passed, {counts['fail']} failed, "
                f"{counts['undecided']} undecided ({result.config.adjust} adjustment over each family); "
                "differences in points",
                {},
            )
        )
        lines += _table(baselined, with_inputs=True)
        graded = [c for c in result.scores if c.kind == BASELINE_KIND]
        if graded:
            lines.append(("    mean scores, current minus baseline (margins are shares of each score's range):", {}))
            lines += _score_table(graded, with_inputs=True)
        for title, labels in (
            ("new (not compared)", result.new),
            ("removed", result.removed),
            ("changed parameters (not compared)", result.changed),
        ):
            if labels:
                shown = ", ".join(labels[:10]) + (f", … ({len(labels) - 10} more)" if len(labels) > 10 else "")
                lines.append((f"    {title}: {shown}", {}))
    arms = [c for c in result.comparisons if c.kind != BASELINE_KIND]
    if arms:
        lines += [("", {}), ("  Comparisons (A/B): arm minus baseline variant, in points", {"bold": True})]
        lines += _table(arms, with_inputs=len({p.key for c in arms for p in c.pairs}) <= 20)
        graded = [c for c in result.scores if c.kind != BASELINE_KIND]
        if graded:
            lines.append(("    mean scores, arm minus baseline variant:", {}))
            lines += _score_table(graded, with_inputs=len({p.key for c in graded for p in c.pairs}) <= 20)
    return lines


def _score_table(comparisons: list[ScoreComparison], with_inputs: bool) -> list[Line]:
    from .pairs import p_text  # with the comparisons, only once something is compared
    from .score_pairs import interval_text, number

    cells: list[tuple[list[str], str, dict[str, Any]]] = []
    for c in comparisons:
        name = (
            f"{c.function} {c.name}"
            if c.kind == BASELINE_KIND
            else f"{c.function} [{c.axis}] {c.arm} vs {c.baseline} {c.name}"
        )
        extra = f"{sum(1 for p in c.pairs if p.arm and p.base)} {'cases' if c.kind == BASELINE_KIND else 'inputs'}"
        verdict = c.verdict.upper() if c.verdict else ""
        note = ""
        if c.judged:
            note = f"within ±{c.margin_points:g}" if c.equivalence else f"margin {c.margin_points:g}"
            if c.suppressed is not None and c.verdict == UNDECIDED:
                verdict += f" ({c.suppressed})"
        cells.append(
            (
                [name, extra, number(c.difference), interval_text(c.ci), f"p_adj {p_text(c.p_adjusted)}", note],
                verdict,
                _MARKUP.get(c.verdict or "", {"bold": True}),
            )
        )
        if with_inputs:
            for p in c.pairs:
                verdict = p.verdict.upper() if p.verdict else ""
                cells.append(
                    (
                        [
                            "  " + p.label,
                            f"n {len(p.arm)} vs {len(p.base)}",
                            number(p.difference),
                            interval_text(p.ci),
                            f"p_adj {p_text(p.p_adjusted)}",
                            p.note,
                        ],
                        verdict,
                        _MARKUP.get(p.verdict or "", {}),
                    )
                )
    return _aligned(cells)


def _table(comparisons: list[Comparison], with_inputs: bool) -> list[Line]:
    from .pairs import interval_text, p_text, points  # only once something is compared

    cells: list[tuple[list[str], str, dict[str, Any]]] = []
    for c in comparisons:
        name = c.function if c.kind == BASELINE_KIND else f"{c.function} [{c.axis}] {c.arm} vs {c.baseline}"
        cost = "" if c.cost_ratio is None else f"cost ×{c.cost_ratio:.2f}"
        if c.kind != BASELINE_KIND and c.correlation is not None:
            cost = "  ".join(part for part in (f"r={c.correlation:.2f}", cost) if part)  # pairing's gain
        npairs = sum(1 for p in c.pairs if p.n1 and p.n2)
        extra = f"{npairs} {'cases' if c.kind == BASELINE_KIND else 'inputs'}"
        if c.unpaired:
            extra += f", {len(c.unpaired)} unpaired"
        verdict = c.verdict.upper() if c.verdict else ""
        if c.judged:
            margin = f"within ±{c.margin * 100:g}" if c.equivalence else f"margin {c.margin * 100:g}"
            cost = "  ".join(part for part in (cost, margin) if part)
            if c.suppressed is not None and c.verdict == UNDECIDED:
                verdict += f" ({c.suppressed})"
        cells.append(
            (
                [name, extra, points(c.difference), interval_text(c.ci), f"p_adj {p_text(c.p_adjusted)}", cost],
                verdict,
                _MARKUP.get(c.verdict or "", {"bold": True}),
            )
        )
        if with_inputs:
            for p in c.pairs:
                frac = f"{p.x1}/{p.n1} vs {p.x2}/{p.n2}"
                verdict = p.verdict.upper() if p.verdict else ""
                cells.append(
                    (
                        [
                            "  " + p.label,
                            frac,
                            points(p.difference),
                            interval_text(p.ci),
                            f"p_adj {p_text(p.p_adjusted)}",
                            p.note,
                        ],
                        verdict,
                        _MARKUP.get(p.verdict or "", {}),
                    )
                )
    return _aligned(cells)


def _aligned(cells: list[tuple[list[str], str, dict[str, Any]]]) -> list[Line]:
    """The comparison tables' rows: name, pairs, difference, interval, adjusted p, note, verdict."""
    if not cells:
        return []
    widths = [max(len(cell[0][i]) for cell in cells) for i in range(6)]
    lines: list[Line] = []
    for parts, verdict, markup in cells:
        text = "    " + "  ".join(
            [
                parts[0].ljust(widths[0]),
                parts[1].rjust(widths[1]),
                parts[2].rjust(widths[2]),
                parts[3].ljust(widths[3]),
                parts[4].ljust(widths[4]),
                parts[5].ljust(widths[5]),
                verdict,
            ]
        )
        lines.append((text.rstrip(), markup))
    return lines


# -- metrics -----------------------------------------------------------------------


def series(result: Comparisons, cases: Mapping[str, CaseRef]) -> list[Series]:
    """Gauges per baselined case: baseline fraction, difference and its bounds, adjusted p, verdict.

    ``cases`` maps case keys to tonight's CaseRefs, which name each series as every per-case
    series is named (``model.outputs.case_attributes``)."""
    if not result.cases:
        return []
    fraction = Series(
        "probability.case.baseline.pass_fraction",
        "gauge",
        "1",
        "The case's pass fraction in the baseline reports, pooled",
    )
    difference = Series(
        "probability.case.baseline.difference", "gauge", "1", "Tonight's pass fraction minus the baseline's"
    )
    lower = Series(
        "probability.case.baseline.difference.lower",
        "gauge",
        "1",
        "Lower bound of the difference's interval (at the adjusted level)",
    )
    upper = Series(
        "probability.case.baseline.difference.upper",
        "gauge",
        "1",
        "Upper bound of the difference's interval (at the adjusted level)",
    )
    p_adjusted = Series(
        "probability.case.baseline.p_adjusted", "gauge", "1", "Adjusted p-value of the comparison with the baseline"
    )
    verdict = Series(
        "probability.case.baseline.verdict", "gauge", "", "Baseline verdict: 1 pass, 0 undecided, -1 fail (a drop)"
    )
    for key, pair in result.cases.items():
        attributes = case_attributes(cases[key])
        if pair.n2:
            fraction.points.append((attributes, pair.x2 / pair.n2))
        if pair.difference is not None:
            difference.points.append((attributes, pair.difference))
        if pair.ci is not None:
            lower.points.append((attributes, pair.ci.low))
            upper.points.append((attributes, pair.ci.high))
        if pair.p_adjusted is not None:
            p_adjusted.points.append((attributes, pair.p_adjusted))
        if pair.verdict is not None:
            verdict.points.append((attributes, VERDICT_VALUES[pair.verdict]))
    return [fraction, difference, lower, upper, p_adjusted, verdict, *score_series(result, cases)]


def score_series(result: Comparisons, cases: Mapping[str, CaseRef]) -> list[Series]:
    """Gauges per baselined case and score name (``probability.score.name``): the baseline's mean score,
    tonight's minus it with the interval's bounds, and the verdict. None without score comparisons."""
    if not result.score_cases:
        return []
    mean = Series(
        "probability.case.baseline.score.mean", "gauge", "1", "The case's mean score in the baseline reports, pooled"
    )
    difference = Series(
        "probability.case.baseline.score.difference", "gauge", "1", "Tonight's mean score minus the baseline's"
    )
    lower = Series(
        "probability.case.baseline.score.difference.lower",
        "gauge",
        "1",
        "Lower bound of the score difference's interval (at the adjusted level)",
    )
    upper = Series(
        "probability.case.baseline.score.difference.upper",
        "gauge",
        "1",
        "Upper bound of the score difference's interval (at the adjusted level)",
    )
    verdict = Series(
        "probability.case.baseline.score.verdict",
        "gauge",
        "",
        "Baseline score verdict: 1 pass, 0 undecided, -1 fail (a drop)",
    )
    for (key, name), pair in result.score_cases.items():
        attributes = {**case_attributes(cases[key]), "probability.score.name": name}
        if pair.base:
            mean.points.append((attributes, sum(pair.base) / len(pair.base)))
        if pair.difference is not None:
            difference.points.append((attributes, pair.difference))
        if pair.ci is not None:
            lower.points.append((attributes, pair.ci.low))
            upper.points.append((attributes, pair.ci.high))
        if pair.verdict is not None:
            verdict.points.append((attributes, VERDICT_VALUES[pair.verdict]))
    return [mean, difference, lower, upper, verdict]
