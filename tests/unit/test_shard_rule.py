"""The shard rule (``model.case.shard_of``) and ``--prob-shard``'s parser, without a session."""

from __future__ import annotations

import pytest

from pytest_probability.config.values import parse_shard
from pytest_probability.features.shards.merge import exit_status_of
from pytest_probability.model.case import shard_of


@pytest.mark.parametrize("count", [1, 2, 3, 7])
@pytest.mark.parametrize("runs", [1, 2, 5, 20, 33])
def test_each_cases_runs_are_spread_evenly_and_exactly_once(count: int, runs: int) -> None:
    for key in ("bench_x.py::bench_a", "bench_x.py::bench_a::case-1", "bench_ü.py::bench_b::x[1]"):
        shards = [shard_of(key, run, count) for run in range(1, runs + 1)]
        assert set(shards) <= set(range(1, count + 1))
        per_shard = [shards.count(k) for k in range(1, count + 1)]
        assert max(per_shard) - min(per_shard) <= 1
        assert sum(per_shard) == runs


def test_cases_of_one_run_are_spread_over_the_shards() -> None:
    shards = [shard_of(f"bench_x.py::bench_a::case{i}", 1, 4) for i in range(400)]
    assert all(60 < shards.count(k) < 140 for k in range(1, 5))


def test_the_rule_is_stable() -> None:
    """The rule is part of the report format: a merge checks every run against it."""
    assert [shard_of("bench_x.py::bench_a", run, 3) for run in range(1, 7)] == [2, 3, 1, 2, 3, 1]


@pytest.mark.parametrize(("text", "expected"), [("1/1", (1, 1)), (" 2/5 ", (2, 5)), ("5/5", (5, 5)), ("", None)])
def test_good_values(text: str, expected: tuple[int, int] | None) -> None:
    assert parse_shard(text) == expected


@pytest.mark.parametrize("text", ["3", "0/2", "3/2", "a/2", "1/b", "1/0", "1/2/3", "-1/2", "1.5/2"])
def test_bad_values(text: str) -> None:
    with pytest.raises(ValueError, match="--prob-shard must be K/N"):
        parse_shard(text)


@pytest.mark.parametrize(
    ("statuses", "failed", "expected"),
    [
        ([0, 0], False, 0),
        ([0, 1], False, 1),
        ([0, 0], True, 1),
        ([1, 2], False, 2),
        ([0, 5], False, 0),
        ([3, 0], True, 3),
    ],
)
def test_the_merged_exit_status(statuses: list[int], failed: bool, expected: int) -> None:
    assert exit_status_of(statuses, failed_gates=failed) == expected
