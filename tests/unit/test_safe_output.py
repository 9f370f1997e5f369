"""Unit tests of what issue 12 found unsafe in the outputs: where the JSON report may be written,
strict JSON, bounded numbers, late usage, control characters and long labels in the table, and
the analysis looked up once per session rather than once per cell."""

from __future__ import annotations

import decimal
import fractions
import json
import os
import stat
import threading
import warnings
from pathlib import Path

import pytest

from pytest_probability import ProbabilityUsageWarning, files, record_cost, record_usage
from pytest_probability.aggregate.cases import aggregate
from pytest_probability.config.settings import StatsConfig
from pytest_probability.decide.analysis import analyze
from pytest_probability.model.case import CaseRef
from pytest_probability.model.run import RunRecord, Usage
from pytest_probability.report import json_report as report_json
from pytest_probability.report.terminal import render
from pytest_probability.run import context
from pytest_probability.run import recording as api
from pytest_probability.text import LABEL_WIDTH, printable, shorten
from pytest_probability.vocabulary import PASS

CASE = CaseRef(key="bench_x.py::bench_a", benchmark="a", case="", label="a", order=0, runs=1)


def summary_of(*labels: str, cost: float = 0.0):
    records = []
    for order, label in enumerate(labels):
        case = CaseRef(
            key=f"bench_x.py::bench_a::{order}", benchmark="a", case=str(order), label=label, order=order, runs=1
        )
        records.append(RunRecord(case=case, run=1, nodeid=f"{case.key}[run1]", outcome=PASS, extra_cost=cost))
    return aggregate(records)


# -- where the report goes (item 12) -------------------------------------------


def test_a_symlink_keeps_being_a_link_and_its_target_gets_the_report(tmp_path: Path) -> None:
    target = tmp_path / "real" / "report.json"
    target.parent.mkdir()
    target.write_text("old")
    link = tmp_path / "report.json"
    link.symlink_to(target)
    files.check_path(link)
    files.write_text(link, '{"new": 1}\n')
    assert link.is_symlink() and os.readlink(link) == str(target)
    assert json.loads(target.read_text()) == {"new": 1}


def test_a_dangling_symlink_creates_its_target(tmp_path: Path) -> None:
    link = tmp_path / "report.json"
    link.symlink_to(tmp_path / "made.json")
    files.write_text(link, "{}\n")
    assert link.is_symlink() and (tmp_path / "made.json").read_text() == "{}\n"


def test_a_fifo_is_written_through_not_replaced(tmp_path: Path) -> None:
    fifo = tmp_path / "report.fifo"
    os.mkfifo(fifo)
    reader = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)  # a reader is there before the write
    try:
        files.write_text(fifo, '{"through": true}\n')  # fits in the pipe's buffer
        got = os.read(reader, 65536)
    finally:
        os.close(reader)
    assert stat.S_ISFIFO(os.stat(fifo).st_mode)
    assert got == b'{"through": true}\n'


def test_a_fifo_without_a_reader_is_an_error_not_a_hang(tmp_path: Path) -> None:
    fifo = tmp_path / "report.fifo"
    os.mkfifo(fifo)
    with pytest.raises(OSError, match="FIFO that nobody is reading"):
        files.write_text(fifo, "{}\n")
    assert stat.S_ISFIFO(os.stat(fifo).st_mode)


def test_a_character_device_is_written_through(tmp_path: Path) -> None:
    before = os.stat("/dev/null")
    files.check_path(Path("/dev/null"))
    files.write_text(Path("/dev/null"), "{}\n")
    after = os.stat("/dev/null")
    assert stat.S_ISCHR(after.st_mode) and (after.st_ino, after.st_rdev) == (before.st_ino, before.st_rdev)
    assert not list(Path("/dev").glob(".null.*.tmp"))


def test_dev_stdout_redirected_to_a_file_appends_to_that_file(tmp_path: Path) -> None:
    """``/dev/fd/N`` names an open descriptor: the report goes where it points, after what is there."""
    out = tmp_path / "out.txt"
    with open(out, "w") as handle:
        handle.write("pytest output\n")
        handle.flush()
        path = Path(f"/dev/fd/{handle.fileno()}")
        files.check_path(path)
        files.write_text(path, "{}\n")
    assert out.read_text() == "pytest output\n{}\n"


def test_a_block_device_is_refused(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    path = tmp_path / "disk"
    path.write_text("precious")
    real_stat = os.stat

    def fake_stat(name, *args, **kwargs):
        result = real_stat(name, *args, **kwargs)
        if Path(name) == path:
            return os.stat_result((stat.S_IFBLK | 0o660, *tuple(result)[1:]))
        return result

    monkeypatch.setattr(os, "stat", fake_stat)
    with pytest.raises(pytest.UsageError, match="is a block device"):
        files.check_path(path)
    with pytest.raises(OSError, match="block device"):
        files.write_text(path, "{}\n")
    monkeypatch.undo()
    assert path.read_text() == "precious"


# -- strict JSON (item 13) -----------------------------------------------------


def test_the_report_is_strict_json_one_row_and_one_record_per_line() -> None:
    report = report_json.build(summary_of("a", "b"), settings={"runs": 1}, exit_status=0)
    text = report_json.dumps(report)
    assert json.loads(text) == json.loads(json.dumps(report))
    lines = text.splitlines()
    assert sum(1 for line in lines if line.startswith('    {"case": ')) == 4  # 2 rows, 2 records


def test_non_finite_numbers_are_written_as_null_never_as_infinity() -> None:
    report = {"totals": {"cost": float("inf"), "nan": float("nan")}, "rows": [{"cost": float("-inf")}]}
    text = report_json.dumps(report)
    assert "Infinity" not in text and "NaN" not in text
    assert json.loads(text, parse_constant=lambda name: pytest.fail(f"non-strict constant {name}")) == {
        "totals": {"cost": None, "nan": None},
        "rows": [{"cost": None}],
    }


# -- numbers (item 13) ---------------------------------------------------------


@pytest.fixture
def run():
    current = context.start(CASE, 1, "bench_x.py::bench_a::run1")
    try:
        yield current
    finally:
        context.finish()


@pytest.mark.parametrize(
    "value", [1e308, 10**400, fractions.Fraction(10**400), decimal.Decimal("1e400"), api.MAX_COST * 2]
)
def test_a_cost_past_the_limit_is_a_value_error_naming_the_limit(run, value) -> None:
    with pytest.raises(ValueError, match=r"record_usage\(\): cost must be at most 1e\+12 per call"):
        record_usage(model="m", cost=value)
    with pytest.raises(ValueError, match=r"record_cost\(\): amount must be at most 1e\+12 per call"):
        record_cost(value)
    assert run.usage == [] and run.extra_cost == 0


def test_the_largest_costs_sum_to_a_finite_total(run) -> None:
    for _ in range(3):
        record_usage(model="m", cost=api.MAX_COST)
    record = context.close(run)
    assert record.cost == 3 * api.MAX_COST


@pytest.mark.parametrize("value", ["sNaN", "NaN", "-sNaN", "Infinity"])
def test_a_decimal_nan_or_infinity_gives_a_readable_error(run, value) -> None:
    with pytest.raises(ValueError) as info:
        record_usage(model="m", cost=decimal.Decimal(value))
    assert str(info.value) == f"record_usage(): cost must be finite, got Decimal('{value}')"


def test_tokens_past_the_limit_are_a_value_error(run) -> None:
    with pytest.raises(ValueError, match=r"input_tokens must be at most 1,000,000,000,000 per call"):
        record_usage(model="m", input_tokens=api.MAX_TOKENS + 1)


# -- late usage (item 13) --------------------------------------------------------


def test_usage_from_a_thread_after_its_run_ended_is_charged_to_that_run_with_a_warning() -> None:
    first = context.start(CASE, 1, "bench_x.py::bench_a::run1")
    queue = context.LateQueue()  # the run stage's, every run's late_queue (RunPhases.start)
    first.late_queue = queue
    go = threading.Event()
    done = threading.Event()
    caught: list[warnings.WarningMessage] = []

    def late() -> None:
        go.wait(10)
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("always")
            record_usage(model="late", cost=0.25)
            record_cost(0.5)
        caught.extend(seen)
        done.set()

    thread = threading.Thread(target=late)
    thread.start()
    record_usage(model="on-time", cost=1.0)
    record = context.close(first)
    context.finish()
    second = context.start(CASE, 2, "bench_x.py::bench_a::run2")
    try:
        go.set()
        assert done.wait(10)
        thread.join(10)
        assert second.usage == [] and second.extra_cost == 0
        assert [u.model for u in record.usage] == ["on-time"]
        assert queue.take() == [
            {"nodeid": "bench_x.py::bench_a::run1", "usage": Usage("late", cost=0.25).to_dict(), "extra_cost": 0.0},
            {"nodeid": "bench_x.py::bench_a::run1", "usage": None, "extra_cost": 0.5},
        ]
        assert [w.category for w in caught] == [ProbabilityUsageWarning, ProbabilityUsageWarning]
        assert "after run bench_x.py::bench_a::run1 had ended" in str(caught[0].message)
    finally:
        context.finish()


def test_a_thread_pool_serves_the_run_executing_now() -> None:
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(1) as pool:
        first = context.start(CASE, 1, "bench_x.py::bench_a::run1")
        queue = context.LateQueue()  # the run stage's, every run's late_queue (RunPhases.start)
        first.late_queue = queue
        pool.submit(record_usage, model="one", cost=1.0).result(10)
        context.close(first)
        context.finish()
        second = context.start(CASE, 2, "bench_x.py::bench_a::run2")
        try:
            pool.submit(record_usage, model="two", cost=1.0).result(10)
            assert [u.model for u in second.usage] == ["two"]
            assert queue.take() == []
        finally:
            context.finish()


# -- the terminal (item 17) ------------------------------------------------------


def test_control_characters_are_escaped() -> None:
    assert printable("a\x00b\x1b[31mc\nd\te\x7f\x9b\u2028") == "a\\x00b\\x1b[31mc\\nd\\te\\x7f\\x9b\\u2028"
    assert printable("plain ünïcode … ok") == "plain ünïcode … ok"


def test_long_labels_keep_their_start_and_end() -> None:
    label = "classify::" + "x" * 5000 + "::end"
    short = shorten(label)
    assert len(short) == LABEL_WIDTH and short.startswith("classify::xx") and short.endswith("xx::end") and "…" in short
    assert shorten("short") == "short"


def test_the_table_escapes_and_shortens_labels() -> None:
    lines = [text for text, _ in render(summary_of("evil\x1b[2J\x00", "long::" + "y" * 5000))]
    assert lines[0].startswith("  evil\\x1b[2J\\x00 ")
    assert max(len(line) for line in lines) < LABEL_WIDTH + 20
    assert all("\x1b" not in line and "\x00" not in line for line in lines)


# -- scale (item 19) ------------------------------------------------------------


def test_the_analysis_is_indexed_once_not_once_per_lookup() -> None:
    summary = summary_of(*(f"c{i}" for i in range(3)))
    result = analyze(summary, StatsConfig())
    assert result.by_key is result.by_key
