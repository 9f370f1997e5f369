"""Unit tests of report_json.py: build, check_path and the atomic write."""

from __future__ import annotations

import datetime as dt
import json
import os
import platform

import pytest

import pytest_probability
from pytest_probability import files
from pytest_probability.aggregate.cases import aggregate
from pytest_probability.model.case import CaseRef
from pytest_probability.model.run import RunRecord, Usage
from pytest_probability.protocols import Facet
from pytest_probability.report import json_report as report_json
from pytest_probability.vocabulary import ERROR, FAIL, PASS, SKIP

SETTINGS = {"runs": 2, "runs_from_command_line": True, "transpose": False, "delay": 0.0, "pattern": "bench_*.py"}


def make_case(label: str, order: int, params=()) -> CaseRef:
    benchmark, _, case_id = label.partition("::")
    key = f"bench_x.py::bench_{benchmark}" + (f"::{case_id}" if case_id else "")
    return CaseRef(key=key, benchmark=benchmark, case=case_id, label=label, order=order, runs=2, params=params)


def rec(ref: CaseRef, run: int, outcome: str, **kw) -> RunRecord:
    return RunRecord(case=ref, run=run, nodeid=f"{ref.key}[run{run}]", outcome=outcome, **kw)


def summary():
    a = make_case("classify::pii", 0, params=(("text", "hello"),))
    b = make_case("always", 1)
    return aggregate(
        [
            rec(b, 2, SKIP, message="not today", extra_cost=0.5),
            rec(
                a,
                2,
                FAIL,
                duration=0.5,
                message="assert 1 == 2",
                error_type="AssertionError",
                error_text="assert 1 == 2",
            ),
            rec(b, 1, ERROR, phase="setup", message="setup: boom", error_type="ValueError", error_text="boom"),
            rec(a, 1, PASS, duration=0.25, usage=(Usage("m", 100, 20, 5, 0.25),), trace_id="ab" * 16, span_id="cd" * 8),
        ]
    )


def test_every_record_is_rebuilt_exactly_from_its_entry():
    """What the merge of shards needs: record_from_dict gives back the RunRecord record_dict wrote."""
    full = rec(
        make_case("full::x", 2),
        1,
        FAIL,
        duration=1.5,
        message="no",
        error_type="AssertionError",
        error_text="no",
        usage=(Usage("m", 1, 2, 0, 0.5), Usage("n", 3, 4, 1, 0.25)),
        extra_cost=0.125,
        trace_id="ef" * 16,
        span_id="01" * 8,
        start_time=1_800_000_000.25,
        retries=({"attempt": 1, "error_type": "TimeoutError", "error": "slow", "wait": 1.0},),
        transcript=({"prompt": "q", "output": "a", "truncated": {"output": 20000}},),
    )
    built = aggregate([*summary().records, full])
    report = report_json.build(built, settings=SETTINGS, exit_status=1)
    cases = {r.case.key: r.case for r in built.records}
    rebuilt = [report_json.record_from_dict(entry, cases) for entry in report["records"] + report["skipped_runs"]]
    assert sorted(rebuilt, key=lambda r: r.nodeid) == sorted(built.records, key=lambda r: r.nodeid)


def test_build_every_field():
    report = report_json.build(summary(), settings=SETTINGS, exit_status=1)
    created = report.pop("created")
    created_utc = report.pop("created_utc")
    assert report == {
        "schema_version": 1,
        "versions": {
            "pytest_probability": pytest_probability.__version__,
            "pytest": pytest.__version__,
            "python": platform.python_version(),
        },
        "runs": 2,
        "settings": SETTINGS,
        "exit_status": 1,
        "totals": {
            "passes": 1,
            "fails": 1,
            "errors": 1,
            "skipped": 1,
            "count": 3,
            "pass_rate": pytest.approx(100 / 3),
            "pass_fraction": 1 / 3,
            "cost": 0.75,
            "usage": {"m": {"input_tokens": 100, "output_tokens": 20, "cached_input_tokens": 5, "cost": 0.25}},
            "judge_cost": 0.0,
            "judge_usage": {},
            "rows": 2,
            "statuses": {"pass": 0, "flaky": 1, "errored": 0, "fail": 0, "error": 1, "skip": 0},
        },
        "rows": [
            {
                "case": "classify::pii",
                "label": "classify::pii",
                "nodeid": "bench_x.py::bench_classify::pii",
                "benchmark": "classify",
                "case_id": "pii",
                "params": {"text": "hello"},
                "passes": 1,
                "fails": 1,
                "errors": 0,
                "skipped": 0,
                "total": 2,
                "pass_rate": 50.0,
                "pass_fraction": 0.5,
                "runs": 2,
                "status": "flaky",
                "cost": 0.25,
                "usage": {"m": {"input_tokens": 100, "output_tokens": 20, "cached_input_tokens": 5, "cost": 0.25}},
                "judge_cost": 0.0,
                "judge_usage": {},
            },
            {
                "case": "always",
                "label": "always",
                "nodeid": "bench_x.py::bench_always",
                "benchmark": "always",
                "case_id": "",
                "params": {},
                "passes": 0,
                "fails": 0,
                "errors": 1,
                "skipped": 1,
                "total": 1,
                "pass_rate": 0.0,
                "pass_fraction": 0.0,
                "runs": 2,
                "status": "error",
                "cost": 0.5,
                "usage": {},
                "judge_cost": 0.0,
                "judge_usage": {},
            },
        ],
        "records": [
            {
                "case": "classify::pii",
                "case_key": "bench_x.py::bench_classify::pii",
                "run": 1,
                "nodeid": "bench_x.py::bench_classify::pii[run1]",
                "outcome": "pass",
                "phase": "call",
                "message": None,
                "error": None,
                "error_type": None,
                "error_text": None,
                "duration": 0.25,
                "elapsed": 0.25,
                "cost": 0.25,
                "judge_cost": 0.0,
                "usage": [
                    {
                        "model": "m",
                        "input_tokens": 100,
                        "output_tokens": 20,
                        "cached_input_tokens": 5,
                        "cost": 0.25,
                        "cache_creation_input_tokens": 0,
                        "reasoning_tokens": 0,
                        "source": "record",
                        "request_model": "",
                        "priced": False,
                        "role": "system",
                    }
                ],
                "trace_id": "ab" * 16,
                "span_id": "cd" * 8,
                "stopped": None,
                "attempts": 1,
                "retries": [],
                "transcript": [],
                "transcript_dropped": 0,
                "extra_cost": 0.0,
                "start_time": 0.0,
                "scores": [],
            },
            {
                "case": "classify::pii",
                "case_key": "bench_x.py::bench_classify::pii",
                "run": 2,
                "nodeid": "bench_x.py::bench_classify::pii[run2]",
                "outcome": "fail",
                "phase": "call",
                "message": "assert 1 == 2",
                "error": None,  # a fail: as in 0.3.0, "error" is for errors only
                "error_type": "AssertionError",
                "error_text": "assert 1 == 2",
                "duration": 0.5,
                "elapsed": 0.5,
                "cost": 0.0,
                "judge_cost": 0.0,
                "usage": [],
                "trace_id": None,
                "span_id": None,
                "stopped": None,
                "attempts": 1,
                "retries": [],
                "transcript": [],
                "transcript_dropped": 0,
                "extra_cost": 0.0,
                "start_time": 0.0,
                "scores": [],
            },
            {
                "case": "always",
                "case_key": "bench_x.py::bench_always",
                "run": 1,
                "nodeid": "bench_x.py::bench_always[run1]",
                "outcome": "error",
                "phase": "setup",
                "message": "setup: boom",
                "error": "ValueError: boom",
                "error_type": "ValueError",
                "error_text": "boom",
                "duration": 0.0,
                "elapsed": 0.0,
                "cost": 0.0,
                "judge_cost": 0.0,
                "usage": [],
                "trace_id": None,
                "span_id": None,
                "stopped": None,
                "attempts": 1,
                "retries": [],
                "transcript": [],
                "transcript_dropped": 0,
                "extra_cost": 0.0,
                "start_time": 0.0,
                "scores": [],
            },
        ],
        # 0.3.0: records[] holds the executed runs; a skipped run (its spend kept) is here.
        "skipped_runs": [
            {
                "case": "always",
                "case_key": "bench_x.py::bench_always",
                "run": 2,
                "nodeid": "bench_x.py::bench_always[run2]",
                "outcome": "skip",
                "phase": "call",
                "message": "not today",
                "error": None,
                "error_type": None,
                "error_text": None,
                "duration": 0.0,
                "elapsed": 0.0,
                "cost": 0.5,
                "judge_cost": 0.0,
                "usage": [],
                "trace_id": None,
                "span_id": None,
                "stopped": None,
                "attempts": 1,
                "retries": [],
                "transcript": [],
                "transcript_dropped": 0,
                "extra_cost": 0.5,
                "start_time": 0.0,
                "scores": [],
            },
        ],
    }
    parsed = dt.datetime.fromisoformat(created_utc)
    assert parsed.utcoffset() == dt.timedelta(0)
    assert abs(dt.datetime.now(dt.timezone.utc) - parsed) < dt.timedelta(minutes=5)
    # 0.3.0's created: the same instant in local time, without an offset or fractions
    local = dt.datetime.strptime(created, "%Y-%m-%dT%H:%M:%S")
    assert abs(local - parsed.astimezone().replace(tzinfo=None)) < dt.timedelta(seconds=2)


def test_build_empty_summary_has_null_rates():
    report = report_json.build(aggregate([]), settings=SETTINGS, exit_status=5)
    assert report["exit_status"] == 5
    assert report["rows"] == [] and report["records"] == []
    assert report["totals"]["count"] == 0
    assert report["totals"]["pass_rate"] is None
    assert report["totals"]["pass_fraction"] is None


def test_build_exit_status_is_a_plain_int():
    report = report_json.build(aggregate([]), settings=SETTINGS, exit_status=pytest.ExitCode.TESTS_FAILED)
    assert type(report["exit_status"]) is int and report["exit_status"] == 1
    assert json.loads(json.dumps(report))["exit_status"] == 1


class Extra(Facet):
    def row_fields(self, row):
        return {"interval": [0, row.counts.passes]}

    def report_fields(self):
        return {"otel": {"exported": 4}}


def test_build_row_fields_and_extra_sections():
    report = report_json.build(summary(), settings=SETTINGS, exit_status=0, facets=[Extra()])
    assert [row["interval"] for row in report["rows"]] == [[0, 1], [0, 0]]
    assert report["otel"] == {"exported": 4}


def test_write_is_valid_utf8_json_and_replaces_an_existing_file(tmp_path):
    path = tmp_path / "report.json"
    path.write_text("old content", encoding="utf-8")
    report = report_json.build(summary(), settings=SETTINGS, exit_status=1)
    report["note"] = "naïve ✓"
    report_json.write(path, report)
    assert json.loads(path.read_text(encoding="utf-8")) == report
    assert "naïve ✓" in path.read_text(encoding="utf-8")
    assert os.listdir(tmp_path) == ["report.json"]


def test_write_atomic_leaves_the_old_file_and_no_temp_file_on_failure(tmp_path, monkeypatch):
    path = tmp_path / "report.json"
    path.write_text("old", encoding="utf-8")

    def broken_replace(src, dst):
        raise OSError("disk full")

    monkeypatch.setattr(files.os, "replace", broken_replace)
    with pytest.raises(OSError, match="disk full"):
        files.write_atomic(path, "new")
    assert path.read_text(encoding="utf-8") == "old"
    assert os.listdir(tmp_path) == ["report.json"]


def test_check_path_accepts_a_new_file_and_creates_its_folder(tmp_path):
    path = tmp_path / "a" / "b" / "report.json"
    files.check_path(path)
    assert path.parent.is_dir()
    assert not path.exists()


def test_check_path_accepts_an_existing_file(tmp_path):
    path = tmp_path / "report.json"
    path.write_text("{}")
    files.check_path(path)


def test_check_path_rejects_a_directory(tmp_path):
    with pytest.raises(pytest.UsageError, match=r"--prob-json: .* is a directory; give a file path") as info:
        files.check_path(tmp_path)
    assert str(tmp_path) in str(info.value)


def test_check_path_rejects_a_parent_that_is_a_regular_file(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("")
    path = blocker / "sub" / "report.json"
    with pytest.raises(pytest.UsageError, match="--prob-json: cannot create the folder") as info:
        files.check_path(path)
    assert str(blocker / "sub") in str(info.value)
