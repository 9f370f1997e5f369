"""The HTML report (``--prob-html``): one self-contained file you can open from a CI artifact.

It renders the same report the JSON reporter writes (:func:`.json_report.build`
with the same facets), read by the one reader of reports (:mod:`.reader`), so
both always agree and a saved JSON report renders the same way. Every measure
is shown as the pass fraction is: each gate in the Gate column and the gates
section, each score's comparison beside its verdict's. Pure: no pytest and
no I/O in :func:`render`.

Everything is inline: styles, two small scripts (a filter box, and a record
of script errors and blocked requests on ``<html>`` so a browser test can see
them), and the charts, SVG drawn by :mod:`.charts`. A charting library
would add tens of kilobytes and a licence to ship for two bar charts; SVG
rectangles and lines are enough and need no script to show. The page's
Content-Security-Policy allows no network request at all (``default-src
'none'``); links (trace links) still navigate when clicked.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from .charts import cost_chart, difference_bar, escape, fraction_chart, money, percent, score_chart
from .concurrency_facet import describe
from .reader import read_record, read_report
from .report_rows import ReportGate, ReportInterval, ReportRow
from .report_types import RecordScore, Report, ReportComparison, ReportRecord

#: Failed and errored runs shown per case; the rest are counted, not shown.
RUNS_SHOWN = 20
_OUTCOMES_SHOWN = ("fail", "error")

CSS = """
:root{--pass:#2e7d32;--flaky:#ef6c00;--fail:#c62828;--error:#6a1b9a;--muted:#666;--line:#ddd}
*{box-sizing:border-box}body{font:14px/1.45 system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:0;color:#222;background:#fafafa}
header{background:#263238;color:#fff;padding:14px 24px}header h1{margin:0;font-size:20px}header p{margin:4px 0 0;color:#cfd8dc}
main{padding:16px 24px;max-width:1400px}section{background:#fff;border:1px solid var(--line);border-radius:6px;padding:12px 16px;margin:0 0 16px}
h2{font-size:16px;margin:0 0 8px}table{border-collapse:collapse;width:100%}th,td{text-align:left;padding:4px 8px;border-bottom:1px solid var(--line);vertical-align:top}
th{background:#f5f5f5;font-weight:600}td.num{text-align:right;font-variant-numeric:tabular-nums}
.status{font-weight:600;text-transform:uppercase;font-size:12px}.s-pass{color:var(--pass)}.s-flaky{color:var(--flaky)}.s-fail{color:var(--fail)}
.s-error,.s-errored{color:var(--error)}.s-undecided{color:var(--muted)}
.tiles{display:flex;gap:12px;flex-wrap:wrap}.tile{border:1px solid var(--line);border-radius:6px;padding:8px 12px;min-width:120px;background:#fff}
.tile b{display:block;font-size:20px}.muted{color:var(--muted)}pre{white-space:pre-wrap;word-break:break-word;background:#f6f8fa;border:1px solid #eee;padding:6px 8px;margin:4px 0;max-height:24em;overflow:auto}
details{border-top:1px solid var(--line);padding:6px 0}summary{cursor:pointer;font-weight:600}.run{margin:6px 0 10px 12px}
.field{font-size:12px;color:var(--muted);margin-top:4px}input[type=search]{padding:4px 8px;width:320px;margin-bottom:8px}
svg text{font-size:11px;fill:#333}.cut{color:var(--fail);font-size:12px}
"""

# In <head>, before anything else runs: script errors and blocked requests are
# recorded on <html> (data-errors, data-blocked), so a check in a browser sees them.
HEAD_SCRIPT = """
(function(){var root=document.documentElement,errors=[],blocked=[];
window.addEventListener('error',function(e){errors.push(String(e.message||e.type));root.setAttribute('data-errors',errors.join(' | '));},true);
document.addEventListener('securitypolicyviolation',function(e){blocked.push(String(e.blockedURI));root.setAttribute('data-blocked',blocked.join(' '));});
})();
"""

# At the end of <body>: the filter box, and what the page holds, marked on <html>.
SCRIPT = """
(function(){
var root=document.documentElement,box=document.getElementById('filter');
if(box){box.addEventListener('input',function(){var q=box.value.toLowerCase();
document.querySelectorAll('[data-case]').forEach(function(el){el.style.display=el.getAttribute('data-case').toLowerCase().indexOf(q)<0?'none':'';});});}
root.setAttribute('data-charts',String(document.querySelectorAll('svg.chart').length));
root.setAttribute('data-failed-runs',String(document.querySelectorAll('.run').length));
root.setAttribute('data-ready','1');
})();
"""


def _status(value: object) -> str:
    """A status badge; a run shown for its low score may carry any outcome a report wrote."""
    if not value:
        return ""
    text = str(value)
    return f'<span class="status s-{escape(text.lower())}">{escape(text)}</span>'


def trace_link(template: str | None, record: ReportRecord | Mapping[str, Any]) -> str:
    """The run's trace URL from the ``prob_trace_url`` template, or "" without a template or trace id."""
    if isinstance(record, Mapping):  # a record as the JSON report has it
        record = read_record(record)
    if not template or not record.trace_id:
        return ""
    return template.replace("{trace_id}", str(record.trace_id)).replace("{span_id}", str(record.span_id or ""))


# -- sections -----------------------------------------------------------------


def _tiles(report: Report) -> str:
    totals = report.totals
    tiles = [
        ("Runs passed", f"{totals.passes or 0}/{totals.count or 0}"),
        ("Pass rate", percent(totals.pass_fraction)),
        ("Cases", str(totals.rows or 0)),
        ("Cost", money(totals.cost) if totals.cost else "$0"),
    ]
    tiles += [(str(name).upper(), str(count)) for name, count in totals.statuses.items() if count]
    return (
        '<div class="tiles">'
        + "".join(f'<div class="tile"><b>{escape(v)}</b>{escape(k)}</div>' for k, v in tiles)
        + "</div>"
    )


def _bar(gate: ReportGate) -> str:
    """A gate's bar as the page shows it: ``≥ 90%``, ``≥ 8 passes``, ``faithfulness ≥ 0.6``."""
    return gate.bar_text.replace(">=", "≥")


def _gate_text(row: ReportRow) -> str:
    """The Gate column: each gate of the case, one per measure, with its verdict."""
    return "<br>".join(
        f'<span class="gate" data-measure="{escape(gate.measure)}">{escape(_bar(gate))} {_status(gate.verdict)}</span>'
        for gate in row.gates
    )


def _scores_text(row: ReportRow) -> str:
    """A row's scores: ``name mean [low, high]`` per name (and the bar, when gated)."""
    parts = []
    for name, summary in row.scores.items():
        shown = "–" if summary.mean is None else f"{summary.mean:.3g}"
        bounds = summary.ci.bounds if summary.ci is not None else None
        if bounds is not None:
            shown += f" [{bounds[0]:.3g}, {bounds[1]:.3g}]"
        if summary.min_score is not None:
            shown += f" ≥ {summary.min_score:g}"
        parts.append(f'<span class="score" data-score="{escape(name)}">{escape(name)} {escape(shown)}</span>')
    return "<br>".join(parts)


def _table(rows: list[ReportRow]) -> str:
    scored = any(row.scores for row in rows)
    head = (
        "<tr><th>Case</th><th>Passes</th><th>Fraction</th><th>Interval</th><th>Status</th><th>Gate</th>"
        + ("<th>Scores</th>" if scored else "")
        + "<th>Cost</th><th>Stopped</th></tr>"
    )
    body = []
    for row in rows:
        ci = row.ci
        interval = f"[{percent(ci.low)}, {percent(ci.high)}]" if ci is not None else "–"
        stopped = row.stopped.reason if row.stopped is not None else ""
        body.append(
            f'<tr data-case="{escape(row.label)}"><td><a href="#case-{escape(row.nodeid)}">{escape(row.label)}</a></td>'
            f'<td class="num">{escape(row.passes or 0)}/{escape(row.total or 0)}</td><td class="num">{percent(row.pass_fraction)}</td>'
            f'<td class="num">{interval}</td><td>{_status(row.status)}</td><td>{_gate_text(row)}</td>'
            + (f"<td>{_scores_text(row)}</td>" if scored else "")
            + f'<td class="num">{money(row.cost)}</td><td>{escape(stopped)}</td></tr>'
        )
    return f'<table id="rows">{head}{"".join(body)}</table>'


def _gates(rows: list[ReportRow]) -> str:
    """Every gate of every gated case, one row per measure: its bar, estimate, interval and verdict."""
    body = []
    for row in rows:
        for gate in row.gates:
            estimate = (
                f"{gate.passes}/{gate.total}"
                if gate.passes is not None and gate.total is not None
                else "–"
                if gate.estimate is None
                else f"{gate.estimate:.3g}"
            )
            shown = (
                ("–" if gate.low is None or gate.high is None else f"[{percent(gate.low)}, {percent(gate.high)}]")
                if not gate.score
                else ("–" if gate.low is None or gate.high is None else f"[{gate.low:.3g}, {gate.high:.3g}]")
            )
            body.append(
                f'<tr data-case="{escape(row.label)}" data-measure="{escape(gate.measure)}"><td>{escape(row.label)}</td>'
                f"<td>{escape('pass fraction' if not gate.score else 'mean ' + gate.name)}</td><td>{escape(_bar(gate))}</td>"
                f'<td class="num">{escape(estimate)}</td><td class="num">{escape(shown)}</td><td>{_status(gate.verdict)}</td></tr>'
            )
    if not body:
        return ""
    head = "<tr><th>Case</th><th>Measure</th><th>Bar</th><th>Estimate</th><th>Interval</th><th>Verdict</th></tr>"
    return f'<section id="gates"><h2>Gates</h2><table>{head}{"".join(body)}</table></section>'


def _comparisons(comparisons: Iterable[ReportComparison]) -> str:
    items = [c for comparison in comparisons for c in _joined(comparison)]
    if not items:
        return ""
    head = (
        "<tr><th>Benchmark</th><th>Measure</th><th>Arm vs baseline</th><th>Pairs</th><th>Difference</th><th></th>"
        "<th>p (adjusted)</th><th>Verdict</th><th>Cost ratio</th></tr>"
    )
    body = []
    for c, verdict in items:
        ci = c.ci or ReportInterval()
        span = c.span
        if c.name is None:  # a pass fraction's difference, in percent
            shown = f"{'–' if c.difference is None else f'{c.difference:+.0%}'} [{percent(ci.low)}, {percent(ci.high)}]"
        else:  # a mean score's, in its units
            bounds = "" if ci.bounds is None else f" [{ci.bounds[0]:+.3f}, {ci.bounds[1]:+.3f}]"
            shown = f"{'–' if c.difference is None else f'{c.difference:+.3f}'}{bounds}"
        body.append(
            f'<tr data-measure="{escape(c.measure)}"><td>{escape(verdict.function)}</td>'
            f"<td>{escape('pass fraction' if c.name is None else 'mean ' + c.name)}</td>"
            f'<td>{escape(verdict.arm)} vs {escape(verdict.baseline)}</td><td class="num">{escape(c.pairs)}</td>'
            f'<td class="num">{escape(shown)}</td>'
            f"<td>{difference_bar(_share(ci.low, span), _share(ci.high, span), _share(c.difference, span), c.margin)}</td>"
            f'<td class="num">{escape(_num(c.p_adjusted))}</td><td>{_status(c.verdict)}</td>'
            f'<td class="num">{"–" if c.cost_ratio is None else f"{c.cost_ratio:.2f}×"}</td></tr>'
        )
    return f'<section id="comparisons"><h2>Comparisons</h2><table>{head}{"".join(body)}</table></section>'


def _share(value: float | None, span: float) -> float | None:
    """A difference as a share of its measure's range: the difference bar's axis is [-1, 1] of it."""
    return None if value is None else value / span


def _joined(comparison: ReportComparison) -> list[tuple[ReportComparison, ReportComparison]]:
    """A verdict's comparisons, each with the verdict's own (its pass fraction's): the pass fraction's first."""
    return [(c, comparison) for c in comparison.measures]


def _num(value: Any) -> str:
    return "–" if value is None else f"{value:.3g}"


def _spending(report: Report) -> str:
    lines = []
    stopping = report.stopping
    if stopping is not None and stopping.active:
        lines.append(
            f"Early stopping ({escape(stopping.mode)}): {escape(stopping.cases_stopped)} cases stopped, "
            f"{escape(stopping.runs_saved)} runs saved, {escape(stopping.runs_executed)} executed."
        )
    budget = report.budget
    if budget is not None:
        after = budget.runs_after_reached
        lines.append(
            f"Budget: {escape(budget.reason or 'not reached')}; {escape(budget.runs_not_executed)} runs not executed."
            + (
                f" {escape(after)} run(s) in flight when it was reached finished after it"
                f" ({money(budget.spent_after_reached)})."
                if after
                else ""
            )
        )
    gates = report.gates
    if gates is not None and any((gates.passed, gates.failed, gates.undecided, gates.skipped)):
        counted = {
            "passed": gates.passed,
            "failed": gates.failed,
            "undecided": gates.undecided,
            "skipped": gates.skipped,
        }
        lines.append("Gates: " + ", ".join(f"{escape(k)} {escape(v)}" for k, v in counted.items()))
    if not lines:
        return ""
    return (
        '<section id="decisions"><h2>Gates, stopping and budgets</h2>'
        + "".join(f"<p>{line}</p>" for line in lines)
        + "</section>"
    )


def _concurrency(report: Report) -> str:
    """The concurrent runs' section (the JSON's ``concurrency``): K, runs in flight, wall time against the ideal."""
    if report.concurrency is None:
        return ""
    paragraphs = "".join(f"<p>{escape(line.strip())}</p>" for line in describe(report.concurrency))
    return f'<section id="concurrency"><h2>Concurrent runs</h2>{paragraphs}</section>'


def _transcript(entries: Iterable[Mapping[str, Any]], dropped: int = 0) -> str:
    parts = []
    for entry in entries:
        cut = entry["truncated"] if "truncated" in entry and isinstance(entry["truncated"], Mapping) else {}
        for name, value in entry.items():
            if name == "truncated":
                continue
            note = f' <span class="cut">cut from {int(cut[name]):,} characters</span>' if name in cut else ""
            parts.append(f'<div class="field">{escape(name)}{note}</div><pre class="transcript">{escape(value)}</pre>')
    if dropped > 0:
        parts.append(
            f'<p class="cut">{dropped:,} more transcript entries were dropped (only the first ones are kept)</p>'
        )
    return "".join(parts)


def _run_scores(scores: Iterable[RecordScore]) -> str:
    """A run's scores, each with its threshold and the grader's explanation."""
    parts = []
    for score in scores:
        line = f"{escape(score.name)} = {escape(score.value)}"
        if score.threshold is not None:
            line += f" (threshold {escape(score.threshold)})"
        parts.append(
            f'<div class="score">{line}</div>'
            + (f'<pre class="transcript">{escape(score.explanation)}</pre>' if score.explanation else "")
        )
    return "".join(parts)


def _runs(rows: list[ReportRow], records: list[ReportRecord], trace_url: str | None) -> str:
    by_case: dict[str, list[ReportRecord]] = {}
    for record in records:
        if record.outcome in _OUTCOMES_SHOWN or record.low_score:
            by_case.setdefault(record.case, []).append(record)
    parts = []
    for row in rows:
        failed = by_case.get(row.label, [])
        if not failed:
            continue
        shown = failed[:RUNS_SHOWN]
        runs = []
        for record in shown:
            link = trace_link(trace_url, record)
            link_html = (
                f' <a class="trace" href="{escape(link)}" target="_blank" rel="noopener">trace</a>' if link else ""
            )
            error = record.error or record.message or ""
            runs.append(
                f'<div class="run" data-outcome="{escape(record.outcome)}"><b>run {escape(record.run)}</b> '
                f'{_status(record.outcome)} <span class="muted">{escape(record.phase)}</span>{link_html}'
                f'<pre class="error">{escape(error)}</pre>{_run_scores(record.scores)}'
                f"{_transcript(record.transcript, record.transcript_dropped)}</div>"
            )
        more = (
            f'<p class="muted">{len(failed) - len(shown)} more failed or errored runs in the JSON report.</p>'
            if len(failed) > len(shown)
            else ""
        )
        parts.append(
            f'<details id="case-{escape(row.nodeid)}" data-case="{escape(row.label)}"><summary>{escape(row.label)} '
            f'{_status(row.status)} <span class="muted">{len(failed)} failed or errored</span></summary>{"".join(runs)}{more}</details>'
        )
    if not parts:
        return ""
    return '<section id="runs"><h2>Failed and errored runs</h2>' + "".join(parts) + "</section>"


#: The case filter; a page has one (its script filters every ``data-case`` element).
FILTER = '<input type="search" id="filter" placeholder="filter cases">'


def page(title: str, subtitle: str, body: str, *, css: str = "") -> str:
    """The page every report is: its Content-Security-Policy (no request leaves it, scripts only its own),
    the shared style and script, a header and ``body`` (the sections, already escaped HTML)."""
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; "
        "script-src 'unsafe-inline'; img-src data:\">"
        f'<meta name="viewport" content="width=device-width"><title>{escape(title)}</title><script>{HEAD_SCRIPT}</script>'
        f"<style>{CSS}{css}</style></head>"
        f"<body><header><h1>{escape(title)}</h1><p>{subtitle}</p></header><main>{body}"
        f"</main><script>{SCRIPT}</script></body></html>\n"
    )


def sections(report: Report | Mapping[str, Any], *, trace_url: str | None = None, case_filter: bool = True) -> str:
    """One session's sections (summary, charts, spend, cases, gates, comparisons, failed runs), for its own page
    or for the history page's newest session (``case_filter=False``: the history page has its own)."""
    report = as_report(report)
    rows, records = report.rows, report.records
    charts = ""
    if rows:
        charts = (
            f'<section id="charts"><h2>Pass fraction</h2>{fraction_chart(rows)}'
            + (f"<h2>Scores</h2>{score_chart(rows, records)}" if any(row.scores for row in rows) else "")
            + (f"<h2>Cost per case</h2>{cost_chart(rows)}" if any(row.cost for row in rows) else "")
            + "</section>"
        )
    return (
        f'<section id="summary">{_tiles(report)}</section>{charts}{_spending(report)}{_concurrency(report)}'
        f'<section id="table"><h2>Cases</h2>{FILTER if case_filter else ""}{_table(rows)}</section>'
        f"{_gates(rows)}{_comparisons(report.all_comparisons)}{_runs(rows, records, trace_url)}"
    )


def as_report(report: Report | Mapping[str, Any]) -> Report:
    """A report read (a report dict, as the JSON report has it, is read first: :func:`.reader.read_report`)."""
    return report if isinstance(report, Report) else read_report(report)


def render(
    report: Report | Mapping[str, Any], *, trace_url: str | None = None, title: str = "pytest-probability report"
) -> str:
    """The whole page for one session's report (read, or its dict: the JSON report's shape)."""
    report = as_report(report)
    subtitle = f"{escape(report.created or '')} · pytest-probability {escape(report.versions.pytest_probability or '')} · exit status {escape(report.exit_status if report.exit_status is not None else '')}"
    return page(title, subtitle, sections(report, trace_url=trace_url))
