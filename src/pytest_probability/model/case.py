"""Which case a run belongs to: :class:`CaseRef`, one per case, shared by the records of its runs.

Pure and pytest-free.
"""

from __future__ import annotations

import dataclasses
import zlib
from collections.abc import Callable, Mapping
from typing import Any

from ..text import well_formed

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
    text = well_formed(text)
    return text if len(text) <= PARAM_VALUE_LIMIT else text[: PARAM_VALUE_LIMIT - 1] + "…"


def shard_of(case_key: str, run: int, shards: int) -> int:
    """The shard (1 to ``shards``) that runs run ``run`` of a case under ``--prob-shard=K/N``.

    Run r of a case goes to shard ((r - 1 + offset) mod N) + 1, where the case's offset is the
    CRC-32 of its key: each case's runs are spread evenly (shards differ by one run at most), cases
    of one run are spread over the shards too, and the rule needs nothing but the run's node id, so
    every shard (and the merge) computes the same partition.
    """
    return (run - 1 + zlib.crc32(case_key.encode("utf-8", "surrogatepass"))) % shards + 1


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

    __slots__ = (
        "key",
        "benchmark",
        "case",
        "_label",
        "order",
        "runs",
        "_params",
        "path",
        "lineno",
        "function",
        "marks",
        "_dict",
    )

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
    # The slots behind the properties and the cache (None: derived when read, or not built yet).
    _label: str | None
    _params: tuple[tuple[str, str], ...] | Mapping[str, Any]
    _dict: dict[str, Any] | None

    def __init__(
        self,
        key: str,
        benchmark: str,
        case: str,
        label: str | None = None,
        order: int = 0,
        runs: int = 0,
        params: tuple[tuple[str, str], ...] | Mapping[str, Any] = (),
        path: str = "",
        lineno: int = 0,
        function: str = "",
        marks: tuple[tuple[str, Any], ...] = (),
    ) -> None:
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
    def scope(self) -> str:
        """Node id of the benchmark: the scope of its ``[baseline]`` and ``[compare:ARM]`` verdicts."""
        case = self.case
        return self.key[: -len(case) - 2] if case else self.key

    @property
    def params(self) -> tuple[tuple[str, str], ...]:
        """Parameter values as short strings (:func:`param_text`), by argument name."""
        params = self._params
        if isinstance(params, tuple):
            return params
        return tuple((k, param_text(v)) for k, v in params.items())

    def _values(self) -> tuple[Any, ...]:
        return (
            self.key,
            self.benchmark,
            self.case,
            self.label,
            self.order,
            self.runs,
            self.params,
            self.path,
            self.lineno,
            self.function,
            self.marks,
        )

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not CaseRef:
            return NotImplemented
        return self is other or self._values() == other._values()

    def __hash__(self) -> int:
        return hash(self._values())

    def __repr__(self) -> str:
        fields = ", ".join(f"{name}={value!r}" for name, value in zip(_CASE_FIELD_NAMES, self._values(), strict=False))
        return f"CaseRef({fields})"

    def __setattr__(self, name: str, value: Any) -> None:
        raise dataclasses.FrozenInstanceError(f"cannot assign to field {name!r}")

    def __delattr__(self, name: str) -> None:
        raise dataclasses.FrozenInstanceError(f"cannot delete field {name!r}")

    def __reduce__(self) -> tuple[Callable[..., CaseRef], tuple[Any, ...]]:
        return (_case_from_values, self._values())

    def to_dict(self) -> dict[str, Any]:
        """Plain builtins; computed once per case (runs of a case share it)."""
        cached = self._dict
        if cached is None:
            # Field by field, not dataclasses.asdict (a deep copy): one case per run is common.
            cached = dict(zip(_CASE_FIELD_NAMES, self._values(), strict=False))
            cached["params"] = [list(p) for p in cached["params"]]
            cached["marks"] = [[k, _listed(v)] for k, v in self.marks]
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
        values["marks"] = tuple((k, _tupled(v)) for k, v in values.get("marks", ()))
        return cls(**values)


def _listed(value: Any) -> Any:
    """A mark's value as JSON has it: tuples (a prior, a score range, bars by score name) as lists, at every depth."""
    return [_listed(v) for v in value] if isinstance(value, tuple) else value


def _tupled(value: Any) -> Any:
    """The mark's value back, hashable: lists as tuples, at every depth."""
    return tuple(_tupled(v) for v in value) if isinstance(value, list) else value


def _derived_label(benchmark: str, case: str) -> str:
    return f"{benchmark}::{case}" if case else benchmark


def _case_from_values(*values: Any) -> CaseRef:
    return CaseRef(**dict(zip(_CASE_FIELD_NAMES, values, strict=False)))


#: The wire form's keys, in the order of :meth:`CaseRef.to_dict`.
_CASE_FIELD_NAMES = (
    "key",
    "benchmark",
    "case",
    "label",
    "order",
    "runs",
    "params",
    "path",
    "lineno",
    "function",
    "marks",
)
_CASE_FIELDS = frozenset(_CASE_FIELD_NAMES)
