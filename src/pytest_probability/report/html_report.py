"""The HTML report (``--prob-html``): one self-contained file you can open from a CI artifact.

It renders the same report dict the JSON reporter writes
(:func:`.json_report.build` with the same facets), so both
always agree and a saved JSON report renders the same way. Pure: no pytest
and no I/O in :func:`render`.

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

from ..model.concurrency import Concurrency
from .charts import cost_chart, difference_bar, escape, fraction_chart, money, percent, score_chart
from .concurrency import describe

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


def trace_link(template: str | None, record: Mapping[str, Any]) -> str:
    """The run's trace URL from the ``prob_trace_url`` template, or "" without a template or trace id."""
    trace_id = record.get("trace_id")
    if not template or not trace_id:
        return ""
    return template.replace("{trace_id}", str(trace_id)).replace("{span_id}", str(record.get("span_id") or ""))


# -- sections -----------------------------------------------------------------


def _tiles(report: Mapping[str, Any]) -> str:
    totals = report.get("totals") or {}
    statuses = totals.get("statuses") or {}
    tiles = [
        ("Runs passed", f"{totals.get('passes', 0)}/{totals.get('count', 0)}"),
        ("Pass rate", percent(totals.get("pass_fraction"))),
        ("Cases", str(totals.get("rows", 0))),
        ("Cost", money(totals.get("cost")) if totals.get("cost") else "$0"),
    ]
    tiles += [(str(name).upper(), str(count)) for name, count in statuses.items() if count]
    return (
        '<div class="tiles">'
        + "".join(f'<div class="tile"><b>{escape(v)}</b>{escape(k)}</div>' for k, v in tiles)
        + "</div>"
    )


def _gate_text(gate: Mapping[str, Any] | None) -> str:
    if not gate:
        return ""
    bar = f"≥ {percent(gate.get('min_rate'))}" if gate.get("rule") == "rate" else f"≥ {gate.get('min_passes')} passes"
    return f"{escape(bar)} {_status(gate.get('verdict'))}"


def _scores_text(scores: Any) -> str:
    """A row's scores: ``name mean [low, high]`` per name (and the bar's verdict, when gated)."""
    if not isinstance(scores, Mapping):
        return ""
    parts = []
    for name, summary in scores.items():
        if not isinstance(summary, Mapping):
            continue
        mean, ci = summary.get("mean"), summary.get("ci") or {}
        shown = "–" if not isinstance(mean, (int, float)) else f"{mean:.3g}"
        if (
            isinstance(ci, Mapping)
            and isinstance(ci.get("low"), (int, float))
            and isinstance(ci.get("high"), (int, float))
        ):
            shown += f" [{ci['low']:.3g}, {ci['high']:.3g}]"
        bar = summary.get("min_score")
        if isinstance(bar, (int, float)):
            shown += f" ≥ {bar:g}"
        parts.append(f'<span class="score" data-score="{escape(name)}">{escape(name)} {escape(shown)}</span>')
    return "<br>".join(parts)


def _table(rows: list[Mapping[str, Any]]) -> str:
    scored = any(row.get("scores") for row in rows)
    head = (
        "<tr><th>Case</th><th>Passes</th><th>Fraction</th><th>Interval</th><th>Status</th><th>Gate</th>"
        + ("<th>Scores</th>" if scored else "")
        + "<th>Cost</th><th>Stopped</th></tr>"
    )
    body = []
    for row in rows:
        ci = row.get("ci") or {}
        interval = f"[{percent(ci.get('low'))}, {percent(ci.get('high'))}]" if ci else "–"
        stopped = row.get("stopped") or {}
        body.append(
            f'<tr data-case="{escape(row.get("label"))}"><td><a href="#case-{escape(row.get("nodeid"))}">{escape(row.get("label"))}</a></td>'
            f'<td class="num">{escape(row.get("passes", 0))}/{escape(row.get("total", 0))}</td><td class="num">{percent(row.get("pass_fraction"))}</td>'
            f'<td class="num">{interval}</td><td>{_status(row.get("status"))}</td><td>{_gate_text(row.get("gate"))}</td>'
            + (f"<td>{_scores_text(row.get('scores'))}</td>" if scored else "")
            + f'<td class="num">{money(row.get("cost"))}</td><td>{escape(stopped.get("reason", ""))}</td></tr>'
        )
    return f'<table id="rows">{head}{"".join(body)}</table>'


def _comparisons(comparisons: Iterable[Mapping[str, Any]]) -> str:
    items = list(comparisons)
    if not items:
        return ""
    head = "<tr><th>Benchmark</th><th>Arm vs baseline</th><th>Pairs</th><th>Difference</th><th></th><th>p (adjusted)</th><th>Verdict</th><th>Cost ratio</th></tr>"
    body = []
    for c in items:
        ci = c.get("ci") or {}
        diff = c.get("difference")
        ratio = c.get("cost_ratio")
        body.append(
            f'<tr><td>{escape(c.get("function"))}</td><td>{escape(c.get("arm"))} vs {escape(c.get("baseline"))}</td><td class="num">{escape(c.get("pairs"))}</td>'
            f'<td class="num">{"–" if diff is None else f"{diff:+.0%}"} [{percent(ci.get("low"))}, {percent(ci.get("high"))}]</td>'
            f"<td>{difference_bar(ci.get('low'), ci.get('high'), diff, c.get('margin'))}</td>"
            f'<td class="num">{escape(_num(c.get("p_adjusted")))}</td><td>{_status(c.get("verdict"))}</td>'
            f'<td class="num">{"–" if ratio is None else f"{ratio:.2f}×"}</td></tr>'
        )
    return f'<section id="comparisons"><h2>Comparisons</h2><table>{head}{"".join(body)}</table></section>'


def _all_comparisons(report: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """The baseline's comparisons (under the report's ``baseline``), then the A/B arms' (its ``comparisons``)."""
    baseline = report.get("baseline")
    listed = baseline.get("comparisons") if isinstance(baseline, Mapping) else None
    return [*(listed or ()), *(report.get("comparisons") or ())]


def _num(value: Any) -> str:
    return "–" if value is None else f"{value:.3g}"


def _spending(report: Mapping[str, Any]) -> str:
    lines = []
    stopping = report.get("stopping")
    if stopping and stopping.get("active"):
        lines.append(
            f"Early stopping ({escape(stopping.get('mode'))}): {escape(stopping.get('cases_stopped'))} cases stopped, "
            f"{escape(stopping.get('runs_saved'))} runs saved, {escape(stopping.get('runs_executed'))} executed."
        )
    budget = report.get("budget")
    if budget:
        after = budget.get("runs_after_reached")
        lines.append(
            f"Budget: {escape(budget.get('reason') or 'not reached')}; {escape(budget.get('runs_not_executed'))} runs not executed."
            + (
                f" {escape(after)} run(s) in flight when it was reached finished after it"
                f" ({money(budget.get('spent_after_reached'))})."
                if after
                else ""
            )
        )
    gates = report.get("gates")
    if isinstance(gates, Mapping) and any(v for v in gates.values() if not isinstance(v, (dict, list))):
        lines.append(
            "Gates: "
            + ", ".join(f"{escape(k)} {escape(v)}" for k, v in gates.items() if not isinstance(v, (dict, list)))
        )
    if not lines:
        return ""
    return (
        '<section id="decisions"><h2>Gates, stopping and budgets</h2>'
        + "".join(f"<p>{line}</p>" for line in lines)
        + "</section>"
    )


def _concurrency(report: Mapping[str, Any]) -> str:
    """The concurrent runs' section (the JSON's ``concurrency``): K, runs in flight, wall time against the ideal."""
    data = report.get("concurrency")
    if not isinstance(data, Mapping):
        return ""
    paragraphs = "".join(f"<p>{escape(line.strip())}</p>" for line in describe(Concurrency.from_dict(data)))
    return f'<section id="concurrency"><h2>Concurrent runs</h2>{paragraphs}</section>'


def _transcript(entries: Iterable[Mapping[str, Any]], dropped: Any = 0) -> str:
    parts = []
    for entry in entries:
        cut = entry.get("truncated") or {}
        for name, value in entry.items():
            if name == "truncated":
                continue
            note = f' <span class="cut">cut from {int(cut[name]):,} characters</span>' if name in cut else ""
            parts.append(f'<div class="field">{escape(name)}{note}</div><pre class="transcript">{escape(value)}</pre>')
    if isinstance(dropped, int) and dropped > 0:
        parts.append(
            f'<p class="cut">{dropped:,} more transcript entries were dropped (only the first ones are kept)</p>'
        )
    return "".join(parts)


def _low(record: Mapping[str, Any]) -> bool:
    """Whether a run recorded a score below its threshold (a run that passed may have, when recorded late)."""
    for score in record.get("scores") or ():
        if isinstance(score, Mapping):
            value, threshold = score.get("value"), score.get("threshold")
            if isinstance(value, (int, float)) and isinstance(threshold, (int, float)) and value < threshold:
                return True
    return False


def _run_scores(scores: Any) -> str:
    """A run's scores, each with its threshold and the grader's explanation."""
    parts = []
    for score in scores or ():
        if not isinstance(score, Mapping):
            continue
        threshold = score.get("threshold")
        line = f"{escape(score.get('name'))} = {escape(score.get('value'))}"
        if threshold is not None:
            line += f" (threshold {escape(threshold)})"
        explanation = score.get("explanation")
        parts.append(
            f'<div class="score">{line}</div>'
            + (f'<pre class="transcript">{escape(explanation)}</pre>' if explanation else "")
        )
    return "".join(parts)


def _runs(rows: list[Mapping[str, Any]], records: list[Mapping[str, Any]], trace_url: str | None) -> str:
    by_case: dict[str, list[Mapping[str, Any]]] = {}
    for record in records:
        if record.get("outcome") in _OUTCOMES_SHOWN or _low(record):
            by_case.setdefault(str(record.get("case")), []).append(record)
    parts = []
    for row in rows:
        failed = by_case.get(str(row.get("label")), [])
        if not failed:
            continue
        shown = failed[:RUNS_SHOWN]
        runs = []
        for record in shown:
            link = trace_link(trace_url, record)
            link_html = (
                f' <a class="trace" href="{escape(link)}" target="_blank" rel="noopener">trace</a>' if link else ""
            )
            error = record.get("error") or record.get("message") or ""
            runs.append(
                f'<div class="run" data-outcome="{escape(record.get("outcome"))}"><b>run {escape(record.get("run"))}</b> '
                f'{_status(record.get("outcome"))} <span class="muted">{escape(record.get("phase"))}</span>{link_html}'
                f'<pre class="error">{escape(error)}</pre>{_run_scores(record.get("scores"))}'
                f"{_transcript(record.get('transcript') or (), record.get('transcript_dropped'))}</div>"
            )
        more = (
            f'<p class="muted">{len(failed) - len(shown)} more failed or errored runs in the JSON report.</p>'
            if len(failed) > len(shown)
            else ""
        )
        parts.append(
            f'<details id="case-{escape(row.get("nodeid"))}" data-case="{escape(row.get("label"))}"><summary>{escape(row.get("label"))} '
            f'{_status(row.get("status"))} <span class="muted">{len(failed)} failed or errored</span></summary>{"".join(runs)}{more}</details>'
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


def sections(report: Mapping[str, Any], *, trace_url: str | None = None, case_filter: bool = True) -> str:
    """One session's sections (summary, charts, spend, cases, comparisons, failed runs), for its own page
    or for the history page's newest session (``case_filter=False``: the history page has its own)."""
    rows = list(report.get("rows") or [])
    records = list(report.get("records") or [])
    charts = ""
    if rows:
        charts = (
            f'<section id="charts"><h2>Pass fraction</h2>{fraction_chart(rows)}'
            + (f"<h2>Scores</h2>{score_chart(rows, records)}" if any(row.get("scores") for row in rows) else "")
            + (f"<h2>Cost per case</h2>{cost_chart(rows)}" if any(row.get("cost") for row in rows) else "")
            + "</section>"
        )
    return (
        f'<section id="summary">{_tiles(report)}</section>{charts}{_spending(report)}{_concurrency(report)}'
        f'<section id="table"><h2>Cases</h2>{FILTER if case_filter else ""}{_table(rows)}</section>'
        f"{_comparisons(_all_comparisons(report))}{_runs(rows, records, trace_url)}"
    )


def render(report: Mapping[str, Any], *, trace_url: str | None = None, title: str = "pytest-probability report") -> str:
    """The whole page for one session's report dict (the JSON report's shape)."""
    versions = report.get("versions") or {}
    subtitle = f"{escape(report.get('created', ''))} · pytest-probability {escape(versions.get('pytest_probability', ''))} · exit status {escape(report.get('exit_status', ''))}"
    return page(title, subtitle, sections(report, trace_url=trace_url))
