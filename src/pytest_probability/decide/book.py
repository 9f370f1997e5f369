"""The aggregating process's decisions: verdicts of gated and judged cases, early stops, budgets.

One :class:`DecisionBook` per session, in the process that aggregates (a
serial session or the xdist controller). It learns the session's items
(:meth:`~DecisionBook.expect`), takes every run's record as it arrives
(:meth:`~DecisionBook.add`, a :class:`~pytest_probability.protocols.RecordSink`),
and decides:

* a gated case's verdict, once every run of it has reported;
* a benchmark's verdicts (``[baseline]``, ``[compare:ARM]``), once every run
  of the benchmark has reported;
* which cases are decided early (``--prob-stop``: the spend feature's rule
  stops them here), and what features publish besides (a budget reached).

In a serial session it is also the session's
:class:`~pytest_probability.protocols.Decisions` (runs and verdict items ask it
directly). Under xdist it publishes each decision through its
:class:`~.channel.Channel`, which the workers' readers poll.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..aggregate.cases import row_of
from ..config.spec import CaseSpec, Specs
from ..model.case import CaseRef
from ..model.outputs import Verdict
from ..model.rows import Counts, Row
from ..model.run import RunRecord, Usage
from ..protocols import Link, RecordSink, Registry, VerdictKind
from ..session import Scope
from ..value_classes import Record
from ..vocabulary import (
    BENCHMARK_KINDS,
    DECIDED,
    GATE_KIND,
    PASSED,
    WORKER_CHANNEL,
    benchmark_verdict_id,
    parse_run_id,
    verdict_item_id,
)
from .analysis import RowAnalysis, analyze_row, verdict_text

if TYPE_CHECKING:
    from .channel import Channel  # opened only under xdist

#: The verdict of a gate item selected while every run of its case was deselected (``-k``, ``-m``,
#: ``--deselect``, ``--lf``): a gate cannot decide without runs, so it says how to select them.
DESELECTED_TEXT = (
    "UNDECIDED: every run of this case was deselected (-k, -m, --deselect or --lf); "
    "select its runs with the gate item, or the gate item alone, which brings them"
)
NO_RUN_TEXT = "UNDECIDED: no run of this case reported"


class DecisionBook(RecordSink, Record):
    """Which runs each judged case expects, which have reported, and the verdicts once they have.

    It counts every run that reports, but keeps the records only of the cases a
    verdict is made from (a gate or latency gate, early stopping, or any case
    when a benchmark's verdict item is selected): a session of ungated cases
    keeps one expected-run count per case here, not its records (the session's
    ``State`` keeps those).
    """

    specs: Specs
    #: The session's extension points: its benchmark verdict kinds (``baseline``, ``compare``). Under xdist a
    #: benchmark's verdict is published once every run of the benchmark has reported.
    parts: Registry
    #: The part of the night the session holds: a part (a shard) decides nothing.
    scope: Scope
    #: Under xdist, where decisions are published (opened for the first worker).
    channel: Channel | None
    #: case key -> runs of it selected for the session (from the final items or a worker's collection)
    expected: dict[str, int]
    gated: set[str]  # case keys with a gate item
    #: a selected benchmark verdict item's key (its node id) -> its kind
    judged: dict[str, str]
    #: a benchmark verdict's key -> its scope, the benchmark's node id
    scopes: dict[str, str]
    #: case key -> run node id -> record, for the cases a verdict needs (see :meth:`_keeps`)
    records: dict[str, dict[str, RunRecord]]
    #: decision keys whose verdict was published (xdist)
    published: set[str]
    #: decision key -> runs a worker crash rescheduled past its verdict item, which was released
    #: UNDECIDED (:meth:`release_rescheduled`); every output then shows that verdict.
    rescheduled: dict[str, int]
    #: Case key -> why its remaining runs are not executed ("decided after 14 of 60 runs ...").
    stopped: dict[str, str]
    #: a benchmark verdict's key -> run node ids still to report before it can be published
    pending: dict[str, set[str]]
    _counts: dict[str, Counts]
    #: case key -> runs read back from a journal (deselected, already reported) (:meth:`count_resumed`);
    #: :meth:`expect` counts them among the case's runs.
    resumed: dict[str, int]
    #: What features published besides verdicts and stops, by name (a budget reached): :meth:`publish_flag`.
    flags: dict[str, str]
    #: Whether :meth:`expect` has learned the session's items.
    _learned: bool
    _kinds: dict[str, VerdictKind] | None
    _kinds_revision: int

    FIELDS = (
        "specs",
        "parts",
        "scope",
        "channel",
        "expected",
        "gated",
        "judged",
        "scopes",
        "records",
        "published",
        "rescheduled",
        "stopped",
        "pending",
        "_counts",
        "resumed",
        "flags",
        "_learned",
        "_kinds",
        "_kinds_revision",
    )

    def __init__(
        self,
        specs: Specs,
        parts: Registry | None = None,
        scope: Scope | None = None,
        channel: Channel | None = None,
        expected: dict[str, int] | None = None,
        gated: set[str] | None = None,
        judged: dict[str, str] | None = None,
        scopes: dict[str, str] | None = None,
        records: dict[str, dict[str, RunRecord]] | None = None,
        published: set[str] | None = None,
        rescheduled: dict[str, int] | None = None,
        stopped: dict[str, str] | None = None,
        pending: dict[str, set[str]] | None = None,
        _counts: dict[str, Counts] | None = None,
        resumed: dict[str, int] | None = None,
        flags: dict[str, str] | None = None,
        _learned: bool = False,
        _kinds: dict[str, VerdictKind] | None = None,
        _kinds_revision: int = -1,
    ) -> None:
        self.specs = specs
        self.parts = Registry() if parts is None else parts
        self.scope = Scope() if scope is None else scope
        self.channel = channel
        self.expected = {} if expected is None else expected
        self.gated = set() if gated is None else gated
        self.judged = {} if judged is None else judged
        self.scopes = {} if scopes is None else scopes
        self.records = {} if records is None else records
        self.published = set() if published is None else published
        self.rescheduled = {} if rescheduled is None else rescheduled
        self.stopped = {} if stopped is None else stopped
        self.pending = {} if pending is None else pending
        self._counts = {} if _counts is None else _counts
        self.resumed = {} if resumed is None else resumed
        self.flags = {} if flags is None else flags
        self._learned = _learned
        self._kinds = _kinds
        self._kinds_revision = _kinds_revision

    @property
    def folder(self) -> Path | None:
        return self.channel.folder if self.channel is not None else None

    @property
    def kinds(self) -> dict[str, VerdictKind]:
        """The benchmark verdict kinds, by name (as registered now: a feature that wakes may add some)."""
        if self._kinds is None or self._kinds_revision != self.parts.revision:
            self._kinds = {kind.kind: kind for kind in self.parts.verdict_kinds}
            self._kinds_revision = self.parts.revision
        return self._kinds

    def open_channel(self) -> Path:
        """The decisions folder for xdist workers, with what was decided before it in it."""
        if self.channel is None:
            from .channel import Channel  # only under xdist

            self.channel = Channel()
        first = self.channel.folder is None
        folder = self.channel.open()
        if first:  # what was decided before the first worker (on records read back from a journal)
            for key, reason in self.stopped.items():
                self.channel.stopped(key, reason)
            for name, text in self.flags.items():
                self.channel.flag(name, text)
        return folder

    def count_resumed(self, counts: Mapping[str, int]) -> None:
        """Runs of each case read back from a journal: already reported, and among the case's runs."""
        self.resumed = dict(counts)

    def publish_flag(self, name: str, text: str) -> None:
        """What a feature tells every process executing runs (a budget reached), once: a worker reads it
        with ``ChannelReader.flag``."""
        if name in self.flags:
            return
        self.flags[name] = text
        if self.channel is not None and self.channel.folder is not None:
            self.channel.flag(name, text)

    def flag(self, name: str) -> str | None:
        return self.flags.get(name)

    # -- what the session will run ------------------------------------------------

    def expect(self, nodeids: list[str], keys: Mapping[str, str] | None = None) -> None:
        """Learn the session's items (xdist: from a worker's collection). ``keys``: case key -> the same
        string, the CaseRef's, so that the book holds no second copy of each key."""
        if self.expected:
            return
        self._learned = True
        keys = keys or {}
        gate = verdict_item_id(GATE_KIND)
        gate_ends = (f"[{GATE_KIND}]", f"::{GATE_KIND}")
        if self.parts.asleep:  # (xdist) a worker collected a verdict item of a kind whose feature sleeps here
            self.parts.wake(
                kind
                for kind in BENCHMARK_KINDS
                if kind in self.parts.asleep
                and any(f"[{kind}" in nodeid and benchmark_verdict_id(kind).match(nodeid) for nodeid in nodeids)
            )
        # (the text every match holds, pattern): the substring test spares a regex per item and kind
        # (a run's node id holds none of them), 10,000 runs and more in one collection.
        patterns = {kind: (f"[{kind}", benchmark_verdict_id(kind)) for kind in self.kinds}
        runs: list[tuple[str, str]] = []
        for nodeid in nodeids:
            found = next(
                (
                    (k, m)
                    for k, (needle, pattern) in patterns.items()
                    if needle in nodeid and (m := pattern.match(nodeid))
                ),
                None,
            )
            if found is not None:
                self.judged[nodeid] = found[0]
                self.scopes[nodeid] = found[1].group("scope")
                continue
            # (the regex's "$" matches before a last newline too)
            match = gate.match(nodeid) if nodeid.endswith(gate_ends) or nodeid[-1:] == "\n" else None
            if match:
                self.gated.add(match.group("key"))
                continue
            run = parse_run_id(nodeid)
            # A one-run case keeps its plain node id, which is its case key (so does a plain test,
            # for which no record ever comes: its count is never read).
            key = run[0] if run is not None else nodeid
            key = keys.get(key, key)
            self.expected[key] = self.expected.get(key, 0) + 1
            runs.append((key, nodeid))
        for key, count in self.resumed.items():
            self.expected[key] = self.expected.get(key, 0) + count
        if self.judged:
            by_scope: dict[str, set[str]] = {scope: set() for scope in self.scopes.values()}
            for key, nodeid in runs:
                scope = _scope_in(key, by_scope)
                if scope is not None and nodeid not in self.records.get(key, ()):
                    by_scope[scope].add(nodeid)
            self.pending = {verdict: set(by_scope[scope]) for verdict, scope in self.scopes.items()}
        if self.folder is not None:
            # A gate item whose runs have all reported (read back from a journal), or whose runs were
            # all deselected (-k, --deselect: none expected), gets no record from now on, so add()
            # never publishes its verdict: publish it now.
            for key in self.gated - self.published:
                if len(self.records.get(key, ())) >= self.expected.get(key, 0):
                    self.publish(key)
            self._publish_kinds()

    def judged_by(self, case_key: str) -> str | None:
        """``gate`` when a gate item decides the case, else None."""
        return GATE_KIND if case_key in self.gated else None

    def missing(self, key: str) -> int:
        """Runs of a case whose records are kept that were selected for the session but have not
        reported (0 when the selection is unknown)."""
        return max(0, self.expected.get(key, 0) - len(self.records.get(key, ())))

    def missing_runs(self, rows: Iterable[Row]) -> dict[str, int]:
        """Case key -> runs selected but not reported, for every row with any (a row's records are
        its distinct runs reported: the book counts only the cases it keeps)."""
        expected = self.expected
        return {
            row.case.key: count - len(row.records)
            for row in rows
            if (count := expected.get(row.case.key, 0)) > len(row.records)
        }

    # -- each record -----------------------------------------------------------------

    def _keeps(self, spec: CaseSpec) -> bool:
        """Whether a verdict may need the records of a case with ``spec``: a gated case's own verdict
        needs them, and a benchmark's verdicts are made from its cases' (the comparisons are computed
        over the session's rows), so with any benchmark verdict item (or before :meth:`expect` has
        said whether there is one) every record is kept."""
        return spec.gated or bool(self.judged) or bool(self.kinds and not self._learned)

    def add(self, record: RunRecord) -> None:
        key = record.case.key
        spec = self.specs.of(record.case)
        if self._keeps(spec):
            runs = self.records.setdefault(key, {})
            again = record.nodeid in runs
            runs[record.nodeid] = record
            counts = self._counts.get(key)
            if counts is None or again:  # a run reported twice counts once: recount
                counts = self._counts[key] = Counts()
                for each in runs.values():
                    counts.add(each.outcome, each.stopped)
            else:
                counts.add(record.outcome, record.stopped)
        if self.folder is not None and key in self.gated and key not in self.published:
            if len(self.records.get(key, ())) >= self.expected.get(key, 0):
                self.publish(key)
        if self.pending:
            for pending in self.pending.values():
                pending.discard(record.nodeid)
            if self.folder is not None:
                self._publish_kinds()

    def add_late(self, usage: Usage | None, extra_cost: float) -> None:
        """Late usage changes no verdict: a run's outcome is its record's."""

    def tally(self, case: CaseRef) -> tuple[int, int, Counts] | None:
        """(runs reported, runs planned, their counts) of a case whose records are kept, else None."""
        counts = self._counts.get(case.key)
        if counts is None:
            return None
        return len(self.records[case.key]), self.expected.get(case.key, case.runs), counts

    def stop_case(self, key: str, reason: str) -> None:
        """A case decided early: its remaining runs are not executed (``run_decision``), here and on every worker.
        A session that holds part of the night (a shard) decides nothing, so stops nothing."""
        if self.scope.partial is not None or key in self.stopped:
            return
        self.stopped[key] = reason
        if self.channel is not None:
            self.channel.stopped(key, reason)

    # -- decisions ----------------------------------------------------------------------

    def run_decision(self, case: CaseRef) -> tuple[str, str] | None:
        """(cause, reason) when a run of ``case`` must not start (decided early), else None."""
        if self.stopped and self.specs.of(case).stoppable:
            reason = self.stopped.get(case.key)
            if reason is not None:
                return DECIDED, reason
        return None

    def result(self, key: str) -> RowAnalysis | None:
        records = list(self.records.get(key, {}).values())
        if not records:
            return None
        row = row_of(records)
        return analyze_row(row, self.specs.of(row.case), self.specs.config, self.missing(key))

    def verdict(self, key: str) -> Verdict:
        """The verdict of decision ``key`` (a gated case's key, or a benchmark verdict's node id)."""
        if self.scope.partial is not None:
            return Verdict(True, self.scope.partial, skipped=True)
        kind = self.judged.get(key) or next((k for k in self.kinds if benchmark_verdict_id(k).match(key)), None)
        if kind is not None:
            passed, text = self.kinds[kind].decide(self.records, key)
            return Verdict(passed, text)
        result = self.result(key)
        if result is None:
            if self._learned and key not in self.expected:  # the session's items have no run of it
                return Verdict(False, DESELECTED_TEXT)
            return Verdict(False, NO_RUN_TEXT)
        return verdict_text(result, self.specs.config.undecided)

    def publish(self, key: str, verdict: Verdict | None = None) -> None:
        """Publish a verdict (or ``verdict``, when the controller must release a verdict item now)."""
        assert self.channel is not None, "verdicts are published under xdist only"
        self.channel.verdict(key, verdict if verdict is not None else self.verdict(key))
        self.published.add(key)

    def _publish_kinds(self) -> None:
        for key in self.judged:
            if key not in self.published and not self.pending.get(key):
                self.publish(key)

    def release_rescheduled(self, rescheduled: Mapping[str, int]) -> list[tuple[str, str]]:
        """A worker crashed with runs of gated cases still queued (case key -> count): those cases get
        an UNDECIDED verdict now, since their gate items cannot wait for runs xdist reschedules
        (see :meth:`pytest_probability.roles.controller.Controller.pytest_testnodedown`). Returns (case key, text)."""
        released = []
        passed = self.specs.config.undecided == PASSED  # UNDECIDED counts as prob_undecided says
        for key, count in rescheduled.items():
            if key not in self.gated or key in self.published:
                continue
            text = (
                f"UNDECIDED: a worker crash rescheduled {count} run(s) of this case, "
                "which its gate item cannot wait for (the runs still count in the fraction)"
            )
            self.rescheduled[key] = count
            self.publish(key, Verdict(passed, text))
            released.append((key, text))
        scopes = {scope: 0 for scope in self.scopes.values()}
        for key, count in rescheduled.items():
            scope = _scope_in(key, scopes)
            if scope is not None:
                scopes[scope] += count
        for verdict, scope in self.scopes.items():
            if scopes[scope] and verdict not in self.published:
                text = (
                    f"UNDECIDED: a worker crash rescheduled {scopes[scope]} run(s) of this benchmark, "
                    "which its verdict item cannot wait for (the runs still count in the fraction)"
                )
                self.rescheduled[verdict] = scopes[scope]
                self.publish(verdict, Verdict(passed, text))
                released.append((verdict, text))
        return released

    def stop(self) -> None:
        """Tell waiting verdict items that no more verdicts will come."""
        if self.channel is not None:
            self.channel.stop()

    def cleanup(self) -> None:
        if self.channel is not None:
            self.channel.cleanup()

    def release(self) -> None:
        """Let go of the records and the selection after the session."""
        self.records = {}
        self.expected = {}


def _scope_in(case_key: str, scopes: Mapping[str, Any]) -> str | None:
    """The benchmark (one of ``scopes``, node ids) that a case key belongs to: the key itself (an
    unparametrized benchmark) or a prefix of it ending before a ``::``."""
    if case_key in scopes:
        return case_key
    end = case_key.rfind("::")
    while end > 0:
        if case_key[:end] in scopes:
            return case_key[:end]
        end = case_key.rfind("::", 0, end)
    return None


class DecisionsLink(Link):
    """The xdist controller tells each new worker where its decisions will be published."""

    def __init__(self, book: DecisionBook) -> None:
        self.book = book

    def worker_input(self) -> Mapping[str, Any]:
        return {WORKER_CHANNEL: str(self.book.open_channel())}
