"""Usage from spans and prices, end to end: subprocess sessions with real OpenTelemetry SDK spans, and the real
``openai`` SDK with the real ``opentelemetry-instrumentation-genai-openai`` against a loopback server.

Serial and ``-n 2``, export on (``--prob-otel-file``) and off: tokens and cost in the table and the JSON, the run
spans' attributes, budgets stopped by span usage, no double count with ``record_usage()``, the prices file's
errors and its one missing-price warning, and late usage in the budget and in a span of its own.
"""

from __future__ import annotations

import json
import re
from functools import partial
from pathlib import Path

import pytest
from sessions import clean_export_env, report, section, session

pytest.importorskip("openai")
pytest.importorskip("opentelemetry.instrumentation.genai.openai")

XDIST = pytest.mark.parametrize("xdist", [[], ["-n", "2"]], ids=["serial", "xdist"])
SERVER = (Path(__file__).parent.parent / "genai_server.py").read_text()

OWN_PROVIDER = """
from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider

trace.set_tracer_provider(TracerProvider())
"""

SDK_SPANS = """
import asyncio
import contextvars
import threading

from opentelemetry import trace

tracer = trace.get_tracer("my.instrumentation")
USAGE = {"gen_ai.request.model": "m", "gen_ai.response.model": "m-1", "gen_ai.usage.input_tokens": 100,
         "gen_ai.usage.output_tokens": 10, "gen_ai.usage.cache_read.input_tokens": 40}


def llm():
    with tracer.start_as_current_span("chat m") as span:
        span.set_attributes(USAGE)


def bench_main_thread():
    llm()


def bench_thread_with_the_runs_context():
    thread = threading.Thread(target=contextvars.copy_context().run, args=(llm,))
    thread.start()
    thread.join()


def bench_thread_started_in_the_run():
    thread = threading.Thread(target=llm)
    thread.start()
    thread.join()


def bench_asyncio_task():
    async def main():
        await asyncio.create_task(asyncio.sleep(0, result=None))
        await asyncio.create_task(_async_llm())

    async def _async_llm():
        llm()

    asyncio.run(main())
"""


run = partial(session, gate_timeout=60)


def otlp_spans(path: Path) -> list[dict]:
    spans = []
    for line in path.read_text().splitlines():
        data = json.loads(line)
        for resource in data.get("resourceSpans", ()):
            for scope in resource["scopeSpans"]:
                for span in scope["spans"]:
                    span["attrs"] = {a["key"]: next(iter(a["value"].values())) for a in span.get("attributes", ())}
                    spans.append(span)
    return spans


def metric_points(path: Path, name: str) -> list[tuple[dict, float]]:
    points = []
    for line in path.read_text().splitlines():
        for resource in json.loads(line).get("resourceMetrics", ()):
            for scope in resource["scopeMetrics"]:
                for metric in scope["metrics"]:
                    if metric["name"] != name:
                        continue
                    data = metric.get("sum") or metric.get("gauge") or {}
                    for point in data.get("dataPoints", ()):
                        attrs = {a["key"]: next(iter(a["value"].values())) for a in point.get("attributes", ())}
                        points.append((attrs, float(point.get("asInt", point.get("asDouble", 0)))))
    return points


def tokens_lines(result: pytest.RunResult) -> list[str]:
    lines = section(result)
    start = next(i for i, line in enumerate(lines) if line.strip().startswith("Tokens:"))
    return [re.sub(r"\s+", " ", line.replace("Tokens:", "")).strip() for line in lines[start:] if line.strip()]


@pytest.fixture
def folder(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> pytest.Pytester:
    clean_export_env(monkeypatch, pytester)
    return pytester


@XDIST
@pytest.mark.parametrize("export", ["off", "on"])
def test_sdk_spans_in_the_run_its_threads_and_tasks_are_charged_to_it(folder, xdist, export):
    # Export off: the user's conftest sets an SDK provider (the processor joins it). Export on: no provider
    # of the user's, the plugin's own is global (the processor joins that).
    if export == "off":
        folder.makeconftest(OWN_PROVIDER)
    folder.makepyfile(bench_spans=SDK_SPANS)
    args = ["--prob-runs=3", "--prob-json=report.json", *xdist]
    if export == "on":
        args.append("--prob-otel-file=otlp.jsonl")
    result = run(folder, *args)
    assert result.ret == 0, result.stdout.str()
    # 4 benchmarks x 3 runs x one span of 100 in / 10 out / 40 cached
    assert tokens_lines(result) == ["m-1 1,200 in / 120 out / 480 cached"]
    data = report(folder)
    assert data["totals"]["usage"] == {
        "m-1": {"input_tokens": 1200, "output_tokens": 120, "cached_input_tokens": 480, "cost": 0.0}
    }
    for record in data["records"]:
        assert [(u["model"], u["request_model"], u["source"], u["input_tokens"]) for u in record["usage"]] == [
            ("m-1", "m", "span", 100)
        ], record["nodeid"]
    if export == "on":
        runs = [s for s in otlp_spans(folder.path / "otlp.jsonl") if s["name"].startswith("probability.run ")]
        assert len(runs) == 12
        for span in runs:
            assert span["attrs"]["gen_ai.usage.input_tokens"] == "100"
            assert span["attrs"]["probability.usage.span_tokens"] == "110"
            assert span["attrs"]["gen_ai.request.model"] == "m-1"
        tokens = metric_points(folder.path / "otlp.jsonl", "probability.tokens")
        assert sum(value for attrs, value in tokens if attrs["gen_ai.token.type"] == "input") == 1200
        assert sum(value for attrs, value in tokens if attrs["gen_ai.token.type"] == "output") == 120
        assert {attrs["gen_ai.request.model"] for attrs, _ in tokens} == {"m-1"}


OPENAI_CONFTEST = """
import os

import genai_server
from opentelemetry.instrumentation.genai.openai import OpenAIInstrumentor

os.environ["OPENAI_BASE_URL"] = genai_server.start()
os.environ["OPENAI_API_KEY"] = "test-key"
OpenAIInstrumentor().instrument()  # no tracer provider: the plugin makes one global (or export's is)
"""

OPENAI_BENCH = """
import asyncio

import openai

MESSAGES = [{"role": "user", "content": "Is it raining?"}]


def bench_chat():
    reply = openai.OpenAI().chat.completions.create(model="gpt-4o-mini", messages=MESSAGES)
    assert reply.choices[0].message.content in ("yes", "no", "maybe")


def bench_stream():
    chunks = openai.OpenAI().chat.completions.create(
        model="gpt-4o-mini", messages=MESSAGES, stream=True, stream_options={"include_usage": True})
    assert "".join(c.choices[0].delta.content or "" for c in chunks if c.choices) in ("yes", "no", "maybe")


def bench_async():
    async def main():
        client = openai.AsyncOpenAI()
        return await client.chat.completions.create(model="gpt-4o-mini", messages=MESSAGES)

    assert asyncio.run(main()).choices[0].message.content in ("yes", "no", "maybe")
"""

PRICES = '["gpt-4o-mini"]\ninput = 0.15\noutput = 0.6\ncached_input = 0.075\nreasoning = 1.2\n'


@XDIST
@pytest.mark.parametrize("export", ["off", "on"])
def test_the_openai_sdk_with_its_instrumentation_is_charged_and_priced(folder, monkeypatch, xdist, export):
    log = folder.path / "billed.jsonl"
    monkeypatch.setenv("GENAI_USAGE_LOG", str(log))
    folder.makepyfile(genai_server=SERVER, conftest=OPENAI_CONFTEST, bench_openai=OPENAI_BENCH)
    (folder.path / "prices.toml").write_text(PRICES)
    args = ["--prob-runs=4", "--prob-json=report.json", "--prob-prices=prices.toml", *xdist]
    if export == "on":
        args.append("--prob-otel-file=otlp.jsonl")
    result = run(folder, *args)
    assert result.ret == 0, result.stdout.str()
    billed = [json.loads(line) for line in log.read_text().splitlines()]
    assert len(billed) == 12
    prompt = sum(b["prompt_tokens"] for b in billed)
    completion = sum(b["completion_tokens"] for b in billed)
    cached = sum(b["prompt_tokens_details"]["cached_tokens"] for b in billed)
    reasoning = sum(b["completion_tokens_details"]["reasoning_tokens"] for b in billed)
    cost = ((prompt - cached) * 0.15 + cached * 0.075 + (completion - reasoning) * 0.6 + reasoning * 1.2) / 1e6
    data = report(folder)
    (model,) = data["totals"]["usage"]
    assert model == "gpt-4o-mini-2024-07-18"  # the response model, priced by the prefix gpt-4o-mini
    totals = data["totals"]["usage"][model]
    assert (totals["input_tokens"], totals["output_tokens"], totals["cached_input_tokens"]) == (
        prompt,
        completion,
        cached,
    )
    assert totals["cost"] == pytest.approx(cost)
    assert data["totals"]["cost"] == pytest.approx(cost)
    assert sum(u["reasoning_tokens"] for r in data["records"] for u in r["usage"]) == reasoning
    assert all(u["priced"] and u["source"] == "span" for r in data["records"] for u in r["usage"])
    assert tokens_lines(result) == [f"{model} {prompt:,} in / {completion:,} out / {cached:,} cached ${cost:.4f}"]
    assert "no price in" not in result.stdout.str()
    if export == "on":
        spans = otlp_spans(folder.path / "otlp.jsonl")
        runs = {s["spanId"]: s for s in spans if s["name"].startswith("probability.run ")}
        chats = [s for s in spans if s["name"] == "chat gpt-4o-mini"]
        assert len(runs) == len(chats) == 12
        assert all(chat["parentSpanId"] in runs for chat in chats)  # the instrumentation's spans, exported too
        assert sum(int(s["attrs"]["gen_ai.usage.input_tokens"]) for s in runs.values()) == prompt
        assert sum(s["attrs"]["probability.cost"] for s in runs.values()) == pytest.approx(cost)


BUDGET_BENCH = """
from opentelemetry import trace

tracer = trace.get_tracer("my.instrumentation")


def bench_spend():
    with tracer.start_as_current_span("chat") as span:
        span.set_attributes({"gen_ai.request.model": "m", "gen_ai.usage.input_tokens": 100,
                             "gen_ai.usage.output_tokens": 0, "gen_ai.usage.cost": 0.25})
"""


@pytest.mark.parametrize("budget", ["--prob-max-tokens=250", "--prob-max-cost=0.7"])
def test_budgets_stop_on_span_usage(folder, budget):
    folder.makeconftest(OWN_PROVIDER)
    folder.makepyfile(bench_budget=BUDGET_BENCH)
    result = run(folder, "--prob-runs=10", "--prob-json=report.json", budget)
    data = report(folder)
    executed = [r for r in data["records"] if not r["stopped"]]
    assert len(executed) == 3, result.stdout.str()  # 100 / $0.25 per run: reached after the third
    assert data["budget"]["runs_not_executed"] == 7
    assert data["budget"]["reached"] == ("tokens" if "tokens" in budget else "cost")
    # the control: with spans not read, nothing is spent and every run executes
    result = run(folder, "--prob-runs=10", "--prob-json=off.json", budget, "-o", "prob_span_usage=off")
    assert result.ret == 0, result.stdout.str()
    assert report(folder, "off.json")["budget"]["runs_not_executed"] == 0


RECORDED_BENCH = """
from opentelemetry import trace
from pytest_probability import record_usage

tracer = trace.get_tracer("my.instrumentation")


def span(request_model, response_model, tokens):
    with tracer.start_as_current_span("chat") as s:
        s.set_attributes({"gen_ai.request.model": request_model, "gen_ai.response.model": response_model,
                          "gen_ai.usage.input_tokens": tokens, "gen_ai.usage.output_tokens": 1})


def bench_both():
    span("m", "m-1", 100)                                  # the instrumented call ...
    record_usage(model="m", input_tokens=7, output_tokens=1)  # ... and the benchmark's record of it
    span("other", "other", 5)                              # a call the benchmark does not record
"""


@XDIST
@pytest.mark.parametrize(
    ("mode", "expected"),
    [
        ("fill", {"m": 14, "other": 10}),
        ("add", {"m-1": 200, "m": 14, "other": 10}),
        ("off", {"m": 14}),
    ],
)
def test_record_usage_is_the_runs_usage_for_its_model_under_fill(folder, xdist, mode, expected):
    folder.makeconftest(OWN_PROVIDER)
    folder.makepyfile(bench_recorded=RECORDED_BENCH)
    result = run(folder, "--prob-runs=2", "--prob-json=report.json", "-o", f"prob_span_usage={mode}", *xdist)
    assert result.ret == 0, result.stdout.str()
    usage = report(folder)["totals"]["usage"]
    assert {model: u["input_tokens"] for model, u in usage.items()} == expected
    assert report(folder)["settings"]["span_usage"] == mode


def test_a_bad_span_usage_mode_is_a_usage_error(folder):
    folder.makepyfile(bench_recorded=RECORDED_BENCH)
    result = run(folder, "-o", "prob_span_usage=both")
    assert result.ret == 4
    assert "ini prob_span_usage must be one of fill, add, off, got 'both'" in result.stderr.str()


@pytest.mark.parametrize(
    ("name", "text", "message"),
    [
        ("prices.toml", "[gpt-4o\ninput = 1\n", "not valid TOML"),
        ("prices.json", '{"gpt-4o": {"input": 1}}', "model 'gpt-4o' has no output price"),
        ("prices.toml", '["gpt-4o"]\ninput = -1\noutput = 2\n', "model 'gpt-4o': input must be finite, at least 0"),
        ("missing.toml", None, "cannot be read"),
        # integer literals too large for a float: an OverflowError was an INTERNALERROR (exit 3)
        (
            "prices.json",
            '{"m": {"input": 1' + "0" * 400 + ', "output": 2}}',
            "model 'm': input must be finite, at least 0 and at most 1e+09, got an integer of 401 digits",
        ),
        (
            "prices.toml",
            '["m"]\ninput = 1\noutput = 1' + "0" * 400 + "\n",
            "model 'm': output must be finite, at least 0 and at most 1e+09, got an integer of 401 digits",
        ),
        # an unquoted dotted name is nested tables: said so, with the quoted form
        (
            "prices.toml",
            "[gpt-4.1]\ninput = 1\noutput = 2\n",
            "model 'gpt-4' has a table 1 in it: a dot in a TOML table name makes nested tables, so [gpt-4.1] is "
            'model gpt-4 with a table 1; quote a name with a dot: ["gpt-4.1"]',
        ),
        (
            "prices.toml",
            '["gpt-4"]\ninput = 1\noutput = 2\n\n[gpt-4.1.mini]\ninput = 1\noutput = 2\n',
            "model 'gpt-4' has a table 1 in it: a dot in a TOML table name makes nested tables, so [gpt-4.1.mini] is "
            'model gpt-4 with a table 1; quote a name with a dot: ["gpt-4.1.mini"]',
        ),
    ],
    ids=[
        "bad-toml",
        "no-output",
        "negative",
        "missing",
        "huge-json-int",
        "huge-toml-int",
        "dotted-name",
        "dotted-name-deeper",
    ],
)
@XDIST
def test_a_malformed_prices_file_is_a_usage_error_that_names_it(folder, name, text, message, xdist):
    folder.makepyfile(bench_budget=BUDGET_BENCH)
    if text is not None:
        (folder.path / name).write_text(text)
    result = run(folder, f"--prob-prices={name}", *xdist)
    assert result.ret == 4, result.stdout.str()
    error = result.stderr.str()
    assert f"prices file {folder.path / name}: " in error
    assert message in error
    assert "Traceback" not in error + result.stdout.str()
    assert "passed" not in result.stdout.str()  # nothing ran


UNPRICED_BENCH = """
from opentelemetry import trace
from pytest_probability import record_usage

tracer = trace.get_tracer("my.instrumentation")


def bench_models():
    for model in ("m-2024", "zzz", "yyy"):
        with tracer.start_as_current_span("chat") as span:
            span.set_attributes({"gen_ai.response.model": model, "gen_ai.usage.input_tokens": 1_000_000})
    record_usage(model="paid", input_tokens=10, cost=0.5)  # a recorded cost needs no price
"""


@XDIST
def test_models_without_a_price_get_one_warning_that_lists_them(folder, xdist):
    folder.makeconftest(OWN_PROVIDER)
    folder.makepyfile(bench_unpriced=UNPRICED_BENCH)
    folder.makeini("[pytest]\nprob_prices = prices.toml\n")
    (folder.path / "prices.toml").write_text('["m"]\ninput = 2\noutput = 8\n')
    result = run(folder, "--prob-runs=3", "--prob-json=report.json", *xdist)
    assert result.ret == 0, result.stdout.str()
    out = result.stdout.str()
    assert out.count("no price in") == 1, out
    assert f"ProbabilityUsageWarning: no price in {folder.path / 'prices.toml'} for model(s) yyy, zzz" in out
    usage = report(folder)["totals"]["usage"]
    assert usage["m-2024"]["cost"] == pytest.approx(3 * 2.0)  # the ini key's file, the prefix m
    assert usage["zzz"]["cost"] == usage["yyy"]["cost"] == 0
    assert usage["paid"]["cost"] == pytest.approx(1.5)
    assert report(folder)["totals"]["cost"] == pytest.approx(7.5)


LATE_BENCH = """
import threading
import time

import pytest
from opentelemetry import trace
from pytest_probability import record_usage

tracer = trace.get_tracer("my.instrumentation")


def late():
    time.sleep(0.3)
    record_usage(model="m", input_tokens=1000)           # after bench_a's run ended
    with tracer.start_as_current_span("chat") as span:  # and a span, in the thread bound to it
        span.set_attributes({"gen_ai.response.model": "s", "gen_ai.usage.input_tokens": 500})


@pytest.mark.probability(runs=1)
def bench_a():
    threading.Thread(target=late).start()


@pytest.mark.probability(runs=12)
def bench_b():
    time.sleep(0.15)
"""


@pytest.mark.filterwarnings("ignore")
def test_late_usage_counts_in_the_budget_and_is_a_span_of_its_own(folder):
    folder.makepyfile(bench_late=LATE_BENCH)
    result = run(
        folder,
        "--prob-json=report.json",
        "--prob-otel-file=otlp.jsonl",
        "--prob-max-tokens=1200",
        "-p",
        "no:randomly",
        "-W",
        "ignore::pytest_probability.ProbabilityUsageWarning",
    )
    data = report(folder)
    (a,) = [r for r in data["records"] if "bench_a" in r["nodeid"]]
    assert [(u["model"], u["input_tokens"]) for u in a["usage"]] == [("m", 1000), ("s", 500)], result.stdout.str()
    # only late usage was spent: the budget counted it and stopped bench_b's later runs
    assert data["budget"]["reached"] == "tokens"
    assert data["budget"]["spent"]["tokens"] == 1500
    assert data["budget"]["runs_not_executed"] > 0
    spans = otlp_spans(folder.path / "otlp.jsonl")
    (run_a,) = [s for s in spans if s["name"] == "probability.run a"]
    assert "gen_ai.usage.input_tokens" not in run_a["attrs"]  # the run span has what the run had when it ended
    late = [s for s in spans if s["name"] == "probability.late_usage a"]
    assert sorted(int(s["attrs"]["gen_ai.usage.input_tokens"]) for s in late) == [500, 1000]
    assert all(s["parentSpanId"] == run_a["spanId"] and s["traceId"] == run_a["traceId"] for s in late)
    assert all(s["attrs"]["probability.late"] is True for s in late)
