"""--prob-journal: sessions killed with SIGKILL mid-run (serial, and the xdist controller under -n 2) and
started again, in subprocesses; the resumed session's report is compared with an uninterrupted one's."""

from __future__ import annotations

import fcntl
import json
import os
from functools import partial
from pathlib import Path

import pytest
import sessions
from otlp_receiver import flatten_metrics
from sessions import LATE as LATE_USAGE

XDIST = pytest.mark.parametrize("xdist", [[], ["-n", "2"]], ids=["serial", "xdist"])

# Outcomes fixed by the run number, so that two executions of the suite agree. Every run logs its node id
# (one O_APPEND write) before it does anything else; KILL_AT names the run that kills its session with
# SIGKILL, mid-run: the serial session itself, or under xdist the controller (the worker's parent) and then
# the worker. A run kills once (the marker file `killed`), so the resumed session runs it to its end.
BENCH = """
import os
import signal
import pytest
from pytest_probability import record_usage


def _mark(request):
    nodeid = request.node.nodeid
    fd = os.open("executed.txt", os.O_WRONLY | os.O_CREAT | os.O_APPEND)
    os.write(fd, (nodeid + " " + os.environ.get("PYTEST_XDIST_WORKER", "main") + "\\n").encode())
    os.close(fd)
    if nodeid.endswith(os.environ.get("KILL_AT", "-")) and not os.path.exists("killed"):
        open("killed", "w").close()
        if os.environ.get("PYTEST_XDIST_WORKER"):
            os.kill(os.getppid(), signal.SIGKILL)
        os.kill(os.getpid(), signal.SIGKILL)


@pytest.mark.probability(runs=8, min_rate=0.5)
@pytest.mark.parametrize("q", ["refund", "outage"])
def bench_triage(request, q):
    _mark(request)
    record_usage(model="m", input_tokens=100, output_tokens=10, cost=0.25)
    assert request.node.prob_run % 4 != 0 or q == "refund"


@pytest.mark.probability(runs=5)
def bench_plain(request):
    _mark(request)
    record_usage(model="m", input_tokens=1, output_tokens=1, cost=0.5)
"""
VOLATILE = ("duration", "elapsed", "start_time", "trace_id", "span_id")


pytestmark = pytest.mark.usefixtures("clean_env")
#: ``clean_env``: the benchmarks' kill switches left out too, and no ini file in the pytester folder (sessions
#: start in subfolders of it, each its own rootdir: a journal moved with its checkout keeps its node ids).
CLEAN_ENV = {"also": ("KILL_AT",), "ini": False}


session = partial(sessions.session, gate_timeout=60, options=("-p", "no:randomly"))


def load(path: Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))


def executed_by(pytester: pytest.Pytester) -> list[tuple[str, str]]:
    """(node id, process) of every run executed, in order (a process: ``main``, or the xdist worker)."""
    path = pytester.path / "executed.txt"
    lines = path.read_text().splitlines() if path.exists() else []
    return [tuple(line.split(" ")) if " " in line else (line, "main") for line in lines]  # type: ignore[misc]


def executed(pytester: pytest.Pytester) -> list[str]:
    return [nodeid for nodeid, _ in executed_by(pytester)]


def stable(report: dict) -> dict:
    records = {r["nodeid"]: {k: v for k, v in r.items() if k not in VOLATILE} for r in report["records"]}
    rows = [{k: v for k, v in row.items() if k not in VOLATILE} for row in report["rows"]]
    return {"records": records, "rows": rows, "totals": report["totals"], "gates": report.get("gates")}


def journal_lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


@XDIST
def test_a_session_killed_mid_run_resumes_to_the_uninterrupted_report(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, xdist: list[str]
) -> None:
    pytester.makepyfile(bench_x=BENCH)
    whole = session(pytester, *xdist, "--prob-json=whole.json")
    assert whole.ret == 1  # outage's gate: 6/8 passes, exact interval [35%, 97%] against 50%: UNDECIDED
    (pytester.path / "executed.txt").unlink()

    monkeypatch.setenv("KILL_AT", "outage[run3]")
    killed = session(pytester, *xdist, "--prob-journal=j.jsonl", "--prob-json=r.json")
    assert killed.ret == -9, killed.stdout.str()
    assert not (pytester.path / "r.json").exists()
    first = executed(pytester)
    lines = journal_lines(pytester.path / "j.jsonl")
    assert lines[0]["journal"] == "pytest-probability" and lines[0]["format"] == 1
    journaled = [line["record"]["nodeid"] for line in lines if "record" in line]
    assert journaled and len(journaled) == len(set(journaled))
    # Only the runs in flight at the kill are lost: the killing run; under xdist, each worker's runs after
    # its last one the controller took in (its report may still have been on the way).
    in_flight = [nodeid for nodeid in first if nodeid not in journaled]
    assert any(n.endswith("outage[run3]") for n in in_flight)
    for process in {p for _, p in executed_by(pytester)}:
        mine = [n for n, p in executed_by(pytester) if p == process]
        lost = [n in in_flight for n in mine]
        assert lost == sorted(lost), (process, mine, journaled)  # journaled runs, then lost ones
    if not xdist:
        assert len(in_flight) == 1

    monkeypatch.delenv("KILL_AT")
    resumed = session(pytester, *xdist, "--prob-journal=j.jsonl", "--prob-json=r.json", "--prob-otel-file=otlp.jsonl")
    out = resumed.stdout.str()
    assert resumed.ret == whole.ret, out
    second = executed(pytester)[len(first) :]
    assert sorted(second) == sorted(n for n in set(first + second) if n not in journaled)  # the rest, once each
    assert not set(second) & set(journaled)
    report = load(pytester.path / "r.json")
    assert stable(report) == stable(load(pytester.path / "whole.json"))
    costs = {r["nodeid"]: r["cost"] for r in report["records"]}
    assert report["journal"] == {
        "path": str(pytester.path / "j.jsonl"),
        "resumed_runs": len(journaled),
        "resumed_cost": pytest.approx(sum(costs[n] for n in journaled)),
        "resumed_tokens": sum(110 if "triage" in n else 2 for n in journaled),
        "written_runs": len(second),
        "error": None,
    }
    assert f"Journal: {len(journaled)} run(s) resumed from {pytester.path / 'j.jsonl'}, {len(second)} run now" in out
    # The journal now holds every run once; the metrics count them all, and say how many were resumed.
    again = [line["record"]["nodeid"] for line in journal_lines(pytester.path / "j.jsonl") if "record" in line]
    assert sorted(again) == sorted(costs)
    from pytest_probability.otel import otlp_json

    points = flatten_metrics(list(otlp_json.read_file(pytester.path / "otlp.jsonl")))
    total = sum(p.value for p in points if p.name == "probability.session.runs")
    assert total == len(costs) == 21
    assert next(p.value for p in points if p.name == "probability.session.resumed.runs") == len(journaled)


@XDIST
def test_a_journal_of_every_run_resumes_all_and_runs_nothing(pytester: pytest.Pytester, xdist: list[str]) -> None:
    """Every gate is then decided on records read back alone (under xdist, published when the first worker's
    collection arrives, not left to wait for runs that never come); late usage is read back too."""
    pytester.makepyfile(bench_x=BENCH, bench_threads=LATE)
    first = session(pytester, *xdist, "--prob-journal=j.jsonl", "--prob-json=first.json")
    assert first.ret == 1
    count = len(executed(pytester))
    again = session(pytester, *xdist, "--prob-journal=j.jsonl", "--prob-json=again.json")
    assert again.ret == 1, again.stdout.str()
    assert len(executed(pytester)) == count  # nothing ran again
    assert stable(load(pytester.path / "again.json")) == stable(load(pytester.path / "first.json"))
    late = {r["run"]: r["cost"] for r in load(pytester.path / "again.json")["records"] if "threads" in r["nodeid"]}
    assert late == {1: 1.25, 2: 1.0}
    again.stdout.fnmatch_lines(["*gate of triage::outage*", "*Journal: 23 run(s) resumed*, 0 run now*"])
    assert again.duration < 30  # no gate item waited for prob_gate_timeout (60 s)


#: Late usage (the first run's, recorded while the second executes), with two runs whatever --prob-runs says.
LATE = LATE_USAGE + "\nbench_threads = __import__('pytest').mark.probability(runs=2)(bench_threads)\n"


@pytest.mark.parametrize(
    ("then", "named"),
    [
        (["--prob-runs=4"], "runs: 1 in the journal, 4 now"),
        (["--prob-confidence=0.9"], "stats_config.level: 0.95 in the journal, 0.9 now"),
        (["--prob-shard=2/2"], "shard: '1/2' in the journal, '2/2' now"),
        (["-o", "prob_suite=other"], "suite: "),
    ],
    ids=["runs", "confidence", "shard", "suite"],
)
def test_a_journal_of_other_settings_is_refused_naming_the_difference(
    pytester: pytest.Pytester, then: list[str], named: str
) -> None:
    pytester.makepyfile(bench_x=BENCH)
    before = ["--prob-shard=1/2"] if "--prob-shard=2/2" in then else []
    assert session(pytester, *before, "--prob-journal=j.jsonl").ret == (0 if before else 1)  # a shard judges no gate
    count = len(executed(pytester))
    kept = (pytester.path / "j.jsonl").read_bytes()
    result = session(pytester, *then, "--prob-journal=j.jsonl")
    assert result.ret == 4
    result.stderr.fnmatch_lines(
        [f"ERROR: --prob-journal: {pytester.path / 'j.jsonl'} was written by a session with other settings ({named}*"]
    )
    assert len(executed(pytester)) == count and (pytester.path / "j.jsonl").read_bytes() == kept


@XDIST
@pytest.mark.parametrize("change", ["selection", "marker"])
def test_a_journal_of_another_suite_is_refused(pytester: pytest.Pytester, xdist: list[str], change: str) -> None:
    pytester.makepyfile(bench_x=BENCH)
    assert session(pytester, *xdist, "--prob-journal=j.jsonl").ret == 1
    count = len(executed(pytester))
    if change == "selection":
        result = session(pytester, *xdist, "--prob-journal=j.jsonl", "-k", "triage")
        expected = "*has runs of 1 case(s) this session does not select: bench_x.py::bench_plain*"
    else:
        pytester.makepyfile(bench_x=BENCH.replace("runs=5", "runs=6"))
        result = session(pytester, *xdist, "--prob-journal=j.jsonl")
        expected = "*has runs of case bench_x.py::bench_plain as it was before: it differs now in runs*"
    assert result.ret == 4, result.stdout.str()
    result.stderr.fnmatch_lines([f"ERROR: --prob-journal: {pytester.path / 'j.jsonl'} {expected}"])
    assert len(executed(pytester)) == count  # no run executed


def test_a_torn_last_line_is_dropped_and_a_corrupt_one_refused(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(bench_x=BENCH)
    assert session(pytester, "--prob-journal=j.jsonl", "-k", "plain").ret == 0
    path = pytester.path / "j.jsonl"
    whole = path.read_bytes()
    lines = whole.splitlines(keepends=True)
    # The last record cut mid-line, as a kill during its write leaves it: that run runs again.
    path.write_bytes(b"".join(lines[:-1]) + lines[-1][:40])
    (pytester.path / "executed.txt").unlink()
    result = session(pytester, "--prob-journal=j.jsonl", "-k", "plain", "--prob-json=r.json")
    assert result.ret == 0, result.stdout.str()
    assert executed(pytester) == ["bench_x.py::bench_plain::run5"]
    assert len(journal_lines(path)) == len(lines)  # the torn line was cut off before appending
    assert load(pytester.path / "r.json")["journal"]["resumed_runs"] == 4

    path.write_bytes(lines[0] + b"{not json\n" + b"".join(lines[1:]))
    result = session(pytester, "--prob-journal=j.jsonl", "-k", "plain")
    assert result.ret == 4
    result.stderr.fnmatch_lines(["ERROR: --prob-journal: * line 2 is not JSON*"])
    (pytester.path / "other.txt").write_text("hello\n")
    result = session(pytester, "--prob-journal=other.txt", "-k", "plain")
    assert result.ret == 4
    result.stderr.fnmatch_lines(["ERROR: --prob-journal: * line 1 is not JSON*"])
    assert (pytester.path / "other.txt").read_text() == "hello\n"


def test_a_journal_another_session_holds_is_refused(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(bench_x=BENCH)
    path = pytester.path / "j.jsonl"
    fd = os.open(path, os.O_WRONLY | os.O_CREAT)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        result = session(pytester, "--prob-journal=j.jsonl")
    finally:
        os.close(fd)
    assert result.ret == 4
    result.stderr.fnmatch_lines(["ERROR: --prob-journal: * is in use by another session*"])
    assert not executed(pytester)


# Runs of 0.25 each against a budget of 1.0: the budget is reached by the fourth record.
BUDGET = """
import os
import signal


def pytest_runtest_logstart(nodeid, location):
    if nodeid.endswith(os.environ.get("KILL_AT", "-")):
        os.kill(os.getpid(), signal.SIGKILL)  # before the plugin asks whether the run may start
"""


def test_a_budget_reached_by_resumed_runs_stops_every_worker(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The journal's runs spent the budget: under xdist no worker starts a run (the decision is published
    before the first worker starts), and each run is reported as not executed for the budget."""
    pytester.makeconftest(BUDGET)
    pytester.makepyfile(bench_x=BENCH)
    monkeypatch.setenv("KILL_AT", "refund[run5]")
    assert session(pytester, "--prob-journal=j.jsonl", "--prob-max-cost=1.0").ret == -9
    assert len(executed(pytester)) == 4
    monkeypatch.delenv("KILL_AT")
    result = session(pytester, "-n", "2", "--prob-journal=j.jsonl", "--prob-max-cost=1.0", "--prob-json=r.json")
    assert len(executed(pytester)) == 4, result.stdout.str()  # nothing ran
    report = load(pytester.path / "r.json")
    assert report["journal"]["resumed_runs"] == 4 and report["journal"]["resumed_cost"] == 1.0
    assert report["totals"]["count"] == 4
    result.stdout.fnmatch_lines(
        [
            "*Budget:  cost budget $1 reached: spent $1.0000*; 17 run(s) not executed",
            "*Journal: 4 run(s) resumed from *, 0 run now; not spent again: $1.0000, 440 tokens",
        ]
    )
    # Runs not executed are not journaled: a resumed session decides them again.
    assert len([line for line in journal_lines(pytester.path / "j.jsonl") if "record" in line]) == 4


SIGTERM = """
import os
import signal
import pytest


@pytest.mark.probability(runs=4)
def bench_term(request):
    fd = os.open("executed.txt", os.O_WRONLY | os.O_CREAT | os.O_APPEND)
    os.write(fd, (request.node.nodeid + "\\n").encode())
    os.close(fd)
    if request.node.prob_run == 3 and not os.path.exists("termed"):
        open("termed", "w").close()
        os.kill(os.getpid(), signal.SIGTERM)
"""


def test_a_run_interrupted_by_sigterm_is_not_journaled_and_runs_again(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(bench_t=SIGTERM)
    first = session(pytester, "--prob-journal=j.jsonl", "--prob-json=r.json")
    assert first.ret == 2
    assert load(pytester.path / "r.json")["skipped_runs"][0]["nodeid"].endswith("::run3")  # reported as a skip
    journaled = [line["record"]["nodeid"] for line in journal_lines(pytester.path / "j.jsonl") if "record" in line]
    assert [n[-4:] for n in journaled] == ["run1", "run2"]
    second = session(pytester, "--prob-journal=j.jsonl", "--prob-json=r.json")
    assert second.ret == 0
    assert [n[-4:] for n in executed(pytester)] == ["run1", "run2", "run3", "run3", "run4"]
    report = load(pytester.path / "r.json")
    assert report["totals"]["passes"] == 4 and not report.get("skipped_runs")


UNGATED = """
import os
import signal
import pytest


@pytest.mark.probability(runs=4)
def bench_ungated(request):
    fd = os.open("executed.txt", os.O_WRONLY | os.O_CREAT | os.O_APPEND)
    os.write(fd, (request.node.nodeid + "\\n").encode())
    os.close(fd)
    if request.node.prob_run == 3 and os.environ.get("KILL") and not os.path.exists("killed"):
        open("killed", "w").close()
        os.kill(os.getpid(), signal.SIGKILL)
    assert request.node.prob_run != int(os.environ.get("FAILING", "0"))
"""


@XDIST
@pytest.mark.parametrize("failing", [0, 2], ids=["all-pass", "run2-fails"])
def test_the_exit_status_counts_the_resumed_runs(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, xdist: list[str], failing: int
) -> None:
    """An ungated run that failed before the kill fails the resumed session, as it failed the session that ran
    it; and a session whose every run is resumed exits as that session would have (never 5, no tests ran)."""
    pytester.makepyfile(bench_u=UNGATED)
    monkeypatch.setenv("FAILING", str(failing))
    whole = session(pytester, *xdist)
    assert whole.ret == (1 if failing else 0)
    monkeypatch.setenv("KILL", "1")
    assert session(pytester, "--prob-journal=j.jsonl").ret == -9
    monkeypatch.delenv("KILL")
    resumed = session(pytester, *xdist, "--prob-journal=j.jsonl", "--prob-json=r.json")
    assert resumed.ret == whole.ret, resumed.stdout.str()
    assert load(pytester.path / "r.json")["exit_status"] == whole.ret
    everything = session(pytester, *xdist, "--prob-journal=j.jsonl", "--prob-json=r.json")
    assert everything.ret == whole.ret, everything.stdout.str()
    assert load(pytester.path / "r.json")["journal"]["resumed_runs"] == 4


def test_a_killed_shard_resumed_from_its_own_journal_merges_to_the_unsharded_session(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    import subprocess
    import sys

    pytester.makepyfile(bench_x=BENCH)
    assert session(pytester, "--prob-json=whole.json").ret == 1
    assert session(pytester, "--prob-shard=2/2", "--prob-journal=j2.jsonl", "--prob-json=s2.json").ret == 0
    from pytest_probability.model.case import shard_of

    key = next(r["case_key"] for r in load(pytester.path / "whole.json")["records"] if "refund" in r["nodeid"])
    run = [r for r in range(1, 9) if shard_of(key, r, 2) == 1][1]  # the second run of refund in shard 1
    monkeypatch.setenv("KILL_AT", f"refund[run{run}]")
    killed = session(pytester, "--prob-shard=1/2", "--prob-journal=j1.jsonl", "--prob-json=s1.json", "-n", "2")
    assert killed.ret == -9
    monkeypatch.delenv("KILL_AT")
    assert session(pytester, "--prob-shard=1/2", "--prob-journal=j1.jsonl", "--prob-json=s1.json", "-n", "2").ret == 0
    assert load(pytester.path / "s1.json")["journal"]["resumed_runs"] > 0
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    merged = subprocess.run(
        [sys.executable, "-m", "pytest_probability", "merge", "s1.json", "s2.json", "-o", "m.json"],
        cwd=pytester.path,
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
    )
    assert merged.returncode == 1, merged.stderr
    assert stable(load(pytester.path / "m.json")) == stable(load(pytester.path / "whole.json"))


def test_collect_only_shows_the_runs_a_resumed_session_would_run_and_writes_nothing(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytester.makepyfile(bench_u=UNGATED)
    monkeypatch.setenv("KILL", "1")
    assert session(pytester, "--prob-journal=j.jsonl").ret == -9
    monkeypatch.delenv("KILL")
    kept = (pytester.path / "j.jsonl").read_bytes()
    result = session(pytester, "--collect-only", "-q", "--prob-journal=j.jsonl", "--prob-json=r.json")
    assert result.ret == 0
    listed = [line for line in result.outlines if line.startswith("bench_u.py::")]
    assert listed == ["bench_u.py::bench_ungated::run3", "bench_u.py::bench_ungated::run4"]
    assert (pytester.path / "j.jsonl").read_bytes() == kept and not (pytester.path / "r.json").exists()


LAST_FAILED = """
import os
import signal
import pytest


@pytest.mark.probability(runs=4, min_rate=0.05)
def bench_gated(request):
    assert request.node.prob_run != 1  # 3/4 passes: the gate passes, and the failed run was xfailed


@pytest.mark.probability(runs=4, min_rate=0.9)
def bench_strict(request):
    pass  # 4/4 passes cannot show 90 %: the gate fails, and --lf reruns the case whole


@pytest.mark.probability(runs=6)
def bench_ungated(request):
    if request.node.prob_run == 4 and os.environ.get("KILL") and not os.path.exists("killed"):
        open("killed", "w").close()
        os.kill(os.getpid(), signal.SIGKILL)
    assert request.node.prob_run not in ({2} if os.environ.get("EARLIER") else {1, 3, 5})
"""


@XDIST
def test_lf_after_a_resumed_session_reruns_the_runs_that_failed_before_the_kill(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, xdist: list[str]
) -> None:
    """pytest writes ``--lf``'s cache at the session's end, which a killed session never reaches: the resumed
    session writes its resumed runs' outcomes there too, as the killed session would have."""
    pytester.makepyfile(bench_l=LAST_FAILED)

    def pytest_with_cache(*args: str) -> pytest.RunResult:
        return pytester.runpytest_subprocess("-p", "no:randomly", "-o", "prob_gate_timeout=60", *args, timeout=120)

    # An earlier night: only ungated run 2 failed; the cache says so.
    monkeypatch.setenv("EARLIER", "1")
    assert pytest_with_cache().ret == 1
    monkeypatch.delenv("EARLIER")
    # Tonight's session is killed in ungated run 4: runs 1 and 3 failed, run 2 passed, none in the cache.
    monkeypatch.setenv("KILL", "1")
    assert pytest_with_cache("--prob-journal=j.jsonl").ret == -9
    monkeypatch.delenv("KILL")
    resumed = pytest_with_cache(*xdist, "--prob-journal=j.jsonl")
    assert resumed.ret == 1, resumed.stdout.str()
    assert "Journal: 11 run(s) resumed" in resumed.stdout.str()

    rerun = pytest_with_cache("--lf", "--collect-only", "-q")
    listed = [line for line in rerun.outlines if line.startswith("bench_l.py::")]
    # Ungated runs 1 and 3 from the journal, run 5 from the resumed session; run 2 passed tonight (the
    # older failure is gone). The strict case's gate failed over its resumed runs: the case whole, as
    # after any failed gate. The gated case's failed run was xfailed under a gate that passed: not rerun.
    assert listed == [
        *(f"bench_l.py::bench_strict::run{n}" for n in range(1, 5)),
        "bench_l.py::bench_strict::gate",
        *(f"bench_l.py::bench_ungated::run{n}" for n in (1, 3, 5)),
    ], rerun.stdout.str()


# -- issue 36: corrupt records, moved checkouts, paths that are no journal -------------------------------------


def _edit_record(field: str, value: object):
    def edit(lines: list[dict]) -> list[dict]:
        record = next(line for line in lines if "record" in line)["record"]
        if value is DELETE:
            del record[field]
        else:
            record[field] = value
        return lines

    return edit


def _edit_case(field: str, value: object):
    def edit(lines: list[dict]) -> list[dict]:
        case = next(line for line in lines if "case" in line)["case"]
        if value is DELETE:
            del case[field]
        else:
            case[field] = value
        return lines

    return edit


DELETE = object()
#: what: (the journal edited, the line the refusal names, what it says of that line)
CORRUPT = {
    "outcome": (
        _edit_record("outcome", "maybe"),
        3,
        "record.outcome must be one of pass, fail, error, skip, got 'maybe'",
    ),
    "run-text": (_edit_record("run", "one"), 3, "record.run must be a whole number of at least 1, got 'one'"),
    "no-nodeid": (_edit_record("nodeid", DELETE), 3, "record.nodeid is missing"),
    "no-case": (_edit_record("case", DELETE), 3, "record.case is missing"),
    "duration": (_edit_record("duration", "fast"), 3, "record.duration must be a number of at least 0, got 'fast'"),
    "message": (_edit_record("message", None), 3, "record.message must be text, got None"),
    "usage": (
        _edit_record("usage", [{"model": "m", "input_tokens": -1}]),
        3,
        "record.usage[0].input_tokens must be a whole number of at least 0, got -1",
    ),
    "case-key": (_edit_case("key", DELETE), 2, "case.key is missing"),
    "case-runs": (_edit_case("runs", "5"), 2, "case.runs must be a whole number of at least 1, got '5'"),
    "case-marks": (_edit_case("marks", [["runs", "x"]]), 2, "case.marks[0]: probability(runs=...)"),
    "record-before-its-case": (
        lambda lines: [line for line in lines if "case" not in line],
        2,
        "record of case 'bench_x.py::bench_plain', which no line before it describes",
    ),
    "late": (
        lambda lines: [*lines, {"late": {"nodeid": 3, "usage": None, "extra_cost": 0.0}}],
        8,
        "late.nodeid must be text, not empty, got 3",
    ),
    "score": (
        _edit_record("scores", [{"name": "score", "value": "0.5"}]),
        3,
        "record.scores[0].value must be a finite number, got '0.5'",
    ),
    "late-score": (
        lambda lines: [
            *lines,
            {
                "late": {
                    "nodeid": "bench_x.py::bench_plain[run1]",
                    "usage": None,
                    "extra_cost": 0.0,
                    "scores": [{"value": 0.5}],
                }
            },
        ],
        8,
        "late.scores[0].name is missing",
    ),
    "record-not-object": (lambda lines: [*lines, {"record": 5}], 8, "record must be an object, got 5"),
}


@XDIST
@pytest.mark.parametrize("what", list(CORRUPT))
def test_a_corrupt_journal_record_is_refused_before_any_run(
    pytester: pytest.Pytester, xdist: list[str], what: str
) -> None:
    """Issue 36, defect 6: an unknown outcome was an internal error (exit 3), ``"run": "one"`` was taken in and
    failed the session at its end without a JSON report. Every entry's fields are checked when the journal is
    read, before any run: exit 4, naming the line and the field."""
    edit, number, named = CORRUPT[what]
    pytester.makepyfile(bench_x=BENCH)
    assert session(pytester, "--prob-journal=j.jsonl", "-k", "plain").ret == 0
    path = pytester.path / "j.jsonl"
    lines = edit(journal_lines(path))
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    count = len(executed(pytester))
    result = session(pytester, *xdist, "--prob-journal=j.jsonl", "-k", "plain", "--prob-json=r.json")
    assert result.ret == 4, result.stdout.str() + result.stderr.str()
    assert f"ERROR: --prob-journal: {path} line {number}: {named}" in result.stderr.str()  # (no fnmatch: [0])
    assert "INTERNALERROR" not in result.stdout.str() + result.stderr.str()
    assert "Traceback" not in result.stdout.str() + result.stderr.str()
    assert len(executed(pytester)) == count  # no run executed


PRICES = "[m]\ninput = 1.0\noutput = 2.0\n"


@XDIST
def test_a_journal_moved_with_its_checkout_resumes(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, xdist: list[str]
) -> None:
    """Issue 36, defect 5: the journal's header held the prices file's absolute path, so a journal moved with
    its checkout (a CI cache restored into another workspace) was refused (exit 4). The prices' content is
    what is compared."""
    before, after = pytester.path / "ws-1" / "proj", pytester.path / "ws-2" / "proj"
    before.mkdir(parents=True)
    (before / "bench_x.py").write_text(BENCH, encoding="utf-8")
    (before / "prices.toml").write_text(PRICES, encoding="utf-8")
    monkeypatch.chdir(before)
    whole = session(pytester, *xdist, "--prob-prices=prices.toml", "--prob-json=whole.json")
    assert whole.ret == 1
    (before / "executed.txt").unlink()
    monkeypatch.setenv("KILL_AT", "outage[run3]")
    assert session(pytester, *xdist, "--prob-prices=prices.toml", "--prob-journal=j.jsonl").ret == -9
    monkeypatch.delenv("KILL_AT")
    after.parent.mkdir()
    before.rename(after)
    monkeypatch.chdir(after)
    resumed = session(pytester, *xdist, "--prob-prices=prices.toml", "--prob-journal=j.jsonl", "--prob-json=r.json")
    assert resumed.ret == 1, resumed.stdout.str() + resumed.stderr.str()
    report = load(after / "r.json")
    assert report["journal"]["resumed_runs"] > 0
    assert stable(report) == stable(load(after / "whole.json"))
    # Other prices are other settings: refused, naming the digest.
    (after / "prices.toml").write_text(PRICES.replace("1.0", "1.5"), encoding="utf-8")
    refused = session(pytester, *xdist, "--prob-prices=prices.toml", "--prob-journal=j.jsonl")
    assert refused.ret == 4
    refused.stderr.fnmatch_lines(
        ["ERROR: --prob-journal: * was written by a session with other settings (prices_digest: 'sha256:*"]
    )


@XDIST
@pytest.mark.parametrize("kind", ["device", "fifo"])
def test_a_journal_path_that_is_no_regular_file_is_a_usage_error(
    pytester: pytest.Pytester, xdist: list[str], kind: str
) -> None:
    """Issue 36, defect 7: ``--prob-journal=/dev/full`` read the device forever (and a FIFO blocked the open)."""
    pytester.makepyfile(bench_x=BENCH)
    if kind == "device":
        path = Path("/dev/full")
    else:
        path = pytester.path / "j.fifo"
        os.mkfifo(path)
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", *xdist, f"--prob-journal={path}", timeout=60)
    assert result.ret == 4, result.stdout.str() + result.stderr.str()
    what = "a character device" if kind == "device" else "a FIFO"
    result.stderr.fnmatch_lines(
        [
            f"ERROR: --prob-journal: {path} is not a regular file ({what}); give the path of a "
            "journal, or of a file to create"
        ]
    )
    assert not executed(pytester)


@XDIST
@pytest.mark.parametrize("report", ["--prob-json", "--prob-html", "link"])
def test_a_journal_path_that_is_a_reports_path_is_refused(
    pytester: pytest.Pytester, xdist: list[str], report: str
) -> None:
    """Issue 36, defect 8: the report written at the end replaced the journal, and the same command then
    exited 4. The clash is refused at the start (also through a symlink)."""
    pytester.makepyfile(bench_x=BENCH)
    journal = "r.json"
    if report == "link":
        (pytester.path / "link.json").symlink_to("r.json")
        journal, report = "link.json", "--prob-json"
    result = session(pytester, *xdist, f"--prob-journal={journal}", f"{report}=r.json")
    assert result.ret == 4, result.stdout.str() + result.stderr.str()
    result.stderr.fnmatch_lines(
        [
            f"ERROR: --prob-journal: {pytester.path / journal} is also the {report} path "
            f"({pytester.path / 'r.json'}): one output would replace the other; give each "
            "its own path"
        ]
    )
    assert not executed(pytester)
    assert not (pytester.path / "r.json").exists()


def test_no_corrupt_journal_entry_gets_past_the_read(pytester: pytest.Pytester) -> None:
    """Issue 36, defect 6, at large: 300 journals each with a field of one entry removed or replaced by a value
    of another kind (seeded). Reading refuses each (a usage error) or what it read rebuilds into records that
    the aggregator, the analysis and the reports take; nothing else escapes."""
    import random

    from pytest_probability.aggregate.cases import aggregate
    from pytest_probability.config.settings import StatsConfig
    from pytest_probability.config.spec import Specs
    from pytest_probability.decide.analysis import analyze
    from pytest_probability.features.journal import journal_file as file
    from pytest_probability.model.case import CaseRef
    from pytest_probability.model.run import RunRecord
    from pytest_probability.report import html_report, json_report

    pytester.makepyfile(bench_x=BENCH, bench_threads=LATE)
    assert session(pytester, "--prob-journal=j.jsonl").ret == 1
    lines = journal_lines(pytester.path / "j.jsonl")
    assert {kind for line in lines for kind in line} >= {"journal", "case", "record", "late"}
    junk = [
        None,
        0,
        -1,
        1.5,
        float("nan"),
        10**30,
        "",
        "x",
        [],
        {},
        [1],
        {"a": 1},
        True,
        ["a", "b"],
        [["a"]],
        [["runs", 0]],
        [["min_passes", 99]],
    ]
    rng = random.Random(36)
    path = pytester.path / "bad.jsonl"
    for _ in range(300):
        edited = list(lines)
        i = rng.randrange(1, len(edited))
        edited[i] = _mutated(edited[i], rng, junk)
        path.write_text("".join(json.dumps(line) + "\n" for line in edited), encoding="utf-8")
        try:
            contents = file.read(path)
        except file.JournalError:
            continue
        cases = {key: CaseRef.from_dict(data) for key, data in contents.cases.items()}
        records = [RunRecord.from_dict(data, cases) for data in contents.records]
        specs = Specs(StatsConfig())
        summary = aggregate(records)
        analyze(summary, StatsConfig(), specs.of, {})
        report = json_report.build(summary, settings={}, exit_status=0)
        json_report.dumps(report)
        html_report.render(report, trace_url=None)


def _mutated(entry: dict, rng, junk: list) -> dict:
    entry = json.loads(json.dumps(entry))
    paths = []

    def walk(value: object, prefix: tuple) -> None:
        if prefix:
            paths.append(prefix)
        if isinstance(value, dict):
            for key, inner in value.items():
                walk(inner, prefix + (key,))
        elif isinstance(value, list):
            for n, inner in enumerate(value[:3]):
                walk(inner, prefix + (n,))

    walk(entry, ())
    *inner, last = rng.choice(paths)
    target = entry
    for part in inner:
        target = target[part]
    if isinstance(target, dict) and rng.random() < 0.3:
        target.pop(last, None)
    else:
        target[last] = json.loads(json.dumps(rng.choice(junk)))
    return entry
