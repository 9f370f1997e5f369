"""How early stopping and budgets reach every output ("spend less"): the spend facet.

:class:`SpendFacet` gives a table column with the runs not executed, the
lines saying what stopped and why, JSON row fields (``rows[].stopped``) and
sections (``stopping``, ``budget``), and metric series. All read the same
``Summary``: a run not executed is a record with ``stopped`` set
("decided" or "budget").
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ...model.outputs import Line, Series, case_attributes
from ...model.rows import Row, Summary
from ...protocols import Facet
from ...report.terminal import money
from ...vocabulary import BUDGET, DECIDED

if TYPE_CHECKING:
    from ...decide.results import Results
    from .budget import Budget


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


def _cost_avoided(row: Row, runs: int) -> float | None:
    """What ``runs`` more runs would have cost at the row's recorded cost per executed run (None when
    nothing was recorded)."""
    executed = row.counts.total + row.counts.skipped
    return row.cost / executed * runs if row.cost and executed else None


def row_field(row: Row) -> dict[str, Any]:
    if not row.counts.stopped:
        return {"stopped": None}
    causes = _causes(row)
    executed = row.counts.total + row.counts.skipped
    reason = _reason(row).removeprefix("not run: ")
    word = reason.split(" ", 1)[0]
    return {
        "stopped": {
            # The base keys: runs executed before the stop, runs planned, runs not executed, the early
            # verdict, and what the runs not executed would have cost; then the rest.
            "after": executed,
            "planned": executed + row.counts.stopped,
            "skipped": row.counts.stopped,
            "verdict": word.lower() if causes.get(DECIDED) and word in ("PASS", "FAIL") else None,
            "cost_avoided": _cost_avoided(row, row.counts.stopped),
            "cause": DECIDED if causes.get(DECIDED) else BUDGET,
            "reason": reason,
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


class SpendFacet(Facet):
    """Early stopping and budgets in every output."""

    def __init__(self, results: Results, stop: str | None, budget: Budget | None) -> None:
        """``stop``: the session's ``--prob-stop`` mode; ``budget``: its budgets, if any."""
        self.results = results
        self.stop = stop
        self.budget = budget

    def cells(self, row: Row) -> Sequence[str]:
        return (not_run_cell(row),)

    def row_fields(self, row: Row) -> Mapping[str, Any]:
        return row_field(row)

    def report_fields(self) -> Mapping[str, Any]:
        return {"stopping": self.stopping_section(), "budget": self.budget_section()}

    def stopping_section(self) -> dict[str, Any]:
        """The JSON's ``stopping``: always an object (``mode`` ``off`` without stopping), so that a path into it
        never meets a null."""
        summary = self.results.summary()
        found = totals(summary)
        executed = summary.counts.total + summary.counts.skipped
        avoided = [_cost_avoided(row, _causes(row).get(DECIDED, 0)) for row in summary.rows if row.counts.stopped]
        costs = [value for value in avoided if value is not None]
        return {
            "mode": self.stop or ("marker" if found["cases_stopped"] else "off"),
            "active": self.stop is not None or bool(found["cases_stopped"]),
            "cases": found["cases_stopped"],
            "runs_skipped": found["runs_saved"],
            "runs_planned": executed + found["runs_saved"],
            "cost_avoided": sum(costs) if costs else None,
            "cases_stopped": found["cases_stopped"],
            "runs_saved": found["runs_saved"],
            "runs_executed": executed,
        }

    def budget_section(self) -> dict[str, Any] | None:
        if self.budget is None:
            return None
        return self.budget.to_dict(totals(self.results.summary())["runs_not_executed_budget"])

    def lines(self) -> Sequence[Line]:
        out: list[Line] = []
        summary = self.results.summary()
        found = totals(summary)
        executed = summary.counts.total + summary.counts.skipped
        if found["cases_stopped"]:
            planned = executed + summary.counts.stopped
            out.append(
                (
                    f"  Stopped: {found['cases_stopped']} case(s) decided early ({self.stop or 'by marker'}); "
                    f"{found['runs_saved']} of {planned} runs not executed",
                    {"bold": True},
                )
            )
        budget = self.budget
        if budget is not None:
            spent = f"spent {money(budget.cost)}, {budget.tokens:,} tokens, {budget.elapsed():.1f}s"
            if budget.reached is not None:
                limit = budget.reason().split(" (")[0]
                after = (
                    f"; {budget.runs_after} run(s) in flight when it was reached finished after it "
                    f"({money(budget.spent_after)})"
                    if budget.runs_after
                    else ""
                )
                out.append(
                    (
                        f"  Budget:  {limit}: {spent}; {found['runs_not_executed_budget']} run(s) not executed{after}",
                        {"yellow": True, "bold": True},
                    )
                )
            else:
                limits = ", ".join(f"{k} {v:g}" for k, v in budget.limits().items() if v is not None)
                out.append((f"  Budget:  not reached ({limits}): {spent}", {}))
        return [("", {})] + out if out else []

    def series(self) -> list[Series]:
        """Runs not executed per case and cause; which budget stopped the session."""
        summary = self.results.summary()
        result = []
        not_run = Series(
            "probability.runs.not_executed",
            "counter",
            "{run}",
            "Runs not executed, by case and cause (decided: stopped early; budget: a session budget)",
        )
        for row in summary.rows:
            for cause, count in _causes(row).items():
                not_run.points.append(({**case_attributes(row.case), "probability.stop.cause": cause}, count))
        if not_run.points or self.stop is not None:
            result.append(not_run)
        budget = self.budget
        if budget is not None:
            reached = Series(
                "probability.session.budget.reached",
                "gauge",
                "",
                "1 for the budget that stopped the session, 0 for other configured budgets",
            )
            used = Series(
                "probability.session.budget.used", "gauge", "1", "Spent over the limit, per configured budget"
            )
            spent = budget.spent()
            for kind, limit in budget.limits().items():
                if limit is None:
                    continue
                reached.points.append(({"probability.budget": kind}, 1 if budget.reached == kind else 0))
                used.points.append(({"probability.budget": kind}, spent[kind] / limit if limit else 1.0))
            result += [reached, used]
        return result
