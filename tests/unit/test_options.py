"""Unit tests of options.py's marker merging: which mark's keyword a case gets."""

from __future__ import annotations

import pytest

from pytest_probability.config import marker as options
from pytest_probability.config import spec as analysis
from pytest_probability.config.settings import StatsConfig


def marks(*kwargs: dict) -> list:
    """``probability`` marks, closest first (pytest.param, function, class, module)."""
    return [pytest.mark.probability(**kw).mark for kw in kwargs]


def test_the_closest_mark_wins_for_each_keyword():
    merged = options.marker_kwargs(marks({"runs": 5}, {"runs": 10, "confidence": 0.9}, {"method": "wilson"}))
    assert merged == {"runs": 5, "confidence": 0.9, "method": "wilson"}


@pytest.mark.parametrize(
    ("closer", "farther", "expected"),
    [
        ({"min_rate": 0.5}, {"min_passes": 9}, {"min_rate": 0.5}),
        ({"min_passes": 9}, {"min_rate": 0.99}, {"min_passes": 9}),
        ({"min_passes": 9}, {"min_rate": 0.99, "runs": 10}, {"min_passes": 9, "runs": 10}),
        ({"runs": 10}, {"min_rate": 0.5}, {"runs": 10, "min_rate": 0.5}),
    ],
)
def test_min_rate_and_min_passes_are_one_choice_the_closer_mark_makes(closer, farther, expected):
    merged = options.marker_kwargs(marks(closer, farther))
    assert merged == expected
    spec = analysis.case_spec(merged, 10, StatsConfig())  # no contradiction left
    assert spec.gate.rule == ("rate" if "min_rate" in expected else "count")


def test_min_rate_and_min_passes_in_one_mark_stay_a_contradiction():
    merged = options.marker_kwargs(marks({"min_rate": 0.5, "min_passes": 2}, {"min_passes": 3}))
    assert merged == {"min_rate": 0.5, "min_passes": 2}
    with pytest.raises(ValueError, match="give min_rate or min_passes, not both"):
        analysis.case_spec(merged, 10, StatsConfig())


def test_an_overridden_value_is_not_parsed():
    # the farther mark's alternative never applies to the case, so it is not an error
    assert options.marker_kwargs(marks({"min_rate": 0.5}, {"min_passes": 0})) == {"min_rate": 0.5}
    with pytest.raises(options.MarkerError, match="min_passes"):
        options.marker_kwargs(marks({"runs": 3}, {"min_passes": 0}))
