"""The run's record onto its teardown report: how a record reaches the aggregating process, serial or xdist.

At the teardown report the run is closed (:func:`.context.close`) and its
record put on the report as plain builtins (``report.prob_record``), with
every entry of ``run.report_extras`` (a feature's data, such as the run's
spans on an xdist worker) and any late usage. xdist's report serialization
carries them to the controller unchanged; in a serial session the process
that attached the record reads it back (``RunPhases.take_attached``).
"""

from __future__ import annotations

from typing import Any

import pytest

from ..model.run import RunRecord
from ..model.run_state import CurrentRun
from ..vocabulary import LATE_ATTRIBUTE, RECORD_ATTRIBUTE
from . import context


def attach(
    report: pytest.TestReport, run: CurrentRun, late: context.LateQueue, local: bool = False
) -> tuple[dict[str, Any], RunRecord]:
    """Put the finished record on the teardown report, as plain builtins, with the late usage waiting in
    ``late``; returns (the report data, the record).

    ``local``: this process aggregates (a serial session), so the report will be read back here, and the
    record names its case by key (the aggregating process has the case).
    """
    record = context.close(run)
    data = record.to_dict(case=not local)
    setattr(report, RECORD_ATTRIBUTE, data)
    if run.run >= run.case.runs:
        run.case.release_dict()
    for name, value in run.report_extras.items():
        setattr(report, name, value)
    if late.pending:
        setattr(report, LATE_ATTRIBUTE, late.take())
    return data, record
