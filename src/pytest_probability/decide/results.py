"""The session's results: its rows and what they mean, computed once per change of the records.

:class:`Results` aggregates the session's records (``State.records``) into a
:class:`~pytest_probability.model.rows.Summary` and analyses it into an
:class:`~.analysis.Analysis`, each cached until a record arrives or changes
(``State.revision``). Every reporter and exporter reads these two.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Callable

from ..aggregate.cases import aggregate
from ..config.spec import CaseSpec
from ..model.case import CaseRef
from ..model.rows import Summary
from .analysis import Analysis, analyze

if TYPE_CHECKING:
    from ..session import State
    from .book import DecisionBook


def ungated(spec_of: Callable[[CaseRef], CaseSpec]) -> Callable[[CaseRef], CaseSpec]:
    """A case's spec without its gates, for a shard: the merge judges them over every shard's runs."""

    def of(case: CaseRef) -> CaseSpec:
        spec = spec_of(case)
        return replace(spec, gate=None, max_latency=None) if spec.gated else spec

    return of


class Results:
    def __init__(self, state: State, book: DecisionBook, deferred: bool = False) -> None:
        """``deferred``: a shard's (``--prob-shard``), which judges no gate on its part of the runs: its
        analysis has the intervals, latency and metrics of its rows, and no gate or latency verdict."""
        self.state = state
        self.book = book
        self.deferred = deferred
        self._summary: tuple[int, Summary] | None = None
        self._analysis: tuple[int, Analysis] | None = None

    def summary(self) -> Summary:
        revision = self.state.revision
        if self._summary is None or self._summary[0] != revision:
            self._summary = (revision, aggregate(self.state.records))
        return self._summary[1]

    def analysis(self) -> Analysis:
        """Intervals, gates, latency and metrics of the rows."""
        revision = self.state.revision
        if self._analysis is None or self._analysis[0] != revision:
            summary = self.summary()
            specs = self.state.specs
            spec_of = ungated(specs.of) if self.deferred else specs.of
            self._analysis = (revision, analyze(summary, specs.config, spec_of, self.book.missing_runs(summary.rows),
                                                self.book.rescheduled))
        return self._analysis[1]

    def release(self) -> None:
        """Let go of the rows and the analysis (after the session)."""
        self._summary = self._analysis = None
