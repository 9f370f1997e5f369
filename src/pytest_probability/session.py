"""The session's state, kept in ``config.stash``: its settings, its records, and what the features plugged in.

One :class:`State` per pytest config, built by the composition root
(:mod:`pytest_probability.configure`), which also fills its extension points
(typed by :mod:`pytest_probability.protocols`). It imports no stage: the
stages read it, and are given what else they need when they are built.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from .config.settings import Settings, StatsConfig
    from .config.spec import Specs
    from .model.case import CaseRef
    from .model.run import RunRecord
    from .protocols import Decisions, Facet, Finisher, ItemsCheck, Link, RecordSink, RunHooks, RunObserver, VerdictKind


# eq and repr off: one State per session, compared by identity (field-by-field equality
# means nothing for it, and its repr would print every record).
@dataclass(eq=False, repr=False)
class State:
    settings: Settings
    #: The cases' specs, and with them the session's statistics settings (``specs.config``).
    specs: Specs
    #: The decisions runs and verdict items ask: the decision book (serial), the channel's
    #: reader (xdist worker); None on a worker whose controller gave no channel.
    decisions: Decisions | None = None
    #: The per-run path (``run.phases.RunPhases``), in a process that executes runs.
    runs: RunHooks | None = None
    #: One CaseRef per case key, shared by the records of its runs.
    cases: dict[str, CaseRef] = field(default_factory=dict)
    #: The records taken in (aggregating process only).
    records: list[RunRecord] = field(default_factory=list)
    #: Bumped whenever ``records`` changes: what the cached results compare against.
    revision: int = 0
    #: Lines shown under the table (export problems, teardown errors).
    notes: list[str] = field(default_factory=list)
    # -- extension points (pytest_probability.protocols) --------------------------------
    observers: list[RunObserver] = field(default_factory=list)
    verdict_kinds: list[VerdictKind] = field(default_factory=list)
    checks: list[ItemsCheck] = field(default_factory=list)
    sinks: list[RecordSink] = field(default_factory=list)
    links: list[Link] = field(default_factory=list)
    facets: list[Facet] = field(default_factory=list)
    finishers: list[Finisher] = field(default_factory=list)
    # -- collection --------------------------------------------------------------------
    #: The Metafunc of the benchmark being collected (``collect.benchfiles.before_generate``), while it is.
    metafunc: Any = None
    case_order: Any = field(default_factory=itertools.count)
    #: Runs collected so far (cases × runs), held to ``settings.max_runs``.
    runs_collected: int = 0
    #: ``--prob-shard``: runs of other shards deselected (by this process, or by a worker, which ships it).
    runs_of_other_shards: int = 0
    # -- the session's end ------------------------------------------------------------------
    #: Set while the finishers run (SIGTERM then lets them finish), and on SIGTERM during them.
    finishing: bool = False
    terminated: bool = False
    #: Set while a report's record is being taken in: SIGTERM then waits until it is in (``interrupt_pending``),
    #: so that no record whose outcome pytest has shown is lost.
    taking: bool = False
    interrupt_pending: bool = False
    #: Usage calls charged to their run after it had ended (from threads or tasks that outlived it).
    late_usage: int = 0

    @property
    def stats(self) -> StatsConfig:
        return self.specs.config

    def release(self) -> None:
        """Drop what the session collected (records, cases) after the session."""
        self.records = []
        self.cases = {}
        self.revision += 1


STATE_KEY = pytest.StashKey[State]()


def get(config: pytest.Config) -> State:
    return config.stash[STATE_KEY]
