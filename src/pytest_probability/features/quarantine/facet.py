"""How quarantine reaches every output: :class:`QuarantineFacet`.

A quarantined row gets ``QUARANTINED`` in the table, ``rows[].quarantine``
(its entry) in the JSON, and the gauge ``probability.case.quarantined``; the
report gets ``quarantine`` (the file, the entries, how many cases each
matched, which would have failed, which entries ended) and the gauge
``probability.session.quarantined``.
"""

from __future__ import annotations

import datetime as _dt
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ...model.outputs import Line, Series, case_attributes
from ...model.rows import Row, Summary
from ...protocols import Facet
from ...text import label_text
from ...vocabulary import STATUS_PASS, STATUS_SKIP

if TYPE_CHECKING:
    from ...decide.analysis import Analysis
    from .quarantine_file import Cases, Entry

#: Quarantined cases named under the table; the rest are counted.
NAMED = 10


class QuarantineFacet(Facet):
    def __init__(
        self,
        cases: Cases,
        source: str,
        entries: Sequence[Entry],
        today: _dt.date | None,
        summary: Callable[[], Summary],
        analysis: Callable[[], Analysis],
    ) -> None:
        """``entries``: every entry of the file (those in force are ``cases``'); ``today``: the day their
        ends are read against (None in the merge: the shards' entries in force are given)."""
        self.cases = cases
        self.source = source
        self.entries = list(entries)
        self.today = today
        self.summary = summary
        self.analysis = analysis

    def _quarantined(self) -> list[tuple[Row, Entry]]:
        found = []
        for row in self.summary().rows:
            entry = self.cases.entry(row.case.key)
            if entry is not None:
                found.append((row, entry))
        return found

    def failing(self, row: Row) -> bool:
        """Whether the row would have failed the session: a failed gate (or undecided that counts as failed),
        or, ungated, a run that did not pass."""
        result = self.analysis().by_key.get(row.case.key)
        if result is not None and result.verdict is not None:
            return result.decided_pass(self.analysis().config.undecided) is False
        return row.status not in (STATUS_PASS, STATUS_SKIP)

    def cells(self, row: Row) -> Sequence[str]:
        return ("QUARANTINED" if self.cases.entry(row.case.key) is not None else "",)

    def row_fields(self, row: Row) -> Mapping[str, Any]:
        entry = self.cases.entry(row.case.key)
        return {"quarantine": None if entry is None else {**entry.to_dict(), "failing": self.failing(row)}}

    def report_fields(self) -> Mapping[str, Any]:
        quarantined = self._quarantined()
        matched: dict[int, int] = {}
        for _, entry in quarantined:
            matched[entry.index] = matched.get(entry.index, 0) + 1
        active = {entry.index for entry in self.cases.entries}
        return {
            "quarantine": {
                "file": self.source,
                "cases": len(quarantined),
                "failing": sum(1 for row, _ in quarantined if self.failing(row)),
                "entries": [
                    {**entry.to_dict(), "in_force": entry.index in active, "cases": matched.get(entry.index, 0)}
                    for entry in self.entries
                ],
                "expired": [entry.to_dict() for entry in self.entries if entry.index not in active],
            }
        }

    def lines(self) -> Sequence[Line]:
        quarantined = self._quarantined()
        expired = [entry for entry in self.entries if entry not in self.cases.entries]
        if not quarantined and not expired:
            return []
        failing = [row for row, _ in quarantined if self.failing(row)]
        head = (
            f"  Quarantine: {len(quarantined)} case(s) quarantined, {len(failing)} of them failing "
            "(their failures did not fail the session)"
        )
        lines: list[Line] = [("", {}), (head, {"bold": True, **({"yellow": True} if failing else {})})]
        for row, entry in quarantined[:NAMED]:
            word = "FAILING" if self.failing(row) else "passing"
            lines.append(
                (
                    f"    {label_text(row.label)}  {word}  ({entry.owner}, until {entry.until.isoformat()}"
                    + (f": {entry.reason}" if entry.reason else "")
                    + ")",
                    {},
                )
            )
        if len(quarantined) > NAMED:
            lines.append((f"    … and {len(quarantined) - NAMED} more", {}))
        for entry in expired:
            lines.append(
                (
                    f"    ended {entry.until.isoformat()}: {entry.pattern!r} ({entry.owner}) gates again",
                    {"yellow": True},
                )
            )
        unmatched = [entry for entry in self.cases.entries if not any(e is entry for _, e in quarantined)]
        for entry in unmatched:
            lines.append((f"    no case matched {entry.pattern!r} ({entry.owner})", {}))
        return lines

    def series(self) -> list[Series]:
        quarantined = self._quarantined()
        case = Series(
            "probability.case.quarantined",
            "gauge",
            "",
            "1 for a quarantined case (--prob-quarantine): it never gates or fails the session",
        )
        session = Series(
            "probability.session.quarantined",
            "gauge",
            "{case}",
            "Quarantined cases of the session, and how many of them would have failed it",
        )
        for row, _ in quarantined:
            case.points.append((case_attributes(row.case), 1))
        session.points.append(
            ({"probability.quarantine.failing": "false"}, sum(1 for row, _ in quarantined if not self.failing(row)))
        )
        session.points.append(
            ({"probability.quarantine.failing": "true"}, sum(1 for row, _ in quarantined if self.failing(row)))
        )
        return [case, session]
