"""``python -m pytest_probability diff BASE.json NEW.json``: two reports compared as ``--prob-baseline`` compares a session.

BASE is read by the baseline reader (:func:`.baseline.load`), NEW's rows
become the session's rows (counts, cost, the case's parameters, its marks
when the report lists its ``cases``), and the comparisons are the session's
(:class:`.comparing.CompareSession`, with NEW's ``stats_config``): Fisher's
exact test per case, the adjustment over the cases, the per-benchmark test
and interval. So ``diff``'s ``baseline`` object is the JSON report's
``baseline`` of a session run with ``--prob-baseline BASE.json`` that gave
NEW's counts. Beside it: the new and removed cases, and the cost per run.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from ...config.reported import stats_from_dict
from ...config.settings import StatsConfig
from ...model.case import CaseRef
from ...model.rows import NO_USAGE, Counts, Row
from ...record.shape import check_case, finite_number, shown
from ...text import printable_line
from ...vocabulary import FAILED
from .baseline import BaselineError, load, read_report, row_counts, whole_count
from .comparing import CompareSession
from .comparisons import Comparisons
from .settings import CompareConfig


def rows_of(report: Mapping[str, Any], source: str = "NEW") -> list[Row]:
    """A report's rows as the session's rows: enough for the comparisons (counts, cost, parameters, marks).
    Read as strictly as a baseline's (:func:`.baseline.load`): a row, a count, a case or a parameter that is not
    a report's is a :class:`BaselineError` naming ``source`` (the file) and the field, never a traceback and
    never a row left out (which would report its case as removed)."""
    cases = {}
    for i, data in enumerate(report.get("cases") or ()):
        try:
            check_case(data, f"cases[{i}]")
        except ValueError as exc:
            raise BaselineError(f"{source}: {exc}") from None
        cases[data["key"]] = data
    rows = []
    for order, data in enumerate(report["rows"]):
        if not isinstance(data, Mapping) or not isinstance(data.get("case"), str):
            raise BaselineError(f"{source}: rows[{order}] is not a row with a 'case' label (got {shown(data)})")
        passes, _ = row_counts(data, source)
        fails, errors, skipped, runs = (_count(data, name, source) for name in ("fails", "errors", "skipped", "runs"))
        key = str(data.get("nodeid") or data["case"])
        known = cases.get(key)
        if known is not None:
            case = CaseRef.from_dict(known)
        else:
            params = data.get("params") if data.get("params") is not None else {}
            if not isinstance(params, Mapping) or not all(type(v) in (str, int, float, bool) for v in params.values()):
                raise BaselineError(f"{source}: row {data['case']!r} has no valid 'params' (got {shown(params)})")
            case = CaseRef(
                key,
                str(data.get("benchmark") or key),
                str(data.get("case_id") or ""),
                label=str(data.get("label") or data["case"]),
                order=order,
                runs=runs,
                params=tuple((str(k), str(v)) for k, v in params.items()),
            )
        cost = data.get("cost")
        if cost is not None and not finite_number(cost):
            raise BaselineError(f"{source}: row {data['case']!r} has no valid 'cost' (got {shown(cost)})")
        rows.append(
            Row(
                case,
                (),
                Counts(passes, fails, errors, skipped),
                str(data.get("status") or ""),
                float(cost or 0),
                NO_USAGE,
            )
        )
    return rows


def _count(row: Mapping[str, Any], key: str, source: str) -> int:
    """A row's whole number ``key`` (0 when absent), as a baseline's counts are read."""
    return whole_count(row, key, source) if row.get(key) is not None else 0


def compare_reports(base: Path, new: Path, margin: float | None = None, adjust: str = "holm") -> dict[str, Any]:
    """The diff of two reports as a dict (``--format=json``); ValueError names a report that cannot be read,
    and the field (``error: diff: NEW.json: row 'x' has no valid 'passes' (got 1e+400)``)."""
    given = str(base)
    base = base if base.is_absolute() else Path.cwd() / base  # as --prob-baseline names what it read
    try:
        baseline = load([base], "diff")
        report = read_report(new, "diff")
        rows = rows_of(report, f"diff: {new}")
    except BaselineError as exc:
        raise ValueError(str(exc)) from None
    try:
        stats = stats_from_dict(report["stats_config"]) if report.get("stats_config") is not None else StatsConfig()
    except ValueError as exc:
        raise ValueError(f"diff: {new}: {exc}") from None
    config = CompareConfig(baselines=(given,), margin=margin or 0.0, margin_given=margin is not None, adjust=adjust)
    result = CompareSession(config, baseline, stats).compare(rows)
    return describe(result, rows, baseline, base, new)


def describe(result: Comparisons, rows: Sequence[Row], baseline: Any, base: Path, new: Path) -> dict[str, Any]:
    cases = []
    by_key = {row.case.key: row for row in rows}
    for key, pair in result.cases.items():
        row = by_key[key]
        found = baseline.find(key, row.label)
        cases.append(
            {
                "case": pair.label,
                "nodeid": key,
                "base": {
                    "passes": pair.x2,
                    "total": pair.n2,
                    "cost_per_run": found.cost / found.total if found is not None and found.total else None,
                },
                "new": {"passes": pair.x1, "total": pair.n1, "cost_per_run": row.cost / pair.n1 if pair.n1 else None},
                "difference": pair.difference,
                "ci": pair.ci.to_dict() if pair.ci is not None else None,
                "p_adjusted": pair.p_adjusted,
                "verdict": pair.verdict,
            }
        )
    base_runs = sum(c["base"]["total"] for c in cases)
    new_runs = sum(c["new"]["total"] for c in cases)
    base_cost = sum(p.cost2 for p in result.cases.values())
    new_cost = sum(p.cost1 for p in result.cases.values())
    dropped = [c["case"] for c in cases if c["verdict"] == FAILED]
    benchmarks = [c for c in result.comparisons if c.kind == "baseline"]
    return {
        "base": str(base),
        "new": str(new),
        "baseline": result.baseline_dict(),
        "cases": cases,
        "new_cases": sorted(result.new),
        "removed": sorted(result.removed),
        "changed": sorted(result.changed),
        "cost_per_run": {
            "base": base_cost / base_runs if base_runs else None,
            "new": new_cost / new_runs if new_runs else None,
        },
        "dropped": dropped,
        "benchmarks_failed": [c.function for c in benchmarks if c.verdict == FAILED],
    }


def _pp(value: float | None) -> str:
    return "–" if value is None else f"{value * 100:+.1f}"


def _ci(ci: Mapping[str, Any] | None) -> str:
    return "" if not ci else f"[{_pp(ci.get('low'))}, {_pp(ci.get('high'))}]"


def _money(value: float | None) -> str:
    return "–" if value is None else f"${value:,.4f}"


def _md(text: Any) -> str:
    return (
        str(text)
        .replace("\\", "\\\\")
        .replace("|", "\\|")
        .replace("`", "\\`")
        .replace("*", "\\*")
        .replace("_", "\\_")
        .replace("[", "\\[")
        .replace("]", "\\]")
        .replace("<", "&lt;")
    )


def markdown(diff: Mapping[str, Any]) -> str:
    """The pull request's comment: the benchmarks, the cases that moved (drops first), new and removed, cost."""
    baseline = diff["baseline"] or {}
    lines = ["<!-- pytest-probability diff -->", "## pytest-probability: this change against the base", ""]
    dropped = diff["dropped"]
    lines.append(
        f"**{len(dropped)} case(s) dropped** (Fisher's exact test, {baseline.get('adjustment')} adjustment "
        f"over {len(diff['cases'])} compared cases); cost per run {_money(diff['cost_per_run']['base'])} → "
        f"{_money(diff['cost_per_run']['new'])}"
    )
    lines += ["", "| Benchmark | Cases | Difference (pp) | Interval | Verdict |", "|---|---|---|---|---|"]
    for c in baseline.get("comparisons") or ():
        lines.append(
            f"| {_md(c.get('function'))} | {c.get('pairs')} | {_pp(c.get('difference'))} | {_ci(c.get('ci'))} | "
            f"{(c.get('verdict') or 'report only').upper() if c.get('verdict') else 'report only'} |"
        )
    moved = sorted(
        diff["cases"], key=lambda c: (c["verdict"] != FAILED, c["difference"] if c["difference"] is not None else 0.0)
    )
    lines += [
        "",
        "| Case | Base | New | Difference (pp) | Interval | Adjusted p | Verdict | Cost/run |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for c in moved:
        p = c["p_adjusted"]
        lines.append(
            f"| {_md(c['case'])} | {c['base']['passes']}/{c['base']['total']} | {c['new']['passes']}/"
            f"{c['new']['total']} | {_pp(c['difference'])} | {_ci(c['ci'])} | "
            f"{'–' if p is None else f'{p:.2g}'} | {(c['verdict'] or '').upper()} | "
            f"{_money(c['base']['cost_per_run'])} → {_money(c['new']['cost_per_run'])} |"
        )
    for title, names in (
        ("New (not compared)", diff["new_cases"]),
        ("Removed", diff["removed"]),
        ("Changed parameters (not compared)", diff["changed"]),
    ):
        if names:
            lines += ["", f"**{title}**: " + ", ".join(_md(n) for n in names)]
    return "\n".join(lines) + "\n"


def text(diff: Mapping[str, Any]) -> str:
    lines = [
        f"{diff['base']} -> {diff['new']}: {len(diff['dropped'])} case(s) dropped of {len(diff['cases'])} "
        f"compared; cost per run {_money(diff['cost_per_run']['base'])} -> {_money(diff['cost_per_run']['new'])}"
    ]
    for c in sorted(diff["cases"], key=lambda c: c["difference"] if c["difference"] is not None else 0.0):
        lines.append(
            f"  {c['case']}  {c['base']['passes']}/{c['base']['total']} -> {c['new']['passes']}/"
            f"{c['new']['total']}  {_pp(c['difference'])} pp {_ci(c['ci'])}  {(c['verdict'] or '').upper()}"
        )
    for title, names in (("new", diff["new_cases"]), ("removed", diff["removed"])):
        if names:
            lines.append(f"  {title}: {', '.join(names)}")
    return "".join(printable_line(line) + "\n" for line in lines)  # a case's label may start a line


def dumps(diff: Mapping[str, Any]) -> str:
    return json.dumps(diff, indent=2, ensure_ascii=False, allow_nan=False) + "\n"
