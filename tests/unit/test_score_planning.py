"""maths.scores.fewest_runs: the fewest runs with which a score gate can pass, against a brute-force search."""

from __future__ import annotations

import pytest

from pytest_probability.maths import scores


@pytest.mark.parametrize("level", [0.9, 0.95, 0.99])
@pytest.mark.parametrize("bar", [0.05, 0.3, 0.5, 0.75, 0.9, 0.95])
def test_fewest_runs_is_the_first_count_whose_all_top_interval_reaches_the_bar(bar: float, level: float) -> None:
    brute = next(n for n in range(1, 2000) if scores.score_interval([1.0] * n, level).low >= bar)
    assert scores.fewest_runs(bar, level) == brute
    assert scores.score_interval([1.0] * (brute - 1), level).low < bar if brute > 1 else True


def test_the_range_rescales_and_the_top_never_passes() -> None:
    assert scores.fewest_runs(4.0, 0.95, 1.0, 5.0) == scores.fewest_runs(0.75, 0.95)
    assert scores.fewest_runs(5.0, 0.95, 1.0, 5.0) is None  # the bound stays below the top of the range
    assert scores.fewest_runs(1.0, 0.95) is None
    assert scores.fewest_runs(0.0) == 1  # a bar at the bottom: any run
    assert scores.fewest_runs(0.999, cap=50) is None  # not within the cap


@pytest.mark.parametrize(
    ("kwargs", "error"),
    [
        ({"bar": float("nan")}, ValueError),
        ({"bar": "x"}, TypeError),
        ({"bar": 0.5, "cap": 0}, ValueError),
        ({"bar": 0.5, "level": 1.5}, ValueError),
        ({"bar": 0.5, "low": 1, "high": 0}, ValueError),
    ],
)
def test_bad_arguments_are_refused(kwargs: dict, error: type) -> None:
    with pytest.raises(error):
        scores.fewest_runs(**kwargs)
