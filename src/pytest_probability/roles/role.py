"""What every role does at configure: the session, the run stage, each feature's parts, the registry frozen.

:class:`Role` is the base of the three role objects. Its constructor is the
wiring of one process, in this order: the :class:`~pytest_probability.session.Session`
(settings, specs, its extension points and the decisions the runs ask), the
run stage (:class:`~pytest_probability.run.phases.RunPhases`), the core's
links, each feature's :meth:`~.wiring.Feature.every`, then the role's own parts
and its features' parts (:meth:`Role.wire`), and last the registry frozen and
SIGTERM made Ctrl-C. A subclass says what differs: the decisions
(:meth:`Role.decisions`), whether its runs ship their records, and its parts.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

import pytest

from ..collect.benchfiles import rewrite_asserts
from ..protocols import Registry
from ..record.intake import Intake, InterruptedRuns, LateUsage
from ..run.key import RUNS
from ..run.phases import RunPhases
from ..session import SESSION_KEY, Notes, Scope, Session
from .interrupts import Interrupts
from .wiring import Feature, Wiring

if TYPE_CHECKING:
    from ..config.settings import Settings
    from ..config.spec import Specs
    from ..model.case import CaseRef
    from ..protocols import Decisions


class Role:
    """One process's part in the session: its plugin object (the hooks of its role) and its wiring."""

    #: The plugin's name in pytest's plugin manager.
    name = "probability-role"
    #: Whether the process's runs ship their records to another process (an xdist worker's).
    ships = False

    def __init__(self, config: pytest.Config, settings: Settings, specs: Specs, features: Sequence[Feature]) -> None:
        self.config = config
        self.features = features
        self.interrupts = Interrupts()
        parts, scope = Registry(), Scope()
        self.session = Session(settings, specs, self.decisions(settings, specs, parts, scope), parts, scope, Notes())
        config.stash[SESSION_KEY] = self.session
        rewrite_asserts(config, settings.pattern)
        queued, refused = self.ahead()
        self.runs = RunPhases(
            self.session, ships=self.ships, announce=self.announcer(), queued=queued, ahead_refused=refused
        )
        config.stash[RUNS] = self.runs
        self.intake = self.make_intake()
        parts = self.session.parts
        # Late usage and interrupted runs travel from the process that executed them (in that order: a run's
        # late usage amends a record that must exist).
        parts.add(links=LateUsage(self.intake, self.runs))
        parts.add(links=InterruptedRuns(self.intake, self.runs))
        wiring = Wiring(config, self.session, self.runs)
        for feature in features:
            feature.every(wiring)
        self.wire()
        parts.freeze()
        self.interrupts.install(config)

    def decisions(self, settings: Settings, specs: Specs, parts: Registry, scope: Scope) -> Decisions | None:
        """The decisions the runs and verdict items of this process ask."""
        raise NotImplementedError

    def announcer(self) -> Callable[[CaseRef], None] | None:
        """What tells the aggregating process of each case before its first run here (a worker's)."""
        return None

    def ahead(self) -> tuple[Callable[[], list[int]] | None, str | None]:
        """(the items this process will execute after the current one, or None for every later one; why no
        run may execute ahead of its item here, or None): a worker's, from xdist (concurrent runs)."""
        return None, None

    def make_intake(self) -> Intake | None:
        """The records' owner, in a process that aggregates."""
        return None

    def wire(self) -> None:
        """The role's own parts and its features' parts."""
        raise NotImplementedError

    @pytest.hookimpl(tryfirst=True)
    def pytest_unconfigure(self) -> None:
        """Let go of what the session collected once everything is written."""
        self.release()

    def release(self) -> None:
        pass
