"""Many records and cases read back from a file checked at once, cheaply: the merge's shard reports.

:func:`check_records` and :func:`check_cases` say what :func:`.schema.check_record` and
:func:`.schema.check_case` say of each (the same refusal, naming the same field), at a fraction of the cost:
each kind's fast test (:class:`.schema.Fast`) is compiled per kind of entry into a table (:class:`Table`),
and an entry passes when its signature (the types of its fields, the values of the few that have a choice)
is one already found good and its numbers lie in their bounds; an entry the fast tests refuse is checked by
the field-by-field check, which names what is wrong. ``tests/unit/test_schema_fast.py`` checks the two agree
on every field; ``benchmarks/shape_check.py`` measures them.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any, NamedTuple

from .schema import (
    CASE_FIELDS,
    FLOAT_MAX,
    JOURNAL,
    RECORD_FIELDS,
    REPORT,
    SCORE_FIELDS,
    USAGE_FIELDS,
    Fast,
    Kind,
    check_case,
    check_record,
)


class Table(NamedTuple):
    """The fast tests of one kind of entry's fields (a record's, a usage entry's, a score's), compiled."""

    #: Every field, and the fields with a few allowed values (``outcome``, ``phase``, ``source``): the entry's
    #: signature is the types of the first and the values of the second.
    names: tuple[str, ...]
    chosen: tuple[str, ...]
    #: Each field's types, then each chosen field's values; an absent field reads as null (an absent optional
    #: field that takes no null is left to the slow check, and a required one fails: none takes null).
    allowed: tuple[frozenset[Any], ...]
    #: The numbers' bounds (name, lowest, highest: a float's range for a finite number, which NaN is not in)
    #: and the texts that must not be empty.
    bounded: tuple[tuple[str, float, float], ...]
    filled: tuple[str, ...]


def compile_table(kinds: Mapping[str, Kind]) -> Table:
    fasts: dict[str, Fast] = {}
    for name, kind in kinds.items():
        assert kind.fast is not None, "every field of a record has a fast test"
        fasts[name] = kind.fast
    nullable = {name for name, fast in fasts.items() if type(None) in fast.types}
    choices = {name: fast.choices for name, fast in fasts.items() if fast.choices is not None}
    chosen = tuple(choices)
    return Table(
        tuple(fasts),
        chosen,
        (
            *(fast.types for fast in fasts.values()),
            *(choices[name] | ({None} if name in nullable else set()) for name in chosen),
        ),
        tuple(
            (
                name,
                -FLOAT_MAX if fast.least is None else fast.least,
                FLOAT_MAX if fast.bounded else math.inf,
            )
            for name, fast in fasts.items()
            if fast is not None and (fast.bounded or fast.least is not None)
        ),
        tuple(name for name, fast in fasts.items() if fast is not None and fast.filled),
    )


def _fits(entry: Any, table: Table, seen: set[tuple[Any, ...]]) -> bool:
    """Whether ``entry`` passes :func:`.schema.fields` by ``table``'s fast tests: its signature (the types of all its
    fields and the values of the chosen ones, as one tuple made in C) looked up among those already found good
    (``seen``, per call of :func:`check_records`: a report's records have few), then the numbers' bounds and
    the texts that must not be empty."""
    if type(entry) is not dict:
        return False
    get = entry.get
    signature = (*map(type, map(get, table.names)), *map(get, table.chosen))
    try:
        known = signature in seen
    except TypeError:  # a chosen field's value that is no text: a list, an object
        return False
    if not known:
        if not all(map(frozenset.__contains__, table.allowed, signature)):
            return False
        seen.add(signature)
    for name, lowest, highest in table.bounded:
        value = get(name)
        if value is not None and not lowest <= value <= highest:  # below its least; infinity, NaN
            return False
    for name in table.filled:
        if not get(name):
            return False
    return True


def _record_fits(record: Any, form: str, seen: dict[str, set[tuple[Any, ...]]]) -> bool:
    """Whether ``record`` passes :func:`check_record`, by the fast tests (its fields, its case's key, its usage,
    scores, retries and transcript entries)."""
    if not _fits(record, _RECORDS[form], seen["record"]):
        return False
    if form == JOURNAL:
        case = record.get("case")
        if type(case) is not dict or type(case.get("key")) is not str or not case["key"]:
            return False
    elif type(record.get("case_key")) is not str or not record["case_key"]:
        return False
    for usage in record.get("usage") or ():
        if not _fits(usage, _USAGE, seen["usage"]):
            return False
    for score in record.get("scores") or ():
        if not _fits(score, _SCORES, seen["score"]):
            return False
    for entry in record.get("retries") or ():
        if type(entry) is not dict:
            return False
    for entry in record.get("transcript") or ():
        if type(entry) is not dict:
            return False
        cut = entry.get("truncated")
        if cut is not None and (type(cut) is not dict or any(type(v) is not int for v in cut.values())):
            return False
    return True


def check_records(records: list[Any], where: str, form: str = REPORT) -> list[str]:
    """Every record of ``records`` (``where``: ``records``, ``skipped_runs``) checked as :func:`check_record`
    checks one, and their case keys. Linear and cheap: each record passes the fast tests of its fields
    (:class:`.schema.Fast`, :func:`_fits`); only a record they refuse is checked by :func:`check_record`, which
    raises :class:`.schema.Malformed` naming the field (``records[3].run``), or passes it (the fast tests are the stricter).
    ``benchmarks/shape_check.py`` measures it."""
    seen: dict[str, set[tuple[Any, ...]]] = {"record": set(), "usage": set(), "score": set()}
    keys: list[str] = []
    for i, record in enumerate(records):
        if _record_fits(record, form, seen):
            keys.append(record["case"]["key"] if form == JOURNAL else record["case_key"])
        else:
            keys.append(check_record(record, f"{where}[{i}]", form))
    return keys


_RECORDS = {form: compile_table(RECORD_FIELDS[form]) for form in (REPORT, JOURNAL)}
_USAGE = compile_table(USAGE_FIELDS)
_SCORES = compile_table(SCORE_FIELDS)
_CASES = compile_table(CASE_FIELDS)


def _case_fits(case: Any, seen: set[tuple[Any, ...]], marks_seen: set[tuple[str, Any]]) -> bool:
    """Whether ``case`` passes :func:`check_case`, by the fast tests, with marks already found good (under the
    same runs) in ``marks_seen``."""
    if not _fits(case, _CASES, seen):
        return False
    for pair in case.get("params") or ():
        if type(pair) is not list or len(pair) != 2 or type(pair[0]) is not str or type(pair[1]) is not str:
            return False
    return not case.get("marks") or _marks_key(case) in marks_seen


def _marks_key(case: Mapping[str, Any]) -> tuple[str, Any]:
    return repr(case["marks"]), case.get("runs")


def check_cases(cases: list[Any], where: str) -> list[str]:
    """Every case of ``cases`` checked as :func:`check_case` checks one, and their keys; as cheap as
    :func:`check_records`: the fields by the fast tests, and each distinct set of marks parsed once."""
    seen: set[tuple[Any, ...]] = set()
    marks_seen: set[tuple[str, Any]] = set()
    for i, case in enumerate(cases):
        if not _case_fits(case, seen, marks_seen):
            check_case(case, f"{where}[{i}]")
            if case.get("marks"):
                marks_seen.add(_marks_key(case))
    return [case["key"] for case in cases]
