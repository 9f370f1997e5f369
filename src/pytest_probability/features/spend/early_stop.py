"""Early stopping (``--prob-stop``, ``stop=``): the rule that stops a case whose verdict its remaining runs can no
longer change, as a sink of the aggregating process; the decision book publishes the stop to every worker."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ...decide import gates
from ...protocols import RecordSink
from ...vocabulary import FAILED, PASSED

if TYPE_CHECKING:
    from ...config.spec import CaseSpec, Specs
    from ...decide.book import DecisionBook
    from ...model.rows import Counts
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
        verdict, mode = self._early(spec, counts, reported, planned, case.key)
        if verdict is not None:
            self.book.stop_case(case.key, f"{verdict.upper()} decided after {reported} of {planned} runs ({mode})")

    def _early(self, spec: CaseSpec, counts: Counts, reported: int, planned: int, key: str) -> tuple[str | None, str]:
        """The verdict every part of the case's gate agrees on already, with the stop mode that decided it: FAIL
        as soon as one part that stops has failed, PASS once every part has passed (a part that does not stop,
        or a latency gate, keeps the case running to a PASS)."""
        verdicts: list[str | None] = []
        mode = ""
        if spec.gate is not None:
            verdicts.append(
                gates.early_verdict(spec, counts.passes, counts.fails, counts.errors, planned - reported)
                if spec.gate.stop is not None
                else None
            )
            mode = spec.gate.stop or ""
        if spec.scores:
            records = sorted(self.book.records.get(key, {}).values(), key=lambda record: record.run)
            for score in spec.scores:
                verdicts.append(gates.early_score_verdict(score, records, planned) if score.stops else None)
                mode = mode or score.stop or "sequential"
        if spec.max_latency is not None and spec.scores:
            verdicts.append(None)  # (a rate gate's own early verdict already waits for its latency on a pass)
        if FAILED in verdicts:
            return FAILED, mode
        if verdicts and all(verdict == PASSED for verdict in verdicts):
            return PASSED, mode
        return None, mode

    def add_late(self, usage: Usage | None, extra_cost: float) -> None:
        """Late usage changes no outcome."""
