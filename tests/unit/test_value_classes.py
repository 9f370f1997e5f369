"""value_classes: the plain classes that replace the core's start-up dataclasses behave as those did."""

from __future__ import annotations

import dataclasses
import inspect

import pytest

from pytest_probability.config.spec import NO_SCORE_RULES, CaseSpec, GateSpec, ScoreRules
from pytest_probability.model.case import CaseRef
from pytest_probability.model.rows import Counts, UsageTotals
from pytest_probability.model.run import RunRecord, Score, Usage
from pytest_probability.model.run_state import CurrentRun
from pytest_probability.value_classes import Record, Value


def gate(**changes: object) -> GateSpec:
    fields = {"rule": "rate", "bar": 0.8, "min_passes": None, "confidence": 0.95, "method": "exact",
              "prior": (1.0, 1.0), "errors": "count"}  # fmt: skip
    return GateSpec(**{**fields, **changes})  # type: ignore[arg-type]


@pytest.mark.parametrize("cls", [Usage, Score, RunRecord, GateSpec, ScoreRules, CaseSpec])
def test_a_former_frozen_dataclass_is_a_value_whose_fields_are_its_init_parameters(cls: type[Value]) -> None:
    assert issubclass(cls, Value) and not issubclass(cls, Record)
    assert not dataclasses.is_dataclass(cls)
    assert tuple(inspect.signature(cls).parameters) == cls.FIELDS
    assert cls.__slots__ == cls.FIELDS  # type: ignore[attr-defined]  # no instance dict, as a frozen dataclass


def test_a_value_is_equal_and_hashed_by_its_fields() -> None:
    a, b = gate(), gate()
    assert a == b and hash(a) == hash(b) and len({a, b}) == 1
    assert a != gate(bar=0.9) and a != gate(stop="curtail")
    assert a != ScoreRules() and (a == object()) is False  # another class is never equal
    nan = Usage(cost=float("nan"))
    assert nan == nan  # the same object: equal, as a dataclass's tuple comparison finds it


def test_replace_is_dataclasses_replace() -> None:
    spec = CaseSpec(gate(), 0.95, 2.0)
    bare = spec.replace(gate=None, max_latency=None)
    assert bare == CaseSpec(None, 0.95, None) and bare.score_rules is NO_SCORE_RULES
    assert spec.gate == gate() and spec.max_latency == 2.0  # the original is unchanged
    with pytest.raises(TypeError):
        spec.replace(no_such_field=1)


def test_repr_names_the_class_and_every_field() -> None:
    assert repr(ScoreRules(0.0, 5.0, (("score", 4.0),))) == "ScoreRules(low=0.0, high=5.0, bars=(('score', 4.0),))"
    assert repr(Counts(passes=2)) == "Counts(passes=2, fails=0, errors=0, skipped=0, stopped=0)"


def test_a_record_changes_is_compared_by_its_fields_and_has_no_hash() -> None:
    counts = Counts(passes=1)
    counts.passes += 1
    assert counts == Counts(passes=2) and counts != Counts(passes=1)
    with pytest.raises(TypeError, match="unhashable type: 'Counts'"):
        hash(counts)
    totals = UsageTotals("m", input_tokens=3)
    assert totals.to_dict() == {"model": "m", "input_tokens": 3, "output_tokens": 0, "cached_input_tokens": 0,
                                "cost": 0.0, "calls": 0}  # fmt: skip


def test_default_factories_give_each_instance_its_own() -> None:
    case = CaseRef("bench_x.py::bench_a", "bench_x.py::bench_a", "")
    first, second = CurrentRun(case, 1, "n1"), CurrentRun(case, 2, "n2")
    first.usage.append(Usage())
    assert second.usage == [] and first.start_time > 0
    assert CurrentRun(case, 3, "n3", start_time=5.0).start_time == 5.0
