"""End to end: latency gates, alone and beside a rate gate, and the gates' OpenTelemetry gauges (the rest of
the gates' tests: test_gates.py). Latencies come from ``DURATION(n)`` in the benchmark module (sessions.CONFTEST)."""

from __future__ import annotations

import pytest
from gate_sessions import (
    GATES,
    gates_section,
    plain,
    subprocess_run,
    verbose_outcomes,
)
from sessions import report

pytestmark = pytest.mark.usefixtures("no_hang")
HANG_LIMIT = 80
#: What ``bench()`` writes when given no source (tests/conftest.py).
BENCH = GATES


# -- latency gates --------------------------------------------------------------------------------

LATENCY_GATES = """
import pytest

DURATION = lambda n: n * 0.01  # 10ms .. 200ms


@pytest.mark.probability(runs=20, latency_quantile=0.5)
@pytest.mark.parametrize("case", [
    pytest.param("roomy", marks=pytest.mark.probability(max_latency=0.2)),
    pytest.param("tight", marks=pytest.mark.probability(max_latency=0.05)),
    pytest.param("close", marks=pytest.mark.probability(max_latency=0.1)),
])
def bench_median(case, n):
    pass


@pytest.mark.probability(runs=10, max_latency=100)
def bench_tail(n):
    pass
"""


def test_latency_gates(pytester: pytest.Pytester, bench) -> None:
    # p50 of 20 runs: order statistics 6 and 15 -> [60ms, 150ms]; p95 of 10 runs has no upper end.
    bench(LATENCY_GATES)
    result = pytester.runpytest("-p", "no:cacheprovider", "-v", "--prob-json=report.json")
    outcomes = verbose_outcomes(result)
    assert outcomes["bench_x.py::bench_median::roomy[gate]"] == "PASSED"
    assert outcomes["bench_x.py::bench_median::tight[gate]"] == "FAILED"
    assert outcomes["bench_x.py::bench_median::close[gate]"] == "FAILED"
    assert outcomes["bench_x.py::bench_tail::gate"] == "FAILED"  # cannot pass however fast
    assert gates_section(result) == [
        "  Gates:   1 passed, 1 failed, 2 undecided (undecided counts as fail)",
        "    median::roomy  20/20  p50 105ms [60ms, 150ms]  p50 <= 200ms  PASS",
        "    median::tight  20/20  p50 105ms [60ms, 150ms]  p50 <= 50ms   FAIL",
        "    median::close  20/20  p50 105ms [60ms, 150ms]  p50 <= 100ms  UNDECIDED",
        "    tail           10/10  p95 95ms [80ms, ∞]       p95 <= 100s   UNDECIDED",
    ]
    text = "\n".join(plain(result))
    assert "gate of tail: UNDECIDED: p95 latency interval [0.08s, ∞] vs 100s: UNDECIDED" in text
    rows = {row["label"]: row for row in report(pytester)["rows"]}
    assert rows["median::roomy"]["latency"]["verdict"] == "pass"
    assert rows["median::roomy"]["latency"]["max_latency"] == 0.2
    assert rows["median::roomy"]["gate"] is None
    assert rows["median::roomy"]["verdict"] == "pass"
    assert rows["tail"]["latency"]["ci"]["high"] is None
    assert rows["tail"]["verdict"] == "undecided"
    assert result.ret == pytest.ExitCode.TESTS_FAILED


def test_rate_and_latency_gate_together(pytester: pytest.Pytester, bench) -> None:
    bench(
        """
import pytest

DURATION = lambda n: n * 0.01


@pytest.mark.probability(runs=20, min_rate=0.8, latency_quantile=0.5, max_latency=0.05)
def bench_both(n):
    pass
"""
    )
    result = pytester.runpytest("-p", "no:cacheprovider")
    assert gates_section(result) == [
        "  Gates:   0 passed, 1 failed, 0 undecided",
        "    both  20/20  [83%, 100%], p50 105ms [60ms, 150ms]  >= 80%, p50 <= 50ms  FAIL",
    ]
    assert result.ret == pytest.ExitCode.TESTS_FAILED


# -- OpenTelemetry -----------------------------------------------------------------------------------


def test_otel_gauges(pytester: pytest.Pytester, bench) -> None:
    pytest.importorskip("opentelemetry.sdk")
    pytest.importorskip("opentelemetry.proto")
    from otlp_receiver import flatten_metrics

    from pytest_probability.otel import otlp_json

    bench()
    result = subprocess_run(pytester, "--prob-otel-file=otel.jsonl")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    points = flatten_metrics(list(otlp_json.read_file(pytester.path / "otel.jsonl")))
    gauges: dict[str, dict[str, float]] = {}
    for point in points:
        if point.name.startswith(("probability.case.interval", "probability.case.min_rate", "probability.case.gate")):
            assert point.type == "gauge"
            # The verdict (-1/0/1) is not a ratio: unitless, so no _ratio suffix in Prometheus.
            assert point.unit == ("" if point.name == "probability.case.gate.verdict" else "1")
            label = point.attributes["probability.benchmark"]
            if point.attributes["probability.case"]:
                label += "::" + point.attributes["probability.case"]
            gauges.setdefault(point.name, {})[label] = point.value
    assert gauges["probability.case.gate.verdict"] == {"solid": 1, "broken": -1, "mixed::unsure": 0, "count": 1}
    assert gauges["probability.case.min_rate"] == {
        "solid": 0.8,
        "broken": 0.9,
        "mixed::unsure": 0.5,
        "count": pytest.approx(0.8),
    }
    assert gauges["probability.case.interval.lower"] == {
        "solid": pytest.approx(0.8315665),
        "broken": pytest.approx(0.0667395),
        "mixed::unsure": pytest.approx(0.3475471),
        "mixed::free": pytest.approx(0.3475471),
        "count": pytest.approx(0.2835821),
    }
    assert gauges["probability.case.interval.upper"] == {
        "solid": 1.0,
        "broken": pytest.approx(0.6524529),
        "mixed::unsure": pytest.approx(0.9332605),
        "mixed::free": pytest.approx(0.9332605),
        "count": pytest.approx(0.9949492),
    }
