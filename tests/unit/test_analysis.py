"""Unit tests of the decisions from rows: marker keywords, case specs, gate and latency verdicts, metrics, aggregates.

config/spec.py, decide/gates.py and decide/analysis.py are pure: records and
settings in, RowAnalysis objects out. The maths itself (intervals, order
statistics, pass^k) is checked against reference values in test_stats.py;
here the question is whether they ask maths/stats.py the right questions and
turn the answers into the right verdicts, at and around every bar.
"""

from __future__ import annotations

import math
from math import comb, nextafter

import pytest

from pytest_probability.aggregate.cases import aggregate
from pytest_probability.config.marker import KEYWORDS
from pytest_probability.config.settings import StatsConfig
from pytest_probability.config.spec import CaseSpec, GateSpec, case_spec, latency_unreachable, unreachable
from pytest_probability.decide.analysis import analyze, analyze_row, metric_value
from pytest_probability.decide.gates import evaluate_gate, evaluate_latency
from pytest_probability.maths import stats
from pytest_probability.model.case import CaseRef
from pytest_probability.model.run import RunRecord
from pytest_probability.vocabulary import ERROR, FAIL, FAILED, PASS, PASSED, SKIP, SKIPPED, UNDECIDED, VERDICT_VALUES

_order = iter(range(100_000))
LETTERS = {"p": PASS, "f": FAIL, "e": ERROR, "s": SKIP}


def make_case(label: str, runs: int = 0, marks: tuple = ()) -> CaseRef:
    benchmark, _, case_id = label.partition("::")
    key = f"bench_x.py::bench_{benchmark}" + (f"::{case_id}" if case_id else "")
    return CaseRef(key=key, benchmark=benchmark, case=case_id, label=label, order=next(_order), runs=runs, marks=marks)


def records(label: str, outcomes: str, durations=None) -> list[RunRecord]:
    """One record per letter of ``outcomes`` (p f e s), durations per run if given."""
    ref = make_case(label, runs=len(outcomes))
    durations = durations or [0.0] * len(outcomes)
    return [
        RunRecord(case=ref, run=i, nodeid=f"{ref.key}[run{i}]", outcome=LETTERS[letter], duration=durations[i - 1])
        for i, letter in enumerate(outcomes, start=1)
    ]


def row_of(label: str, outcomes: str, durations=None):
    summary = aggregate(records(label, outcomes, durations))
    assert len(summary.rows) == 1
    return summary.rows[0]


def rate_gate(
    bar: float,
    *,
    method: str = "exact",
    confidence: float = 0.95,
    errors: str = "count",
    prior: tuple[float, float] = (1.0, 1.0),
) -> GateSpec:
    return GateSpec("rate", bar, None, confidence, method, prior, errors)


def count_gate(min_passes: int, runs: int, errors: str = "count") -> GateSpec:
    return GateSpec("count", min_passes / runs, min_passes, 0.95, "exact", (1.0, 1.0), errors)


pytestmark = pytest.mark.usefixtures("no_hang")
HANG_LIMIT = 20


# -- StatsConfig ------------------------------------------------------------------------


def test_stats_config_defaults_and_to_dict():
    config = StatsConfig()
    data = config.to_dict()
    # 0.3.0's six keys come first, in its order.
    assert list(data)[:6] == ["method", "level", "prior", "resamples", "seed", "min_inputs"]
    assert data == {
        "method": "exact",
        "level": 0.95,
        "prior": [1.0, 1.0],
        "resamples": 5000,
        "seed": 0,
        "min_inputs": 10,
        "inputs_interval": "wilson",
        "intervals": True,
        "min_rate": None,
        "undecided": "fail",
        "errors": "count",
        "latency": False,
        "latency_quantile": 0.95,
        "metrics": [],
        "gate_items": True,
        "stop": None,
        "explain": False,
    }
    custom = StatsConfig(method="bayes", confidence=0.9, prior=(2.0, 3.0), metrics=(("pass^", 3), ("pass@", 5)))
    data = custom.to_dict()
    assert (data["method"], data["level"], data["prior"]) == ("bayes", 0.9, [2.0, 3.0])
    assert data["metrics"] == ["pass^3", "pass@5"]


def test_verdict_values_for_gauges():
    assert VERDICT_VALUES == {"pass": 1, "undecided": 0, "fail": -1}


# -- marker keywords ----------------------------------------------------------------------

KW = KEYWORDS


@pytest.mark.parametrize("value", [0.5, 1, 1.0, 1e-9])
def test_min_rate_accepts_rates_in_half_open_unit_interval(value):
    assert KW["min_rate"](value) == float(value)
    assert isinstance(KW["min_rate"](value), float)


@pytest.mark.parametrize("value", [0, 0.0, -0.1, 1.0000001, 1.5, 90, True, "0.9", None, math.nan])
def test_min_rate_rejects_and_names_the_value(value):
    with pytest.raises((ValueError, TypeError)) as info:
        KW["min_rate"](value)
    assert "min_rate" in str(info.value)
    assert repr(value) in str(info.value)


@pytest.mark.parametrize("value", [0, -3, True, 2.0, "3", None])
def test_min_passes_rejects_and_names_the_value(value):
    with pytest.raises(ValueError, match=r"min_passes") as info:
        KW["min_passes"](value)
    assert repr(value) in str(info.value)


def test_min_passes_accepts_whole_numbers():
    assert KW["min_passes"](1) == 1
    assert KW["min_passes"](19) == 19


@pytest.mark.parametrize("value", [0, -1, math.inf, math.nan, True, "1"])
def test_max_latency_rejects(value):
    with pytest.raises(ValueError, match=r"max_latency") as info:
        KW["max_latency"](value)
    assert repr(value) in str(info.value)


def test_max_latency_and_quantile_accept():
    assert KW["max_latency"](2) == 2.0
    assert KW["max_latency"](0.25) == 0.25
    assert KW["latency_quantile"](0.5) == 0.5


@pytest.mark.parametrize("value", [0, 1, 95, -0.5, True])
def test_latency_quantile_rejects(value):
    with pytest.raises(ValueError, match=r"latency_quantile"):
        KW["latency_quantile"](value)


def test_confidence_keyword_names_itself_and_suggests_a_fraction():
    with pytest.raises(ValueError, match=r"probability\(confidence=\.\.\.\).*95.*0\.95"):
        KW["confidence"](95)
    with pytest.raises(ValueError, match=r"probability\(confidence=\.\.\.\).*1\.0"):
        KW["confidence"](1.0)
    assert KW["confidence"](0.8) == 0.8


def test_method_and_prior_keywords():
    assert KW["method"]("Wilson") == "wilson"
    with pytest.raises(ValueError, match=r"probability\(method=\.\.\.\).*'nope'"):
        KW["method"]("nope")
    assert KW["prior"]((0.5, 0.5)) == (0.5, 0.5)
    with pytest.raises(ValueError, match=r"probability\(prior=\.\.\.\)"):
        KW["prior"]((1,))


# -- case_spec --------------------------------------------------------------------------


def test_no_gate_without_a_bar():
    spec = case_spec({}, 10, StatsConfig())
    assert spec == CaseSpec(None, 0.95, None)
    assert not spec.gated


def test_both_min_rate_and_min_passes_is_an_error_naming_both():
    with pytest.raises(ValueError, match=r"min_rate=0\.9, min_passes=9.*not both"):
        case_spec({"min_rate": 0.9, "min_passes": 9}, 10, StatsConfig())


def test_min_passes_more_than_runs_is_an_error_naming_both_numbers():
    with pytest.raises(ValueError, match=r"min_passes=11\).*10 runs"):
        case_spec({"min_passes": 11}, 10, StatsConfig())
    # exactly as many as runs is allowed
    assert case_spec({"min_passes": 10}, 10, StatsConfig()).gate.min_passes == 10


def test_session_min_rate_gates_every_case():
    spec = case_spec({}, 10, StatsConfig(min_rate=0.8, errors="exclude"))
    assert spec.gated
    assert spec.gate == GateSpec("rate", 0.8, None, 0.95, "exact", (1.0, 1.0), "exclude")


def test_marker_min_rate_wins_over_the_session_bar():
    spec = case_spec({"min_rate": 0.6}, 10, StatsConfig(min_rate=0.8))
    assert spec.gate.rule == "rate" and spec.gate.bar == 0.6


def test_marker_min_passes_wins_over_the_session_bar():
    spec = case_spec({"min_passes": 19, "runs": 20}, 20, StatsConfig(min_rate=0.8))
    assert spec.gate.rule == "count"
    assert spec.gate.min_passes == 19
    assert spec.gate.bar == pytest.approx(19 / 20)


def test_per_gate_confidence_method_prior_override_the_session():
    config = StatsConfig(method="wilson", confidence=0.9, prior=(2.0, 2.0))
    spec = case_spec({"min_rate": 0.5, "confidence": 0.8, "method": "bayes", "prior": (0.5, 0.5)}, 10, config)
    assert (spec.gate.confidence, spec.gate.method, spec.gate.prior) == (0.8, "bayes", (0.5, 0.5))
    inherited = case_spec({"min_rate": 0.5}, 10, config)
    assert (inherited.gate.confidence, inherited.gate.method, inherited.gate.prior) == (0.9, "wilson", (2.0, 2.0))


def test_latency_keywords_and_latency_only_gate():
    config = StatsConfig(latency_quantile=0.9)
    assert case_spec({}, 5, config).latency_quantile == 0.9
    spec = case_spec({"latency_quantile": 0.5, "max_latency": 1.5}, 5, config)
    assert (spec.latency_quantile, spec.max_latency) == (0.5, 1.5)
    assert spec.gate is None
    assert spec.gated  # a latency bar alone gates the case


# -- unreachable ------------------------------------------------------------------------


def test_unreachable_rate_gate_says_how_many_runs_it_needs():
    spec = case_spec({"min_rate": 0.99}, 5, StatsConfig())
    # exact, all 5 of 5 passing: lower bound 0.025**(1/n) >= 0.99 needs n >= 368
    assert unreachable(spec, 5) == 368
    assert unreachable(spec, 367) == 368
    assert unreachable(spec, 368) is None
    assert unreachable(spec, 1000) is None


def test_unreachable_uses_the_gate_confidence_and_method():
    spec = case_spec({"min_rate": 0.9, "confidence": 0.9, "method": "wilson"}, 10, StatsConfig())
    assert unreachable(spec, 10) == stats.runs_needed(0.9, 0.9, "wilson") == 25
    assert unreachable(case_spec({"min_rate": 0.9}, 10, StatsConfig()), 10) == 36


def test_min_rate_one_can_never_pass():
    assert unreachable(case_spec({"min_rate": 1}, 50, StatsConfig()), 50) == 0


def test_unreachable_ignores_count_gates_and_ungated_cases():
    assert unreachable(case_spec({"min_passes": 3}, 3, StatsConfig()), 3) is None
    assert unreachable(case_spec({}, 3, StatsConfig()), 3) is None
    assert unreachable(case_spec({"max_latency": 1.0}, 3, StatsConfig()), 3) is None


# -- evaluate_gate: rate rule ----------------------------------------------------------


def test_rate_gate_at_and_around_the_lower_bound():
    low, high = stats.clopper_pearson(7, 10, 0.95)
    assert evaluate_gate(rate_gate(low), 7, 3, 0).verdict == PASSED  # whole interval at the bar: pass
    assert evaluate_gate(rate_gate(nextafter(low, 0)), 7, 3, 0).verdict == PASSED
    assert evaluate_gate(rate_gate(nextafter(low, 1)), 7, 3, 0).verdict == UNDECIDED


def test_rate_gate_at_and_around_the_upper_bound():
    low, high = stats.clopper_pearson(7, 10, 0.95)
    assert evaluate_gate(rate_gate(high), 7, 3, 0).verdict == UNDECIDED  # bar inside (at the edge)
    assert evaluate_gate(rate_gate(nextafter(high, 1)), 7, 3, 0).verdict == FAILED  # entirely below
    assert evaluate_gate(rate_gate(nextafter(high, 0)), 7, 3, 0).verdict == UNDECIDED


def test_rate_gate_result_fields():
    spec = rate_gate(0.5, method="wilson", confidence=0.9)
    result = evaluate_gate(spec, 7, 2, 1)
    low, high = stats.wilson(7, 10, 0.9)
    assert (result.passes, result.total, result.excluded) == (7, 10, 0)
    assert result.interval.method == "wilson" and result.interval.level == 0.9
    assert (result.interval.low, result.interval.high) == (low, high)
    assert result.verdict == stats.verdict(low, high, 0.5)


def test_rate_gate_bayes_uses_the_gate_prior():
    flat = evaluate_gate(rate_gate(0.5, method="bayes"), 7, 3, 0).interval
    skewed = evaluate_gate(rate_gate(0.5, method="bayes", prior=(20.0, 1.0)), 7, 3, 0).interval
    assert (flat.low, flat.high) == stats.beta_credible(7, 10, 0.95, (1.0, 1.0))
    assert (skewed.low, skewed.high) == stats.beta_credible(7, 10, 0.95, (20.0, 1.0))
    assert skewed.low > flat.low


def test_errors_count_as_non_passes_by_default():
    result = evaluate_gate(rate_gate(0.6), 8, 0, 2)
    assert (result.total, result.excluded) == (10, 0)
    assert (result.interval.low, result.interval.high) == stats.clopper_pearson(8, 10, 0.95)
    assert result.verdict == UNDECIDED  # [0.44, 0.97]


def test_errors_exclude_leaves_errored_runs_out():
    result = evaluate_gate(rate_gate(0.6, errors="exclude"), 8, 0, 2)
    assert (result.passes, result.total, result.excluded) == (8, 8, 2)
    assert (result.interval.low, result.interval.high) == stats.clopper_pearson(8, 8, 0.95)
    assert result.verdict == PASSED  # 0.025**(1/8) = 0.63 >= 0.6


def test_gate_without_counted_runs_is_undecided():
    result = evaluate_gate(rate_gate(0.5), 0, 0, 0)
    assert (result.total, result.interval, result.verdict) == (0, None, UNDECIDED)
    excluded = evaluate_gate(rate_gate(0.5, errors="exclude"), 0, 0, 3)
    assert (excluded.total, excluded.excluded, excluded.interval, excluded.verdict) == (0, 3, None, UNDECIDED)


def test_rate_gate_to_dict():
    result = evaluate_gate(rate_gate(0.5), 7, 3, 0)
    data = result.to_dict(runs=12)
    assert data == {
        "rule": "rate",
        "min_rate": 0.5,
        "confidence": 0.95,
        "method": "exact",
        "prior": [1.0, 1.0],
        "errors": "count",
        "runs": 12,
        "passes": 7,
        "total": 10,
        "excluded": 0,
        "low": result.interval.low,
        "high": result.interval.high,
        "verdict": "undecided",
    }
    assert evaluate_gate(rate_gate(0.5), 0, 0, 0).to_dict(3)["low"] is None


# -- evaluate_gate: count rule ---------------------------------------------------------


def test_count_rule_passes_at_the_count_and_fails_one_below():
    assert evaluate_gate(count_gate(19, 20), 19, 1, 0).verdict == PASSED
    assert evaluate_gate(count_gate(19, 20), 20, 0, 0).verdict == PASSED
    assert evaluate_gate(count_gate(19, 20), 18, 2, 0).verdict == FAILED
    assert evaluate_gate(count_gate(19, 20), 18, 0, 2).verdict == FAILED


def test_count_rule_ignores_the_interval_and_still_reports_it():
    # 3/3 has a wide interval; a rate rule at the same bar would be undecided.
    result = evaluate_gate(count_gate(3, 3), 3, 0, 0)
    assert result.verdict == PASSED
    assert (result.interval.low, result.interval.high) == stats.clopper_pearson(3, 3, 0.95)
    assert evaluate_gate(rate_gate(1.0), 3, 0, 0).verdict == UNDECIDED


def test_count_rule_with_excluded_errors_still_needs_the_passes():
    result = evaluate_gate(count_gate(4, 5, errors="exclude"), 3, 0, 2)
    assert (result.total, result.excluded, result.verdict) == (3, 2, FAILED)


def test_count_gate_to_dict():
    data = evaluate_gate(count_gate(4, 5), 4, 1, 0).to_dict(runs=5)
    assert data["rule"] == "count"
    assert data["min_passes"] == 4
    assert "min_rate" not in data
    assert data["verdict"] == "pass"


def test_count_gate_without_counted_runs_fails_it_is_never_undecided():
    # every run errored and was excluded: 0 passes of the 3 needed
    result = evaluate_gate(count_gate(3, 3, errors="exclude"), 0, 0, 3)
    assert (result.total, result.interval, result.verdict) == (0, None, FAILED)


# -- evaluate_gate: every run skipped, runs cut short ------------------------------------


@pytest.mark.parametrize("spec", [count_gate(3, 4), rate_gate(0.5), rate_gate(0.5, errors="exclude")])
def test_a_gate_whose_runs_all_skipped_is_skipped(spec):
    result = evaluate_gate(spec, 0, 0, 0, skipped=4)
    assert (result.total, result.interval, result.verdict) == (0, None, SKIPPED)
    assert result.to_dict(4)["verdict"] == "skip"
    # one counted run is a sample: decided as usual
    assert evaluate_gate(spec, 1, 0, 0, skipped=3).verdict != SKIPPED
    # an excluded error is not a skip: nothing counted, but something went wrong
    assert evaluate_gate(spec, 0, 0, 1, skipped=3).verdict in (UNDECIDED, FAILED)
    # skipped so far, but runs never reported: unknown
    assert evaluate_gate(spec, 0, 0, 0, skipped=1, cut_short=3).verdict == UNDECIDED


def test_a_rate_gate_with_missing_runs_never_passes_but_can_fail():
    assert evaluate_gate(rate_gate(0.1), 5, 0, 0).verdict == PASSED  # [48%, 100%]
    assert evaluate_gate(rate_gate(0.1), 5, 0, 0, cut_short=5).verdict == UNDECIDED
    assert evaluate_gate(rate_gate(0.9), 0, 5, 0, cut_short=5).verdict == FAILED  # [0%, 52%]
    assert evaluate_gate(rate_gate(0.5), 3, 2, 0, cut_short=5).verdict == UNDECIDED


@pytest.mark.parametrize(
    ("passes", "fails", "missing", "verdict"),
    [
        (5, 0, 5, UNDECIDED),  # already 3 passes: but the runs were cut short
        (2, 3, 5, UNDECIDED),  # 2 + up to 5 more could reach 3
        (1, 7, 2, UNDECIDED),  # 1 + 2 = 3: just reachable
        (1, 8, 1, FAILED),  # 1 + 1 < 3: no missing run can save it
        (0, 10, 0, FAILED),
        (3, 7, 0, PASSED),
    ],
)
def test_a_count_gate_with_missing_runs_fails_only_when_out_of_reach(passes, fails, missing, verdict):
    assert evaluate_gate(count_gate(3, 10), passes, fails, 0, cut_short=missing).verdict == verdict


def test_a_latency_gate_with_missing_runs_never_passes_but_can_fail():
    assert evaluate_latency(latency_records(TWENTY), 0.5, 0.95, 1.0).verdict == PASSED
    assert evaluate_latency(latency_records(TWENTY), 0.5, 0.95, 1.0, cut_short=3).verdict == UNDECIDED
    assert evaluate_latency(latency_records(TWENTY), 0.5, 0.95, 0.001, cut_short=3).verdict == FAILED


def test_a_latency_gate_whose_runs_all_skipped_is_skipped():
    assert evaluate_latency(latency_records([0.0] * 3, "sss"), 0.5, 0.95, 1.0).verdict == SKIPPED
    assert evaluate_latency(latency_records([0.0] * 3, "sss"), 0.5, 0.95, None).verdict is None  # not gated
    assert evaluate_latency(latency_records([0.0] * 3, "sss"), 0.5, 0.95, 1.0, cut_short=1).verdict == UNDECIDED


def test_analyze_row_of_an_all_skipped_case_is_skipped_and_does_not_fail():
    config = StatsConfig()
    row = row_of("c", "ssss")
    result = analyze_row(row, case_spec({"min_passes": 3, "max_latency": 1.0}, 4, config), config)
    assert (result.gate.verdict, result.latency.verdict, result.verdict) == (SKIPPED, SKIPPED, SKIPPED)
    assert result.decided_pass("fail") is True
    assert result.missing == 0
    cut = analyze_row(row_of("c", "pppp"), case_spec({"min_passes": 3}, 10, config), config, missing=6)
    assert (cut.verdict, cut.missing) == (UNDECIDED, 6)


# -- latency gates that cannot pass ----------------------------------------------------


@pytest.mark.parametrize("q", [0.5, 0.9, 0.95, 0.99])
@pytest.mark.parametrize("confidence", [0.8, 0.9, 0.95, 0.99])
def test_latency_unreachable_names_the_first_run_count_with_an_upper_bound(q, confidence):
    spec = case_spec({"latency_quantile": q, "max_latency": 1.0}, 1, StatsConfig())
    needed = latency_unreachable(spec, 1, confidence)
    if needed is None:  # one run is enough (q small, confidence low)
        assert stats.quantile_ranks(1, q, confidence)[1] is not None
        return
    assert stats.quantile_ranks(needed, q, confidence)[1] is not None
    assert stats.quantile_ranks(needed - 1, q, confidence)[1] is None
    # the order-statistic condition q**n <= (1 - confidence) / 2, solved for n
    assert needed == math.ceil(math.log((1 - confidence) / 2) / math.log(q) - 1e-9)
    assert latency_unreachable(spec, needed - 1, confidence) == needed
    assert latency_unreachable(spec, needed, confidence) is None


def test_latency_unreachable_ignores_cases_without_a_latency_gate():
    config = StatsConfig()
    assert latency_unreachable(case_spec({"latency_quantile": 0.99}, 5, config), 5, 0.95) is None
    assert latency_unreachable(case_spec({"min_rate": 0.5}, 5, config), 5, 0.95) is None
    assert latency_unreachable(case_spec({"max_latency": 1.0}, 72, config), 72, 0.95) is None  # p95: 72 runs
    assert latency_unreachable(case_spec({"max_latency": 1.0}, 71, config), 71, 0.95) == 72


# -- evaluate_latency ------------------------------------------------------------------

TWENTY = [0.01 * i for i in range(1, 21)]  # 10ms .. 200ms; p50 ranks at 95%: (6, 15)


def latency_records(durations, outcomes=None):
    outcomes = outcomes or "p" * len(durations)
    return records("lat", outcomes, list(durations))


def test_latency_estimate_interval_and_ranks():
    result = evaluate_latency(latency_records(TWENTY), 0.5, 0.95, None)
    assert stats.quantile_ranks(20, 0.5, 0.95) == (6, 15)
    assert result.ranks == (6, 15)
    assert result.estimate == pytest.approx(stats.sample_quantile(TWENTY, 0.5))
    assert (result.low, result.high) == (TWENTY[5], TWENTY[14])
    assert (result.total, result.excluded, result.verdict) == (20, 0, None)
    ci = result.to_dict()["ci"]
    assert ci == {"method": "order-statistic", "level": 0.95, "low": TWENTY[5], "high": TWENTY[14], "ranks": [6, 15]}


@pytest.mark.parametrize(
    ("limit", "verdict"),
    [
        (1.0, PASSED),
        (TWENTY[14], PASSED),  # upper bound exactly at the limit
        (nextafter(TWENTY[14], 0), UNDECIDED),
        (0.1, UNDECIDED),
        (TWENTY[5], UNDECIDED),  # lower bound at the limit: not entirely above
        (nextafter(TWENTY[5], 0), FAILED),
        (0.001, FAILED),
    ],
)
def test_latency_verdicts_around_the_limit(limit, verdict):
    result = evaluate_latency(latency_records(TWENTY), 0.5, 0.95, limit)
    assert result.verdict == verdict
    assert result.max_latency == limit


def test_latency_interval_without_upper_end_cannot_pass():
    durations = [0.001] * 10
    result = evaluate_latency(latency_records(durations), 0.95, 0.95, 1000.0)
    assert result.high is None  # p95 of 10 samples has no upper order statistic
    assert result.verdict == UNDECIDED
    assert result.to_dict()["ci"]["high"] is None


def test_latency_interval_without_upper_end_can_still_fail():
    result = evaluate_latency(latency_records([5.0] * 10), 0.95, 0.95, 1.0)
    assert result.high is None and result.low == 5.0
    assert result.verdict == FAILED


def test_latency_counts_pass_and_fail_runs_and_excludes_errors_and_skips():
    durations = [0.1, 0.2, 9.0, 9.0, 0.3]
    result = evaluate_latency(latency_records(durations, "pfess"), 0.5, 0.95, None)
    assert (result.total, result.excluded) == (2, 1)
    assert result.estimate == pytest.approx(0.15)


def test_latency_without_timed_runs():
    gated = evaluate_latency(latency_records([1.0, 1.0], "es"), 0.5, 0.95, 2.0)
    assert (gated.total, gated.excluded, gated.estimate, gated.verdict) == (0, 1, None, UNDECIDED)
    assert gated.to_dict()["ci"] is None
    shown = evaluate_latency(latency_records([1.0], "s"), 0.5, 0.95, None)
    assert shown.verdict is None


# -- metrics ---------------------------------------------------------------------------


@pytest.mark.parametrize(("n", "c", "k"), [(10, 7, 3), (10, 10, 3), (10, 2, 3), (5, 3, 5), (20, 1, 1)])
def test_metric_values_are_the_unbiased_estimators(n, c, k):
    assert metric_value("pass^", k, c, n) == pytest.approx(comb(c, k) / comb(n, k), abs=1e-15)
    assert metric_value("pass@", k, c, n) == pytest.approx(1 - comb(n - c, k) / comb(n, k), abs=1e-15)


def test_metric_with_fewer_runs_than_k_is_left_out():
    assert metric_value("pass^", 5, 4, 4) is None
    assert metric_value("pass@", 5, 4, 4) is None
    assert metric_value("pass@", 4, 0, 4) == 0.0


def test_analyze_row_metrics_count_only_counted_runs():
    config = StatsConfig(metrics=(("pass^", 3), ("pass@", 5)))
    row = row_of("m", "ppfpfss")  # 3 passes of 5 counted runs, 2 skipped
    result = analyze_row(row, case_spec({}, 7, config), config)
    assert list(result.metrics) == ["pass^3", "pass@5"]
    assert result.metrics["pass^3"] == pytest.approx(comb(3, 3) / comb(5, 3))
    assert result.metrics["pass@5"] == 1.0
    short = analyze_row(row_of("m2", "pppss"), case_spec({}, 5, config), config)
    assert short.metrics == {"pass^3": 1.0, "pass@5": None}


# -- analyze_row -----------------------------------------------------------------------


def test_row_interval_uses_the_session_settings_not_the_gate():
    config = StatsConfig(method="wilson", confidence=0.9)
    spec = case_spec({"min_rate": 0.5, "method": "exact", "confidence": 0.99}, 10, config)
    result = analyze_row(row_of("r", "pppppppfff"), spec, config)
    assert (result.interval.method, result.interval.level) == ("wilson", 0.9)
    assert (result.interval.low, result.interval.high) == stats.wilson(7, 10, 0.9)
    assert (result.gate.interval.low, result.gate.interval.high) == stats.clopper_pearson(7, 10, 0.99)
    assert result.interval.to_dict() == {
        "method": "wilson",
        "level": 0.9,
        "low": result.interval.low,
        "high": result.interval.high,
    }


def test_row_with_only_skips_has_no_interval():
    config = StatsConfig()
    result = analyze_row(row_of("s", "ss"), case_spec({}, 2, config), config)
    assert result.interval is None
    assert result.verdict is None


def test_bayes_row_interval_uses_the_session_prior():
    config = StatsConfig(method="bayes", prior=(5.0, 5.0))
    result = analyze_row(row_of("b", "pppppppfff"), case_spec({}, 10, config), config)
    assert (result.interval.low, result.interval.high) == stats.beta_credible(7, 10, 0.95, (5.0, 5.0))


def test_latency_only_when_asked_or_gated():
    row = row_of("l", "pp", [0.1, 0.2])
    config = StatsConfig()
    assert analyze_row(row, case_spec({}, 2, config), config).latency is None
    assert analyze_row(row, case_spec({}, 2, StatsConfig(latency=True)), StatsConfig(latency=True)).latency is not None
    gated = analyze_row(row, case_spec({"max_latency": 1.0}, 2, config), config)
    assert gated.latency is not None and gated.latency.max_latency == 1.0


def test_latency_uses_the_case_quantile():
    row = row_of("l", "p" * 20, TWENTY)
    config = StatsConfig(latency=True)
    median = analyze_row(row, case_spec({"latency_quantile": 0.5}, 20, config), config).latency
    default = analyze_row(row, case_spec({}, 20, config), config).latency
    assert median.quantile == 0.5 and median.estimate == pytest.approx(0.105)
    assert default.quantile == 0.95 and default.estimate == pytest.approx(stats.sample_quantile(TWENTY, 0.95))


# -- combined verdicts -------------------------------------------------------------------


def combined(outcomes: str, durations, kwargs):
    config = StatsConfig()
    row = row_of("c", outcomes, durations)
    return analyze_row(row, case_spec(kwargs, len(outcomes), config), config)


@pytest.mark.parametrize(
    ("kwargs", "verdict"),
    [
        ({"min_passes": 20, "max_latency": 1.0}, PASSED),
        ({"min_passes": 20, "max_latency": 0.001}, FAILED),
        ({"min_passes": 20, "max_latency": 0.1}, UNDECIDED),
        ({"min_rate": 0.99, "max_latency": 1.0}, UNDECIDED),
        ({"min_rate": 0.99, "max_latency": 0.001}, FAILED),
        ({"max_latency": 1.0}, PASSED),
        ({"min_rate": 0.8}, PASSED),
        ({}, None),
    ],
)
def test_combined_verdict_fail_wins_then_undecided(kwargs, verdict):
    result = combined("p" * 20, TWENTY, {"latency_quantile": 0.5, **kwargs})
    assert result.verdict == verdict


def test_decided_pass_with_undecided_policy():
    undecided = combined("p" * 20, TWENTY, {"min_rate": 0.99})
    assert undecided.verdict == UNDECIDED
    assert undecided.decided_pass("fail") is False
    assert undecided.decided_pass("pass") is True
    failed = combined("f" * 20, TWENTY, {"min_rate": 0.5})
    assert failed.decided_pass("pass") is False
    assert combined("p" * 20, TWENTY, {}).decided_pass("fail") is None


# -- analyze: rows, totals, aggregates ----------------------------------------------------


def session(*cases):
    """cases: (label, outcomes, kwargs); returns (summary, specs) for analyze()."""
    all_records, specs = [], {}
    for label, outcomes, kwargs in cases:
        recs = records(label, outcomes)
        all_records += recs
        specs[recs[0].case.key] = kwargs
    return aggregate(all_records), specs


def run_analyze(config, *cases):
    summary, kwargs = session(*cases)
    specs = {key: case_spec(kw, len(summary.rows[0].records), config) for key, kw in kwargs.items()}
    return analyze(summary, config, lambda case: specs[case.key])


def test_gate_totals_and_failed_gates():
    config = StatsConfig()
    result = run_analyze(
        config,
        ("a::pass", "p" * 20, {"min_rate": 0.8}),
        ("a::fail", "pfffffffffffffffffff", {"min_rate": 0.8}),
        ("b::undecided", "pppppppppppppppppfff", {"min_rate": 0.8}),
        ("b::ungated", "ffff", {}),
    )
    assert [r.row.label for r in result.gated] == ["a::pass", "a::fail", "b::undecided"]
    assert result.gate_totals() == {"passed": 1, "failed": 1, "undecided": 1, "skipped": 0}
    skipped = run_analyze(config, ("a::skipped", "ssss", {"min_passes": 2}))
    assert skipped.gate_totals() == {"passed": 0, "failed": 0, "undecided": 0, "skipped": 1}
    assert skipped.failed_gates == []
    assert [r.row.label for r in result.failed_gates] == ["a::fail", "b::undecided"]
    assert set(result.by_key) == {r.row.case.key for r in result.rows}
    specs = {r.row.case.key: r.spec for r in result.rows}
    lenient = analyze(
        aggregate(r for row in result.rows for r in row.row.records),
        StatsConfig(undecided="pass"),
        lambda case: specs[case.key],
    )
    assert [r.row.label for r in lenient.failed_gates] == ["a::fail"]


def test_cases_without_a_spec_get_the_session_defaults():
    config = StatsConfig(min_rate=0.5, latency_quantile=0.9, latency=True)
    summary = aggregate(records("x", "pppp"))
    result = analyze(summary, config)
    row = result.rows[0]
    assert row.gate is not None and row.gate.spec.bar == 0.5  # the session bar
    assert row.latency.quantile == 0.9


def test_every_function_and_overall_get_an_estimate_over_inputs_without_metrics():
    result = run_analyze(StatsConfig(), ("a", "ppp", {}))
    [function, overall] = result.aggregates
    assert (function.name, function.scope, overall.name, overall.scope) == ("a", "function", "Overall", "overall")
    assert function.metrics == {} and function.estimate.estimate == 1.0
    assert function.estimate.suppressed == "fewer than 10 inputs" and not function.shown and not overall.shown


def test_aggregates_per_benchmark_by_name_and_overall():
    config = StatsConfig(metrics=(("pass^", 3), ("pass@", 2)))
    summary = aggregate(
        records("b::one", "ppppf")  # pass^3 = C(4,3)/C(5,3) = 0.4, pass@2 = 1
        + records("b::two", "pppff")  # pass^3 = 1/10 = 0.1, pass@2 = 1 - 1/10 = 0.9
        + records("a::short", "pp")  # fewer than 3 runs: pass^3 left out; pass@2 = 1
        + records("a::zero", "fff")  # pass^3 = 0, pass@2 = 0
    )
    specs = {row.case.key: case_spec({}, len(row.records), config) for row in summary.rows}
    result = analyze(summary, config, lambda case: specs[case.key])
    names = [(a.name, a.scope) for a in result.aggregates]
    assert names == [("a", "function"), ("b", "function"), ("Overall", "overall")]  # by name, as 0.3.0
    a, b, overall = result.aggregates
    assert {m: v.estimate for m, v in b.metrics.items()} == pytest.approx({"pass^3": 0.25, "pass@2": 0.95})
    assert {m: (v.inputs, v.left_out) for m, v in b.metrics.items()} == {"pass^3": (2, 0), "pass@2": (2, 0)}
    assert {m: v.estimate for m, v in a.metrics.items()} == {"pass^3": 0.0, "pass@2": 0.5}
    assert {m: (v.inputs, v.left_out) for m, v in a.metrics.items()} == {"pass^3": (1, 1), "pass@2": (2, 0)}
    assert {m: v.estimate for m, v in overall.metrics.items()} == pytest.approx({"pass^3": 0.5 / 3, "pass@2": 2.9 / 4})
    # The mean of the per-case fractions: each input counts once, whatever its runs.
    assert overall.estimate.estimate == pytest.approx((0.8 + 0.6 + 1.0 + 0.0) / 4)
    data = overall.to_dict()
    assert list(data)[:17] == [
        "scope",
        "name",
        "inputs",
        "runs",
        "estimate",
        "ci",
        "normal_ci",
        "resamples",
        "seed",
        "resampling_unit",
        "note",
        "suppressed",
        "icc",
        "width_factor",
        "metrics",
        "stopped",
        "runs_change",
    ]  # 0.3.0's keys first
    assert data["metrics"]["pass^3"] == {
        "k": 3,
        "inputs": 3,
        "left_out": 1,
        "estimate": pytest.approx(0.5 / 3),
        "ci": None,
        "normal_ci": None,
        "suppressed": "fewer than 10 inputs",
        "stopped": 0,
        "cases": 3,
    }
    assert data["runs"] == {"min": 2, "mean": 3.75, "max": 5} and data["resampling_unit"] == "input"


def test_the_interval_over_inputs_follows_ini_prob_inputs_interval():
    cases = [(f"f::c{i:02d}", "p" * (i % 4) + "f" * (4 - i % 4)) for i in range(12)]
    summary = aggregate([r for key, outcomes in cases for r in records(key, outcomes)])
    wilson = analyze(summary, StatsConfig()).aggregates[0]
    bootstrap = analyze(summary, StatsConfig(inputs_interval="percentile")).aggregates[0]
    assert wilson.estimate.method == "wilson" and wilson.to_dict()["ci"]["method"] == "wilson"
    assert bootstrap.to_dict()["ci"]["method"] == "bootstrap" and bootstrap.to_dict()["resamples"] == 5000
    assert wilson.estimate.estimate == bootstrap.estimate.estimate and wilson.estimate.ci != bootstrap.estimate.ci
    assert wilson.shown and wilson.estimate.icc is not None


def test_aggregate_of_only_short_cases_is_none():
    config = StatsConfig(metrics=(("pass^", 5),))
    result = run_analyze(config, ("a", "pp", {}))
    assert result.aggregates[0].metrics["pass^5"].estimate is None
    assert result.aggregates[-1].to_dict()["metrics"]["pass^5"] == {
        "k": 5,
        "inputs": 0,
        "left_out": 1,
        "estimate": None,
        "ci": None,
        "normal_ci": None,
        "suppressed": "no input with at least 5 runs",
        "stopped": 0,
        "cases": 0,
    }


def test_runs_not_executed_and_runs_cut_short_combine_in_a_count_gate():
    # not executed by a decision: a count gate that has its passes passes; cut short: it never does
    assert evaluate_gate(count_gate(3, 10), 3, 0, 0, 7).verdict == PASSED
    assert evaluate_gate(count_gate(3, 10), 3, 0, 0, 4, cut_short=3).verdict == UNDECIDED
    # 1 pass + 1 not executed + 1 cut short can still make 3; + nothing more cannot
    assert evaluate_gate(count_gate(3, 10), 1, 7, 0, 1, cut_short=1).verdict == UNDECIDED
    assert evaluate_gate(count_gate(3, 10), 1, 8, 0, 1).verdict == FAILED
    # every executed run skipped, the rest not executed: not a skipped gate
    assert evaluate_gate(count_gate(3, 10), 0, 0, 0, 6, skipped=4).verdict == UNDECIDED
