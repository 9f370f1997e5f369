"""Transcripts from content capture (issue 21, item 6), and what ``--prob-otel-capture=ids`` keeps out of the
export of spans that are not the plugin's (issue 36, defect 11), end to end in subprocess sessions.

The real ``openai`` SDK with the real ``opentelemetry-instrumentation-genai-openai`` against the tests' loopback
server, told to capture message content (``OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=span_and_event``): a
failed run's transcript in the JSON and the HTML report shows the prompt and the answer without ``record_io``,
and ``--prob-otel-capture=ids`` keeps the content out of the OTLP export (the JSON keeps it).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from otlp_receiver import flatten_logs, flatten_spans
from sessions import clean_export_env, closed_port

from pytest_probability.otel import otlp_json

pytest.importorskip("openai")
pytest.importorskip("opentelemetry.instrumentation.genai.openai")

SERVER = (Path(__file__).parent.parent / "genai_server.py").read_text()
XDIST = pytest.mark.parametrize("xdist", [[], ["-n", "2"]], ids=["serial", "xdist"])

CONFTEST = """
import os

import genai_server
from opentelemetry.instrumentation.genai.openai import OpenAIInstrumentor

os.environ["OPENAI_BASE_URL"] = genai_server.start()
os.environ["OPENAI_API_KEY"] = "test-key"
os.environ["OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"] = "span_and_event"  # read at instrument()
OpenAIInstrumentor().instrument()
"""

BENCH = """
import openai


def bench_weather():
    reply = openai.OpenAI().chat.completions.create(
        model="gpt-4o-mini", messages=[{"role": "system", "content": "Be brief."},
                                       {"role": "user", "content": "Is it raining in Oslo?"}])
    assert reply.choices[0].message.content == "definitely", reply.choices[0].message.content
"""


@pytest.fixture
def folder(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> pytest.Pytester:
    clean_export_env(monkeypatch, pytester)
    pytester.makepyfile(genai_server=SERVER, conftest=CONFTEST, bench_capture=BENCH)
    return pytester


@XDIST
@pytest.mark.parametrize("capture", ["all", "ids"])
def test_a_failed_runs_transcript_comes_from_the_captured_content(folder, xdist, capture) -> None:
    result = folder.runpytest_subprocess(
        "-p",
        "no:cacheprovider",
        "--prob-runs=2",
        "--prob-json=report.json",
        "--prob-html=report.html",
        "--prob-otel-file=otlp.jsonl",
        f"--prob-otel-capture={capture}",
        *xdist,
        timeout=180,
    )
    assert result.ret == 1, result.stdout.str()  # the server never says "definitely"
    records = json.loads((folder.path / "report.json").read_text())["records"]
    assert len(records) == 2 and all(r["outcome"] == "fail" for r in records)
    for record in records:
        (entry,) = record["transcript"]
        assert entry["prompt"] == "system: Be brief.\nuser: Is it raining in Oslo?"
        assert entry["output"].split(": ", 1)[0] == "assistant"
        assert entry["output"].split(": ", 1)[1] in ("yes", "no", "maybe")
        assert entry["model"] == "gpt-4o-mini-2024-07-18" and entry["source"] == "span"
    html = (folder.path / "report.html").read_text()
    assert "user: Is it raining in Oslo?" in html
    decoded = list(otlp_json.read_file(folder.path / "otlp.jsonl"))
    spans = flatten_spans(decoded)
    events = [log for log in flatten_logs(decoded) if log.event_name == "gen_ai.client.inference.operation.details"]
    assert len(events) == 2  # the instrumentation's events, through the plugin's logger provider
    chats = [s for s in spans if s.name == "chat gpt-4o-mini"]
    assert len(chats) == 2
    runs = [s for s in spans if s.name.startswith("probability.run ")]
    assert not any(
        name == "gen_ai.client.inference.operation.details" for s in runs for name, _ in s.events
    )  # not twice
    exported = json.dumps([dict(s.attributes) for s in spans] + [repr(log) for log in events])
    if capture == "all":
        assert all("Is it raining in Oslo?" in s.attributes["gen_ai.input.messages"] for s in chats)
        assert all("gen_ai.output.messages" in s.attributes for s in chats)
        assert "Oslo" in exported
    else:
        assert "Oslo" not in exported and "Be brief" not in exported
        assert all("gen_ai.input.messages" not in s.attributes for s in chats)
        assert all("gen_ai.input.messages" not in log.attributes for log in events)
        assert all(s.attributes["gen_ai.usage.input_tokens"] > 0 for s in chats)  # the rest of the span is kept


#: A user's span that records an exception and a status with a message, and the OpenAI instrumentation's
#: span of a refused request, whose status is ``Error code: 400 - {…SERVER-SECRET…}`` (issue 36, defect 11).
USER_SECRETS = ("USER-SECRET-1K9", "USER-SECRET-2M4", "SERVER-SECRET-7Q2")
REFUSED = """
import openai
from opentelemetry import trace
from opentelemetry.trace import Status, StatusCode


def bench_refused():
    with trace.get_tracer("user.code").start_as_current_span("user.lookup") as span:
        try:
            raise LookupError("USER-SECRET-1K9 not in the ledger")
        except LookupError as exc:
            span.record_exception(exc)
            span.set_status(Status(StatusCode.ERROR, "lookup failed: USER-SECRET-2M4"))
    try:
        openai.OpenAI().chat.completions.create(model="refuse", messages=[{"role": "user", "content": "hi"}])
    except openai.BadRequestError:
        pass
"""


@XDIST
@pytest.mark.parametrize("capture", ["all", "ids"])
def test_capture_ids_keeps_the_messages_of_every_span_out_of_the_file_and_the_spill(folder, xdist, capture) -> None:
    """Defect 11: a user's span kept its ``exception.message``, ``exception.stacktrace`` and status
    description, and the OpenAI instrumentation's span its status ``Error code: 400 - <server message>``,
    in the OTLP file and in the spill file, under ``--prob-otel-capture=ids``."""
    folder.makepyfile(bench_capture=REFUSED)
    port = closed_port()
    result = folder.runpytest_subprocess(
        "-p",
        "no:cacheprovider",
        "--prob-runs=2",
        "--prob-otel-file=otlp.jsonl",
        f"--prob-otel-endpoint=http://127.0.0.1:{port}",
        "--prob-otel-timeout=2",
        "--prob-otel-spill=spill.jsonl",
        f"--prob-otel-capture={capture}",
        *xdist,
        timeout=180,
    )
    assert result.ret == 0, result.stdout.str()
    for name in ("otlp.jsonl", "spill.jsonl"):
        spans = flatten_spans(list(otlp_json.read_file(folder.path / name)))
        user = [s for s in spans if s.name == "user.lookup"]
        chats = [s for s in spans if s.name == "chat refuse"]
        assert len(user) == 2 and len(chats) == 2, sorted({s.name for s in spans})
        assert all(s.status_code == "ERROR" for s in user + chats)  # the error is kept, and its type
        recorded = [attrs for s in user for name, attrs in s.events if name == "exception"]
        assert len(recorded) == 2 and all(attrs["exception.type"] == "LookupError" for attrs in recorded)
        text = (folder.path / name).read_text()
        for secret in USER_SECRETS:
            assert (secret in text) == (capture == "all"), (name, secret)
        if capture == "ids":
            assert "Traceback" not in text and "Error code: 400" not in text
