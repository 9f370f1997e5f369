"""End to end: the --prob-json report, its fields, its values, its order and how it is written."""

from __future__ import annotations

import datetime as dt
import json
import os
import platform
import re

import pytest

import pytest_probability

CONFTEST = r"""
import re
import pytest

@pytest.fixture
def n(request):
    return int(re.search(r"run(\d+)\]?$", request.node.name).group(1))
"""

BENCH = """
import pytest
from pytest_probability import record_cost, record_usage

@pytest.mark.parametrize("prompt", ["terse", "verbose"])
def bench_classify(prompt, n):
    record_usage(model="m-small", input_tokens=1000, output_tokens=10, cached_input_tokens=100 * n, cost=0.25)
    if prompt == "verbose" and n == 2:
        assert False, "wrong label"

def bench_flaky_errors(n):
    record_cost(0.5)
    if n == 1:
        raise ConnectionError("timeout")
    if n == 3:
        pytest.skip("rate limited")

def bench_always_fails():
    record_usage(model="m-large", input_tokens=2000, output_tokens=300, cost=1)
    assert 1 == 2
"""


@pytest.fixture
def project(pytester: pytest.Pytester) -> pytest.Pytester:
    pytester.makeconftest(CONFTEST)
    pytester.makepyfile(bench_x=BENCH)
    # The table of issue 2 only: interval columns belong to the statistics tests.
    pytester.makeini("[pytest]\nprob_intervals = false\n")
    return pytester


def load(path) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))


def overall(result: pytest.RunResult) -> str:
    return next(line for line in result.outlines if line.startswith("  Overall:"))


def table_rows(result: pytest.RunResult) -> list[list[str]]:
    lines = result.outlines
    start = next(i for i, line in enumerate(lines) if re.fullmatch(r"=+ probability =+", line))
    rows = []
    for line in lines[start + 1 :]:
        if not line.strip():
            break
        rows.append(re.split(r"\s{2,}", line.strip()))
    return rows


def test_every_field_and_values_consistent_with_the_table(project):
    result = project.runpytest("--prob-runs=3", "--prob-json=out/deep/report.json")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    report = load(project.path / "out" / "deep" / "report.json")

    # Other concerns (statistics, export) add sections; these are the core's.
    assert set(report) >= {
        "schema_version", "created", "created_utc", "versions", "runs", "settings", "exit_status", "totals", "rows",
        "records", "skipped_runs",
    }  # fmt: skip
    assert report["schema_version"] == 1
    # 0.3.0's created: local time, no offset, no fractions; created_utc: the same instant with its offset.
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d", report["created"])
    created = dt.datetime.fromisoformat(report["created_utc"])
    assert created.utcoffset() == dt.timedelta(0)
    assert abs(dt.datetime.now(dt.timezone.utc) - created) < dt.timedelta(minutes=5)
    assert abs(dt.datetime.fromisoformat(report["created"]) - created.astimezone().replace(tzinfo=None)) < dt.timedelta(
        seconds=2
    )
    assert report["versions"] == {
        "pytest_probability": pytest_probability.__version__,
        "pytest": pytest.__version__,
        "python": platform.python_version(),
    }
    assert report["runs"] == 3
    assert report["settings"] == {
        "runs": 3,
        "runs_from_command_line": True,
        "transpose": False,
        "delay": 0.0,
        "pattern": "bench_*.py",
        "max_cost": None,
        "max_tokens": None,
        "max_time": None,
        "retry": None,
        "span_usage": "fill",
        "prices": None,
        "prices_digest": None,
        "shard": None,
    }
    assert report["exit_status"] == 1

    assert table_rows(result) == [
        ["classify::terse", "3/3", "$0.7500"],
        ["classify::verbose", "2/3", "$0.7500", "FLAKY"],
        ["flaky_errors", "1/2", "$1.5000", "1 ERRORED", "(1 skipped)"],
        ["always_fails", "0/3", "$3.0000", "FAIL"],
    ]
    assert overall(result) == "  Overall: 6/11 passed (55%), 1 skipped"

    totals = report["totals"]
    assert totals == {
        "passes": 6,
        "fails": 4,
        "errors": 1,
        "skipped": 1,
        "count": 11,
        "pass_rate": pytest.approx(100 * 6 / 11),
        "pass_fraction": pytest.approx(6 / 11),
        "cost": pytest.approx(6.0),
        "usage": {
            "m-small": {"input_tokens": 6000, "output_tokens": 60, "cached_input_tokens": 1200, "cost": 1.5},
            "m-large": {"input_tokens": 6000, "output_tokens": 900, "cached_input_tokens": 0, "cost": 3.0},
        },
        "judge_cost": 0.0,
        "judge_usage": {},
        "rows": 4,
        "statuses": {"pass": 1, "flaky": 1, "errored": 1, "fail": 1, "error": 0, "skip": 0},
    }

    rows = report["rows"]
    assert [
        (r["case"], r["label"], r["passes"], r["fails"], r["errors"], r["skipped"], r["total"], r["status"], r["cost"])
        for r in rows
    ] == [
        ("classify::terse", "classify::terse", 3, 0, 0, 0, 3, "pass", 0.75),
        ("classify::verbose", "classify::verbose", 2, 1, 0, 0, 3, "flaky", 0.75),
        ("flaky_errors", "flaky_errors", 1, 0, 1, 1, 2, "errored", 1.5),
        ("always_fails", "always_fails", 0, 3, 0, 0, 3, "fail", 3.0),
    ]
    assert [r["pass_rate"] for r in rows] == [100.0, pytest.approx(200 / 3), 50.0, 0.0]
    assert rows[0]["usage"] == {
        "m-small": {"input_tokens": 3000, "output_tokens": 30, "cached_input_tokens": 600, "cost": 0.75}
    }
    assert rows[2]["usage"] == {}
    assert rows[0]["nodeid"] == "bench_x.py::bench_classify::terse"
    assert rows[0]["params"] == {"prompt": "terse"}
    # The table shows the same numbers as the JSON rows.
    for cells, row in zip(table_rows(result), rows, strict=False):
        assert cells[:3] == [row["label"], f"{row['passes']}/{row['total']}", f"${row['cost']:,.4f}"]

    records = report["records"]
    assert [r["nodeid"] for r in records] == [
        "bench_x.py::bench_classify::terse[run1]",
        "bench_x.py::bench_classify::terse[run2]",
        "bench_x.py::bench_classify::terse[run3]",
        "bench_x.py::bench_classify::verbose[run1]",
        "bench_x.py::bench_classify::verbose[run2]",
        "bench_x.py::bench_classify::verbose[run3]",
        "bench_x.py::bench_flaky_errors::run1",
        "bench_x.py::bench_flaky_errors::run2",
        "bench_x.py::bench_always_fails::run1",
        "bench_x.py::bench_always_fails::run2",
        "bench_x.py::bench_always_fails::run3",
    ]
    for record in records:
        assert {
            "case",
            "run",
            "nodeid",
            "outcome",
            "message",
            "error_type",
            "error_text",
            "duration",
            "cost",
            "usage",
        } <= set(record)
        assert isinstance(record["duration"], float) and record["duration"] >= 0
    assert [(r["case"], r["run"], r["outcome"]) for r in records[3:9]] == [
        ("classify::verbose", 1, "pass"),
        ("classify::verbose", 2, "fail"),
        ("classify::verbose", 3, "pass"),
        ("flaky_errors", 1, "error"),
        ("flaky_errors", 2, "pass"),
        ("always_fails", 1, "fail"),
    ]
    failed = records[4]
    assert (failed["message"], failed["error_type"], failed["cost"]) == ("wrong label", "AssertionError", 0.25)
    assert failed["error_text"].startswith("wrong label")
    assert failed["usage"] == [
        {
            "model": "m-small",
            "input_tokens": 1000,
            "output_tokens": 10,
            "cached_input_tokens": 200,
            "cost": 0.25,
            "cache_creation_input_tokens": 0,
            "reasoning_tokens": 0,
            "source": "record",
            "request_model": "",
            "priced": False,
            "role": "system",
        }
    ]
    errored = records[6]
    assert (errored["message"], errored["error_type"], errored["error_text"]) == (
        "timeout",
        "ConnectionError",
        "timeout",
    )
    assert errored["usage"] == [] and errored["cost"] == 0.5
    # As in 0.3.0, records[] holds executed runs only; a skipped run is in skipped_runs[], with its spend.
    (skipped,) = report["skipped_runs"]
    assert (skipped["nodeid"], skipped["outcome"]) == ("bench_x.py::bench_flaky_errors::run3", "skip")
    assert (skipped["message"], skipped["error_type"], skipped["cost"]) == ("rate limited", None, 0.5)
    passed = records[0]
    assert (passed["message"], passed["error_type"], passed["error_text"]) == (None, None, None)
    assert sum(r["cost"] for r in records + report["skipped_runs"]) == pytest.approx(totals["cost"])


@pytest.mark.parametrize("xdist", [[], ["-n", "2"]], ids=["serial", "xdist"])
def test_records_error_is_for_errors_only_as_in_0_3_0(project, xdist):
    """``error`` keeps its 0.3.0 meaning: an errored run's "Type: text"; null for a pass, a fail and a skip."""
    project.runpytest_subprocess("-p", "no:cacheprovider", "--prob-json=report.json", "--prob-runs=3", *xdist)
    report = load(project.path / "report.json")
    records = report["records"]
    by_outcome: dict[str, set] = {}
    for record in records + report["skipped_runs"]:
        by_outcome.setdefault(record["outcome"], set()).add(record["error"])
    assert by_outcome == {"pass": {None}, "fail": {None}, "skip": {None}, "error": {"ConnectionError: timeout"}}
    assert "skip" not in {r["outcome"] for r in records}  # 0.3.0: records[] holds executed runs
    # a fail still names its exception in error_type and error_text
    failed = next(r for r in records if r["outcome"] == "fail" and r["case"] == "always_fails")
    assert (failed["error_type"], failed["error_text"]) == ("AssertionError", "assert 1 == 2")


def test_records_sorted_by_row_then_run_not_by_arrival(project):
    result = project.runpytest("--prob-runs=2", "--prob-transpose", "--prob-json=report.json", "-v")
    arrival = [line.split(" ")[0] for line in result.outlines if line.startswith("bench_x.py::") and " " in line]
    assert arrival[:2] == ["bench_x.py::bench_classify::terse[run1]", "bench_x.py::bench_classify::verbose[run1]"]
    report = load(project.path / "report.json")
    assert [(r["case"], r["run"]) for r in report["records"]] == [
        ("classify::terse", 1),
        ("classify::terse", 2),
        ("classify::verbose", 1),
        ("classify::verbose", 2),
        ("flaky_errors", 1),
        ("flaky_errors", 2),
        ("always_fails", 1),
        ("always_fails", 2),
    ]
    assert report["settings"]["transpose"] is True


def _comparable(report: dict) -> dict:
    """A report without what legitimately differs between two sessions."""
    report = dict(report)
    for key in ("created", "created_utc", "exit_status"):
        report.pop(key)
    for key in ("records", "skipped_runs"):
        report[key] = [
            {k: v for k, v in record.items() if k not in ("duration", "elapsed", "start_time")}
            for record in report[key]
        ]
    return report


def test_under_xdist_the_report_equals_a_serial_one(project):
    serial = project.runpytest("--prob-runs=4", "--prob-json=serial.json")
    assert serial.ret == pytest.ExitCode.TESTS_FAILED
    parallel = project.runpytest_subprocess(
        "-n", "2", "--prob-runs=4", "--prob-json=parallel.json", "-p", "no:cacheprovider"
    )
    assert parallel.ret == pytest.ExitCode.TESTS_FAILED
    # Two workers ran: xdist 3.3 and later say "2 workers [N items]", 3.2 and before "gw0 [N] / gw1 [N]".
    parallel.stdout.re_match_lines([r".*(2 workers|gw0 \[\d+\] / gw1 \[\d+\])"])
    serial_report, parallel_report = load(project.path / "serial.json"), load(project.path / "parallel.json")
    assert parallel_report["exit_status"] == 1
    assert parallel_report["totals"]["count"] == 15  # no double counting
    assert len(parallel_report["records"]) == 15 and len(parallel_report["skipped_runs"]) == 1
    assert _comparable(parallel_report) == _comparable(serial_report)
    assert table_rows(parallel) == table_rows(serial)
    assert not [name for name in os.listdir(project.path) if name.endswith(".tmp")]


def test_all_pass_exit_status_zero(pytester):
    pytester.makepyfile(bench_x="def bench_ok():\n    pass\n")
    result = pytester.runpytest("--prob-runs=2", "--prob-json=report.json")
    assert result.ret == 0
    report = load(pytester.path / "report.json")
    assert report["exit_status"] == 0
    assert report["totals"]["passes"] == 2
    assert report["rows"][0]["status"] == "pass"


def test_ini_prob_json_is_used_and_the_option_wins(pytester):
    pytester.makepyfile(bench_x="def bench_ok():\n    pass\n")
    pytester.makeini("[pytest]\nprob_json = from_ini.json\n")
    pytester.runpytest("--prob-runs=2")
    assert load(pytester.path / "from_ini.json")["totals"]["count"] == 2
    (pytester.path / "from_ini.json").unlink()
    pytester.runpytest("--prob-runs=3", "--prob-json=from_option.json")
    assert not (pytester.path / "from_ini.json").exists()
    assert load(pytester.path / "from_option.json")["totals"]["count"] == 3


def test_written_atomically_replacing_an_existing_file(pytester):
    pytester.makepyfile(bench_x="def bench_ok():\n    pass\n")
    out = pytester.mkdir("out")
    (out / "report.json").write_text("not json, from an earlier session", encoding="utf-8")
    result = pytester.runpytest("--prob-runs=2", "--prob-json=out/report.json")
    assert result.ret == 0
    assert load(out / "report.json")["totals"]["count"] == 2
    assert os.listdir(out) == ["report.json"]  # no temporary file left behind
    assert oct((out / "report.json").stat().st_mode & 0o777) == oct(0o644)


SIDE_EFFECT = """
from pathlib import Path

def bench_spends_money():
    Path(__file__).with_name("ran.txt").write_text("spent")
"""


def test_a_directory_is_a_usage_error_before_any_run(pytester):
    pytester.makepyfile(bench_x=SIDE_EFFECT)
    target = pytester.mkdir("reports")
    result = pytester.runpytest("--prob-runs=3", "--prob-json=reports")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([f"ERROR: --prob-json: {target} is a directory; give a file path"])
    assert not (pytester.path / "ran.txt").exists()
    assert os.listdir(target) == []


def test_a_parent_that_cannot_be_created_is_a_usage_error_before_any_run(pytester):
    pytester.makepyfile(bench_x=SIDE_EFFECT)
    (pytester.path / "blocker").write_text("a regular file")
    result = pytester.runpytest("--prob-runs=3", "--prob-json=blocker/sub/report.json")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        [f"ERROR: --prob-json: cannot create the folder {pytester.path / 'blocker' / 'sub'}: *"]
    )
    assert not (pytester.path / "ran.txt").exists()
    assert (pytester.path / "blocker").read_text() == "a regular file"


def test_a_bad_path_under_xdist_is_a_usage_error_and_no_worker_runs_anything(pytester):
    pytester.makepyfile(bench_x=SIDE_EFFECT)
    (pytester.path / "blocker").write_text("")
    result = pytester.runpytest_subprocess("-n", "2", "--prob-runs=3", "--prob-json=blocker/report.json")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["ERROR: --prob-json: cannot create the folder *blocker*"])
    assert not (pytester.path / "ran.txt").exists()


@pytest.mark.parametrize("xdist", [[], ["-n", "2"]], ids=["serial", "xdist"])
def test_every_run_is_in_the_report_whether_or_not_a_verdict_needs_its_records(pytester, xdist):
    """The gate book keeps the records only of gated cases; the report still has every run of every case,
    and the gate is decided from its own runs."""
    pytester.makeini("[pytest]\nprob_runs = 2\n")
    pytester.makepyfile(
        bench_mixed="""
        import pytest

        @pytest.mark.parametrize("i", range(20))
        def bench_plain(i):
            assert i % 5

        @pytest.mark.probability(runs=4, min_passes=3)
        def bench_gated(request):
            assert request.node.prob_run != 2
        """
    )
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "--prob-json=report.json", *xdist)
    report = load(pytester.path / "report.json")
    runs = sorted((r["case"], r["run"]) for r in report["records"])
    assert runs == sorted(
        [*((f"plain::{i}", n) for i in range(20) for n in (1, 2)), *(("gated", n) for n in range(1, 5))]
    )
    assert [r["outcome"] for r in report["records"] if r["case"].startswith("plain::")].count("fail") == 8
    gated = next(row for row in report["rows"] if row["label"] == "gated")
    assert (gated["passes"], gated["total"]) == (3, 4)
    result.stdout.fnmatch_lines(["*Gates:*1 passed, 0 failed*", "*gated*3/4*>= 3 passes*PASS"])
    assert result.ret == 1
