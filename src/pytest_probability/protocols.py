"""The extension points: what a feature plugs into a session, one small protocol per kind, and their registry.

As with the OpenTelemetry SDK's span processors and exporters, a feature is
an object per kind of contribution, registered once at configure on the
session's :class:`Registry` (by the role object, or by a feature package
for the role it has parts in: :mod:`pytest_probability.roles.wiring`), which
is frozen before collection. Each protocol says in which process it is
called and when. Where a protocol has several methods, its methods here do
nothing: a feature subclasses it explicitly and implements only what it
contributes.

========================  =================================  ====================================
protocol                  called in                          implemented by
========================  =================================  ====================================
:class:`RunObserver`      the process executing runs         the run spans, usage from spans
:class:`RunGuard`         the process executing runs         budgets
:class:`Decisions`        the process executing runs         the decision book (serial), the
                                                             channel's reader (xdist worker)
:class:`VerdictKind`      collection (every process), and    comparisons' ``baseline`` and
                          the decision book                  ``compare`` kinds
:class:`ItemsCheck`       collection (every process)         shards, comparisons, the journal
:class:`RecordLog`        the aggregating process, first     the journal
:class:`RecordSink`       the aggregating process            the decision book, budgets,
                                                             early stopping
:class:`Link`             the xdist controller and workers   decisions, late usage, budgets,
                          (and a serial session's reports)   shards, the journal, the export
:class:`Facet`            the aggregating process, at the    statistics, spend, comparisons,
                          end (every output reads it)        shards, the journal, readings
:class:`Readings`         the aggregating process, at the    comparisons
                          end (``--prob-explain``)
:class:`Finisher`         the aggregating process, once      gates, comparisons, shards, the
                                                             journal, the reports, the export
:class:`Waiver`           the aggregating process, and the   quarantine
                          merge, where a verdict would fail
                          the session
========================  =================================  ====================================

This module imports only the model: a protocol's types never reach into a stage.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, ClassVar, Protocol

if TYPE_CHECKING:
    import pytest

    from .model.case import CaseRef
    from .model.outputs import Line, Series, Verdict
    from .model.rows import Row, Summary
    from .model.run import RunRecord, Usage
    from .model.run_state import CurrentRun


class RunObserver(Protocol):
    """Sees each run in the process executing it (a serial session, or an xdist worker).

    ``phase_raised`` is called only for a setup, call or teardown that raised
    (a hook per phase of every run costs a sizeable part of a trivial run).
    ``run_finished`` runs at the teardown report, before the record is built, so
    it can still add to ``run.report_extras``; ``run_closed`` always runs last,
    also for a run interrupted before its teardown.

    Concurrent runs (``--prob-concurrency``): ``run_started`` is called where the
    run starts executing, which for a run started ahead of its item is its own
    task or thread, in a context of its own (``run.own_context``); the run that
    leads a group executes its call in a task or thread too, where
    ``run_entered`` is called first (what ``run_started`` made current in the
    item's context is made current there too). Such a run's call ended at
    ``run.call_end``.
    """

    def run_started(self, item: pytest.Item, run: CurrentRun) -> None:
        return None  # a default, not `...`: an empty body would be abstract to mypy in a subclass

    def run_entered(self, item: pytest.Item, run: CurrentRun) -> None:
        return None

    def phase_raised(self, item: pytest.Item, run: CurrentRun, call: pytest.CallInfo[None]) -> None:
        return None

    def run_finished(self, item: pytest.Item, run: CurrentRun) -> None:
        return None

    def run_closed(self, item: pytest.Item, run: CurrentRun) -> None:
        return None


class RunGuard(Protocol):
    """Asked before each run's setup in the process executing it, after the :class:`Decisions`: a reason
    of its own for the run not to start (a budget reached)."""

    def check(self, case: CaseRef) -> tuple[str, str] | None:
        """(cause, reason) when the run must not start (``budget``), else None."""
        ...


class Decisions(Protocol):
    """The aggregating process's decisions, as a process executing runs sees them."""

    def run_decision(self, case: CaseRef) -> tuple[str, str] | None:
        """(cause, reason) when a run of ``case`` must not start (its case ``decided`` early), else None.
        Asked before each run's setup."""
        ...

    def verdict(self, key: str) -> Verdict:
        """A verdict item's verdict (``key``: a case key, or ``<case key>[kind]``), once its runs
        have reported. Asked by the verdict item, which runs after them."""
        ...

    def flag(self, name: str) -> str | None:
        """The text a feature published under ``name`` in the aggregating process (a budget reached), else None."""
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

    def fields(self, records: Mapping[str, Mapping[str, RunRecord]], key: str) -> Mapping[str, Any]:
        """In the aggregating process: what :meth:`decide` decided, as numbers and words (``difference``,
        ``low``, ``high``, ``margin``, ``decision``), for the verdict item's JUnit properties; none by default."""
        return {}


class ItemsCheck(Protocol):
    """Looks at the items a session will run, after every other plugin's selection (every process): those
    that :attr:`select` first, then in the order they were registered."""

    #: Whether it deselects the runs other sessions execute (a shard's): then it comes before every other check.
    selects: ClassVar[bool] = False

    def check_items(self, config: pytest.Config, items: list[pytest.Item]) -> None:
        """May raise ``pytest.UsageError``, warn on items, deselect or empty ``items`` (``--prob-plan``)."""
        ...


class RecordLog(Protocol):
    """Sees each finished run's record first, in the aggregating process, before any sink or plugin shows
    its outcome: a durable copy (the journal). Records read back, and runs interrupted before their end,
    are not finished runs."""

    def write(self, record: RunRecord) -> None: ...

    def write_late(
        self, nodeid: str, usage: Mapping[str, Any] | None, extra_cost: float, scores: Sequence[Mapping[str, Any]] = ()
    ) -> None:
        """Usage (or scores) charged to a finished run after its record (late usage), as plain builtins."""


class RecordSink(Protocol):
    """Takes each run's record as it arrives in the aggregating process, in the order sinks were registered."""

    def add(self, record: RunRecord) -> None: ...

    def add_late(self, usage: Usage | None, extra_cost: float) -> None:
        """Usage charged to a run after its record had arrived (late usage): the intake's record is
        amended already; a sink that sums spend adds this."""


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
        return None  # not `pass`: an empty body would be abstract to mypy in a subclass

    def leftover(self) -> Any:
        return None


class Facet(Protocol):
    """One feature's part of every output, read from the session's aggregated rows at its end.

    The table, the JSON and HTML reports and the metrics all read the same
    facets, in the order they were registered, so they agree; a reporter added
    later reads them too. A facet's :meth:`cells` has the same length for every row.
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


class Readings(Protocol):
    """A feature's part of ``--prob-explain``: a plain-language reading of each thing it shows."""

    def readings(self) -> Sequence[tuple[str, str]]:
        """(title, text) of each reading, after the statistics' own in the ``Explained`` section; any
        reading also earns the one-line hint without the flag."""
        return ()

    def explained_fields(self) -> Mapping[str, Any]:
        """Top-level JSON keys with an ``explanation`` beside each thing read (the facet's with readings)."""
        return {}

    def glossary(self) -> Sequence[tuple[int, str, str]]:
        """(place, name, text) of the methods its readings use, shown under ``Methods used`` when it has
        readings; ``place`` orders them among the statistics' entries (10 the interval, 20 inputs, 30 the
        gate, 50 latency)."""
        return ()


class Waiver(Protocol):
    """Excuses a case from failing the session while its verdicts are still decided and shown (quarantine):
    asked wherever a failed verdict would fail the session or mark ``--lf``'s cache (the gates'
    settlement, the merge's exit status)."""

    def waives(self, case: CaseRef) -> bool: ...


#: :attr:`Finisher.phase`: the exit status is settled (runs executed elsewhere counted, then the verdicts),
#: then the reports written with it, then the telemetry sent.
COUNT, DECIDE, WRITE, EXPORT = 0, 1, 2, 3


class Finisher(Protocol):
    """Runs once at the session's end in the aggregating process, in :attr:`phase` order, then in the order
    they were registered.

    ``session.exitstatus`` is current (an earlier finisher may have changed it).
    An ``OSError`` becomes the note ``could not write a report: …`` and exit
    status 3; anything else a finisher must catch itself.
    """

    phase: ClassVar[int] = DECIDE

    def finish(self, session: pytest.Session, summary: Summary) -> None: ...


class Place:
    """Where a feature asleep (``roles.wiring.Sleeper``) would have registered its parts, in every extension
    point: marked when the role wires it, filled if it wakes (:meth:`Registry.at`)."""

    __slots__ = ()


#: The extension points of a :class:`Registry`, each a tuple of parts in registration order.
POINTS = (
    "observers",
    "guards",
    "verdict_kinds",
    "checks",
    "logs",
    "sinks",
    "links",
    "facets",
    "readings",
    "finishers",
    "waivers",
    "handovers",
)


class Registry:
    """The session's extension points, each a tuple in registration order; frozen once the role has wired
    every feature (before collection), after which registering raises, but for a feature that wakes.

    Only its own methods change it: a feature registers through :meth:`add`. A feature that is off until the
    session's marks or records need it (``compare=``, ``min_score=``, ``stop=``, a score recorded) sleeps
    (:meth:`sleep`) with a :class:`Place` in every extension point; when the core sees one of its triggers
    (:meth:`wake`), it is wired there (:meth:`at`), as if it had been on from the start.
    """

    observers: tuple[RunObserver, ...] = ()
    guards: tuple[RunGuard, ...] = ()
    verdict_kinds: tuple[VerdictKind, ...] = ()
    checks: tuple[ItemsCheck, ...] = ()
    logs: tuple[RecordLog, ...] = ()
    sinks: tuple[RecordSink, ...] = ()
    links: tuple[Link, ...] = ()
    facets: tuple[Facet, ...] = ()
    readings: tuple[Readings, ...] = ()
    finishers: tuple[Finisher, ...] = ()
    waivers: tuple[Waiver, ...] = ()
    #: What a feature hands the merge beside the records, by name (a shard's report's ``shard`` object).
    handovers: tuple[tuple[str, Callable[[], Any]], ...] = ()
    #: The triggers of the features asleep (empty once every one woke): what :meth:`wake` looks for.
    asleep: frozenset[str] = frozenset()

    def __init__(self) -> None:
        self.frozen = False
        #: Changed by every registration (what caches of the parts compare: the decision book's kinds).
        self.revision = 0
        self._entries: dict[str, list[Any]] = {name: [] for name in POINTS}
        self._at: Place | None = None
        self._sleeping: list[tuple[frozenset[str], Callable[[], None]]] = []

    def add(self, **parts: Any) -> None:
        """Register one part or more by extension point: ``add(facets=facet, sinks=sink)``."""
        place = self._at
        if self.frozen and place is None:
            raise RuntimeError("the session's extension points are frozen once its role is wired")
        for name, part in parts.items():
            entries = self._entries.get(name)
            if entries is None:
                raise AttributeError(f"no extension point {name!r}")
            if place is None:
                entries.append(part)
            else:  # before the place, after what a woken feature put there already
                entries.insert(next(i for i, entry in enumerate(entries) if entry is place), part)
            self._publish(name)
        self.revision += 1

    def _publish(self, name: str) -> None:
        parts = [entry for entry in self._entries[name] if not isinstance(entry, Place)]
        if self.frozen and name == "checks":
            parts.sort(key=lambda check: not check.selects)
        elif self.frozen and name == "finishers":
            parts.sort(key=lambda finisher: finisher.phase)
        setattr(self, name, tuple(parts))

    def waived(self, case: CaseRef) -> bool:
        """Whether a waiver excuses ``case`` from failing the session (it is quarantined)."""
        return any(waiver.waives(case) for waiver in self.waivers)

    def freeze(self) -> None:
        """No more registrations; checks and finishers in their phases' order (stable within a phase)."""
        self.frozen = True
        self._publish("checks")
        self._publish("finishers")

    # -- features asleep ----------------------------------------------------------------

    def place(self) -> Place:
        """A place in every extension point, after what is registered now (a feature asleep holds it)."""
        place = Place()
        for entries in self._entries.values():
            entries.append(place)
        return place

    @contextmanager
    def at(self, place: Place) -> Iterator[None]:
        """What is registered inside goes at ``place`` (a feature that woke), frozen or not."""
        before, self._at = self._at, place
        try:
            yield
        finally:
            self._at = before

    def sleep(self, triggers: Iterable[str], wake: Callable[[], None]) -> None:
        """A feature asleep until the session sees one of ``triggers``: marker keywords (``compare``, ``stop``)."""
        self._sleeping.append((frozenset(triggers), wake))
        self.asleep = self.asleep.union(triggers)

    def wake(self, seen: Iterable[str]) -> None:
        """What the session has just seen (a case's marker keywords): each feature asleep on one of them is woken, once, and wired at its places."""
        found = self.asleep.intersection(seen)
        if not found:
            return
        woken = [(triggers, wake) for triggers, wake in self._sleeping if triggers & found]
        self._sleeping = [sleeping for sleeping in self._sleeping if not sleeping[0] & found]
        self.asleep = frozenset().union(*(triggers for triggers, _ in self._sleeping))
        for _, wake in woken:
            wake()
