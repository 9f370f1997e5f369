"""The one schema language of the files the plugin reads back: a JSON report (the baseline, ``diff``, the history
page, the merge), the journal, and what each field of them must be.

A file another process wrote (or a person edited) is checked field by field
before anything is rebuilt from it: a field that is missing, of another type
or out of range raises :class:`Malformed` naming the field by its path
(``records[3].run``, ``case.marks[0]``, ``rows[2].ci.low``), so that its
reader refuses the file with that text (the merge and ``diff``: exit status
2; the baseline and the journal: a usage error; the history page skips a file
of a folder) instead of failing later with a traceback. Fields this version
does not know are left alone (a newer writer's).

A :data:`Kind` checks one value (a number, a whole number, text, ...). A
:class:`Shape` reads an object into a typed one (a dataclass of the
``report.reader``), each field by its kind, a nested shape, a list of one
(:class:`ListOf`) or an object of one by name (:class:`MapOf`): read once,
checked once. The checks of a record and a case (:func:`check_record`,
:func:`check_case`) are written in the same kinds.

Two forms of a record are read: the JSON report's ``records[]`` (``REPORT``:
its case by ``case_key``, empty texts written as null) and the record as it
travels between processes, which the journal keeps (``JOURNAL``: its case as
``{"key": ...}``, every text a string).
"""

from __future__ import annotations

import math
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, NamedTuple

from ..config.marker import KEYWORDS
from ..config.settings import StatsConfig
from ..config.spec import pass_gate
from ..text import shorten
from ..vocabulary import BUDGET, DECIDED, OUTCOMES, ROLES, SOURCE_RECORD, SOURCE_SPAN

#: The two forms of a record: a JSON report's, and the journal's (as it travels between processes).
REPORT, JOURNAL = "report", "journal"
#: The phases a run's outcome is decided in.
PHASES = ("setup", "call", "teardown")
#: Longest text of a bad value shown in the message.
SHOWN = 60


class Malformed(ValueError):
    """A field read back from a file is missing or of the wrong kind; the message names it by its path."""


#: A field's kind as a plain pair, ``(test, what)``: :class:`Kind` is one, with a fast test.
KindPair = tuple[Callable[[Any], bool], str]


class Kind(KindPair):
    """A field's kind: ``(test, what)``, whether a value is one and what the message says it must be; and
    ``fast``, the same test as data (:class:`Fast`), which :func:`.schema_fast.check_records` applies inline, with no call
    per field, to 100,000 records in a fraction of a second. ``fast`` may be stricter than ``test`` (it
    refuses a ``str`` subclass), never laxer: where it says no, the record is checked by ``test``, which
    finds the field to name. A plain ``(test, what)`` pair is a kind too, with no fast test."""

    fast: Fast | None

    def __new__(cls, test: Callable[[Any], bool], what: str, fast: Fast | None = None) -> Kind:
        kind = super().__new__(cls, (test, what))
        kind.fast = fast
        return kind


class Fast(NamedTuple):
    """A kind as data: a value is one when its type is one of ``types`` (``NoneType`` among them: null is, and
    nothing else is asked of it), it lies within a float's range (``bounded``: a finite number, no integer
    past a float), is at least ``least``, is one of ``choices`` and is not empty (``filled``), as asked."""

    types: frozenset[type]
    bounded: bool = False
    least: float | None = None
    choices: frozenset[str] | None = None
    filled: bool = False


def _is_whole(value: Any) -> bool:
    return type(value) is int


def finite_number(value: Any) -> bool:
    """A finite JSON number that a float holds: not a bool, not ``1e400`` (read as infinity), not an integer
    past a float (``math.isfinite`` would raise on it)."""
    kind = type(value)
    return (kind is float and math.isfinite(value)) or (kind is int and -FLOAT_MAX <= value <= FLOAT_MAX)


#: The largest float: a finite number lies within ±FLOAT_MAX (NaN in no range).
FLOAT_MAX = sys.float_info.max
_NUMBERS = frozenset({int, float})


def whole(least: int) -> Kind:
    return Kind(
        lambda v: _is_whole(v) and v >= least,
        f"a whole number of at least {least}",
        Fast(frozenset({int}), least=least),
    )


def number(least: float | None = None) -> Kind:
    fast = Fast(_NUMBERS, bounded=True, least=least)
    if least is None:
        return Kind(finite_number, "a finite number", fast)
    return Kind(lambda v: finite_number(v) and v >= least, f"a number of at least {least:g}", fast)


def one_of(*values: str) -> Kind:
    return Kind(
        lambda v: isinstance(v, str) and v in values,
        "one of " + ", ".join(values),
        Fast(frozenset({str}), choices=frozenset(values)),
    )


def or_null(kind: Kind) -> Kind:
    test, what = kind
    fast = getattr(kind, "fast", None)
    return Kind(
        lambda v: v is None or test(v),
        f"{what} or null",
        None if fast is None else fast._replace(types=fast.types | {type(None)}),
    )


TEXT = Kind(lambda v: isinstance(v, str), "text", Fast(frozenset({str})))
NAME = Kind(lambda v: isinstance(v, str) and bool(v), "text, not empty", Fast(frozenset({str}), filled=True))
BOOL = Kind(lambda v: isinstance(v, bool), "true or false", Fast(frozenset({bool})))
OBJECT = Kind(lambda v: isinstance(v, dict), "an object", Fast(frozenset({dict})))
ARRAY = Kind(lambda v: isinstance(v, list), "an array", Fast(frozenset({list})))


def shown(value: Any) -> str:
    """A bad value as a message shows it: its ``repr``, shortened (an integer past a float: its digits, which
    ``repr`` of 4,300 or more refuses to give; a value nested too deeply: its type)."""
    if type(value) is int and value.bit_length() > 1024:
        try:
            return f"an integer of {len(str(abs(value)))} digits"
        except ValueError:  # past the interpreter's limit of digits (4,300)
            return "an integer of thousands of digits"
    try:
        return shorten(repr(value), SHOWN)
    except RecursionError:
        return f"a {type(value).__name__} nested too deeply"


def field(data: Mapping[str, Any], name: str, where: str, kind: KindPair, *, required: bool = True) -> Any:
    """``data[name]`` when it is of ``kind``; raises :class:`Malformed` naming ``where.name`` otherwise (and
    when it is missing, if ``required``). A missing optional field is None."""
    if name not in data:
        if required:
            raise Malformed(f"{_path(where, name)} is missing")
        return None
    value = data[name]
    test, what = kind
    if not test(value):
        raise Malformed(f"{_path(where, name)} must be {what}, got {shown(value)}")
    return value


def _path(where: str, name: str) -> str:
    return f"{where}.{name}" if where else name


def fields(
    data: Mapping[str, Any], where: str, kinds: Mapping[str, Kind], required: frozenset[str] = frozenset()
) -> None:
    """Every field of ``kinds`` that ``data`` has checked (those in ``required`` must be there)."""
    for name, kind in kinds.items():
        field(data, name, where, kind, required=name in required)


def an_object(value: Any, where: str) -> Mapping[str, Any]:
    if not isinstance(value, dict):
        raise Malformed(f"{where} must be an object, got {shown(value)}")
    return value


def an_array(value: Any, where: str) -> list[Any]:
    if not isinstance(value, list):
        raise Malformed(f"{where} must be an array, got {shown(value)}")
    return value


# -- typed objects -----------------------------------------------------------------------

#: A report's kinds as the pages read them: a number (not a bool, finite), a count (a whole number of at
#: least 0 a float holds exactly), text; absent and null are the field's default.
NUMBER = Kind(finite_number, "a number", Fast(_NUMBERS, bounded=True))
COUNT = Kind(lambda v: type(v) is int and 0 <= v < 2**53, "a whole number")
#: A whole number of at least 0 only shown (a run's number, what was dropped), as large as a record allows.
WHOLE = Kind(lambda v: type(v) is int and v >= 0, "a whole number", Fast(frozenset({int}), least=0))


@dataclass(frozen=True)
class ListOf:
    """An array whose every item is of one kind or shape."""

    item: Any


@dataclass(frozen=True)
class MapOf:
    """An object whose every value is of one kind or shape, by name (a row's ``scores``)."""

    value: Any


class Shape:
    """An object read into ``make`` (a class of the reader): each of ``fields`` (JSON name -> kind, shape,
    :class:`ListOf` or :class:`MapOf`) read as it says, under the attribute ``rename`` gives it (else its
    name); a field absent or null keeps ``make``'s default. Fields not listed are left alone."""

    def __init__(self, make: Callable[..., Any], fields: Mapping[str, Any], rename: Mapping[str, str] | None = None):
        self.make = make
        self.fields = [(name, kind, (rename or {}).get(name, name)) for name, kind in fields.items()]

    def read(self, value: Any, where: str) -> Any:
        data = an_object(value, where)
        found = {}
        for name, kind, attribute in self.fields:
            inner = data.get(name)
            if inner is not None:
                found[attribute] = read(inner, kind, _path(where, name))
        return self.make(**found)


def read(value: Any, kind: Any, where: str) -> Any:
    """``value`` read as ``kind`` says (a :data:`Kind`, a :class:`Shape`, a :class:`ListOf` or a :class:`MapOf`);
    :class:`Malformed` names the first field that is not what it must be, by its path."""
    if isinstance(kind, Shape):
        return kind.read(value, where)
    if isinstance(kind, ListOf):
        return [read(item, kind.item, f"{where}[{i}]") for i, item in enumerate(an_array(value, where))]
    if isinstance(kind, MapOf):
        return {
            str(name): read(inner, kind.value, f"{where}.{name}") for name, inner in an_object(value, where).items()
        }
    test, what = kind
    if not test(value):
        raise Malformed(f"{where} must be {what}, got {shown(value)}")
    return value


# -- usage and cases --------------------------------------------------------------------

_TOKENS = whole(0)
USAGE_FIELDS: dict[str, Kind] = {
    "model": TEXT,
    "input_tokens": _TOKENS,
    "output_tokens": _TOKENS,
    "cached_input_tokens": _TOKENS,
    "cost": number(),
    "cache_creation_input_tokens": _TOKENS,
    "reasoning_tokens": _TOKENS,
    "source": one_of(SOURCE_RECORD, SOURCE_SPAN),
    "request_model": TEXT,
    "priced": BOOL,
    "role": one_of(*ROLES),
}


def check_usage(data: Any, where: str) -> None:
    """One usage entry (``model.run.Usage.to_dict``)."""
    fields(an_object(data, where), where, USAGE_FIELDS)


CASE_FIELDS: dict[str, Kind] = {
    "key": NAME,
    "benchmark": TEXT,
    "case": TEXT,
    "label": TEXT,
    "order": whole(0),
    "runs": whole(1),
    "params": ARRAY,
    "path": TEXT,
    "lineno": whole(0),
    "function": TEXT,
    "marks": ARRAY,
}
CASE_REQUIRED = frozenset({"key", "benchmark", "case"})


def check_case(data: Any, where: str) -> None:
    """A case (``model.case.CaseRef.to_dict``): its fields, its parameters as ``[name, text]`` pairs, and its
    marks as ``[keyword, value]`` pairs that the ``probability`` marker accepts."""
    case = an_object(data, where)
    fields(case, where, CASE_FIELDS, CASE_REQUIRED)
    for i, pair in enumerate(case.get("params") or ()):
        if not (isinstance(pair, list) and len(pair) == 2 and all(isinstance(p, str) for p in pair)):
            raise Malformed(f"{where}.params[{i}] must be a pair [name, text], got {shown(pair)}")
    for i, pair in enumerate(case.get("marks") or ()):
        if not (isinstance(pair, list) and len(pair) == 2 and isinstance(pair[0], str)):
            raise Malformed(f"{where}.marks[{i}] must be a pair [keyword, value], got {shown(pair)}")
        parse = KEYWORDS.get(pair[0])
        if parse is None:
            raise Malformed(f"{where}.marks[{i}]: {pair[0]!r} is no probability() keyword")
        try:
            parse(pair[1])
        except (TypeError, ValueError) as exc:
            raise Malformed(f"{where}.marks[{i}]: {exc}") from None
    if case.get("marks") and "runs" in case:  # keywords that contradict each other (min_rate and min_passes)
        try:
            pass_gate({name: value for name, value in case["marks"]}, case["runs"], StatsConfig())
        except (TypeError, ValueError) as exc:
            raise Malformed(f"{where}.marks: {exc}") from None


SCORE_FIELDS: dict[str, Kind] = {
    "name": NAME,
    "value": number(),
    "threshold": or_null(number()),
    "explanation": or_null(TEXT),
}
SCORE_REQUIRED = frozenset({"name", "value"})


def check_score(data: Any, where: str) -> None:
    """One score (``model.run.Score.to_dict``): a name, a finite value, a finite threshold or null."""
    fields(an_object(data, where), where, SCORE_FIELDS, SCORE_REQUIRED)


def check_scores(data: Any, where: str) -> None:
    """A run's scores: an array of :func:`check_score` entries."""
    for i, entry in enumerate(an_array(data, where)):
        check_score(entry, f"{where}[{i}]")


# -- records ------------------------------------------------------------------------------


def _record_fields(form: str) -> dict[str, Kind]:
    text = TEXT if form == JOURNAL else or_null(TEXT)
    return {
        "run": whole(1),
        "nodeid": NAME,
        "outcome": one_of(*OUTCOMES),
        "duration": number(0),
        "message": text,
        "error_type": text,
        "error_text": text,
        "phase": one_of(*PHASES),
        "usage": ARRAY,
        "extra_cost": number(),
        "trace_id": text,
        "span_id": text,
        "start_time": number(0),
        "stopped": one_of("", DECIDED, BUDGET) if form == JOURNAL else or_null(one_of(DECIDED, BUDGET)),
        "retries": ARRAY,
        "transcript": ARRAY,
        "transcript_dropped": whole(0),
        "scores": ARRAY,
    }


RECORD_FIELDS = {form: _record_fields(form) for form in (REPORT, JOURNAL)}
RECORD_REQUIRED = frozenset({"run", "nodeid", "outcome"})


def check_record(data: Any, where: str, form: str = REPORT) -> str:
    """A run's record in ``form`` (:data:`REPORT` or :data:`JOURNAL`); returns the key of its case."""
    record = an_object(data, where)
    fields(record, where, RECORD_FIELDS[form], RECORD_REQUIRED)
    if form == JOURNAL:
        key = field(an_object(field(record, "case", where, OBJECT), f"{where}.case"), "key", f"{where}.case", NAME)
    else:
        key = field(record, "case_key", where, NAME)
    for i, entry in enumerate(record.get("usage") or ()):
        check_usage(entry, f"{where}.usage[{i}]")
    check_scores(record.get("scores") or [], f"{where}.scores")
    for i, entry in enumerate(record.get("retries") or ()):
        an_object(entry, f"{where}.retries[{i}]")
    for i, entry in enumerate(record.get("transcript") or ()):
        cut = an_object(entry, f"{where}.transcript[{i}]").get("truncated")
        if cut is not None and not (isinstance(cut, dict) and all(_is_whole(v) for v in cut.values())):
            raise Malformed(f"{where}.transcript[{i}].truncated must be an object of lengths, got {shown(cut)}")
    return str(key)
