"""End to end: what issue 12 found breaking when the plugin was tried as a new user would.

Worker crashes and SIGTERM run pytest in a subprocess (process state matters),
with and without ``-n 2``; everything that aggregates is checked under
``-n 2`` too.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from otlp_receiver import flatten_metrics, flatten_spans
from sessions import LATE, closed_port, report, section
from sessions import session as run

from pytest_probability.otel import otlp_json

XDIST = pytest.mark.parametrize("xdist", [[], ["-n", "2"]], ids=["serial", "xdist"])


pytestmark = pytest.mark.usefixtures("clean_env")


# -- item 9: a worker crash ------------------------------------------------------

CRASHING = """
import os
import pytest


@pytest.mark.parametrize("p", ["a", "b"])
def bench_crash(request, p):
    if p == "a" and request.node.prob_run == 2:
        os._exit(3)
"""


def test_a_crashed_run_is_an_errored_run_with_a_record(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(bench_crash=CRASHING)
    result = run(pytester, "-n", "2", "--prob-runs=3", "--prob-json=report.json")
    assert result.ret == 1
    data = report(pytester)
    assert len(data["records"]) == 6
    crashed = [r for r in data["records"] if r["outcome"] != "pass"]
    assert len(crashed) == 1
    record = crashed[0]
    assert (record["case"], record["run"], record["outcome"], record["error_type"]) == (
        "crash::a",
        2,
        "error",
        "WorkerCrashed",
    )
    assert record["message"].startswith("worker crashed: worker 'gw")
    assert "crashed while running 'bench_crash.py::bench_crash::a[run2]'" in record["error_text"]
    assert [(r["case"], r["passes"], r["errors"], r["status"]) for r in data["rows"]] == [
        ("crash::a", 2, 1, "errored"),
        ("crash::b", 3, 0, "pass"),
    ]
    lines = section(result)
    assert lines[0].split()[:2] == ["crash::a", "2/3"] and lines[0].endswith("1 ERRORED")


GATED_CRASH = """
import os
import pytest


@pytest.mark.probability(min_passes={need})
def bench_gated(request):
    if request.node.prob_run == 3:
        os._exit(3)
"""


@pytest.mark.parametrize(
    ("need", "errors", "ret", "verdict"),
    [
        (2, "count", 1, "PASS: 2/3 passes, need 2: PASS"),
        (3, "count", 1, "FAIL: 2/3 passes, need 3: FAIL"),
        (2, "exclude", 0, "PASS: 2/2 passes, need 2: PASS"),
    ],
)
def test_a_crashed_gated_run_decides_its_gate_at_once(
    pytester: pytest.Pytester, need: int, errors: str, ret: int, verdict: str
) -> None:
    """The last run crashes its worker: the gate item gets its verdict, not prob_gate_timeout. A crash is
    an errored run: it fails the session as an error does (0.3.0's prob_errors = count), unless
    prob_errors = exclude leaves it out of the gate (then it is xfailed)."""
    pytester.makepyfile(bench_gated=GATED_CRASH.format(need=need))
    result = run(
        pytester,
        "-n",
        "2",
        "--prob-runs=3",
        "--prob-json=report.json",
        "-o",
        "prob_gate_timeout=600",
        "-o",
        f"prob_errors={errors}",
        "-rA",
    )
    assert result.ret == ret
    out = result.stdout.str()
    assert "no verdict within" not in out
    if errors == "exclude":
        # pytest 9 names where the crash was ("at ??? of"), pytest 8 does not
        assert re.search(
            r"XFAIL (at \?\?\? of )?bench_gated\.py::bench_gated::run3 - probability gate, error excluded: "
            r"WorkerCrashed: worker crashed",
            out,
        ), out
    else:
        assert "FAILED bench_gated.py::bench_gated::run3" in out
    row = report(pytester)["rows"][0]
    assert (row["passes"], row["errors"], row["verdict"]) == (2, 1, "fail" if verdict.startswith("FAIL") else "pass")
    if verdict.startswith("FAIL"):
        assert f"gate of gated: {verdict}" in out
    else:
        assert "PASSED bench_gated.py::bench_gated::gate" in out


EARLY_CRASH = """
import os
import pytest


@pytest.mark.probability(min_passes=5)
def bench_gated(request):
    if request.node.prob_run == 1:
        os._exit(3)
"""


@pytest.mark.parametrize(("undecided", "ret"), [("fail", 1), ("pass", 0)])
def test_runs_a_crash_rescheduled_give_their_gate_undecided_at_once(
    pytester: pytest.Pytester, undecided: str, ret: int
) -> None:
    """The first run crashes its worker with more runs of its case queued behind it: xdist hands those to
    the other workers, where the gate item cannot wait for them, so the gate is UNDECIDED now, and says why.
    Every output shows that one verdict, the one the exit status follows (issue 23, item 1): 39/40 would
    pass, but the table, the JSON and the gauge say UNDECIDED, which counts as prob_undecided says (the
    crashed run itself is left out of the gate by prob_errors = exclude, so the gate alone decides)."""
    pytester.makepyfile(bench_gated=EARLY_CRASH)
    started = time.monotonic()
    result = run(
        pytester,
        "-n",
        "2",
        "--prob-runs=40",
        "--prob-json=report.json",
        "-o",
        "prob_gate_timeout=600",
        "-o",
        f"prob_undecided={undecided}",
        "-o",
        "prob_errors=exclude",
        "-rA",
        "--prob-otel-file=otel.jsonl",
        timeout=120,
    )
    elapsed = time.monotonic() - started
    out = result.stdout.str()
    assert result.ret == ret, out
    assert "no verdict within" not in out
    assert "UNDECIDED: a worker crash rescheduled" in out
    assert "gate item of gated: UNDECIDED: a worker crash rescheduled" in out  # the note under the table
    assert ("PASSED" if ret == 0 else "FAILED") + " bench_gated.py::bench_gated::gate" in out
    data = report(pytester)
    row = data["rows"][0]
    assert (row["runs"], row["passes"], row["errors"]) == (40, 39, 1)  # the runs still execute and count
    assert row["verdict"] == "undecided" and row["gate"]["verdict"] == "undecided", row
    assert row["gate"]["rescheduled_by_crash"] >= 1
    assert data["exit_status"] == ret
    gates = [line for line in section(result) if line.strip().startswith("gated ")]
    assert len(gates) == 2, section(result)  # the table's row and the Gates line
    assert re.search(
        r"UNDECIDED \(1 errored left out; a worker crash rescheduled \d+ run\(s\) past its gate item\)$", gates[1]
    ), gates
    assert "Gates:   0 passed, 0 failed, 1 undecided" in out
    points = flatten_metrics(list(otlp_json.read_file(pytester.path / "otel.jsonl")))
    verdicts = [point.value for point in points if point.name == "probability.case.gate.verdict"]
    assert verdicts == [0], verdicts  # 0: undecided
    assert elapsed < 100, elapsed  # not prob_gate_timeout


SETUP_CRASH = """
import os
import pytest


@pytest.fixture
def client(request):
    if request.node.prob_case.case == "a":
        os._exit(3)  # in the setup of the case's only run, before the worker reports it
    return object()


@pytest.mark.probability(min_passes=1)
@pytest.mark.parametrize("p", [pytest.param("a", marks=pytest.mark.probability(runs=1)), "b"])
def bench_setup(client, p):
    pass
"""


def test_a_crash_in_the_setup_of_a_cases_first_run_has_a_record(pytester: pytest.Pytester) -> None:
    """Issue 23, item 17: the controller learned a case from its first run's setup report on a worker,
    which a worker dying in that setup never sends; the worker announces the case before the run."""
    pytester.makepyfile(bench_setup=SETUP_CRASH)
    result = run(pytester, "-n", "2", "--prob-json=report.json", "-o", "prob_runs=3", "-rA", timeout=120)
    assert result.ret == 1, result.stdout.str()
    data = report(pytester)
    crashed = [r for r in data["records"] if r["error_type"] == "WorkerCrashed"]
    assert [(r["nodeid"], r["phase"], r["outcome"]) for r in crashed] == [
        ("bench_setup.py::bench_setup::a", "setup", "error")
    ], data["records"]
    assert crashed[0]["message"].startswith("setup: worker crashed: worker 'gw")
    rows = {row["case"]: row for row in data["rows"]}
    assert (rows["setup::a"]["runs"], rows["setup::a"]["passes"], rows["setup::a"]["errors"]) == (1, 0, 1)
    assert rows["setup::a"]["gate"]["min_passes"] == 1  # the whole case, marks included
    assert rows["setup::a"]["verdict"] == "fail"
    assert "FAILED bench_setup.py::bench_setup::a[gate]" in result.stdout.str()
    assert len(data["records"]) == 4


# -- item 10: SIGTERM --------------------------------------------------------------

SLOW = """
import pathlib
import time
from pytest_probability import record_cost


def bench_slow(request):
    record_cost(0.5)
    if request.node.prob_run >= 3:
        pathlib.Path("started-%d" % request.node.prob_run).write_text("x")
        time.sleep(60)
"""


# The aggregating process (serial, or the xdist controller) leaves a file per teardown report it has taken
# in. The plugin takes a record in before any other plugin's hook sees the report, and holds a SIGTERM
# that comes meanwhile, so a file here means the run's record is in. Under xdist the progress dot alone
# does not: it comes with the call report, and the record travels on the teardown report after it.
TAKEN = """
import os
import pathlib


def pytest_runtest_logreport(report):
    if report.when == "teardown" and "PYTEST_XDIST_WORKER" not in os.environ:
        pathlib.Path("taken-" + report.nodeid.rsplit("run", 1)[-1]).write_text(report.nodeid)
"""


def sigterm_after_two_runs(pytester: pytest.Pytester, *args: str) -> tuple[int, str]:
    """Run SLOW, send SIGTERM once two runs have been taken in and a third sleeps; (exit status, output)."""
    return sigterm_when(
        pytester,
        SLOW,
        lambda dots, taken, path: dots >= 2 and taken == ["taken-1", "taken-2"] and bool(list(path.glob("started-*"))),
        *args,
    )


def sigterm_when(
    pytester: pytest.Pytester, bench: str, ready: Callable[[int, list[str], Path], bool], *args: str
) -> tuple[int, str]:
    """Run ``bench`` for 6 runs, send SIGTERM once ``ready(dots shown, taken-N files, path)``; (exit status,
    output)."""
    pytester.makepyfile(bench_slow=bench)
    pytester.makeconftest(TAKEN)
    command = [
        sys.executable,
        "-m",
        "pytest",
        "-p",
        "no:cacheprovider",
        "--prob-runs=6",
        "--prob-json=report.json",
        *args,
    ]
    process = subprocess.Popen(command, cwd=pytester.path, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    assert process.stdout is not None
    seen = b""
    try:
        os.set_blocking(process.stdout.fileno(), False)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and process.poll() is None:
            seen += process.stdout.read() or b""
            # The progress dots follow the collection line: "N items" (or "2 workers [N items]" under
            # xdist 3.3 and later, "gw0 [N] / gw1 [N]" under xdist 3.2 and before).
            header = re.search(rb" items|gw1 \[\d+\]", seen)
            progress = seen[header.end() :] if header else b""
            taken = sorted(p.name for p in pytester.path.glob("taken-*"))
            if ready(progress.count(b"."), taken, pytester.path):
                break
            time.sleep(0.02)
        assert ready(progress.count(b"."), taken, pytester.path), (taken, seen.decode(errors="replace"))
        process.send_signal(signal.SIGTERM)
        os.set_blocking(process.stdout.fileno(), True)
        rest, _ = process.communicate(timeout=60)
        out = (seen + rest).decode(errors="replace")
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()
    return process.returncode, out


@XDIST
def test_sigterm_ends_the_session_like_ctrl_c(pytester: pytest.Pytester, xdist: list[str]) -> None:
    returncode, out = sigterm_after_two_runs(pytester, *xdist, "--prob-otel-file=otel.jsonl")
    assert returncode == pytest.ExitCode.INTERRUPTED, out
    assert "KeyboardInterrupt" in out and "SIGTERM" in out
    assert "== probability ==" in out.replace("=" * 10, "==")
    data = report(pytester)
    done = len(data["records"])
    assert done == 2  # runs 1 and 2 finish; 3 to 6 are interrupted
    assert data["exit_status"] == pytest.ExitCode.INTERRUPTED
    # The run the signal interrupted is in every output with one outcome (issue 23, item 2): a skip
    # that says why, in skipped_runs[] and on its span; its spend counts.
    # Under xdist the controller stops its workers at once: the interrupted run's worker ships
    # neither its span nor its record, so the run is in no output.
    interrupted = [r for r in data["skipped_runs"] if r["message"] == "interrupted: KeyboardInterrupt"]
    expected = [] if xdist else ["bench_slow.py::bench_slow::run3"]
    assert [r["nodeid"] for r in interrupted] == expected, data["skipped_runs"]
    assert data["totals"]["cost"] == pytest.approx(0.5 * (done + len(interrupted)))
    decoded = list(otlp_json.read_file(pytester.path / "otel.jsonl"))
    assert {kind for kind, _ in decoded} == {"traces", "metrics"}
    spans = flatten_spans(decoded)
    assert [s.name for s in spans].count("probability.session") == 1
    runs = {s.attributes["pytest.nodeid"]: s for s in spans if s.name != "probability.session"}
    assert sorted(runs) == sorted(r["nodeid"] for r in data["records"] + interrupted)
    assert all("probability.outcome" in s.attributes for s in runs.values()), runs
    for stopped in (runs[r["nodeid"]] for r in interrupted):
        assert stopped.attributes["probability.outcome"] == "skip"
        assert stopped.attributes["probability.skip.reason"] == "interrupted: KeyboardInterrupt"


# Run 2's teardown takes 0.7 s (less than the controller's 2 s wait), after its call report (its dot) has gone to the xdist controller:
# its record, on the teardown report, is still on the way when SIGTERM comes.
SLOW_TEARDOWN = (
    SLOW
    + """

import pytest


@pytest.fixture(autouse=True)
def slow_teardown(request):
    yield
    if request.node.prob_run == 2:
        pathlib.Path("tearing-2").write_text("x")
        time.sleep(0.7)
"""
)


def test_sigterm_under_xdist_waits_for_the_record_of_a_run_it_showed(pytester: pytest.Pytester) -> None:
    """Every run pytest showed as finished is in the report, also under xdist, where the record comes on
    the teardown report after the outcome was shown: the controller waits for it (at most 2 s) before
    xdist stops the workers."""
    when: list[list[str]] = []

    def ready(dots: int, taken: list[str], path: Path) -> bool:
        when.append(taken)
        return dots >= 2 and (path / "tearing-2").exists()

    returncode, out = sigterm_when(pytester, SLOW_TEARDOWN, ready, "-n", "2", "--junitxml=junit.xml")
    assert when[-1] == ["taken-1"], when[-1]  # SIGTERM came with run 2 torn down, shown, its record not taken in
    assert returncode == pytest.ExitCode.INTERRUPTED, out
    data = report(pytester)
    assert sorted(r["nodeid"] for r in data["records"]) == [
        "bench_slow.py::bench_slow::run1",
        "bench_slow.py::bench_slow::run2",
    ], out
    assert data["totals"]["cost"] == pytest.approx(1.0)
    # The late teardown report is the one xdist would have handed on: one <testcase> per run in JUnit XML.
    import xml.etree.ElementTree as ET

    # (The run SIGTERM interrupted, its setup reported and nothing after, is junitxml's nameless entry.)
    cases = [case.get("name") for case in ET.parse(pytester.path / "junit.xml").iter("testcase") if case.get("name")]
    assert sorted(cases) == ["run1", "run2"], cases


def test_sigterm_with_the_endpoint_down_spills_what_it_could_not_send(pytester: pytest.Pytester) -> None:
    """SIGTERM while the collector is down: within the export timeout, the finished runs' spans, the session
    span and the metrics are spilled for replay, as after Ctrl-C."""
    from otlp_receiver import flatten_metrics

    port = closed_port()
    started = time.monotonic()
    returncode, out = sigterm_after_two_runs(
        pytester,
        f"--prob-otel-endpoint=http://127.0.0.1:{port}",
        "--prob-otel-protocol=http/protobuf",
        "--prob-otel-timeout=2",
    )
    elapsed = time.monotonic() - started
    assert returncode == pytest.ExitCode.INTERRUPTED, out
    assert len(report(pytester)["records"]) == 2
    (spill,) = sorted((pytester.path / ".pytest-probability").glob("otel-spill-*.jsonl"))
    assert f"kept in {spill}" in out and "replay: python -m pytest_probability.otel replay" in out
    decoded = list(otlp_json.read_file(spill))
    names = [s.name for s in flatten_spans(decoded)]
    assert names.count("probability.session") == 1
    assert 2 <= len(names) - 1 <= 3  # the two finished runs; the interrupted one may have its span too
    assert "probability.runs" in {p.name for p in flatten_metrics(decoded)}
    assert elapsed < 50, elapsed  # bounded by the export timeout, not by the sleeping run (60 s)


# -- item 11: a session without runs keeps a good report ------------------------------


@pytest.mark.parametrize(
    ("args", "ret"),
    [
        (["--collect-only"], 0),
        (["-k", "nomatch"], 5),
        (["missing_folder/"], 4),
        (["bench_broken.py"], 2),
    ],
    ids=["collect-only", "k-nomatch", "missing-path", "collection-error"],
)
def test_a_session_without_runs_never_replaces_a_good_report(
    pytester: pytest.Pytester, args: list[str], ret: int
) -> None:
    pytester.makepyfile(bench_good="def bench_ok():\n    pass\n")
    reports = ("--prob-json=report.json", "--prob-html=report.html")
    first = run(pytester, "--prob-runs=2", *reports, "bench_good.py")
    assert first.ret == 0
    good = (pytester.path / "report.json").read_text()
    assert len(json.loads(good)["records"]) == 2
    page = (pytester.path / "report.html").read_text()
    if "bench_broken.py" in args:
        pytester.makepyfile(bench_broken="def bench_broken(:\n")
    second = run(pytester, "--prob-runs=2", *reports, *args)
    assert second.ret == ret
    assert (pytester.path / "report.json").read_text() == good
    assert (pytester.path / "report.html").read_text() == page
    out = second.stdout.str()
    for name in ("report.json", "report.html"):
        assert f"no benchmark run was executed: {pytester.path / name} was left as it was" in out


def test_a_session_without_runs_writes_no_report(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(bench_good="def bench_ok():\n    pass\n")
    assert run(pytester, "--prob-json=report.json", "-k", "nomatch").ret == 5
    assert not (pytester.path / "report.json").exists()


# -- item 12: where --prob-json points ---------------------------------------------------


def _page_of(path: Path) -> bool:
    return path.read_text().startswith("<!DOCTYPE html>") and "bench_ok" in path.read_text()


@XDIST
@pytest.mark.parametrize(
    ("option", "written"),
    [
        ("--prob-json", lambda path: len(json.loads(path.read_text())["records"]) == 2),
        ("--prob-html", _page_of),  # the HTML report is written as the JSON one is
    ],
    ids=["json", "html"],
)
def test_a_symlinked_report_path_keeps_the_link(pytester: pytest.Pytester, xdist: list[str], option, written) -> None:
    pytester.makepyfile(bench_good="def bench_ok():\n    pass\n")
    (pytester.path / "reports").mkdir()
    target = pytester.path / "reports" / "latest"
    target.write_text("{}")
    (pytester.path / "report").symlink_to("reports/latest")
    assert run(pytester, *xdist, "--prob-runs=2", f"{option}=report").ret == 0
    assert (pytester.path / "report").is_symlink()
    assert written(target)


def test_an_html_report_to_a_fifo_is_written_through(pytester: pytest.Pytester) -> None:
    """A FIFO (as /dev/stdout can be in CI) is written into, not replaced by a regular file."""
    import threading

    pytester.makepyfile(bench_good="def bench_ok():\n    pass\n")
    fifo = pytester.path / "page.fifo"
    os.mkfifo(fifo)
    received: list[bytes] = []

    def read() -> None:
        with open(fifo, "rb") as handle:  # blocks until the writer opens it
            received.append(handle.read())

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    try:
        assert run(pytester, "--prob-runs=2", f"--prob-html={fifo}").ret == 0
    finally:
        if reader.is_alive():  # the plugin never opened it: unblock the reader
            with open(fifo, "wb"):
                pass
        reader.join(10)
    assert fifo.is_fifo()
    assert received and received[0].startswith(b"<!DOCTYPE html>")


def test_a_report_to_a_descriptor_goes_where_it_points(pytester: pytest.Pytester) -> None:
    """``--prob-json=/dev/fd/1`` with stdout redirected to a file: the report follows pytest's output."""
    pytester.makepyfile(bench_good="def bench_ok():\n    pass\n")
    out = pytester.path / "out.txt"
    with open(out, "w") as handle:
        completed = subprocess.run(
            [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", "--prob-runs=2", "--prob-json=/dev/fd/1"],
            cwd=pytester.path,
            stdout=handle,
            stderr=subprocess.STDOUT,
            timeout=90,
        )
    assert completed.returncode == 0
    text = out.read_text()
    start = text.index('{\n  "schema_version"')
    report_text = text[start : text.index("\n}\n", start) + 3]
    assert len(json.loads(report_text)["records"]) == 2
    assert "2 passed" in text


# -- item 13: numbers ------------------------------------------------------------------------


@XDIST
def test_usage_from_a_thread_after_its_run_is_charged_to_that_run(pytester: pytest.Pytester, xdist: list[str]) -> None:
    pytester.makepyfile(bench_threads=LATE)
    result = run(pytester, *xdist, "--prob-runs=2", "--prob-json=report.json", "-W", "always")
    assert result.ret == 0
    records = {r["run"]: r for r in report(pytester)["records"]}
    assert [u["model"] for u in records[1]["usage"]] == ["on-time", "late"]
    assert records[1]["cost"] == 1.25
    assert [u["model"] for u in records[2]["usage"]] == ["on-time"]
    assert records[2]["cost"] == 1.0
    out = result.stdout.str()
    assert "1 record_usage()/record_cost() call(s) came after their run had ended" in out
    if not xdist:  # a worker's warnings reach the controller only from items
        assert "ProbabilityUsageWarning" in out and "after run bench_threads.py::bench_threads::run1 had ended" in out


HUGE_COST = """
import decimal
from pytest_probability import record_usage


def bench_huge():
    record_usage(model="m", cost=1e11)
    record_usage(model="m", cost=1e308)


def bench_snan():
    record_usage(model="m", cost=decimal.Decimal("sNaN"))
"""


@XDIST
def test_costs_stay_finite_and_the_report_is_strict_json(pytester: pytest.Pytester, xdist: list[str]) -> None:
    pytester.makepyfile(bench_numbers=HUGE_COST)
    result = run(pytester, *xdist, "--prob-json=report.json")
    assert result.ret == 1
    text = (pytester.path / "report.json").read_text()
    data = json.loads(text, parse_constant=lambda name: pytest.fail(f"not strict JSON: {name}"))
    messages = {r["case"]: r["message"] for r in data["records"]}
    assert messages == {
        "huge": "record_usage(): cost must be at most 1e+12 per call, got 1e+308",
        "snan": "record_usage(): cost must be finite, got Decimal('sNaN')",
    }
    assert data["totals"]["cost"] == 1e11
    assert "  Cost:    $100,000,000,000.0000" in section(result)
    assert "$inf" not in result.stdout.str()


# -- item 17: the terminal -------------------------------------------------------------------


def test_control_characters_are_never_printed(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        bench_noisy="""
def bench_ok():
    pass


def teardown():
    raise ValueError("gRPC said \\x00\\x00\\x1b[2J\\x07 and more")
"""
    )
    result = run(pytester)
    out = result.stdout.str()
    assert "teardown() of" in out and "gRPC said \\x00\\x00\\x1b[2J\\x07 and more" in out
    assert "\x00" not in out and "\x1b[2J" not in out and "\x07" not in out


@XDIST
def test_a_long_label_is_shortened_in_the_table_and_kept_whole_in_the_report(
    pytester: pytest.Pytester, xdist: list[str]
) -> None:
    case_id = "q" * 2500 + "MIDDLE" + "z" * 2500
    pytester.makepyfile(
        bench_long=f"""
import pytest


@pytest.mark.parametrize("x", [1, 2], ids=["{case_id}", "short"])
def bench_long(x):
    pass
"""
    )
    result = run(pytester, *xdist, "--prob-json=report.json")
    assert result.ret == 0
    lines = section(result)
    assert max(len(line) for line in lines) < 120
    assert lines[0].lstrip().startswith("long::qqq") and "…" in lines[0] and "zzz" in lines[0]
    assert [row["label"] for row in report(pytester)["rows"]] == [f"long::{case_id}", "long::short"]


# -- item 18: absurd totals -------------------------------------------------------------------


def test_absurd_runs_are_a_usage_error_naming_the_total(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(bench_one="def bench_ok():\n    pass\n")
    result = run(pytester, "--prob-runs=1000000000", timeout=60)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert (
        "--prob-runs=1000000000 asks for at least 1,000,000,000 runs (cases × runs), more than the limit of 1,000,000"
        in result.stderr.str()
    )


@XDIST
def test_runs_times_cases_past_the_limit_stop_collection(pytester: pytest.Pytester, xdist: list[str]) -> None:
    pytester.makepyfile(
        bench_many="""
import pytest


@pytest.mark.parametrize("i", range(3))
def bench_many(i):
    pass
"""
    )
    result = run(pytester, *xdist, "--prob-runs=4", "-o", "prob_max_runs=10")
    # A collection error interrupts a serial session; under xdist it is a failure.
    assert result.ret == (pytest.ExitCode.TESTS_FAILED if xdist else pytest.ExitCode.INTERRUPTED)
    assert (
        "4 runs of bench_many.py::bench_many::2 bring the session to 12 runs (cases × runs), more than the limit of 10"
        in result.stdout.str()
    )
    assert run(pytester, *xdist, "--prob-runs=3", "-o", "prob_max_runs=9").ret == 0


def test_make_demo_exits_0_and_says_the_failures_are_on_purpose(tmp_path: Path) -> None:
    """Issue 36: the demo's examples fail on purpose, and make ended with its alarming 'Error 1 (ignored)'."""
    root = Path(__file__).resolve().parents[2]
    if not (root / "Makefile").is_file() or subprocess.run(["make", "--version"], capture_output=True).returncode:
        pytest.skip("needs the source tree and make")
    done = subprocess.run(
        ["make", "-C", str(root), "-o", ".venv/.installed", "demo", f"PY={sys.executable}", f"DEMO_OUT={tmp_path}"],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    output = done.stdout + done.stderr
    assert done.returncode == 0, output
    assert "Error" not in output and "ignored" not in output
    lines = output.splitlines()
    assert (
        "The examples include failing cases on purpose: the session's exit status was 1 (some tests failed)." in lines
    )
    assert (tmp_path / "report.json").is_file() and (tmp_path / "report.html").is_file()
