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


@dataclass(frozen=True, slots=True)
class CaseRef:
    """Which case a run belongs to; identical for all runs of one case."""

    #: Node id of the case without the run suffix: ``bench_x.py::bench_classify::identify_pii``.
    key: str
    #: Benchmark name as the user knows it: ``classify`` (``BenchTriage.classify`` in a class).
    benchmark: str
    #: pytest's composed parametrization id, ``""`` for an unparametrized benchmark.
    case: str
    #: Row label: ``classify::identify_pii`` or ``always``.
    label: str
    #: Position of the case in collection order; rows are sorted by it.
    order: int
    #: Runs collected for the case.
    runs: int
    #: Parameter values as short strings, by argument name.
    params: tuple[tuple[str, str], ...] = ()
    #: Source location of the benchmark function.
    path: str = ""
    lineno: int = 0
    function: str = ""
    #: Validated ``probability`` marker keywords of the case (gates, latency), sorted.
    marks: tuple[tuple[str, Any], ...] = ()
    #: The cached :meth:`to_dict` (not a field of the wire form).
    _dict: dict[str, Any] | None = field(default=None, init=False, repr=False, compare=False, hash=False)

    def to_dict(self) -> dict[str, Any]:
        """Plain builtins; computed once per case (runs of a case share it)."""
        cached = self._dict
        if cached is None:
            # Field by field, not dataclasses.asdict (a deep copy): one case per run is common.
            cached = {name: getattr(self, name) for name in _CASE_FIELD_NAMES}
            cached["params"] = [list(p) for p in self.params]
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


_CASE_FIELD_NAMES = tuple(f.name for f in dataclasses.fields(CaseRef) if f.init)
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
    "sum_usage",
]
