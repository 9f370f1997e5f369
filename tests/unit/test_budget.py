"""features/spend/budget.py: when a budget is reached, and its limits as config/values.py parses them (pure parts)."""

from __future__ import annotations

import time

import pytest

from pytest_probability.config import values
from pytest_probability.features.spend import budget
from pytest_probability.model.case import CaseRef
from pytest_probability.model.run import RunRecord, Usage

CASE = CaseRef(key="b.py::bench_x", benchmark="x", case="", label="x", order=0, runs=3)


def record(cost=0.0, tokens=(0, 0), run=1):
    return RunRecord(CASE, run, f"b.py::bench_x::run{run}", "pass", usage=(Usage("m", tokens[0], tokens[1], 7, cost),))


@pytest.mark.parametrize("text", ["-1", "nan", "inf", "ten"])
def test_limits_must_be_numbers_of_zero_or_more(text):
    with pytest.raises(ValueError, match="--prob-max-cost"):
        values.parse_limit(text, source="--prob-max-cost")


def test_token_limit_is_whole():
    assert values.parse_limit("1000", source="x", whole=True) == 1000
    assert values.parse_limit("", source="x") is None
    with pytest.raises(ValueError, match="whole number"):
        values.parse_limit("1.5", source="--prob-max-tokens", whole=True)


def test_budget_reached_by_cost_then_tokens_then_time():
    b = budget.Budget(max_cost=1.0)
    assert not b.add(record(0.6))
    assert b.add(record(0.5))  # newly reached
    assert not b.add(record(0.5))  # only once
    assert b.reached == "cost" and b.cost == pytest.approx(1.6)
    assert b.reason() == "cost budget $1 reached ($1.6000 spent)"

    t = budget.Budget(max_tokens=100)
    t.add(record(tokens=(60, 30)))  # cached input (7) is part of input: not added
    assert t.tokens == 90 and t.reached is None
    t.add(record(tokens=(5, 5)))
    assert t.reached == "tokens"

    w = budget.Budget(max_time=10.0, start=time.time() - 11)
    assert w.check() and w.reached == "time" and w.deadline == pytest.approx(w.start + 10)
    assert w.to_dict(4)["runs_not_executed"] == 4
