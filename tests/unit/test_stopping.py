"""Early stopping maths: mixture SPRT e-values against scipy, Ville's bound exactly, curtailment exhaustively."""

from __future__ import annotations

import math

import pytest
from scipy import integrate, special
from scipy.stats import beta as beta_distribution

from pytest_probability.config.spec import CaseSpec, GateSpec
from pytest_probability.decide.gates import early_verdict, evaluate_gate
from pytest_probability.maths import stopping
from pytest_probability.vocabulary import FAILED, PASSED, UNDECIDED

BARS = (0.1, 0.5, 0.8, 0.9, 0.99)


def oracle_above(s: int, n: int, bar: float) -> float:
    f = n - s
    a, b = s + 1, f + 1
    tail = beta_distribution.logsf(bar, a, b)
    if tail < -690:  # scipy's tail is subnormal or 0 there: no oracle
        return math.inf
    mass = special.betaln(a, b) + tail
    return mass - math.log1p(-bar) - s * math.log(bar) - f * math.log1p(-bar)


def oracle_below(s: int, n: int, bar: float) -> float:
    f = n - s
    a, b = s + 1, f + 1
    tail = beta_distribution.logcdf(bar, a, b)
    if tail < -690:
        return math.inf
    mass = special.betaln(a, b) + tail
    return mass - math.log(bar) - s * math.log(bar) - f * math.log1p(-bar)


@pytest.mark.parametrize("bar", BARS)
@pytest.mark.parametrize("n", [1, 2, 5, 14, 60, 300])
def test_log_evalues_match_scipy(bar, n):
    for s in sorted({0, 1, n // 3, n // 2, (4 * n) // 5, n - 1, n}):
        if not 0 <= s <= n:
            continue
        for ours, oracle in (
            (stopping.log_evalue_above(s, n, bar), oracle_above),
            (stopping.log_evalue_below(s, n, bar), oracle_below),
        ):
            theirs = oracle(s, n, bar)
            if math.isinf(theirs):  # the tail is below 1e-300, where scipy loses digits: no oracle
                assert math.isfinite(ours)
                continue
            assert ours == pytest.approx(theirs, rel=1e-9, abs=1e-9)


def test_evalue_is_the_mixture_likelihood_ratio_by_quadrature():
    # Independent of the incomplete beta function: integrate the likelihood ratio itself.
    s, n, bar = 9, 12, 0.5
    ratio = lambda q: (q / bar) ** s * ((1 - q) / (1 - bar)) ** (n - s)  # noqa: E731
    above, _ = integrate.quad(ratio, bar, 1)
    below, _ = integrate.quad(ratio, 0, bar)
    assert math.exp(stopping.log_evalue_above(s, n, bar)) == pytest.approx(above / (1 - bar), rel=1e-9)
    assert math.exp(stopping.log_evalue_below(s, n, bar)) == pytest.approx(below / bar, rel=1e-9)


def test_far_tail_in_closed_form():
    # s = 0: the upper tail of Beta(1, n+1) at the bar is (1-bar)^(n+1), so M = (1-bar)^n / (n+1) / bar^0 / (1-bar)^n.
    assert stopping.log_evalue_above(0, 300, 0.99) == pytest.approx(-math.log(301), rel=1e-12)


def test_a_bar_of_one_can_never_pass_and_fails_at_the_first_non_pass():
    assert stopping.log_evalue_above(50, 50, 1.0) == -math.inf
    assert stopping.sequential_verdict(50, 50, 1.0, 0.95) is None
    assert stopping.sequential_verdict(49, 50, 1.0, 0.95) == FAILED


def crossing_probability(p: float, bar: float, confidence: float, horizon: int, side: str) -> float:
    """Exact P(the sequential test ever decides ``side`` within ``horizon`` runs | true rate p), by DP over (passes, runs)."""
    alive = {0: 1.0}  # passes -> probability of not having decided yet
    crossed = 0.0
    for n in range(1, horizon + 1):
        nxt: dict[int, float] = {}
        for s, prob in alive.items():
            for s2, q in ((s + 1, p), (s, 1 - p)):
                nxt[s2] = nxt.get(s2, 0.0) + prob * q
        alive = {}
        for s, prob in nxt.items():
            verdict = stopping.sequential_verdict(s, n, bar, confidence)
            if verdict == side:
                crossed += prob
            elif verdict is None:
                alive[s] = prob
    return crossed


@pytest.mark.slow
@pytest.mark.parametrize("bar", [0.5, 0.8, 0.9])
@pytest.mark.parametrize("confidence", [0.9, 0.95])
def test_ville_bounds_the_wrong_verdict_at_every_horizon(bar, confidence):
    """At the bar itself (the worst case) neither side is decided with probability above alpha/2, however long it runs."""
    alpha_half = (1 - confidence) / 2
    for p, side in ((bar, PASSED), (bar - 0.05, PASSED), (bar, FAILED), (min(bar + 0.05, 0.999), FAILED)):
        assert crossing_probability(p, bar, confidence, 400, side) <= alpha_half


@pytest.mark.parametrize("bar", [0.5, 0.8, 0.9, 1.0])
def test_the_shortcut_of_sequential_verdict_changes_nothing(bar):
    level = stopping.threshold(0.95)
    for n in range(1, 80):
        for s in range(n + 1):
            full = None
            if stopping.log_evalue_above(s, n, bar) >= level:
                full = PASSED
            elif stopping.log_evalue_below(s, n, bar) >= level:
                full = FAILED
            assert stopping.sequential_verdict(s, n, bar, 0.95) == full, (s, n)


def test_the_sequential_test_decides_clear_cases_quickly():
    # 14 passes in a row clear a 0.5 bar at 0.95; a rate of 0 fails a 0.9 bar within 3 runs.
    assert next(n for n in range(1, 60) if stopping.sequential_verdict(n, n, 0.5, 0.95)) <= 14
    assert next(n for n in range(1, 60) if stopping.sequential_verdict(0, n, 0.9, 0.95)) <= 3


def brute_completion(decide, s: int, t: int, r: int):
    verdicts = {decide(s + a, t + a + b) if t + a + b else UNDECIDED for a in range(r + 1) for b in range(r + 1 - a)}
    if len(verdicts) == 1 and verdicts <= {PASSED, FAILED}:
        return verdicts.pop()
    return None


@pytest.mark.parametrize("method", ["exact", "wilson", "bayes"])
@pytest.mark.parametrize("bar", [0.5, 0.8, 0.9])
def test_curtailment_agrees_with_every_completion(method, bar):
    """The two-corner check of completion_verdict equals enumerating every outcome of the remaining runs."""
    horizon = 24
    table = {}

    def decide(passes, total):
        key = (passes, total)
        if key not in table:
            spec = GateSpec("rate", bar, None, 0.95, method, (1.0, 1.0), "count")
            table[key] = spec.decide(passes, total)
        return table[key]

    for t in range(horizon + 1):
        for s in range(t + 1):
            for r in range(horizon - t + 1):
                expected = brute_completion(decide, s, t, r)
                assert stopping.completion_verdict(decide, s, t, r) == expected, (s, t, r)
                if method != "bayes":  # the shortcut for intervals that contain the observed rate
                    assert stopping.completion_verdict(decide, s, t, r, bar) == expected, (s, t, r)


def test_count_completion():
    assert stopping.count_completion(5, 10, 5) == PASSED
    assert stopping.count_completion(2, 2, 5) == FAILED
    assert stopping.count_completion(2, 3, 5) is None


def test_parse_mode():
    assert stopping.parse_mode("Curtail") == "curtail"
    assert stopping.parse_mode("sequential") == "sequential"
    assert stopping.parse_mode("off") is None and stopping.parse_mode("") is None
    with pytest.raises(ValueError, match="curtail, sequential or off"):
        stopping.parse_mode("sprt")


# -- the verdicts of analysis with runs not executed --------------------------------


def spec(rule="rate", bar=0.5, stop=None, min_passes=None):
    return GateSpec(rule, bar, min_passes, 0.95, "exact", (1.0, 1.0), "count", stop)


def test_count_gate_with_runs_not_executed_is_undecided_never_pass_or_fail_too_early():
    gate = spec("count", 0.5, min_passes=5)
    assert evaluate_gate(gate, 3, 0, 0, missing=7).verdict == UNDECIDED
    assert evaluate_gate(gate, 3, 5, 0, missing=1).verdict == FAILED
    assert evaluate_gate(gate, 5, 0, 0, missing=5).verdict == PASSED
    assert evaluate_gate(gate, 3, 7, 0).verdict == FAILED  # all executed: as before


def test_sequential_verdict_is_used_only_under_stop_sequential():
    # 10/10 vs 0.6: e-value 37.4 < 40 (alpha/2 = 0.025); 12/12: 88 > 40.
    assert stopping.sequential_verdict(10, 10, 0.6, 0.95) is None
    assert stopping.sequential_verdict(12, 12, 0.6, 0.95) == PASSED
    assert math.exp(stopping.log_evalue_above(10, 10, 0.6)) == pytest.approx((1 - 0.6**11) / 11 / 0.4 / 0.6**10)
    fixed = evaluate_gate(spec(bar=0.6), 12, 0, 0)
    seq = evaluate_gate(spec(bar=0.6, stop="sequential"), 12, 0, 0)
    assert (fixed.verdict, fixed.sequential) == (PASSED, False)
    assert (seq.verdict, seq.sequential) == (PASSED, True)
    assert seq.to_dict(12)["decided_by"] == "sequential"


def test_early_verdict_needs_a_stop_mode_and_waits_for_latency_on_a_pass():
    case = CaseSpec(spec(stop="curtail"), 0.95, None)
    # 39 passes: even if the other 21 of 60 runs fail, 39/60's interval [51.6%, 76.9%] clears 0.5.
    assert early_verdict(case, 39, 0, 0, 21) == PASSED
    assert early_verdict(case, 38, 0, 0, 22) is None  # 38/60: [49.9%, ...]
    assert early_verdict(case, 10, 0, 0, 50) is None
    assert early_verdict(CaseSpec(spec(), 0.95, None), 39, 0, 0, 21) is None
    with_latency = CaseSpec(spec(stop="curtail"), 0.95, 1.0)
    assert early_verdict(with_latency, 39, 0, 0, 21) is None
    assert early_verdict(with_latency, 0, 40, 0, 20) == FAILED
