"""Comparisons' part of ``--prob-explain``: a plain-language reading of the baseline and of each comparison.

:class:`ComparisonReadings` gives the ``Explained`` section's readings of the
baseline and of each comparison, the JSON report's ``comparisons`` and
``baseline`` with an ``explanation`` beside each, and the ``points`` entry of
the methods used, from the same comparisons the facet shows.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ...protocols import Readings
from ...report.readings import p_sentence, points
from ...vocabulary import BASELINE_KIND, FAILED, PASSED, UNDECIDED

if TYPE_CHECKING:
    from ...config.settings import StatsConfig
    from .comparisons import Comparison, Comparisons


class ComparisonReadings(Readings):
    def __init__(self, current: Callable[[], Comparisons | None], config: StatsConfig) -> None:
        """``current``: the session's comparisons (None: nothing compared)."""
        self.current = current
        self.config = config

    def readings(self) -> Sequence[tuple[str, str]]:
        result = self.current()
        if result is None:
            return []
        readings = []
        if result.baseline is not None:
            readings.append(("baseline", self.baseline(result)))
        for comparison in result.heads:
            title = (
                f"baseline: {comparison.function}"
                if comparison.kind == BASELINE_KIND
                else f"compare: {comparison.function} {comparison.arm} vs {comparison.baseline}"
            )
            readings.append((title, self.comparison(comparison, result)))
        return readings

    def explained_fields(self) -> Mapping[str, Any]:
        result = self.current()
        if result is None:
            return {}
        fields: dict[str, Any] = {
            "comparisons": [
                {**c.to_dict(), "explanation": self.comparison(c, result)}
                for c in result.heads
                if c.kind != BASELINE_KIND
            ]
        }
        baseline = result.baseline_dict()
        if baseline is not None:
            listed = [c for c in result.heads if c.kind == BASELINE_KIND]
            baseline["comparisons"] = [{**c.to_dict(), "explanation": self.comparison(c, result)} for c in listed]
            baseline["explanation"] = self.baseline(result)
            fields["baseline"] = baseline
        return fields

    def glossary(self) -> Sequence[tuple[int, str, str]]:
        return [
            (
                40,
                "points",
                "Differences in pass rate, in percentage points, arm (or this run) minus baseline; "
                "the range comes from the sign-flip test over inputs from "
                f"{self.config.min_inputs} paired inputs on, else from the inputs taken as fixed.",
            )
        ]

    def comparison(self, comparison: Comparison, result: Comparisons) -> str:
        c = comparison
        baseline = c.kind == BASELINE_KIND
        arm = "this run" if baseline else c.arm
        base = (
            f"the baseline ({', '.join(p.rsplit('/', 1)[-1] for p in result.baseline.paths)})"
            if baseline and result.baseline is not None
            else "the baseline"
            if baseline
            else c.baseline
        )
        unit = "cases" if baseline else "inputs"
        where = (
            f"the {c.paired} cases of {c.function} in both reports"
            if baseline
            else f"the {c.paired} inputs both arms ran"
        )
        if c.difference is None:
            return f"No {unit} of {c.function} have counted runs on both sides, so nothing could be compared."
        gap = abs(c.difference) * 100
        more = "more" if c.difference > 0 else "fewer"
        parts = [
            f"Over {where}, {arm} passed {gap:.1f} points {more} of its runs than {base} on average, each "
            f"{unit[:-1]} counting equally."
            if c.difference
            else f"Over {where}, {arm} passed as many of its runs as {base} on average."
        ]
        if c.ci is not None:
            low, high = c.ci.low, c.ci.high
            if low > 0:
                tell = f"so {arm} probably does better than {base}"
            elif high < 0:
                tell = f"so {arm} probably does worse than {base}"
            else:
                tell = f"so the data cannot tell whether {arm} does better or worse than {base}"
            parts.append(
                f"The true {'change' if baseline else 'difference'} is probably between {points(low)} and "
                f"{points(high)} points ({c.ci.level:.0%} confidence), {tell}."
            )
            if c.suppressed is not None:
                parts.append(
                    f"With fewer than {self.config.min_inputs} paired {unit} (prob_min_inputs), the {unit} are "
                    f"taken as fixed: the range holds for these {unit} only, not for {unit} like them."
                )
        text = " ".join(parts)
        paragraphs = [text]
        p_text = p_sentence(c.p_adjusted if c.adjustment != "none" else c.p)
        if p_text:
            if c.family > 1:
                if c.adjustment == "none":
                    p_text += (
                        f" This session makes {c.family} such comparisons and their p-values are not adjusted "
                        "for that, so read them as exploratory (--prob-adjust=holm adjusts them)."
                    )
                else:
                    p_text += (
                        f" It is adjusted ({c.adjustment}) for the {c.family} such comparisons of this session, "
                        "so that chance alone rarely makes any of them look significant."
                    )
            paragraphs.append(p_text)
        if c.judged:
            m = f"{c.margin * 100:g}"
            source = " (--prob-margin)" if baseline else ""
            if c.equivalence:
                rule = (
                    f"Your margin{source} is {m} points: {arm} passes if it is within {m} points of {base} either way, "
                    f"which needs the whole range between \u2212{m} and +{m} points."
                )
            else:
                rule = (
                    f"Your margin{source} is {m} points: {arm} passes if it is at most {m} points worse than {base}, "
                    f"which needs the whole range above \u2212{m} points."
                )
            rule += {
                PASSED: " It is, so it passes.",
                FAILED: (
                    f" The whole range is below it, so {'the benchmark dropped' if baseline else arm + ' is worse'} "
                    "by more than the margin allows."
                    if not c.equivalence or (c.ci and c.ci.high < -c.margin)
                    else " The whole range is outside it, so the two differ by more than the margin allows."
                ),
                UNDECIDED: (
                    " There is no range that can decide yet, so the verdict is UNDECIDED."
                    if c.suppressed
                    else " The range crosses it, so the verdict is UNDECIDED."
                ),
            }.get(c.verdict or UNDECIDED, "")
            if c.verdict == UNDECIDED:
                rule += (
                    " Until that's settled, it fails the test session (--prob-undecided=pass would let it through)."
                    if self.config.undecided == FAILED
                    else " Under --prob-undecided=pass it does not fail the session."
                )
            paragraphs.append(rule)
            if c.verdict == FAILED:
                paragraphs.append(
                    f"Next: look at {c.function}'s failing runs (-rx lists them)"
                    + (" and at what changed since the baseline." if baseline else f", or keep {c.baseline}.")
                )
            elif c.verdict == UNDECIDED:
                paragraphs.append(
                    f"Next: add {unit} to reach {self.config.min_inputs}."
                    if c.suppressed
                    else f"Next: run more, or add {unit}: --prob-plan says how many."
                )
        return "\n".join(paragraphs)

    def baseline(self, result: Comparisons) -> str:
        base = result.baseline
        assert base is not None
        names = ", ".join(p.rsplit("/", 1)[-1] for p in base.paths)
        created = max(base.created, default="")
        parts = [
            f"This run is set against an earlier report, {names}"
            + (f", written {created}," if created else ",")
            + " case by case: a case found in both is paired with itself, and each bench function's pass rate is "
            "compared, this run minus the baseline."
        ]
        if result.new:
            parts.append(
                f"{len(result.new)} case{'s' if len(result.new) != 1 else ''} ran only in this run (new, or with a "
                "changed parametrize id): listed below the comparisons and left out of them, so "
                f"{'they' if len(result.new) != 1 else 'it'} can't fail the gate."
            )
        if result.removed:
            parts.append(
                f"{len(result.removed)} case{'s' if len(result.removed) != 1 else ''} of the baseline did not run."
            )
        if result.config.margin_given:
            parts.append(
                f"With --prob-margin={result.config.margin:g}, each function's verdict decides: the failing runs "
                "of cases found in the baseline are reported as xfailed, and a function that FAILs fails the "
                "test session."
            )
        else:
            parts.append(
                "Without --prob-margin the comparison only reports: the exit status is what it would be "
                "without --prob-baseline."
            )
        return "\n".join(parts)
