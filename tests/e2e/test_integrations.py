"""End to end: pytest-xdist, pytest-rerunfailures and pytest-repeat.

xdist sessions run in a subprocess (``runpytest_subprocess``): workers are
processes of their own. Each run must be counted exactly once whatever plugin
is active.
"""

from __future__ import annotations

import json
import re

import pytest
from printed import table, table_lines


def summary_block(result: pytest.RunResult) -> list[str]:
    """Rows, Overall, Cost and Tokens lines: everything the table section prints."""
    lines = result.outlines
    start = next(i for i, line in enumerate(lines) if re.fullmatch(r"=+ probability =+", line))
    block = []
    for line in lines[start + 1 :]:
        if line.startswith("="):
            break
        block.append(line)
    return block


def node_ids(result: pytest.RunResult) -> list[str]:
    return [line.strip() for line in result.outlines if "::" in line and not line.startswith(("FAILED", "ERROR"))]


# -- xdist ------------------------------------------------------------------------

XDIST_BENCH = """
import re
import pytest
from pytest_probability import record_usage, record_cost


def run_number(request):
    return int(re.search(r"run(\\d+)\\]?$", request.node.name).group(1))


@pytest.mark.parametrize("prompt", ["terse", "chain_of_thought"])
@pytest.mark.parametrize("task", ["is_question", "identify_pii", "extract_amount"])
def bench_classify(task, prompt, request):
    n = run_number(request)
    record_usage(model="m-small" if prompt == "terse" else "m-large", input_tokens=100 + n,
                 output_tokens=10, cached_input_tokens=5 * (n % 2), cost=0.0001 * n)
    if task == "identify_pii":
        assert n % 3 != 0
    if task == "extract_amount":
        assert prompt == "terse"


def bench_errors(request):
    record_cost(0.001)
    if run_number(request) % 4 == 0:
        raise RuntimeError("provider timeout")


def bench_skips(request):
    if run_number(request) == 2:
        pytest.skip("rate limited")


class BenchTriage:
    def bench_route(self, request):
        assert run_number(request) != 5
"""

XDIST_CONFTEST = """
import json
import os


def pytest_sessionfinish(session):
    # Runs after the plugin's own sessionfinish (tryfirst) in every process.
    if hasattr(session.config, "workerinput"):
        report = session.config.rootpath / "report.json"
        with open(session.config.rootpath / f"worker-{os.getpid()}.json", "w") as handle:
            json.dump({"report_exists": report.exists()}, handle)
"""


def _comparable_records(report: dict) -> list[dict]:
    volatile = {"duration", "elapsed", "trace_id", "span_id", "start_time"}
    return [
        {k: v for k, v in record.items() if k not in volatile} for record in report["records"] + report["skipped_runs"]
    ]


def test_xdist_gives_the_serial_table_and_json_rows(pytester: pytest.Pytester) -> None:
    pytest.importorskip("xdist")
    runs = 6
    pytester.makepyfile(bench_dist=XDIST_BENCH, test_plain="def test_plain():\n    pass\n")
    pytester.makeconftest(XDIST_CONFTEST)

    serial = pytester.runpytest(f"--prob-runs={runs}", "--prob-json=serial.json", "-p", "no:xdist")
    parallel = pytester.runpytest_subprocess(f"--prob-runs={runs}", "--prob-json=report.json", "-n", "2")
    outcomes = {"passed": 42, "failed": 12, "errors": 0, "skipped": 1}
    serial.assert_outcomes(**outcomes)
    # bench_errors' RuntimeError in the call phase is reported by pytest as a failure.
    parallel.assert_outcomes(**outcomes)
    assert parallel.ret == serial.ret == pytest.ExitCode.TESTS_FAILED
    # Two workers ran: xdist 3.3 and later say "created: 2/2 workers", 3.2 and before "gw0 [N] / gw1 [N]".
    parallel.stdout.re_match_lines([r"created: 2/2 workers|gw0 \[\d+\] / gw1 \[\d+\]"])

    assert summary_block(parallel) == summary_block(serial)
    assert table_lines(parallel) == table_lines(serial)
    assert table(serial) == [
        "classify::is_question-terse 6/6 $0.0021",
        "classify::is_question-chain_of_thought 6/6 $0.0021",
        "classify::identify_pii-terse 4/6 $0.0021 FLAKY",
        "classify::identify_pii-chain_of_thought 4/6 $0.0021 FLAKY",
        "classify::extract_amount-terse 6/6 $0.0021",
        "classify::extract_amount-chain_of_thought 0/6 $0.0021 FAIL",
        "errors 5/6 $0.0060 1 ERRORED",
        "skips 5/5 $0.0000 (1 skipped)",
        "BenchTriage.route 5/6 $0.0000 FLAKY",
    ]

    serial_report = json.loads((pytester.path / "serial.json").read_text())
    report = json.loads((pytester.path / "report.json").read_text())
    assert report["rows"] == serial_report["rows"]
    assert report["totals"] == serial_report["totals"]
    assert _comparable_records(report) == _comparable_records(serial_report)
    # No double counting: every row has exactly --prob-runs records, each run once.
    assert [row["passes"] + row["fails"] + row["errors"] + row["skipped"] for row in report["rows"]] == [runs] * 9
    nodeids = [record["nodeid"] for record in report["records"] + report["skipped_runs"]]
    assert len(nodeids) == len(set(nodeids)) == 9 * runs
    assert report["totals"]["count"] + report["totals"]["skipped"] == 9 * runs

    # Workers never write the report: it did not exist when each worker finished.
    worker_notes = [json.loads(path.read_text()) for path in pytester.path.glob("worker-*.json")]
    assert len(worker_notes) == 2
    assert all(note == {"report_exists": False} for note in worker_notes)
    # ...and nothing else was left beside it (no temp files of competing writers).
    assert sorted(p.name for p in pytester.path.glob("*.json")) == sorted(
        ["report.json", "serial.json", *(p.name for p in pytester.path.glob("worker-*.json"))]
    )
    assert not list(pytester.path.glob(".report.json.*"))


# -- pytest-rerunfailures -----------------------------------------------------------

RERUN_FILES = {
    "bench_rerun": """
        import pytest
        from pathlib import Path

        def bench_deterministic(request):
            assert not request.node.name.endswith("run2")

        def bench_fails_first_time_only(request):
            marker = Path(__file__).with_name("seen-" + request.node.name)
            first = not marker.exists()
            marker.write_text("x")
            assert not first, "first attempt fails; a rerun would pass"

        @pytest.mark.flaky(reruns=5)
        def bench_marked_flaky(request):
            marker = Path(__file__).with_name("seen-marked-" + request.node.name)
            first = not marker.exists()
            marker.write_text("x")
            assert not first
        """,
    "test_normal": """
        from pathlib import Path

        def test_rerun_until_pass():
            marker = Path(__file__).with_name("seen-normal")
            first = not marker.exists()
            marker.write_text("x")
            assert not first
        """,
}


def test_rerunfailures_does_not_rerun_benchmark_runs(pytester: pytest.Pytester) -> None:
    pytest.importorskip("pytest_rerunfailures")
    pytester.makepyfile(**RERUN_FILES)
    result = pytester.runpytest("--reruns=3", "--prob-runs=3", "-rA", "--prob-json=report.json")
    # The normal test is rerun (the plugin is active) and then passes...
    result.stdout.fnmatch_lines(["PASSED test_normal.py::test_rerun_until_pass"])
    # ...but no benchmark run is: every failed run stays one failed sample.
    assert result.parseoutcomes() == {"failed": 7, "passed": 3, "rerun": 1}
    assert not [line for line in result.outlines if line.startswith("RERUN bench_")]
    assert table(result) == [
        "deterministic 2/3 FLAKY",
        "fails_first_time_only 0/3 FAIL",
        "marked_flaky 0/3 FAIL",
    ]
    report = json.loads((pytester.path / "report.json").read_text())
    assert [row["total"] for row in report["rows"]] == [3, 3, 3]
    assert len(report["records"]) == 9


# -- pytest-repeat ------------------------------------------------------------------

REPEAT_FILES = {
    "bench_rep": """
        import pytest

        @pytest.mark.parametrize("p", ["a", "b"])
        def bench_p(p):
            pass

        @pytest.mark.repeat(5)
        def bench_marked():
            pass
        """,
    "test_rep": """
        def test_normal():
            pass
        """,
}


def test_repeat_count_does_not_multiply_benchmark_runs(pytester: pytest.Pytester) -> None:
    pytest.importorskip("pytest_repeat")
    pytester.makepyfile(**REPEAT_FILES)
    result = pytester.runpytest("--count=3", "--prob-runs=2", "--collect-only", "-q")
    assert node_ids(result) == [
        "bench_rep.py::bench_p::a[run1]",
        "bench_rep.py::bench_p::a[run2]",
        "bench_rep.py::bench_p::b[run1]",
        "bench_rep.py::bench_p::b[run2]",
        "bench_rep.py::bench_marked::run1",
        "bench_rep.py::bench_marked::run2",
        "test_rep.py::test_normal[1-3]",
        "test_rep.py::test_normal[2-3]",
        "test_rep.py::test_normal[3-3]",
    ]
    result = pytester.runpytest("--count=3", "--prob-runs=2", "--prob-json=report.json")
    result.assert_outcomes(passed=9)
    assert table(result) == ["p::a 2/2", "p::b 2/2", "marked 2/2"]
    report = json.loads((pytester.path / "report.json").read_text())
    assert [(row["case_id"], row["total"]) for row in report["rows"]] == [("a", 2), ("b", 2), ("", 2)]
