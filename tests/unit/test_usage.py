"""Usage from spans and prices, the pure parts: reading attributes, merging with record_usage, matching and
pricing, the prices file's errors, the span processor on a real SDK provider, late usage in the budget."""

from __future__ import annotations

import threading
import warnings
from pathlib import Path

import pytest
from opentelemetry.sdk.trace import TracerProvider

from pytest_probability.config.price_file import parse, read
from pytest_probability.features.spend.budget import Budget
from pytest_probability.model.case import CaseRef
from pytest_probability.model.prices import Price, Prices, unpriced_models
from pytest_probability.model.run import Usage
from pytest_probability.otel.usage import SpanUsage, instrumented
from pytest_probability.otel.usage_spans import UsageProcessor
from pytest_probability.run import context
from pytest_probability.run.recording import record_usage
from pytest_probability.run.spanusage import usage_of

OPENAI_SPAN = {  # what opentelemetry-instrumentation-genai-openai 1.3b0 sets (research notes, part 4)
    "gen_ai.operation.name": "chat",
    "gen_ai.provider.name": "openai",
    "gen_ai.request.model": "gpt-4o-mini",
    "gen_ai.response.model": "gpt-4o-mini-2024-07-18",
    "gen_ai.usage.input_tokens": 21,
    "gen_ai.usage.output_tokens": 7,
    "gen_ai.usage.cache_read.input_tokens": 16,
    "gen_ai.usage.reasoning.output_tokens": 3,
}


# -- reading a span's attributes ------------------------------------------------------------------


def test_the_genai_conventions_parts_are_kept_apart_not_added():
    usage = usage_of(OPENAI_SPAN)
    assert usage == Usage(
        model="gpt-4o-mini-2024-07-18",
        input_tokens=21,
        output_tokens=7,
        cached_input_tokens=16,
        reasoning_tokens=3,
        source="span",
        request_model="gpt-4o-mini",
    )


def test_the_request_model_is_the_model_without_a_response_model_and_then_is_not_repeated():
    usage = usage_of({"gen_ai.request.model": "m", "gen_ai.usage.input_tokens": 5})
    assert (usage.model, usage.request_model, usage.input_tokens, usage.output_tokens) == ("m", "", 5, 0)


def test_cache_creation_under_both_names():
    for name in ("gen_ai.usage.cache_creation.input_tokens", "gen_ai.usage.cache_write.input_tokens"):
        usage = usage_of({"gen_ai.usage.input_tokens": 100, "gen_ai.usage.output_tokens": 1, name: 40})
        assert usage.cache_creation_input_tokens == 40


def test_openinference_names_and_cost():
    usage = usage_of(
        {
            "llm.model_name": "claude-x",
            "llm.token_count.prompt": 50,
            "llm.token_count.completion": 9,
            "llm.token_count.prompt_details.cache_read": 20,
            "llm.token_count.completion_details.reasoning": 4,
            "llm.cost.total": 0.0125,
        }
    )
    assert usage == Usage(
        model="claude-x",
        input_tokens=50,
        output_tokens=9,
        cached_input_tokens=20,
        reasoning_tokens=4,
        cost=0.0125,
        source="span",
    )


def test_openlit_cost_and_reasoning_and_one_family_per_span():
    usage = usage_of(
        {
            "gen_ai.request.model": "m",
            "gen_ai.usage.input_tokens": 10,
            "gen_ai.usage.output_tokens": 4,
            "gen_ai.usage.reasoning_tokens": 2,
            "gen_ai.usage.cost": 0.5,
            "llm.token_count.prompt": 999,
        }
    )  # the GenAI family wins; OpenInference's is not added
    assert (usage.input_tokens, usage.output_tokens, usage.reasoning_tokens, usage.cost) == (10, 4, 2, 0.5)


def test_a_span_without_usage_and_bad_values():
    assert usage_of(None) is None
    assert usage_of({}) is None
    assert usage_of({"http.method": "POST", "gen_ai.request.model": "m"}) is None
    assert usage_of({"gen_ai.usage.input_tokens": 0, "gen_ai.usage.output_tokens": 0}) is None
    # not whole numbers, negative, too large, bools: ignored (a processor never raises)
    usage = usage_of(
        {
            "gen_ai.usage.input_tokens": -3,
            "gen_ai.usage.output_tokens": 2.0,
            "gen_ai.usage.cache_read.input_tokens": "5",
            "gen_ai.usage.cost": float("nan"),
        }
    )
    assert (usage.model, usage.input_tokens, usage.output_tokens, usage.cached_input_tokens, usage.cost) == (
        "unknown",
        0,
        2,
        0,
        0.0,
    )
    assert usage_of({"gen_ai.usage.input_tokens": True}) is None
    assert usage_of({"gen_ai.usage.input_tokens": 10**13}) is None
    # a part larger than its whole is cut to it
    assert (
        usage_of({"gen_ai.usage.input_tokens": 5, "gen_ai.usage.cache_read.input_tokens": 9}).cached_input_tokens == 5
    )


# -- merging with record_usage --------------------------------------------------------------------


def _recorded(model: str) -> Usage:
    return Usage(model=model, input_tokens=100, output_tokens=10)


def test_fill_drops_spans_of_a_recorded_model_by_response_or_request_model():
    spans = [usage_of(OPENAI_SPAN), usage_of({"gen_ai.response.model": "other", "gen_ai.usage.input_tokens": 1})]
    assert context.merge([_recorded("gpt-4o-mini")], spans, "fill") == spans[1:]
    assert context.merge([_recorded("gpt-4o-mini-2024-07-18")], spans, "fill") == spans[1:]
    assert context.merge([_recorded("m")], spans, "fill") == spans
    assert context.merge([], spans, "fill") == spans
    assert context.merge([_recorded("gpt-4o-mini")], spans, "add") == spans


def test_fill_compares_with_recorded_entries_only_not_earlier_span_entries():
    earlier_span = usage_of(OPENAI_SPAN)
    assert context.merge([earlier_span], [usage_of(OPENAI_SPAN)], "fill") == [usage_of(OPENAI_SPAN)]


# -- prices ---------------------------------------------------------------------------------------

PRICES = Prices(
    {
        "gpt-4o": Price(2.5, 10.0, cached_input=1.25),
        "gpt-4o-mini": Price(0.15, 0.6),
        "claude": Price(3.0, 15.0, cache_creation_input=3.75, reasoning=20.0),
    },
    source="p.toml",
)


def test_matching_exact_then_request_then_longest_prefix():
    assert PRICES.match("gpt-4o") is PRICES.table["gpt-4o"]
    assert PRICES.match("gpt-4o-2024-08-06") is PRICES.table["gpt-4o"]
    assert PRICES.match("gpt-4o-mini-2024-07-18") is PRICES.table["gpt-4o-mini"]  # longest prefix
    assert PRICES.match("unknown-snapshot", "gpt-4o-mini") is PRICES.table["gpt-4o-mini"]  # exact request model
    assert PRICES.match("gpt-4o-2024", "gpt-4o-mini") is PRICES.table["gpt-4o-mini"]  # exact request before prefix
    assert PRICES.match("vendor/x", "claude-3-7") is PRICES.table["claude"]  # prefix of the request model
    assert PRICES.match("llama") is None


def test_the_parts_are_priced_at_their_rates_and_not_counted_twice():
    usage = Usage(model="gpt-4o-2024", input_tokens=1_000_000, output_tokens=100_000, cached_input_tokens=400_000)
    priced = PRICES.apply(usage)
    assert priced.priced
    assert priced.cost == pytest.approx(0.6 * 2.5 + 0.4 * 1.25 + 0.1 * 10.0)
    claude = Usage(
        model="claude",
        input_tokens=1_000_000,
        output_tokens=1_000_000,
        cache_creation_input_tokens=200_000,
        reasoning_tokens=500_000,
    )
    assert PRICES.apply(claude).cost == pytest.approx(0.8 * 3 + 0.2 * 3.75 + 0.5 * 15 + 0.5 * 20)


def test_a_recorded_cost_is_kept_and_unpriced_models_are_listed():
    recorded = Usage(model="gpt-4o", input_tokens=10, cost=0.5)
    assert PRICES.apply(recorded) is recorded
    nothing = Usage(model="gpt-4o")
    assert PRICES.apply(nothing) is nothing
    usages = [
        PRICES.apply(u)
        for u in (
            Usage(model="llama", input_tokens=5),
            Usage(model="gpt-4o", input_tokens=5),
            Usage(model="aaa", output_tokens=1),
            Usage(model="zero"),
        )
    ]
    assert unpriced_models(usages) == ["aaa", "llama"]


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ([1], "must be a table of models, got list"),
        ({}, "has no model"),
        ({"m": 3}, "model 'm' must be a table with input and output"),
        ({"m": {"input": 1}}, "model 'm' has no output price"),
        ({"m": {"input": 1, "output": 2, "cached": 1}}, "model 'm' has unknown key(s) cached"),
        ({"m": {"input": "cheap", "output": 2}}, "model 'm': input must be a number of dollars per million tokens"),
        ({"m": {"input": -1, "output": 2}}, "model 'm': input must be finite, at least 0"),
        ({"m": {"input": 1, "output": True}}, "model 'm': output must be a number"),
        ({"": {"input": 1, "output": 2}}, "a model name is empty"),
    ],
)
def test_a_malformed_table_names_the_file_and_the_fault(data, message):
    with pytest.raises(ValueError) as raised:
        parse(data, "prices file x.toml")
    assert str(raised.value).startswith("prices file x.toml: ")
    assert message in str(raised.value)


def test_reading_toml_and_json(tmp_path: Path):
    toml = tmp_path / "p.toml"
    toml.write_text('["gpt-4o"]\ninput = 2.5\noutput = 10\ncached_input = 1.25\n')
    assert read(toml).table == {"gpt-4o": Price(2.5, 10.0, cached_input=1.25)}
    assert read(toml).source == str(toml)
    js = tmp_path / "p.json"
    js.write_text('{"m": {"input": 1, "output": 2, "reasoning": 3}}')
    assert read(js).table == {"m": Price(1.0, 2.0, reasoning=3.0)}
    js.write_text('{"m": ')
    with pytest.raises(ValueError, match=r"p\.json: not valid JSON"):
        read(js)
    toml.write_text("[x")
    with pytest.raises(ValueError, match=r"p\.toml: not valid TOML"):
        read(toml)
    with pytest.raises(ValueError, match=r"missing\.toml: cannot be read"):
        read(tmp_path / "missing.toml")


# -- the processor on a real SDK provider --------------------------------------------------------


def _case() -> CaseRef:
    return CaseRef(
        key="bench_x.py::bench_a",
        benchmark="a",
        case="",
        label="a",
        order=0,
        runs=1,
        params=(),
        path="bench_x.py",
        function="bench_a",
        lineno=1,
    )


@pytest.fixture
def tracer():
    provider = TracerProvider()
    provider.add_span_processor(UsageProcessor())
    yield provider.get_tracer("test")
    context.finish()


def _llm(tracer, attributes=OPENAI_SPAN, name="chat"):
    with tracer.start_as_current_span(name) as span:
        span.set_attributes(attributes)


def test_spans_of_the_run_its_threads_and_nothing_outside_a_run(tracer):
    _llm(tracer)  # outside any run: charged to nobody
    run = context.start(_case(), 1, "bench_x.py::bench_a")
    _llm(tracer)
    worker = threading.Thread(target=_llm, args=(tracer,))
    worker.start()
    worker.join()
    assert [u.input_tokens for u in run.span_usage] == [21, 21]
    assert run.usage == []


def test_the_plugins_own_spans_and_a_parent_repeating_its_childrens_usage_are_not_read(tracer):
    run = context.start(_case(), 1, "bench_x.py::bench_a")
    own = TracerProvider()
    own.add_span_processor(UsageProcessor())
    with own.get_tracer("pytest_probability").start_as_current_span("probability.run a") as span:
        span.set_attributes({"gen_ai.usage.input_tokens": 1000})
    assert run.span_usage == []
    with tracer.start_as_current_span("agent") as agent:  # an agent span summing its calls' usage
        with tracer.start_as_current_span("step"):
            _llm(tracer)
            _llm(tracer)
        agent.set_attributes({"gen_ai.usage.input_tokens": 42, "gen_ai.usage.output_tokens": 14})
    _llm(tracer, {**OPENAI_SPAN, "gen_ai.usage.input_tokens": 5})  # a sibling afterwards still counts
    assert [u.input_tokens for u in run.span_usage] == [21, 21, 5]


def test_settle_fills_prices_and_closes_then_a_late_span_follows_the_same_rules(tracer):
    run = context.start(_case(), 1, "bench_x.py::bench_a")
    _llm(tracer)  # the span ends first, then the benchmark records the same response
    record_usage(model="gpt-4o-mini", input_tokens=21, output_tokens=7)
    _llm(tracer, {"gen_ai.response.model": "embed-1", "gen_ai.usage.input_tokens": 1_000_000})
    prices = Prices({"embed": Price(0.02, 0.0)})
    context.settle(run, "fill", prices)
    assert [(u.model, u.source, u.priced) for u in run.usage] == [
        ("gpt-4o-mini", "record", False),
        ("embed-1", "span", True),
    ]
    assert run.usage[1].cost == pytest.approx(0.02)
    assert run.closed
    told = []
    queue = context.LateQueue()  # the run stage's, every run's late_queue (RunPhases.start)
    run.late_queue = queue
    run.late_listeners.append(lambda late_run, usage, extra: told.append((late_run, usage)))
    context.resume(run)  # a thread still in the run's context
    _llm(tracer)  # same model as recorded: dropped under fill
    _llm(tracer, {"gen_ai.response.model": "embed-2", "gen_ai.usage.input_tokens": 2_000_000})
    late = queue.take()
    assert [item["usage"]["model"] for item in late] == ["embed-2"]
    assert late[0]["usage"]["cost"] == pytest.approx(0.04) and late[0]["usage"]["priced"]
    assert [(r, u.model) for r, u in told] == [(run, "embed-2")]


def test_late_usage_counts_in_the_budget():
    budget = Budget(max_tokens=100)
    assert not budget.add_spend(0.5, 60)
    assert budget.add_spend(0.25, 40)
    assert (budget.reached, budget.cost, budget.tokens) == ("tokens", 0.75, 100)


def test_the_observer_hooks_the_global_sdk_provider_once_and_sees_instrumentors():
    from opentelemetry import trace

    watch = SpanUsage()
    global_provider = trace.get_tracer_provider()
    watch.look()
    watch.look()
    if hasattr(global_provider, "add_span_processor"):  # this test session's provider (export on) or the made one
        assert watch._hooked == {id(global_provider)}
    assert instrumented() in (True, False)  # no instrumentor is imported here: a plain answer, no error
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        watch.look()
