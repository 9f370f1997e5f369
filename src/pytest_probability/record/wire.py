"""Records off reports: the record a teardown report carries, and the record of a run whose worker crashed.

The executing process put the record on the run's teardown report
(``run.report.attach``); here the aggregating process takes it back: the
very record in a serial session, a rebuilt one (sharing the session's
CaseRefs) from an xdist worker's report.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import pytest

from ..model.case import CaseRef
from ..model.run import RunRecord
from ..run.outcome import TEXT_LIMIT, first_line
from ..text import clip
from ..vocabulary import CASE_ATTRIBUTE, CRASH_ERROR_TYPE, ERROR, RECORD_ATTRIBUTE, parse_run_id


def record_from_report(
    report: pytest.TestReport,
    cases: dict[str, CaseRef],
    attached: Callable[[], tuple[dict[str, Any], RunRecord] | None] = lambda: None,
) -> RunRecord | None:
    """The run's record on its teardown report, else None. ``attached``: in a serial session, what this
    process attached last (``RunPhases.take_attached``); ``cases``: the session's CaseRefs by key, which
    the record shares (a new case is added)."""
    data = getattr(report, RECORD_ATTRIBUTE, None)
    if data is None or report.when != "teardown":
        return None
    mine = attached()
    if mine is not None:
        record = mine[1]  # the case of what this process attached last is the session's (a serial session)
        if cases.setdefault(record.case.key, record.case) is record.case and mine[0] is data:
            return record  # attached by this process to this very report: its record, not a copy
    return RunRecord.from_dict(data, cases)


def crash_record(nodeid: str, cases: dict[str, CaseRef], text: str, phase: str) -> RunRecord | None:
    """The record of a run whose process died while executing it (an xdist worker crash).

    An errored run: what was recorded in the dead process (usage, the span)
    is lost with it. None when ``nodeid`` is no run of a known case.
    """
    key, run = run_of(nodeid, cases)
    if key not in cases:
        return None
    return RunRecord(
        case=cases[key],
        run=run,
        nodeid=nodeid,
        outcome=ERROR,
        message=first_line(f"{phase}: worker crashed: {text}" if phase != "call" else f"worker crashed: {text}"),
        error_type=CRASH_ERROR_TYPE,
        error_text=clip(text, TEXT_LIMIT),
        phase=phase,
        start_time=time.time(),
    )


def case_from_report(report: pytest.TestReport) -> dict[str, Any] | None:
    """The case an xdist worker put on its first setup report of the case (taken off the report)."""
    return report.__dict__.pop(CASE_ATTRIBUTE, None)


def run_of(nodeid: str, cases: dict[str, CaseRef]) -> tuple[str, int]:
    """(case key, run number) of a run's node id: ``<case>[runN]``, or a one-run case's plain id."""
    parsed = parse_run_id(nodeid)
    if parsed is None or (parsed[0] not in cases and nodeid in cases):
        return nodeid, 1
    return parsed
