"""The CI job's summary: one Markdown page (GitHub-flavoured) of the night, read off its report dict.

Pure: :func:`render` takes the ``--prob-json`` report dict (a session's or
the merge's). The headline (exit status, cases by status, gates, drops
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

from .attention import ICONS, ORDER, Attention, counts, interval_text

#: GitHub's limit of one step's summary (an upload over it is refused).
LIMIT = 1024 * 1024
_PUNCTUATION = re.compile(r"([\\`*_{}\[\]()#+\-.!|<>~&])")
_STATUS_WORDS = {0: "passed", 1: "failed", 2: "interrupted", 3: "internal error", 4: "usage error", 5: "no tests ran"}


def md(text: Any) -> str:
    """Text as Markdown shows it literally: punctuation backslash-escaped, line breaks as spaces."""
    return _PUNCTUATION.sub(r"\\\1", " ".join(str(text).split()))


def _money(value: Any) -> str:
    return f"${float(value):,.4f}" if isinstance(value, (int, float)) and not isinstance(value, bool) else "–"


def _tokens(totals: Mapping[str, Any]) -> int:
    usage = totals.get("usage") if isinstance(totals.get("usage"), Mapping) else {}
    return sum(
        int(u.get("input_tokens") or 0) + int(u.get("output_tokens") or 0)
        for u in usage.values()
        if isinstance(u, Mapping)
    )


def headline(report: Mapping[str, Any], items: Sequence[Attention], left: Mapping[str, int], title: str) -> list[str]:
    status = report.get("exit_status")
    status = status if isinstance(status, int) else 0
    word = _STATUS_WORDS.get(status, "exit status")
    icon = "✅" if status == 0 else "❌"
    totals = report.get("totals") if isinstance(report.get("totals"), Mapping) else {}
    passes, count = totals.get("passes"), totals.get("count")
    fraction = totals.get("pass_fraction")
    rate = f" ({fraction:.0%})" if isinstance(fraction, float) else ""
    statuses = totals.get("statuses") if isinstance(totals.get("statuses"), Mapping) else {}
    lines = [f"## {icon} {md(title)}: {word} (exit status {status})", ""]
    facts = [f"**{totals.get('rows', len(report.get('rows') or ()))} cases**", f"{passes}/{count} runs passed{rate}"]
    shown = ", ".join(f"{n} {md(s)}" for s, n in statuses.items() if n)
    if shown:
        facts.append(shown)
    gates = report.get("gates") if isinstance(report.get("gates"), Mapping) else {}
    if any(gates.get(k) for k in ("passed", "failed", "undecided", "skipped")):
        facts.append(
            f"gates: {gates.get('passed', 0)} passed, {gates.get('failed', 0)} failed, "
            f"{gates.get('undecided', 0)} undecided"
        )
    baseline = report.get("baseline") if isinstance(report.get("baseline"), Mapping) else None
    if baseline is not None:
        verdicts = baseline.get("verdicts") if isinstance(baseline.get("verdicts"), Mapping) else {}
        facts.append(f"{verdicts.get('fail', 0)} dropped against the baseline ({baseline.get('paired', 0)} compared)")
    facts.append(f"cost {_money(totals.get('cost'))}")
    tokens = _tokens(totals)
    if tokens:
        facts.append(f"{tokens:,} tokens")
    budget = report.get("budget") if isinstance(report.get("budget"), Mapping) else None
    if budget is not None:
        facts.append(f"budget: {md(budget.get('reason') or 'not reached')}")
    lines += [" · ".join(facts), ""]
    states = report.get("states") if isinstance(report.get("states"), Mapping) else None
    if states is not None:
        changes = states.get("changes") if isinstance(states.get("changes"), Mapping) else {}
        moved = [
            f"{len(v)} {'newly ' + k if k != 'fixed' else 'fixed'}"
            for k, v in changes.items()
            if isinstance(v, list) and v
        ]
        counted = states.get("counts") if isinstance(states.get("counts"), Mapping) else {}
        lines += [
            f"**Across nights** ({states.get('nights_read', 0)} earlier nights): "
            + (", ".join(moved) if moved else "no case changed state")
            + "; "
            + ", ".join(f"{n} {md(s)}" for s, n in counted.items() if n),
            "",
        ]
    quarantine = report.get("quarantine") if isinstance(report.get("quarantine"), Mapping) else None
    if quarantine is not None:
        expired = quarantine.get("expired") or []
        lines += [
            f"**Quarantine**: {quarantine.get('cases', 0)} case(s) quarantined, {quarantine.get('failing', 0)} "
            f"of them failing (not failing the session)"
            + (f"; {len(expired)} entr{'ies' if len(expired) != 1 else 'y'} ended and gate again" if expired else ""),
            "",
        ]
    if left.get("error") or left.get("warning"):
        lines += [
            f"Annotations: GitHub shows 10 of each type per step; {left.get('error', 0)} error(s) and "
            f"{left.get('warning', 0)} warning(s) more are in the table below.",
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
        md(interval_text(item.low, item.high)),
        md(item.detail),
        trace,
    ]
    return "| " + " | ".join(cells) + " |"


def render(
    report: Mapping[str, Any],
    *,
    title: str = "pytest-probability",
    items: Sequence[Attention] = (),
    left: Mapping[str, int] | None = None,
    limit: int = LIMIT,
) -> str:
    """The page, at most ``limit`` bytes (UTF-8); ``items``: :func:`.attention.attention`'s, ``left``: the
    annotations left out by type."""
    head = headline(report, items, left or {}, title)
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
