"""What needs attention in a night, read off its report: failed and undecided gates, drops, errors, state changes.

Pure: a ``--prob-json`` report (a session's, or the merge's; read by the one
reader of reports, ``report.reader``) in, the rows that need attention out,
worst first, each with what the summary and the annotations show (interval,
bar, verdict, trace link, where the benchmark is defined). Every measure
needs attention alike: a case's gate of each measure (the pass fraction's,
each score's) that failed or is undecided, a drop of each measure against
the baseline (a case's, and a benchmark's verdict). Fields a report of
another version lacks are read as absent.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from ...report.reader import read_report
from ...report.report_rows import ReportGate, ReportRow
from ...report.report_types import Report, ReportComparison, ReportInput

#: Kinds of attention, worst first (the summary's order and the annotations' priority): a benchmark's verdict
#: (``[baseline]``, ``[compare:ARM]``) of any measure is one kind, a case's drop another.
ORDER = (
    "failed gate",
    "failed verdict",
    "dropped",
    "errors",
    "failed runs",
    "undecided gate",
    "undecided verdict",
    "newly broken",
    "newly failing",
    "newly flaky",
    "quarantined, failing",
)
FAILED_GATE, FAILED_VERDICT, DROPPED, ERRORED, FAILED_RUNS, UNDECIDED_GATE, UNDECIDED_VERDICT = ORDER[:7]
BROKEN, FAILING, FLAKY, QUARANTINED = ORDER[7:]
ICONS = {
    FAILED_GATE: "❌",
    FAILED_VERDICT: "🔻",
    DROPPED: "📉",
    ERRORED: "💥",
    FAILED_RUNS: "✖️",
    UNDECIDED_GATE: "❔",
    UNDECIDED_VERDICT: "❓",
    BROKEN: "🟥",
    FAILING: "🟧",
    FLAKY: "🟨",
    QUARANTINED: "🔒",
}
#: The unit of an item's interval: a pass fraction's (shown in percent) or a mean score's (in its own units).
FRACTION, SCORE = "fraction", "score"


@dataclass(frozen=True)
class Attention:
    kind: str
    label: str
    nodeid: str
    passes: int | None
    total: int | None
    low: float | None
    high: float | None
    #: What it is measured against and what was decided, in words (``bar 90%: FAIL``, ``−32.0 pp …``).
    detail: str
    trace_url: str | None
    path: str
    line: int
    #: Within its kind, lower first (the gate's upper bound, the drop's difference).
    rank: float
    #: What ``low`` and ``high`` bound: a pass fraction, or a mean score.
    unit: str = FRACTION

    @property
    def interval(self) -> str:
        """The interval as the summary and the annotations show it: ``[12.5%, 40.0%]``; ``[0.353, 0.697]``."""
        if self.unit == SCORE:
            return "" if self.low is None or self.high is None else f"[{self.low:.3g}, {self.high:.3g}]"
        return interval_text(self.low, self.high)


def percent(value: float | None) -> str:
    return "–" if value is None else f"{value:.0%}" if value in (0.0, 1.0) else f"{value:.1%}"


def interval_text(low: float | None, high: float | None) -> str:
    return "" if low is None or high is None else f"[{percent(low)}, {percent(high)}]"


def as_report(report: Report | Mapping[str, Any]) -> Report:
    """A report read (a report dict, as the JSON report has it, is read first)."""
    return report if isinstance(report, Report) else read_report(report)


def traces(report: Report, template: str | None) -> dict[str, str]:
    """Case key -> the trace link of its first failed or errored run (else its first run with a trace)."""
    if not template:
        return {}
    first: dict[str, str] = {}
    failed: dict[str, str] = {}
    for record in report.records:
        if record.trace_id is None:
            continue
        key = record.case_key or ""
        link = template.replace("{trace_id}", record.trace_id).replace("{span_id}", record.span_id or "")
        first.setdefault(key, link)
        if record.outcome in ("fail", "error"):
            failed.setdefault(key, link)
    return {**first, **failed}


def drops(report: Report) -> dict[str, list[tuple[ReportComparison, ReportInput]]]:
    """Case key (or label) -> its per-case entries of the baseline's comparisons, of every measure, whose
    verdict is a drop (with the measure's comparison each is of)."""
    found: dict[str, list[tuple[ReportComparison, ReportInput]]] = {}
    for comparison in report.baseline_comparisons:
        for measured in comparison.measures:
            for entry in measured.inputs:
                if entry.verdict == "fail":
                    found.setdefault(entry.key, []).append((measured, entry))
    return found


def _location(row: ReportRow) -> tuple[str, int]:
    source = row.source
    path = source.path if source is not None and source.path else str(row.nodeid or "").split("::")[0]
    return path, (source.line if source is not None and source.line else 1)


def _gate_detail(gate: ReportGate) -> str:
    """``gate >= 90%: FAIL``; ``score gate faithfulness >= 0.6: FAIL (mean 0.412)``."""
    verdict = str(gate.verdict).upper()
    if not gate.score:
        return f"gate {gate.bar_text}: {verdict}"
    mean = f" (mean {gate.estimate:.3g} of {gate.n})" if gate.estimate is not None else " (none recorded)"
    return f"score gate {gate.bar_text}: {verdict}{mean}"


def _drop_detail(measured: ReportComparison, entry: ReportInput) -> str:
    """``−32.0 pp vs baseline 9/10 [−60.1, −4.2], adjusted p 0.012``; ``mean faithfulness −0.220 vs baseline
    0.730 [−0.320, −0.110], adjusted p 0.0021``."""
    base, ci, p_adj = entry.baseline, entry.ci, entry.p_adjusted
    bounds = ci.bounds if ci is not None else None
    if measured.name is None:
        detail = (
            f"{_points(entry.difference)} pp vs baseline {base.passes if base else None}/{base.total if base else None}"
        )
        if bounds is not None:
            detail += f" [{_points(bounds[0])}, {_points(bounds[1])}]"
    else:
        mean = base.mean if base is not None else None
        detail = f"mean {measured.name} {_signed(entry.difference)} vs baseline {_plain(mean)}"
        if bounds is not None:
            detail += f" [{_signed(bounds[0])}, {_signed(bounds[1])}]"
    return detail + (f", adjusted p {p_adj:.2g}" if p_adj is not None else "")


def _verdict_detail(verdict: ReportComparison, measured: ReportComparison) -> str:
    """A benchmark verdict's comparison of one measure: ``current − baseline: mean faithfulness −0.220
    [−0.228, −0.212], margin 0.05: FAIL``."""
    head = "current \u2212 baseline" if verdict.kind == "baseline" else f"{verdict.arm} \u2212 {verdict.baseline}"
    bounds = measured.ci.bounds if measured.ci is not None else None
    if measured.name is None:
        value = f"pass fraction {_points(measured.difference)} pp"
        shown = f" [{_points(bounds[0])}, {_points(bounds[1])}]" if bounds is not None else ""
    else:
        value = f"mean {measured.name} {_signed(measured.difference)}"
        shown = f" [{_signed(bounds[0])}, {_signed(bounds[1])}]" if bounds is not None else ""
    margin = f", margin {measured.margin:g}" if measured.margin is not None else ""
    return f"{head}: {value}{shown}{margin}: {str(measured.verdict).upper()}"


def attention(report: Report | Mapping[str, Any], trace_url: str | None = None) -> list[Attention]:
    """Every row that needs attention, worst first (a row may need it for several reasons: each is listed), then
    each benchmark verdict of a comparison that failed (or is undecided), of every measure."""
    report = as_report(report)
    links = traces(report, trace_url)
    dropped = drops(report)
    found: list[Attention] = []
    located: dict[str, tuple[str, int]] = {}
    for row in report.rows:
        label, key = row.label, row.key
        path, line = located.setdefault(row.benchmark or label, _location(row))
        passes, total = row.passes, row.total
        low, high = row.ci.bounds if row.ci is not None and row.ci.bounds is not None else (None, None)
        quarantine = row.quarantine
        link = links.get(key)

        def add(
            kind: str,
            detail: str,
            rank: float,
            p: int | None = passes,
            n: int | None = total,
            lo: float | None = low,
            hi: float | None = high,
            unit: str = FRACTION,
        ) -> None:
            found.append(Attention(kind, label, key, p, n, lo, hi, detail, link, path, line, rank, unit))  # noqa: B023 - called in this iteration only

        gates = row.gates
        shown = [gate for gate in gates if gate.verdict in ("fail", "undecided")]
        if not shown and row.gate is not None and row.verdict in ("fail", "undecided"):
            # the case's verdict is its latency's (or a crash released its gate item): its gate's bar, its verdict
            shown = [replace(row.gate.reading(), verdict=row.verdict)]
        for gate in shown:
            unit = SCORE if gate.score else FRACTION
            rank = gate.high if gate.high is not None else 0.0
            kind, detail = FAILED_GATE if gate.verdict == "fail" else UNDECIDED_GATE, _gate_detail(gate)
            if quarantine is not None:
                kind, detail = QUARANTINED, f"{detail}; quarantined by {quarantine.owner} until {quarantine.until}"
            add(kind, detail, rank, gate.passes, gate.total, gate.low, gate.high, unit)
        if not shown and quarantine is not None and quarantine.failing:
            add(QUARANTINED, f"quarantined by {quarantine.owner} until {quarantine.until}", high or 0.0)
        if quarantine is None:
            for measured, entry in dropped.get(key) or dropped.get(label) or ():
                bounds = entry.ci.bounds if entry.ci is not None else None
                if measured.name is None:
                    add(DROPPED, _drop_detail(measured, entry), entry.difference or 0.0)
                else:  # a score's drop: its interval is of the difference, in the score's units
                    rank = (entry.difference or 0.0) / measured.span
                    lo, hi = bounds if bounds is not None else (None, None)
                    add(DROPPED, _drop_detail(measured, entry), rank, None, None, lo, hi, SCORE)
        errors = row.errors or 0
        if errors and quarantine is None:
            add(ERRORED, f"{errors} errored run{'s' * (errors != 1)}", -errors)
        fails = row.fails or 0
        if fails and row.gate is None and not gates and quarantine is None:  # an ungated case's failed runs fail it
            add(FAILED_RUNS, f"{fails} failed run{'s' * (fails != 1)}, no gate", -fails)
        history = row.history
        if history is not None and history.changed:
            state_kind = {"broken": BROKEN, "failing": FAILING, "flaky": FLAKY}.get(str(history.state))
            if state_kind is not None:
                flake = history.flake_rate
                rate = flake.fraction if flake is not None else None
                add(
                    state_kind,
                    f"{history.state} since {history.since}; flake rate {percent(rate)} "
                    f"{interval_text(flake.low if flake else None, flake.high if flake else None)} over "
                    f"{history.nights} nights",
                    -(rate or 0.0),
                )
    found += _verdicts(report, located)
    found.sort(key=lambda a: (ORDER.index(a.kind), a.rank, a.label))
    return found


def _verdicts(report: Report, located: Mapping[str, tuple[str, int]]) -> list[Attention]:
    """Each benchmark verdict (``[baseline]``, ``[compare:ARM]``) whose comparison of a measure failed, or is
    undecided, under a margin: where the verdict item failed the session."""
    found = []
    for verdict in report.all_comparisons:
        for measured in verdict.measures:
            if measured.margin is None or measured.verdict not in ("fail", "undecided"):
                continue
            name = verdict.function or ""
            label = f"{name} [baseline]" if verdict.kind == "baseline" else f"{name} [compare:{verdict.arm}]"
            path, line = located.get(name, ("", 1))
            bounds = measured.ci.bounds if measured.ci is not None else None
            lo, hi = bounds if bounds is not None else (None, None)
            unit = FRACTION if measured.name is None else SCORE
            kind = FAILED_VERDICT if measured.verdict == "fail" else UNDECIDED_VERDICT
            rank = (measured.difference or 0.0) / measured.span
            found.append(
                Attention(
                    kind,
                    label,
                    name,
                    None,
                    None,
                    lo,
                    hi,
                    _verdict_detail(verdict, measured),
                    None,
                    path,
                    line,
                    rank,
                    unit,
                )
            )
    return found


def _points(value: float | None) -> str:
    return "–" if value is None else f"{value * 100:+.1f}"


def _signed(value: float | None) -> str:
    return "–" if value is None else f"{value:+.3f}"


def _plain(value: float | None) -> str:
    return "–" if value is None else f"{value:.3f}"


def counts(items: Sequence[Attention]) -> dict[str, int]:
    out = {kind: 0 for kind in ORDER}
    for item in items:
        out[item.kind] += 1
    return out
