"""End to end: runs in flight together (``--prob-concurrency``, issue 44, items 1-3 and 6).

Every session runs in a subprocess, with pytest-asyncio, anyio and pytest-trio loaded from their entry
points, and sync benchmarks in threads. The benchmarks' barriers (``concurrent_sessions.PROBE``) hold each
run until K runs are in flight, so a session that ran one at a time fails rather than passing slowly; each
execution logs a token of its own, which its output, its transcript, its failure and its JUnit testcase
must carry and no other run's may.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections import Counter

import pytest
from concurrent_sessions import (
    FLAVOUR,
    XDIST,
    body,
    executions,
    needs_worker_queue,
    peaks,
    run,
    setup,
    xdist_version,
)
from sessions import report


def junit_cases(pytester: pytest.Pytester) -> list[ET.Element]:
    return list(ET.parse(pytester.path / "junit.xml").getroot().iter("testcase"))


def nodeid_of(case: ET.Element) -> str:
    """A JUnit testcase's node id: ``classname`` is the module's dotted path and the benchmark."""
    classname, name = case.get("classname", ""), case.get("name", "")
    module, _, benchmark = classname.rpartition(".")
    return f"{module.replace('.', '/')}.py::{benchmark}::{name}"


@FLAVOUR
@XDIST
def test_runs_execute_together_and_each_keeps_its_own_item(
    pytester: pytest.Pytester, flavour: str, xdist: list[str]
) -> None:
    needs_worker_queue(xdist)
    target = 2 if xdist else 4
    setup(pytester, flavour, body(flavour), target=target)
    result = run(
        pytester, "--prob-runs=8", "--prob-concurrency=4", "--prob-json=report.json", "--junitxml=junit.xml", "-rA",
        *xdist,
    )  # fmt: skip
    assert result.ret == 1, result.stdout.str()[-3000:]
    result.assert_outcomes(passed=8, failed=8)

    # Every run executed once, at most K at once in a process, and at least the barrier's target together.
    done = executions(pytester)
    assert Counter(e["case"] for e in done) == {"a": 8, "b": 8}
    assert len({e["token"] for e in done}) == 16
    assert max(peaks(pytester)) <= 4 and max(peaks(pytester)) >= target

    data = report(pytester)
    records = {r["nodeid"]: r for r in data["records"]}
    assert len(records) == 16
    # Each run's record is its own execution's: its token, its usage, its own start and duration.
    tokens = {nodeid: r["transcript"][0]["output"] for nodeid, r in records.items()}
    assert set(tokens.values()) == {e["token"] for e in done}
    for nodeid, record in records.items():
        case = "a" if "::a[" in nodeid else "b"
        assert [u["model"] for u in record["usage"]] == [f"m-{case}"]
        assert record["transcript"][0]["prompt"] == case
        assert record["transcript"][0]["run"] == nodeid  # current_run() knows which run it is, ahead too
        assert 0.04 < record["duration"] < 10
    spans = sorted((r["start_time"], r["start_time"] + r["duration"]) for r in records.values())
    assert any(later[0] < earlier[1] for earlier, later in zip(spans, spans[1:], strict=False)), (
        "no two runs overlapped"
    )
    assert data["concurrency"]["limit"] == 4
    assert data["concurrency"]["runs"] == 16 and data["concurrency"]["peak_in_flight"] <= 4
    assert data["concurrency"]["processes"] == (2 if xdist else 1)

    # Each run is its own JUnit testcase, with its own captured stdout, stderr and log, and its own failure.
    cases = junit_cases(pytester)
    assert sorted(nodeid_of(case) for case in cases) == sorted(records)
    for case in cases:
        nodeid = nodeid_of(case)
        token, letter = tokens[nodeid], "a" if "::a[" in nodeid else "b"
        out = "".join(e.text or "" for e in case.iter("system-out"))
        err = "".join(e.text or "" for e in case.iter("system-err"))
        assert re.findall(r"out \w (\S+)", out) == [token], (nodeid, out)
        assert re.findall(r"err \w (\S+)", err) == [token], (nodeid, err)
        assert re.findall(r"log \w (\S+)", out + err) == [token], (nodeid, out, err)
        failure = case.find("failure")
        if letter == "b":
            # Its own failure: the message, or under pytest < 8.4 (which shows pytest-trio's group as "Exceptions
            # from Trio nursery", with the plugin or without) the traceback below it.
            assert failure is not None and f"wrong answer {token}" in failure.get("message", "") + (failure.text or "")
        else:
            assert failure is None

    # Reports come in the items' order (each run reports in its own item); -rA lists them in that order.
    if not xdist:
        order = [line.split()[1] for line in result.outlines if line.startswith(("PASSED ", "FAILED "))]
        collected = [f"bench_it.py::bench_it::{c}[run{n}]" for c in "ab" for n in range(1, 9)]
        assert order == collected


def test_concurrency_is_reported_in_the_terminal_and_the_html_report(pytester: pytest.Pytester) -> None:
    setup(pytester, "asyncio", body("asyncio"), target=4)
    result = run(pytester, "--prob-runs=8", "--prob-concurrency=4", "--prob-json=report.json", "--prob-html=r.html")
    lines = [line for line in result.outlines if "Concurrency:" in line or "x the ideal" in line]
    assert re.search(r"Concurrency: up to 4 runs in flight in one process; mean \d+\.\d, peak 4; 16 run\(s\)", lines[0])
    assert re.search(r"their calls took \d+\.\d\ds of wall time, \d+\.\d\d x the ideal \d+\.\d\ds", lines[1])
    data = report(pytester)["concurrency"]
    for key in ("limit", "processes", "runs", "mean_in_flight", "peak_in_flight", "call_seconds", "wall_seconds",
                "ideal_seconds", "wall_over_ideal", "faults", "window_cuts", "one_at_a_time",
                "finished_unreported", "cancelled"):  # fmt: skip
        assert key in data
    assert data["ideal_seconds"] == pytest.approx(data["call_seconds"] / 4, rel=1e-3)
    assert 1 <= data["mean_in_flight"] <= 4
    html = (pytester.path / "r.html").read_text(encoding="utf-8")
    assert '<section id="concurrency"><h2>Concurrent runs</h2><p>Concurrency: up to 4 runs in flight' in html


def test_a_session_without_concurrency_reports_none(pytester: pytest.Pytester) -> None:
    setup(pytester, "sync", "    pass\n")
    result = run(pytester, "--prob-runs=3", "--prob-json=report.json")
    assert result.ret == 0
    assert "concurrency" not in report(pytester)
    assert "Concurrency:" not in result.stdout.str()


@pytest.mark.parametrize(
    ("args", "ini", "message"),
    [
        (["--prob-concurrency=0"], "", "--prob-concurrency: --prob-concurrency must be at least 1, got 0"),
        (["--prob-concurrency=-3"], "", "--prob-concurrency must be at least 1, got -3"),
        (["--prob-concurrency=2.5"], "", "--prob-concurrency must be a whole number, got '2.5'"),
        (["--prob-concurrency=lots"], "", "--prob-concurrency must be a whole number, got 'lots'"),
        (["--prob-concurrency=1001"], "", "--prob-concurrency must be at most 1000 (runs in flight in one process), got 1001"),
        ([], "prob_concurrency = 0\n", "ini prob_concurrency must be at least 1, got 0"),
        ([], "prob_concurrency = many\n", "ini prob_concurrency must be a whole number, got 'many'"),
    ],
)  # fmt: skip
def test_a_bad_k_is_a_usage_error_naming_it(pytester: pytest.Pytester, args: list[str], ini: str, message: str) -> None:
    pytester.makeini("[pytest]\n" + ini)
    pytester.makepyfile(bench_it="def bench_it():\n    pass\n")
    result = run(pytester, *args)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert message in result.stderr.str()


def test_a_bad_k_in_a_marker_is_a_collection_error_naming_it(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        bench_it="import pytest\n\n@pytest.mark.probability(concurrency=0)\ndef bench_it():\n    pass\n"
    )
    result = run(pytester)
    assert result.ret == pytest.ExitCode.INTERRUPTED  # a collection error
    assert "probability(concurrency=...) must be at least 1, got 0" in result.stdout.str()


def test_the_marker_sets_k_per_benchmark_and_the_command_line_wins(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    setup(pytester, "sync", body("sync"), target=3, marks="@pytest.mark.probability(concurrency=3)\n")
    run(pytester, "--prob-runs=6", "--prob-json=report.json")
    assert report(pytester)["concurrency"]["limit"] == 3 and max(peaks(pytester)) == 3
    for path in pytester.path.glob("peak-*.json"):
        path.unlink()
    (pytester.path / "executions.log").unlink()
    monkeypatch.setenv("PROBE_TIMEOUT", "0.05")  # one at a time, each barrier gives up at once
    result = run(pytester, "--prob-runs=6", "--prob-concurrency=1", "--prob-json=report.json")
    assert "concurrency" not in report(pytester)
    assert max(peaks(pytester)) == 1
    assert len(executions(pytester)) == 12
    # the tracebacks' own lines: the short summary repeats the message too, cut to the terminal's width
    failed = [
        line
        for line in result.stdout.lines
        if re.match(r"E +RuntimeError: only 1 run\(s\) in flight at once, never 3$", line)
    ]
    assert len(failed) == 12


@XDIST
def test_a_benchmark_using_a_function_scoped_fixture_runs_one_at_a_time_with_one_warning(
    pytester: pytest.Pytester, xdist: list[str]
) -> None:
    needs_worker_queue(xdist)  # an older xdist adds its own warning: every run one at a time
    pytester.makeini("[pytest]\n")
    pytester.makepyfile(
        probe="",
        bench_it="""
import time
import pytest

@pytest.fixture(scope="module")
def shared():
    return object()

@pytest.mark.parametrize("case", ["a", "b"])
def bench_fast(case, shared):
    time.sleep(0.01)

@pytest.mark.parametrize("case", ["a", "b"])
def bench_slow(case, shared, tmp_path):
    time.sleep(0.01)
""",
    )
    result = run(pytester, "--prob-runs=4", "--prob-concurrency=4", "--prob-json=report.json", *xdist)
    assert result.ret == 0
    text = result.stdout.str()
    warned = re.findall(r"ProbabilityConcurrencyWarning: (bench_it\.py::\w+): its runs execute one at a time, "
                        r"not 4 in flight: it uses the function-scoped fixture '(\w+)'", text)  # fmt: skip
    assert set(warned) == {("bench_it.py::bench_slow", "tmp_path")}
    data = report(pytester)["concurrency"]
    assert data["one_at_a_time"] == ["bench_it.py::bench_slow (tmp_path)"]
    assert data["runs"] == 8  # bench_fast's runs, in flight together; bench_slow's ran one at a time
    assert "one run at a time: bench_it.py::bench_slow (tmp_path)" in text


def test_worksteal_falls_back_to_one_at_a_time_with_a_warning(pytester: pytest.Pytester) -> None:
    if xdist_version() < (3, 2):
        pytest.skip("pytest-xdist < 3.2 has no --dist worksteal")
    setup(pytester, "sync", body("sync"), target=1)
    result = run(pytester, "--prob-runs=4", "--prob-concurrency=4", "--prob-json=report.json", "-n", "2",
                 "--dist", "worksteal")  # fmt: skip
    assert result.ret == 1
    assert "pytest-xdist's --dist worksteal may take queued runs back from a worker" in result.stdout.str()
    assert max(peaks(pytester)) == 1
    assert Counter(e["case"] for e in executions(pytester)) == {"a": 4, "b": 4}
    data = report(pytester)["concurrency"]
    assert data["runs"] == 0 and data["one_at_a_time"][0].startswith("every run (pytest-xdist's --dist worksteal")


def test_an_old_xdist_runs_one_at_a_time_with_a_warning(pytester: pytest.Pytester) -> None:
    """pytest-xdist before 3.5 keeps a worker's queue in a local variable: no worker can know which runs it
    will execute, so each executes them one at a time, and says why (``make test-xdist-lowest`` runs this)."""
    if xdist_version() >= (3, 5):
        pytest.skip("this pytest-xdist lets a worker see its queue")
    setup(pytester, "sync", body("sync"), target=1)
    result = run(pytester, "--prob-runs=4", "--prob-concurrency=4", "--prob-json=report.json", "-n", "2")
    assert "does not let a worker see which runs it will execute (3.5 and later do)" in result.stdout.str()
    assert max(peaks(pytester)) == 1
    assert report(pytester)["concurrency"]["runs"] == 0


def test_loadgroup_without_groups_says_why_few_runs_are_in_flight(pytester: pytest.Pytester) -> None:
    """xdist's loadgroup sends a worker runs without an xdist_group two at a time: the session says so."""
    setup(pytester, "sync", body("sync"), target=1)
    result = run(pytester, "--prob-runs=4", "--prob-concurrency=4", "-n", "2", "--dist", "loadgroup")
    assert "--prob-concurrency=4 under --dist loadgroup: xdist sends a worker its runs two at a time" in (
        result.stdout.str()
    )
