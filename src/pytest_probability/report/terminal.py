"""The terminal table: one line per row, then totals, cost and tokens.

:func:`lines` is pure (rows and the features' facets in, ``(text, markup)`` lines out,
one at a time) so the layout is unit-tested without a terminal; :func:`write` hands the
lines to pytest's terminal reporter, which decides whether colours are shown.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from typing import Any

from ..model.outputs import Line
from ..model.rows import Row, Summary
from ..protocols import Facet
from ..text import label_text, printable_line
from ..vocabulary import STATUS_ERROR, STATUS_ERRORED, STATUS_FAIL, STATUS_FLAKY, STATUS_SKIP

_MARKUP = {
    STATUS_FLAKY: {"yellow": True},
    STATUS_ERRORED: {"yellow": True},
    STATUS_FAIL: {"red": True},
    STATUS_ERROR: {"red": True},
    STATUS_SKIP: {"yellow": True},
}


def status_text(row: Row) -> str:
    counts = row.counts
    errored = f"({counts.errors} errored)" if counts.errors else ""
    if row.status == STATUS_FLAKY:
        text = f"FLAKY {errored}".strip()
    elif row.status == STATUS_ERRORED:
        text = f"{counts.errors} ERRORED"
    elif row.status == STATUS_FAIL:
        text = f"FAIL {errored}".strip()
    elif row.status == STATUS_ERROR:
        text = "ERROR"
    elif row.status == STATUS_SKIP:
        text = f"{counts.skipped} SKIPPED" if counts.skipped or not counts.stopped else "NOT RUN"
    else:
        text = ""
    if counts.skipped and row.status != STATUS_SKIP:
        text = f"{text}  ({counts.skipped} skipped)".strip()
    return text


def money(amount: float) -> str:
    return f"${amount:,.4f}"


def percent(part: int, whole: int) -> str:
    """Whole percent; 0% and 100% only when exact."""
    if not whole:
        return "-"
    value = int(100 * part / whole + 0.5)  # half up: 1/8 -> 13%, 7/8 -> 88%
    if part and value == 0:
        value = 1
    if part != whole and value == 100:
        value = 99
    return f"{value}%"


def fraction(row: Row) -> str:
    return f"{row.counts.passes}/{row.counts.total}"


def render(summary: Summary, facets: Sequence[Facet] = ()) -> list[Line]:
    """The table's lines as a list (see :func:`lines`)."""
    return list(lines(summary, facets))


def lines(summary: Summary, facets: Sequence[Facet] = ()) -> Iterator[Line]:
    """The table's lines, one row at a time; the facets' cells after the fraction.

    Two passes over the rows, the first for the column widths and the second for
    the lines, so that only one row's cells exist at a time: a table of 50,000 rows
    adds no memory of its own to the session's peak (holding every row's cells
    and lines cost about 0.5 KB per row).
    """
    if not summary.rows:
        yield ("  no benchmark runs were executed", {})
        return
    show_cost = summary.has_cost

    def cells_of(row: Row) -> list[str]:
        cells = [label_text(row.label), fraction(row)]
        for facet in facets:
            cells.extend(facet.cells(row))
        if show_cost:
            cells.append(money(row.cost))
        return cells

    widths = [0] * len(cells_of(summary.rows[0]))
    for row in summary.rows:
        for index, cell in enumerate(cells_of(row)):
            if len(cell) > widths[index]:
                widths[index] = len(cell)
    shown = [index for index in range(2, len(widths)) if widths[index]]  # a column empty in every row is left out
    for row in summary.rows:
        cells = cells_of(row)
        parts = [cells[0].ljust(widths[0]), cells[1].rjust(widths[1])]
        parts += [cells[index].rjust(widths[index]) for index in shown]
        status = status_text(row)
        if status:
            parts.append(status)
        yield ("  " + "  ".join(parts).rstrip(), _MARKUP.get(row.status, {}))

    counts = summary.counts
    yield ("", {})
    overall = f"  Overall: {counts.passes}/{counts.total} passed ({percent(counts.passes, counts.total)})"
    if counts.skipped:
        overall += f", {counts.skipped} skipped"
    if counts.stopped:
        overall += f", {counts.stopped} not run"
    yield (overall, {"bold": True})
    if show_cost:
        yield (f"  Cost:    {money(summary.cost)}", {})
    yield from _token_lines(summary.usage)
    if summary.judge_usage:  # the evaluation's spend, apart from the system's
        yield (f"  Judge:   {money(summary.judge_cost)}", {})
        yield from _token_lines(summary.judge_usage, "  Judge tokens:  ")


def _token_lines(usage: dict[str, Any], title: str = "  Tokens:  ") -> list[Line]:
    models = [u for u in usage.values() if u.input_tokens or u.output_tokens or u.cached_input_tokens or u.cost]
    if not models:
        return []
    show_cached = any(u.cached_input_tokens for u in models)
    rows = []
    for u in models:
        tokens = f"{u.input_tokens:,} in / {u.output_tokens:,} out"
        if show_cached and u.cached_input_tokens:
            tokens += f" / {u.cached_input_tokens:,} cached"
        rows.append((label_text(u.model), tokens, money(u.cost) if u.cost else ""))
    name_width = max(len(r[0]) for r in rows)
    token_width = max(len(r[1]) for r in rows)
    lines: list[Line] = []
    for index, (model, tokens, cost) in enumerate(rows):
        lead = title if index == 0 else " " * len(title)
        lines.append((f"{lead}{model.ljust(name_width)}  {tokens.ljust(token_width)}  {cost}".rstrip(), {}))
    return lines


def write(terminalreporter: Any, summary: Summary, facets: Sequence[Facet] = (), notes: Iterable[str] = ()) -> None:
    """The probability section: the table, each facet's lines, then the notes. Every line carries text the
    plugin was given (a case label, a model name, a reason), so every line is a :func:`printable_line`: a label
    such as ``::warning::x`` at the start of a row is no workflow command to the CI runner reading the log."""
    terminalreporter.write_sep("=", "probability")
    for text, markup in lines(summary, facets):
        terminalreporter.write_line(printable_line(text), **markup)
    for facet in facets:
        for text, markup in facet.lines():
            terminalreporter.write_line(printable_line(text), **markup)
    for note in notes:
        terminalreporter.write_line(printable_line(f"  {note}"), yellow=True)
