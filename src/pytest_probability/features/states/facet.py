"""How each case's state across nights reaches every output: :class:`StatesFacet`.

Tonight's counts of every row are the last night of its story; the nights
before come from the history folder (:mod:`.nights`). The facet gives a table
column (``newly flaky``, ``broken since 2026-11-28``, ``fixed``), the line of
changes under the table, the JSON ``rows[].history`` and ``states``, and the
gauges ``probability.case.state`` and ``probability.case.state.changed``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from ...maths.states import BAD, BROKEN, FAILING, FIXED, FLAKY, STATE_VALUES, STATES, Night, Rule, Story, story
from ...model.outputs import Line, Series, case_attributes
from ...model.rows import Row, Summary
from ...protocols import Facet
from ...text import label_text
from .nights import Nights

#: Cases named per kind of change in the line under the table; the rest are counted.
NAMED = 5
_MARKUP = {FLAKY: {"yellow": True}, FAILING: {"red": True}, BROKEN: {"red": True}, FIXED: {"green": True}}


class StatesFacet(Facet):
    """Each case's state tonight, decided over the history folder's nights and tonight's row."""

    def __init__(self, summary: Callable[[], Summary], nights: Nights, rule: Rule, tonight: str, folder: str) -> None:
        self.summary = summary
        self.nights = nights
        self.rule = rule
        self.tonight = tonight
        self.folder = folder
        self._cache: tuple[Summary, dict[str, Story]] | None = None

    def stories(self) -> dict[str, Story]:
        """Case key -> tonight's story, for every row with counted runs tonight (computed once per summary)."""
        summary = self.summary()
        if self._cache is not None and self._cache[0] is summary:
            return self._cache[1]
        found: dict[str, Story] = {}
        for row in summary.rows:
            tonight = Night(self.tonight, row.counts.passes, row.counts.total) if row.counts.total else None
            if tonight is None:
                continue
            told = story(self.nights.of(row.case.key, row.label, tonight), self.rule)
            if told is not None:
                found[row.case.key] = told
        self._cache = (summary, found)
        return found

    def cells(self, row: Row) -> Sequence[str]:
        told = self.stories().get(row.case.key)
        return (state_cell(told),)

    def row_fields(self, row: Row) -> Mapping[str, Any]:
        told = self.stories().get(row.case.key)
        return {"history": None if told is None else story_dict(told)}

    def report_fields(self) -> Mapping[str, Any]:
        stories = self.stories()
        labels = {row.case.key: row.label for row in self.summary().rows}
        counts = {state: 0 for state in STATES}
        changes: dict[str, list[str]] = {state: [] for state in (FLAKY, FAILING, BROKEN, FIXED)}
        for key, told in stories.items():
            counts[told.state] += 1
            if told.changed and told.state in changes:
                changes[told.state].append(labels[key])
        return {
            "states": {
                "folder": self.folder,
                "nights_read": len(self.nights.days),
                "nights": list(self.nights.days),
                "tonight": self.tonight,
                "rule": self.rule.to_dict(),
                "counts": counts,
                "changes": changes,
            }
        }

    def lines(self) -> Sequence[Line]:
        stories = self.stories()
        if not stories:
            return []
        labels = {row.case.key: row.label for row in self.summary().rows}
        return [("", {}), *change_lines(stories, labels, len(self.nights.days), self.rule.window)]

    def series(self) -> list[Series]:
        stories = self.stories()
        state = Series(
            "probability.case.state",
            "gauge",
            "",
            "The case's state across nights: 0 new, 1 passing, 2 fixed, 3 flaky, 4 failing, 5 broken",
        )
        changed = Series(
            "probability.case.state.changed",
            "gauge",
            "",
            "1 when the case entered its state tonight (newly flaky, newly broken, fixed), else 0",
        )
        for row in self.summary().rows:
            told = stories.get(row.case.key)
            if told is None:
                continue
            attributes = case_attributes(row.case)
            state.points.append((attributes, STATE_VALUES[told.state]))
            changed.points.append((attributes, 1 if told.changed else 0))
        return [state, changed] if state.points else []


def state_cell(told: Story | None) -> str:
    if told is None or told.state not in BAD | {FIXED}:
        return ""
    if told.changed:
        return "FIXED" if told.state == FIXED else f"newly {told.state}"
    if told.state == FIXED:
        return ""
    return f"{told.state} since {told.since}"


def story_dict(told: Story) -> dict[str, Any]:
    return {
        "state": told.state,
        "since": told.since,
        "changed": told.changed,
        "previous": told.previous,
        "first_flaky": told.first_flaky,
        "nights": told.nights,
        "evidence": {
            "passes": told.passes,
            "total": told.total,
            "nights": told.evidence_nights,
            "low": told.low,
            "high": told.high,
        },
        "flake_rate": {
            "fails": told.fails,
            "runs": told.runs,
            "fraction": told.flake_rate,
            "low": told.flake_low,
            "high": told.flake_high,
        },
    }


def _names(labels: list[str]) -> str:
    shown = ", ".join(label_text(label) for label in labels[:NAMED])
    return shown + (f", … ({len(labels) - NAMED} more)" if len(labels) > NAMED else "")


def change_lines(stories: Mapping[str, Story], labels: Mapping[str, str], nights: int, window: int) -> list[Line]:
    """``Nightly: 2 newly flaky, 1 broken since 2026-11-28, 3 fixed`` and the cases of each, under the table."""
    newly: dict[str, list[str]] = {FLAKY: [], FAILING: [], FIXED: []}
    broken: dict[str, list[str]] = {}
    for key, told in stories.items():
        if told.state == BROKEN:
            broken.setdefault(told.since, []).append(labels[key])
        elif told.changed and told.state in newly:
            newly[told.state].append(labels[key])
    parts: list[tuple[str, list[str]]] = []
    for state in (FLAKY, FAILING):
        if newly[state]:
            parts.append((f"{len(newly[state])} newly {state}", newly[state]))
    for since, cases in sorted(broken.items()):
        parts.append((f"{len(cases)} broken since {since}", cases))
    if newly[FIXED]:
        parts.append((f"{len(newly[FIXED])} fixed", newly[FIXED]))
    still = sum(1 for told in stories.values() if told.state in (FLAKY, FAILING) and not told.changed)
    head = "  Nightly: " + (", ".join(text for text, _ in parts) if parts else "no case changed state")
    head += f" ({still} still flaky or failing; {nights} earlier night{'s' * (nights != 1)} read, window {window})"
    markup = {"bold": True, **({"yellow": True} if parts else {})}
    lines: list[Line] = [(head, markup)]
    for text, cases in parts:
        lines.append((f"    {text}: {_names(cases)}", {}))
    return lines
