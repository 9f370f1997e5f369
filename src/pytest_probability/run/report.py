"""The run's record onto its teardown report: how a record reaches the aggregating process, serial or xdist.

At the teardown report the run is closed (:func:`.context.close`) and its
record put on the report as plain builtins (``report.prob_record``), with
every entry of ``run.report_extras`` (a feature's data, such as the run's
spans on an xdist worker) and any late usage. xdist's report serialization
carries them to the controller unchanged; in a serial session the process
that attached the record reads it back (:func:`take_attached`).
"""

from __future__ import annotations

from typing import Any

import pytest

from ..model.run import CurrentRun, RunRecord
from ..vocabulary import LATE_ATTRIBUTE, RECORD_ATTRIBUTE
from . import context

#: (report data, record) of the last record attached in a process that aggregates (see :func:`attach`).
_attached: tuple[dict[str, Any], RunRecord] | None = None


def attach(report: pytest.TestReport, run: CurrentRun, local: bool = False) -> None:
    """Put the finished record on the teardown report, as plain builtins.

    ``local``: this process aggregates (a serial session), so the report will be read back
    here: :func:`take_attached` then gives the record itself instead of a rebuilt one, and
    the record names its case by key (this process has the case: ``State.cases``).
    """
    global _attached
    record = context.close(run)
    data = record.to_dict(case=not local)
    setattr(report, RECORD_ATTRIBUTE, data)
    _attached = (data, record) if local else None
    if run.run >= run.case.runs:
        run.case.release_dict()
    for name, value in run.report_extras.items():
        setattr(report, name, value)
    if context.has_late():
        setattr(report, LATE_ATTRIBUTE, context.take_late())


def take_attached() -> tuple[dict[str, Any], RunRecord] | None:
    """The (report data, record) :func:`attach` last put on a report in this process, once."""
    global _attached
    attached, _attached = _attached, None
    return attached
