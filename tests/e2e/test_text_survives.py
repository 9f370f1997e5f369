"""End to end: any text a user hands the plugin survives every output, the journal and xdist's channel
(issue 46, item 1).

A model's answer cut off inside an escaped emoji, ``json.loads('"fine \\ud83d"')``, is a string with a lone
surrogate, which UTF-8 cannot encode: it lost the JSON report (a traceback at the end), stopped the journal
after 0 records, and ended an ``-n 2`` session in an INTERNALERROR. Here it goes through every way in (a
score's name and explanation, transcript values and a field's name, a model's name, an assert's message, a
skip's reason, a parameter, a retried error's message, the user's own span, event and log record) and every way out (the
table, the JSON and HTML reports, the journal and its resume, the OTLP file, JUnit XML, the CI summary and
annotations), serially and under ``-n 2``. Each such text arrives as the well-formed text a UTF-8 decoder
would make of it: a lone surrogate becomes U+FFFD.
"""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET

import pytest
from otlp_receiver import flatten_logs, flatten_spans
from sessions import CONFTEST, XDIST_ARGS, XDIST_IDS, session

from pytest_probability.otel import otlp_json

XDIST = pytest.mark.parametrize("xdist", XDIST_ARGS, ids=XDIST_IDS)

#: What the benchmarks hand over, as it arrives: the lone surrogate replaced by U+FFFD.
FINE = "fine \ufffd"

BENCH = r"""
import json

import pytest
from opentelemetry import trace
from opentelemetry._logs import LogRecord, get_logger
from pytest_probability import record_io, record_output, record_score, record_usage

BAD = json.loads('"fine \\ud83d"')  # a model's answer cut inside an escaped emoji: a lone surrogate
TRIED = set()


@pytest.mark.parametrize("answer", ["a " + BAD])
def bench_graded(answer, n):
    record_score(0.5, "judge " + BAD, explanation=BAD)
    record_output(answer, **{"field " + BAD: BAD})
    record_io(prompt={"q": BAD}, output=[BAD])
    record_usage(model="m " + BAD, input_tokens=3, output_tokens=1)
    with trace.get_tracer("user").start_as_current_span("call " + BAD) as span:
        span.set_attribute("answer", BAD)
        span.add_event("said " + BAD, {"text": BAD})
    get_logger("user").emit(LogRecord(body={"answer": BAD}, attributes={"answer": BAD}))


def bench_told(n):
    assert n % 2, BAD


def bench_skipped():
    pytest.skip(BAD)


def bench_retried(n):
    if n not in TRIED:
        TRIED.add(n)
        raise ConnectionError("reset " + BAD)
"""

OUTPUTS = (
    "--prob-runs=4",
    "--prob-json=report.json",
    "--prob-html=report.html",
    "--prob-journal=journal.jsonl",
    "--prob-otel-file=otlp.jsonl",
    "--junitxml=junit.xml",
    "--prob-summary=summary.md",
    "--prob-annotations=on",
    "--prob-retry=1",
    "--prob-retry-on=ConnectionError",
    "-rs",
)

#: The settings the journal was written with, and no output but the table.
RESUME = ("--prob-runs=4", "--prob-journal=journal.jsonl", "--prob-retry=1", "--prob-retry-on=ConnectionError")


def text(pytester: pytest.Pytester, name: str) -> str:
    """A file the session wrote, read as strict UTF-8 (a lone surrogate in it would fail here)."""
    return (pytester.path / name).read_bytes().decode("utf-8")


@XDIST
def test_a_lone_surrogate_survives_every_output_the_journal_and_the_workers(
    pytester: pytest.Pytester, xdist: tuple[str, ...]
) -> None:
    pytester.makeconftest(CONFTEST)
    pytester.makepyfile(bench_text=BENCH)
    result = session(pytester, *xdist, *OUTPUTS, ret=1)  # bench_told fails two of its runs
    output = result.stdout.str() + result.stderr.str()
    assert "INTERNALERROR" not in output and "Traceback" not in output and "UnicodeEncodeError" not in output
    result.stdout.fnmatch_lines(["*2 failed*"])
    # pytest's own failure report: serially it prints the message escaped (``fine \ud83d``), its terminal's way
    assert "AssertionError: fine " in output
    assert "could not write" not in output

    report = json.loads(text(pytester, "report.json"))
    records = {r["nodeid"]: r for r in report["records"] + report["skipped_runs"]}
    assert len(records) == 16  # every run of the four benchmarks: none lost
    graded = next(r for nodeid, r in records.items() if "bench_graded" in nodeid)
    assert [(s["name"], s["explanation"]) for s in graded["scores"]] == [(f"judge {FINE}", FINE)]
    assert graded["transcript"][0] == {"output": f"a {FINE}", f"field {FINE}": FINE}
    assert graded["transcript"][1] == {"prompt": json.dumps({"q": FINE}, ensure_ascii=False), "output": f'["{FINE}"]'}
    assert [u["model"] for u in graded["usage"]] == [f"m {FINE}"]
    rows = {row["benchmark"]: row for row in report["rows"]}
    assert rows["graded"]["params"] == {"answer": f"a {FINE}"}
    assert f"judge {FINE}" in rows["graded"]["scores"]
    told = [r for nodeid, r in records.items() if "bench_told" in nodeid and r["outcome"] == "fail"]
    assert [r["message"] for r in told] == [FINE, FINE] and all(FINE in r["error_text"] for r in told)
    assert {r["message"] for nodeid, r in records.items() if "bench_skipped" in nodeid} == {FINE}
    retried = [r for nodeid, r in records.items() if "bench_retried" in nodeid]
    assert [r["retries"][0]["error"] for r in retried] == [f"reset {FINE}"] * 4
    assert all(r["outcome"] == "pass" for r in retried)

    assert f"judge {FINE}" in text(pytester, "report.html")
    assert "| told | 2/4 |" in text(pytester, "summary.md")
    ET.fromstring(text(pytester, "junit.xml"))  # well-formed XML

    # the journal holds every run, and a second session resumes all of them from it
    lines = [json.loads(line) for line in text(pytester, "journal.jsonl").splitlines()]
    assert sum("record" in line for line in lines) == 16
    again = session(pytester, *xdist, *RESUME, ret=1)
    again.stdout.fnmatch_lines(["*Journal: 16 run(s) resumed from *journal.jsonl, 0 run now*"])

    # the OTLP file: every run's span, the user's span and event, the scores' evaluation records
    requests = list(otlp_json.read_file(pytester.path / "otlp.jsonl"))
    spans = flatten_spans(requests)
    assert sum(span.name.startswith("probability.run ") for span in spans) == 16
    user = [span for span in spans if span.name == f"call {FINE}"]
    assert len(user) == 4 and all(span.attributes["answer"] == FINE for span in user)
    assert all(span.events == [(f"said {FINE}", {"text": FINE})] for span in user)
    logs = flatten_logs(requests)
    users = [log for log in logs if log.scope_name == "user"]
    assert len(users) == 4 and all(log.body == {"answer": FINE} == log.attributes for log in users)
    evaluations = [log for log in logs if log.attributes.get("gen_ai.evaluation.name")]
    assert {log.attributes["gen_ai.evaluation.name"] for log in evaluations} >= {f"judge {FINE}"}
    assert {log.attributes.get("gen_ai.evaluation.explanation") for log in evaluations} >= {FINE}


def test_a_lone_surrogate_in_a_session_without_export_gives_the_report(pytester: pytest.Pytester) -> None:
    """The issue's first case: a score's explanation, a serial session with the JSON report alone."""
    pytester.makepyfile(
        bench_one="""
import json
from pytest_probability import record_score

def bench_one():
    record_score(0.5, explanation=json.loads('"fine \\\\ud83d"'))
"""
    )
    result = session(pytester, "--prob-runs=2", "--prob-json=report.json", ret=0)
    assert "Traceback" not in result.stdout.str() + result.stderr.str()
    report = json.loads(text(pytester, "report.json"))
    assert [r["scores"][0]["explanation"] for r in report["records"]] == [FINE, FINE]
