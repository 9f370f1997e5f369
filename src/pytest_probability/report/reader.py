"""One typed reader of JSON reports: a ``--prob-json`` report (a session's, a shard's, the merge's, 0.3.0's) read
once into typed objects, each field checked once (:mod:`.schema`).

:func:`read_report` turns a report's data into a :class:`Report`, or raises
:class:`~.schema.Malformed` naming the first field that is not what the
report writes (``rows[2].ci.low must be a number, got 'x'``); :func:`load`
reads the file first, and says why a file is no report at all
(:class:`Unreadable`). Every output that renders a report reads these
objects, never the dict: the HTML page, the history page, the CI job's
summary and annotations, ``diff`` and the baseline. A field a report of
another version lacks is its default (None, 0, empty); fields this version
does not read are left alone.

The measures are read alike: a row's :attr:`ReportRow.gates` are its gates
of every measure (the pass fraction's ``gate``, each score's
``scores.NAME.gate``), and a comparison's :attr:`ReportComparison.measures`
its pass fraction's and its scores'.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ..config.reported import stats_from_dict
from ..config.settings import StatsConfig
from ..model.case import CaseRef
from ..model.concurrency_figures import Concurrency
from ..text import printable, well_formed_data
from .report_rows import (
    PassGate,
    ReportHistory,
    ReportInterval,
    ReportQuarantine,
    ReportRow,
    ReportScore,
    ReportSource,
    ReportStopped,
    ScoreGateRead,
)
from .report_types import (
    RecordScore,
    Report,
    ReportBaseline,
    ReportBudget,
    ReportComparison,
    ReportGates,
    ReportInput,
    ReportMerged,
    ReportQuarantineTotals,
    ReportRecord,
    ReportSettings,
    ReportSide,
    ReportStates,
    ReportStopping,
    ReportTotals,
    ReportUsage,
    ReportVersions,
)
from .schema import BOOL, COUNT, NUMBER, TEXT, WHOLE, ListOf, Malformed, MapOf, Shape, check_case, read, shown


class Unreadable(ValueError):
    """A file that is no JSON report at all: it cannot be read (:class:`CannotRead`), is not JSON
    (:class:`NotJson`), or holds no ``rows`` array. The message names the file (its path first, or after
    ``cannot read``); :attr:`reason` says why without it."""

    def __init__(self, message: str, reason: str = "") -> None:
        super().__init__(message)
        self.reason = reason or message


class CannotRead(Unreadable):
    """The file cannot be read (the system's words: ``No such file or directory``)."""


class NotJson(Unreadable):
    """The file is not JSON (not UTF-8, not JSON, nested too deep, a number too long to read)."""


# -- the shapes -------------------------------------------------------------------------------


#: Any JSON value (shown as text, or not read).
ANYTHING = (lambda v: True), "anything"
OBJECT_OF_ANY = MapOf(ANYTHING)


def _transcript_entry(value: Any) -> bool:
    cut = value.get("truncated") if isinstance(value, dict) else None
    return isinstance(value, dict) and (
        cut is None or (isinstance(cut, dict) and all(type(v) is int for v in cut.values()))
    )


#: A transcript entry: its fields shown as text, and ``truncated``: each cut field's length.
TRANSCRIPT_ENTRY = _transcript_entry, "an object whose truncated is an object of lengths"
INTERVAL = Shape(ReportInterval, {"low": NUMBER, "high": NUMBER, "method": TEXT, "level": NUMBER})
_INPUT_FIELDS: dict[str, Any] = {
    "input": TEXT,
    "nodeid": TEXT,
    "difference": NUMBER,
    "ci": INTERVAL,
    "p_adjusted": NUMBER,
    "verdict": TEXT,
    "note": TEXT,
}
_FRACTION_SIDE = Shape(ReportSide, {"passes": COUNT, "total": COUNT})
_SCORE_SIDE = Shape(ReportSide, {"n": COUNT, "mean": NUMBER})
_COMPARISON_FIELDS: dict[str, Any] = {
    "pairs": COUNT,
    "difference": NUMBER,
    "ci": INTERVAL,
    "p_adjusted": NUMBER,
    "margin": NUMBER,
    "verdict": TEXT,
    "suppressed": TEXT,
}
#: A score's comparison (``scores[]`` of a verdict's comparison): named, with its range.
SCORE_COMPARISON = Shape(
    ReportComparison,
    {
        "name": TEXT,
        "range": ListOf(NUMBER),
        **_COMPARISON_FIELDS,
        "inputs": ListOf(Shape(ReportInput, {**_INPUT_FIELDS, "baseline": _SCORE_SIDE, "arm": _SCORE_SIDE})),
    },
)
#: A verdict's comparison of the pass fraction, with its scores'.
COMPARISON = Shape(
    ReportComparison,
    {
        "kind": TEXT,
        "function": TEXT,
        "arm": TEXT,
        "baseline": TEXT,
        "axis": TEXT,
        **_COMPARISON_FIELDS,
        "cost_ratio": NUMBER,
        "inputs": ListOf(Shape(ReportInput, {**_INPUT_FIELDS, "baseline": _FRACTION_SIDE, "arm": _FRACTION_SIDE})),
        "scores": ListOf(SCORE_COMPARISON),
    },
)
SCORE = Shape(
    ReportScore,
    {
        "n": COUNT,
        "mean": NUMBER,
        "sd": NUMBER,
        "ci": INTERVAL,
        "threshold": NUMBER,
        "below": COUNT,
        "min_score": NUMBER,
        "gate": Shape(
            ScoreGateRead,
            {
                "min_score": NUMBER,
                "confidence": NUMBER,
                "n": COUNT,
                "mean": NUMBER,
                "low": NUMBER,
                "high": NUMBER,
                "verdict": TEXT,
            },
        ),
    },
)
ROW = Shape(
    ReportRow,
    {
        "label": TEXT,
        "case": TEXT,
        "nodeid": TEXT,
        "benchmark": TEXT,
        "case_id": TEXT,
        "params": OBJECT_OF_ANY,
        "passes": COUNT,
        "fails": COUNT,
        "errors": COUNT,
        "skipped": COUNT,
        "total": COUNT,
        "count": COUNT,
        "runs": COUNT,
        "pass_fraction": NUMBER,
        "pass_rate": NUMBER,
        "status": TEXT,
        "cost": NUMBER,
        "ci": INTERVAL,
        "gate": Shape(
            PassGate,
            {
                "rule": TEXT,
                "min_rate": NUMBER,
                "min_passes": COUNT,
                "confidence": NUMBER,
                "passes": COUNT,
                "total": COUNT,
                "low": NUMBER,
                "high": NUMBER,
                "verdict": TEXT,
            },
        ),
        "verdict": TEXT,
        "scores": MapOf(SCORE),
        "stopped": Shape(ReportStopped, {"reason": TEXT}),
        "history": Shape(
            ReportHistory,
            {
                "state": TEXT,
                "since": TEXT,
                "first_flaky": TEXT,
                "changed": BOOL,
                "nights": COUNT,
                "flake_rate": Shape(ReportInterval, {"low": NUMBER, "high": NUMBER}),
            },
        ),
        "quarantine": Shape(ReportQuarantine, {"owner": TEXT, "until": TEXT, "failing": BOOL}),
        "source": Shape(ReportSource, {"path": TEXT, "line": COUNT}),
    },
)
RECORD = Shape(
    ReportRecord,
    {
        "case": TEXT,
        "case_key": TEXT,
        "run": WHOLE,
        "nodeid": TEXT,
        "outcome": TEXT,
        "phase": TEXT,
        "message": TEXT,
        "error": TEXT,
        "trace_id": TEXT,
        "span_id": TEXT,
        "transcript": ListOf(TRANSCRIPT_ENTRY),
        "transcript_dropped": WHOLE,
        "scores": ListOf(Shape(RecordScore, {"name": TEXT, "value": NUMBER, "threshold": NUMBER, "explanation": TEXT})),
    },
)


def _concurrency(**found: Any) -> Concurrency:
    return Concurrency(**{**found, "one_at_a_time": tuple(found.get("one_at_a_time", ()))})


#: What concurrent runs did (``Concurrency.to_dict``); the figures it derives (the mean, the ideal) are not read.
CONCURRENCY = Shape(
    _concurrency,
    {
        "limit": COUNT,
        "processes": COUNT,
        "runs": COUNT,
        "call_seconds": NUMBER,
        "wall_seconds": NUMBER,
        "in_flight_seconds": NUMBER,
        "busy_seconds": NUMBER,
        "peak_in_flight": COUNT,
        "faults": COUNT,
        "window_cuts": COUNT,
        "one_at_a_time": ListOf(TEXT),
        "finished_unreported": COUNT,
        "cancelled": COUNT,
    },
    {"peak_in_flight": "peak", "window_cuts": "cuts", "finished_unreported": "unreported"},
)
BASELINE = Shape(
    ReportBaseline,
    {
        "comparisons": ListOf(COMPARISON),
        "paired": COUNT,
        "adjustment": TEXT,
        "verdicts": MapOf(COUNT),
        "score_verdicts": MapOf(COUNT),
    },
)
REPORT = Shape(
    Report,
    {
        "rows": ListOf(ROW),
        "records": ListOf(RECORD),
        "created": TEXT,
        "created_utc": TEXT,
        "versions": Shape(ReportVersions, {"pytest_probability": TEXT}),
        "exit_status": COUNT,
        "settings": Shape(ReportSettings, {"shard": TEXT}),
        "totals": Shape(
            ReportTotals,
            {
                "passes": COUNT,
                "count": COUNT,
                "pass_fraction": NUMBER,
                "rows": COUNT,
                "cost": NUMBER,
                "statuses": MapOf(COUNT),
                "usage": MapOf(Shape(ReportUsage, {"input_tokens": WHOLE, "output_tokens": WHOLE})),
            },
        ),
        "comparisons": ListOf(COMPARISON),
        "baseline": BASELINE,
        "gates": Shape(ReportGates, {"passed": COUNT, "failed": COUNT, "undecided": COUNT, "skipped": COUNT}),
        "budget": Shape(
            ReportBudget,
            {"reason": TEXT, "runs_not_executed": COUNT, "runs_after_reached": COUNT, "spent_after_reached": NUMBER},
        ),
        "stopping": Shape(
            ReportStopping,
            {"active": BOOL, "mode": TEXT, "cases_stopped": COUNT, "runs_saved": COUNT, "runs_executed": COUNT},
        ),
        "states": Shape(
            ReportStates,
            {"rule": OBJECT_OF_ANY, "changes": MapOf(ListOf(ANYTHING)), "counts": MapOf(COUNT), "nights_read": COUNT},
        ),
        "quarantine": Shape(ReportQuarantineTotals, {"cases": COUNT, "failing": COUNT, "expired": ListOf(ANYTHING)}),
        "merged": Shape(ReportMerged, {"shards": COUNT}),
        "concurrency": CONCURRENCY,
        "cases": ListOf(OBJECT_OF_ANY),
        "stats_config": OBJECT_OF_ANY,
    },
)


# -- reading --------------------------------------------------------------------------------


def read_report(data: Any, source: str = "") -> Report:
    """A report's data (what ``json.loads`` gave) read into a :class:`Report`; :class:`Malformed` names the
    first field that is not what the JSON report writes, by its path. ``source``: the file's name."""
    if not isinstance(data, dict) or not isinstance(data["rows"] if "rows" in data else None, list):
        raise Malformed(f"rows must be an array, got {_shown_rows(data)}")
    report: Report = read(data, REPORT, "")
    for index, row in enumerate(report.rows):
        if not row.label:
            raise Malformed(f"rows[{index}] has no label (nor case, as 0.3.0 named it)")
    report.source = source
    return report


def cases_of(report: Report) -> dict[str, CaseRef]:
    """The report's cases by key, each checked as the merge checks a shard's (:func:`~.schema.check_case`:
    its parameters, and its marks as the ``probability`` marker takes them); :class:`Malformed` names one."""
    found = {}
    for index, case in enumerate(report.cases):
        check_case(case, f"cases[{index}]")
        found[case["key"]] = CaseRef.from_dict(case)
    return found


def stats_of(report: Report) -> StatsConfig | None:
    """The settings the report was decided with (``stats_config``, each field checked as its option is), or None
    without them (0.3.0's); :class:`Malformed` names a field that is wrong."""
    if report.stats_config is None:
        return None
    try:
        return stats_from_dict(report.stats_config)
    except ValueError as exc:
        raise Malformed(str(exc)) from None


def read_baseline(data: Any, where: str = "baseline") -> ReportBaseline:
    """A report's ``baseline`` (or ``diff``'s) read."""
    baseline: ReportBaseline = read(data, BASELINE, where)
    return baseline


def read_record(data: Any, where: str = "record") -> ReportRecord:
    """One ``records[]`` entry read (the pages' view of a run)."""
    record: ReportRecord = read(data, RECORD, where)
    return record


def _shown_rows(data: Any) -> str:
    if not isinstance(data, dict):
        return f"no object but {shown(data)}"
    return shown(data["rows"] if "rows" in data else None)


def read_json(path: Path) -> tuple[Any, bytes]:
    """A JSON file read whole (a report: a baseline, a shard's, a history folder's): its value and its bytes
    (the baseline's digest is over them). :class:`Unreadable` says why it is none, naming the file, never a
    ``UnicodeDecodeError`` or ``RecursionError``. Escaped surrogates in it (``"\\ud83d"``, a hand-edited
    file's) are read as the plugin takes any text: well-formed (:func:`~pytest_probability.text.well_formed`)."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        reason = exc.strerror or str(exc)
        raise CannotRead(f"cannot read {path}: {reason}", reason) from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        reason = f"not UTF-8 text (byte {exc.start})"
        raise NotJson(f"{path} is {reason}", reason) from None
    try:
        value = json.loads(text)
    except RecursionError:
        raise NotJson(f"{path} is not JSON (it nests too deeply)", "it nests too deeply") from None
    except ValueError as exc:  # not JSON, an integer of 4,300+ digits
        reason = printable(str(exc))
        raise NotJson(f"{path} is not JSON ({reason})", reason) from None
    if "\\ud" in text or "\\uD" in text:  # maybe an escaped surrogate
        value = well_formed_data(value)
    return value, data


def load_json(path: Path) -> Any:
    """A file's JSON (:func:`read_json` without its bytes)."""
    return read_json(path)[0]


def load(path: Path) -> Report:
    """The report in ``path``: :class:`Unreadable` when it holds no report at all, :class:`Malformed` (naming
    the field) when a field of it is not what a report writes."""
    data = load_json(path)
    if not isinstance(data, dict) or ("rows" in data and data["rows"]) is None or "rows" not in data:
        raise Unreadable(f"{path} is not a --prob-json report (no 'rows' list)", "no 'rows'")
    return read_report(data, path.name)
