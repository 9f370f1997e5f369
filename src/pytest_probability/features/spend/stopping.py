"""Early stopping (``--prob-stop``, ``stop=``): the rule that stops a case whose verdict its remaining runs can no
longer change, as a sink of the aggregating process; the decision book publishes the stop to every worker."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ...decide import gates
from ...protocols import RecordSink

if TYPE_CHECKING:
    from ...config.spec import Specs
    from ...decide.book import DecisionBook
    from ...model.run import RunRecord, Usage


class EarlyStop(RecordSink):
    """Stops a case whose verdict its remaining runs can no longer change, or whose sequential test has
    decided (``--prob-stop``, ``stop=``): ``decide.gates.early_verdict`` on the runs the book has counted."""

    def __init__(self, book: DecisionBook, specs: Specs) -> None:
        self.book = book
        self.specs = specs

    def add(self, record: RunRecord) -> None:
        case = record.case
        if record.stopped or case.key in self.book.stopped:
            return
        spec = self.specs.of(case)
        if not spec.stoppable:
            return
        tally = self.book.tally(case)
        if tally is None:
            return
        reported, planned, counts = tally
        verdict = gates.early_verdict(spec, counts.passes, counts.fails, counts.errors, planned - reported)
        if verdict is not None:
            assert spec.gate is not None
            self.book.stop_case(case.key, f"{verdict.upper()} decided after {reported} of {planned} runs ({spec.gate.stop})")

    def add_late(self, usage: Usage | None, extra_cost: float) -> None:
        """Late usage changes no outcome."""
