"""The history report: several sessions' JSON reports as one HTML page.

``python -m pytest_probability report DIR_OR_FILES -o report.html`` reads
``--prob-json`` reports (a folder: every ``*.json`` in it, e.g. the
``--prob-history`` folder) and shows, over the sessions in time order: per
case the pass fraction with its interval band and the baseline verdicts
marked, the spend per session, the cases that changed most, and the newest
session in full (:func:`.html_report.render`'s sections). Pure apart from
:func:`load`.

A report is read once, by the one reader of reports (:mod:`.reader`), and
checked as it is read: every field the page reads, its newest session's
sections included, must have the type the JSON report writes it with, so
rendering never meets another. Every measure is drawn: the pass fraction per
case, and each case's mean score of each name over the sessions, with its
baseline verdicts. A file found in
a folder that is not a report (another tool's JSON, a damaged report) is
skipped with a note; a file named on the command line is refused.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..maths.states import STATES, Night, Rule, stories
from ..maths.stats import METHODS
from ..text import printable
from . import html_report, reader
from .html_report import escape, money, percent
from .report_rows import ReportRow
from .report_types import Report
from .schema import Malformed

#: Cases drawn as small charts (the ones that changed most first); all are in the table.
CHARTS_SHOWN = 100
CHANGED_SHOWN = 20
#: Cases drawn as state strips (in the order of the charts).
STRIPS_SHOWN = 200
#: The longest window of a report's state rule the page takes (a longer one is no rule this version wrote).
WINDOW_MOST = 10_000


class HistoryError(ValueError):
    """A path that is not a readable JSON report."""


@dataclass(frozen=True)
class Source:
    """A file to read, and whether it was found in a folder (skipped if it is no report) or named."""

    path: Path
    in_folder: bool = False


def report_paths(arguments: Iterable[str]) -> list[Source]:
    sources: list[Source] = []
    for argument in arguments:
        path = Path(argument)
        if path.is_dir():
            sources += [
                Source(p, in_folder=True) for p in sorted(path.iterdir()) if p.suffix == ".json" and p.is_file()
            ]
        elif path.is_file():
            sources.append(Source(path))
        else:
            raise HistoryError(f"{printable(argument)}: no such file or folder")
    return sources


@dataclass
class Loaded:
    """The reports read, oldest first, and one note per file of a folder that was skipped."""

    reports: list[Report] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)


def load(sources: Iterable[Source]) -> Loaded:
    """The reports, oldest first (by ``created``; file order for equal or missing times). A file that is
    not a report is a :class:`HistoryError` when it was named, a note in ``skipped`` when in a folder."""
    loaded, reports = Loaded(), []
    for index, source in enumerate(sources):
        report, why = _read(source.path)
        if why is not None or report is None:
            if not source.in_folder:
                raise HistoryError(str(why))
            loaded.skipped.append(f"skipped {why}")
            continue
        # created_utc sorts across time zones; a report without it has only created (local time)
        reports.append((report.when, index, report))
    loaded.reports = [report for _, _, report in sorted(reports, key=lambda item: (item[0], item[1]))]
    return loaded


def _read(path: Path) -> tuple[Report, None] | tuple[None, str]:
    """The report in ``path``, or why it is none (the path first)."""
    where = printable(str(path))
    try:
        return reader.load(path), None
    except (reader.CannotRead, reader.NotJson) as exc:
        return None, f"{where}: not a readable JSON report ({exc.reason})"
    except reader.Unreadable:
        return None, f"{where}: not a pytest-probability JSON report (no 'rows')"
    except Malformed as exc:
        return None, f"{where}: not a pytest-probability JSON report ({printable(str(exc))})"


def as_reports(reports: Sequence[Report | Mapping[str, Any]]) -> list[Report]:
    """Reports read (a report dict, as the JSON report has it, is read first)."""
    return [report if isinstance(report, Report) else reader.read_report(report) for report in reports]


# -- each case's nights, for its state across them (maths.states) -------------------------------------


@dataclass
class Nights:
    """The nights read, oldest first: each one's day and its cases' nights by case key."""

    days: list[str] = field(default_factory=list)
    cases: list[dict[str, Night]] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)

    def of(self, key: str, label: str, tonight: Night | None) -> list[Night | None]:
        """A case's nights (None where it did not run), tonight's last."""
        found: list[Night | None] = [night.get(key) or night.get(label) for night in self.cases]
        return [*found, tonight]


def day(report: Report) -> str:
    """The day (UTC, ``YYYY-MM-DD``) of a report's session; ``created`` (local time) for 0.3.0's."""
    return report.when[:10]


def night_of(row: ReportRow, when: str) -> Night | None:
    """A report row's night: its passes of its counted runs, and its stored state; None without counts."""
    passes, total = row.passes, row.total
    if passes is None or total is None or total < 0 or passes < 0:
        return None
    stored = row.history
    return Night(
        when,
        min(passes, total),
        total,
        stored.state if stored is not None else None,
        stored.since if stored is not None else None,
        stored.first_flaky if stored is not None else None,
    )


def from_reports(reports: Sequence[Report | Mapping[str, Any]]) -> Nights:
    """The nights of reports already read (oldest first)."""
    nights = Nights()
    for report in as_reports(reports):
        when = day(report)
        cases: dict[str, Night] = {}
        for row in report.rows:
            night = night_of(row, when)
            if night is None:
                continue
            # a 0.3.0 row has no node id: its label is its key
            key = row.key
            if key:
                cases.setdefault(key, night)
        nights.days.append(when)
        nights.cases.append(cases)
    return nights


def _baseline_verdicts(report: Report) -> dict[tuple[str, str], str]:
    """(case key, measure) -> its per-case baseline verdict, of every measure (the pass fraction's, each
    score's)."""
    verdicts = {}
    for comparison in report.baseline_comparisons:
        for measured in comparison.measures:
            for entry in measured.inputs:
                if entry.key and entry.verdict:
                    verdicts[(entry.key, measured.measure)] = entry.verdict
    return verdicts


def series(reports: Sequence[Report | Mapping[str, Any]]) -> dict[str, dict[str, Any]]:
    """Per case key: its label and one point per session (None where the case was not run)."""
    read = as_reports(reports)
    cases: dict[str, dict[str, Any]] = {}
    for index, report in enumerate(read):
        verdicts = _baseline_verdicts(report)
        for row in report.rows:
            key = row.key
            entry = cases.setdefault(key, {"label": row.label or key, "points": [None] * len(read)})
            ci = row.ci
            entry["points"][index] = {
                "fraction": row.pass_fraction,
                "low": ci.low if ci is not None else None,
                "high": ci.high if ci is not None else None,
                "status": row.status,
                "verdict": verdicts.get((key, "pass")) or verdicts.get((row.label, "pass")),
                "cost": row.cost,
            }
    return cases


def score_series(reports: Sequence[Report | Mapping[str, Any]]) -> dict[tuple[str, str], dict[str, Any]]:
    """Per (case key, score name): its label, the score's range and one point per session (its mean, the
    interval and the baseline verdict of that score; None where the case did not record it)."""
    read = as_reports(reports)
    found: dict[tuple[str, str], dict[str, Any]] = {}
    for index, report in enumerate(read):
        verdicts = _baseline_verdicts(report)
        for row in report.rows:
            for name, score in row.scores.items():
                if score.mean is None:
                    continue
                entry = found.setdefault(
                    (row.key, name), {"label": f"{row.label} {name}", "points": [None] * len(read), "range": [0.0, 1.0]}
                )
                ci = score.ci
                low, high = (ci.low, ci.high) if ci is not None else (None, None)
                entry["range"] = [
                    min(entry["range"][0], score.mean, low if low is not None else score.mean),
                    max(entry["range"][1], score.mean, high if high is not None else score.mean),
                ]
                entry["points"][index] = {
                    "fraction": score.mean,
                    "low": low,
                    "high": high,
                    "verdict": verdicts.get((row.key, f"score:{name}")),
                }
    return found


def change(points: list[dict[str, Any] | None]) -> float | None:
    """Last pass fraction minus the first, over the sessions that counted the case."""
    values = [p["fraction"] for p in points if p is not None and p["fraction"] is not None]
    return values[-1] - values[0] if len(values) >= 2 else None


def case_chart(
    label: str, points: list[dict[str, Any] | None], low: float = 0.0, high: float = 1.0, kind: str = "history"
) -> str:
    """A value over sessions (a pass fraction, or a mean score on ``[low, high]``): the interval as a band, the
    value as a line, baseline verdicts marked."""
    width, height, pad = 320, 90, 8
    n = len(points)
    span = (high - low) or 1.0
    x = lambda i: pad + (i * (width - 2 * pad) / (n - 1) if n > 1 else (width - 2 * pad) / 2)  # noqa: E731
    y = lambda v: pad + (1.0 - (v - low) / span) * (height - 2 * pad)  # noqa: E731
    present = [(i, p) for i, p in enumerate(points) if p is not None and p["fraction"] is not None]
    parts = [f'<rect x="0" y="0" width="{width}" height="{height}" fill="#fff" stroke="#eee"/>']
    banded = [(i, p) for i, p in present if p["low"] is not None and p["high"] is not None]
    if banded:
        upper = " ".join(f"{x(i):.1f},{y(p['high']):.1f}" for i, p in banded)
        lower = " ".join(f"{x(i):.1f},{y(p['low']):.1f}" for i, p in reversed(banded))
        parts.append(f'<polygon class="band" points="{upper} {lower}" fill="#90caf9" fill-opacity="0.45"/>')
    if present:
        line = " ".join(f"{x(i):.1f},{y(p['fraction']):.1f}" for i, p in present)
        parts.append(f'<polyline class="fraction" points="{line}" fill="none" stroke="#1565c0" stroke-width="1.5"/>')
    shown = percent if kind == "history" else (lambda v: f"{v:.3g}")
    for i, p in present:
        verdict = p["verdict"] if "verdict" in p else None
        colour = {"fail": "#c62828", "pass": "#2e7d32"}.get(str(verdict), "#1565c0")
        size = 4 if verdict else 2.5
        parts.append(
            f'<circle class="point" data-verdict="{escape(verdict or "")}" cx="{x(i):.1f}" cy="{y(p["fraction"]):.1f}" r="{size}" fill="{colour}">'
            f"<title>session {i + 1}: {shown(p['fraction'])}{' · baseline ' + escape(verdict) if verdict else ''}</title></circle>"
        )
    return (
        f'<figure data-case="{escape(label)}"><svg class="chart" data-chart="{kind}" xmlns="http://www.w3.org/2000/svg" '
        f'width="{width}" height="{height}" viewBox="0 0 {width} {height}"><title>{escape(label)}</title>{"".join(parts)}</svg>'
        f"<figcaption>{escape(label)}</figcaption></figure>"
    )


def spend_chart(reports: Sequence[Report]) -> str:
    costs = [float(r.totals.cost or 0.0) for r in reports]
    top = max(costs, default=0.0) or 1.0
    bar, height = 28, 120
    width = 20 + bar * len(costs)
    parts = []
    for i, cost in enumerate(costs):
        h = cost / top * (height - 30)
        parts.append(
            f'<rect class="bar" x="{10 + i * bar + 3}" y="{height - 15 - h:.1f}" width="{bar - 6}" height="{h:.1f}" fill="#1565c0" fill-opacity="0.6">'
            f"<title>session {i + 1} ({escape(reports[i].created or '')}): {money(cost)}</title></rect>"
            f'<text x="{10 + i * bar + bar / 2}" y="{height - 3}" text-anchor="middle">{i + 1}</text>'
        )
    return (
        f'<svg class="chart" data-chart="spend" xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}"><title>Spend per session</title>{"".join(parts)}</svg>'
    )


#: A state's colour in the strips (the table's: red for broken and failing, amber for flaky, green for fixed).
STATE_COLOURS = {
    "new": "#90a4ae",
    "passing": "#a5d6a7",
    "fixed": "#2e7d32",
    "flaky": "#f9a825",
    "failing": "#ef6c00",
    "broken": "#c62828",
}


def rule_of(reports: Sequence[Report]) -> Rule:
    """The rule the newest report decided its states with (its ``states.rule``), else the defaults."""
    for report in reversed(reports):
        given = report.states.rule if report.states is not None else None
        if given is not None:
            try:
                rule = Rule(
                    window=int(given["window"]),
                    flaky_bar=float(given["flaky_bar"]),
                    failing_bar=float(given["failing_bar"]),
                    broken_runs=int(given["broken_runs"]),
                    fixed_nights=int(given["fixed_nights"]),
                    method=str(given["method"]),
                    confidence=float(given["confidence"]),
                )
            except (KeyError, TypeError, ValueError, OverflowError):
                break  # not a rule this version wrote: the defaults
            if rule.method in METHODS and 0.0 < rule.confidence < 1.0 and rule.window <= WINDOW_MOST:
                return rule
            break
    return Rule()


def state_strips(reports: Sequence[Report], labels: Mapping[str, str]) -> str:
    """Per case, one square per session coloured by its state that night (``maths.states``), blank where it did
    not run: ``svg[data-chart=states]``, each square's ``data-state``."""
    nights = from_reports(reports)
    rule = rule_of(reports)
    size, gap = 12, 2
    rows = []
    for key, label in list(labels.items())[:STRIPS_SHOWN]:
        found = stories(nights.of(key, label, None)[:-1], rule, keep_stored=True)
        cells = []
        for i, (night, told) in enumerate(zip(nights.days, found, strict=False)):
            if told is None:
                continue
            cells.append(
                f'<rect x="{i * (size + gap)}" y="0" width="{size}" height="{size}" '
                f'fill="{STATE_COLOURS[told.state]}" data-state="{told.state}"><title>{escape(night)}: '
                f"{told.state}</title></rect>"
            )
        width = max(1, len(nights.days)) * (size + gap)
        rows.append(
            f'<tr data-case="{escape(label)}"><td>{escape(label)}</td><td><svg class="chart" data-chart="states" '
            f'xmlns="http://www.w3.org/2000/svg" width="{width}" height="{size}" viewBox="0 0 {width} {size}">'
            f"{''.join(cells)}</svg></td></tr>"
        )
    legend = " ".join(f'<span style="color:{STATE_COLOURS[s]}">&#9632;</span> {s}' for s in STATES)
    more = (
        f'<p class="muted">{len(labels) - STRIPS_SHOWN} more cases are not drawn.</p>'
        if len(labels) > STRIPS_SHOWN
        else ""
    )
    return (
        f'<section id="states"><h2>States across sessions</h2><p class="muted">{legend}; the since-clean '
        f"interval rule, window {rule.window}, flaky below {rule.flaky_bar:g}, fixed after {rule.fixed_nights} "
        f"clean sessions.</p><table>{''.join(rows)}</table>{more}</section>"
    )


def _or_dash(value: object) -> object:
    return "–" if value is None else value


def render(
    reports: Sequence[Report | Mapping[str, Any]],
    *,
    trace_url: str | None = None,
    title: str = "pytest-probability history",
) -> str:
    if not reports:
        raise HistoryError("no reports to show")
    reports = as_reports(reports)
    cases = series(reports)
    ranked = sorted(cases.items(), key=lambda item: (-(abs(change(item[1]["points"]) or 0.0)), str(item[1]["label"])))
    sessions = "".join(
        f'<tr><td class="num">{i + 1}</td><td>{escape(r.created or "")}</td><td>{escape(r.source)}</td>'
        f'<td class="num">{escape(_or_dash(r.totals.passes))}/{escape(_or_dash(r.totals.count))}</td>'
        f'<td class="num">{money(r.totals.cost)}</td></tr>'
        for i, r in enumerate(reports)
    )
    changed_rows = []
    for _key, entry in ranked[:CHANGED_SHOWN]:
        delta = change(entry["points"])
        if delta is None:
            continue
        values = [p["fraction"] for p in entry["points"] if p is not None and p["fraction"] is not None]
        changed_rows.append(
            f'<tr data-case="{escape(entry["label"])}"><td>{escape(entry["label"])}</td><td class="num">{percent(values[0])}</td>'
            f'<td class="num">{percent(values[-1])}</td><td class="num">{delta:+.0%}</td></tr>'
        )
    figures = "".join(case_chart(str(entry["label"]), entry["points"]) for _, entry in ranked[:CHARTS_SHOWN])
    more = (
        f'<p class="muted">{len(ranked) - CHARTS_SHOWN} more cases are not drawn.</p>'
        if len(ranked) > CHARTS_SHOWN
        else ""
    )
    scored = sorted(score_series(reports).items(), key=lambda item: str(item[1]["label"]))
    score_figures = "".join(
        case_chart(str(entry["label"]), entry["points"], entry["range"][0], entry["range"][1], kind="history-score")
        for _, entry in scored[:CHARTS_SHOWN]
    )
    scores = (
        f'<section id="score-trends"><h2>Mean scores over sessions</h2><p class="muted">Band: the interval of the '
        f"mean score; large red/green points: the score's baseline verdict fail/pass.</p>{score_figures}</section>"
        if scored
        else ""
    )
    latest = html_report.sections(reports[-1], trace_url=trace_url, case_filter=False)
    body = (
        f'<section id="sessions"><h2>Sessions</h2><table><tr><th>#</th><th>Created</th><th>File</th><th>Passed</th><th>Cost</th></tr>{sessions}</table>'
        f"<h2>Spend per session</h2>{spend_chart(list(reports))}</section>"
        f'<section id="changed"><h2>Cases that changed most</h2><table><tr><th>Case</th><th>First</th><th>Last</th><th>Change</th></tr>'
        f"{''.join(changed_rows) or '<tr><td colspan=4>no case in two sessions</td></tr>'}</table></section>"
        f'<section id="trends"><h2>Pass fraction over sessions</h2><p class="muted">Band: the interval; '
        f"large red/green points: baseline verdict fail/pass.</p>{html_report.FILTER}{figures}{more}</section>"
        f"{scores}{state_strips(reports, {key: str(entry['label']) for key, entry in ranked})}"
        f"<h2>Newest session</h2>{latest}"
    )
    return html_report.page(
        title,
        f"{len(reports)} sessions, {len(cases)} cases",
        body,
        css="figure{display:inline-block;margin:4px 8px}figcaption{font-size:12px}",
    )
