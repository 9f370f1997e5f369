"""The JSON report (``--prob-json``): rows, totals and raw per-run records.

A field keeps its name and meaning once written (``case``, ``pass_rate`` in
percent, ``elapsed``, ``error``, ``runs``, ...), so that tools reading the
reports keep working; new fields are added beside them. See docs/reference.md
for every field.
"""

from __future__ import annotations

import datetime as _dt
import json
import math
import platform
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from .. import __version__, files
from ..model.case import CaseRef
from ..model.rows import Counts, Row, Summary, UsageTotals
from ..model.run import RunRecord, Score, Usage
from ..protocols import Facet
from ..vocabulary import ERROR, SKIP

SCHEMA_VERSION = 1


def _usage(usage: dict[str, UsageTotals]) -> dict[str, dict[str, Any]]:
    return {
        model: {
            "input_tokens": u.input_tokens,
            "output_tokens": u.output_tokens,
            "cached_input_tokens": u.cached_input_tokens,
            "cost": u.cost,
        }
        for model, u in usage.items()
    }


def _counts(counts: Counts) -> dict[str, Any]:
    rate = counts.pass_rate
    return {
        "passes": counts.passes,
        "fails": counts.fails,
        "errors": counts.errors,
        "skipped": counts.skipped,
        "total": counts.total,
        "pass_rate": None if rate is None else 100.0 * rate,
        "pass_fraction": rate,
    }


def row_dict(row: Row) -> dict[str, Any]:
    return {
        "case": row.label,
        "label": row.label,
        "nodeid": row.case.key,
        "benchmark": row.case.benchmark,
        "case_id": row.case.case,
        "params": dict(row.case.params),
        **_counts(row.counts),
        "runs": row.case.runs,
        "status": row.status,
        "cost": row.cost,
        "usage": _usage(row.usage),
        "judge_cost": row.judge_cost,
        "judge_usage": _usage(row.judge_usage),
    }


def record_dict(record: RunRecord) -> dict[str, Any]:
    # For errored runs only (a failed assert is a fail, not an error).
    error = f"{record.error_type}: {record.error_text}" if record.outcome == ERROR and record.error_type else None
    return {
        "case": record.case.label,
        "case_key": record.case.key,
        "run": record.run,
        "nodeid": record.nodeid,
        "outcome": record.outcome,
        "phase": record.phase,
        "message": record.message or None,
        "error": error,
        "error_type": record.error_type or None,
        "error_text": record.error_text or None,
        "duration": record.duration,
        "elapsed": record.duration,
        "cost": record.cost,
        "judge_cost": record.judge_cost,
        "usage": [u.to_dict() for u in record.usage],
        "trace_id": record.trace_id or None,
        "span_id": record.span_id or None,
        "stopped": record.stopped or None,
        "attempts": record.attempts,
        "retries": [dict(r) for r in record.retries],
        "transcript": [dict(t) for t in record.transcript],
        "transcript_dropped": record.transcript_dropped,
        "extra_cost": record.extra_cost,
        "start_time": record.start_time,
        "scores": [score.to_dict() for score in record.scores],
    }


def record_from_dict(data: dict[str, Any], cases: dict[str, CaseRef]) -> RunRecord:
    """The :class:`RunRecord` a ``records[]`` (or ``skipped_runs[]``) entry was written from, its case
    looked up by ``case_key`` in ``cases`` (the report's ``cases``); what :func:`record_dict` wrote as
    null was empty text."""
    return RunRecord(
        case=cases[data["case_key"]],
        run=data["run"],
        nodeid=data["nodeid"],
        outcome=data["outcome"],
        duration=data.get("duration") or 0.0,
        message=data.get("message") or "",
        error_type=data.get("error_type") or "",
        error_text=data.get("error_text") or "",
        phase=data.get("phase") or "call",
        usage=tuple(Usage.from_dict(u) for u in data.get("usage") or ()),
        extra_cost=data.get("extra_cost") or 0.0,
        trace_id=data.get("trace_id") or "",
        span_id=data.get("span_id") or "",
        start_time=data.get("start_time") or 0.0,
        stopped=data.get("stopped") or "",
        retries=tuple(dict(r) for r in data.get("retries") or ()),
        transcript=tuple(dict(t) for t in data.get("transcript") or ()),
        scores=tuple(Score.from_dict(score) for score in data.get("scores") or ()),
    )


def build(
    summary: Summary, *, settings: dict[str, Any], exit_status: int, facets: Sequence[Facet] = ()
) -> dict[str, Any]:
    """The report dict: the rows and records, with each facet's row fields and top-level keys."""
    now = _dt.datetime.now(_dt.timezone.utc)
    totals = _counts(summary.counts)
    totals["count"] = totals.pop("total")
    rows = []
    for row in summary.rows:
        data = row_dict(row)
        for facet in facets:
            data.update(facet.row_fields(row))
        rows.append(data)
    report = {
        "schema_version": SCHEMA_VERSION,
        # Local time without an offset, and the same instant in UTC with one.
        "created": now.astimezone().strftime("%Y-%m-%dT%H:%M:%S"),
        "created_utc": now.isoformat(timespec="seconds"),
        "versions": {
            "pytest_probability": __version__,
            "pytest": pytest.__version__,
            "python": platform.python_version(),
        },
        "runs": settings.get("runs"),
        "settings": settings,
        "exit_status": int(exit_status),
        "totals": {
            **totals,
            "cost": summary.cost,
            "usage": _usage(summary.usage),
            "judge_cost": summary.judge_cost,
            "judge_usage": _usage(summary.judge_usage),
            "rows": len(summary.rows),
            "statuses": summary.status_counts,
        },
        "rows": rows,
        # One record per executed run; runs that skipped or were not executed are apart.
        "records": [record_dict(r) for r in summary.records if r.outcome != SKIP],
        "skipped_runs": [record_dict(r) for r in summary.records if r.outcome == SKIP],
    }
    for facet in facets:
        report.update(facet.report_fields())
    return report


def dumps(report: dict[str, Any]) -> str:
    """Strict JSON (RFC 8259: no ``NaN`` or ``Infinity``), with one row and one record per line.

    The top level is indented; each element of ``rows`` and ``records`` is
    written on one line by the standard library's C encoder, which keeps
    the report linear and fast at 50,000 rows. A value that is not a finite
    number (none should be: recorded costs are bounded, see
    ``recording.MAX_COST``) is written as ``null`` rather than as invalid JSON.
    """
    try:
        return _dumps(report)
    except ValueError:  # a non-finite float somewhere: null is the only strict JSON for it
        return _dumps(_finite(report))


def _dumps(report: dict[str, Any]) -> str:
    parts = []
    for key, value in report.items():
        if key in _ONE_PER_LINE and isinstance(value, list) and value:
            text = "[\n    " + ",\n    ".join(_compact(item) for item in value) + "\n  ]"
        else:
            text = json.dumps(value, indent=2, ensure_ascii=False, allow_nan=False).replace("\n", "\n  ")
        parts.append(f"  {_compact(key)}: {text}")
    return "{\n" + ",\n".join(parts) + "\n}\n"


_ONE_PER_LINE = ("rows", "records", "skipped_runs")
_compact = json.JSONEncoder(ensure_ascii=False, allow_nan=False, separators=(", ", ": ")).encode


def _finite(value: Any) -> Any:
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_finite(v) for v in value]
    return value


def write(path: Path, report: dict[str, Any]) -> None:
    files.write_text(path, dumps(report))
