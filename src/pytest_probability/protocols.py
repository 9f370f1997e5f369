"""The extension points: what a feature plugs into a session, one small protocol per kind.

As with the OpenTelemetry SDK's span processors and exporters, a feature is
an object per kind of contribution, registered once by the composition root
(:mod:`pytest_probability.configure`) on the session's
:class:`~pytest_probability.session.State`. Each protocol says in which
process it is called and when. Where a protocol has several methods, its
methods here do nothing: a feature subclasses it explicitly and implements
only what it contributes.

========================  =================================  ====================================
protocol                  called in                          implemented by
========================  =================================  ====================================
:class:`RunObserver`      the process executing runs         the run spans (``otel.spans``)
:class:`Decisions`        the process executing runs         the decision book (serial), the
                                                             channel's reader (xdist worker)
:class:`VerdictKind`      collection (every process), and    the comparisons' ``baseline`` and
                          the decision book                  ``compare`` kinds
:class:`ItemsCheck`       collection (every process)         the comparisons (axes, ``--prob-plan``)
:class:`RecordSink`       the aggregating process            the decision book
:class:`Link`             the xdist controller and workers   the decisions channel, late usage,
                          (and a serial session's reports)   the export
:class:`Facet`            the aggregating process, at the    statistics, spend, comparisons
                          end (every output reads it)
:class:`Finisher`         the aggregating process, once      gate settlement, the reports,
                                                             the export
========================  =================================  ====================================

This module imports only the model: a protocol's types never reach into a stage.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Iterable, Mapping, Protocol, Sequence

if TYPE_CHECKING:
    import pytest

    from .model.case import CaseRef
    from .model.outputs import Line, Series, Verdict
    from .model.rows import Row, Summary
    from .model.run import CurrentRun, RunRecord, Usage


class RunObserver(Protocol):
    """Sees each run in the process executing it (a serial session, or an xdist worker).

    ``phase_raised`` is called only for a setup, call or teardown that raised
    (a hook per phase of every run costs a sizeable part of a trivial run).
    ``run_finished`` runs at the teardown report, before the record is built, so
    it can still add to ``run.report_extras``; ``run_closed`` always runs last,
    also for a run interrupted before its teardown.
    """

    def run_started(self, item: pytest.Item, run: CurrentRun) -> None: ...

    def phase_raised(self, item: pytest.Item, run: CurrentRun, call: pytest.CallInfo[None]) -> None: ...

    def run_finished(self, item: pytest.Item, run: CurrentRun) -> None: ...

    def run_closed(self, item: pytest.Item, run: CurrentRun) -> None: ...


class Decisions(Protocol):
    """The aggregating process's decisions, as a process executing runs sees them."""

    def run_decision(self, case: CaseRef) -> tuple[str, str] | None:
        """(cause, reason) when a run of ``case`` must not start (``decided`` early, a ``budget``
        reached), else None. Asked before each run's setup."""
        ...

    def verdict(self, key: str) -> Verdict:
        """A verdict item's verdict (``key``: a case key, or ``<case key>[kind]``), once its runs
        have reported. Asked by the verdict item, which runs after them."""
        ...


class VerdictKind(Protocol):
    """A decision besides gates that judges a benchmark's cases together: the comparison with the
    baseline (``bench_cls[baseline]``) or one A/B arm's (``bench_triage[compare:ARM]``).

    Each verdict gets a verdict item beside its benchmark, after all of the
    benchmark's runs, and the failing runs of the cases it judges are reported
    as xfailed (the item decides). A verdict's key is its item's node id
    (:func:`pytest_probability.vocabulary.verdict_key`).
    """

    #: The item's name suffix: ``baseline`` gives ``bench_cls[baseline]``, ``compare`` ``bench_triage[compare:ARM]``.
    kind: str

    def considers(self, marks: Mapping[str, Any]) -> bool:
        """At collection, before a benchmark's cases are known: whether a benchmark whose function (and
        its class and module) carry these ``probability`` keywords may get verdicts of this kind. Only
        such a benchmark's cases are collected as its module is, to name its items."""
        ...

    def verdicts(self, cases: Sequence[CaseRef]) -> Sequence[tuple[str, frozenset[str]]]:
        """At collection (every process): one benchmark's verdicts of this kind, each as (detail, keys of
        the cases it judges): ``("", ...)`` for a ``[baseline]``, ``(arm, ...)`` per ``[compare:ARM]``."""
        ...

    def infeasible(self, cases: Sequence[CaseRef], detail: str, judged: frozenset[str]) -> str | None:
        """At collection: why one of :meth:`verdicts` can never pass whatever the runs do (too few paired
        inputs), as an ``InfeasibleGateWarning``'s text; else None."""
        ...

    def decide(self, records: Mapping[str, Mapping[str, RunRecord]], key: str) -> tuple[bool, str]:
        """In the aggregating process: (passed, one line) of verdict ``key``, from the records the
        decision book kept (case key -> node id -> record), once every run of the benchmark reported."""
        ...


class ItemsCheck(Protocol):
    """Looks at the items a session will run, after every other plugin's selection (every process)."""

    def check_items(self, config: pytest.Config, items: list[pytest.Item]) -> None:
        """May raise ``pytest.UsageError``, warn on items, or empty ``items`` (``--prob-plan``)."""
        ...


class RecordSink(Protocol):
    """Takes each run's record as it arrives in the aggregating process."""

    def add(self, record: RunRecord) -> None: ...

    def add_late(self, usage: Usage | None, extra_cost: float) -> None:
        """Usage charged to a run after its record had arrived (late usage): the record in
        ``State.records`` is amended already; a sink that sums spend adds this."""


class Link(Protocol):
    """One feature's part of what passes between the process executing runs and the aggregating one.

    On an xdist controller, :meth:`worker_input` fills each new worker's
    ``workerinput``. In the executing process, a feature puts plain builtins
    under :attr:`attribute` in ``run.report_extras`` (they travel on the run's
    teardown report), and on a worker :meth:`leftover` says what is left to ship
    at the worker's end (into its ``workeroutput``, under the same name). The
    aggregating process hands every such value to :meth:`receive`.
    """

    #: The teardown-report attribute and ``workeroutput`` key; None for a link that ships nothing.
    attribute: str | None = None

    def worker_input(self) -> Mapping[str, Any]:
        return {}

    def receive(self, value: Any) -> None:
        pass

    def leftover(self) -> Any:
        return None


class Facet(Protocol):
    """One feature's part of every output, read from the session's aggregated rows at its end.

    The table, the JSON and HTML reports and the metrics all read the same
    facets, so they agree; a reporter added later reads them too. A facet's
    :meth:`cells` has the same length for every row.
    """

    def cells(self, row: Row) -> Sequence[str]:
        """Table cells after the fraction, right-aligned; a column empty in every row is left out."""
        return ()

    def lines(self) -> Sequence[Line]:
        """Lines after the table's totals (``Gates:``, ``Budget:``)."""
        return ()

    def row_fields(self, row: Row) -> Mapping[str, Any]:
        """Fields merged into the row's object in the JSON report."""
        return {}

    def report_fields(self) -> Mapping[str, Any]:
        """Top-level keys of the JSON report."""
        return {}

    def series(self) -> Iterable[Series]:
        """Metric series, asked only when metrics are exported."""
        return ()


class Finisher(Protocol):
    """Runs once at the session's end in the aggregating process, in registration order.

    ``session.exitstatus`` is current (an earlier finisher may have changed it).
    An ``OSError`` becomes the note ``could not write a report: …`` and exit
    status 3; anything else a finisher must catch itself.
    """

    def finish(self, session: pytest.Session, summary: Summary) -> None: ...


class RunHooks(Protocol):
    """The per-run path as the hook surface (``plugin.py``) calls it; ``run.phases.RunPhases``."""

    def start(self, item: pytest.Item) -> None: ...

    def end(self, item: pytest.Item) -> None: ...

    def before_setup(self, item: pytest.Item) -> None: ...

    def after_phase(self, item: pytest.Item, call: pytest.CallInfo[None], report: pytest.TestReport) -> None: ...

    def check_callable(self, item: pytest.Item) -> None: ...

    def check_unrun(self, item: pytest.Item) -> None: ...

    def retry_call(self, item: pytest.Item, error: BaseException) -> None: ...

    def finish(self) -> list[str]:
        """At the session's end; returns notes (module ``teardown()`` errors)."""
        ...
