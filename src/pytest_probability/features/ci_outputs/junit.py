"""JUnit XML properties (``--junitxml``): each run's, each verdict item's, and the session's totals on the suite.

In the aggregating process (serial, or the xdist controller, where junitxml
writes the file), before junitxml reads a teardown report's
``user_properties`` (a ``tryfirst`` hook; the role took the record in
before, in its wrapper):

* a run's testcase gets ``probability_case``, ``_run``, ``_outcome``,
  ``_cost``, ``_tokens``, and with a span ``_trace_id`` (and ``_trace_url``
  with ``prob_trace_url``);
* a gate item's gets each gate's, one per measure: the pass fraction's
  ``probability_passes``, ``_total``, ``_rate``, ``_low``, ``_high`` and
  ``_bar``, each score's ``probability_score_<name>_n``, ``_mean``,
  ``_low``, ``_high``, ``_bar`` and ``_decision``, and the case's
  ``probability_decision``; a benchmark
  verdict item's (``[baseline]``, ``[compare:ARM]``) the verdict kind's
  fields (``_difference``, ``_low``, ``_high``, ``_margin``, ``_decision``)
  beside 0.3.0's ``probability_verdict`` text;
* the suite gets the session's totals through ``record_testsuite_property``'s
  function, which both junit families allow.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest

from ...compat import junitxml
from ...model.rows import Summary
from ...protocols import WRITE, Finisher, RecordSink
from ...vocabulary import GATE_KIND, verdict_item_id

if TYPE_CHECKING:
    from ...decide.book import DecisionBook
    from ...decide.results import Results
    from ...model.run import RunRecord, Usage


def _text(value: float) -> str:
    return f"{value:.6g}"


class RunProperties(RecordSink):
    """The last record taken in, and the properties of each run's and verdict item's teardown report."""

    def __init__(self, book: DecisionBook, trace_url: str | None) -> None:
        self.book = book
        self.trace_url = trace_url
        self.last: RunRecord | None = None
        self._gate = verdict_item_id(GATE_KIND)

    def add(self, record: RunRecord) -> None:
        self.last = record

    def add_late(self, usage: Usage | None, extra_cost: float) -> None:
        pass

    def run_properties(self, record: RunRecord) -> list[tuple[str, str]]:
        tokens = sum(u.input_tokens + u.output_tokens for u in record.usage)
        props = [
            ("probability_case", record.case.label),
            ("probability_run", str(record.run)),
            ("probability_outcome", record.outcome),
            ("probability_cost", _text(record.cost)),
            ("probability_tokens", str(tokens)),
        ]
        if record.trace_id:
            props.append(("probability_trace_id", record.trace_id))
            if self.trace_url:
                props.append(
                    (
                        "probability_trace_url",
                        self.trace_url.replace("{trace_id}", record.trace_id).replace(
                            "{span_id}", record.span_id or ""
                        ),
                    )
                )
        return props

    def gate_properties(self, key: str) -> list[tuple[str, str]]:
        """Each gate of the case, one per measure: the pass fraction's ``probability_passes``, ``_total``,
        ``_rate``, ``_low``, ``_high`` and ``_bar``; each score's ``probability_score_<name>_n``, ``_mean``,
        ``_low``, ``_high``, ``_bar`` and ``_decision``; then the case's ``probability_decision``."""
        result = self.book.result(key)
        if result is None:
            return []
        props: list[tuple[str, str]] = []
        gate = result.gate
        if gate is not None:
            props += [("probability_passes", str(gate.passes)), ("probability_total", str(gate.total))]
            if gate.total:
                props.append(("probability_rate", _text(gate.passes / gate.total)))
            if gate.interval is not None:
                props += [
                    ("probability_low", _text(gate.interval.low)),
                    ("probability_high", _text(gate.interval.high)),
                ]
            bar = f"{gate.spec.min_passes} passes" if gate.spec.rule == "count" else _text(gate.spec.bar)
            props.append(("probability_bar", bar))
        for score in result.scores:
            prefix = f"probability_score_{score.spec.name}"
            props.append((f"{prefix}_n", str(score.n)))
            if score.estimate is not None:
                props.append((f"{prefix}_mean", _text(score.estimate)))
            if score.interval is not None:
                props += [(f"{prefix}_low", _text(score.interval.low)), (f"{prefix}_high", _text(score.interval.high))]
            props += [(f"{prefix}_bar", _text(score.bar)), (f"{prefix}_decision", score.verdict)]
        props.append(("probability_decision", result.verdict or "undecided"))
        return props

    def kind_properties(self, key: str, kind: str) -> list[tuple[str, str]]:
        found = self.book.kinds.get(kind)
        fields = found.fields(self.book.records, key) if found is not None else {}
        return [
            (f"probability_{name}", _text(value) if isinstance(value, float) else str(value))
            for name, value in fields.items()
            if value is not None
        ]

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if report.when != "teardown":
            return
        nodeid = report.nodeid
        record = self.last
        if record is not None and record.nodeid == nodeid:
            report.user_properties.extend(self.run_properties(record))
            return
        kind = self.book.judged.get(nodeid)
        if kind is not None:
            report.user_properties.extend(self.kind_properties(nodeid, kind))
            return
        match = self._gate.match(nodeid) if nodeid.endswith((f"[{GATE_KIND}]", f"::{GATE_KIND}")) else None
        if match is not None and match.group("key") in self.book.gated:
            report.user_properties.extend(self.gate_properties(match.group("key")))


class SuiteProperties(Finisher):
    """The session's totals on the ``<testsuite>``: cases, runs, passes, pass fraction, cost, tokens, gates."""

    phase = WRITE

    def __init__(self, config: pytest.Config, results: Results) -> None:
        self.config = config
        self.results = results

    def finish(self, session: pytest.Session, summary: Summary) -> None:
        add = junitxml.suite_property(self.config)
        if add is None or not summary.rows:
            return
        counts = summary.counts
        tokens = sum(u.input_tokens + u.output_tokens for u in summary.usage.values())
        gates = self.results.analysis().gate_totals()
        values: list[tuple[str, Any]] = [
            ("probability_cases", len(summary.rows)),
            ("probability_runs", counts.total),
            ("probability_passes", counts.passes),
            ("probability_fails", counts.fails),
            ("probability_errors", counts.errors),
            ("probability_skipped", counts.skipped),
            ("probability_pass_fraction", _text(counts.pass_rate) if counts.pass_rate is not None else ""),
            ("probability_cost", _text(summary.cost)),
            ("probability_tokens", tokens),
            ("probability_gates_passed", gates["passed"]),
            ("probability_gates_failed", gates["failed"]),
            ("probability_gates_undecided", gates["undecided"]),
        ]
        for name, value in values:
            add(name, value)
