"""The rows' metric series: the stable contract of the row metrics (:data:`INSTRUMENTS`), read off the summary.

Pure, as every facet's ``series()``: the export (``otel/metrics.py``) records these and the facets' series
into the SDK's instruments. docs/observability.md lists them with their Prometheus names.
"""

from __future__ import annotations

from ..model.outputs import EXEMPLARS, Series, case_attributes
from ..model.rows import Summary
from ..model.run import RunRecord
from ..vocabulary import ERROR, FAIL, ROLE_JUDGE, ROLE_SYSTEM

#: The duration histogram's explicit bucket bounds, in seconds.
DURATION_BUCKETS = (0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 20.0, 30.0, 60.0, 120.0, 300.0)

#: Instrument name -> (kind, unit, description); the stable contract.
INSTRUMENTS = {
    "probability.runs": ("counter", "{run}", "Runs by benchmark, case and outcome"),
    "probability.case.pass_fraction": ("gauge", "1", "Passes over counted runs of a case, with its row status"),
    "probability.session.pass_fraction": ("gauge", "1", "Passes over counted runs of the session"),
    "probability.session.runs": (
        "counter",
        "{run}",
        "Runs of the session, skipped ones included; emitted by every session (a heartbeat)",
    ),
    "probability.cost": ("counter", "{USD}", "Spend recorded by runs, by case and model"),
    "probability.tokens": (
        "counter",
        "{token}",
        "Tokens recorded by runs, by benchmark, model and token type (input, output)",
    ),
    "probability.tokens.cache_read": (
        "counter",
        "{token}",
        "Input tokens read from the provider's prompt cache (part of the input tokens)",
    ),
    "probability.run.duration": ("histogram", "s", "Duration of the call phase of runs"),
}


def series(name: str, buckets: tuple[float, ...] = ()) -> Series:
    kind, unit, description = INSTRUMENTS[name]
    return Series(name, kind, unit, description, buckets=buckets)


def row_series(summary: Summary) -> list[Series]:
    runs = series("probability.runs")
    case_fraction = series("probability.case.pass_fraction")
    session_fraction = series("probability.session.pass_fraction")
    session_runs = series("probability.session.runs")
    cost = series("probability.cost")
    tokens = series("probability.tokens")
    cache_read = series("probability.tokens.cache_read")
    duration = series("probability.run.duration", DURATION_BUCKETS)
    token_totals: dict[tuple[str, str, str, str, str], int] = {}
    for row in summary.rows:
        case = case_attributes(row.case)
        counts = row.counts
        failed: dict[str, list[RunRecord]] = {FAIL: [], ERROR: []}
        by_outcome: dict[str, list[float]] = {}
        for record in row.records:
            if record.outcome in failed and record.span_id:
                failed[record.outcome].append(record)
            if record.outcome != "skip":
                by_outcome.setdefault(record.outcome, []).append(record.duration)
        for outcome, value in (
            ("pass", counts.passes),
            ("fail", counts.fails),
            ("error", counts.errors),
            ("skip", counts.skipped),
        ):
            if failed.get(outcome):
                runs.exemplars[len(runs.points)] = failed[outcome][-EXEMPLARS:]
            runs.points.append(({**case, "probability.outcome": outcome}, value))
        if counts.pass_rate is not None:
            case_fraction.points.append(({**case, "probability.status": row.status}, counts.pass_rate))
        for outcome, values in by_outcome.items():
            if failed.get(outcome):
                duration.exemplars[len(duration.points)] = failed[outcome][-EXEMPLARS:]
            duration.points.append(({**case, "probability.outcome": outcome}, values))
        for role, per_model in ((ROLE_SYSTEM, row.usage), (ROLE_JUDGE, row.judge_usage)):
            # The judge's points carry probability.usage.role=judge; the system's keep their series as before.
            extra = {"probability.usage.role": ROLE_JUDGE} if role == ROLE_JUDGE else {}
            for model, usage in per_model.items():
                cost.points.append(({**case, "gen_ai.request.model": model, **extra}, usage.cost))
                for kind, value in (
                    ("input", usage.input_tokens),
                    ("output", usage.output_tokens),
                    ("cache_read", usage.cached_input_tokens),
                ):
                    key = (case["test.case.name"].split("::", 1)[0], row.case.benchmark, model, kind, role)
                    token_totals[key] = token_totals.get(key, 0) + value
        unattributed = sum(r.extra_cost for r in row.records)
        if unattributed or not row.usage:
            cost.points.append((case, unattributed))
    for (path, benchmark, model, kind, role), value in token_totals.items():
        attributes = {"code.file.path": path, "probability.benchmark": benchmark, "gen_ai.request.model": model}
        if role == ROLE_JUDGE:
            attributes["probability.usage.role"] = ROLE_JUDGE
        if kind == "cache_read":
            cache_read.points.append((attributes, value))
        else:
            tokens.points.append(({**attributes, "gen_ai.token.type": kind}, value))
    if summary.counts.pass_rate is not None:
        session_fraction.points.append(({}, summary.counts.pass_rate))
    session_runs.points.append(({}, summary.counts.total + summary.counts.skipped))
    return [runs, case_fraction, session_fraction, session_runs, cost, tokens, cache_read, duration]
