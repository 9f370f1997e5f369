"""How baselines and A/B comparisons reach every output: the comparisons' facet.

:class:`ComparisonsFacet` gives the ``Baseline:`` and ``Comparisons (A/B)``
sections, the JSON report's ``comparisons`` and ``baseline`` keys, and the
baseline gauges, all from the same
:class:`~pytest_probability.features.compare.comparisons.Comparisons`
(:meth:`pytest_probability.features.compare.comparing.SessionComparisons.current`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ...measures.measure import FRACTION, PASS, SCORE
from ...model.case import CaseRef
from ...model.outputs import Line, Series, case_attributes
from ...protocols import Facet
from ...vocabulary import BASELINE_KIND, FAILED, PASSED, UNDECIDED, VERDICT_VALUES

if TYPE_CHECKING:
    from .comparisons import Comparison, Comparisons

_MARKUP = {PASSED: {"green": True}, FAILED: {"red": True}, UNDECIDED: {"yellow": True}}


class ComparisonsFacet(Facet):
    """Baselines and A/B comparisons in every output; nothing when nothing is compared."""

    def __init__(self, current: Callable[[], Comparisons | None], cases: Mapping[str, CaseRef]) -> None:
        """``current``: the session's comparisons (``SessionComparisons.current``; None when nothing is compared);
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
            "comparisons": [result.comparison_dict(c) for c in result.heads if c.kind != BASELINE_KIND],
            "baseline": result.baseline_dict(),
        }

    def series(self) -> list[Series]:
        result = self.current()
        return [] if result is None else series(result, self.cases)


def section(result: Comparisons) -> list[Line]:
    if not result.comparisons and result.baseline is None:
        return []
    lines: list[Line] = []
    baselined = [c for c in result.heads if c.kind == BASELINE_KIND]
    if result.baseline is not None:
        cases = result.pairs()
        counts = {v: sum(1 for p in cases.values() if p.verdict == v) for v in _MARKUP}
        reports = len(result.baseline.paths)
        head = f"  Baseline: {len(cases)} cases compared with {reports} report{'s' if reports != 1 else ''}"
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
        graded = [c for c in result.comparisons if c.kind == BASELINE_KIND and c.measure.key != PASS]
        if graded:
            lines.append(("    mean scores, current minus baseline (margins are shares of each score's range):", {}))
            lines += _table(graded, with_inputs=True)
        for title, labels in (
            ("new (not compared)", result.new),
            ("removed", result.removed),
            ("changed parameters (not compared)", result.changed),
        ):
            if labels:
                shown = ", ".join(labels[:10]) + (f", … ({len(labels) - 10} more)" if len(labels) > 10 else "")
                lines.append((f"    {title}: {shown}", {}))
    arms = [c for c in result.heads if c.kind != BASELINE_KIND]
    if arms:
        lines += [("", {}), ("  Comparisons (A/B): arm minus baseline variant, in points", {"bold": True})]
        lines += _table(arms, with_inputs=len({p.key for c in arms for p in c.pairs}) <= 20)
        graded = [c for c in result.comparisons if c.kind != BASELINE_KIND and c.measure.key != PASS]
        if graded:
            lines.append(("    mean scores, arm minus baseline variant:", {}))
            lines += _table(graded, with_inputs=len({p.key for c in graded for p in c.pairs}) <= 20)
    return lines


def _table(comparisons: list[Comparison], with_inputs: bool) -> list[Line]:
    """One measure's comparisons (and, ``with_inputs``, their pairs) as the section's aligned rows."""
    from .pairs import p_text  # only once something is compared

    cells: list[tuple[list[str], str, dict[str, Any]]] = []
    for c in comparisons:
        measure = c.measure
        name = c.function if c.kind == BASELINE_KIND else f"{c.function} [{c.axis}] {c.arm} vs {c.baseline}"
        if measure.key != PASS:
            name += f" {measure.name}"
        cost = "" if c.cost_ratio is None else f"cost ×{c.cost_ratio:.2f}"
        if c.kind != BASELINE_KIND and c.correlation is not None and measure.key == PASS:
            cost = "  ".join(part for part in (f"r={c.correlation:.2f}", cost) if part)  # pairing's gain
        extra = f"{c.paired} {'cases' if c.kind == BASELINE_KIND else 'inputs'}"
        if c.unpaired:
            extra += f", {len(c.unpaired)} unpaired"
        verdict = c.verdict.upper() if c.verdict else ""
        if c.judged:
            cost = "  ".join(part for part in (cost, measure.margin_shown(c.margin, c.equivalence)) if part)
            if c.suppressed is not None and c.verdict == UNDECIDED:
                verdict += f" ({c.suppressed})"
        cells.append(
            (
                [
                    name,
                    extra,
                    measure.points(c.difference),
                    measure.interval_text(c.ci),
                    f"p_adj {p_text(c.p_adjusted)}",
                    cost,
                ],
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
                            measure.sides_text(p.arm, p.base),
                            measure.points(p.difference),
                            measure.interval_text(p.ci),
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

#: Each kind of measure's per-case baseline gauges: the name's stem, what its baseline value is called, and
#: the words of their descriptions (the pass fraction's names are those the plugin has always exported).
_GAUGES = {
    FRACTION: ("probability.case.baseline", "pass_fraction", "pass fraction", "The case's pass fraction"),
    SCORE: ("probability.case.baseline.score", "mean", "mean score", "The case's mean score"),
}


def series(result: Comparisons, cases: Mapping[str, CaseRef]) -> list[Series]:
    """Gauges per baselined case and measure: the baseline's value, tonight's difference from it and its
    interval's bounds, the adjusted p, and the verdict; a score's carry ``probability.score.name``.

    ``cases`` maps case keys to tonight's CaseRefs, which name each series as every per-case
    series is named (``model.outputs.case_attributes``)."""
    found: list[Series] = []
    for unit, (stem, base_name, what, whose) in _GAUGES.items():
        pairs = [pair for pair in result.cases.values() if pair.measure.unit == unit]
        if not pairs:
            continue
        score = "score " if unit == SCORE else ""
        base = Series(f"{stem}.{base_name}", "gauge", "1", f"{whose} in the baseline reports, pooled")
        difference = Series(f"{stem}.difference", "gauge", "1", f"Tonight's {what} minus the baseline's")
        lower = Series(
            f"{stem}.difference.lower",
            "gauge",
            "1",
            f"Lower bound of the {score}difference's interval (at the adjusted level)",
        )
        upper = Series(
            f"{stem}.difference.upper",
            "gauge",
            "1",
            f"Upper bound of the {score}difference's interval (at the adjusted level)",
        )
        p_adjusted = Series(
            f"{stem}.p_adjusted", "gauge", "1", f"Adjusted p-value of the {score}comparison with the baseline"
        )
        # Unit "" (not "1"): -1/0/1 is not a ratio, and Prometheus would append _ratio.
        verdict = Series(
            f"{stem}.verdict",
            "gauge",
            "",
            f"Baseline {score}verdict: 1 pass, 0 undecided, -1 fail (a drop)",
        )
        for pair in pairs:
            attributes: dict[str, Any] = case_attributes(cases[pair.key])
            if unit == SCORE:
                attributes["probability.score.name"] = pair.measure.name
            estimate = pair.measure.estimate(pair.base)
            if estimate is not None:
                base.points.append((attributes, estimate))
            if pair.difference is not None:
                difference.points.append((attributes, pair.difference))
            if pair.ci is not None:
                lower.points.append((attributes, pair.ci.low))
                upper.points.append((attributes, pair.ci.high))
            if pair.p_adjusted is not None:
                p_adjusted.points.append((attributes, pair.p_adjusted))
            if pair.verdict is not None:
                verdict.points.append((attributes, VERDICT_VALUES[pair.verdict]))
        found += [base, difference, lower, upper, p_adjusted, verdict]
    return found
