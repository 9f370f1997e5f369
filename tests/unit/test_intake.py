"""The xdist controller's wait, after Ctrl-C or SIGTERM, for the records of runs whose outcome it showed
(``record.intake.InFlight.await_shown``), over a queue of events shaped as xdist's. The real race, with a
worker tearing a shown run down as SIGTERM comes, is in tests/e2e/test_new_user.py."""

from __future__ import annotations

import queue
from types import SimpleNamespace
from typing import Any

import pytest

from pytest_probability.record.intake import InFlight


def node(worker: str) -> Any:
    return SimpleNamespace(gateway=SimpleNamespace(id=worker))


def report(nodeid: str, when: str, worker: str, outcome: str = "passed") -> pytest.TestReport:
    made = pytest.TestReport(nodeid, ("bench_x.py", 1, nodeid), {}, outcome, None, when)
    made.node = node(worker)  # as xdist's controller sets it
    return made


class Events:
    """xdist's event queue: ``get(timeout)`` as the controller calls it, counting the calls."""

    def __init__(self, *events: tuple[str, dict[str, Any]]) -> None:
        self.queue: queue.Queue[tuple[str, dict[str, Any]]] = queue.Queue()
        for event in events:
            self.queue.put(event)
        self.timeouts: list[float] = []

    def get(self, timeout: float) -> tuple[str, dict[str, Any]]:
        self.timeouts.append(timeout)
        return self.queue.get(timeout=timeout)


def in_flight(*reports: pytest.TestReport) -> tuple[InFlight, list[pytest.TestReport]]:
    """An InFlight that has taken ``reports`` in, and the list its ``take`` appends to."""
    tracked = InFlight(SimpleNamespace(cases={}), None)  # type: ignore[arg-type]
    for made in reports:
        tracked.track(made)
    return tracked, []


def taking(tracked: InFlight, taken: list[pytest.TestReport]) -> Any:
    def take(made: pytest.TestReport) -> None:  # what pytest's report hook does: the role tracks it
        tracked.track(made)
        taken.append(made)

    return take


def test_the_teardown_of_a_shown_run_is_taken_and_nothing_else():
    tracked, taken = in_flight(report("b::run1", "setup", "gw0"), report("b::run1", "call", "gw0"))
    other = report("b::run7", "teardown", "gw1")  # a run whose outcome was never shown
    teardown = report("b::run1", "teardown", "gw0")
    del teardown.node  # xdist's queue holds the report as it came off the wire: its handler sets the node
    events = Events(
        ("logstart", {"node": node("gw1"), "nodeid": "b::run8"}),
        ("testreport", {"node": node("gw1"), "rep": other}),
        ("testreport", {"node": node("gw0"), "rep": teardown}),
        ("testreport", {"node": node("gw1"), "rep": other}),
    )
    tracked.await_shown(events.get, taking(tracked, taken))
    assert taken == [teardown] and teardown.node.gateway.id == "gw0"  # the event's node, as xdist sets it
    assert len(events.timeouts) == 3  # it stops once nothing shown is awaited: the last event stays queued
    assert events.queue.qsize() == 1 and not tracked.shown


def test_a_run_still_executing_is_not_awaited():
    """Its setup passed and nothing was shown: it may sleep for minutes (the run SIGTERM interrupted)."""
    tracked, taken = in_flight(report("b::run3", "setup", "gw1"))
    events = Events()
    tracked.await_shown(events.get, taking(tracked, taken))
    assert events.timeouts == [] and taken == []


def test_a_setup_that_did_not_pass_was_shown_and_its_teardown_is_awaited():
    tracked, taken = in_flight(report("b::run2", "setup", "gw0", "failed"))
    assert tracked.shown == {"b::run2": "gw0"}
    teardown = report("b::run2", "teardown", "gw0")
    tracked.await_shown(Events(("testreport", {"node": node("gw0"), "rep": teardown})).get, taking(tracked, taken))
    assert taken == [teardown]


@pytest.mark.parametrize("down", ["workerfinished", "errordown"])
def test_a_worker_that_went_down_is_not_waited_for(down: str):
    tracked, taken = in_flight(report("b::run1", "call", "gw0"), report("b::run2", "call", "gw1"))
    events = Events(
        (down, {"node": node("gw1")}),
        ("testreport", {"node": node("gw0"), "rep": report("b::run1", "teardown", "gw0")}),
    )
    tracked.await_shown(events.get, taking(tracked, taken))
    assert [made.nodeid for made in taken] == ["b::run1"] and not tracked.shown


def test_the_wait_ends_at_its_timeout():
    tracked, taken = in_flight(report("b::run1", "call", "gw0"))
    events = Events()
    tracked.await_shown(events.get, taking(tracked, taken), timeout=0.2)
    assert taken == [] and tracked.shown == {"b::run1": "gw0"}
    assert len(events.timeouts) == 1 and 0 < events.timeouts[0] <= 0.2  # the time left, never more


def test_a_worker_down_before_the_interrupt_is_not_waited_for():
    """``pytest_testnodedown`` came while xdist still read its queue: nothing of that worker is awaited."""
    tracked, taken = in_flight(report("b::run1", "call", "gw0"), report("b::run2", "call", "gw1"))
    tracked.node_finished("gw1")
    assert tracked.shown == {"b::run1": "gw0"}
