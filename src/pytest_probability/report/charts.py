"""The HTML pages' pieces (:mod:`.html_report`, :mod:`.history`): text made safe for HTML, and the charts,
inline SVG drawn here (no charting library: rectangles and lines are enough, and need no script to show)."""

from __future__ import annotations

import html
from typing import TYPE_CHECKING, Any

from ..text import clip

if TYPE_CHECKING:
    from .report_rows import ReportRow
    from .report_types import ReportRecord


def escape(value: Any) -> str:
    """``value`` as HTML text: ``None`` empty, quotes escaped (attribute values too)."""
    return html.escape("" if value is None else str(value), quote=True)


def percent(value: float | None) -> str:
    """A fraction as a whole percent; ``–`` for none."""
    return "–" if value is None else f"{100.0 * value:.0f}%"


def money(value: float | None) -> str:
    """Dollars to four places; ``–`` for none or zero."""
    return "–" if not value else f"${value:.4f}"


# -- charts (inline SVG) ------------------------------------------------------

_LABEL_W, _BAR_W, _ROW_H = 260, 420, 18


def _svg(kind: str, height: int, body: str, title: str) -> str:
    width = _LABEL_W + _BAR_W + 80
    return (
        f'<svg class="chart" data-chart="{kind}" role="img" aria-label="{escape(title)}" '
        f'xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" viewBox="0 0 {width} {height}">'
        f"<title>{escape(title)}</title>{body}</svg>"
    )


#: Characters of a label the charts show.
CHART_LABEL = 42


def fraction_chart(rows: list[ReportRow]) -> str:
    """Pass fraction per case: a bar, and the interval as a line with end ticks."""
    colours = {"pass": "#2e7d32", "flaky": "#ef6c00", "fail": "#c62828"}
    height = 22 + _ROW_H * len(rows)
    parts = []
    for tick in (0, 0.25, 0.5, 0.75, 1.0):
        x = _LABEL_W + tick * _BAR_W
        parts.append(f'<line x1="{x:.1f}" y1="14" x2="{x:.1f}" y2="{height}" stroke="#eee"/>')
        parts.append(f'<text x="{x:.1f}" y="10" text-anchor="middle">{tick:.0%}</text>')
    for i, row in enumerate(rows):
        y = 16 + i * _ROW_H
        fraction = row.pass_fraction
        label = clip(row.label, CHART_LABEL)
        parts.append(
            f'<g data-case="{escape(row.label)}"><text x="{_LABEL_W - 6}" y="{y + 12}" text-anchor="end">{escape(label)}</text>'
        )
        if fraction is not None:
            colour = colours.get(str(row.status), "#6a1b9a")
            parts.append(
                f'<rect class="bar" x="{_LABEL_W}" y="{y + 3}" width="{fraction * _BAR_W:.1f}" height="{_ROW_H - 6}" '
                f'fill="{colour}" fill-opacity="0.55"><title>{escape(row.label)}: {escape(row.passes)}/{escape(row.total)}</title></rect>'
            )
            bounds = row.ci.bounds if row.ci is not None else None
            if bounds is not None:
                x1, x2, mid = _LABEL_W + bounds[0] * _BAR_W, _LABEL_W + bounds[1] * _BAR_W, y + _ROW_H / 2
                parts.append(
                    f'<g class="interval" stroke="#222"><line x1="{x1:.1f}" y1="{mid:.1f}" x2="{x2:.1f}" y2="{mid:.1f}"/>'
                    f'<line x1="{x1:.1f}" y1="{mid - 4:.1f}" x2="{x1:.1f}" y2="{mid + 4:.1f}"/>'
                    f'<line x1="{x2:.1f}" y1="{mid - 4:.1f}" x2="{x2:.1f}" y2="{mid + 4:.1f}"/></g>'
                )
            parts.append(
                f'<text x="{_LABEL_W + _BAR_W + 6}" y="{y + 12}">{escape(row.passes)}/{escape(row.total)}</text>'
            )
        else:
            parts.append(f'<text x="{_LABEL_W + 4}" y="{y + 12}" class="muted">no counted run</text>')
        parts.append("</g>")
    return _svg("pass-fraction", height + 4, "".join(parts), "Pass fraction per case with its interval")


def score_chart(rows: list[ReportRow], records: list[ReportRecord]) -> str:
    """Each case's scores of each name: every run's score as a dot on the score's range, the mean with its
    interval, and the bar (when gated)."""
    values: dict[tuple[str, str], list[float]] = {}
    for record in records:
        for score in record.scores:
            if score.value is not None:
                values.setdefault((record.case, score.name), []).append(float(score.value))
    lines = []
    for row in rows:
        for name, summary in row.scores.items():
            lines.append((row, name, summary, values.get((row.label, name), [])))
    if not lines:
        return ""
    everything = [v for *_, found in lines for v in found] + [0.0, 1.0]
    low, high = min(everything), max(everything)
    span = (high - low) or 1.0
    x = lambda v: _LABEL_W + (v - low) / span * _BAR_W  # noqa: E731
    height = 22 + _ROW_H * len(lines)
    parts = [
        f'<text x="{x(low):.1f}" y="10" text-anchor="middle">{low:g}</text>',
        f'<text x="{x(high):.1f}" y="10" text-anchor="middle">{high:g}</text>',
    ]
    for i, (row, name, summary, found) in enumerate(lines):
        y = 16 + i * _ROW_H
        mid = y + _ROW_H / 2
        label = clip(f"{row.label} {name}", CHART_LABEL)
        parts.append(
            f'<g data-case="{escape(row.label)}" data-score="{escape(name)}">'
            f'<text x="{_LABEL_W - 6}" y="{y + 12}" text-anchor="end">{escape(label)}</text>'
        )
        parts.append(f'<line x1="{x(low):.1f}" y1="{mid:.1f}" x2="{x(high):.1f}" y2="{mid:.1f}" stroke="#eee"/>')
        parts += [
            f'<circle class="run-score" cx="{x(v):.1f}" cy="{mid:.1f}" r="2.5" fill="#1565c0" fill-opacity="0.35"/>'
            for v in found
        ]
        bounds = summary.ci.bounds if summary.ci is not None else None
        if bounds is not None:
            parts.append(
                f'<line class="interval" x1="{x(bounds[0]):.1f}" y1="{mid:.1f}" x2="{x(bounds[1]):.1f}" '
                f'y2="{mid:.1f}" stroke="#222" stroke-width="2"/>'
            )
        mean = summary.mean
        if mean is not None:
            parts.append(f'<circle class="mean" cx="{x(mean):.1f}" cy="{mid:.1f}" r="4" fill="#222"/>')
        bar = summary.min_score
        if bar is not None:
            parts.append(
                f'<line class="bar" x1="{x(bar):.1f}" y1="{y + 2}" x2="{x(bar):.1f}" y2="{y + _ROW_H - 2}" '
                'stroke="#c62828" stroke-dasharray="2,2"/>'
            )
        parts.append("</g>")
    return _svg("scores", height + 4, "".join(parts), "Scores per case: each run's, the mean and its interval, the bar")


def cost_chart(rows: list[ReportRow]) -> str:
    """Spend per case, bars scaled to the dearest case."""
    top = max((row.cost or 0.0 for row in rows), default=0.0) or 1.0
    height = 8 + _ROW_H * len(rows)
    parts = []
    for i, row in enumerate(rows):
        y = 4 + i * _ROW_H
        cost = row.cost or 0.0
        parts.append(
            f'<g data-case="{escape(row.label)}"><text x="{_LABEL_W - 6}" y="{y + 12}" text-anchor="end">{escape(clip(row.label, CHART_LABEL))}</text>'
            f'<rect class="bar" x="{_LABEL_W}" y="{y + 3}" width="{cost / top * _BAR_W:.1f}" height="{_ROW_H - 6}" fill="#1565c0" fill-opacity="0.6"/>'
            f'<text x="{_LABEL_W + cost / top * _BAR_W + 6:.1f}" y="{y + 12}">{escape(money(cost))}</text></g>'
        )
    return _svg("cost", height + 4, "".join(parts), "Cost per case")


def difference_bar(low: float | None, high: float | None, difference: float | None, margin: float | None = None) -> str:
    """A difference in [-1, 1] with its interval, on a small axis with 0 (and −margin) marked."""
    width, height = 220, 20
    x = lambda v: 10 + (v + 1.0) / 2.0 * (width - 20)  # noqa: E731
    parts = [f'<line x1="{x(0):.1f}" y1="2" x2="{x(0):.1f}" y2="{height - 2}" stroke="#999"/>']
    if margin:
        parts.append(
            f'<line x1="{x(-margin):.1f}" y1="2" x2="{x(-margin):.1f}" y2="{height - 2}" stroke="#c62828" stroke-dasharray="2,2"/>'
        )
    if low is not None and high is not None:
        parts.append(
            f'<line class="interval" x1="{x(low):.1f}" y1="10" x2="{x(high):.1f}" y2="10" stroke="#222" stroke-width="2"/>'
        )
    if difference is not None:
        parts.append(f'<circle cx="{x(difference):.1f}" cy="10" r="3.5" fill="#1565c0"/>')
    return (
        f'<svg class="chart" data-chart="difference" xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}"><title>difference {escape(difference)} [{escape(low)}, {escape(high)}]</title>{"".join(parts)}</svg>'
    )
