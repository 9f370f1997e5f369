"""The session's life: configure, each run's phases, and the session's end.

Hooks in :mod:`pytest_probability.plugin` call these functions. Reporters and
exporters plug in through :class:`~pytest_probability.state.State`
(``observers`` see runs start and finish in the executing process;
``finishers`` get the aggregated summary once, in the aggregating process).
"""

from __future__ import annotations

import signal
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from . import collect, options, otel
from .collect import Run
from .state import STATE_KEY, State, is_worker

# Lazy imports: the modules of an option are imported when the option is on,
# and the modules of benchmarks (recording, gating, analysis, the reporters)
# when the session has a benchmark run or record to handle, inside the
# function that first needs them. Importing the plugin, and a session
# without benchmarks, load only this module, collect, options, state and
# otel.options (docs/developer-guide.md, "Lazy imports").


#: The recording module, bound by :func:`configure`, which imports it in every session: the
#: functions on the per-run path use it directly, where a function-level ``from . import``
#: would cost about 0.8 µs per call (eight calls per run).
recording: Any = None

#: Attribute of a run's setup report carrying its case (on an xdist worker, once per case).
CASE_ATTRIBUTE = "prob_case"


def configure(config: pytest.Config) -> State:
    config.addinivalue_line("markers", options.MARKER_LINE)
    settings = options.resolve(config)
    state = State(settings=settings, worker=is_worker(config), stats=options.resolve_stats(config))
    config.stash[STATE_KEY] = state
    collect.rewrite_asserts(config, settings.pattern)
    global recording
    from . import gating, report_compare, report_spend, report_stats
    from . import recording

    if state.worker:
        state.gate_folder = config.workerinput.get("prob_gate_folder")  # type: ignore[attr-defined]
        if state.gate_folder is not None:
            state.decisions = gating.DecisionReader(Path(state.gate_folder))
    else:
        budget = None
        if settings.budgeted:
            from .budget import Budget

            budget = Budget(settings.max_cost, settings.max_tokens, settings.max_time)
        state.gates = gating.GateBook(state.stats, budget=budget, specs=state.specs)
        state.finishers.append(_settle_gates)
        state.report_consumers[recording.LATE_ATTRIBUTE] = state.add_late
        report_stats.install(state)
        report_spend.install(state)
    report_compare.configure(config, state)
    if (settings.json_path is not None or settings.html_path is not None) and not state.worker:
        from . import files

        if settings.json_path is not None:
            files.check_path(settings.json_path)
            state.finishers.append(_write_json)
        if settings.html_path is not None:
            files.check_path(settings.html_path, "--prob-html")
            state.finishers.append(_write_html)
    report_compare.install_history(state)
    otel.configure(config, state)
    handle_sigterm(config, state)
    return state


# -- SIGTERM ------------------------------------------------------------------


def handle_sigterm(config: pytest.Config, state: State) -> None:
    """Make SIGTERM (what CI sends a cancelled job) end the session as Ctrl-C does.

    pytest turns Ctrl-C into ``KeyboardInterrupt``: the session stops, the
    summary is printed and ``pytest_sessionfinish`` runs, so the finishers
    write the JSON report and flush or spill the telemetry. SIGTERM's
    default action kills the process with none of that. A handler someone
    else installed (and any thread but the main one) is left alone; the
    previous handler is restored when the config is cleaned up.
    """
    if threading.current_thread() is not threading.main_thread():
        return
    if signal.getsignal(signal.SIGTERM) is not signal.SIG_DFL:
        return

    def on_sigterm(signum: int, frame: Any) -> None:
        # A second SIGTERM gets the default action: the process ends at once.
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        if state.finishing:
            # The finishers are writing the report and flushing within their deadline:
            # let them finish; the session still ends as interrupted.
            state.terminated = True
            return
        raise KeyboardInterrupt("SIGTERM")

    signal.signal(signal.SIGTERM, on_sigterm)

    def restore() -> None:
        if signal.getsignal(signal.SIGTERM) is on_sigterm:
            signal.signal(signal.SIGTERM, signal.SIG_DFL)

    config.add_cleanup(restore)


def get(config: pytest.Config) -> State:
    return config.stash[STATE_KEY]


# -- collection ---------------------------------------------------------------


def before_generate(metafunc: pytest.Metafunc) -> None:
    """Keep pytest-repeat from multiplying benchmarks (``--prob-runs`` owns repetition), and the
    Metafunc for the benchmark's cases (``collect.keep_metafunc``)."""
    definition = metafunc.definition
    if not isinstance(definition.parent, (collect.BenchModule, collect.BenchClass)):
        return
    collect.keep_metafunc(get(metafunc.config), metafunc)
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
    from . import report_compare

    report_compare.check_axes(items, state)
    if state.compare is not None and state.compare.config.plan:
        _plan(config, state, items)
        return
    report_compare.check_detectable(items, state)


def _plan(config: pytest.Config, state: State, items: list[pytest.Item]) -> None:
    """--prob-plan: print what each case needs, then deselect everything (nothing runs)."""
    from . import report_compare

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
    from . import gating

    collect.order_gates(session.items)
    gating.verdict_items_last(session.items)
    book = get(session.config).gates
    if book is not None:
        # Serial session: the selected runs, so that verdicts know runs that never reported
        # (an xdist controller learns them from the workers' collection instead).
        keys = {run.prob_case.key: run.prob_case.key for run in collect.run_items(session.items)}
        book.expect([item.nodeid for item in session.items], keys)


def _reruns_possible(config: pytest.Config, items: list[pytest.Item]) -> bool:
    """Whether pytest-rerunfailures could rerun a run: --reruns given, or a flaky marker around."""
    if getattr(config.option, "reruns", 0) or getattr(config.option, "reruns_delay", 0):
        return True
    return any(item.get_closest_marker("flaky") is not None for item in collect.run_items(items))


# -- runs ---------------------------------------------------------------------


def start_run(item: pytest.Item) -> Any:
    """The run's ``recording.CurrentRun``; None for an item that is not a run."""
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
    if module is not None and not state.modules.ready(module):
        run = recording.current_run()
        recording.finish()  # module setup() belongs to no run
        try:
            state.modules.setup(module)
        finally:
            recording.resume(run)


def after_phase(item: pytest.Item, call: pytest.CallInfo[None], report: pytest.TestReport) -> None:
    if not isinstance(item, Run):
        return
    run = recording.current_run()
    if run is None:
        return
    recording.on_phase(run, call)
    if item.prob_gated:
        from . import gating

        gating.xfail_gated_failure(item, call, report)
    state = get(item.config)
    if call.when == "setup" and run.case.key not in state.cases:
        # Serial: records rebuilt from reports share the item's CaseRef. xdist: the
        # controller learns each case before its first run here can crash this worker.
        state.cases[run.case.key] = run.case
        if state.worker:
            setattr(report, CASE_ATTRIBUTE, run.case.to_dict())
    if call.excinfo is not None:
        for observer in state.observers:
            observer.phase_raised(item, run, call)
    if call.when == "teardown":
        if run.outcome is None:
            # Setup passed but the call never ran (an interrupted session):
            # nothing was sampled.
            from .vocabulary import SKIP

            run.outcome = SKIP
            run.message = run.message or "not run"
        for observer in state.observers:
            observer.run_finished(item, run)
        recording.attach(report, run, local=not state.worker)


def retry_call(item: pytest.Item, error: BaseException) -> None:
    """``--prob-retry``: call the run again while it raises a listed class; re-raise the last error.

    The call is repeated with the same fixtures (``item.runtest()``, so
    ``pytest_pyfunc_call`` plugins such as async ones run again). Usage the
    failed attempts recorded stays on the run: it was paid for. Only the last
    attempt's outcome and duration count.
    """
    from . import recording, retry

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
    if state.in_flight is not None:
        _track_phase(state, report)
    if state.cases:  # else no run has started yet (a session without benchmarks): no record
        _take_record(state, report)
    if session is not None and report.failed:
        watch_stop(session)


def _take_record(state: State, report: pytest.TestReport) -> None:
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


# -- xdist controller ---------------------------------------------------------


def configure_node(config: pytest.Config, node: Any) -> None:
    """Pass a new worker the folder where gate verdicts will be published."""
    state = get(config)
    if state.in_flight is None:
        state.in_flight = {}  # xdist: workers can crash, so track what each run last reported
    book = state.gates
    if book is not None:
        node.workerinput["prob_gate_folder"] = str(book.open_channel())


def node_collection_finished(config: pytest.Config, ids: list[str]) -> None:
    book = get(config).gates
    if book is not None:
        book.expect(list(ids))


def node_down(config: pytest.Config, node: Any, error: Any) -> None:
    """A worker finished (or crashed): take its late usage, remember why it went down."""
    from . import recording

    state = get(config)
    output = getattr(node, "workeroutput", None) or {}
    state.add_late(output.get(recording.LATE_ATTRIBUTE))
    if error is not None:
        state.node_errors[str(getattr(getattr(node, "gateway", None), "id", "?"))] = str(error)
        release_rescheduled_gates(config, state, node)


def _track_phase(state: State, report: pytest.TestReport) -> None:
    """Which phase of each executing run last reported: where a worker crash hit it."""
    case = report.__dict__.pop(CASE_ATTRIBUTE, None)
    if case is not None and case["key"] not in state.cases:
        from .model.case import CaseRef

        state.cases[case["key"]] = CaseRef.from_dict(case)
    assert state.in_flight is not None
    if report.when in ("setup", "call"):
        state.in_flight[report.nodeid] = report.when
    else:
        state.in_flight.pop(report.nodeid, None)


def crashed(config: pytest.Config, nodeid: str, report: pytest.TestReport) -> None:
    """xdist: a worker died while executing ``nodeid``; a run that crashed is an errored run.

    Its record says what happened; the gate book gets it like any other
    record, so a gated case's verdict is published as soon as its last run
    has reported, crashed or not. A gated case's crashed run is reported as
    xfailed, as its failed runs are: the gate decides.
    """
    from . import recording

    state = get(config)
    record = recording.crash_record(nodeid, state.cases, _crash_text(state, report), _crash_phase(state, nodeid))
    if record is not None:
        state.add(record)
        book, key = state.gates, record.case.key
        if book is not None and not config.option.runxfail:
            judged = next((kind for kind, keys in book.judged.items() if key in keys), None)
            if key in book.gated or judged is not None:
                report.outcome = "skipped"
                reason = f"compared case: its {judged} item decides" if judged else "gated case: its gate item decides"
                report.wasxfail = reason  # type: ignore[attr-defined]
    # Otherwise not a run (a gate item, a plain test): xdist's own report says it all.


def release_rescheduled_gates(config: pytest.Config, state: State, node: Any) -> None:
    """A worker crashed: gated cases whose runs it still had queued get UNDECIDED at once.

    xdist hands the crashed worker's queue to the other workers, at the end
    of their queues. A gate item cannot wait for such a run: it may sit
    behind the gate item on the same worker, or alone in a new worker's
    queue, which xdist only starts once it has a second item or is shut
    down. Either way the gate item would wait until ``prob_gate_timeout``.
    So those cases get an UNDECIDED verdict now, which says why; their runs
    still execute and count in the table. Called before xdist reschedules
    (``pytest_testnodedown``); reads the load scheduler's queues
    (``node2pending``), other schedulers are left alone.
    """
    book = state.gates
    sched = getattr(config.pluginmanager.getplugin("dsession"), "sched", None)
    queues = getattr(sched, "node2pending", None)
    collection = getattr(sched, "collection", None)
    if book is None or book.folder is None or not isinstance(queues, dict) or collection is None:
        return
    from . import gating, recording

    queued = queues.get(node) or []
    rescheduled: dict[str, int] = {}
    for index in queued[1:]:  # queued[0] is the item that crashed
        match = recording.RUN_ID.match(collection[index])
        if match is not None and match.group("key") in book.gated:
            rescheduled[match.group("key")] = rescheduled.get(match.group("key"), 0) + 1
    for key, count in rescheduled.items():
        if key in book.published:
            continue
        text = (
            f"UNDECIDED: a worker crash rescheduled {count} run(s) of this case, "
            "which its gate item cannot wait for (the runs still count in the table)"
        )
        book.publish(key, gating.GateVerdict(False, text))
        label = state.cases[key].label if key in state.cases else key
        state.notes.append(f"gate item of {label}: {text}")


def _crash_text(state: State, report: pytest.TestReport) -> str:
    text = str(report.longrepr or "a worker crashed")
    worker = getattr(getattr(getattr(report, "node", None), "gateway", None), "id", None)
    error = state.node_errors.get(str(worker)) if worker is not None else None
    return f"{text} ({error})" if error else text


def _crash_phase(state: State, nodeid: str) -> str:
    last = (state.in_flight or {}).pop(nodeid, None)
    return {"setup": "call", "call": "teardown"}.get(last or "", "setup")


def watch_stop(session: pytest.Session) -> None:
    """Once the session is stopping (-x, maxfail), release waiting gate items."""
    book = get(session.config).gates
    if book is not None and (session.shouldstop or session.shouldfail):
        book.stop()


# -- session end --------------------------------------------------------------


def finish_session(session: pytest.Session, exitstatus: int | pytest.ExitCode) -> None:
    from . import recording

    state = get(session.config)
    state.notes.extend(state.modules.teardown_all())
    if state.worker:
        # Late usage after this worker's last teardown report travels with its workeroutput.
        session.config.workeroutput[recording.LATE_ATTRIBUTE] = recording.take_late()  # type: ignore[attr-defined]
        return
    state.finishing = True
    state.add_late(recording.take_late())
    if state.late_usage:
        state.notes.append(
            f"{state.late_usage} record_usage()/record_cost() call(s) came after their run had ended; "
            "each was charged to its own run"
        )
    summary = state.summary()
    for finisher in state.finishers:
        try:
            # session.exitstatus, not the argument: an earlier finisher (gates) may have changed it.
            finisher(session, state, summary, int(session.exitstatus))
        except OSError as exc:
            state.notes.append(f"could not write a report: {exc}")
            session.exitstatus = pytest.ExitCode.INTERNAL_ERROR
    if state.terminated and session.exitstatus == 0:
        session.exitstatus = pytest.ExitCode.INTERRUPTED


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
    from . import gating

    gating.mark_lastfailed(session.config, [r.nodeid for row in failed for r in row.row.records])


def _report(session: pytest.Session, state: State, summary: Any) -> dict[str, Any]:
    """The session's report dict, which the JSON and the HTML reporter both write."""
    from . import report_json

    return report_json.build(
        summary,
        settings=state.settings.to_dict(),
        exit_status=int(session.exitstatus),
        row_fields=state.json_row_fields,
        extra={key: build(summary) for key, build in state.json_sections.items()},
    )


def _write_json(session: pytest.Session, state: State, summary: Any, exitstatus: int) -> None:
    path = state.settings.json_path
    assert path is not None
    if not state.records:
        # --collect-only, -k that selects nothing, a missing path, a collection error:
        # no run was executed, and an empty report must not replace a good one.
        if path.is_file():
            state.notes.append(f"no benchmark run was executed: {path} was left as it was")
        return
    from . import report_json

    report_json.write(path, _report(session, state, summary))


def _write_html(session: pytest.Session, state: State, summary: Any, exitstatus: int) -> None:
    path = state.settings.html_path
    assert path is not None
    if not state.records:  # as for the JSON report: an empty page must not replace a good one
        if path.is_file():
            state.notes.append(f"no benchmark run was executed: {path} was left as it was")
        return
    from . import files, report_html, report_json

    page = report_html.render(_report(session, state, summary), trace_url=state.settings.trace_url)
    files.write_text(path, page)  # as the JSON: a symlink's target, a FIFO or a device written through


def unconfigure(config: pytest.Config) -> None:
    """Let go of the session's records, rows and analysis once everything is written: pytest's
    full garbage collections at unconfigure then do not walk them (several per case)."""
    state = config.stash.get(STATE_KEY, None)
    if state is not None:
        state.release()


def terminal_summary(terminalreporter: Any, config: pytest.Config) -> None:
    state = get(config)
    if state.worker or not (state.records or state.notes):
        return
    summary = state.summary()
    if summary.duplicates:
        state.notes.append(f"{summary.duplicates} run(s) were reported more than once; each counted once (the last report)")
    sections = [section(state) for section in state.sections]
    from . import report_terminal

    report_terminal.write(terminalreporter, summary, state.columns, state.notes, sections)
