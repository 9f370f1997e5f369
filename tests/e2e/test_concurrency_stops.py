"""End to end: stopping with runs in flight (``--prob-concurrency``, issue 44, item 5).

``-x``, a budget, early stopping and Ctrl-C (here SIGTERM, which the plugin treats as Ctrl-C) decide when a
run would start: no run starts after the decision, the runs in flight finish (or are cancelled on Ctrl-C),
every executed call is recorded and charged, a budget's overshoot is at most the runs in flight and the
report says by how many, and the statistics count exactly the runs the report lists. Serial and ``-n 2``,
async (pytest-asyncio) and sync (threads).
"""

from __future__ import annotations

import pytest
from concurrent_sessions import XDIST, executions, needs_worker_queue, run, setup
from sessions import report

KINDS = pytest.mark.parametrize("flavour", ["sync", "asyncio", "asyncio-module-loop"])

#: Each run: logged, charged $0.01, then a short call; case n == FAIL fails.
STOPPING = {
    True: """    token = probe.enter(str(case))
    try:
        record_usage(model="m", input_tokens=1, output_tokens=1, cost=0.01)
        record_io(prompt=str(case), output=token)
        await sleep(0.2)
    finally:
        probe.leave()
    assert case != FAIL, f"wrong answer {token}"
""",
    False: """    token = probe.enter(str(case))
    try:
        record_usage(model="m", input_tokens=1, output_tokens=1, cost=0.01)
        record_io(prompt=str(case), output=token)
        time.sleep(0.2)
    finally:
        probe.leave()
    assert case != FAIL, f"wrong answer {token}"
""",
}


def stopping(pytester: pytest.Pytester, flavour: str, fail: int = 0, runs: int = 24) -> None:
    setup(
        pytester,
        flavour,
        STOPPING[flavour != "sync"].replace("FAIL", str(fail)),
        params=f'"case", range(1, {runs + 1})',
    )


def accounted(pytester: pytest.Pytester) -> tuple[dict, list[dict], list[dict]]:
    """(the report, its records, its skipped runs), after checking that every execution is in the report
    exactly once and charged."""
    data = report(pytester)
    done = executions(pytester)
    listed = data["records"] + data["skipped_runs"]
    charged = [r for r in listed if r["usage"]]
    assert len(charged) == len(done), "every executed call is recorded and charged"
    assert sorted(t["output"] for r in charged for t in r["transcript"]) == sorted(e["token"] for e in done)
    assert data["totals"]["cost"] == pytest.approx(0.01 * len(done))
    return data, data["records"], data["skipped_runs"]


@KINDS
@XDIST
def test_x_stops_starting_runs_and_those_in_flight_are_recorded(
    pytester: pytest.Pytester, flavour: str, xdist: list[str]
) -> None:
    # Before 3.5 runs execute one at a time in each worker, and xdist's -x drops the reports still on their way
    # (with the plugin or without): nothing here to check of runs in flight.
    needs_worker_queue(xdist)
    stopping(pytester, flavour, fail=3)
    result = run(pytester, "--prob-runs=1", "--prob-concurrency=4", "--prob-json=report.json", "-x", *xdist)
    assert result.ret == (2 if xdist else 1)  # xdist's own -x is an interruption (2), as without the plugin
    data, records, skipped = accounted(pytester)
    # No run started once -x had stopped the session: serially, at most K in flight past the failure. Under
    # xdist the failing worker stops at once too, but the other learns of it only from its controller's
    # shutdown (xdist's own -x, as without the plugin), after the reports on their way to it: a loaded machine
    # makes those more than K (14 of 24 were seen at load 4), as for a budget below.
    assert len(records) <= (3 + 4 if not xdist else 19)
    assert len(records) < 24
    assert data["rows"] and sum(row["total"] for row in data["rows"]) == len(records)  # the statistics: every record
    unreported = data["concurrency"]["finished_unreported"]
    if unreported:
        assert f"the session stopped with runs in flight: {unreported} finished" in result.stdout.str()


@KINDS
@XDIST
def test_a_budget_overshoots_by_at_most_the_runs_in_flight_and_says_by_how_many(
    pytester: pytest.Pytester, flavour: str, xdist: list[str]
) -> None:
    stopping(pytester, flavour)
    result = run(pytester, "--prob-runs=1", "--prob-concurrency=4", "--prob-max-cost=0.05", "--prob-json=report.json",
                 *xdist)  # fmt: skip
    assert result.ret == 0
    data, records, skipped = accounted(pytester)
    budget = data["budget"]
    assert budget["reached"] == "cost"
    # the run that reached it is the 5th charged; serially at most K-1 others were in flight with it. Under
    # xdist the controller decides as it takes reports in: the runs in flight then include the reports still
    # on their way to it, which a loaded machine makes more than K per worker.
    assert 0 <= budget["runs_after_reached"] <= (3 if not xdist else 19)
    assert len(records) == 5 + budget["runs_after_reached"]
    assert budget["spent_after_reached"] == pytest.approx(0.01 * budget["runs_after_reached"])
    assert len(skipped) == 24 - len(records) and all(r["stopped"] == "budget" for r in skipped)
    assert sum(row["total"] for row in data["rows"]) == len(records)
    if budget["runs_after_reached"]:
        assert f"{budget['runs_after_reached']} run(s) in flight when it was reached finished after it" in (
            result.stdout.str()
        )


@KINDS
def test_early_stopping_starts_no_run_of_a_decided_case(pytester: pytest.Pytester, flavour: str) -> None:
    setup(
        pytester,
        flavour,
        STOPPING[flavour != "sync"].replace("assert case != FAIL", "assert case != 'bad'"),
        params='"case", ["bad"]',
        marks="@pytest.mark.probability(min_rate=0.9, stop='sequential')\n",
    )
    result = run(pytester, "--prob-runs=60", "--prob-concurrency=4", "--prob-json=report.json")
    assert result.ret == 1
    data, records, skipped = accounted(pytester)
    row = data["rows"][0]
    assert row["stopped"] is not None and row["stopped"]["runs_not_executed"] == len(skipped) > 0
    decided_after = row["stopped"]["runs_executed"]
    assert decided_after == len(records) <= 60 - len(skipped)
    assert all(r["stopped"] == "decided" for r in skipped)


@pytest.mark.parametrize("flavour", ["sync", "asyncio", "asyncio-module-loop", "trio"])
def test_ctrl_c_records_what_ended_and_cancels_what_did_not(pytester: pytest.Pytester, flavour: str) -> None:
    """SIGTERM (the plugin's Ctrl-C) once run 6 of 24 is in flight: tasks in flight are cancelled (skipped
    as interrupted), threads, which cannot be stopped, are waited for a little and keep their outcomes."""
    is_async = flavour != "sync"
    body = (
        "    token = probe.enter(str(case))\n"
        "    try:\n"
        '        record_usage(model="m", input_tokens=1, output_tokens=1, cost=0.01)\n'
        "        record_io(prompt=str(case), output=token)\n"
        "        if case == 6:\n"
        "            import os, signal\n"
        "            os.kill(os.getpid(), signal.SIGTERM)\n"
        + ("        await sleep(1.0)\n" if is_async else "        time.sleep(1.0)\n")
        + "    finally:\n"
        "        probe.leave()\n"
    )
    setup(pytester, flavour, body, params='"case", range(1, 25)')
    result = run(pytester, "--prob-runs=1", "--prob-concurrency=4", "--prob-json=report.json")
    assert result.ret == pytest.ExitCode.INTERRUPTED
    data, records, skipped = accounted(pytester)
    started = len(executions(pytester))
    assert 6 <= started <= 8  # the window of run 6: no run started after the signal
    interrupted = [r for r in skipped if r["message"].startswith("interrupted")]
    if is_async:
        assert interrupted, "tasks in flight were cancelled"
    # every run of the window is in the report: ended (its outcome) or interrupted (a skip), none twice
    listed = [r["nodeid"] for r in records + interrupted]
    assert len(listed) == len(set(listed)) >= started
    assert len(records) + len(interrupted) <= 8
