"""How early stopping and budgets reach every output ("spend less").

Registered once at configure time in the aggregating process
(:func:`install`), through the extension points of ``State``: a table
column with the runs not executed, a section saying what stopped and why,
JSON row fields (``rows[].stopped``) and sections (``stopping``, ``budget``),
and metric series. All read the same ``Summary``: a run not executed is a
record with ``stopped`` set ("decided" or "budget").
"""

from __future__ import annotations

from typing import Any

from .gating import BUDGET, DECIDED
from .report_terminal import Line, money
from .model.rows import Row, Summary


def _causes(row: Row) -> dict[str, int]:
    causes: dict[str, int] = {}
    for record in row.records:
        if record.stopped:
            causes[record.stopped] = causes.get(record.stopped, 0) + 1
    return causes


def _reason(row: Row) -> str:
    return next((r.message for r in row.records if r.stopped), "")


def not_run_cell(row: Row) -> str:
    return f"{row.counts.stopped} not run" if row.counts.stopped else ""


def row_field(row: Row) -> dict[str, Any]:
    if not row.counts.stopped:
        return {"stopped": None}
    causes = _causes(row)
    executed = row.counts.total + row.counts.skipped
    return {
        "stopped": {
            "cause": DECIDED if causes.get(DECIDED) else BUDGET,
            "reason": _reason(row).removeprefix("not run: "),
            "runs_executed": executed,
            "runs_not_executed": row.counts.stopped,
            "runs_saved": causes.get(DECIDED, 0),
        }
    }


def totals(summary: Summary) -> dict[str, int]:
    saved = budget = cases = 0
    for row in summary.rows:
        causes = _causes(row)
        saved += causes.get(DECIDED, 0)
        budget += causes.get(BUDGET, 0)
        cases += bool(causes.get(DECIDED))
    return {"cases_stopped": cases, "runs_saved": saved, "runs_not_executed_budget": budget}


def stopping_section(state: Any) -> dict[str, Any] | None:
    summary = state.summary()
    found = totals(summary)
    if state.stats.stop is None and not found["cases_stopped"]:
        return None
    executed = summary.counts.total + summary.counts.skipped
    return {
        "mode": state.stats.stop,
        "cases_stopped": found["cases_stopped"],
        "runs_saved": found["runs_saved"],
        "runs_executed": executed,
    }


def budget_section(state: Any) -> dict[str, Any] | None:
    book = state.gates
    if book is None or book.budget is None:
        return None
    return book.budget.to_dict(totals(state.summary())["runs_not_executed_budget"])


def lines(state: Any) -> list[Line]:
    out: list[Line] = []
    summary = state.summary()
    found = totals(summary)
    executed = summary.counts.total + summary.counts.skipped
    if found["cases_stopped"]:
        planned = executed + summary.counts.stopped
        out.append((
            f"  Stopped: {found['cases_stopped']} case(s) decided early ({state.stats.stop or 'by marker'}); "
            f"{found['runs_saved']} of {planned} runs not executed",
            {"bold": True},
        ))
    budget = state.gates.budget if state.gates is not None else None
    if budget is not None:
        spent = f"spent {money(budget.cost)}, {budget.tokens:,} tokens, {budget.elapsed():.1f}s"
        if budget.reached is not None:
            limit = budget.reason().split(" (")[0]
            out.append((
                f"  Budget:  {limit}: {spent}; {found['runs_not_executed_budget']} run(s) not executed",
                {"yellow": True, "bold": True},
            ))
        else:
            limits = ", ".join(f"{k} {v:g}" for k, v in budget.limits().items() if v is not None)
            out.append((f"  Budget:  not reached ({limits}): {spent}", {}))
    return [("", {})] + out if out else []


def series(state: Any) -> list[Any]:
    """Runs not executed per case and cause; which budget stopped the session."""
    from .otel.metrics import Series, case_attributes

    summary = state.summary()
    result = []
    not_run = Series("probability.runs.not_executed", "counter", "{run}",
                     "Runs not executed, by case and cause (decided: stopped early; budget: a session budget)")
    for row in summary.rows:
        for cause, count in _causes(row).items():
            not_run.points.append(({**case_attributes(row.case), "probability.stop.cause": cause}, count))
    if not_run.points or state.stats.stop is not None:
        result.append(not_run)
    budget = state.gates.budget if state.gates is not None else None
    if budget is not None:
        reached = Series("probability.session.budget.reached", "gauge", "",
                         "1 for the budget that stopped the session, 0 for other configured budgets")
        used = Series("probability.session.budget.used", "gauge", "1", "Spent over the limit, per configured budget")
        spent = budget.spent()
        for kind, limit in budget.limits().items():
            if limit is None:
                continue
            reached.points.append(({"probability.budget": kind}, 1 if budget.reached == kind else 0))
            used.points.append(({"probability.budget": kind}, spent[kind] / limit if limit else 1.0))
        result += [reached, used]
    return result


def install(state: Any) -> None:
    state.columns.append(not_run_cell)
    state.sections.append(lines)
    state.json_row_fields.append(row_field)
    state.json_sections["stopping"] = lambda summary: stopping_section(state)
    state.json_sections["budget"] = lambda summary: budget_section(state)
    state.metric_series.append(lambda summary: series(state))
