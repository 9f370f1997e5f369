"""``--prob-journal``'s part of every output: how many runs a session resumed from its journal, and their spend.

The resumed runs are the session's own (their records are in the rows, the
verdicts and the metrics, as if this session had executed them); this facet
says how many there were and what they had cost, which this session did not
spend again: the ``Journal:`` line under the table, the JSON report's
``journal`` object and two session gauges.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from ...model.outputs import Line, Series
from ...model.run import RunRecord
from ...protocols import Facet
from ...report.terminal import money


class JournalFacet(Facet):
    def __init__(self, path: Path, resumed: Sequence[RunRecord], journal: Any) -> None:
        """``resumed``: the records read back from the journal; ``journal``: its writer
        (``features.journal.writer.JournalWriter``), which counts the runs it wrote and says why it stopped."""
        self.path = path
        self.runs = len({record.nodeid for record in resumed})
        self.cost = sum(record.spend for record in resumed)
        self.tokens = sum(u.input_tokens + u.output_tokens for record in resumed for u in record.usage)
        self.journal = journal

    def lines(self) -> Sequence[Line]:
        if not self.runs:
            return []
        written = self.journal.written
        return [
            ("", {}),
            (
                f"  Journal: {self.runs} run(s) resumed from {self.path}, {written} run now; not spent "
                f"again: {money(self.cost)}, {self.tokens:,} tokens",
                {"bold": True},
            ),
        ]

    def report_fields(self) -> Mapping[str, Any]:
        return {
            "journal": {
                "path": str(self.path),
                "resumed_runs": self.runs,
                "resumed_cost": self.cost,
                "resumed_tokens": self.tokens,
                "written_runs": self.journal.written,
                "error": self.journal.failed,
            }
        }

    def series(self) -> list[Series]:
        runs = Series(
            "probability.session.resumed.runs",
            "gauge",
            "{run}",
            "Runs of the session read back from its journal (--prob-journal), not executed again",
        )
        cost = Series(
            "probability.session.resumed.cost",
            "gauge",
            "{USD}",
            "What the resumed runs had cost (the judge's included), not spent again",
        )
        runs.points.append(({}, self.runs))
        cost.points.append(({}, self.cost))
        return [runs, cost]
