"""End to end: everything else still works with runs in flight together (``--prob-concurrency``, issue 44,
items 4 and 7): the adaptive limit and retries with Retry-After, the export (spans of concurrent runs overlap,
each the parent of its own calls' spans; the concurrency gauges), usage from the real ``openai`` SDK's spans
and ``judging()``, scores and score gates, transcripts, the journal and resume, shards and the merge,
``--prob-transpose`` and quarantine. Subprocess sessions, serial and ``-n 2`` where the feature aggregates.
"""

from __future__ import annotations

import json
import os
import re
from collections import Counter
from pathlib import Path

import pytest
from concurrent_sessions import XDIST, executions, needs_worker_queue, peaks, run, setup
from otlp_receiver import OtlpReceiver
from sessions import clean_export_env, report

#: A provider that takes LIMIT calls at once and refuses the others with a 429 whose Retry-After is 0.05 s.
PROVIDER = """
import threading
import time

LIMIT = 2
STATE = {"in_flight": 0, "peak": 0, "calls": 0, "refused": 0}
LOCK = threading.Lock()


class RateLimited(Exception):
    retry_after = 0.05


def call():
    with LOCK:
        STATE["calls"] += 1
        if STATE["in_flight"] >= LIMIT:
            STATE["refused"] += 1
            raise RateLimited("429 Too Many Requests")
        STATE["in_flight"] += 1
        STATE["peak"] = max(STATE["peak"], STATE["in_flight"])


def done():
    with LOCK:
        STATE["in_flight"] -= 1


def pytest_unconfigure(config):
    import json, os
    with open(os.path.join(os.path.dirname(__file__), f"provider-{os.getpid()}.json"), "w") as handle:
        json.dump(STATE, handle)
"""


@pytest.mark.parametrize("flavour", ["sync", "asyncio-module-loop"])
def test_a_provider_fault_halves_the_window_and_its_retry_after_is_waited_out(
    pytester: pytest.Pytester, flavour: str
) -> None:
    wait = "await sleep(0.05)" if flavour != "sync" else "time.sleep(0.05)"
    setup(
        pytester,
        flavour,
        f"    import provider\n    probe.enter(str(case))\n    provider.call()\n    try:\n        {wait}\n"
        "    finally:\n        provider.done()\n        probe.leave()\n",
        params='"case", range(1, 33)',
    )
    pytester.makepyfile(provider=PROVIDER)
    pytester.makeconftest("pytest_plugins = ['probe', 'provider']\n")
    result = run(pytester, "--prob-runs=1", "--prob-concurrency=8", "--prob-retry=100", "--prob-retry-on=RateLimited",
                 "--prob-json=report.json")  # fmt: skip
    assert result.ret == 0, result.stdout.str()[-2000:]
    data = report(pytester)
    assert sum(row["passes"] for row in data["rows"]) == 32  # every case's fraction as without the limit
    (state,) = [json.loads(p.read_text()) for p in pytester.path.glob("provider-*.json")]
    retried = [r for r in data["records"] if r["retries"]]
    assert state["refused"] == sum(len(r["retries"]) for r in data["records"]) > 0
    assert all(
        entry["wait"] == 0.05 and entry["error_type"] == "provider.RateLimited"
        for r in retried
        for entry in r["retries"]
    )
    concurrency = data["concurrency"]
    assert concurrency["faults"] == state["refused"] and concurrency["window_cuts"] >= 1
    # halved on the first fault and grown back slowly: far fewer refusals than calls
    assert state["refused"] < state["calls"] / 2
    assert "call(s) raised a provider fault; the window was halved" in result.stdout.str()


@XDIST
def test_spans_of_concurrent_runs_overlap_and_each_is_the_parent_of_its_own_calls(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, otlp_http_receiver: OtlpReceiver, xdist: list[str]
) -> None:
    needs_worker_queue(xdist)
    clean_export_env(monkeypatch, pytester)
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", otlp_http_receiver.endpoint)
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_PROTOCOL", "http/protobuf")
    setup(
        pytester,
        "asyncio",
        "    from opentelemetry import trace\n"
        "    token = probe.enter(case)\n"
        "    await probe.barrier(TARGET, sleep)\n"
        "    with trace.get_tracer('user').start_as_current_span(f'call {token}'):\n"
        "        await sleep(0.05)\n"
        "    record_io(output=token)\n"
        "    probe.leave()\n",
        target=2 if xdist else 4,
    )
    result = run(pytester, "--prob-runs=8", "--prob-concurrency=4", "--prob-json=report.json", *xdist)
    assert result.ret == 0, result.stdout.str()[-2000:]
    spans = otlp_http_receiver.spans()
    runs = {s.span_id: s for s in spans if s.name.startswith("probability.run ")}
    calls = [s for s in spans if s.name.startswith("call ")]
    assert len(runs) == len(calls) == 16
    records = {r["span_id"]: r for r in report(pytester)["records"]}
    for call in calls:
        run_span = runs[call.parent_span_id]  # each call's span is its own run's child
        assert call.name == f"call {records[run_span.span_id]['transcript'][0]['output']}"
        assert run_span.start_time_unix_nano <= call.start_time_unix_nano <= call.end_time_unix_nano
        assert call.end_time_unix_nano <= run_span.end_time_unix_nano
    intervals = sorted((s.start_time_unix_nano, s.end_time_unix_nano) for s in runs.values())
    assert any(b[0] < a[1] for a, b in zip(intervals, intervals[1:], strict=False)), "run spans overlap in time"
    gauges = {(p.name, p.attributes.get("probability.concurrency.stat")): p.value for p in otlp_http_receiver.points()
              if p.name.startswith("probability.session.concurrency.")}  # fmt: skip
    assert gauges[("probability.session.concurrency.in_flight", "limit")] == 4
    assert 1 <= gauges[("probability.session.concurrency.in_flight", "peak")] <= 4
    assert gauges[("probability.session.concurrency.wall_over_ideal", None)] > 0


SERVER = (Path(__file__).parent.parent / "genai_server.py").read_text()
OPENAI = """
import os

import genai_server
from opentelemetry.instrumentation.genai.openai import OpenAIInstrumentor

os.environ["OPENAI_BASE_URL"] = genai_server.start()
os.environ["OPENAI_API_KEY"] = "test-key"
OpenAIInstrumentor().instrument()
pytest_plugins = ["probe"]
"""


@XDIST
def test_the_openai_sdks_spans_charge_each_concurrent_run_its_own_calls(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, xdist: list[str]
) -> None:
    pytest.importorskip("openai")
    pytest.importorskip("opentelemetry.instrumentation.genai.openai")
    needs_worker_queue(xdist)
    clean_export_env(monkeypatch, pytester)
    billed = pytester.path / "billed.jsonl"
    monkeypatch.setenv("GENAI_USAGE_LOG", str(billed))
    setup(
        pytester,
        "asyncio-module-loop",
        "    import openai\n"
        "    from pytest_probability import judging\n"
        "    token = probe.enter(case)\n"
        "    await probe.barrier(TARGET, sleep)\n"
        "    client = openai.AsyncOpenAI()\n"
        "    await client.chat.completions.create(model='gpt-4o-mini', messages=[{'role': 'user', 'content': token}])\n"
        "    with judging():\n"
        "        await client.chat.completions.create(model='gpt-4o', messages=[{'role': 'user', 'content': 'judge ' + token}])\n"
        "    record_io(output=token)\n"
        "    probe.leave()\n",
        target=2 if xdist else 4,
    )
    pytester.makepyfile(genai_server=SERVER)
    pytester.makeconftest(OPENAI)
    result = run(pytester, "--prob-runs=6", "--prob-concurrency=4", "--prob-json=report.json", *xdist)
    assert result.ret == 0, result.stdout.str()[-2000:]
    bills = {json.loads(line)["prompt"]: json.loads(line) for line in billed.read_text().splitlines()}
    records = report(pytester)["records"]
    assert len(records) == 12
    for record in records:
        token = record["transcript"][0]["output"]
        usage = {u["role"]: u for u in record["usage"]}
        assert set(usage) == {"system", "judge"}
        assert usage["system"]["input_tokens"] == bills[token]["prompt_tokens"]  # its own call, no other run's
        assert usage["judge"]["input_tokens"] == bills[f"judge {token}"]["prompt_tokens"]
        assert usage["system"]["source"] == usage["judge"]["source"] == "span"


@XDIST
def test_scores_and_a_score_gate_are_each_runs_own(pytester: pytest.Pytester, xdist: list[str]) -> None:
    setup(
        pytester,
        "asyncio",
        "    token = probe.enter(case)\n"
        "    await sleep(0.02)\n"
        "    record_score(0.95 if case == 'a' else 0.05, name='quality', explanation=token)\n"
        "    record_io(output=token)\n"
        "    probe.leave()\n",
        marks="@pytest.mark.probability(min_score={'quality': 0.5})\n",
    )
    result = run(pytester, "--prob-runs=16", "--prob-concurrency=4", "--prob-json=report.json", *xdist)
    assert result.ret == 1
    data = report(pytester)
    for record in data["records"]:
        (score,) = record["scores"]
        assert score["explanation"] == record["transcript"][0]["output"]
        assert score["value"] == (0.95 if "::a[" in record["nodeid"] else 0.05)
    verdicts = {row["case"]: row["verdict"] for row in data["rows"]}
    assert verdicts == {"it::a": "pass", "it::b": "fail"}


def test_a_killed_session_resumes_from_its_journal_with_every_run_once(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    setup(
        pytester,
        "asyncio-module-loop",
        "    token = probe.enter(str(case))\n"
        "    if case == 12 and os.environ.get('KILL'):\n"
        "        os.kill(os.getpid(), signal.SIGKILL)\n"
        "    await sleep(0.05)\n"
        "    record_io(output=token)\n"
        "    probe.leave()\n",
        params='"case", range(1, 25)',
    )
    bench = pytester.path / "bench_it.py"
    bench.write_text("import os\nimport signal\n" + bench.read_text())
    monkeypatch.setenv("KILL", "1")
    killed = run(pytester, "--prob-runs=1", "--prob-concurrency=4", "--prob-journal=night.jsonl")
    assert killed.ret == -9
    done_before = len(executions(pytester))
    assert 12 <= done_before <= 16  # the window of run 12
    monkeypatch.delenv("KILL")
    resumed = run(pytester, "--prob-runs=1", "--prob-concurrency=4", "--prob-journal=night.jsonl",
                  "--prob-json=report.json")  # fmt: skip
    assert resumed.ret == 0, resumed.stdout.str()[-2000:]
    records = report(pytester)["records"]
    assert sorted(r["nodeid"] for r in records) == sorted(f"bench_it.py::bench_it::{n}" for n in range(1, 25))
    (resumed_runs,) = re.findall(r"Journal: (\d+) run\(s\) resumed", resumed.stdout.str())
    # every run is in the night once: the journaled ones resumed, the rest (those lost in flight too) run now
    assert 8 <= int(resumed_runs) <= 12
    resumed.assert_outcomes(passed=24 - int(resumed_runs), deselected=int(resumed_runs))


def test_shards_run_concurrently_and_merge_exactly(pytester: pytest.Pytester) -> None:
    setup(pytester, "sync", "    probe.enter(case)\n    time.sleep(0.02)\n    probe.leave()\n")
    for k in (1, 2):
        result = run(pytester, "--prob-runs=12", "--prob-concurrency=4", f"--prob-shard={k}/2",
                     f"--prob-json=shard{k}.json")  # fmt: skip
        assert result.ret == 0
    merged = pytester.run(
        os.sys.executable, "-m", "pytest_probability", "merge", "shard1.json", "shard2.json", "-o", "night.json"
    )
    assert merged.ret == 0, merged.stdout.str()
    night = json.loads((pytester.path / "night.json").read_text())
    assert {row["case"]: row["total"] for row in night["rows"]} == {"it::a": 12, "it::b": 12}
    assert night["concurrency"]["processes"] == 2 and night["concurrency"]["runs"] == 24
    assert Counter(e["case"] for e in executions(pytester)) == {"a": 12, "b": 12}


def test_transpose_runs_in_flight_together_in_run_major_order(pytester: pytest.Pytester) -> None:
    setup(pytester, "sync", "    probe.enter(case)\n    probe.barrier_sync(TARGET)\n    probe.leave()\n", target=4)
    result = run(
        pytester, "--prob-runs=4", "--prob-concurrency=4", "--prob-transpose", "--prob-json=report.json", "-rA"
    )
    assert result.ret == 0
    order = [line.split()[1] for line in result.outlines if line.startswith("PASSED ")]
    assert order == [f"bench_it.py::bench_it::{c}[run{n}]" for n in range(1, 5) for c in "ab"]
    assert max(peaks(pytester)) == 4


def test_a_quarantined_case_runs_concurrently_and_does_not_fail_the_session(pytester: pytest.Pytester) -> None:
    setup(
        pytester,
        "sync",
        "    probe.enter(case)\n    time.sleep(0.02)\n    probe.leave()\n    assert case == 'a'\n",
        marks="@pytest.mark.probability(min_rate=0.5)\n",
    )
    (pytester.path / "q.toml").write_text(
        '[[quarantine]]\npattern = "bench_it.py::bench_it::b"\nowner = "team"\nreason = "flaky provider"\n'
        "until = 2099-12-31\n"
    )
    result = run(pytester, "--prob-runs=6", "--prob-concurrency=4", "--prob-quarantine=q.toml",
                 "--prob-json=report.json")  # fmt: skip
    assert result.ret == 0, result.stdout.str()[-2000:]
    rows = {row["case"]: row for row in report(pytester)["rows"]}
    assert rows["it::b"]["quarantine"] is not None and rows["it::b"]["passes"] == 0
    assert report(pytester)["concurrency"]["runs"] == 12
