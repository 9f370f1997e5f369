"""The session's life: configure, each run's phases, and the session's end.

Hooks in :mod:`pytest_probability.plugin` call these functions. Reporters and
exporters plug in through :class:`~pytest_probability.state.State`
(``observers`` see runs start and finish in the executing process;
``finishers`` get the aggregated summary once, in the aggregating process).
"""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Any

import pytest

from . import collect, gating, options, otel, recording, report_compare, report_json, report_spend, report_stats, report_terminal, retry
from .budget import Budget
from .collect import Run
from .model import SKIP
from .state import STATE_KEY, State, is_worker


def configure(config: pytest.Config) -> State:
    config.addinivalue_line("markers", options.MARKER_LINE)
    settings = options.resolve(config)
    state = State(settings=settings, worker=is_worker(config), stats=options.resolve_stats(config))
    config.stash[STATE_KEY] = state
    collect.rewrite_asserts(config, settings.pattern)
    if state.worker:
        state.gate_folder = config.workerinput.get("prob_gate_folder")  # type: ignore[attr-defined]
        if state.gate_folder is not None:
            state.decisions = gating.DecisionReader(Path(state.gate_folder))
    else:
        budget = None
        if settings.budgeted:
            budget = Budget(settings.max_cost, settings.max_tokens, settings.max_time)
        state.gates = gating.GateBook(state.stats, budget=budget)
        state.finishers.append(_settle_gates)
        report_stats.install(state)
        report_spend.install(state)
    report_compare.configure(config, state)
    if settings.json_path is not None and not state.worker:
        report_json.check_path(settings.json_path)
        state.finishers.append(_write_json)
    report_compare.install_history(state)
    otel.configure(config, state)
    return state


def get(config: pytest.Config) -> State:
    return config.stash[STATE_KEY]


# -- collection ---------------------------------------------------------------


def before_generate(metafunc: pytest.Metafunc) -> None:
    """Keep pytest-repeat from multiplying benchmarks: ``--prob-runs`` owns repetition."""
    definition = metafunc.definition
    if not isinstance(definition.parent, (collect.BenchModule, collect.BenchClass)):
        return
    if metafunc.config.pluginmanager.hasplugin("repeat"):
        definition.add_marker(pytest.mark.repeat(1), append=False)


def select_items(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Before any deselection: a gate item selected alone brings its runs."""
    for run in collect.add_gate_runs(items):
        run.ihook.pytest_itemcollected(item=run)


def modify_items(config: pytest.Config, items: list[pytest.Item]) -> None:
    """After the ordinary ``pytest_collection_modifyitems`` hooks of other plugins and conftests."""
    state = get(config)
    if config.pluginmanager.hasplugin("rerunfailures") and _reruns_possible(config, items):
        # A rerun would replace a failed sample with a later one and bias the
        # fraction upwards: every run is sampled exactly once.
        for item in collect.run_items(items):
            item.add_marker(pytest.mark.flaky(reruns=0), append=False)
    if state.settings.transpose:
        collect.transpose(items)
    report_compare.check_axes(items, state)
    if state.compare is not None and state.compare.config.plan:
        _plan(config, state, items)
        return
    report_compare.check_detectable(items, state)


def _plan(config: pytest.Config, state: State, items: list[pytest.Item]) -> None:
    """--prob-plan: print what each case needs, then deselect everything (nothing runs)."""
    lines = report_compare.plan_lines(items, state)
    reporter = config.pluginmanager.get_plugin("terminalreporter")
    if reporter is not None and not state.worker:
        reporter.write_line("")
        for line in lines:
            reporter.write_line(line)
    config.hook.pytest_deselected(items=list(items))
    items[:] = []


def collection_finished(session: pytest.Session) -> None:
    """The items are final (every ``pytest_collection_modifyitems``, wrappers such as ``--lf``/``--ff``
    included, has run; an xdist worker sends their ids to the controller after this)."""
    collect.order_gates(session.items)
    gating.verdict_items_last(session.items)
    book = get(session.config).gates
    if book is not None:
        # Serial session: the selected runs, so that verdicts know runs that never reported
        # (an xdist controller learns them from the workers' collection instead).
        book.expect([item.nodeid for item in session.items])


def _reruns_possible(config: pytest.Config, items: list[pytest.Item]) -> bool:
    """Whether pytest-rerunfailures could rerun a run: --reruns given, or a flaky marker around."""
    if getattr(config.option, "reruns", 0) or getattr(config.option, "reruns_delay", 0):
        return True
    return any(item.get_closest_marker("flaky") is not None for item in collect.run_items(items))


# -- runs ---------------------------------------------------------------------


def start_run(item: pytest.Item) -> recording.CurrentRun | None:
    if not isinstance(item, Run):
        return None
    run = recording.start(item.prob_case, item.prob_run, item.nodeid)
    for observer in get(item.config).observers:
        observer.run_started(item, run)
    return run


def end_run(item: pytest.Item) -> None:
    if not isinstance(item, Run):
        return
    run = recording.current_run()
    if run is not None:
        for observer in get(item.config).observers:
            observer.run_closed(item, run)
    recording.finish()


def before_setup(item: pytest.Item) -> None:
    if not isinstance(item, Run):
        return
    state = get(item.config)
    decision = state.run_decision(item.prob_case)
    if decision is not None:
        # Decided early, or a budget reached: this run is not executed (no fixture, no delay).
        run = recording.current_run()
        if run is not None:
            run.stopped = decision[0]
        pytest.skip(f"not run: {decision[1]}")
    state.pace()
    module = item.module
    if module is not None:
        run = recording.current_run()
        recording.finish()  # module setup() belongs to no run
        try:
            state.modules.setup(module)
        finally:
            recording._current = run  # noqa: SLF001 - restore the run


def after_phase(item: pytest.Item, call: pytest.CallInfo[None], report: pytest.TestReport) -> None:
    run = recording.current_run()
    if run is None or not isinstance(item, Run):
        return
    recording.on_phase(run, call)
    if item.prob_gated:
        gating.xfail_gated_failure(item, call, report)
    state = get(item.config)
    if call.excinfo is not None:
        for observer in state.observers:
            observer.phase_raised(item, run, call)
    if call.when == "teardown":
        if run.outcome is None:
            # Setup passed but the call never ran (an interrupted session):
            # nothing was sampled.
            run.outcome = SKIP
            run.message = run.message or "not run"
        for observer in state.observers:
            observer.run_finished(item, run)
        recording.attach(report, run)


def retry_call(item: pytest.Item, error: BaseException) -> None:
    """``--prob-retry``: call the run again while it raises a listed class; re-raise the last error.

    The call is repeated with the same fixtures (``item.runtest()``, so
    ``pytest_pyfunc_call`` plugins such as async ones run again). Usage the
    failed attempts recorded stays on the run: it was paid for. Only the last
    attempt's outcome and duration count.
    """
    policy = get(item.config).settings.retry
    run = recording.current_run()
    if policy is None or run is None or not isinstance(item, Run) or not policy.matches(error):
        raise error
    attempt = 1
    while attempt <= policy.retries:
        wait = policy.wait(error, attempt)
        error_type, text = retry.describe(error)
        entry = {"attempt": attempt, "error_type": error_type, "error": text, "wait": wait}
        run.retries.append(entry)
        _retry_event(entry)
        time.sleep(wait)
        attempt += 1
        started = time.perf_counter()
        try:
            item.runtest()
        except BaseException as exc:  # noqa: BLE001 - decided below, re-raised unless retried
            error = exc
        else:
            run.attempt_duration = time.perf_counter() - started
            return
        run.attempt_duration = time.perf_counter() - started
        if not policy.matches(error):
            break
    raise error


def _retry_event(entry: dict[str, Any]) -> None:
    """A span event on the run's current span: the run span when export is on. With export off
    the API is loaded only if the user's code loaded it, and its current span is then theirs or a
    no-op one; nothing is imported for this."""
    trace = sys.modules.get("opentelemetry.trace")
    if trace is None:
        return
    try:
        trace.get_current_span().add_event(
            "probability.retry",
            {f"probability.retry.{k}": v for k, v in entry.items()},
        )
    except Exception:  # noqa: BLE001 - an event must never break a run
        pass


def check_callable(item: pytest.Item) -> None:
    __tracebackhide__ = True
    if isinstance(item, Run):
        collect.check_callable(item)


def log_report(config: pytest.Config, report: pytest.TestReport, session: pytest.Session | None) -> None:
    state = get(config)
    if state.worker:
        return  # xdist ships the report, record attached, to the controller
    record = recording.record_from_report(report, state.cases)
    if record is not None:
        state.add(record)
        # pytest's terminal reporter keeps every report; what it carried lives on elsewhere.
        extras = report.__dict__
        del extras[recording.REPORT_ATTRIBUTE]
        for name, consume in state.report_consumers.items():
            value = extras.pop(name, None)
            if value is not None:
                consume(value)
    if session is not None and report.failed:
        watch_stop(session)


# -- xdist controller ---------------------------------------------------------


def configure_node(config: pytest.Config, node: Any) -> None:
    """Pass a new worker the folder where gate verdicts will be published."""
    book = get(config).gates
    if book is not None:
        node.workerinput["prob_gate_folder"] = str(book.open_channel())


def node_collection_finished(config: pytest.Config, ids: list[str]) -> None:
    book = get(config).gates
    if book is not None:
        book.expect(list(ids))


def watch_stop(session: pytest.Session) -> None:
    """Once the session is stopping (-x, maxfail), release waiting gate items."""
    book = get(session.config).gates
    if book is not None and (session.shouldstop or session.shouldfail):
        book.stop()


# -- session end --------------------------------------------------------------


def finish_session(session: pytest.Session, exitstatus: int | pytest.ExitCode) -> None:
    state = get(session.config)
    state.notes.extend(state.modules.teardown_all())
    if state.worker:
        return
    summary = state.summary()
    for finisher in state.finishers:
        try:
            # session.exitstatus, not the argument: an earlier finisher (gates) may have changed it.
            finisher(session, state, summary, int(session.exitstatus))
        except OSError as exc:
            state.notes.append(f"could not write a report: {exc}")
            session.exitstatus = pytest.ExitCode.INTERNAL_ERROR


def _settle_gates(session: pytest.Session, state: State, summary: Any, exitstatus: int) -> None:
    """Gate verdicts at the end: exit status without gate items, --lf reruns whole cases."""
    book = state.gates
    if book is None:
        return
    book.stop()
    book.cleanup()
    failed = state.analysis().failed_gates
    if not failed:
        return
    if not state.stats.gate_items and session.exitstatus == 0:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED
    gating.mark_lastfailed(session.config, [r.nodeid for row in failed for r in row.row.records])


def _write_json(session: pytest.Session, state: State, summary: Any, exitstatus: int) -> None:
    assert state.settings.json_path is not None
    report = report_json.build(
        summary,
        settings=state.settings.to_dict(),
        exit_status=int(session.exitstatus),
        row_fields=state.json_row_fields,
        extra={key: build(summary) for key, build in state.json_sections.items()},
    )
    report_json.write(state.settings.json_path, report)


def terminal_summary(terminalreporter: Any, config: pytest.Config) -> None:
    state = get(config)
    if state.worker or not (state.records or state.notes):
        return
    summary = state.summary()
    if summary.duplicates:
        state.notes.append(f"{summary.duplicates} run(s) were reported more than once; each counted once (the last report)")
    sections = [section(state) for section in state.sections]
    report_terminal.write(terminalreporter, summary, state.columns, state.notes, sections)
