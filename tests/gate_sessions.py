"""Pieces shared by the end-to-end tests of gates (tests/e2e/test_gates.py and test_gate_*.py): the
benchmark files, the gates section they print, and reading a session's verdicts."""

from __future__ import annotations

import re
from functools import partial

import pytest
from sessions import ANSI, report, section, session

# solid: 20/20 vs 0.8 -> [83%, 100%] PASS; broken: 3/10 vs 0.9 -> [7%, 65%] FAIL;
# mixed::unsure: 7/10 vs 0.5 -> [35%, 93%] UNDECIDED; mixed::free: ungated;
# count: 4/5, need 4 -> PASS.
GATES = """
import pytest


@pytest.mark.probability(runs=20, min_rate=0.8)
def bench_solid(n):
    pass


@pytest.mark.probability(runs=10, min_rate=0.9)
def bench_broken(n):
    assert n <= 3


@pytest.mark.probability(runs=10)
@pytest.mark.parametrize("case", [pytest.param("unsure", marks=pytest.mark.probability(min_rate=0.5)), "free"])
def bench_mixed(case, n):
    assert n not in (2, 5, 9)


@pytest.mark.probability(runs=5, min_passes=4)
def bench_count(n):
    assert n != 3
"""

GATES_SECTION = [
    "  Gates:   2 passed, 1 failed, 1 undecided (undecided counts as fail)",
    "    solid          20/20  [83%, 100%]  >= 80%       PASS",
    "    broken          3/10  [ 7%,  65%]  >= 90%       FAIL",
    "    mixed::unsure   7/10  [35%,  93%]  >= 50%       UNDECIDED",
    "    count            4/5  [28%,  99%]  >= 4 passes  PASS",
]

# Every gate passes although runs fail: 18/20 with min_passes=18.
PASSING_GATE = """
import pytest


@pytest.mark.probability(runs=20, min_passes=18)
def bench_good_enough(n):
    assert n not in (7, 13)


def bench_plain():
    pass
"""


XDIST = [pytest.param([], id="serial"), pytest.param(["-n", "2"], id="xdist")]


def plain(result: pytest.RunResult) -> list[str]:
    return [ANSI.sub("", line) for line in result.outlines]


def gates_section(result: pytest.RunResult) -> list[str]:
    lines = section(result)
    start = next(i for i, line in enumerate(lines) if line.startswith("  Gates:"))
    end = next((i for i in range(start, len(lines)) if not lines[i].strip()), len(lines))
    return lines[start:end]


def verbose_outcomes(result: pytest.RunResult) -> dict[str, str]:
    """node id -> PASSED/FAILED/XFAIL/... from ``-v`` lines, serial or xdist."""
    outcomes: dict[str, str] = {}
    for line in plain(result):
        serial = re.match(r"^(\S+::\S+) (PASSED|FAILED|XFAIL|XPASS|SKIPPED|ERROR)\b", line)
        dist = re.match(r"^\[gw\d+\] \[\s*\d+%\] (PASSED|FAILED|XFAIL|XPASS|SKIPPED|ERROR) (\S+::\S+)", line)
        if serial:
            outcomes[serial.group(1)] = serial.group(2)
        elif dist:
            outcomes[dist.group(2)] = dist.group(1)
    return outcomes


#: A gate session in a subprocess: a gate item waits 30 s at most for its verdict.
subprocess_run = partial(session, gate_timeout=30, timeout=60)


def check_gates_session(result: pytest.RunResult, pytester: pytest.Pytester) -> None:
    """What the GATES session shows, serial or under xdist."""
    outcomes = verbose_outcomes(result)
    assert outcomes["bench_x.py::bench_solid::gate"] == "PASSED"
    assert outcomes["bench_x.py::bench_broken::gate"] == "FAILED"
    assert outcomes["bench_x.py::bench_mixed::unsure[gate]"] == "FAILED"
    assert outcomes["bench_x.py::bench_count::gate"] == "PASSED"
    assert not any("free[gate]" in nodeid for nodeid in outcomes)
    # gated failing runs are xfailed; ungated ones fail
    assert sorted(k for k, v in outcomes.items() if v == "XFAIL") == sorted(
        [
            *(f"bench_x.py::bench_broken::run{i}" for i in range(4, 11)),
            *(f"bench_x.py::bench_mixed::unsure[run{i}]" for i in (2, 5, 9)),
            "bench_x.py::bench_count::run3",
        ]
    )
    assert sorted(k for k, v in outcomes.items() if v == "FAILED") == sorted(
        [
            "bench_x.py::bench_broken::gate",
            "bench_x.py::bench_mixed::unsure[gate]",
            *(f"bench_x.py::bench_mixed::free[run{i}]" for i in (2, 5, 9)),
        ]
    )
    assert len(outcomes) == 20 + 10 + 20 + 5 + 4  # runs and four gate items
    assert gates_section(result) == GATES_SECTION
    result.assert_outcomes(passed=20 + 3 + 7 + 7 + 4 + 2, failed=5, xfailed=11)
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    data = report(pytester)
    assert data["gates"] == {"passed": 2, "failed": 1, "undecided": 1, "skipped": 0}
    assert data["exit_status"] == 1
    rows = {row["label"]: row for row in data["rows"]}
    assert {label: row["verdict"] for label, row in rows.items()} == {
        "solid": "pass",
        "broken": "fail",
        "mixed::unsure": "undecided",
        "mixed::free": None,
        "count": "pass",
    }
    assert (rows["broken"]["passes"], rows["broken"]["fails"]) == (3, 7)  # xfailed runs still count as fails
