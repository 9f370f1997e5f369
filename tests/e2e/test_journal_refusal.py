"""End to end: a refused journal reports nothing as resumed and writes over no report (issue 46, item 7).

A journal whose case changed since it was written (its ``score_range``) is refused at collection, exit 4.
The session used to go on to its end as if it had resumed: ``Journal: 2 run(s) resumed`` under a table of
the stale runs, and a JSON report of them over the last good one. Now it prints pytest's error alone, and
every output (the JSON and HTML reports, the CI summary, the history folder, the OTLP file) is left as it was.
"""

from __future__ import annotations

import json
import re

import pytest
from sessions import XDIST_ARGS, XDIST_IDS, session

XDIST = pytest.mark.parametrize("xdist", XDIST_ARGS, ids=XDIST_IDS)

BENCH = """
import pytest
from pytest_probability import record_score


@pytest.mark.probability(score_range=RANGE)
def bench_graded():
    record_score(0.5)
"""
OUTPUTS = {
    "report.json": "--prob-json",
    "report.html": "--prob-html",
    "summary.md": "--prob-summary",
    "otlp.jsonl": "--prob-otel-file",
}


@XDIST
def test_a_refused_journal_reports_nothing_and_replaces_no_report(
    pytester: pytest.Pytester, xdist: tuple[str, ...]
) -> None:
    pytester.makepyfile(bench_j=BENCH.replace("RANGE", "(0, 1)"))
    session(pytester, "--prob-runs=2", "--prob-journal=journal.jsonl", ret=0)
    before = {}
    for name in OUTPUTS:  # the last good night's outputs
        before[name] = f"the previous {name}\n".encode()
        (pytester.path / name).write_bytes(before[name])
    history = pytester.mkdir("nights")
    journal = (pytester.path / "journal.jsonl").read_bytes()
    pytester.makepyfile(bench_j=BENCH.replace("RANGE", "(0, 10)"))  # the case changed since
    outputs = [f"{option}={name}" for name, option in OUTPUTS.items()]
    result = session(
        pytester, *xdist, "--prob-runs=2", "--prob-journal=journal.jsonl", *outputs, "--prob-history=nights", ret=4
    )
    assert (
        "ERROR: --prob-journal: " + str(pytester.path / "journal.jsonl") + " has runs of case bench_j.py::bench_graded "
        "as it was before: it differs now in marks;"
    ) in result.stderr.str()
    out = result.stdout.str()
    assert "resumed" not in out and "Journal:" not in out and "graded" not in out, out
    assert not re.search(r"^=+ probability =+$", out, re.MULTILINE), out  # no table
    assert {name: (pytester.path / name).read_bytes() for name in OUTPUTS} == before
    assert list(history.iterdir()) == []
    assert (pytester.path / "journal.jsonl").read_bytes() == journal
    # The same journal with the suite it was written for resumes both runs, as before.
    pytester.makepyfile(bench_j=BENCH.replace("RANGE", "(0, 1)"))
    resumed = session(
        pytester, *xdist, "--prob-runs=2", "--prob-journal=journal.jsonl", "--prob-json=report.json", ret=0
    )
    resumed.stdout.fnmatch_lines(["*Journal: 2 run(s) resumed from *journal.jsonl, 0 run now*"])
    assert [r["run"] for r in json.loads((pytester.path / "report.json").read_text())["records"]] == [1, 2]
