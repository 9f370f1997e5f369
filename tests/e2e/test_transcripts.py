"""End to end: record_output()/record_io() transcripts in the JSON report and on run spans.

Sessions run in a subprocess (OpenTelemetry and xdist keep process state); spans
are read back from the OTLP JSON-lines file the real exporter pipeline wrote.
"""

from __future__ import annotations

import json

import pytest
from otlp_receiver import flatten_spans
from sessions import CONFTEST

from pytest_probability.otel import otlp_json
from pytest_probability.otel.spans import TRANSCRIPT_EVENT
from pytest_probability.run.recording import TRANSCRIPT_LIMIT

BENCH = """
import pytest
from pytest_probability import record_io, record_output


@pytest.mark.parametrize("prompt", ["ok", "bad"])
def bench_answer(prompt, n):
    answer = "yes" if prompt == "ok" else "no"
    record_io(prompt=f"is it {prompt}? run {n}", output=answer, tool_calls=[{"name": "lookup", "args": {"q": prompt}}])
    assert answer == "yes", f"wanted yes, got {answer}"


def bench_long():
    record_output("x" * 20000, note="short")
    raise RuntimeError("after the output")
"""


@pytest.fixture(autouse=True)
def sessions_conftest(clean_env: None, pytester: pytest.Pytester) -> None:
    """The clean environment, with the sessions' conftest (fixture ``n``, exact durations)."""
    pytester.makeconftest(CONFTEST)


def _session(pytester: pytest.Pytester, *args: str) -> tuple[dict, list]:
    pytester.makepyfile(bench_transcripts=BENCH)
    result = pytester.runpytest_subprocess(
        "-p",
        "no:cacheprovider",
        "--prob-runs=2",
        "--prob-json=report.json",
        "--prob-otel-file=otel.jsonl",
        *args,
        timeout=120,
    )
    assert result.ret == 1, result.stdout.str()
    report = json.loads((pytester.path / "report.json").read_text(encoding="utf-8"))
    spans = flatten_spans(list(otlp_json.read_file(pytester.path / "otel.jsonl")))
    return report, spans


@pytest.mark.parametrize("xdist", [[], ["-n", "2"]], ids=["serial", "xdist"])
def test_transcripts_in_json_and_span_events(pytester: pytest.Pytester, xdist: list[str]) -> None:
    report, spans = _session(pytester, *xdist)
    records = {(r["case"], r["run"]): r for r in report["records"]}
    failed = records[("answer::bad", 2)]
    assert failed["outcome"] == "fail"  # the failed assert came after record_io, which survived it
    assert failed["transcript"] == [
        {"prompt": "is it bad? run 2", "output": "no", "tool_calls": '[{"name": "lookup", "args": {"q": "bad"}}]'}
    ]
    assert records[("answer::ok", 1)]["transcript"][0]["output"] == "yes"

    by_span = {s.span_id: s for s in spans}
    span = by_span[failed["span_id"]]
    events = [attrs for name, attrs in span.events if name == TRANSCRIPT_EVENT]
    assert len(events) == 1
    (event,) = events
    assert json.loads(event["gen_ai.input.messages"]) == [
        {"role": "user", "parts": [{"type": "text", "content": "is it bad? run 2"}]}
    ]
    assert json.loads(event["gen_ai.output.messages"]) == [
        {"role": "assistant", "parts": [{"type": "text", "content": "no"}]}
    ]
    assert event["probability.transcript.tool_calls"] == failed["transcript"][0]["tool_calls"]


def test_long_values_are_cut_and_the_record_says_so(pytester: pytest.Pytester) -> None:
    report, spans = _session(pytester)
    (record, _) = [r for r in report["records"] if r["case"] == "long"]
    assert record["outcome"] == "error"
    (entry,) = record["transcript"]
    assert len(entry["output"]) == TRANSCRIPT_LIMIT
    assert entry["output"].endswith("…")
    assert entry["truncated"] == {"output": 20000}
    assert entry["note"] == "short"
    span = {s.span_id: s for s in spans}[record["span_id"]]
    (event,) = [attrs for name, attrs in span.events if name == TRANSCRIPT_EVENT]
    assert event["probability.transcript.truncated"] == ["output"]
    content = json.loads(event["gen_ai.output.messages"])[0]["parts"][0]["content"]
    assert content == entry["output"]


@pytest.mark.parametrize("xdist", [[], ["-n", "2"]], ids=["serial", "xdist"])
def test_ids_capture_keeps_transcripts_out_of_the_export(pytester: pytest.Pytester, xdist: list[str]) -> None:
    report, spans = _session(pytester, "--prob-otel-capture=ids", *xdist)
    # The JSON report is not an export: it keeps everything.
    assert all(r["transcript"] for r in report["records"])
    runs = [s for s in spans if s.name.startswith("probability.run ")]
    assert len(runs) == 6
    assert not [name for s in runs for name, _ in s.events if name == TRANSCRIPT_EVENT]
    exported = (pytester.path / "otel.jsonl").read_text(encoding="utf-8")
    assert "is it bad" not in exported and "lookup" not in exported and "xxxxxxxx" not in exported


CAPPED = """
from pytest_probability import record_io


def bench_chatty():
    for i in range(1_000_000):
        record_io(prompt=f"turn {i}", output="ok")


def bench_quiet():
    record_io(prompt="one", output="two")
"""


@pytest.mark.parametrize("xdist", [[], ["-n", "2"]], ids=["serial", "xdist"])
def test_a_run_keeps_its_first_thousand_entries_and_counts_the_rest(
    pytester: pytest.Pytester, xdist: list[str]
) -> None:
    """Issue 23, item 14: a run that records a million entries is cut at the cap, with a note, not kept whole."""
    from pytest_probability.run.recording import TRANSCRIPT_ENTRIES

    pytester.makepyfile(bench_capped=CAPPED)
    result = pytester.runpytest_subprocess(
        "-p",
        "no:cacheprovider",
        "--prob-runs=1",
        "--prob-json=report.json",
        "--prob-html=report.html",
        *xdist,
        timeout=300,
    )
    assert result.ret == 0, result.stdout.str()
    report = json.loads((pytester.path / "report.json").read_text(encoding="utf-8"))
    records = {r["nodeid"]: r for r in report["records"]}
    chatty, quiet = records["bench_capped.py::bench_chatty::run1"], records["bench_capped.py::bench_quiet::run1"]
    assert len(chatty["transcript"]) == TRANSCRIPT_ENTRIES == 1000
    assert chatty["transcript"][0] == {"prompt": "turn 0", "output": "ok"}
    assert chatty["transcript"][-1] == {"prompt": "turn 999", "output": "ok"}
    assert chatty["transcript_dropped"] == 999_000
    assert quiet["transcript"] == [{"prompt": "one", "output": "two"}] and quiet["transcript_dropped"] == 0
    result.stdout.re_match_lines(
        [
            r".*1 run\(s\) recorded more than 1,000 transcript entries; the first 1,000 of each were kept "
            r"\(most dropped: bench_capped\.py::bench_chatty::run1, 999,000\)"
        ]
    )
    assert (pytester.path / "report.json").stat().st_size < 2_000_000


def test_the_html_report_says_how_many_entries_were_dropped(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        bench_capped=CAPPED.replace("1_000_000", "1_500").replace('output="ok")\n', 'output="ok")\n    assert False\n')
    )
    result = pytester.runpytest_subprocess(
        "-p", "no:cacheprovider", "--prob-runs=1", "--prob-html=report.html", timeout=120
    )
    assert result.ret == 1, result.stdout.str()
    html = (pytester.path / "report.html").read_text(encoding="utf-8")
    assert "500 more transcript entries were dropped" in html
