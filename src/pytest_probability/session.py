"""The session's configuration in ``config.stash``: its settings, specs and extension points, frozen at configure.

One :class:`Session` per pytest config, built by the role object
(:mod:`pytest_probability.roles`) before any feature is wired, and never
changed after: its fields are set once, and what they hold is owned by the
object itself (the :class:`~.protocols.Registry` frozen before collection,
the :class:`Scope` and :class:`Notes` changed only through their methods).
What changes during a session belongs to the stage that changes it: the
collection's scratch to ``collect.scratch``, the current run and its
leftovers to ``run.phases.RunPhases``, the records to ``record.intake.Intake``,
the verdicts to ``decide.book.DecisionBook``, the signal flags to
``roles.interrupts.Interrupts``. It imports no stage: the stages read it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING

import pytest

from .protocols import Registry

if TYPE_CHECKING:
    from .config.settings import Settings, StatsConfig
    from .config.spec import Specs
    from .protocols import Decisions


class Scope:
    """Which part of the night this session holds: all of it, unless a feature divides it (a shard's).

    A session holding a part (:attr:`partial`) decides nothing on it: every verdict item skips with that
    text, no case stops early, nothing is compared, and its metrics are the series that add over the
    parts, under its own :attr:`instance` (``service.instance.id``)."""

    def __init__(self) -> None:
        #: Why this session decides nothing (the verdict items' skip text); None: it holds the whole night.
        self.partial: str | None = None
        #: The resource's ``service.instance.id`` of a part (``shard-2-of-5``), unless the user gives one.
        self.instance: str | None = None
        #: Whether a report without runs is written all the same (a part whose runs all fell to others).
        self.keep_empty: Callable[[], bool] = lambda: False

    def divide(self, why: str, instance: str, keep_empty: Callable[[], bool]) -> None:
        self.partial, self.instance, self.keep_empty = why, instance, keep_empty


class Notes:
    """Lines shown under the table (export problems, teardown errors, a feature's warnings), in order."""

    def __init__(self) -> None:
        self._lines: list[str] = []

    def append(self, line: str) -> None:
        self._lines.append(line)

    def extend(self, lines: Iterator[str] | list[str] | tuple[str, ...]) -> None:
        self._lines.extend(lines)

    def __iter__(self) -> Iterator[str]:
        return iter(self._lines)

    def __len__(self) -> int:
        return len(self._lines)

    def __bool__(self) -> bool:
        return bool(self._lines)

    def __contains__(self, line: object) -> bool:
        return line in self._lines


class Session:
    """The session's configuration: its fields are set once (assigning one raises AttributeError), and it is
    compared by identity (one per pytest config). A plain class, not a dataclass: see ``values``."""

    settings: Settings
    #: The cases' specs, and with them the session's statistics settings (``specs.config``).
    specs: Specs
    #: The decisions runs and verdict items ask: the decision book (serial, controller), the channel's
    #: reader (xdist worker); None on a worker whose controller gave no channel.
    decisions: Decisions | None
    parts: Registry
    scope: Scope
    notes: Notes

    __slots__ = ("settings", "specs", "decisions", "parts", "scope", "notes")

    def __init__(
        self,
        settings: Settings,
        specs: Specs,
        decisions: Decisions | None = None,
        parts: Registry | None = None,
        scope: Scope | None = None,
        notes: Notes | None = None,
    ) -> None:
        fields = (
            settings,
            specs,
            decisions,
            Registry() if parts is None else parts,
            Scope() if scope is None else scope,
            Notes() if notes is None else notes,
        )
        for name, value in zip(self.__slots__, fields, strict=True):
            object.__setattr__(self, name, value)

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"the session's {name} is set once")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"the session's {name} is set once")

    @property
    def stats(self) -> StatsConfig:
        return self.specs.config


SESSION_KEY = pytest.StashKey[Session]()


def get(config: pytest.Config) -> Session:
    return config.stash[SESSION_KEY]
