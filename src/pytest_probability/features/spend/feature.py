"""Spend less, as one feature: cases decided early, and the session's budgets, in every role.

======================  =====================================================================
role                    parts
======================  =====================================================================
aggregating             :class:`EarlyStop` (a sink: a case whose verdict its remaining runs can
                        no longer change is stopped in the decision book, which publishes it);
                        with a budget, :class:`BudgetSink` (every run's spend counted; the
                        budget reached is published as the ``budget`` flag); the spend facet
serial                  :class:`BudgetGuard` (no run starts once a budget is reached, the time
                        budget checked before each run)
controller              :class:`BudgetLink` (each worker learns the time budget's deadline)
worker                  :class:`WorkerBudgetGuard` (the controller's flag, or the deadline)
merged                  the budget replayed over every shard's records, and the spend facet
======================  =====================================================================
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from ...protocols import Link, RecordSink, RunGuard
from ...roles.wiring import Aggregation, Feature, WorkerWiring
from ...vocabulary import BUDGET
from .budget import Budget
from .facet import SpendFacet
from .stopping import EarlyStop

if TYPE_CHECKING:
    import pytest

    from ...config.settings import Settings
    from ...decide.book import DecisionBook
    from ...model.case import CaseRef
    from ...model.run import RunRecord, Usage
    from ...protocols import Decisions
    from ...roles.merging import MergeWiring

#: The decision book's flag of a budget reached, and a worker's input of the time budget.
FLAG = "budget"
WORKER_INPUT = "prob_budget"


def feature(config: pytest.Config, settings: Settings) -> Spend:
    return Spend(settings)


class Spend(Feature):
    def __init__(self, settings: Settings | None = None) -> None:
        """``settings``: the session's (None at the merge, which replays the shards' budget)."""
        self.settings = settings
        self.budget: Budget | None = None

    def _make_budget(self) -> Budget | None:
        settings = self.settings
        if settings is None or not settings.budgeted:
            return None
        return Budget(settings.max_cost, settings.max_tokens, settings.max_time)

    def aggregating(self, wiring: Aggregation) -> None:
        self.budget = budget = self._make_budget()
        if budget is not None:
            wiring.parts.add(sinks=BudgetSink(budget, wiring.book))
        wiring.parts.add(
            sinks=EarlyStop(wiring.book, wiring.specs), facets=SpendFacet(wiring.results, wiring.stats.stop, budget)
        )

    def serial(self, wiring: Aggregation) -> None:
        if self.budget is not None:
            wiring.parts.add(guards=BudgetGuard(self.budget))

    def controller(self, wiring: Aggregation) -> None:
        if self.budget is not None:
            wiring.parts.add(links=BudgetLink(self.budget))

    def worker(self, wiring: WorkerWiring) -> None:
        given = wiring.workerinput.get(WORKER_INPUT)
        decisions = wiring.session.decisions
        if given is not None and decisions is not None:
            wiring.parts.add(guards=WorkerBudgetGuard(decisions, given.get("deadline"), given.get("max_time")))

    def merged(self, wiring: MergeWiring) -> None:
        wiring.add_facet(SpendFacet(wiring.results, wiring.stats.stop, replay(wiring.settings, wiring.records)))


class BudgetSink(RecordSink):
    """Every run's spend counted against the budget; once it is reached, the book publishes it to every worker."""

    def __init__(self, budget: Budget, book: DecisionBook) -> None:
        self.budget = budget
        self.book = book

    def add(self, record: RunRecord) -> None:
        if self.budget.add(record):
            self.book.publish_flag(FLAG, self.budget.reason())

    def add_late(self, usage: Usage | None, extra_cost: float) -> None:
        """Late usage counts in the budgets as the record it amends would have (issue 23, item 13)."""
        cost = extra_cost + (usage.cost if usage is not None else 0.0)
        tokens = usage.input_tokens + usage.output_tokens if usage is not None else 0
        if self.budget.add_spend(cost, tokens):
            self.book.publish_flag(FLAG, self.budget.reason())


class BudgetGuard(RunGuard):
    """A serial session's: no run starts once a budget is reached (the time budget checked now)."""

    def __init__(self, budget: Budget) -> None:
        self.budget = budget

    def check(self, case: CaseRef) -> tuple[str, str] | None:
        budget = self.budget
        if budget.reached is not None or budget.check():
            return BUDGET, budget.reason()
        return None


class BudgetLink(Link):
    """Each xdist worker learns the time budget's deadline, so it checks the clock itself before each run."""

    def __init__(self, budget: Budget) -> None:
        self.budget = budget

    def worker_input(self) -> Mapping[str, Any]:
        return {WORKER_INPUT: {"deadline": self.budget.deadline, "max_time": self.budget.max_time}}


class WorkerBudgetGuard(RunGuard):
    """An xdist worker's: the budget its controller published as reached, or the time budget's deadline."""

    def __init__(self, decisions: Decisions, deadline: float | None, max_time: float | None) -> None:
        self.decisions = decisions
        self.deadline = deadline
        self.max_time = max_time
        self.reason: str | None = None

    def check(self, case: CaseRef) -> tuple[str, str] | None:
        if self.reason is None:
            self.reason = self.decisions.flag(FLAG)
        if self.reason is None and self.deadline is not None and time.time() >= self.deadline:
            self.reason = f"time budget {self.max_time:g}s reached"
        return (BUDGET, self.reason) if self.reason is not None else None


def replay(settings: Mapping[str, Any], records: Any) -> Budget | None:
    """The session's budget over all shards' runs (cost and tokens add; time from the first start to
    the last end), or None without a limit."""
    limits = {name: settings.get(name) for name in ("max_cost", "max_tokens", "max_time")}
    if all(v is None for v in limits.values()):
        return None
    starts = [r.start_time for r in records if r.start_time]
    budget = Budget(limits["max_cost"], limits["max_tokens"], limits["max_time"], start=min(starts) if starts else 0.0)
    for record in sorted(records, key=lambda r: r.start_time + r.duration):
        budget.add(record, now=record.start_time + record.duration)
    return budget
