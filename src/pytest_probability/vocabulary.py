"""The words every stage shares: outcomes, row statuses, verdicts, stop causes and node-id parts.

A leaf: pure and standard-library only, imported by any module and importing
none of the package. A word that two modules must agree on is defined here
once (the outputs, the decisions channel and the JSON report all spell a
verdict the same way because they read it from here).
"""

from __future__ import annotations

import functools
import re

# -- run outcomes ----------------------------------------------------------------

PASS = "pass"
FAIL = "fail"
ERROR = "error"
SKIP = "skip"
OUTCOMES = (PASS, FAIL, ERROR, SKIP)

#: Model name used for usage recorded without one.
UNKNOWN_MODEL = "unknown"

# -- row statuses (docs/reference.md) ----------------------------------------------

STATUS_PASS = "pass"  # every counted run passed
STATUS_FLAKY = "flaky"  # passes and fails (errors possibly too)
STATUS_ERRORED = "errored"  # passes and errors, no fails
STATUS_FAIL = "fail"  # fails, no pass
STATUS_ERROR = "error"  # every counted run errored
STATUS_SKIP = "skip"  # no counted run: every run skipped
STATUSES = (STATUS_PASS, STATUS_FLAKY, STATUS_ERRORED, STATUS_FAIL, STATUS_ERROR, STATUS_SKIP)

# -- verdicts of gates and comparisons -------------------------------------------

PASSED, FAILED, UNDECIDED = "pass", "fail", "undecided"
#: The verdict of a gated case every run of which skipped: no sample, nothing decided, not a failure.
SKIPPED = "skip"
#: A verdict as a number, for metrics: pass 1, undecided 0, fail -1 (a skipped gate has no value).
VERDICT_VALUES = {PASSED: 1, UNDECIDED: 0, FAILED: -1}

#: Multiplicity adjustments of a family of comparisons (``--prob-adjust``).
ADJUSTMENTS = ("holm", "bonferroni", "bh", "none")

# -- why a run was not executed (RunRecord.stopped) --------------------------------

DECIDED, BUDGET = "decided", "budget"

# -- verdict items ------------------------------------------------------------------

#: The kind of a case's gate item; other kinds (``baseline``) come from the decisions that judge cases.
GATE_KIND = "gate"
BASELINE_KIND = "baseline"


def xfail_reason(kind: str) -> str:
    """Why a judged case's failing run is reported as xfailed: its verdict item decides."""
    return "gated case: its gate item decides" if kind == GATE_KIND else f"compared case: its {kind} item decides"


def verdict_key(case_key: str, kind: str) -> str:
    """The decision key of a case's verdict of ``kind``: the case key itself for a gate."""
    return case_key if kind == GATE_KIND else f"{case_key}[{kind}]"


def verdict_item_name(case_id: str, kind: str = GATE_KIND) -> str:
    """A verdict item's name: ``refund-terse[gate]``, or the kind alone for an unparametrized benchmark."""
    return f"{case_id}[{kind}]" if case_id else kind


@functools.lru_cache(maxsize=None)
def verdict_item_id(kind: str) -> re.Pattern[str]:
    """A verdict item's node id, ``<case key>[kind]`` or ``<case key>::kind``; group ``key`` is the case key."""
    return re.compile(rf"^(?P<key>.*?)(?:\[{re.escape(kind)}\]|::{re.escape(kind)})$")


# -- runs on the wire ----------------------------------------------------------------

#: A run's node id: ``<case key>[runN]`` or ``<case key>::runN``.
RUN_ID = re.compile(r"^(?P<key>.*?)(?:\[run(?P<a>\d+)\]|::run(?P<b>\d+))$")


@functools.lru_cache(maxsize=4096)
def run_text(run: int) -> str:
    """``run<N>``: one string per run number, shared by the node ids of every case's run N."""
    return f"run{run}"


def parse_run_id(nodeid: str) -> tuple[str, int] | None:
    """(case key, run number) of a run's node id, else None."""
    match = RUN_ID.match(nodeid)
    if match is None:
        return None
    return match.group("key"), int(match.group("a") or match.group("b"))


#: Attribute of a run's teardown report carrying its record.
RECORD_ATTRIBUTE = "prob_record"
#: Attribute of a teardown report (and key of an xdist worker's output) carrying usage
#: recorded after its run had ended.
LATE_ATTRIBUTE = "prob_late_usage"
#: Attribute of a run's setup report carrying its case (on an xdist worker, once per case).
CASE_ATTRIBUTE = "prob_case"
#: ``workerinput`` key of the decisions channel's folder.
WORKER_CHANNEL = "prob_gate_folder"
#: ``error_type`` of the record of a run whose xdist worker crashed.
CRASH_ERROR_TYPE = "WorkerCrashed"
