"""The history report: several sessions' JSON reports as one HTML page.

``python -m pytest_probability report DIR_OR_FILES -o report.html`` reads
``--prob-json`` reports (a folder: every ``*.json`` in it, e.g. the
``--prob-history`` folder) and shows, over the sessions in time order: per
case the pass fraction with its interval band and the baseline verdicts
marked, the spend per session, the cases that changed most, and the newest
session in full (:func:`.html_report.render`'s sections). Pure apart from
:func:`load`.

A report is checked once, when it is read (:func:`problem`): every field the
page reads, its newest session's sections included, must have the type the
JSON report writes it with, so rendering never meets another. A file found in
a folder that is not a report (another tool's JSON, a damaged report) is
skipped with a note; a file named on the command line is refused.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..maths.states import STATES, Night, Rule, stories
from ..maths.stats import METHODS
from ..text import printable
from . import html_report
from .html_report import escape, money, percent
from .report_shape import problem

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

    reports: list[dict[str, Any]] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)


def load(sources: Iterable[Source]) -> Loaded:
    """The reports, oldest first (by ``created``; file order for equal or missing times). A file that is
    not a report is a :class:`HistoryError` when it was named, a note in ``skipped`` when in a folder."""
    loaded, reports = Loaded(), []
    for index, source in enumerate(sources):
        data, why = _read(source.path)
        if why is not None:
            if not source.in_folder:
                raise HistoryError(why)
            loaded.skipped.append(f"skipped {why}")
            continue
        data.setdefault("_source", source.path.name)
        # created_utc sorts across time zones; a report without it has only created (local time)
        reports.append((str(data.get("created_utc") or data.get("created") or ""), index, data))
    loaded.reports = [data for _, _, data in sorted(reports, key=lambda item: (item[0], item[1]))]
    return loaded


def _read(path: Path) -> tuple[dict[str, Any], None] | tuple[None, str]:
    """The report in ``path``, or why it is none (the path first)."""
    where = printable(str(path))
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError) as exc:  # ValueError: bad JSON or UTF-8, an integer of 4,300+ digits
        return None, f"{where}: not a readable JSON report ({printable(str(exc))})"
    if not isinstance(data, dict) or data.get("rows") is None:
        return None, f"{where}: not a pytest-probability JSON report (no 'rows')"
    why = problem(data)
    if why is not None:
        return None, f"{where}: not a pytest-probability JSON report ({why})"
    return data, None


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


def day(report: Mapping[str, Any]) -> str:
    """The day (UTC, ``YYYY-MM-DD``) of a report's session; ``created`` (local time) for 0.3.0's."""
    text = str(report.get("created_utc") or report.get("created") or "")
    return text[:10]


def night_of(row: Mapping[str, Any], when: str) -> Night | None:
    """A report row's night: its passes of its counted runs, and its stored state; None without counts."""
    passes, total = row.get("passes"), row.get("total", row.get("count"))
    if (
        not isinstance(passes, int)
        or not isinstance(total, int)
        or isinstance(passes, bool)
        or isinstance(total, bool)
        or total < 0
        or passes < 0
    ):
        return None
    stored = row.get("history") if isinstance(row.get("history"), Mapping) else {}
    text = {k: stored.get(k) if isinstance(stored.get(k), str) else None for k in ("state", "since", "first_flaky")}
    return Night(when, min(passes, total), total, text["state"], text["since"], text["first_flaky"])


def from_reports(reports: Sequence[Mapping[str, Any]]) -> Nights:
    """The nights of reports already read (oldest first)."""
    nights = Nights()
    for report in reports:
        when = day(report)
        cases: dict[str, Night] = {}
        for row in report.get("rows") or ():
            if not isinstance(row, Mapping):
                continue
            night = night_of(row, when)
            if night is None:
                continue
            # a 0.3.0 row has no node id: its label is its key
            key = row.get("nodeid") if isinstance(row.get("nodeid"), str) else row.get("label") or row.get("case")
            if isinstance(key, str) and key:
                cases.setdefault(key, night)
        nights.days.append(when)
        nights.cases.append(cases)
    return nights


def _key(row: Mapping[str, Any]) -> str:
    return str(row.get("nodeid") or row.get("case") or row.get("label"))


def _baseline_verdicts(report: Mapping[str, Any]) -> dict[str, str]:
    """Case key -> its per-case baseline verdict. The baseline's comparisons are under ``baseline``; those in
    the top-level ``comparisons`` with ``kind`` ``baseline`` are read too."""
    verdicts = {}
    baseline = report.get("baseline")
    listed = (baseline.get("comparisons") if isinstance(baseline, Mapping) else None) or [
        c for c in report.get("comparisons") or () if isinstance(c, Mapping) and c.get("kind") == "baseline"
    ]
    for comparison in listed:
        if not isinstance(comparison, Mapping):
            continue
        for entry in comparison.get("inputs") or ():
            key = entry.get("nodeid") or entry.get("input")
            if key and entry.get("verdict"):
                verdicts[str(key)] = str(entry["verdict"])
    return verdicts


def series(reports: list[Mapping[str, Any]]) -> dict[str, dict[str, Any]]:
    """Per case key: its label and one point per session (None where the case was not run)."""
    cases: dict[str, dict[str, Any]] = {}
    for index, report in enumerate(reports):
        verdicts = _baseline_verdicts(report)
        for row in report.get("rows") or ():
            key = _key(row)
            entry = cases.setdefault(
                key, {"label": row.get("label") or row.get("case") or key, "points": [None] * len(reports)}
            )
            fraction = row.get("pass_fraction")
            if fraction is None and row.get("pass_rate") is not None:  # a report with pass_rate only: percent
                fraction = row["pass_rate"] / 100.0
            ci = row.get("ci") or {}
            entry["points"][index] = {
                "fraction": fraction,
                "low": ci.get("low"),
                "high": ci.get("high"),
                "status": row.get("status"),
                "verdict": verdicts.get(key) or verdicts.get(str(row.get("label"))),
                "cost": row.get("cost"),
            }
    return cases


def change(points: list[dict[str, Any] | None]) -> float | None:
    """Last pass fraction minus the first, over the sessions that counted the case."""
    values = [p["fraction"] for p in points if p is not None and p["fraction"] is not None]
    return values[-1] - values[0] if len(values) >= 2 else None


def case_chart(label: str, points: list[dict[str, Any] | None]) -> str:
    """Pass fraction over sessions: the interval as a band, the fraction as a line, baseline verdicts marked."""
    width, height, pad = 320, 90, 8
    n = len(points)
    x = lambda i: pad + (i * (width - 2 * pad) / (n - 1) if n > 1 else (width - 2 * pad) / 2)  # noqa: E731
    y = lambda v: pad + (1.0 - v) * (height - 2 * pad)  # noqa: E731
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
    for i, p in present:
        verdict = p.get("verdict")
        colour = {"fail": "#c62828", "pass": "#2e7d32"}.get(str(verdict), "#1565c0")
        size = 4 if verdict else 2.5
        parts.append(
            f'<circle class="point" data-verdict="{escape(verdict or "")}" cx="{x(i):.1f}" cy="{y(p["fraction"]):.1f}" r="{size}" fill="{colour}">'
            f"<title>session {i + 1}: {percent(p['fraction'])}{' · baseline ' + escape(verdict) if verdict else ''}</title></circle>"
        )
    return (
        f'<figure data-case="{escape(label)}"><svg class="chart" data-chart="history" xmlns="http://www.w3.org/2000/svg" '
        f'width="{width}" height="{height}" viewBox="0 0 {width} {height}"><title>{escape(label)}</title>{"".join(parts)}</svg>'
        f"<figcaption>{escape(label)}</figcaption></figure>"
    )


def spend_chart(reports: list[Mapping[str, Any]]) -> str:
    costs = [float((r.get("totals") or {}).get("cost") or 0.0) for r in reports]
    top = max(costs, default=0.0) or 1.0
    bar, height = 28, 120
    width = 20 + bar * len(costs)
    parts = []
    for i, cost in enumerate(costs):
        h = cost / top * (height - 30)
        parts.append(
            f'<rect class="bar" x="{10 + i * bar + 3}" y="{height - 15 - h:.1f}" width="{bar - 6}" height="{h:.1f}" fill="#1565c0" fill-opacity="0.6">'
            f"<title>session {i + 1} ({escape(reports[i].get('created', ''))}): {money(cost)}</title></rect>"
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


def rule_of(reports: Sequence[Mapping[str, Any]]) -> Rule:
    """The rule the newest report decided its states with (its ``states.rule``), else the defaults."""
    for report in reversed(reports):
        states = report.get("states")
        given = states.get("rule") if isinstance(states, Mapping) else None
        if isinstance(given, Mapping):
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


def state_strips(reports: Sequence[Mapping[str, Any]], labels: Mapping[str, str]) -> str:
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


def render(
    reports: list[Mapping[str, Any]], *, trace_url: str | None = None, title: str = "pytest-probability history"
) -> str:
    if not reports:
        raise HistoryError("no reports to show")
    cases = series(list(reports))
    ranked = sorted(cases.items(), key=lambda item: (-(abs(change(item[1]["points"]) or 0.0)), str(item[1]["label"])))
    sessions = "".join(
        f'<tr><td class="num">{i + 1}</td><td>{escape(r.get("created", ""))}</td><td>{escape(r.get("_source", ""))}</td>'
        f'<td class="num">{escape((r.get("totals") or {}).get("passes", "–"))}/{escape((r.get("totals") or {}).get("count", "–"))}</td>'
        f'<td class="num">{money((r.get("totals") or {}).get("cost"))}</td></tr>'
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
    latest = html_report.sections(reports[-1], trace_url=trace_url, case_filter=False)
    body = (
        f'<section id="sessions"><h2>Sessions</h2><table><tr><th>#</th><th>Created</th><th>File</th><th>Passed</th><th>Cost</th></tr>{sessions}</table>'
        f"<h2>Spend per session</h2>{spend_chart(list(reports))}</section>"
        f'<section id="changed"><h2>Cases that changed most</h2><table><tr><th>Case</th><th>First</th><th>Last</th><th>Change</th></tr>'
        f"{''.join(changed_rows) or '<tr><td colspan=4>no case in two sessions</td></tr>'}</table></section>"
        f'<section id="trends"><h2>Pass fraction over sessions</h2><p class="muted">Band: the interval; '
        f"large red/green points: baseline verdict fail/pass.</p>{html_report.FILTER}{figures}{more}</section>"
        f"{state_strips(reports, {key: str(entry['label']) for key, entry in ranked})}"
        f"<h2>Newest session</h2>{latest}"
    )
    return html_report.page(
        title,
        f"{len(reports)} sessions, {len(cases)} cases",
        body,
        css="figure{display:inline-block;margin:4px 8px}figcaption{font-size:12px}",
    )
