"""Per-session state of the plugin, kept in ``config.stash``.

Also the one place that knows about pytest-xdist: a worker executes runs and
ships their records on its reports; only the controller (or a serial
session) collects records, aggregates them and writes reports.
"""

from __future__ import annotations

import dataclasses
import itertools
import time
import types
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable

import pytest

from .options import Settings, too_many_runs

if TYPE_CHECKING:  # imported where used: a session without benchmarks needs none of them
    from .analysis import StatsConfig
    from .gating import GateBook
    from .model.run import RunRecord
    from .model.rows import Summary


def is_worker(config: pytest.Config) -> bool:
    """True in a pytest-xdist worker process."""
    return hasattr(config, "workerinput")


@dataclass
class ModuleHooks:
    """Module-level ``setup()`` / ``teardown()`` of benchmark files, once per file per process."""

    done: dict[str, BaseException | None] = field(default_factory=dict)
    teardowns: list[tuple[str, Callable[[], Any]]] = field(default_factory=list)

    def ready(self, module: types.ModuleType) -> bool:
        """Whether the module's ``setup()`` already ran, and passed (the usual case: nothing to do)."""
        return self.done.get(module.__name__, False) is None

    def setup(self, module: types.ModuleType) -> None:
        name = module.__name__
        if name in self.done:
            error = self.done[name]
            if error is not None:
                raise RuntimeError(f"setup() of benchmark file {module.__file__} failed: {error!r}") from error
            return
        setup = getattr(module, "setup", None)
        try:
            if callable(setup):
                setup()
        except BaseException as exc:
            self.done[name] = exc
            raise
        self.done[name] = None
        teardown = getattr(module, "teardown", None)
        if callable(teardown):
            self.teardowns.append((str(module.__file__), teardown))

    def teardown_all(self) -> list[str]:
        """Run every pending teardown() in reverse order; return error messages."""
        errors = []
        while self.teardowns:
            path, teardown = self.teardowns.pop()
            try:
                teardown()
            except Exception as exc:  # reported, never raised: the runs are done
                errors.append(f"teardown() of {path} failed: {type(exc).__name__}: {exc}")
        return errors


def _default_stats() -> StatsConfig:
    from .analysis import StatsConfig

    return StatsConfig()


# eq and repr off: one State per session, compared by identity (field-by-field equality
# means nothing for it, and its repr would print every record); generating them
# cost about 1 ms of every pytest start-up.
@dataclass(eq=False, repr=False)
class State:
    settings: Settings
    worker: bool
    stats: StatsConfig = field(default_factory=_default_stats)
    gates: GateBook | None = None
    #: xdist worker: the folder the controller publishes gate verdicts in.
    gate_folder: str | None = None
    #: xdist worker: the reading side of the decisions channel (early stops, budgets).
    decisions: Any = None
    #: (marks, runs) -> CaseSpec, shared by the cases that have the same (``gating.spec_of``).
    specs: dict[Any, Any] = field(default_factory=dict)
    case_order: Any = field(default_factory=itertools.count)
    records: list[RunRecord] = field(default_factory=list)
    #: One CaseRef per case key, shared by the records of its runs.
    cases: dict[str, Any] = field(default_factory=dict)
    modules: ModuleHooks = field(default_factory=ModuleHooks)
    runs_started: int = 0
    #: Runs collected so far (cases × runs), held to ``settings.max_runs``.
    runs_collected: int = 0
    #: Lines shown under the table (export problems, teardown errors).
    notes: list[str] = field(default_factory=list)
    #: Objects with run_started/phase_raised/run_finished/run_closed(item, run, ...):
    #: called in the process executing the run (phase_raised only for a phase that raised).
    observers: list[Any] = field(default_factory=list)
    #: Teardown-report attribute -> callable(value), in the aggregating process:
    #: what observers put in ``CurrentRun.report_extras`` on xdist workers.
    report_consumers: dict[str, Callable[[Any], None]] = field(default_factory=dict)
    #: Callables (session, state, summary, exitstatus) run once at session end
    #: in the aggregating process: JSON report, metrics export, ...
    finishers: list[Callable[..., None]] = field(default_factory=list)
    #: Extra table columns after the fraction, extra JSON row fields and sections.
    columns: list[Callable[..., str]] = field(default_factory=list)
    json_row_fields: list[Callable[..., dict[str, Any]]] = field(default_factory=list)
    json_sections: dict[str, Callable[..., Any]] = field(default_factory=dict)
    #: Callables (state) -> lines for sections after the table (gates, metrics).
    sections: list[Callable[..., Any]] = field(default_factory=list)
    #: Callables (summary) -> metric series added to the session's metrics.
    metric_series: list[Callable[..., Any]] = field(default_factory=list)
    #: xdist controller: node id -> phase last reported, for runs executing now.
    in_flight: dict[str, str] | None = None
    #: xdist controller: worker id -> why it went down (for the record of a crashed run).
    node_errors: dict[str, str] = field(default_factory=dict)
    #: Set while the finishers run (SIGTERM then lets them finish), and on SIGTERM during them.
    finishing: bool = False
    terminated: bool = False
    #: Usage calls charged to their run after it had ended (from threads or tasks that outlived it).
    late_usage: int = 0
    #: Verdict kinds besides gates, kind -> callable(CaseRef) -> bool, asked at
    #: collection in every process: whether the case gets a verdict item of that
    #: kind (its failing runs are then xfailed). The GateBook decides them.
    case_judges: dict[str, Callable[..., bool]] = field(default_factory=dict)
    #: Baselines and A/B comparisons of the session (report_compare.CompareSession).
    compare: Any = None
    #: The Metafunc of the benchmark being collected (``collect.keep_metafunc``), while it is.
    metafunc: Any = None
    _summary: Summary | None = None
    _analysis: Any = None
    #: Node id -> index in ``records`` of its latest record (late usage amends it).
    #: Built on the first late usage (rare): one entry per run is not worth keeping otherwise.
    _index: dict[str, int] | None = None
    _budgeted: bool = False

    def __post_init__(self) -> None:
        self._budgeted = self.settings.budgeted

    def add(self, record: RunRecord) -> None:
        if not self.worker:
            if self._index is not None:
                self._index[record.nodeid] = len(self.records)
            self.records.append(record)
            self._summary = None
            self._analysis = None
            if self.gates is not None:
                self.gates.add(record)

    def add_late(self, items: list[dict[str, Any]] | None) -> None:
        """Charge usage recorded after its run had ended to that run (``recording.take_late``)."""
        if not items:
            return
        from .model.run import Usage

        if self._index is None:
            self._index = {record.nodeid: i for i, record in enumerate(self.records)}
        for item in items:
            index = self._index.get(item["nodeid"])
            if index is None:
                continue  # its run never reported (interrupted): nothing to amend
            record = self.records[index]
            usage = item.get("usage")
            self.records[index] = dataclasses.replace(
                record,
                usage=record.usage + ((Usage.from_dict(usage),) if usage else ()),
                extra_cost=record.extra_cost + float(item.get("extra_cost") or 0.0),
            )
            self.late_usage += 1
            self._summary = None
            self._analysis = None

    def gate_verdict(self, key: str) -> Any:
        """The ``gating.GateVerdict`` of a gated case, for its gate item in this process."""
        if self.worker:
            from pathlib import Path

            from .gating import wait_for_verdict

            assert self.gate_folder is not None, "gate items under xdist need the controller's verdicts"
            return wait_for_verdict(Path(self.gate_folder), key, self.settings.gate_timeout)
        assert self.gates is not None
        return self.gates.decide(key)

    def run_decision(self, case: Any) -> tuple[str, str] | None:
        """(cause, reason) when a run of ``case`` must not start (decided early, budget), else None."""
        from .gating import spec_of

        gate = spec_of(case, self.stats, self.specs).gate
        stoppable = gate is not None and gate.stop is not None
        budgeted = self._budgeted
        if not (stoppable or budgeted):
            return None
        if self.worker:
            if self.decisions is None:
                return None
            return self.decisions.run_decision(case.key, stoppable, budgeted)
        assert self.gates is not None
        return self.gates.run_decision(case.key, stoppable)

    def analysis(self) -> Any:
        """Intervals, gates, latency and metrics of the rows (computed once)."""
        if self._analysis is None or self._summary is None:
            from .analysis import analyze
            from .gating import spec_of

            summary = self.summary()
            missing = self.gates.missing_runs(summary.rows) if self.gates is not None else None
            self._analysis = analyze(summary, self.stats, lambda case: spec_of(case, self.stats, self.specs), missing)
        return self._analysis

    def release(self) -> None:
        """Drop what the session collected (records, cases, rows, analysis) after the session."""
        self.records = []
        self.cases = {}
        self._index = None
        self._summary = None
        self._analysis = None
        if self.gates is not None:
            self.gates.records = {}
            self.gates.expected = {}
        if self.compare is not None:
            self.compare.release()

    def summary(self) -> Summary:
        if self._summary is None:
            from .aggregate.rows import aggregate

            self._summary = aggregate(self.records)
        return self._summary

    def take_runs(self, count: int, case: str) -> str | None:
        """Count a case's runs before its items exist; an error message past ``settings.max_runs``."""
        total = self.runs_collected + count
        if total > self.settings.max_runs:
            return too_many_runs(total, self.settings.max_runs, f"{count:,} runs of {case} bring the session to {total:,} runs")
        self.runs_collected = total
        return None

    def pace(self) -> None:
        """Sleep ``--prob-delay`` between runs, never before the first."""
        if self.runs_started and self.settings.delay:
            time.sleep(self.settings.delay)
        self.runs_started += 1


STATE_KEY = pytest.StashKey[State]()
