"""Gates as pytest items, and the one channel for decisions from the controller.

A gate item passes or fails with its case's verdict, so a gated case's
verdict, not each run, decides the exit status (its failing runs are
reported as xfailed). The verdict needs every run of the case, which under
pytest-xdist executes on several workers, so:

* the aggregating process (serial session or xdist controller) keeps a
  :class:`GateBook`: which runs each gated case expects, which have
  reported, and, once all have, the verdict;
* a serial gate item asks the book directly (its runs ran before it);
* an xdist worker's gate item waits for the controller to publish the
  verdict as a small file in a folder passed to workers in ``workerinput``.
  Runs precede their gate in collection order and each worker executes its
  items in order, so the runs a gate waits for are never queued behind it.

The same folder is the *decisions channel*: every decision the aggregating
process takes and workers must act on is a file in it, written atomically.

=====================  ===========================  ==========================
decision               file                         read by
=====================  ===========================  ==========================
a case's gate verdict  ``<sha256(key)[:32]>.json``  the case's gate item
a case decided early   ``<sha256(key)[:32]>.stop``  the case's remaining runs
a budget reached       ``BUDGET``                   every run not yet started
a baseline verdict     ``<sha256(key[baseline])>``  the case's baseline item
session limits         ``session.json``             workers (the time budget)
the session stopping   ``STOP``                     waiting gate items
=====================  ===========================  ==========================

In a serial session the same :class:`GateBook` answers directly.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterable, Mapping, NamedTuple

import pytest

from . import analysis
from .analysis import SKIPPED, UNDECIDED, CaseSpec, StatsConfig

if TYPE_CHECKING:
    from .budget import Budget  # built by lifecycle.configure only with a budget option
from .model.case import CaseRef
from .model.rows import Counts
from .model.run import RunRecord
from .recording import RUN_ID
from .aggregate.rows import row_status
from .model.rows import Row

GATE_NAME = "gate"
POLL_INTERVAL = 0.02
_RUN_ID = RUN_ID
_GATE_ID = re.compile(r"^(?P<key>.*?)(?:\[gate\]|::gate)$")


def _kind_id(kind: str) -> re.Pattern[str]:
    return re.compile(rf"^(?P<key>.*?)(?:\[{re.escape(kind)}\]|::{re.escape(kind)})$")


def verdict_key(case_key: str, kind: str) -> str:
    """The GateBook key of a case's verdict of ``kind``: the case key for a gate."""
    return case_key if kind == GATE_NAME else f"{case_key}[{kind}]"


class ProbabilityGateWarning(pytest.PytestWarning):
    """A gate that cannot pass with the runs its case has."""


class GateFailed(Exception):
    """Raised by a gate item whose verdict fails the case."""


def gate_name(case_id: str, kind: str = GATE_NAME) -> str:
    return f"{case_id}[{kind}]" if case_id else kind


class GateVerdict(NamedTuple):
    """What a gate item does: pass (``passed``), fail, or skip (``skipped``: every run skipped)."""

    passed: bool
    text: str
    skipped: bool = False

    def to_dict(self) -> dict[str, Any]:
        return {"passed": self.passed, "text": self.text, "skipped": self.skipped}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> GateVerdict:
        return cls(bool(data["passed"]), str(data["text"]), bool(data.get("skipped", False)))


def verdict_text(result: analysis.RowAnalysis, undecided: str) -> GateVerdict:
    """The verdict of a case, with its one-line explanation."""
    verdict = result.verdict or UNDECIDED
    if verdict == SKIPPED:
        return GateVerdict(True, "SKIPPED: every run of this case was skipped", skipped=True)
    parts = []
    if result.gate is not None:
        gate = result.gate
        interval = gate.interval
        shown = f"[{interval.low:.1%}, {interval.high:.1%}]" if interval else "no counted runs"
        if gate.spec.rule == "count":
            parts.append(f"{gate.passes}/{gate.total} passes, need {gate.spec.min_passes}: {gate.verdict.upper()}")
        elif gate.sequential:
            parts.append(
                f"{gate.passes}/{gate.total} passes, {gate.spec.confidence:g} sequential test (mixture SPRT) "
                f"vs bar {gate.spec.bar:g}: {gate.verdict.upper()}"
            )
        else:
            parts.append(
                f"{gate.passes}/{gate.total} passes, {gate.spec.confidence:g} {gate.spec.method} interval {shown} "
                f"vs bar {gate.spec.bar:g}: {gate.verdict.upper()}"
            )
    if result.latency is not None and result.latency.verdict is not None:
        lat = result.latency
        high = "∞" if lat.high is None else f"{lat.high:.3g}s"
        low = "-" if lat.low is None else f"{lat.low:.3g}s"
        parts.append(f"p{lat.quantile * 100:g} latency interval [{low}, {high}] vs {lat.max_latency:g}s: {lat.verdict.upper()}")
    if result.gate is not None and result.gate.missing:
        parts.append(f"{result.gate.missing} run(s) not executed")
    if result.missing:
        parts.append(analysis.cut_short_text(result.missing, len(result.row.records)))
    passed = bool(analysis.counts_as_pass(verdict, undecided))
    return GateVerdict(passed, f"{verdict.upper()}: " + "; ".join(parts))


def gate_key(nodeid: str) -> str | None:
    """The case key of a gate item's node id, else None."""
    match = _GATE_ID.match(nodeid)
    return match.group("key") if match else None


def row_from_records(records: list[RunRecord]) -> Row:
    counts = Counts()
    for record in records:
        counts.add(record.outcome, record.stopped)
    return Row(records[0].case, tuple(sorted(records, key=lambda r: r.run)), counts, row_status(counts), 0.0, {})


def spec_of(case: CaseRef, config: StatsConfig, cache: dict[Any, CaseSpec]) -> CaseSpec:
    """The case's CaseSpec. ``cache`` shares one spec between cases with the same marker keywords
    and runs (usually all of them): a CaseSpec is immutable, and the session's config is fixed."""
    return spec_for(case.marks, case.runs, config, cache)


def spec_for(marks: tuple[tuple[str, Any], ...], runs: int, config: StatsConfig, cache: dict[Any, CaseSpec]) -> CaseSpec:
    """:func:`spec_of` from a case's marker keywords (sorted, without ``runs``) and runs; raises
    ``analysis.case_spec``'s ValueError, and caches only what it built."""
    key = (marks, runs)
    try:
        spec = cache.get(key)
    except TypeError:  # a keyword's value that cannot be hashed: no sharing
        return analysis.case_spec(dict(marks), runs, config)
    if spec is None:
        spec = cache[key] = analysis.case_spec(dict(marks), runs, config)
    return spec


#: The verdict of a gate item selected while every run of its case was deselected (``-k``, ``-m``,
#: ``--deselect``, ``--lf``): a gate cannot decide without runs, so it says how to select them.
DESELECTED_TEXT = ("UNDECIDED: every run of this case was deselected (-k, -m, --deselect or --lf); "
                   "select its runs with the gate item, or the gate item alone, which brings them")


@dataclass
class GateBook:
    """Aggregating side: which gated cases are complete, and their verdicts.

    It counts every run that reports, but keeps the records only of the cases a
    verdict is made from (a gate or latency gate, early stopping, or any case
    when a verdict kind such as ``baseline`` is on): a session of ungated cases
    keeps two counts per case here, not its records (``State`` keeps those).
    """

    config: StatsConfig
    folder: Path | None = None  # xdist: where verdicts are published
    #: case key -> runs of it selected for the session (from the final items or a worker's collection)
    expected: dict[str, int] = field(default_factory=dict)
    gated: set[str] = field(default_factory=set)  # case keys with a gate item
    #: case key -> run node id -> record, for the cases a verdict needs (see :meth:`keeps`)
    records: dict[str, dict[str, RunRecord]] = field(default_factory=dict)
    published: set[str] = field(default_factory=set)
    #: Session budgets (cost, tokens, time); None without any.
    budget: Budget | None = None
    #: Case key -> why its remaining runs are not executed ("decided after 14 of 60 runs ...").
    stopped: dict[str, str] = field(default_factory=dict)
    _counts: dict[str, Counts] = field(default_factory=dict)
    #: (marks, runs) -> CaseSpec, shared by the cases that have the same (spec_of); the
    #: session's State passes its own, so that collection, runs and verdicts share one cache.
    specs: dict[Any, CaseSpec] = field(default_factory=dict)
    #: Verdict kinds besides gates (``baseline``: comparisons), kind -> decider with
    #: ``decide(book, case_key) -> (passed, text)``. A kind's verdicts depend on
    #: every case of the kind (a family adjusted together), so under xdist all of
    #: them are published once every run of every such case has reported.
    kinds: dict[str, Any] = field(default_factory=dict)
    #: kind -> case keys with an item of that kind (xdist)
    judged: dict[str, set[str]] = field(default_factory=dict)
    #: kind -> run node ids still to report before that kind's verdicts can be published
    pending: dict[str, set[str]] = field(default_factory=dict)
    #: Whether :meth:`expect` has learned the session's items.
    _learned: bool = False

    def open_channel(self) -> Path:
        """Create the decisions folder (xdist) with the session's limits in it."""
        if self.folder is None:
            self.folder = new_folder()
            budget = self.budget
            limits = {"deadline": budget.deadline, "max_time": budget.max_time} if budget is not None else {}
            _write_atomic(self.folder / SESSION_FILE, json.dumps(limits))
        return self.folder

    def expect(self, nodeids: list[str], keys: Mapping[str, str] | None = None) -> None:
        """Learn the session's items (xdist: from a worker's collection). ``keys``: case key -> the same
        string, the CaseRef's, so that the book holds no second copy of each key."""
        if self.expected:
            return
        self._learned = True
        keys = keys or {}
        patterns = {kind: _kind_id(kind) for kind in self.kinds}
        runs: list[tuple[str, str]] = []
        for nodeid in nodeids:
            gate = _GATE_ID.match(nodeid)
            if gate:
                self.gated.add(gate.group("key"))
                continue
            kind = next((k for k, pattern in patterns.items() if pattern.match(nodeid)), None)
            if kind is not None:
                self.judged.setdefault(kind, set()).add(patterns[kind].match(nodeid).group("key"))  # type: ignore[union-attr]
                continue
            run = _RUN_ID.match(nodeid)
            if run:
                key = run.group("key")
                key = keys.get(key, key)
                self.expected[key] = self.expected.get(key, 0) + 1
                runs.append((key, nodeid))
        for kind, keys in self.judged.items():
            self.pending[kind] = {
                nodeid for key, nodeid in runs if key in keys and nodeid not in self.records.get(key, ())
            }
        if self.folder is not None:
            # A gate item whose runs were all deselected (-k, --deselect) gets no
            # record, so add() never publishes its verdict: publish it now.
            for key in self.gated - set(self.expected) - self.published:
                self.publish(key)
            self._publish_kinds()

    def _keeps(self, spec: CaseSpec) -> bool:
        """Whether a verdict may need the records of a case with ``spec``: a gated case's own verdict
        needs them, and a kind's verdicts (``baseline``) are made from every case's, so with any case
        judged by a kind (or before :meth:`expect` has said whether one is) every record is kept."""
        return spec.gated or bool(self.judged) or bool(self.kinds and not self._learned)

    def add(self, record: RunRecord) -> None:
        key = record.case.key
        spec = spec_of(record.case, self.config, self.specs)
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
        if self.budget is not None and self.budget.add(record):
            self.publish_budget()
        if spec.gate is not None and spec.gate.stop is not None and key not in self.stopped and not record.stopped:
            self.decide_early(key, record.case)
        if self.folder is not None and key in self.gated and key not in self.published:
            if len(self.records.get(key, ())) >= self.expected.get(key, 0):
                self.publish(key)
        if self.pending:
            for pending in self.pending.values():
                pending.discard(record.nodeid)
            if self.folder is not None:
                self._publish_kinds()

    def _publish_kinds(self) -> None:
        for kind, keys in self.judged.items():
            if self.pending.get(kind):
                continue
            for key in keys:
                if verdict_key(key, kind) not in self.published:
                    self.publish(verdict_key(key, kind))

    def missing(self, key: str) -> int:
        """Runs of a case whose records are kept that were selected for the session but have not
        reported (0 when the selection is unknown)."""
        return max(0, self.expected.get(key, 0) - len(self.records.get(key, ())))

    def missing_runs(self, rows: Iterable[Row]) -> dict[str, int]:
        """Case key -> runs selected but not reported, for every row with any (a row's records are
        its distinct runs reported: the book counts only the cases it keeps)."""
        expected = self.expected
        return {row.case.key: count - len(row.records) for row in rows
                if (count := expected.get(row.case.key, 0)) > len(row.records)}

    def decide_early(self, key: str, case: CaseRef) -> None:
        """Stop a case whose verdict its remaining runs can no longer change (or a sequential test decided)."""
        spec = spec_of(case, self.config, self.specs)
        if spec.gate is None or spec.gate.stop is None:
            return
        reported = len(self.records[key])
        planned = self.expected.get(key, case.runs)
        remaining = planned - reported
        counts = self._counts[key]
        verdict = analysis.early_verdict(spec, counts.passes, counts.fails, counts.errors, remaining)
        if verdict is None:
            return
        reason = f"{verdict.upper()} decided after {reported} of {planned} runs ({spec.gate.stop})"
        self.stopped[key] = reason
        if self.folder is not None:
            _write_atomic(self.folder / (_digest(key) + STOP_SUFFIX), reason)

    def publish_budget(self) -> None:
        assert self.budget is not None
        if self.folder is not None:
            _write_atomic(self.folder / BUDGET_FILE, self.budget.reason())

    def run_decision(self, key: str, stoppable: bool) -> tuple[str, str] | None:
        """Serial session: (cause, reason) when a run of ``key`` must not start, else None."""
        if stoppable:
            reason = self.stopped.get(key)
            if reason is not None:
                return DECIDED, reason
        if self.budget is not None and (self.budget.reached is not None or self.budget.check()):
            return BUDGET, self.budget.reason()
        return None

    def result(self, key: str) -> analysis.RowAnalysis | None:
        records = list(self.records.get(key, {}).values())
        if not records:
            return None
        row = row_from_records(records)
        return analysis.analyze_row(row, spec_of(row.case, self.config, self.specs), self.config, self.missing(key))

    def decide(self, key: str) -> GateVerdict:
        for kind, decider in self.kinds.items():
            if key.endswith(f"[{kind}]"):
                passed, text = decider.decide(self, key[: -len(kind) - 2])
                return GateVerdict(passed, text)
        result = self.result(key)
        if result is None:
            if self._learned and key not in self.expected:  # the session's items have no run of it
                return GateVerdict(False, DESELECTED_TEXT)
            return GateVerdict(False, "UNDECIDED: no run of this case reported")
        return verdict_text(result, self.config.undecided)

    def publish(self, key: str, verdict: GateVerdict | None = None) -> None:
        """Publish the case's verdict (or ``verdict``, when the controller must release its gate item)."""
        assert self.folder is not None
        chosen = verdict if verdict is not None else self.decide(key)
        _write_atomic(verdict_path(self.folder, key), json.dumps(chosen.to_dict()))
        self.published.add(key)

    def stop(self) -> None:
        """Tell waiting gate items that no more verdicts will come."""
        if self.folder is not None and self.folder.exists():
            (self.folder / "STOP").write_text("stopped", encoding="utf-8")

    def cleanup(self) -> None:
        if self.folder is not None:
            shutil.rmtree(self.folder, ignore_errors=True)


#: Causes of a run not executed (RunRecord.stopped).
DECIDED, BUDGET = "decided", "budget"
STOP_SUFFIX = ".stop"
BUDGET_FILE = "BUDGET"
SESSION_FILE = "session.json"


def new_folder() -> Path:
    return Path(tempfile.mkdtemp(prefix="pytest-probability-gates-"))


def _digest(key: str) -> str:
    return hashlib.sha256(key.encode("utf-8")).hexdigest()[:32]


def _write_atomic(path: Path, text: str) -> None:
    temp = path.with_name(path.name + ".tmp")
    temp.write_text(text, encoding="utf-8")
    os.replace(temp, path)


def verdict_path(folder: Path, key: str) -> Path:
    return folder / (_digest(key) + ".json")


class DecisionReader:
    """xdist worker side of the decisions channel: may this run start?

    One ``stat`` per check and kind of decision (case stopped, budget), only
    when stopping or a budget applies; a decision seen once is kept.
    """

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.stopped: dict[str, str] = {}
        self._paths: dict[str, str] = {}
        self._budget = str(folder / BUDGET_FILE)
        self.budget: str | None = None
        try:
            limits = json.loads((folder / SESSION_FILE).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            limits = {}
        self.deadline: float | None = limits.get("deadline")
        self.max_time: float | None = limits.get("max_time")

    def run_decision(self, key: str, stoppable: bool, budgeted: bool) -> tuple[str, str] | None:
        if stoppable:
            reason = self.stopped.get(key)
            if reason is None:
                path = self._paths.get(key)
                if path is None:
                    path = self._paths[key] = str(self.folder / (_digest(key) + STOP_SUFFIX))
                if os.path.exists(path):
                    reason = self.stopped[key] = _read(path)
            if reason is not None:
                return DECIDED, reason
        if budgeted:
            if self.budget is None and os.path.exists(self._budget):
                self.budget = _read(self._budget)
            if self.budget is None and self.deadline is not None and time.time() >= self.deadline:
                self.budget = f"time budget {self.max_time:g}s reached"
            if self.budget is not None:
                return BUDGET, self.budget
        return None


def _read(path: str) -> str:
    try:
        with open(path, encoding="utf-8") as handle:
            return handle.read()
    except OSError:
        return "decided"


def wait_for_verdict(folder: Path, key: str, timeout: float) -> GateVerdict:
    """Worker side: wait (bounded) for the controller's verdict of ``key``."""
    path = verdict_path(folder, key)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if path.exists():
            return GateVerdict.from_dict(json.loads(path.read_text(encoding="utf-8")))
        if (folder / "STOP").exists():
            return GateVerdict(False, "UNDECIDED: the session stopped before every run of this case finished")
        time.sleep(POLL_INTERVAL)
    return GateVerdict(False, f"UNDECIDED: no verdict within {timeout:g} s (did a run of this case crash its worker?)")


class GateItem(pytest.Item):
    """The verdict of one gated case, as a test item."""

    def __init__(self, name: str, parent: Any, *, case: CaseRef, lineno: int, kind: str = GATE_NAME,
                 runs: tuple[Any, ...] = (), **kw: Any) -> None:
        super().__init__(name, parent, **kw)
        self.prob_case = case
        #: What decides: "gate" (the case's gates) or another GateBook kind ("baseline").
        self.prob_kind = kind
        #: The case's Run items, as collected (selecting the item alone brings them).
        self.prob_runs = runs
        self._lineno = lineno
        from .collect import _set_nodeid

        _set_nodeid(self, f"{parent.nodeid}::{name}")

    def runtest(self) -> None:
        from .state import STATE_KEY

        state = self.config.stash[STATE_KEY]
        verdict = state.gate_verdict(verdict_key(self.prob_case.key, self.prob_kind))
        if verdict.skipped:
            pytest.skip(f"gate of {self.prob_case.label}: {verdict.text}")
        if not verdict.passed:
            raise GateFailed(verdict.text)
        self.user_properties.append(("probability.verdict", verdict.text))

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> Any:
        if isinstance(excinfo.value, GateFailed):
            what = "gate" if self.prob_kind == GATE_NAME else f"{self.prob_kind} comparison"
            return f"{what} of {self.prob_case.label}: {excinfo.value}"
        return super().repr_failure(excinfo)

    def reportinfo(self) -> tuple[Any, int | None, str]:
        return self.path, self._lineno - 1 if self._lineno else None, f"{self.parent.name}.{self.name}"


def verdict_items_last(items: list[Any]) -> None:
    """Move the items of GateBook kinds (not gates) after every other item, in place.

    Their verdicts need every run of every case of their kind, so no run of
    such a case may come after one of them (the no-deadlock argument of the
    gate items, extended to a family).
    """
    last = [item for item in items if isinstance(item, GateItem) and item.prob_kind != GATE_NAME]
    if last:
        keep = [item for item in items if not (isinstance(item, GateItem) and item.prob_kind != GATE_NAME)]
        items[:] = keep + last


def xfail_gated_failure(item: Any, call: Any, report: pytest.TestReport) -> None:
    """Report a gated (or compared) case's failing run as xfailed: its verdict item decides.

    Any phase: a setup or teardown error is a sample of the case like a
    failure in the call (an errored run), as pytest xfails them for an xfail mark.
    """
    if not report.failed or item.config.option.runxfail:
        return
    report.outcome = "skipped"
    kind = getattr(item, "prob_judged_by", GATE_NAME)
    reason = "gated case: its gate item decides" if kind == GATE_NAME else f"compared case: its {kind} item decides"
    report.wasxfail = reason  # type: ignore[attr-defined]


def mark_lastfailed(config: pytest.Config, nodeids: list[str]) -> None:
    """Make ``--lf`` rerun every run of a case whose gate failed, not only the failed runs."""
    plugin = config.pluginmanager.get_plugin("lfplugin")
    lastfailed = getattr(plugin, "lastfailed", None)
    if lastfailed is None:
        return
    try:  # pytest >= 9.1 keys lastfailed by structured node ids
        from _pytest.nodeid import NodeId
    except ImportError:
        NodeId = None  # noqa: N806
    for nodeid in nodeids:
        lastfailed[NodeId.parse(nodeid) if NodeId is not None else nodeid] = True
