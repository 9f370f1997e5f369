"""The session's results: its rows and what they mean, computed once per change of the records.

:class:`Results` aggregates the session's records (the intake's) into a
:class:`~pytest_probability.model.rows.Summary` and analyses it into an
:class:`~.analysis.Analysis`, each cached until a record arrives or changes
(the intake's ``revision``). Every reporter and exporter reads these two.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from ..aggregate.cases import aggregate
from ..model.case import CaseRef
from ..model.rows import Summary
from .analysis import Analysis, analyze

if TYPE_CHECKING:
    from ..config.spec import CaseSpec, Specs
    from ..record.intake import Intake
    from ..session import Scope
    from .book import DecisionBook


def ungated(spec_of: Callable[[CaseRef], CaseSpec]) -> Callable[[CaseRef], CaseSpec]:
    """A case's spec without its gates, for a shard: the merge judges them over every shard's runs."""

    def of(case: CaseRef) -> CaseSpec:
        spec = spec_of(case)
        return spec.replace(gate=None, max_latency=None, scores=()) if spec.gated else spec

    return of


class Results:
    def __init__(self, intake: Intake, book: DecisionBook, specs: Specs, scope: Scope) -> None:
        """``scope``: a session holding part of the night (a shard) judges no gate on its part of the runs:
        its analysis has the intervals, latency and metrics of its rows, and no gate or latency verdict."""
        self.intake = intake
        self.book = book
        self.specs = specs
        self.scope = scope
        self._summary: tuple[int, Summary] | None = None
        self._analysis: tuple[int, Analysis] | None = None

    @property
    def deferred(self) -> bool:
        """Whether the verdicts are made elsewhere (at the merge of the shards)."""
        return self.scope.partial is not None

    def summary(self) -> Summary:
        revision = self.intake.revision
        if self._summary is None or self._summary[0] != revision:
            self._summary = (revision, aggregate(self.intake.records))
        return self._summary[1]

    def analysis(self) -> Analysis:
        """Intervals, gates, latency and metrics of the rows."""
        revision = self.intake.revision
        if self._analysis is None or self._analysis[0] != revision:
            summary = self.summary()
            specs = self.specs
            spec_of = ungated(specs.of) if self.deferred else specs.of
            self._analysis = (
                revision,
                analyze(summary, specs.config, spec_of, self.book.missing_runs(summary.rows), self.book.rescheduled),
            )
        return self._analysis[1]

    def release(self) -> None:
        """Let go of the rows and the analysis (after the session)."""
        self._summary = self._analysis = None


class FixedResults(Results):
    """Results computed once elsewhere (the merge's, over every shard's records), read as a session's."""

    def __init__(self, summary: Summary, analysis: Analysis) -> None:  # noqa: D107 - no intake: nothing changes
        self._fixed = (summary, analysis)
        self._summary = self._analysis = None

    @property
    def deferred(self) -> bool:
        return False

    def summary(self) -> Summary:
        return self._fixed[0]

    def analysis(self) -> Analysis:
        return self._fixed[1]

    def release(self) -> None:
        pass
