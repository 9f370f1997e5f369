"""End to end: files given as reports that are no reports are refused, naming the file, with the documented
exit status (issue 46, items 3 and 4).

``diff``'s exit status 1 means "a drop" under ``--fail-on-drop``, so a report it cannot read must be 2, never
a traceback's 1, and never read as empty (every case "removed", exit 0). A session's ``--prob-baseline`` or a
report in its ``--prob-history`` folder that cannot be read is a usage error before any run (4), never an
INTERNALERROR (3). These tests pin the status and the message (the file, and the field where there is one):
they guard the typed report reader that will replace today's.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from sessions import XDIST_ARGS, XDIST_IDS, command, session

XDIST = pytest.mark.parametrize("xdist", XDIST_ARGS, ids=XDIST_IDS)

#: A report as ``--prob-json`` writes its rows, the least ``diff`` and a baseline read.
GOOD = {"rows": [{"case": "a::x", "nodeid": "bench_a.py::bench_a::x", "benchmark": "a", "passes": 3, "total": 4}]}

#: Files that are no report, by what is wrong, and what the message says of it (after the file's name).
BAD: dict[str, tuple[bytes, str]] = {
    "binary": (bytes(range(256)), " is not UTF-8 text (byte 128)"),
    "nested": (b"[" * 100_000 + b"]" * 100_000, " is not JSON (it nests too deeply)"),
    "huge-passes": (
        b'{"rows": [{"case": "a::x", "nodeid": "bench_a.py::bench_a::x", "passes": 1e400, "total": 4}]}',
        ": row 'a::x' has no valid 'passes' (got inf)",
    ),
    "list-passes": (
        b'{"rows": [{"case": "a::x", "nodeid": "bench_a.py::bench_a::x", "passes": [1], "total": 4}]}',
        ": row 'a::x' has no valid 'passes' (got [1])",
    ),
    "no-rows": (b'{"rows": 1}', " is not a --prob-json report (no 'rows' list)"),
}
#: What NEW is read for beyond a baseline's rows: its rows as the session's (a row that is no object was left
#: out, so its case was "removed", exit 0), their cost, its cases and its stats_config. As BASE, the same file
#: is read as a baseline: its exit status then.
NEW_ONLY: dict[str, tuple[bytes, str, int]] = {
    "row-not-an-object": (b'{"rows": [1]}', ": rows[0] is not a row with a 'case' label (got 1)", 2),
    "huge-cost": (
        b'{"rows": [{"case": "a::x", "passes": 1, "total": 4, "cost": 1' + b"0" * 400 + b"}]}",
        ": row 'a::x' has no valid 'cost' (got 1000",
        0,  # a baseline's cost that is no finite number is left out, as before
    ),
    "bad-case": (
        b'{"rows": [{"case": "a::x", "nodeid": "k", "passes": 1, "total": 4}], "cases": [{"key": "k"}]}',
        ": cases[0].benchmark is missing",
        0,  # a baseline's cases are not read
    ),
    "bad-stats": (
        b'{"rows": [{"case": "a::x", "passes": 1, "total": 4}], "stats_config": {"level": 2}}',
        ": stats_config.method is missing",
        0,  # nor its stats_config (NEW's applies)
    ),
}


def write(folder: Path, name: str, data: bytes | dict) -> str:
    (folder / name).write_bytes(data if isinstance(data, bytes) else json.dumps(data).encode())
    return name


def refused(result, status: int, *says: str) -> None:  # type: ignore[no-untyped-def]
    output = result.stdout + result.stderr
    assert result.returncode == status, output
    assert "Traceback" not in output
    for text in says:
        assert text in result.stderr, result.stderr


@pytest.mark.parametrize("bad", sorted(BAD))
@pytest.mark.parametrize("side", ["base", "new"])
def test_diff_refuses_a_file_that_is_no_report_with_exit_2_naming_it(
    pytester: pytest.Pytester, bad: str, side: str
) -> None:
    data, says = BAD[bad]
    good = write(pytester.path, "good.json", GOOD)
    wrong = write(pytester.path, f"{bad}.json", data)
    base, new = (wrong, good) if side == "base" else (good, wrong)
    result = command(pytester, "diff", base, new, "--fail-on-drop", "--format=json")
    refused(result, 2, f"error: diff: {wrong}" if side == "new" else "error: ", f"{wrong}{says}")
    assert result.stdout == ""


@pytest.mark.parametrize("bad", sorted(NEW_ONLY))
def test_diff_reads_new_as_strictly_as_base(pytester: pytest.Pytester, bad: str) -> None:
    data, says, as_base = NEW_ONLY[bad]
    good = write(pytester.path, "good.json", GOOD)
    wrong = write(pytester.path, f"{bad}.json", data)
    refused(command(pytester, "diff", good, wrong, "--fail-on-drop"), 2, f"error: diff: {wrong}{says}")
    base = command(pytester, "diff", wrong, good)
    assert base.returncode == as_base, base.stderr


def test_diff_of_two_good_reports_still_compares(pytester: pytest.Pytester) -> None:
    good = write(pytester.path, "good.json", GOOD)
    result = command(pytester, "diff", good, good, "--fail-on-drop", "--format=json")
    assert result.returncode == 0, result.stderr
    assert [case["case"] for case in json.loads(result.stdout)["cases"]] == ["a::x"]


BENCH = """
from pathlib import Path

def bench_never():
    Path("ran").write_text("a run executed")
"""


@XDIST
@pytest.mark.parametrize("bad", ["binary", "nested"])
def test_a_baseline_that_is_no_report_is_a_usage_error_before_any_run(
    pytester: pytest.Pytester, xdist: tuple[str, ...], bad: str
) -> None:
    pytester.makepyfile(bench_a=BENCH)
    wrong = write(pytester.path, f"{bad}.json", BAD[bad][0])
    result = session(pytester, *xdist, f"--prob-baseline={wrong}", "--prob-json=report.json", ret=4)
    assert f"ERROR: --prob-baseline: {pytester.path / wrong}{BAD[bad][1]}" in result.stderr.str()
    assert "INTERNALERROR" not in result.stdout.str() + result.stderr.str()
    assert not (pytester.path / "ran").exists() and not (pytester.path / "report.json").exists()


@XDIST
@pytest.mark.parametrize("bad", ["binary", "nested"])
def test_a_history_report_that_is_no_report_is_a_usage_error_before_any_run(
    pytester: pytest.Pytester, xdist: tuple[str, ...], bad: str
) -> None:
    pytester.makepyfile(bench_a=BENCH)
    history = pytester.mkdir("nights")
    name = "prob-report-20261201T000000.000000Z-1.json"
    write(history, name, BAD[bad][0])
    result = session(pytester, *xdist, "--prob-history=nights", ret=4)
    assert f"ERROR: --prob-history: {history / name}{BAD[bad][1]}" in result.stderr.str()
    assert "INTERNALERROR" not in result.stdout.str() + result.stderr.str()
    assert not (pytester.path / "ran").exists()
    assert [p.name for p in history.iterdir()] == [name]  # no report added to the folder


@pytest.mark.parametrize("bad", ["binary", "nested"])
def test_the_merge_refuses_a_shard_report_that_is_no_json_naming_it(pytester: pytest.Pytester, bad: str) -> None:
    wrong = write(pytester.path, f"{bad}.json", BAD[bad][0])
    refused(command(pytester, "merge", wrong, "-o", "merged.json"), 2, f"error: {wrong}{BAD[bad][1]}")
    assert not (pytester.path / "merged.json").exists()
