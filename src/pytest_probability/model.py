"""The data model: what one run produced.

Pure and pytest-free. A :class:`RunRecord` is built in the process that
executed the run, travels to the aggregating process as plain builtins
(:meth:`RunRecord.to_dict` / :meth:`RunRecord.from_dict`), and is the only
input of aggregation, reporting and export.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any, Mapping

PASS = "pass"
FAIL = "fail"
ERROR = "error"
SKIP = "skip"
OUTCOMES = (PASS, FAIL, ERROR, SKIP)

#: Model name used for usage recorded without one.
UNKNOWN_MODEL = "unknown"


@dataclass(frozen=True, slots=True)
class Usage:
    """Tokens and spend of one ``record_usage()`` call."""

    model: str = UNKNOWN_MODEL
    input_tokens: int = 0
    output_tokens: int = 0
    cached_input_tokens: int = 0
    cost: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        return {
            "model": self.model,
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "cached_input_tokens": self.cached_input_tokens,
            "cost": self.cost,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Usage:
        return cls(**{name: data[name] for name in _USAGE_FIELDS if name in data})


_USAGE_FIELDS = ("model", "input_tokens", "output_tokens", "cached_input_tokens", "cost")


#: Longest parameter text kept (the JSON, spans and HTML); longer values are cut with "…".
PARAM_VALUE_LIMIT = 256
#: Parameter values whose text is made when it is read: immutable, and cheap and safe to ``repr``.
_PLAIN_PARAM_TYPES = frozenset((str, int, float, bool, type(None)))


def param_text(value: object) -> str:
    """A parameter value as the short text the reports show: a string as is, else its ``repr``."""
    if isinstance(value, str):
        text = value
    else:
        try:
            text = repr(value)
        except Exception as exc:  # pytest collects such a parameter (its id is argname + index); so do we
            text = f"<{type(value).__qualname__} object: repr() raised {type(exc).__qualname__}>"
    return text if len(text) <= PARAM_VALUE_LIMIT else text[: PARAM_VALUE_LIMIT - 1] + "…"


class CaseRef:
    """Which case a run belongs to; identical for all runs of one case.

    Immutable, compared and hashed by value like a frozen dataclass. Not a
    dataclass because two of its attributes are made when read (one object per
    case, kept for the whole session; see docs/performance.md, "Scale"):

    - :attr:`label` is derived from :attr:`benchmark` and :attr:`case` unless
      one was given;
    - :attr:`params` may be given as the parametrization's own mapping (name ->
      value, held by pytest's items anyway) when every value is a string,
      number, bool or None; their texts are made on each read.
    """

    __slots__ = ("key", "benchmark", "case", "_label", "order", "runs", "_params", "path", "lineno", "function",
                 "marks", "_dict")

    #: Node id of the case without the run suffix: ``bench_x.py::bench_classify::identify_pii``.
    key: str
    #: Benchmark name as the user knows it: ``classify`` (``BenchTriage.classify`` in a class).
    benchmark: str
    #: pytest's composed parametrization id, ``""`` for an unparametrized benchmark.
    case: str
    #: Position of the case in collection order; rows are sorted by it.
    order: int
    #: Runs collected for the case.
    runs: int
    #: Source location of the benchmark function.
    path: str
    lineno: int
    function: str
    #: Validated ``probability`` marker keywords of the case (gates, latency), sorted.
    marks: tuple[tuple[str, Any], ...]

    def __init__(self, key: str, benchmark: str, case: str, label: str | None = None, order: int = 0,
                 runs: int = 0, params: tuple[tuple[str, str], ...] | Mapping[str, Any] = (), path: str = "",
                 lineno: int = 0, function: str = "", marks: tuple[tuple[str, Any], ...] = ()) -> None:
        if isinstance(params, Mapping):
            if any(type(v) not in _PLAIN_PARAM_TYPES for v in params.values()):
                params = tuple((k, param_text(v)) for k, v in params.items())
            elif not params:
                params = ()
        else:
            params = tuple(params)
        put = object.__setattr__
        put(self, "key", key)
        put(self, "benchmark", benchmark)
        put(self, "case", case)
        # None: derived when read (collection gives none, so builds no label string per case)
        put(self, "_label", None if label is None or label == _derived_label(benchmark, case) else label)
        put(self, "order", order)
        put(self, "runs", runs)
        put(self, "_params", params)
        put(self, "path", path)
        put(self, "lineno", lineno)
        put(self, "function", function)
        put(self, "marks", marks)
        put(self, "_dict", None)

    @property
    def label(self) -> str:
        """Row label: ``classify::identify_pii`` or ``always``."""
        label = self._label
        return _derived_label(self.benchmark, self.case) if label is None else label

    @property
    def params(self) -> tuple[tuple[str, str], ...]:
        """Parameter values as short strings (:func:`param_text`), by argument name."""
        params = self._params
        if isinstance(params, tuple):
            return params
        return tuple((k, param_text(v)) for k, v in params.items())

    def _values(self) -> tuple[Any, ...]:
        return (self.key, self.benchmark, self.case, self.label, self.order, self.runs, self.params, self.path,
                self.lineno, self.function, self.marks)

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not CaseRef:
            return NotImplemented
        return self is other or self._values() == other._values()  # type: ignore[attr-defined]

    def __hash__(self) -> int:
        return hash(self._values())

    def __repr__(self) -> str:
        fields = ", ".join(f"{name}={value!r}" for name, value in zip(_CASE_FIELD_NAMES, self._values()))
        return f"CaseRef({fields})"

    def __setattr__(self, name: str, value: Any) -> None:
        raise dataclasses.FrozenInstanceError(f"cannot assign to field {name!r}")

    def __delattr__(self, name: str) -> None:
        raise dataclasses.FrozenInstanceError(f"cannot delete field {name!r}")

    def __reduce__(self) -> Any:
        return (_case_from_values, self._values())

    def to_dict(self) -> dict[str, Any]:
        """Plain builtins; computed once per case (runs of a case share it)."""
        cached = self._dict
        if cached is None:
            # Field by field, not dataclasses.asdict (a deep copy): one case per run is common.
            cached = dict(zip(_CASE_FIELD_NAMES, self._values()))
            cached["params"] = [list(p) for p in cached["params"]]
            cached["marks"] = [[k, list(v) if isinstance(v, tuple) else v] for k, v in self.marks]
            object.__setattr__(self, "_dict", cached)
        return cached

    def release_dict(self) -> None:
        """Drop the cached :meth:`to_dict` (after the case's last run: with one run per case,
        a cache kept for the session would only cost memory)."""
        object.__setattr__(self, "_dict", None)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> CaseRef:
        values = {k: v for k, v in data.items() if k in _CASE_FIELDS}
        values["params"] = tuple(tuple(p) for p in values.get("params", ()))
        values["marks"] = tuple((k, tuple(v) if isinstance(v, list) else v) for k, v in values.get("marks", ()))
        return cls(**values)


def _derived_label(benchmark: str, case: str) -> str:
    return f"{benchmark}::{case}" if case else benchmark


def _case_from_values(*values: Any) -> CaseRef:
    return CaseRef(**dict(zip(_CASE_FIELD_NAMES, values)))


#: The wire form's keys, in the order of :meth:`CaseRef.to_dict`.
_CASE_FIELD_NAMES = ("key", "benchmark", "case", "label", "order", "runs", "params", "path", "lineno", "function",
                     "marks")
_CASE_FIELDS = frozenset(_CASE_FIELD_NAMES)


@dataclass(frozen=True, slots=True)
class RunRecord:
    """The outcome of one run, one pytest item."""

    case: CaseRef
    run: int
    nodeid: str
    outcome: str
    duration: float = 0.0
    message: str = ""
    error_type: str = ""
    error_text: str = ""
    #: Which phase decided the outcome: ``setup``, ``call`` or ``teardown``.
    phase: str = "call"
    usage: tuple[Usage, ...] = ()
    #: Spend recorded with ``record_cost()`` (not tied to a model).
    extra_cost: float = 0.0
    #: Trace and span id of the run's span when exported (hex), else "".
    trace_id: str = ""
    span_id: str = ""
    start_time: float = 0.0
    #: Why the run was not executed: "decided" (its case was decided early) or
    #: "budget" (a session budget was reached); "" for a run that executed.
    stopped: str = ""
    #: Failed attempts before the last one (``--prob-retry``), plain dicts:
    #: ``attempt``, ``error_type``, ``error``, ``wait`` (seconds slept after it).
    retries: tuple[dict[str, Any], ...] = ()
    #: What the run produced (``record_output``/``record_io``), plain dicts of
    #: text values; ``truncated`` maps a cut value's name to its original length.
    transcript: tuple[dict[str, Any], ...] = ()

    @property
    def attempts(self) -> int:
        return 1 + len(self.retries)

    @property
    def cost(self) -> float:
        if not self.usage:
            return self.extra_cost  # the usual record: no generator to sum
        return self.extra_cost + sum(u.cost for u in self.usage)

    def to_dict(self, case: bool = True) -> dict[str, Any]:
        """Plain builtins only, safe for xdist's execnet channel and JSON.

        ``case=False``: the case as its key only, for a process that has its CaseRef
        (:meth:`from_dict` with ``cases``), such as the one that built the record.
        """
        return {
            "case": self.case.to_dict() if case else {"key": self.case.key},
            "run": self.run,
            "nodeid": self.nodeid,
            "outcome": self.outcome,
            "duration": self.duration,
            "message": self.message,
            "error_type": self.error_type,
            "error_text": self.error_text,
            "phase": self.phase,
            "usage": [u.to_dict() for u in self.usage],
            "extra_cost": self.extra_cost,
            "trace_id": self.trace_id,
            "span_id": self.span_id,
            "start_time": self.start_time,
            "stopped": self.stopped,
            "retries": [dict(r) for r in self.retries],
            "transcript": [dict(t) for t in self.transcript],
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], cases: dict[str, CaseRef] | None = None) -> RunRecord:
        """Rebuild a record; ``cases`` (case key -> CaseRef) shares one CaseRef per case.

        Field by field with their defaults (one call per run, on the aggregating process's
        path), not through a filtered copy of ``data``; keys that are no field are ignored.
        """
        case_data = data["case"]
        case = cases.get(case_data["key"]) if cases is not None else None
        if case is None:
            if len(case_data) == 1:
                raise ValueError(f"record of run {data.get('nodeid')!r} names its case {case_data['key']!r} "
                                 "by key only, and this process has no such case")
            case = CaseRef.from_dict(case_data)
            if cases is not None:
                cases[case.key] = case
        get = data.get
        usage = get("usage")
        retries = get("retries")
        transcript = get("transcript")
        return cls(
            case=case,
            run=data["run"],
            nodeid=data["nodeid"],
            outcome=data["outcome"],
            duration=get("duration", 0.0),
            message=get("message", ""),
            error_type=get("error_type", ""),
            error_text=get("error_text", ""),
            phase=get("phase", "call"),
            usage=tuple(Usage.from_dict(u) for u in usage) if usage else (),
            extra_cost=get("extra_cost", 0.0),
            trace_id=get("trace_id", ""),
            span_id=get("span_id", ""),
            start_time=get("start_time", 0.0),
            stopped=get("stopped", ""),
            retries=tuple(dict(r) for r in retries) if retries else (),
            transcript=tuple(dict(t) for t in transcript) if transcript else (),
        )




@dataclass
class UsageTotals:
    """Tokens and spend summed over calls, for one model."""

    model: str
    input_tokens: int = 0
    output_tokens: int = 0
    cached_input_tokens: int = 0
    cost: float = 0.0
    calls: int = 0

    def add(self, usage: Usage) -> None:
        self.input_tokens += usage.input_tokens
        self.output_tokens += usage.output_tokens
        self.cached_input_tokens += usage.cached_input_tokens
        self.cost += usage.cost
        self.calls += 1

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


def sum_usage(usages: Any) -> dict[str, UsageTotals]:
    """Sum usage per model, models in order of first appearance."""
    totals: dict[str, UsageTotals] = {}
    for usage in usages:
        totals.setdefault(usage.model, UsageTotals(usage.model)).add(usage)
    return totals


@dataclass(slots=True)
class Counts:
    """Run counts of a row or of the whole session."""

    passes: int = 0
    fails: int = 0
    errors: int = 0
    skipped: int = 0
    #: Runs not executed (early stopping, budgets): no sample, and not "skipped".
    stopped: int = 0

    @property
    def total(self) -> int:
        """Counted runs: skipped runs are no sample."""
        return self.passes + self.fails + self.errors

    @property
    def pass_rate(self) -> float | None:
        return self.passes / self.total if self.total else None

    def add(self, outcome: str, stopped: str = "") -> None:
        if stopped:
            self.stopped += 1
        elif outcome == PASS:
            self.passes += 1
        elif outcome == FAIL:
            self.fails += 1
        elif outcome == ERROR:
            self.errors += 1
        elif outcome == SKIP:
            self.skipped += 1
        else:  # pragma: no cover - records are built by this package
            raise ValueError(f"unknown outcome {outcome!r}")


__all__ = [
    "CaseRef",
    "PARAM_VALUE_LIMIT",
    "Counts",
    "ERROR",
    "FAIL",
    "OUTCOMES",
    "PASS",
    "RunRecord",
    "SKIP",
    "UNKNOWN_MODEL",
    "Usage",
    "UsageTotals",
    "field",
    "param_text",
    "sum_usage",
]
