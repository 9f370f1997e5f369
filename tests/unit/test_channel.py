"""The decisions channel: what the controller's DecisionBook writes and a worker's ChannelReader reads, with the spend
feature's parts (early stopping, a budget) wired as an aggregating process and a worker wire them."""

from __future__ import annotations

import json
import time

from pytest_probability.aggregate.cases import aggregate
from pytest_probability.config.settings import StatsConfig
from pytest_probability.config.spec import Specs
from pytest_probability.decide.book import DecisionBook
from pytest_probability.decide.channel import ChannelReader
from pytest_probability.features.spend.budget import Budget
from pytest_probability.features.spend.early_stop import EarlyStop
from pytest_probability.features.spend.feature import BudgetGuard, BudgetLink, BudgetSink, WorkerBudgetGuard
from pytest_probability.model.case import CaseRef
from pytest_probability.model.run import RunRecord, Usage
from pytest_probability.protocols import Registry
from pytest_probability.vocabulary import BUDGET, DECIDED

RUNS = 10


def case(key="b.py::bench_x", marks=(("min_passes", 2),)):
    return CaseRef(key=key, benchmark="x", case="", label="x", order=0, runs=RUNS, marks=marks)


class Wired:
    """The book with the sinks and guard of an aggregating process (the spend feature's), in their order."""

    def __init__(self, config, budget=None, kinds=None):
        parts = Registry()
        for kind in (kinds or {}).values():
            parts.add(verdict_kinds=kind)
        self.book = DecisionBook(Specs(config), parts)
        self.budget = budget
        self.sinks = (
            [self.book] + ([BudgetSink(budget, self.book)] if budget else []) + [EarlyStop(self.book, self.book.specs)]
        )
        self.guard = BudgetGuard(budget) if budget else None

    def add(self, record):
        for sink in self.sinks:
            sink.add(record)

    def run_decision(self, case):
        return self.book.run_decision(case) or (self.guard.check(case) if self.guard else None)

    def __getattr__(self, name):
        return getattr(self.book, name)


def book_of(config, **kw):
    return Wired(config, **kw)


class WorkerDecisions:
    """A worker's decisions: the channel's reader, and with a budget the guard its input gives it."""

    def __init__(self, book, budgeted):
        self.reader = ChannelReader(book.folder, book.specs, timeout=1.0)
        given = BudgetLink(book.budget).worker_input()["prob_budget"] if budgeted else None
        self.guard = WorkerBudgetGuard(self.reader, given["deadline"], given["max_time"]) if given else None
        self.deadline = given["deadline"] if given else None
        self.max_time = given["max_time"] if given else None

    def run_decision(self, case):
        return self.reader.run_decision(case) or (self.guard.check(case) if self.guard else None)


def reader(book, budgeted=False):
    return WorkerDecisions(book, budgeted)


def record(c, run, outcome="pass", cost=0.0):
    return RunRecord(c, run, f"{c.key}::run{run}", outcome, usage=(Usage("m", 10, 0, 0, cost),))


def test_a_decided_case_is_published_once_and_read_by_workers(tmp_path):
    book = book_of(StatsConfig(stop="curtail"))
    folder = book.open_channel()
    try:
        ids = [f"b.py::bench_x::run{i}" for i in range(1, RUNS + 1)]
        book.expect(ids + ["b.py::bench_x::gate"])
        worker = reader(book)
        c = case()
        book.add(record(c, 1))
        assert worker.run_decision(c) is None
        book.add(record(c, 2))  # the second pass reaches min_passes=2
        reason = "PASS decided after 2 of 10 runs (curtail)"
        assert book.run_decision(c) == (DECIDED, reason)
        assert worker.run_decision(c) == (DECIDED, reason)
        unstoppable = case(marks=(("min_passes", 2), ("stop", None)))  # its marker turns stopping off
        assert book.run_decision(unstoppable) is None
        assert worker.run_decision(unstoppable) is None  # not a stoppable case: the file is not read
        # The remaining runs report as not executed; the gate verdict is published once all have.
        for run in range(3, RUNS + 1):
            book.add(RunRecord(c, run, f"{c.key}::run{run}", "skip", message=f"not run: {reason}", stopped=DECIDED))
        published = [p for p in folder.iterdir() if p.suffix == ".json"]
        assert len(published) == 1
        data = json.loads(published[0].read_text())
        assert data["passed"] is True and data["text"].startswith(
            "PASS: 2/2 passes, need 2: PASS; 8 run(s) not executed"
        )
    finally:
        book.cleanup()


def test_a_reached_budget_and_the_deadline_reach_workers(tmp_path):
    book = book_of(StatsConfig(), budget=Budget(max_cost=0.25, max_time=3600))
    book.open_channel()
    try:
        worker = reader(book, budgeted=True)
        assert worker.deadline == book.budget.deadline and worker.max_time == 3600
        c = case(marks=())
        book.add(record(c, 1, cost=0.2))
        assert worker.run_decision(c) is None
        book.add(record(c, 2, cost=0.1))
        expected = (BUDGET, "cost budget $0.25 reached ($0.3000 spent)")
        assert book.run_decision(c) == expected
        assert worker.run_decision(c) == expected
        assert reader(book, budgeted=False).run_decision(c) is None  # a session without a budget never looks
    finally:
        book.cleanup()
    timed = book_of(StatsConfig(), budget=Budget(max_time=5, start=time.time() - 6))
    timed.open_channel()
    try:
        assert reader(timed, budgeted=True).run_decision(case(marks=())) == (BUDGET, "time budget 5s reached")
        assert timed.run_decision(case(marks=())) == (BUDGET, "time budget 5s reached")
    finally:
        timed.cleanup()


def test_a_run_reported_twice_counts_once_in_the_decision():
    book = book_of(StatsConfig(stop="curtail"))
    c = case(marks=(("min_passes", 3),))
    book.add(record(c, 1))
    book.add(record(c, 2))
    book.add(record(c, 2))  # a rerun plugin reported run 2 again
    assert book.run_decision(c) is None
    book.add(record(c, 3))
    assert book.run_decision(c) == (DECIDED, "PASS decided after 3 of 10 runs (curtail)")


def test_the_book_keeps_records_only_of_the_cases_a_verdict_needs():
    """Ungated cases leave an expected count in the book, no record (State keeps those for the
    reports); a gated case keeps its records; missing runs are counted for both."""
    book = book_of(StatsConfig())
    plain, gated = case("b.py::bench_p", marks=()), case("b.py::bench_g")
    ids = [f"{c.key}::run{i}" for c in (plain, gated) for i in range(1, RUNS + 1)]
    book.expect(ids + ["b.py::bench_g::gate"])
    for run in (1, 2, 2):  # run 2 twice: counted once
        book.add(record(plain, run))
        book.add(record(gated, run))
    assert list(book.records) == [gated.key]
    assert sorted(book.records[gated.key]) == [f"{gated.key}::run1", f"{gated.key}::run2"]
    assert book.missing(gated.key) == RUNS - 2
    reported = aggregate([record(c, run) for c in (plain, gated) for run in (1, 2, 2)])
    assert book.missing_runs(reported.rows) == {plain.key: RUNS - 2, gated.key: RUNS - 2}
    complete = aggregate([record(c, run) for c in (plain, gated) for run in range(1, RUNS + 1)])
    assert book.missing_runs(complete.rows) == {}
    assert book.verdict(gated.key).text == "UNDECIDED: 2/2 passes, need 2: UNDECIDED; runs cut short: 2 of 10 reported"


def test_with_a_case_judged_by_a_verdict_kind_the_book_keeps_every_record():
    """A kind's verdicts (baseline) are adjusted over every case, so all records are kept then,
    and before the book has learned whether any case is judged."""

    class Decider:
        kind = "baseline"

        def judges(self, case):
            return True

        def decide(self, records, key):
            return True, f"{len(records)} cases"

    plain, other = case("b.py::bench_p", marks=()), case("b.py::bench_q", marks=())
    early = book_of(StatsConfig(), kinds={"baseline": Decider()})
    early.add(record(plain, 1))  # nothing learned yet: kept
    assert list(early.records) == [plain.key]

    book = book_of(StatsConfig(), kinds={"baseline": Decider()})
    book.expect([f"{plain.key}::run1", f"{other.key}::run1", f"{plain.key}[baseline]"])
    book.add(record(plain, 1))
    book.add(record(other, 1))
    assert sorted(book.records) == [plain.key, other.key]
    assert book.verdict(f"{plain.key}[baseline]").text == "2 cases"

    unjudged = book_of(StatsConfig(), kinds={"baseline": Decider()})
    unjudged.expect([f"{plain.key}::run1", f"{other.key}::run1"])
    unjudged.add(record(plain, 1))
    assert unjudged.records == {}
