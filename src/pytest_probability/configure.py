"""The composition root: the session's State, the role of this process, and every feature wired once.

Called from ``pytest_configure`` (:func:`configure`). It reads the settings,
picks the role (serial, xdist controller or worker: :func:`role_of`), builds
each stage's objects and registers the features on the State's extension
points (:mod:`pytest_probability.protocols`), then registers the role's
plugin object (:mod:`pytest_probability.roles`). This is the one module that
knows every stage and the exporter; the stages know only their own inputs.

Lazy imports: the modules of an option are imported here only when the
option is on (the JSON and HTML writers, budgets, retries, the exporter);
comparisons import their maths only once something is compared
(docs/developer-guide.md, "Lazy imports").
"""

from __future__ import annotations

import signal
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

import pytest

from . import otel
from .collect.benchfiles import rewrite_asserts
from .config.marker import MARKER_LINE
from .config.settings import resolve, resolve_stats
from .config.spec import Specs
from .decide.comparisons import ArmVerdicts, BaselineVerdicts, Comparing, requested
from .model.case import CaseRef
from .protocols import VerdictKind
from .record.intake import Intake, InterruptedRuns, LateUsage
from .roles import RetryHooks, Worker
from .run.announce import CaseAnnouncements
from .run.phases import RunPhases
from .session import STATE_KEY, State
from .vocabulary import SPAN_OFF, WORKER_CHANNEL

if TYPE_CHECKING:
    from .decide.book import DecisionBook
    from .decide.results import Results

SERIAL, CONTROLLER, WORKER = "serial", "controller", "worker"


def role_of(config: pytest.Config) -> str:
    """This process's role: an xdist worker has ``workerinput``; the controller is the process in which
    xdist will start workers (its own rule: ``--dist`` other than ``no``, and not ``--collect-only``)."""
    if hasattr(config, "workerinput"):
        return WORKER
    if getattr(config.option, "dist", "no") != "no" and not config.option.collectonly:
        return CONTROLLER
    return SERIAL


def configure(config: pytest.Config) -> State:
    config.addinivalue_line("markers", MARKER_LINE)
    settings = resolve(config)
    stats = resolve_stats(config)
    comparisons_on = requested(config)
    if comparisons_on and config.getoption("prob_plan") and role_of(config) == CONTROLLER:
        # --prob-plan runs nothing: no workers to start, and the plan is printed here. xdist decides
        # from these options, after this hook (tryfirst), whether to start workers.
        config.option.dist = "no"
        config.option.numprocesses = 0
        config.option.tx = []
    role = role_of(config)
    state = State(settings=settings, specs=Specs(stats))
    config.stash[STATE_KEY] = state
    rewrite_asserts(config, settings.pattern)
    state.runs = RunPhases(state, ships=role == WORKER, announce=_announcer(config) if role == WORKER else None)

    book = results = None
    if role != WORKER:
        # The decisions, results and outputs are the aggregating process's: imported here, so that an
        # xdist worker's start-up does not pay for them (issue 25, benchmarks/concurrency.py).
        from .decide.book import DecisionBook, DecisionsLink, deferred_text
        from .decide.results import Results

        budget = None
        if settings.budgeted:
            from .decide.budget import Budget

            budget = Budget(settings.max_cost, settings.max_tokens, settings.max_time)
        book = DecisionBook(state.specs, budget=budget)
        if settings.shard is not None:
            book.deferred = deferred_text(*settings.shard)
            state.notes.append(f"shard {settings.shard[0]}/{settings.shard[1]}: its gates, baselines and comparisons "
                               "are decided at the merge (python -m pytest_probability merge)")
        results = Results(state, book, deferred=settings.shard is not None)
        state.decisions = book
        state.sinks.append(book)
        state.links.append(DecisionsLink(book))
    else:
        folder = config.workerinput.get(WORKER_CHANNEL)  # type: ignore[attr-defined]
        if folder is not None:
            from .decide.channel import ChannelReader

            state.decisions = ChannelReader(Path(folder), state.specs, settings.budgeted, settings.gate_timeout)

    comparing = Comparing(config, stats, results)
    comparing.deferred = settings.shard is not None
    state.checks.append(comparing)
    # A benchmark's verdicts: its A/B arms' under margin= (the marks say, so always on), then the
    # baseline's under a margin; their items come in this order after the benchmark's runs.
    kinds: list[VerdictKind] = [ArmVerdicts(comparing)]
    if comparisons_on:
        compared = comparing.start()
        if compared.baseline is not None:
            kinds.append(BaselineVerdicts(comparing, compared))
    state.verdict_kinds.extend(kinds)
    if book is not None:
        book.kinds.update((kind.kind, kind) for kind in kinds)

    intake = Intake(state) if role != WORKER else None
    state.links.append(LateUsage(intake))
    state.links.append(InterruptedRuns(intake))
    if settings.shard is not None:
        from .decide.settle import ShardDeselected  # a worker ships its count of runs of other shards

        state.links.append(ShardDeselected(state))
    if book is not None and results is not None and intake is not None:
        _aggregating(config, state, role, book, results, intake, comparing)
    else:
        config.pluginmanager.register(Worker(state, config), "probability-worker")
        if settings.journal is not None:
            _resume_on_worker(config, state)
    _export(config, state, role)
    if settings.span_usage != SPAN_OFF:
        # After the export's provider (global when none is set), so that the first look finds it.
        from .otel.usage import SpanUsage

        span_usage = SpanUsage()
        state.observers.append(span_usage)
        span_usage.look()
    if settings.retry is not None:
        config.pluginmanager.register(RetryHooks(state), "probability-retry-hooks")  # no wrapper per run otherwise
    handle_sigterm(config, state)
    return state


def _announcer(config: pytest.Config) -> Callable[[CaseRef], None] | None:
    """A worker's :class:`~.run.announce.CaseAnnouncements`, in the decisions channel's folder."""
    workerinput = config.workerinput  # type: ignore[attr-defined]
    folder = workerinput.get(WORKER_CHANNEL)
    if folder is None:
        return None
    return CaseAnnouncements(Path(folder), str(workerinput.get("workerid", "gw"))).announce


def _aggregating(config: pytest.Config, state: State, role: str, book: DecisionBook, results: Results,
                 intake: Intake, comparing: Comparing) -> None:
    """The outputs and the session's end, in the process that aggregates."""
    from .decide.settle import EmptyShard, SettleGates
    from .report.comparisons import ComparisonsFacet
    from .report.explain import ExplainFacet
    from .report.spend import SpendFacet, UnpricedModels
    from .report.intervals import StatsFacet
    from .roles import Controller, Serial

    settings = state.settings
    state.facets += [
        StatsFacet(results, state.stats),
        SpendFacet(results, state.stats.stop, book.budget),
        ComparisonsFacet(comparing, state.cases),
    ]
    if settings.shard is not None:
        from .report.json_report import ShardFacet

        state.facets.append(ShardFacet(settings.shard, state.cases, book.expected, _suite(config),
                                       compare=lambda: _compare_settings(comparing, state.cases)))
    if settings.journal is not None:
        _journal(config, state, role, book, intake)
    state.facets += [
        # last: its JSON fields are the others' with the readings added
        ExplainFacet(results, comparing, state.stats, lambda: config.get_terminal_writer().fullwidth),
    ]
    empty_ok: Callable[[], bool] = lambda: False
    if settings.shard is not None:
        empty_shard = EmptyShard(state, bool(config.option.collectonly))
        state.finishers.append(empty_shard)
        empty_ok = lambda: empty_shard.empty  # noqa: E731
    state.finishers += [SettleGates(book, results), comparing]
    if settings.prices is not None:
        state.finishers.append(UnpricedModels(settings.prices.source))
    history = comparing.session.config.history if comparing.session is not None else None
    if history is not None and settings.shard is not None:
        # A shard's report holds part of the night: as a baseline it would compare every case with a part.
        raise pytest.UsageError("--prob-history cannot be used with --prob-shard: a shard's report holds only "
                                "part of the runs (the merge does not keep a history yet)")
    report = None
    if settings.json_path is not None or settings.html_path is not None or history is not None:
        from . import files
        from .report.writers import HistoryReport, HtmlReport, JsonReport, ReportDict

        report = ReportDict(settings.to_dict(), state.facets)
        if settings.json_path is not None:
            files.check_path(settings.json_path)
            state.finishers.append(JsonReport(settings.json_path, report, state.notes, empty_ok))
        if settings.html_path is not None:
            files.check_path(settings.html_path, "--prob-html")
            state.finishers.append(HtmlReport(settings.html_path, report, state.notes, settings.trace_url, empty_ok))
        if history is not None:
            state.finishers.append(HistoryReport(Path(history), report))
    role_object: Serial | Controller
    if role == CONTROLLER:
        role_object = Controller(state, intake, book, results, comparing, report, config)
    else:
        role_object = Serial(state, intake, book, results, comparing, report)
    config.pluginmanager.register(role_object, "probability-role")


def _suite(config: pytest.Config) -> str:
    """The suite's name: ``--prob-suite``, else the rootdir's (what shards and journals are checked against)."""
    return str(config.getoption("prob_suite") or config.getini("prob_suite") or "").strip() or config.rootpath.name


def _journal(config: pytest.Config, state: State, role: str, book: DecisionBook, intake: Intake) -> None:
    """``--prob-journal``: the journal read back (its runs are the session's first records, and deselected)
    and opened for appending, with its facet. A journal that cannot be resumed from is a usage error.
    ``--collect-only`` only deselects what the journal holds: it shows what a resumed session would run."""
    from .model.run import RunRecord
    from .record import journal
    from .report.resume import JournalFacet

    settings = state.settings
    path = settings.journal
    assert path is not None
    head = journal.header(_suite(config), settings.to_dict(), state.stats.to_dict())
    try:
        writer, contents = journal.start(path, head, state.notes, write=not config.option.collectonly)
        if writer is None:
            state.checks.append(journal.Resume(path, contents))
            return
        cases = state.cases
        for key, data in contents.cases.items():
            cases[key] = CaseRef.from_dict(data)
        resumed = [RunRecord.from_dict(data, cases) for data in contents.records]
    except journal.JournalError as exc:
        raise pytest.UsageError(str(exc)) from None
    except (KeyError, TypeError, ValueError) as exc:
        raise pytest.UsageError(f"--prob-journal: {path} holds an entry this version cannot read ({exc!r}); give "
                                "another path to start over") from None
    counts: dict[str, int] = {}
    for record in {record.nodeid: record for record in resumed}.values():  # a run reported twice counts once
        counts[record.case.key] = counts.get(record.case.key, 0) + 1
    book.resumed = counts
    for record in resumed:  # as if they had just reported: rows, verdicts, early stops and budgets see them
        intake.add(record, finished=False)
    intake.add_late(contents.late, journaled=True)
    intake.journal = writer
    state.facets.append(JournalFacet(path, resumed, writer))
    # First of the finishers: the gates' and the reports' see the status with the resumed runs in it.
    state.finishers.append(journal.ResumedOutcomes(resumed, lambda case: state.specs.of(case).gated,
                                                   bool(config.option.runxfail)))
    config.add_cleanup(writer.close)
    if role == CONTROLLER:
        # The workers collect: each deselects what was resumed, reading the journal up to this length.
        state.links.append(journal.JournalLink(path, contents.length))
        config.pluginmanager.register(journal.JournalHooks(lambda: book.folder), "probability-journal")
    else:
        state.checks.append(journal.Resume(path, contents))


def _resume_on_worker(config: pytest.Config, state: State) -> None:
    """An xdist worker deselects the runs its controller resumed from the journal (as of the controller's start)."""
    from .record import journal

    workerinput = config.workerinput  # type: ignore[attr-defined]
    given = workerinput.get(journal.WORKER_INPUT)
    if given is None:
        return
    path = Path(given["path"])
    folder = workerinput.get(WORKER_CHANNEL)
    try:
        contents = journal.read(path, limit=given["length"])
    except journal.JournalError as exc:
        raise pytest.UsageError(str(exc)) from None
    state.checks.append(journal.Resume(path, contents, Path(folder) if folder else None,
                                       str(workerinput.get("workerid", "gw"))))


def _compare_settings(comparing: Comparing, cases: dict[str, Any]) -> dict[str, Any] | None:
    """A shard's comparison settings, for the merge to compare as the session would have; None when the
    session compares nothing (no option of comparisons, no case marked ``compare=``)."""
    session = comparing.session
    if session is None:
        if not any(key == "compare" for case in cases.values() for key, _ in case.marks):
            return None
        session = comparing.start()
    return {**session.config.to_dict(), "margin_given": session.config.margin_given}


def _export(config: pytest.Config, state: State, role: str) -> None:
    """OpenTelemetry export, when an option or an ``OTEL_*`` variable turns it on (only then is the SDK imported)."""
    # A shard's metrics are its counters only, as their own series (service.instance.id shard-K-of-N): they
    # add over the shards, while a whole-case gauge (pass fraction, interval, verdict) of one shard's part
    # would overwrite the others' (the merge writes those).
    export = otel.configure(config, worker=role == WORKER, facets=state.facets, notes=state.notes,
                            shard=state.settings.shard)
    if export is None:
        return
    state.observers.extend(export.observers)
    state.links.extend(export.links)
    if export.finisher is not None:
        state.finishers.append(export.finisher)


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
        if state.taking:
            # A record is being taken in: it raises once the record is in (roles.Aggregating).
            state.interrupt_pending = True
            return
        raise KeyboardInterrupt("SIGTERM")

    signal.signal(signal.SIGTERM, on_sigterm)

    def restore() -> None:
        if signal.getsignal(signal.SIGTERM) is on_sigterm:
            signal.signal(signal.SIGTERM, signal.SIG_DFL)

    config.add_cleanup(restore)
