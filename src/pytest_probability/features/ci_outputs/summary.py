"""The CI job's summary: one Markdown page (GitHub-flavoured) of the night, read off its report dict.

Pure: :func:`render` takes the ``--prob-json`` report (a session's or the
merge's, read by the one reader of reports). The headline (exit status, cases by status, gates, drops
against the baseline, cost, tokens and budget, state changes, quarantine),
then the rows that need attention, worst first, each with its interval and a
trace link (``prob_trace_url``). The page is cut to ``limit`` bytes (GitHub
refuses a step summary over 1 MiB), with a line saying how many rows were
left out. Every text from the report is escaped (CommonMark backslash
escapes, ``|`` in table cells), so no case label can break the table.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from ...report.report_types import Report
from .attention import ICONS, ORDER, Attention, as_report, counts

#: GitHub's limit of one step's summary (an upload over it is refused).
LIMIT = 1024 * 1024
_PUNCTUATION = re.compile(r"([\\`*_{}\[\]()#+\-.!|<>~&])")
_STATUS_WORDS = {0: "passed", 1: "failed", 2: "interrupted", 3: "internal error", 4: "usage error", 5: "no tests ran"}


def md(text: Any) -> str:
    """Text as Markdown shows it literally: punctuation backslash-escaped, line breaks as spaces."""
    return _PUNCTUATION.sub(r"\\\1", " ".join(str(text).split()))


def _money(value: Any) -> str:
    return f"${float(value):,.4f}" if isinstance(value, (int, float)) and not isinstance(value, bool) else "–"


def headline(report: Report, items: Sequence[Attention], left: Mapping[str, int], title: str) -> list[str]:
    status = report.exit_status if report.exit_status is not None else 0
    word = _STATUS_WORDS.get(status, "exit status")
    icon = "✅" if status == 0 else "❌"
    totals = report.totals
    rate = f" ({totals.pass_fraction:.0%})" if isinstance(totals.pass_fraction, float) else ""
    lines = [f"## {icon} {md(title)}: {word} (exit status {status})", ""]
    cases = totals.rows if totals.rows is not None else len(report.rows)
    facts = [f"**{cases} cases**", f"{totals.passes}/{totals.count} runs passed{rate}"]
    shown = ", ".join(f"{n} {md(s)}" for s, n in totals.statuses.items() if n)
    if shown:
        facts.append(shown)
    gates = report.gates
    if gates is not None and any((gates.passed, gates.failed, gates.undecided, gates.skipped)):
        facts.append(f"gates: {gates.passed} passed, {gates.failed} failed, {gates.undecided} undecided")
    baseline = report.baseline
    if baseline is not None:
        dropped = baseline.verdicts.get("fail", 0) + baseline.score_verdicts.get("fail", 0)
        failed = sum(
            1
            for c in report.baseline_comparisons
            for measured in c.measures
            if measured.margin is not None and measured.verdict == "fail"
        )
        verdicts = f"; {failed} benchmark verdict{'s' * (failed != 1)} failed" if failed else ""
        facts.append(f"{dropped} dropped against the baseline ({baseline.paired or 0} compared{verdicts})")
    facts.append(f"cost {_money(totals.cost)}")
    tokens = totals.tokens
    if tokens:
        facts.append(f"{tokens:,} tokens")
    budget = report.budget
    if budget is not None:
        facts.append(f"budget: {md(budget.reason or 'not reached')}")
    lines += [" · ".join(facts), ""]
    states = report.states
    if states is not None:
        moved = [f"{len(v)} {'newly ' + k if k != 'fixed' else 'fixed'}" for k, v in states.changes.items() if v]
        lines += [
            f"**Across nights** ({states.nights_read or 0} earlier nights): "
            + (", ".join(moved) if moved else "no case changed state")
            + "; "
            + ", ".join(f"{n} {md(s)}" for s, n in states.counts.items() if n),
            "",
        ]
    quarantine = report.quarantine
    if quarantine is not None:
        expired = quarantine.expired
        lines += [
            f"**Quarantine**: {quarantine.cases or 0} case(s) quarantined, {quarantine.failing or 0} "
            f"of them failing (not failing the session)"
            + (f"; {len(expired)} entr{'ies' if len(expired) != 1 else 'y'} ended and gate again" if expired else ""),
            "",
        ]
    errors, warnings = left.get("error", 0), left.get("warning", 0)
    if errors or warnings:
        lines += [
            f"Annotations: GitHub shows 10 of each type per step; {errors} error(s) and "
            f"{warnings} warning(s) more are in the table below.",
            "",
        ]
    return lines


def row_line(item: Attention) -> str:
    counted = f"{item.passes}/{item.total}" if item.passes is not None and item.total is not None else "–"
    trace = f"[trace]({item.trace_url.replace(')', '%29').replace(' ', '%20')})" if item.trace_url else ""
    cells = [
        ICONS[item.kind],
        md(item.kind),
        md(item.label),
        counted,
        md(item.interval),
        md(item.detail),
        trace,
    ]
    return "| " + " | ".join(cells) + " |"


def render(
    report: Report | Mapping[str, Any],
    *,
    title: str = "pytest-probability",
    items: Sequence[Attention] = (),
    left: Mapping[str, int] | None = None,
    limit: int = LIMIT,
) -> str:
    """The page, at most ``limit`` bytes (UTF-8); ``items``: :func:`.attention.attention`'s, ``left``: the
    annotations left out by type."""
    head = headline(as_report(report), items, left or {}, title)
    if not items:
        return "\n".join(head + ["Nothing needs attention.", ""])
    by_kind = counts(items)
    head += [
        f"### Needs attention ({len(items)})",
        "",
        ", ".join(f"{ICONS[k]} {n} {md(k)}" for k in ORDER if (n := by_kind[k])),
        "",
        "| | Why | Case | Passed | Interval | Detail | Trace |",
        "|---|---|---|---|---|---|---|",
    ]
    text = "\n".join(head) + "\n"
    size = len(text.encode("utf-8"))
    reserve = 200  # the closing line
    lines = []
    for index, item in enumerate(items):
        line = row_line(item) + "\n"
        cost = len(line.encode("utf-8"))
        if size + cost + reserve > limit:
            rest = len(items) - index
            lines.append(
                f"\n_{rest} more row(s) left out: GitHub refuses a step summary over "
                f"{limit // 1024} KiB; the JSON report has every row._\n"
            )
            break
        lines.append(line)
        size += cost
    return text + "".join(lines)
