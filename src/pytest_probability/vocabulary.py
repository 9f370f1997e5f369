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
#: Where a usage entry came from: ``record_usage()``, or a span's GenAI attributes.
SOURCE_RECORD, SOURCE_SPAN = "record", "span"
#: Whose usage it is: the system under test's, or the judge's that grades its answers (LLM-as-judge):
#: ``record_usage(role=...)``, ``pytest_probability.judging()``. The judge's is apart in every output.
ROLE_SYSTEM, ROLE_JUDGE = "system", "judge"
ROLES = (ROLE_SYSTEM, ROLE_JUDGE)
#: ``prob_span_usage``: spans fill the models a run did not record, are always added, or are not read.
SPAN_FILL, SPAN_ADD, SPAN_OFF = "fill", "add", "off"
SPAN_USAGE_MODES = (SPAN_FILL, SPAN_ADD, SPAN_OFF)

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

#: The kind of a case's gate item (``<case>[gate]``).
GATE_KIND = "gate"
#: The markers of the async plugins (pytest-asyncio, anyio, pytest-trio), which a verdict item never has.
ASYNC_MARKERS = frozenset({"asyncio", "anyio", "trio"})
#: The kinds of a benchmark's verdict items (``<benchmark>[baseline]``, ``<benchmark>[compare:ARM]``),
#: which judge its cases together: the comparison with the baseline, and one A/B arm's.
BASELINE_KIND = "baseline"
COMPARE_KIND = "compare"
BENCHMARK_KINDS = (BASELINE_KIND, COMPARE_KIND)
#: What the xfail reason of a judged case's failing run calls each kind (fixed words: logs and scripts match them).
_XFAIL_WORDS = {GATE_KIND: "gate", BASELINE_KIND: "baseline", COMPARE_KIND: "comparison"}


def xfail_reason(kind: str, message: str) -> str:
    """Why a judged case's failing run is reported as xfailed: ``probability gate: <its message>``
    (``comparison`` for an A/B margin, ``baseline`` for ``--prob-margin``)."""
    return f"probability {_XFAIL_WORDS.get(kind, kind)}: {message or 'AssertionError'}"


def error_excluded_reason(error: str) -> str:
    """The xfail reason of an errored run that ini ``prob_errors = exclude`` leaves out of its gate."""
    return f"probability gate, error excluded: {error}"


def verdict_key(scope: str, kind: str, detail: str = "") -> str:
    """The decision key of a verdict: a gated case's key itself; ``<benchmark node id>[baseline]`` or
    ``<benchmark node id>[compare:ARM]`` (``detail`` the arm) for a benchmark's verdicts, which is
    also the verdict item's node id."""
    if kind == GATE_KIND:
        return scope
    return f"{scope}[{kind}:{detail}]" if detail else f"{scope}[{kind}]"


def verdict_item_name(case_id: str, kind: str = GATE_KIND) -> str:
    """A gate item's name: ``refund-terse[gate]``, or ``gate`` alone for an unparametrized benchmark."""
    return f"{case_id}[{kind}]" if case_id else kind


def benchmark_verdict_name(function: str, kind: str, detail: str = "") -> str:
    """A benchmark verdict item's name, beside the benchmark: ``bench_cls[baseline]``,
    ``bench_triage[compare:few_shot]``."""
    return f"{function}[{kind}:{detail}]" if detail else f"{function}[{kind}]"


@functools.cache
def verdict_item_id(kind: str) -> re.Pattern[str]:
    """A gate item's node id, ``<case key>[gate]`` or ``<case key>::gate``; group ``key`` is the case key."""
    return re.compile(rf"^(?P<key>.*?)(?:\[{re.escape(kind)}\]|::{re.escape(kind)})$")


@functools.cache
def benchmark_verdict_id(kind: str) -> re.Pattern[str]:
    """A benchmark verdict item's node id: group ``scope`` is the benchmark's node id, ``detail`` the arm."""
    return re.compile(rf"^(?P<scope>.+?)\[{re.escape(kind)}(?::(?P<detail>.*))?\]$")


# -- the --prob-history folder ------------------------------------------------------

#: The name of each report in a ``--prob-history`` folder: ``prob-report-<UTC time>-<pid>.json`` (sorts by
#: time); the comparisons read the newest as the baseline, and the case states the newest as their nights.
HISTORY_PREFIX = "prob-report-"

# -- runs on the wire ----------------------------------------------------------------

#: A run's node id: ``<case key>[runN]`` or ``<case key>::runN``.
RUN_ID = re.compile(r"^(?P<key>.*?)(?:\[run(?P<a>\d+)\]|::run(?P<b>\d+))$")


@functools.lru_cache(maxsize=4096)
def run_text(run: int) -> str:
    """``run<N>``: one string per run number, shared by the node ids of every case's run N."""
    return f"run{run}"


def parse_run_id(nodeid: str) -> tuple[str, int] | None:
    """(case key, run number) of a run's node id, else None: what :data:`RUN_ID` matches, by string
    operations (a collection of 10,000 runs reads every node id; the regex's lazy key tries every
    position). The suffix is the last ``[run`` (or ``::run``): its digits hold no bracket or colon."""
    if nodeid.endswith("\n"):  # the regex's "$" matches before a last newline too
        nodeid = nodeid[:-1]
    if nodeid.endswith("]"):
        at = nodeid.rfind("[run")
        digits = nodeid[at + 4 : -1] if at >= 0 else ""
    else:
        at = nodeid.rfind("::run")
        digits = nodeid[at + 5 :] if at >= 0 else ""
    key = nodeid[:at]
    # \d is a Unicode decimal digit; "." (the key) is anything but a newline.
    if at < 0 or not digits.isdecimal() or "\n" in key:
        return None
    return key, int(digits)


#: Attribute of a run's teardown report carrying its record.
RECORD_ATTRIBUTE = "prob_record"
#: Attribute of a teardown report (and key of an xdist worker's output) carrying usage
#: recorded after its run had ended.
LATE_ATTRIBUTE = "prob_late_usage"
#: Key of an xdist worker's output carrying the records of runs interrupted before their teardown.
INTERRUPTED_ATTRIBUTE = "prob_interrupted"
#: Attribute of a run's setup report carrying its case (on an xdist worker, once per case).
CASE_ATTRIBUTE = "prob_case"
#: ``workerinput`` key of the decisions channel's folder.
WORKER_CHANNEL = "prob_gate_folder"
#: ``error_type`` of the record of a run whose xdist worker crashed.
CRASH_ERROR_TYPE = "WorkerCrashed"
#: What wakes a feature asleep (``protocols.Registry.wake``) beside marker keywords: a run recorded a score.
SCORED = "record_score()"
