"""What needs attention in a night, read off its report dict: failed and undecided gates, drops, errors, state changes.

Pure: a ``--prob-json`` report dict in (a session's, or the merge's), the
rows that need attention out, worst first, each with what the summary and the
annotations show (interval, bar, verdict, trace link, where the benchmark is
defined). Fields a report of another version lacks are read as absent.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

#: Kinds of attention, worst first (the summary's order and the annotations' priority).
FAILED_GATE, DROPPED, ERRORED, FAILED_RUNS, UNDECIDED_GATE, BROKEN, FAILING, FLAKY, QUARANTINED = (
    "failed gate",
    "dropped",
    "errors",
    "failed runs",
    "undecided gate",
    "newly broken",
    "newly failing",
    "newly flaky",
    "quarantined, failing",
)
ORDER = (FAILED_GATE, DROPPED, ERRORED, FAILED_RUNS, UNDECIDED_GATE, BROKEN, FAILING, FLAKY, QUARANTINED)
ICONS = {
    FAILED_GATE: "❌",
    DROPPED: "📉",
    ERRORED: "💥",
    FAILED_RUNS: "✖️",
    UNDECIDED_GATE: "❔",
    BROKEN: "🟥",
    FAILING: "🟧",
    FLAKY: "🟨",
    QUARANTINED: "🔒",
}


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


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def _whole(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def percent(value: float | None) -> str:
    return "–" if value is None else f"{value:.0%}" if value in (0.0, 1.0) else f"{value:.1%}"


def interval_text(low: float | None, high: float | None) -> str:
    return "" if low is None or high is None else f"[{percent(low)}, {percent(high)}]"


def traces(report: Mapping[str, Any], template: str | None) -> dict[str, str]:
    """Case key -> the trace link of its first failed or errored run (else its first run with a trace)."""
    if not template:
        return {}
    first: dict[str, str] = {}
    failed: dict[str, str] = {}
    for record in report.get("records") or ():
        if not isinstance(record, Mapping) or not isinstance(record.get("trace_id"), str):
            continue
        key = str(record.get("case_key") or "")
        link = template.replace("{trace_id}", record["trace_id"]).replace("{span_id}", str(record.get("span_id") or ""))
        first.setdefault(key, link)
        if record.get("outcome") in ("fail", "error"):
            failed.setdefault(key, link)
    return {**first, **failed}


def drops(report: Mapping[str, Any]) -> dict[str, Mapping[str, Any]]:
    """Case key (or label) -> its per-case entry of the baseline's comparisons whose verdict is a drop."""
    found: dict[str, Mapping[str, Any]] = {}
    baseline = report.get("baseline")
    for comparison in (baseline.get("comparisons") if isinstance(baseline, Mapping) else None) or ():
        if not isinstance(comparison, Mapping):
            continue
        for entry in comparison.get("inputs") or ():
            if isinstance(entry, Mapping) and entry.get("verdict") == "fail":
                found[str(entry.get("nodeid") or entry.get("input"))] = entry
    return found


def _location(row: Mapping[str, Any]) -> tuple[str, int]:
    source = row.get("source") if isinstance(row.get("source"), Mapping) else {}
    path = source.get("path") if isinstance(source.get("path"), str) else str(row.get("nodeid") or "").split("::")[0]
    return path, _whole(source.get("line")) or 1


def attention(report: Mapping[str, Any], trace_url: str | None = None) -> list[Attention]:
    """Every row that needs attention, worst first (a row may need it for several reasons: each is listed)."""
    links = traces(report, trace_url)
    dropped = drops(report)
    found: list[Attention] = []
    for row in report.get("rows") or ():
        if not isinstance(row, Mapping):
            continue
        label = str(row.get("label") or row.get("case") or "")
        key = str(row.get("nodeid") or label)
        path, line = _location(row)
        passes, total = _whole(row.get("passes")), _whole(row.get("total"))
        ci = row.get("ci") if isinstance(row.get("ci"), Mapping) else {}
        low, high = _number(ci.get("low")), _number(ci.get("high"))
        quarantine = row.get("quarantine") if isinstance(row.get("quarantine"), Mapping) else None
        link = links.get(key)

        def add(
            kind: str,
            detail: str,
            rank: float,
            p: int | None = passes,
            n: int | None = total,
            lo: float | None = low,
            hi: float | None = high,
        ) -> None:
            found.append(Attention(kind, label, key, p, n, lo, hi, detail, link, path, line, rank))  # noqa: B023 - called in this iteration only

        gate = row.get("gate") if isinstance(row.get("gate"), Mapping) else None
        verdict = row.get("verdict")
        if gate is not None and verdict in ("fail", "undecided"):
            bar = (
                f">= {gate.get('min_passes')} passes"
                if gate.get("rule") == "count"
                else f">= {percent(_number(gate.get('min_rate')))}"
            )
            g_low, g_high = _number(gate.get("low")), _number(gate.get("high"))
            if quarantine is not None:
                add(
                    QUARANTINED,
                    f"gate {bar}: {str(verdict).upper()}; quarantined by {quarantine.get('owner')} until "
                    f"{quarantine.get('until')}",
                    g_high or 0.0,
                    _whole(gate.get("passes")),
                    _whole(gate.get("total")),
                    g_low,
                    g_high,
                )
            else:
                add(
                    FAILED_GATE if verdict == "fail" else UNDECIDED_GATE,
                    f"gate {bar}: {str(verdict).upper()}",
                    g_high if g_high is not None else 0.0,
                    _whole(gate.get("passes")),
                    _whole(gate.get("total")),
                    g_low,
                    g_high,
                )
        elif quarantine is not None and quarantine.get("failing"):
            add(QUARANTINED, f"quarantined by {quarantine.get('owner')} until {quarantine.get('until')}", high or 0.0)
        entry = dropped.get(key) or dropped.get(label)
        if entry is not None and quarantine is None:
            diff = _number(entry.get("difference"))
            eci = entry.get("ci") if isinstance(entry.get("ci"), Mapping) else {}
            base = entry.get("baseline") if isinstance(entry.get("baseline"), Mapping) else {}
            p_adj = _number(entry.get("p_adjusted"))
            detail = (
                f"{_points(diff)} pp vs baseline {base.get('passes')}/{base.get('total')}"
                + (f" [{_points(_number(eci.get('low')))}, {_points(_number(eci.get('high')))}]" if eci else "")
                + (f", adjusted p {p_adj:.2g}" if p_adj is not None else "")
            )
            add(DROPPED, detail, diff if diff is not None else 0.0)
        errors = _whole(row.get("errors")) or 0
        if errors and quarantine is None:
            add(ERRORED, f"{errors} errored run{'s' * (errors != 1)}", -errors)
        fails = _whole(row.get("fails")) or 0
        if fails and gate is None and quarantine is None:  # an ungated case's failed runs fail the session
            add(FAILED_RUNS, f"{fails} failed run{'s' * (fails != 1)}, no gate", -fails)
        history = row.get("history") if isinstance(row.get("history"), Mapping) else None
        if history is not None and history.get("changed"):
            kind = {"broken": BROKEN, "failing": FAILING, "flaky": FLAKY}.get(str(history.get("state")))
            if kind is not None:
                flake = history.get("flake_rate") if isinstance(history.get("flake_rate"), Mapping) else {}
                rate = _number(flake.get("fraction"))
                add(
                    kind,
                    f"{history.get('state')} since {history.get('since')}; flake rate {percent(rate)} "
                    f"{interval_text(_number(flake.get('low')), _number(flake.get('high')))} over "
                    f"{history.get('nights')} nights",
                    -(rate or 0.0),
                )
    found.sort(key=lambda a: (ORDER.index(a.kind), a.rank, a.label))
    return found


def _points(value: float | None) -> str:
    return "–" if value is None else f"{value * 100:+.1f}"


def counts(items: Sequence[Attention]) -> dict[str, int]:
    out = {kind: 0 for kind in ORDER}
    for item in items:
        out[item.kind] += 1
    return out
