"""``python -m pytest_probability diff BASE.json NEW.json``: two reports compared as ``--prob-baseline`` compares a session.

BASE is read by the baseline reader (:func:`.baseline.load`), NEW's rows
become the session's rows (counts, cost, the case's parameters, its marks
when the report lists its ``cases``), and the comparisons are the session's
(:class:`.comparing.Comparer`, with NEW's ``stats_config``): Fisher's
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

from ...config.settings import StatsConfig
from ...measures.measure import PASS
from ...model.case import CaseRef
from ...model.rows import NO_USAGE, Counts, Row
from ...model.run import RunRecord, Score
from ...report.reader import cases_of, read_baseline, stats_of
from ...report.report_types import Report, ReportRecord
from ...report.schema import Malformed
from ...text import printable_line
from ...vocabulary import BASELINE_KIND, FAILED
from .baseline import BaselineError, load, read_report
from .compare_config import CompareConfig
from .comparing import Comparer
from .comparisons import Comparisons


def rows_of(report: Report) -> list[Row]:
    """A report's rows as the session's rows: enough for the comparisons of every measure (counts, cost,
    parameters, marks when the report lists its ``cases``, and each run's scores)."""
    cases = cases_of(report)
    scored: dict[str, list[ReportRecord]] = {}
    for record in report.records:
        if record.scores:
            scored.setdefault(record.case_key or record.case, []).append(record)
    rows = []
    for order, data in enumerate(report.rows):
        key = data.key
        case = cases.get(key)
        if case is None:
            params = data.params or {}
            case = CaseRef(
                key,
                str(data.benchmark or key),
                str(data.case_id or ""),
                label=data.label,
                order=order,
                runs=data.runs or 0,
                params=tuple((str(k), str(v)) for k, v in params.items()),
            )
        counts = Counts(data.passes or 0, data.fails or 0, data.errors or 0, data.skipped or 0)
        runs = tuple(
            RunRecord(
                case,
                record.run or 0,
                record.nodeid or "",
                record.outcome or "",
                scores=tuple(Score(s.name, float(s.value)) for s in record.scores if s.value is not None),
            )
            for record in scored.get(key) or scored.get(data.label) or ()
        )
        rows.append(Row(case, runs, counts, str(data.status or ""), float(data.cost or 0.0), NO_USAGE))
    return rows


def compare_reports(base: Path, new: Path, margin: float | None = None, adjust: str = "holm") -> dict[str, Any]:
    """The diff of two reports as a dict (``--format=json``); ValueError names a report that cannot be read,
    and the field of it that is wrong (``error: diff: NEW.json: rows[0].passes must be a whole number, got inf``)."""
    given = str(base)
    base = base if base.is_absolute() else Path.cwd() / base  # as --prob-baseline names what it read
    try:
        baseline = load([base], "diff")
        report = read_report(new, "diff")
    except BaselineError as exc:
        raise ValueError(str(exc)) from None
    try:
        stats = stats_of(report) or StatsConfig()
        rows = rows_of(report)
    except Malformed as exc:
        raise ValueError(f"diff: {new}: {exc}") from None
    config = CompareConfig(baselines=(given,), margin=margin or 0.0, margin_given=margin is not None, adjust=adjust)
    result = Comparer(config, baseline, stats).compare(rows)
    return describe(result, rows, baseline, base, new)


def describe(result: Comparisons, rows: Sequence[Row], baseline: Any, base: Path, new: Path) -> dict[str, Any]:
    """The diff's dict: the baseline's comparisons, each case's of every measure (``cases``: the pass fraction's;
    ``score_cases``: each score's), and what dropped."""
    cases = []
    by_key = {row.case.key: row for row in rows}
    fractions = result.pairs()
    for key, pair in fractions.items():
        row = by_key[key]
        found = baseline.find(key, row.label)
        cases.append(
            {
                "case": pair.label,
                "nodeid": key,
                "base": {
                    "passes": pair.base.passes,
                    "total": pair.base.total,
                    "cost_per_run": found.cost / found.total if found is not None and found.total else None,
                },
                "new": {
                    "passes": pair.arm.passes,
                    "total": pair.arm.total,
                    "cost_per_run": row.cost / pair.arm.total if pair.arm.total else None,
                },
                "difference": pair.difference,
                "ci": pair.ci.to_dict() if pair.ci is not None else None,
                "p_adjusted": pair.p_adjusted,
                "verdict": pair.verdict,
            }
        )
    score_cases = [
        {
            "case": pair.label,
            "nodeid": key,
            "score": pair.measure.name,
            "base": pair.measure.side_dict(pair.base),
            "new": pair.measure.side_dict(pair.arm),
            "difference": pair.difference,
            "ci": pair.ci.to_dict() if pair.ci is not None else None,
            "p_adjusted": pair.p_adjusted,
            "verdict": pair.verdict,
        }
        for (key, measure), pair in result.cases.items()
        if measure != PASS
    ]
    base_runs = sum(p.base.total for p in fractions.values())
    new_runs = sum(p.arm.total for p in fractions.values())
    base_cost = sum(p.cost2 for p in fractions.values())
    new_cost = sum(p.cost1 for p in fractions.values())
    dropped = [c["case"] for c in cases if c["verdict"] == FAILED]
    benchmarks = [c for c in result.heads if c.kind == BASELINE_KIND]
    scores = [c for c in result.comparisons if c.kind == BASELINE_KIND and c.measure.key != PASS]
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
        "score_cases": score_cases,
        "scores_dropped": [{"case": c["case"], "score": c["score"]} for c in score_cases if c["verdict"] == FAILED],
        "score_benchmarks_failed": [
            {"function": c.function, "score": c.measure.name} for c in scores if c.verdict == FAILED
        ],
    }


def dropped(diff: Mapping[str, Any]) -> bool:
    """Whether anything dropped, of any measure: a case, or a benchmark's verdict (``--fail-on-drop``)."""
    return any(diff[key] for key in ("dropped", "benchmarks_failed", "scores_dropped", "score_benchmarks_failed"))


def _pp(value: float | None) -> str:
    return "–" if value is None else f"{value * 100:+.1f}"


def _ci(ci: Mapping[str, Any] | None) -> str:
    return "" if not ci else f"[{_pp(ci['low'])}, {_pp(ci['high'])}]"


def _score(value: float | None) -> str:
    return "–" if value is None else f"{value:+.3f}"


def _score_ci(ci: Mapping[str, Any] | None) -> str:
    return "" if not ci else f"[{_score(ci['low'])}, {_score(ci['high'])}]"


def _mean(side: Mapping[str, Any]) -> str:
    return f"{'–' if side['mean'] is None else format(side['mean'], '.3f')} (n {side['n']})"


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


def _benchmark_lines(diff: Mapping[str, Any]) -> list[str]:
    """The benchmarks' table: each benchmark's comparison of every measure (its scores' under it)."""
    baseline = read_baseline(diff["baseline"]) if diff["baseline"] else None
    lines = []
    for c in baseline.comparisons if baseline is not None else ():
        for measured in c.measures:
            score = measured.name is not None
            difference = _score(measured.difference) if score else _pp(measured.difference)
            bounds = measured.ci.bounds if measured.ci is not None else None
            interval = (
                ""
                if bounds is None
                else _score_ci({"low": bounds[0], "high": bounds[1]})
                if score
                else _ci({"low": bounds[0], "high": bounds[1]})
            )
            name = f"{c.function} · mean {measured.name}" if score else c.function
            lines.append(
                f"| {_md(name)} | {measured.pairs} | {difference} | {interval} | "
                f"{measured.verdict.upper() if measured.verdict else 'report only'} |"
            )
    return lines


def markdown(diff: Mapping[str, Any]) -> str:
    """The pull request's comment: the benchmarks of every measure, the cases that moved (drops first), the
    scores that moved, new and removed, cost."""
    lines = ["<!-- pytest-probability diff -->", "## pytest-probability: this change against the base", ""]
    adjustment = read_baseline(diff["baseline"]).adjustment if diff["baseline"] else None
    dropped, scores = diff["dropped"], diff["scores_dropped"]
    lines.append(
        f"**{len(dropped)} case(s) dropped** (Fisher's exact test, {adjustment} adjustment "
        f"over {len(diff['cases'])} compared cases)"
        + (f"; **{len(scores)} score(s) dropped** (Welch's test)" if diff["score_cases"] else "")
        + f"; cost per run {_money(diff['cost_per_run']['base'])} → {_money(diff['cost_per_run']['new'])}"
    )
    lines += ["", "| Benchmark | Cases | Difference | Interval | Verdict |", "|---|---|---|---|---|"]
    lines += _benchmark_lines(diff)
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
    if diff["score_cases"]:
        graded = sorted(
            diff["score_cases"],
            key=lambda c: (c["verdict"] != FAILED, c["difference"] if c["difference"] is not None else 0.0),
        )
        lines += [
            "",
            "| Case | Score | Base mean | New mean | Difference | Interval | Adjusted p | Verdict |",
            "|---|---|---|---|---|---|---|---|",
        ]
        for c in graded:
            p = c["p_adjusted"]
            lines.append(
                f"| {_md(c['case'])} | {_md(c['score'])} | {_mean(c['base'])} | {_mean(c['new'])} | "
                f"{_score(c['difference'])} | {_score_ci(c['ci'])} | {'–' if p is None else f'{p:.2g}'} | "
                f"{(c['verdict'] or '').upper()} |"
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
    for c in sorted(diff["score_cases"], key=lambda c: c["difference"] if c["difference"] is not None else 0.0):
        lines.append(
            f"  {c['case']}  {c['score']} {_mean(c['base'])} -> {_mean(c['new'])}  {_score(c['difference'])} "
            f"{_score_ci(c['ci'])}  {(c['verdict'] or '').upper()}"
        )
    for failed in diff["benchmarks_failed"]:
        lines.append(f"  benchmark {failed}: FAIL")
    for failed in diff["score_benchmarks_failed"]:
        lines.append(f"  benchmark {failed['function']}: mean {failed['score']} FAIL")
    for title, names in (("new", diff["new_cases"]), ("removed", diff["removed"])):
        if names:
            lines.append(f"  {title}: {', '.join(names)}")
    return "".join(printable_line(line) + "\n" for line in lines)  # a case's label may start a line


def dumps(diff: Mapping[str, Any]) -> str:
    return json.dumps(diff, indent=2, ensure_ascii=False, allow_nan=False) + "\n"
