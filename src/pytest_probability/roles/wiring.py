"""What each role offers a feature at configure, and the :class:`Feature` protocol a feature package implements.

A feature that adds to several stages (comparisons, shards, the journal,
budgets, the export) is one object the composition root lists. The role of
the process calls the feature's methods for the parts it has in that role,
each with that role's :class:`Wiring`, in the composition root's order:

=======================  =============================================  ==============================
method                   called in                                      typically registers
=======================  =============================================  ==============================
:meth:`Feature.prepare`  every process, before the role is picked       other plugins' options it
                                                                        must change (once, with why)
:meth:`Feature.every`    every process, first                           items checks, verdict kinds,
                                                                        the session's scope
:meth:`Feature.aggregating`  the serial session and the xdist           sinks, logs, facets, finishers,
                         controller (the processes that aggregate)      handovers
:meth:`Feature.serial`   the serial session, after ``aggregating``      guards
:meth:`Feature.controller`   the xdist controller, after ``aggregating``  links (each worker's input),
                                                                        hook objects
:meth:`Feature.worker`   an xdist worker                                guards, observers, links
:meth:`Feature.merged`   ``python -m pytest_probability merge``         facets of the merged report
=======================  =============================================  ==============================

A feature registers through :attr:`Wiring.parts` (the session's
:class:`~pytest_probability.protocols.Registry`, frozen once every feature is
wired) and keeps what it needs; it does not keep the wiring. It asks the
wiring for the role's parts it needs (``intake``, ``book``, ``results``,
``workerinput``) rather than asking which role it is in.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from ..protocols import Registry
from ..session import Notes, Scope, Session

if TYPE_CHECKING:
    from ..config.settings import Settings, StatsConfig
    from ..config.spec import CriteriaMaker, Specs
    from ..decide.analysis import Analysis
    from ..decide.book import DecisionBook
    from ..decide.results import Results
    from ..model.case import CaseRef
    from ..model.rows import Summary
    from ..model.run import RunRecord
    from ..protocols import Facet, Waiver
    from ..record.intake import Intake
    from ..report.writers import ReportDict
    from ..run.phases import RunPhases


class Wiring:
    """Every process's: the pytest config, the session and its run stage."""

    def __init__(self, config: pytest.Config, session: Session, runs: RunPhases) -> None:
        self.config = config
        self.session = session
        self.runs = runs

    @property
    def settings(self) -> Settings:
        return self.session.settings

    @property
    def specs(self) -> Specs:
        return self.session.specs

    @property
    def stats(self) -> StatsConfig:
        return self.session.specs.config

    @property
    def parts(self) -> Registry:
        return self.session.parts

    @property
    def scope(self) -> Scope:
        return self.session.scope

    @property
    def notes(self) -> Notes:
        return self.session.notes

    def register(self, plugin: object, name: str) -> None:
        """A hook object of the feature's own, as a pytest plugin (registered once, now)."""
        self.config.pluginmanager.register(plugin, name)


class Aggregation(Wiring):
    """A process that aggregates (serial, or the xdist controller): its records, decisions and results."""

    def __init__(
        self,
        config: pytest.Config,
        session: Session,
        runs: RunPhases,
        intake: Intake,
        book: DecisionBook,
        results: Results,
        report: Callable[[], ReportDict],
    ) -> None:
        super().__init__(config, session, runs)
        self.intake = intake
        self.book = book
        self.results = results
        self._report = report

    def report(self) -> ReportDict:
        """The one report dict the JSON and HTML reports and the history folder write (made on the first ask)."""
        return self._report()


class WorkerWiring(Wiring):
    """An xdist worker's: what its controller gave it."""

    def __init__(
        self,
        config: pytest.Config,
        session: Session,
        runs: RunPhases,
        workerinput: Mapping[str, Any],
        folder: Path | None,
    ) -> None:
        super().__init__(config, session, runs)
        self.workerinput = workerinput
        #: The decisions channel's folder (None: the controller opened none).
        self.folder = folder

    @property
    def worker_id(self) -> str:
        return str(self.workerinput.get("workerid", "gw"))


@dataclass(eq=False)
class MergeWiring:
    """The merge's (``python -m pytest_probability merge``): the shards' reports and what was rebuilt from them."""

    #: (path, report) of every shard, the first first.
    reports: Sequence[tuple[Path, Mapping[str, Any]]]
    #: The session's settings (the shards', without ``shard``) and statistics settings.
    settings: Mapping[str, Any]
    stats: StatsConfig
    cases: Mapping[str, CaseRef]
    records: Sequence[RunRecord]
    summary: Summary
    analysis: Analysis
    #: The results the facets read, as a session's ``Results`` (``summary()``, ``analysis()``).
    results: Any
    #: The merge command's options (``--prob-baseline`` and the like).
    options: Any
    #: The merged report's facets, in registration order (the statistics' first).
    facets: list[Facet] = field(default_factory=list)
    #: The facets whose lines the merge prints (the gates section, the comparisons).
    shown: list[Facet] = field(default_factory=list)
    #: Whether a decision over all the runs failed (the merged session's exit status 1).
    failed: list[bool] = field(default_factory=list)
    readings: list[Any] = field(default_factory=list)
    #: What excuses a case from failing the merged session (quarantine); its verdicts are still decided.
    waivers: list[Waiver] = field(default_factory=list)

    def handover(self, name: str) -> Any:
        """What a feature handed the merge under ``name`` (the first shard's ``shard`` object's field)."""
        return self.reports[0][1]["shard"].get(name)

    def add_facet(self, facet: Facet, *, shown: bool = False) -> None:
        self.facets.append(facet)
        if shown:
            self.shown.append(facet)


class Feature:
    """A feature that adds to several stages: its parts, registered for the roles it has parts in.

    Every method does nothing here; a feature implements those of the roles it has parts in.
    """

    def prepare(self, config: pytest.Config) -> None:
        """Before the role is picked: the one place a feature may change another plugin's options."""

    def output_files(self) -> Sequence[tuple[str, Path]]:
        """The files this feature writes, each with the option that names it: the composition root refuses
        two outputs of the session on one file (``files.check_outputs``)."""
        return ()

    def criteria(self) -> Sequence[CriteriaMaker]:
        """What makes the conditions this feature adds to a case's gate (a score's bars): asked once, by the
        composition root, for the session's ``Specs``."""
        return ()

    def every(self, wiring: Wiring) -> None:
        """Every process, before any role's parts (collection's checks and verdict kinds, the scope)."""

    def aggregating(self, wiring: Aggregation) -> None:
        """The serial session and the xdist controller."""

    def serial(self, wiring: Aggregation) -> None:
        """The serial session, after :meth:`aggregating`."""

    def controller(self, wiring: Aggregation) -> None:
        """The xdist controller, after :meth:`aggregating`."""

    def worker(self, wiring: WorkerWiring) -> None:
        """An xdist worker."""

    def merged(self, wiring: MergeWiring) -> None:
        """The merge of the shards' reports."""

    def handover_paths(self) -> Mapping[str, frozenset[str]]:
        """The fields of this feature's handovers (by the handover's name) that say where a file was, not what it
        held: a checkout at another path differs in them and nothing else, so the merge does not compare them
        across shards; a field that says what the file held (its entries, a digest) is compared instead."""
        return {}

    def check_handover(self, shard: Mapping[str, Any]) -> None:
        """The merge, before it merges: what this feature handed over in a shard's ``shard`` object
        (``Registry.handovers``) checked; a ``ValueError`` names the field that is malformed."""
