"""End to end: spend less. Early stopping, session budgets and retries, serial and under pytest-xdist.

Outcomes depend only on the run number (fixture ``n``), so a case's verdict is
the same whichever worker runs which run. Under xdist a decision reaches the
workers through the decisions channel, so runs already started when it was
taken still finish: those tests bound the overshoot rather than fix it.
"""

from __future__ import annotations

import http.server
import json
import threading
from collections.abc import Iterator

import pytest

# Imported here, before any in-process pytester session: a session that imported it
# first would drop it from sys.modules at its end, and a later importer (the SDK's
# HTTP exporters) would mix two copies ("You can only merge into CookieJar").
import requests  # noqa: F401
from sessions import CONFTEST, report, section, session

XDIST = pytest.mark.parametrize("xdist", [[], ["-n", "2"]], ids=["serial", "xdist"])

# always: 60/60 vs 0.5, PASS (curtail can stop after 39 passes: 39/60 is [51.6%, 76.9%]);
# never: 0/30 vs 0.8, FAIL; count: passes at runs 1 and 2, need 2 of 20, PASS;
# unsure: 7/10 vs 0.5, UNDECIDED either way, never stopped; free: no gate.
STOPPING = """
import time
import pytest

PAUSE = {pause}


@pytest.mark.probability(runs=60, min_rate=0.5)
def bench_always(n):
    time.sleep(PAUSE)


@pytest.mark.probability(runs=30, min_rate=0.8)
def bench_never(n):
    time.sleep(PAUSE)
    assert False


@pytest.mark.probability(runs=20, min_passes=2)
def bench_count(n):
    time.sleep(PAUSE)
    assert n <= 2


@pytest.mark.probability(runs=10, min_rate=0.5)
def bench_unsure(n):
    assert n not in (2, 5, 9)


@pytest.mark.probability(runs=4)
def bench_free(n):
    pass
"""

VERDICTS = {"always": "pass", "never": "fail", "count": "pass", "unsure": "undecided", "free": None}


def run(pytester: pytest.Pytester, xdist: list[str], *args: str) -> pytest.RunResult:
    """Under xdist in a subprocess, else in this process."""
    return session(pytester, *xdist, *args, gate_timeout=60 if xdist else None, in_process=not xdist)


def executed(row: dict) -> int:
    return row["total"] + row["skipped"]


@pytest.fixture
def stopping(pytester: pytest.Pytester) -> pytest.Pytester:
    pytester.makeconftest(CONFTEST)
    pytester.makepyfile(bench_stop=STOPPING.format(pause=0.0))
    return pytester


@pytest.mark.parametrize("mode", ["curtail", "sequential"])
@XDIST
def test_stopping_saves_runs_and_keeps_every_verdict(stopping, mode, xdist):
    if xdist:  # realistic runs: long against the controller's turnaround, so the overshoot stays small
        stopping.makepyfile(bench_stop=STOPPING.format(pause=0.05))
    baseline = run(stopping, xdist, "--prob-json=report.json")
    report_without_stop = report(stopping)
    fixed = {row["label"]: row for row in report_without_stop["rows"]}
    result = run(stopping, xdist, f"--prob-stop={mode}", "--prob-json=report.json")
    data = report(stopping)
    rows = {row["label"]: row for row in data["rows"]}

    assert {label: row["verdict"] for label, row in rows.items()} == VERDICTS
    assert {label: row["verdict"] for label, row in fixed.items()} == VERDICTS
    assert result.ret == baseline.ret == 1  # never fails, unsure is undecided: same exit status
    for label in ("unsure", "free"):
        assert rows[label]["stopped"] is None and executed(rows[label]) == fixed[label]["total"]
    for label in ("always", "never", "count"):
        stopped = rows[label]["stopped"]
        assert stopped["cause"] == "decided"
        assert stopped["runs_executed"] + stopped["runs_not_executed"] == rows[label]["runs"]
        assert stopped["runs_saved"] == stopped["runs_not_executed"] > 0
        assert "decided after" in stopped["reason"] and f"({mode})" in stopped["reason"]
        assert rows[label]["skipped"] == 0  # counted apart from skipped runs
        # 0.3.0's keys of rows[].stopped, for its jq recipes
        assert (stopped["after"], stopped["planned"], stopped["skipped"]) == (
            stopped["runs_executed"],
            rows[label]["runs"],
            stopped["runs_not_executed"],
        )
        assert stopped["verdict"] == stopped["reason"].split(" ", 1)[0].lower() and stopped["cost_avoided"] is None
    # The fraction is over executed runs only.
    assert rows["always"]["pass_fraction"] == 1.0 and rows["never"]["pass_fraction"] == 0.0
    assert data["stopping"]["mode"] == mode
    assert data["stopping"]["runs_saved"] == sum(
        rows[label]["stopped"]["runs_saved"] for label in ("always", "never", "count")
    )
    # 0.3.0's keys, always present
    stopping_ = data["stopping"]
    assert (stopping_["active"], stopping_["cases"], stopping_["runs_skipped"]) == (True, 3, stopping_["runs_saved"])
    assert (
        stopping_["runs_planned"] == stopping_["runs_executed"] + stopping_["runs_saved"]
        and stopping_["cost_avoided"] is None
    )
    assert report_without_stop["stopping"] == {
        "mode": "off",
        "active": False,
        "cases": 0,
        "runs_skipped": 0,
        "runs_planned": report_without_stop["totals"]["count"],
        "cost_avoided": None,
        "cases_stopped": 0,
        "runs_saved": 0,
        "runs_executed": report_without_stop["totals"]["count"],
    }
    # 0.3.0: records[] holds executed runs; the runs not executed are in skipped_runs[]
    assert not any(r["stopped"] for r in data["records"])
    not_run = [r for r in data["skipped_runs"] if r["stopped"]]
    assert len(not_run) == data["stopping"]["runs_saved"]
    assert all(r["outcome"] == "skip" and r["message"].startswith("not run: ") for r in not_run)

    if not xdist:  # serially each decision comes right after the run that made it
        if mode == "curtail":
            assert executed(rows["always"]) == 39
        assert executed(rows["count"]) == 2
        assert rows["always"]["stopped"]["reason"].startswith(
            f"PASS decided after {executed(rows['always'])} of 60 runs"
        )
    else:  # bounded by the runs in flight when the controller decided (one per worker, plus a loaded machine's lag)
        assert executed(rows["count"]) <= 2 + 10
        assert executed(rows["always"]) <= (39 if mode == "curtail" else 20) + 10
    lines = section(result)
    assert any(line.startswith("  always") and line.rstrip().endswith("not run") for line in lines)
    assert any(line.startswith("  Stopped: 3 case(s) decided early") for line in lines)
    assert any("not run" in line for line in lines if line.startswith("  Overall:"))


def test_sequential_needs_fewer_runs_than_curtail_on_a_clear_case(stopping):
    run(stopping, [], "--prob-stop=curtail", "--prob-json=report.json")
    curtail = {row["label"]: executed(row) for row in report(stopping)["rows"]}
    run(stopping, [], "--prob-stop=sequential", "--prob-json=report.json")
    sequential = {row["label"]: executed(row) for row in report(stopping)["rows"]}
    assert sequential["always"] < curtail["always"] == 39
    assert sequential["never"] <= curtail["never"]


def test_the_marker_keyword_stops_one_case_and_off_keeps_another_running(pytester):
    pytester.makeconftest(CONFTEST)
    pytester.makepyfile(
        bench_m="""
import pytest

@pytest.mark.probability(runs=40, min_rate=0.5, stop="curtail")
def bench_on(n):
    pass

@pytest.mark.probability(runs=40, min_rate=0.5, stop="off")
def bench_off(n):
    pass

@pytest.mark.probability(runs=40, min_rate=0.5)
def bench_default(n):
    pass
"""
    )
    pytester.runpytest("-p", "no:cacheprovider", "-o", "prob_stop=sequential", "--prob-json=report.json")
    rows = {row["label"]: row for row in report(pytester)["rows"]}
    assert rows["on"]["stopped"]["reason"].endswith("(curtail)")
    assert rows["off"]["stopped"] is None and rows["off"]["total"] == 40
    assert rows["default"]["stopped"]["reason"].endswith("(sequential)")


# -- budgets --------------------------------------------------------------------------------

BUDGET = """
import time
import pytest
from pytest_probability import record_usage

PAUSE = {pause}


@pytest.mark.probability(runs=20, min_passes=10)
def bench_spend(n):
    time.sleep(PAUSE)
    record_usage(model="m", input_tokens=80, output_tokens=20, cost=0.1)
"""


@XDIST
def test_cost_budget_stops_new_runs_and_leaves_the_gate_undecided(pytester, xdist):
    pytester.makeconftest(CONFTEST)
    pytester.makepyfile(bench_b=BUDGET.format(pause=0.05 if xdist else 0.0))
    result = run(pytester, xdist, "--prob-max-cost=0.5", "--prob-json=report.json", "-rs")
    data = report(pytester)
    row = data["rows"][0]
    ran = executed(row)
    if xdist:
        assert 5 <= ran <= 5 + 10  # the controller's total decides; runs in flight finish
    else:
        assert ran == 5  # the fifth run reaches $0.50
    assert row["stopped"]["cause"] == "budget" and row["stopped"]["runs_not_executed"] == 20 - ran
    assert row["stopped"]["runs_saved"] == 0
    # 5+ passes of 20 with min_passes=10: not enough runs for the gate -> UNDECIDED, never PASS (nor FAIL).
    assert row["verdict"] == "undecided"
    assert result.ret == 1
    budget = data["budget"]
    assert budget["reached"] == "cost" and budget["limits"]["cost"] == 0.5
    assert budget["spent"]["cost"] == pytest.approx(0.1 * ran)
    assert budget["runs_not_executed"] == 20 - ran
    lines = section(result)
    assert any(
        line.startswith("  Budget:  cost budget $0.5 reached: spent $0.") and f"{20 - ran} run(s) not executed" in line
        for line in lines
    )
    result.stdout.fnmatch_lines(["*not run: cost budget $0.5 reached*"])


def test_token_and_time_budgets(pytester):
    pytester.makeconftest(CONFTEST)
    pytester.makepyfile(bench_b=BUDGET.format(pause=0.0))
    pytester.runpytest("-p", "no:cacheprovider", "-o", "prob_max_tokens=300", "--prob-json=report.json")
    data = report(pytester)
    assert data["budget"]["reached"] == "tokens" and executed(data["rows"][0]) == 3  # 100 tokens a run
    assert data["budget"]["spent"]["tokens"] == 300

    result = pytester.runpytest("-p", "no:cacheprovider", "--prob-max-time=0", "--prob-json=report.json")
    data = report(pytester)
    assert data["budget"]["reached"] == "time" and executed(data["rows"][0]) == 0
    assert data["rows"][0]["verdict"] == "undecided"
    result.stdout.fnmatch_lines(["*spend*0/0*20 not run*NOT RUN*"])


def test_time_budget_under_xdist_stops_every_worker(pytester):
    pytester.makeconftest(CONFTEST)
    pytester.makepyfile(bench_b=BUDGET.format(pause=0.0))
    result = run(pytester, ["-n", "2"], "--prob-max-time=0", "--prob-json=report.json")
    data = report(pytester)
    assert data["budget"]["reached"] == "time"
    assert executed(data["rows"][0]) == 0 and data["rows"][0]["stopped"]["runs_not_executed"] == 20
    result.stdout.fnmatch_lines(["*Budget:  time budget 0s reached*20 run(s) not executed*"])


def test_budget_metrics_are_exported(pytester, tmp_path):
    pytester.makeconftest(CONFTEST)
    pytester.makepyfile(bench_b=BUDGET.format(pause=0.0))
    out = tmp_path / "otel.jsonl"
    result = pytester.runpytest_subprocess(
        "-p", "no:cacheprovider", "--prob-max-cost=0.3", "--prob-stop=curtail", f"--prob-otel-file={out}", timeout=60
    )
    assert result.ret == 1
    points = {}
    for line in out.read_text().splitlines():
        for resource in json.loads(line).get("resourceMetrics", []):
            for scope in resource["scopeMetrics"]:
                for metric in scope["metrics"]:
                    for point in (metric.get("gauge") or metric.get("sum") or {}).get("dataPoints", []):
                        attrs = {a["key"]: next(iter(a["value"].values())) for a in point.get("attributes", [])}
                        value = point.get("asInt", point.get("asDouble"))
                        points.setdefault(metric["name"], []).append((attrs, float(value)))
    assert points["probability.runs.not_executed"] == [
        (
            {
                "test.case.name": "bench_b.py::spend",
                "probability.benchmark": "spend",
                "probability.case": "",
                "probability.stop.cause": "budget",
            },
            17.0,
        )
    ]
    assert points["probability.session.budget.reached"] == [({"probability.budget": "cost"}, 1.0)]
    assert points["probability.session.budget.used"][0][1] == pytest.approx(1.0)


# -- retries ----------------------------------------------------------------------------------


class Provider(http.server.BaseHTTPRequestHandler):
    """429 with Retry-After on the first request of each path, then 200; /always429 never recovers."""

    seen: dict[str, int] = {}
    lock = threading.Lock()

    def do_GET(self) -> None:  # noqa: N802
        with self.lock:
            count = self.seen[self.path] = self.seen.get(self.path, 0) + 1
        if count == 1 or self.path.startswith("/always429"):
            self.send_response(429)
            self.send_header("Retry-After", "1" if not self.path.startswith("/always429") else "0")
            body = b'{"error": "rate limited"}'
        else:
            self.send_response(200)
            body = b'{"answer": 42}'
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def provider() -> Iterator[str]:
    Provider.seen = {}
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Provider)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


RETRY = """
import pytest
import requests
from pytest_probability import record_cost

URL = {url!r}


def call(path):
    record_cost(0.01)  # every attempt is paid for
    response = requests.get(URL + path, timeout=10)
    response.raise_for_status()
    return response.json()


@pytest.mark.probability(runs=2)
def bench_limited(n):
    assert call(f"/limited/{{n}}") == {{"answer": 42}}


def bench_exhausted():
    call("/always429")


def bench_wrong(n):
    call(f"/wrong/{{n}}")  # 429, then ...
    assert False, "a wrong answer is never retried"


def bench_unlisted():
    raise ValueError("not a provider fault")
"""


@XDIST
def test_retry_honours_retry_after_through_requests(pytester, provider, xdist):
    pytester.makeconftest(CONFTEST)
    pytester.makepyfile(bench_r=RETRY.format(url=provider))
    run(
        pytester,
        xdist,
        "--prob-retry=2",
        "--prob-retry-on=requests.HTTPError, ConnectionError",
        "-o",
        "prob_retry_backoff=0.01",
        "--prob-json=report.json",
    )
    data = report(pytester)
    records = {r["nodeid"].split("::", 1)[1]: r for r in data["records"]}
    for run_id in ("bench_limited::run1", "bench_limited::run2"):
        record = records[run_id]
        assert record["outcome"] == "pass" and record["attempts"] == 2
        assert record["retries"] == [
            {
                "attempt": 1,
                "error_type": "requests.exceptions.HTTPError",
                "error": record["retries"][0]["error"],
                "wait": 1.0,
            }
        ]
        assert "429" in record["retries"][0]["error"]
        assert record["cost"] == pytest.approx(0.02)  # the failed attempt was paid for
        assert record["duration"] < 1.0  # the last attempt's, without the wait
    exhausted = records["bench_exhausted::run1"]
    assert exhausted["outcome"] == "error" and exhausted["attempts"] == 3
    assert exhausted["error_type"] == "requests.exceptions.HTTPError"
    assert exhausted["cost"] == pytest.approx(0.03)
    # bench_wrong: its first request is retried (a 429), then its AssertionError is not.
    wrong = records["bench_wrong::run1"]
    assert wrong["outcome"] == "fail" and wrong["attempts"] == 2
    unlisted = records["bench_unlisted::run1"]
    assert unlisted["outcome"] == "error" and unlisted["attempts"] == 1 and unlisted["retries"] == []
    rows = {row["label"]: row for row in data["rows"]}
    assert rows["limited"]["pass_fraction"] == 1.0  # only the last attempt counts
    assert data["settings"]["retry"]["retries"] == 2


# -- bad input ------------------------------------------------------------------------------

SIDE_EFFECT = """
from pathlib import Path

def bench_spends_money():
    Path(__file__).with_name("ran.txt").write_text("spent")
"""


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--prob-max-cost=-1"], "--prob-max-cost must be zero or more, got '-1'"),
        (["--prob-max-tokens=-5"], "--prob-max-tokens must be zero or more, got '-5'"),
        (["--prob-max-tokens=1.5"], "--prob-max-tokens must be a whole number of zero or more, got '1.5'"),
        (["--prob-max-time=-0.5"], "--prob-max-time must be zero or more, got '-0.5'"),
        (["-o", "prob_max_cost=lots"], "ini prob_max_cost must be a number of zero or more, got 'lots'"),
        (["--prob-stop=sprt"], "--prob-stop: the stop mode must be one of curtail, sequential or off, got 'sprt'"),
        (
            ["-o", "prob_stop=soon"],
            "ini prob_stop: the stop mode must be one of curtail, sequential or off, got 'soon'",
        ),
        (["--prob-retry=-1", "--prob-retry-on=OSError"], "--prob-retry must be zero or more, got '-1'"),
        (["--prob-retry=2"], "--prob-retry=2 needs the exception classes to retry on*"),
        (
            ["--prob-retry=2", "--prob-retry-on=no_such_sdk.RateLimitError"],
            "--prob-retry-on: cannot import 'no_such_sdk.RateLimitError': No module named 'no_such_sdk'",
        ),
        (["--prob-retry=2", "--prob-retry-on=json.NoSuchError"], "--prob-retry-on: cannot import 'json.NoSuchError'*"),
        (
            ["--prob-retry=1", "-o", "prob_retry_on=json.JSONDecoder"],
            "ini prob_retry_on: 'json.JSONDecoder' is not an exception class",
        ),
    ],
)
def test_bad_spend_options_are_usage_errors_before_any_run(pytester, args, message):
    pytester.makepyfile(bench_x=SIDE_EFFECT)
    result = pytester.runpytest(*args)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([f"ERROR: {message}"])
    assert not (pytester.path / "ran.txt").exists()


def test_a_bad_stop_marker_is_a_collection_error(pytester):
    pytester.makepyfile(
        bench_x="""
import pytest

@pytest.mark.probability(min_rate=0.5, stop="eventually")
def bench_a():
    pass
"""
    )
    result = pytester.runpytest()
    assert result.ret == pytest.ExitCode.INTERRUPTED
    result.stdout.fnmatch_lines(["*probability(stop=...): the stop mode must be one of curtail, sequential or off*"])


def test_each_retry_is_a_span_event_on_the_run_span(pytester, tmp_path):
    # No OpenTelemetry in the benchmark's code: with export on, the run span is an SDK span
    # and current, so the retry events land on it.
    pytester.makepyfile(
        bench_e="""
import itertools

class Throttled(Exception):
    retry_after = 0

calls = itertools.count()

def bench_flaky_provider():
    if next(calls) < 2:
        raise Throttled("429 slow down")
"""
    )
    out = tmp_path / "otel.jsonl"
    result = pytester.runpytest_subprocess(
        "-p", "no:cacheprovider", "--prob-retry=3", "--prob-retry-on=Throttled", f"--prob-otel-file={out}", timeout=60
    )
    assert result.ret == 0
    events = []
    for line in out.read_text().splitlines():
        for resource in json.loads(line).get("resourceSpans", []):
            for scope in resource["scopeSpans"]:
                for span in scope["spans"]:
                    if span["name"].startswith("probability.run"):
                        events += [
                            (e["name"], {a["key"]: next(iter(a["value"].values())) for a in e.get("attributes", [])})
                            for e in span.get("events", [])
                        ]
    assert [name for name, _ in events] == ["probability.retry", "probability.retry"]
    assert [attrs["probability.retry.attempt"] for _, attrs in events] == ["1", "2"]  # OTLP JSON: ints as strings
    assert events[0][1]["probability.retry.error_type"] == "bench_e.Throttled"
    assert float(events[0][1]["probability.retry.wait"]) == 0.0
