"""``record.bulk.check_records`` and ``check_cases``: the merge's cheap shape check says exactly what the check
field by field says (issue 46, item 15d).

The fast tests (``shape.Fast``) may be stricter than the kinds' own tests, never laxer: for every field of a
record, a usage entry, a score and a case, every bad value is refused with the message ``check_record`` (or
``check_case``) gives for it, and every good one is taken, whichever records came before it.
"""

from __future__ import annotations

import copy
import math
from typing import Any

import pytest

from pytest_probability.model.case import CaseRef
from pytest_probability.model.run import RunRecord, Score, Usage
from pytest_probability.record import bulk, shape
from pytest_probability.report.json_report import record_dict

CASE = CaseRef(
    "bench_x.py::bench_y::c", "y", "c", order=0, runs=3, params=(("c", "1"),), path="bench_x.py", lineno=2,
    function="bench_y", marks=(("min_rate", 0.5),),
)  # fmt: skip
RECORD = RunRecord(
    case=CASE, run=2, nodeid="bench_x.py::bench_y::c[run2]", outcome="fail", duration=0.25, message="no",
    error_type="AssertionError", error_text="no", usage=(Usage("m", 10, 2, 1, 0.5),), start_time=1.0,
    retries=({"attempt": 1, "error_type": "E", "error": "x", "wait": 0.0},),
    transcript=({"output": "x", "truncated": {"output": 9}},), scores=(Score("judge", 0.5, 0.25, "fine"),),
)  # fmt: skip

#: Values of no field's kind, or out of its range: each is put in every field in turn.
BAD: list[Any] = [None, True, "", "text", -1, 0, 1.5, -0.5, math.inf, -math.inf, math.nan, 10**400, [], {}, [1]]


def report_form() -> dict[str, Any]:
    return record_dict(RECORD)


def journal_form() -> dict[str, Any]:
    return RECORD.to_dict(case=False)


def verdict(check: Any, *args: Any) -> str:
    """What a check says: ``ok``, or its message."""
    try:
        check(*args)
    except shape.Malformed as exc:
        return str(exc)
    return "ok"


def mutations(good: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """``good`` with each field (nested ones too) set to each bad value in turn, or removed."""
    out = []
    paths = [(name,) for name in good]
    for nested in ("usage", "scores", "retries", "transcript"):
        for i, entry in enumerate(good.get(nested) or ()):
            paths += [(nested, i, name) for name in entry]
    paths.append(("transcript", 0, "truncated", "output"))
    for path in paths:
        for value in [*BAD, "<removed>"]:
            changed = copy.deepcopy(good)
            target = changed
            for step in path[:-1]:
                target = target[step]
            if value == "<removed>":
                del target[path[-1]]
            else:
                target[path[-1]] = value
            out.append((f"{path}={value!r}", changed))
    return out


@pytest.mark.parametrize(("form", "good"), [(shape.REPORT, report_form), (shape.JOURNAL, journal_form)])
def test_the_fast_check_of_records_says_what_the_check_field_by_field_says(form: str, good: Any) -> None:
    record = good()
    assert bulk.check_records([record], "records", form) == [CASE.key]
    for label, changed in mutations(record):
        slow = verdict(shape.check_record, changed, "records[1]", form)
        # after a good record (its signature seen and taken), and alone
        fast = verdict(bulk.check_records, [good(), changed], "records", form)
        assert fast == slow, label
        assert verdict(bulk.check_records, [changed], "records", form) == slow.replace("records[1]", "records[0]")


def test_the_fast_check_of_cases_says_what_the_check_field_by_field_says() -> None:
    good = CASE.to_dict()
    assert bulk.check_cases([copy.deepcopy(good)] * 3, "cases") == [CASE.key] * 3
    paths = [(name,) for name in good] + [("params", 0), ("params", 0, 0), ("marks", 0), ("marks", 0, 1)]
    for path in paths:
        for value in [*BAD, "<removed>", ["min_rate", 7], ["nope", 1]]:
            changed = copy.deepcopy(good)
            target: Any = changed
            for step in path[:-1]:
                target = target[step]
            if value == "<removed>":
                del target[path[-1]]
            else:
                target[path[-1]] = value
            slow = verdict(shape.check_case, changed, "cases[1]")
            assert verdict(bulk.check_cases, [copy.deepcopy(good), changed], "cases") == slow, (path, value)
    # marks taken once are taken again only under the same runs (min_passes above a case's runs is refused)
    passes = {**copy.deepcopy(good), "marks": [["min_passes", 3]]}
    fewer = {**copy.deepcopy(passes), "runs": 2}
    assert "min_passes" in verdict(bulk.check_cases, [passes, fewer], "cases")
