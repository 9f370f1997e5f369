"""Pieces shared by the end-to-end tests of the OTLP export (tests/e2e/test_otel_export*.py): the benchmark
file whose runs cover every outcome, and reading the decoded spans back as one trace."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from otlp_receiver import PointView, SpanView

BENCH = """
import pytest
from pytest_probability import record_cost, record_usage


@pytest.fixture
def broken_fixture():
    raise RuntimeError("fixture could not start")


@pytest.mark.parametrize("prompt", ["terse", "cot"])
def bench_classify(prompt):
    record_usage(model="m-small", input_tokens=100, output_tokens=20, cached_input_tokens=5, cost=0.25)
    record_usage(model="m-small", input_tokens=10, output_tokens=2, cost=0.125)
    assert prompt == "terse", f"wanted terse, got {prompt}"


def bench_two_models():
    record_usage(model="m-small", input_tokens=1, output_tokens=1, cost=0.5)
    record_usage(model="m-large", input_tokens=3, output_tokens=4, cached_input_tokens=2, cost=1.0)


def bench_cost_only():
    record_cost(0.75)


def bench_broken():
    raise KeyError("no such key")


def bench_setup_error(broken_fixture):
    pass


def bench_skipped():
    pytest.skip("not today")
"""
#: --prob-runs=2 over the 7 cases of BENCH.
BENCH_RUNS = 14


def session_and_runs(spans: list[SpanView]) -> tuple[SpanView, list[SpanView]]:
    sessions = [s for s in spans if s.name == "probability.session"]
    assert len(sessions) == 1, [s.name for s in spans]
    runs = [s for s in spans if s.name != "probability.session"]
    assert all(s.name.startswith("probability.run ") for s in runs), [s.name for s in runs]
    return sessions[0], runs


def by_nodeid(runs: list[SpanView]) -> dict[str, SpanView]:
    index = {s.attributes["pytest.nodeid"]: s for s in runs}
    assert len(index) == len(runs), "two spans for one run"
    return index


def assert_one_trace(spans: list[SpanView], runs_expected: int) -> tuple[SpanView, list[SpanView]]:
    session, runs = session_and_runs(spans)
    assert len(spans) == runs_expected + 1
    assert len({s.span_id for s in spans}) == len(spans), "duplicate spans"
    assert {s.trace_id for s in spans} == {session.trace_id}
    assert {s.parent_span_id for s in runs} == {session.span_id}
    return session, runs


def first_lineno(source: str, function: str) -> int:
    code = compile(source, "bench", "exec")
    found = [c for c in code.co_consts if getattr(c, "co_name", None) == function]
    assert found, function
    return found[0].co_firstlineno


def point_key(point: PointView) -> tuple:
    return point.name, tuple(sorted(point.attributes.items()))
