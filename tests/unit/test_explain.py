"""report/readings.py and report/explain.py: the plain-language readings' numbers, against 0.3.0's documented samples."""

from __future__ import annotations

import pytest

from pytest_probability.config.settings import StatsConfig
from pytest_probability.config.spec import case_spec
from pytest_probability.maths import stats
from pytest_probability.report import readings as explain


def test_p_values_read_as_0_3_0_read_them():
    assert explain.p_sentence(0.0004).startswith(
        "p < 0.001: if there were no real difference, a gap this big would turn up by chance less than 1 time in 1,000."
    )
    assert explain.p_sentence(0.03125) == (
        "p = 0.031: if there were no real difference, a gap this big would turn up by chance about 3 times in 100."
    )
    assert explain.p_sentence(None) == ""


@pytest.mark.parametrize(
    ("rate", "bar", "needed"), [(1.0, 0.5, 6), (0.9, 0.8, None), (0.6, 0.5, None), (0.5, 0.5, None)]
)
def test_runs_that_would_settle_an_undecided_gate(rate, bar, needed):
    """0.3.0's sample: 5 of 5 passing against a bar of 50% settles at about 6 runs; the count is the
    smallest at which the gate's own interval at today's rate leaves the bar (checked by brute force)."""
    spec = case_spec({"min_rate": bar}, 10, StatsConfig()).gate
    text = explain.Explainer(StatsConfig())._settle(rate, spec, excluded=False)

    def settled(runs: int) -> bool:
        low, high = stats.interval("exact", int(rate * runs + 0.5), runs, 0.95, (1.0, 1.0))
        return low >= bar or high < bar

    brute = next((n for n in range(1, explain.SETTLE_CAP + 1) if settled(n)), None)
    if needed is not None:
        assert brute == needed and f"about {needed} runs in total would settle it" in text
    elif brute is None:
        assert "even 10,000 runs might not settle it" in text
    else:
        assert f"about {brute:,} runs in total would settle it" in text


def test_percent_texts_never_round_to_certainty():
    assert (explain.pct(0.999), explain.pct(1.0), explain.pct(0.001), explain.pct(0.0)) == ("99%", "100%", "1%", "0%")
    assert explain.points(-0.4) == "\u221240.0" and explain.points(0.1) == "+10.0" and explain.points(0.0) == "0.0"
