"""The since-clean interval rule (maths/states.py): each state from hand-made nights, the boundaries, since and first flaky."""

from __future__ import annotations

import pytest

from pytest_probability.maths import stats
from pytest_probability.maths.states import BROKEN, FAILING, FIXED, FLAKY, NEW, PASSING, Night, Rule, stories, story

RULE = Rule()


def nights(*counts: tuple[int, int] | None) -> list[Night | None]:
    return [None if c is None else Night(f"2026-11-{i + 1:02d}", c[0], c[1]) for i, c in enumerate(counts)]


def states(*counts: tuple[int, int] | None) -> list[str | None]:
    return [None if s is None else s.state for s in stories(nights(*counts), RULE)]


def test_a_first_night_is_new_and_a_case_becomes_passing_after_m_nights() -> None:
    assert states((10, 10), (10, 10), (10, 10), (9, 10)) == [NEW, NEW, PASSING, PASSING]


def test_flaky_is_decided_by_the_interval_not_by_one_failure() -> None:
    # 9/10: exact upper bound 99.7% >= 95%, chance; 7/10: 93.3% < 95%, flaky
    assert stats.clopper_pearson(9, 10, 0.95)[1] > 0.95 > stats.clopper_pearson(7, 10, 0.95)[1]
    assert states(*[(10, 10)] * 4, (9, 10))[-1] == PASSING
    assert states(*[(10, 10)] * 4, (7, 10))[-1] == FLAKY


def test_failures_pool_over_the_nights_since_the_last_clean_streak() -> None:
    # 9/10 each night: alone never shown, pooled 36/40 has an upper bound of 97.2%, 45/50 of 96.7%, ...
    seq = [(10, 10)] * 3 + [(9, 10)] * 14
    found = states(*seq)
    assert found[3] == PASSING
    pooled = next(i for i in range(3, 17) if stats.clopper_pearson(9 * (i - 2), 10 * (i - 2), 0.95)[1] < 0.95)
    assert found[pooled] == FLAKY and found[pooled - 1] == PASSING


def test_failing_and_broken() -> None:
    assert stats.clopper_pearson(2, 10, 0.95)[1] > 0.5 > stats.clopper_pearson(1, 10, 0.95)[1]
    assert states(*[(10, 10)] * 3, (2, 10))[-1] == FLAKY
    assert states(*[(10, 10)] * 3, (1, 10))[-1] == FAILING
    assert states(*[(10, 10)] * 3, (0, 10))[-1] == BROKEN
    # 0/5 is not 10 runs yet: flaky (upper 52%), then broken on the second night without a pass
    assert states(*[(5, 5)] * 3, (0, 5), (0, 5))[-2:] == [FLAKY, BROKEN]


def test_fixed_after_m_clean_nights_and_the_bad_state_is_kept_until_then() -> None:
    found = states(*[(10, 10)] * 3, (5, 10), (10, 10), (10, 10), (10, 10), (10, 10))
    assert found[3:] == [FLAKY, FLAKY, FLAKY, FIXED, FIXED]


def test_fixed_lasts_while_the_bad_night_is_in_the_window() -> None:
    seq = [(10, 10)] * 3 + [(0, 10)] + [(10, 10)] * 16
    found = states(*seq)
    assert found[3] == BROKEN
    assert found[6] == FIXED
    assert found[4:6] == [FLAKY, FLAKY]  # clean nights with the broken one still in the evidence
    assert found[5 + RULE.window] == PASSING and found[4 + RULE.window] == FIXED


def test_since_and_first_flaky() -> None:
    seq = nights(*[(10, 10)] * 3, (5, 10), (5, 10), (0, 10), (0, 10), (10, 10), (10, 10), (10, 10))
    found = stories(seq, RULE)
    tonight = found[-1]
    assert tonight is not None and tonight.state == FIXED and tonight.since == seq[-1].night  # type: ignore[union-attr]
    assert tonight.first_flaky == "2026-11-04" and tonight.previous == FLAKY and tonight.changed
    broken = found[6]
    assert broken is not None and broken.state == BROKEN and broken.since == "2026-11-06"


def test_a_stored_state_is_kept_and_chains_its_since() -> None:
    seq = [Night("a", 10, 10, state=FLAKY, since="earlier", first_flaky="long ago"), Night("b", 10, 10)]
    tonight = story(seq, RULE)
    assert tonight is not None and tonight.state == FLAKY and tonight.since == "earlier"
    assert tonight.first_flaky == "long ago"


def test_nights_the_case_did_not_run_have_no_state() -> None:
    assert states((10, 10), None, (10, 10), (10, 10))[1] is None
    assert story(nights((10, 10), None), RULE) is None


def test_the_flake_rate_over_the_window_with_its_interval() -> None:
    tonight = story(nights(*[(8, 10)] * 20), RULE)
    assert tonight is not None and tonight.runs == 140 and tonight.fails == 28
    low, high = stats.clopper_pearson(112, 140, 0.95)
    assert tonight.flake_low == pytest.approx(1 - high) and tonight.flake_high == pytest.approx(1 - low)


def test_bad_parameters_are_refused() -> None:
    with pytest.raises(ValueError):
        Rule(window=0)
    with pytest.raises(ValueError):
        Rule(flaky_bar=0.4)
