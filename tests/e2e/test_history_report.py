"""End to end: ``python -m pytest_probability report`` over three saved sessions of a --prob-history folder,
over a folder that holds other JSON files too (skipped, each with a note), and over every malformed shape of
a report (fuzzed: never a traceback)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from browser import dump_dom, parse

BENCH = """
import pytest
from pytest_probability import record_cost

PASSES = {passes}


@pytest.mark.parametrize("c", ["steady", "drops"])
def bench_t(c, n):
    record_cost(0.01 * {session})
    assert c == "steady" or n <= PASSES
"""


@pytest.fixture
def history(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> pytest.Pytester:
    for name in list(os.environ):
        if name.startswith(("OTEL_", "PYTEST_XDIST", "PYTEST_ADDOPTS")):
            monkeypatch.delenv(name, raising=False)
    from sessions import CONFTEST

    pytester.makeconftest(CONFTEST)
    pytester.makeini("[pytest]\n")
    for session, passes in enumerate((8, 8, 1), start=1):
        pytester.makepyfile(bench_h=BENCH.format(passes=passes, session=session))
        result = pytester.runpytest_subprocess(
            "-p", "no:cacheprovider", "--prob-runs=8", "--prob-history=hist", timeout=120
        )
        assert result.ret in (0, 1), result.stdout.str()
    assert len(list((pytester.path / "hist").glob("*.json"))) == 3
    return pytester


def build(pytester: pytest.Pytester, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pytest_probability", "report", *args],
        cwd=pytester.path,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_history_from_three_sessions(history: pytest.Pytester) -> None:
    done = build(history, "hist", "-o", "out/history.html")
    assert done.returncode == 0, done.stderr
    assert "wrote out/history.html (3 sessions)" in done.stdout
    page = (history.path / "out" / "history.html").read_text(encoding="utf-8")
    assert page.count('data-chart="history"') == 2  # one per case
    assert page.count('class="band"') == 2 and page.count('class="fraction"') == 2
    # The third session's drop is a baseline FAIL, marked on the drops case's chart.
    verdicts = re.findall(r'data-verdict="(\w*)"', page)
    assert "fail" in verdicts
    drops = page[page.index('<figure data-case="t::drops">') :]
    assert 'data-verdict="fail"' in drops[: drops.index("</figure>")]
    # Spend over sessions: one bar per session.
    spend = page[page.index('data-chart="spend"') :]
    assert spend[: spend.index("</svg>")].count('class="bar"') == 3
    # The case that changed most comes first: drops went from 100% to 12%.
    changed = page[page.index('id="changed"') :]
    assert changed.index("t::drops") < changed.index("t::steady")
    assert "-88%" in changed
    # The newest session in full, with its failed runs.
    assert 'data-chart="pass-fraction"' in page and page.count('class="run"') == 7
    dom, log = dump_dom(history.path / "out" / "history.html")
    root = parse(dom).body
    assert root.get("data-ready") == "1" and "data-errors" not in root and "data-blocked" not in root
    # trends, spend, a state strip per case; newest session: fraction, cost, baseline difference
    assert root["data-charts"] == str(2 + 1 + 2 + 1 + 1 + 1)


def test_bad_input_is_an_error(history: pytest.Pytester) -> None:
    (history.path / "junk.json").write_text(json.dumps({"no": "rows"}), encoding="utf-8")
    done = build(history, "junk.json")
    assert done.returncode == 2 and "not a pytest-probability JSON report" in done.stderr
    done = build(history, "missing")
    assert done.returncode == 2 and "missing: no such file or folder" in done.stderr


def test_the_output_path_is_written_as_the_session_reports_are(history: pytest.Pytester) -> None:
    """-o follows a symlink to its target (the link stays), and an unwritable path is an error, not a traceback."""
    (history.path / "site").mkdir()
    target = history.path / "site" / "history.html"
    target.write_text("old page", encoding="utf-8")
    (history.path / "latest.html").symlink_to("site/history.html")
    done = build(history, "hist", "-o", "latest.html")
    assert done.returncode == 0, done.stderr
    assert (history.path / "latest.html").is_symlink()
    assert target.read_text(encoding="utf-8").startswith("<!DOCTYPE html>")
    (history.path / "a_file").write_text("", encoding="utf-8")
    done = build(history, "hist", "-o", "a_file/history.html")
    assert done.returncode == 2 and "error: cannot write a_file/history.html" in done.stderr
    assert "Traceback" not in done.stderr


@pytest.mark.parametrize(("command", "output"), [("report", "out.html"), ("merge", "out.json")])
def test_a_bad_trace_url_names_the_commands_own_option(pytester: pytest.Pytester, command: str, output: str) -> None:
    """Issue 36, defect 13: the message named the ini key prob_trace_url, which these commands do not read."""
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest_probability",
            command,
            "a.json",
            "-o",
            output,
            "--trace-url",
            "http://jaeger/trace/",
        ],
        cwd=pytester.path,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 2
    assert (
        done.stderr == "error: --trace-url must be an http(s) URL containing {trace_id}, got 'http://jaeger/trace/'\n"
    )
    assert not (pytester.path / output).exists()


# -- a history folder holding other JSON files (issue 36, defect 12) ------------------------------

#: Files a history folder may hold besides reports, with what the note says is wrong in each.
NOT_REPORTS = {
    "table.json": ('{"columns": ["a", "b"], "rows": [[1, 2]]}', "rows[0] must be an object, got [1, 2]"),
    "totals.json": (
        '{"rows": [{"label": "t::a", "pass_fraction": 0.5}], "totals": [1, 2]}',
        "totals must be an object, got [1, 2]",
    ),
    "ci.json": (
        '{"rows": [{"label": "t::a", "pass_fraction": 0.5, "ci": [0.1, 0.9]}]}',
        "rows[0].ci must be an object, got [0.1, 0.9]",
    ),
    "fraction.json": (
        '{"rows": [{"label": "t::a", "pass_fraction": "50%"}]}',
        "rows[0].pass_fraction must be a number, got '50%'",
    ),
    "huge.json": (
        '{"rows": [{"label": "t::a", "pass_fraction": 1' + "0" * 400 + "}]}",
        "rows[0].pass_fraction must be a number, got an integer of 401 digits",
    ),
    "package.json": ('{"name": "site", "version": "1.0.0"}', "no 'rows'"),
    "broken.json": ('{"rows": [', "not a readable JSON report"),
    "digits.json": ('{"rows": [], "n": 1' + "0" * 5000 + "}", "not a readable JSON report"),
}


@pytest.fixture
def mixed(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> pytest.Pytester:
    """A --prob-history folder of one session's report and other JSON files."""
    for name in list(os.environ):
        if name.startswith(("OTEL_", "PYTEST_XDIST", "PYTEST_ADDOPTS")):
            monkeypatch.delenv(name, raising=False)
    from sessions import CONFTEST

    pytester.makeconftest(CONFTEST)
    pytester.makepyfile(bench_h=BENCH.format(passes=3, session=1))
    result = pytester.runpytest_subprocess(
        "-p", "no:cacheprovider", "--prob-runs=4", "--prob-history=hist", timeout=120
    )
    assert result.ret == 1, result.stdout.str()
    for name, (text, _) in NOT_REPORTS.items():
        (pytester.path / "hist" / name).write_text(text, encoding="utf-8")
    return pytester


def test_a_folders_files_that_are_not_reports_are_skipped_with_a_note_each(mixed: pytest.Pytester) -> None:
    done = build(mixed, "hist", "-o", "history.html")
    assert "Traceback" not in done.stderr
    assert done.returncode == 0, done.stderr
    assert done.stdout == f"wrote history.html (1 session; {len(NOT_REPORTS)} files skipped)\n"
    notes = done.stderr.splitlines()
    assert len(notes) == len(NOT_REPORTS), notes
    for name, (_, problem) in NOT_REPORTS.items():
        (note,) = [line for line in notes if line.startswith(f"note: skipped hist/{name}: ")]
        assert problem in note
    page = (mixed.path / "history.html").read_text(encoding="utf-8")
    assert page.count('data-chart="history"') == 2


@pytest.mark.parametrize("name", sorted(NOT_REPORTS))
def test_a_file_named_that_is_not_a_report_is_refused(mixed: pytest.Pytester, name: str) -> None:
    (report,) = sorted(p.relative_to(mixed.path) for p in (mixed.path / "hist").glob("prob-report-*.json"))
    done = build(mixed, str(report), f"hist/{name}", "-o", "history.html")
    assert "Traceback" not in done.stderr
    assert done.returncode == 2
    (line,) = done.stderr.splitlines()
    assert line.startswith(f"error: hist/{name}: not a") and NOT_REPORTS[name][1] in line
    assert not (mixed.path / "history.html").exists()


def test_a_folder_without_a_report_is_an_error(mixed: pytest.Pytester) -> None:
    for report in (mixed.path / "hist").glob("prob-report-*.json"):
        report.unlink()
    done = build(mixed, "hist", "-o", "history.html")
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert done.stderr.splitlines()[-1] == "error: no reports to show"
    assert len(done.stderr.splitlines()) == len(NOT_REPORTS) + 1


#: A report holding every field the history page reads (every field the one reader of reports reads), its
#: newest session's sections included (html_report.sections), each of the type the JSON report writes it with.
FULL = {
    "created": "2026-12-01T09:00:00",
    "created_utc": "2026-12-01T09:00:00+00:00",
    "exit_status": 1,
    "versions": {"pytest_probability": "0.4.0"},
    "settings": {"shard": None},
    "merged": {"shards": 2},
    "cases": [{"key": "b.py::bench_t[ok]", "benchmark": "t", "case": "ok"}],
    "stats_config": {"level": 0.95},
    "quarantine": {"cases": 1, "failing": 0, "expired": []},
    "totals": {
        "passes": 13,
        "count": 20,
        "pass_fraction": 0.65,
        "rows": 3,
        "cost": 2.5,
        "statuses": {"pass": 1, "flaky": 1, "errored": 1},
        "usage": {"m-small": {"input_tokens": 100, "output_tokens": 20}},
    },
    "rows": [
        {
            "label": "t::ok",
            "case": "t::ok",
            "nodeid": "b.py::bench_t[ok]",
            "passes": 10,
            "total": 10,
            "pass_fraction": 1.0,
            "pass_rate": 100.0,
            "ci": {"low": 0.69, "high": 1.0},
            "status": "pass",
            "cost": 0.5,
            "gate": {"rule": "count", "min_passes": 8, "verdict": "pass"},
            "verdict": "pass",
            "stopped": None,
            "history": {"state": "fixed", "since": "2026-11-30", "first_flaky": "2026-11-20"},
            "benchmark": "t",
            "case_id": "ok",
            "params": {"p": "ok"},
            "fails": 0,
            "errors": 0,
            "skipped": 0,
            "runs": 10,
            "source": {"path": "b.py", "line": 3},
            "quarantine": {"owner": "@me", "until": "2027-01-01", "failing": False},
        },
        {
            "label": "t::b",
            "case": "t::b",
            "nodeid": "b.py::bench_t[b]",
            "passes": 3,
            "total": 10,
            "pass_fraction": 0.3,
            "pass_rate": 30.0,
            "ci": {"low": 0.07, "high": 0.65, "method": "exact", "level": 0.95},
            "status": "flaky",
            "cost": 2.0,
            "gate": {
                "rule": "rate",
                "min_rate": 0.9,
                "confidence": 0.95,
                "passes": 3,
                "total": 10,
                "low": 0.07,
                "high": 0.65,
                "verdict": "fail",
            },
            "stopped": {"reason": "FAIL decided after 10 of 20 runs (curtail)"},
            "history": {"changed": True, "nights": 4, "flake_rate": {"low": 0.1, "high": 0.5}},
            "scores": {
                "judge": {
                    "n": 2,
                    "mean": 0.4,
                    "sd": 0.1,
                    "ci": {"low": 0.1, "high": 0.8, "method": "betting", "level": 0.95},
                    "threshold": 0.5,
                    "below": 1,
                    "min_score": 0.5,
                    "gate": {
                        "min_score": 0.5,
                        "confidence": 0.95,
                        "n": 2,
                        "mean": 0.4,
                        "low": 0.1,
                        "high": 0.8,
                        "verdict": "undecided",
                    },
                }
            },
        },
    ],
    "records": [
        {
            "case": "t::b",
            "case_key": "b.py::bench_t[b]",
            "nodeid": "b.py::bench_t[b][run1]",
            "run": 1,
            "outcome": "fail",
            "phase": "call",
            "error": "AssertionError: no",
            "message": "no",
            "trace_id": "a" * 32,
            "span_id": "b" * 16,
            "transcript_dropped": 2,
            "transcript": [{"prompt": "p1", "output": "o…", "truncated": {"output": 20000}}],
            "scores": [{"name": "judge", "value": 0.3, "threshold": 0.5, "explanation": "off topic"}],
        },
        {"case": "t::b", "run": 2, "outcome": "error", "phase": "setup", "message": "setup: boom"},
    ],
    "stopping": {"mode": "curtail", "active": True, "cases_stopped": 1, "runs_saved": 10, "runs_executed": 30},
    "budget": {
        "reason": "cost budget $5 reached",
        "runs_not_executed": 4,
        "runs_after_reached": 2,
        "spent_after_reached": 0.25,
    },
    "concurrency": {
        "limit": 4,
        "processes": 1,
        "runs": 8,
        "mean_in_flight": 3.5,
        "peak_in_flight": 4,
        "call_seconds": 4.0,
        "wall_seconds": 1.2,
        "ideal_seconds": 1.0,
        "wall_over_ideal": 1.2,
        "faults": 1,
        "window_cuts": 1,
        "one_at_a_time": ["bench_a.py::bench_sync (a sync benchmark)"],
        "finished_unreported": 0,
        "cancelled": 0,
        "in_flight_seconds": 4.0,
        "busy_seconds": 1.15,
    },
    "gates": {"passed": 1, "failed": 1, "undecided": 0, "skipped": 0},
    "states": {
        "changes": {"flaky": ["t::b"]},
        "counts": {"flaky": 1},
        "nights_read": 3,
        "rule": {
            "window": 14,
            "flaky_bar": 0.95,
            "failing_bar": 0.5,
            "broken_runs": 10,
            "fixed_nights": 3,
            "method": "exact",
            "confidence": 0.95,
        },
    },
    "baseline": {
        "paired": 2,
        "adjustment": "holm",
        "verdicts": {"pass": 1, "fail": 1, "undecided": 0},
        "score_verdicts": {"pass": 0, "fail": 1, "undecided": 0},
        "comparisons": [
            {
                "kind": "baseline",
                "function": "t",
                "arm": "current",
                "baseline": "baseline",
                "axis": None,
                "pairs": 2,
                "difference": -0.2,
                "ci": {"low": -0.5, "high": 0.1, "method": "sign-flip", "level": 0.95},
                "p_adjusted": 0.25,
                "verdict": "fail",
                "suppressed": None,
                "margin": 0.05,
                "cost_ratio": 1.1,
                "inputs": [
                    {
                        "nodeid": "b.py::bench_t[b]",
                        "input": "t::b",
                        "baseline": {"passes": 9, "total": 10},
                        "arm": {"passes": 3, "total": 10},
                        "difference": -0.6,
                        "ci": {"low": -0.9, "high": -0.2, "method": "newcombe", "level": 0.99},
                        "p_adjusted": 0.01,
                        "verdict": "fail",
                        "note": "",
                    }
                ],
                "scores": [
                    {
                        "name": "judge",
                        "range": [0.0, 1.0],
                        "pairs": 1,
                        "difference": -0.3,
                        "ci": {"low": -0.5, "high": -0.1, "method": "paired-bootstrap", "level": 0.95},
                        "p_adjusted": 0.02,
                        "margin": 0.05,
                        "verdict": "fail",
                        "suppressed": None,
                        "inputs": [
                            {
                                "nodeid": "b.py::bench_t[b]",
                                "input": "t::b",
                                "baseline": {"n": 10, "mean": 0.7},
                                "arm": {"n": 10, "mean": 0.4},
                                "difference": -0.3,
                                "ci": {"low": -0.6, "high": -0.05, "method": "mover-betting", "level": 0.99},
                                "p_adjusted": 0.01,
                                "verdict": "fail",
                                "note": "",
                            }
                        ],
                    }
                ],
            }
        ],
    },
    "comparisons": [
        {
            "kind": "compare",
            "function": "t",
            "arm": "cot",
            "baseline": "terse",
            "axis": "style",
            "pairs": 3,
            "difference": -0.2,
            "ci": {"low": -0.5, "high": 0.1, "method": "sign-flip", "level": 0.95},
            "p_adjusted": 0.25,
            "verdict": "undecided",
            "suppressed": "fewer than 10 paired inputs",
            "margin": 0.05,
            "cost_ratio": 1.8,
            "inputs": [
                {
                    "input": "q1",
                    "nodeid": None,
                    "baseline": {"passes": 4, "total": 5},
                    "arm": {"passes": 3, "total": 5},
                    "difference": -0.2,
                    "ci": {"low": -0.6, "high": 0.3, "method": "newcombe", "level": 0.98},
                    "p_adjusted": 1.0,
                    "verdict": "undecided",
                    "note": "",
                }
            ],
            "scores": [
                {
                    "name": "judge",
                    "range": [0.0, 10.0],
                    "pairs": 3,
                    "difference": -1.5,
                    "ci": {"low": -3.0, "high": 0.5, "method": "paired-bootstrap", "level": 0.95},
                    "p_adjusted": 0.3,
                    "margin": 0.05,
                    "verdict": "undecided",
                    "suppressed": None,
                    "inputs": [
                        {
                            "input": "q1",
                            "nodeid": None,
                            "baseline": {"n": 4, "mean": 7.5},
                            "arm": {"n": 4, "mean": 6.0},
                            "difference": -1.5,
                            "ci": {"low": -4.0, "high": 1.0, "method": "mover-betting", "level": 0.99},
                            "p_adjusted": 0.5,
                            "verdict": "undecided",
                            "note": "",
                        }
                    ],
                }
            ],
        }
    ],
}
#: 0.3.0's shapes: rows named by case with a percent, the baseline's comparisons at the top level (0.4.0's
#: development), no pass_fraction.
OLD = {
    "created": "2026-10-08T19:24:03",
    "totals": {"passes": 1, "count": 2, "cost": 0.0},
    "rows": [
        {
            "case": "t::a",
            "pass_rate": 50.0,
            "passes": 1,
            "total": 2,
            "count": 2,
            "status": "flaky",
            "ci": {"low": 0.01, "high": 0.99},
            "gate": None,
            "cost": 0.0,
        }
    ],
    "comparisons": [
        {"kind": "baseline", "function": "t", "inputs": [{"nodeid": "", "input": "t::a", "verdict": "pass"}]}
    ],
    "baseline": None,
    "records": [],
}
JUNK = [
    None,
    True,
    0,
    -1,
    2**70,
    10**400,
    1.5,
    float("nan"),
    float("inf"),
    "",
    "x",
    "<script>alert(1)</script>",
    [],
    [1, 2],
    ["x"],
    [{}],
    {},
    {"a": 1},
    {"low": "x", "high": []},
]


class Read(dict):
    """A report's object that writes down each key read off it (``rows[].ci.low``)."""

    def __init__(self, value: dict, path: str, seen: set[str]) -> None:
        super().__init__({k: _traced(v, f"{path}.{k}".lstrip("."), seen) for k, v in value.items()})
        self.path, self.seen = path, seen

    def _saw(self, key: object) -> None:
        self.seen.add(f"{self.path}.{key}".lstrip("."))

    def get(self, key, default=None):
        self._saw(key)
        return super().get(key, default)

    def __getitem__(self, key):
        self._saw(key)
        return super().__getitem__(key)


def _traced(value: object, path: str, seen: set[str]) -> object:
    if isinstance(value, dict):
        return Read(value, path, seen)
    if isinstance(value, list):
        return [_traced(v, path + "[]", seen) for v in value]
    return value


def _paths(value: object, path: str = "") -> set[str]:
    """Every key path of ``value``, lists' indices as ``[]``."""
    found = set()
    if isinstance(value, dict):
        for key, inner in value.items():
            here = f"{path}.{key}".lstrip(".")
            found |= {here} | _paths(inner, here)
    elif isinstance(value, list):
        for inner in value:
            found |= _paths(inner, path + "[]")
    return found


def _places(value: object, at: tuple = ()) -> list[tuple]:
    """Every place in ``value``: a path of keys and indices to each value inside it."""
    places = []
    items = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ()
    for key, inner in items:
        places += [at + (key,), *_places(inner, at + (key,))]
    return places


def _changed(report: dict, place: tuple, junk: object) -> dict:
    copy = json.loads(json.dumps(report))
    *parents, last = place
    target = copy
    for key in parents:
        target = target[key]
    if junk is _DELETE:
        del target[last]
    else:
        target[last] = junk
    return copy


_DELETE = object()


@pytest.mark.parametrize("base", [FULL, OLD], ids=["full", "0.3.0"])
def test_the_fuzzed_reports_hold_every_field_the_history_page_reads(base: dict) -> None:
    """What the fuzz below changes is everything the page reads: a key read that neither base holds is a
    new field, to be added to FULL (or OLD, for a field of older reports) and checked by history.problem."""
    from pytest_probability.report import history

    seen: set[str] = set()
    history.render([_traced(base, "", seen)], trace_url="http://t/{trace_id}/{span_id}")
    read = {path for path in seen if not path.startswith("_source")}
    assert read - _paths(FULL) - _paths(OLD) == set()


@pytest.mark.parametrize("base", [FULL, OLD], ids=["full", "0.3.0"])
def test_no_report_shape_gives_a_traceback(base: dict, tmp_path, capsys, monkeypatch) -> None:
    """Issue 36, defect 12, fuzzed: each place of a report given every junk value (and removed) is either
    shown or refused with exit 2 and `error:` naming the file and the field; nothing else escapes.

    In process (a subprocess per case would take minutes), the page kept rather than written: the
    fsync of each page took most of the time."""
    from pytest_probability import __main__ as command

    pages: list[str] = []
    monkeypatch.setattr(command.files, "write_text", lambda path, text: pages.append(text))
    path = tmp_path / "r.json"
    outcomes = {0: 0, 2: 0}
    for place, junk in [(place, junk) for place in _places(base) for junk in [*JUNK, _DELETE]]:
        path.write_text(json.dumps(_changed(base, place, junk)), encoding="utf-8")
        pages.clear()
        status = command.main(
            ["report", str(path), "-o", str(tmp_path / "out.html"), "--trace-url", "http://t/{trace_id}/{span_id}"]
        )
        out, err = capsys.readouterr()
        assert status in outcomes, (place, junk, status, err)
        outcomes[status] += 1
        if status == 0:
            assert err == "" and len(pages) == 1, (place, junk, err)
            assert "<script>alert(1)" not in pages[0], (place, junk)
        else:
            assert err.startswith(f"error: {path}: not a pytest-probability JSON report ("), (place, junk, err)
            assert err.count("\n") == 1 and not pages, (place, junk, err)
    assert outcomes[0] and outcomes[2]  # both happen: the fuzz reaches the page and the refusal


def test_0_3_0s_reports_are_reports(pytester: pytest.Pytester) -> None:
    """The check of a report's fields takes 0.3.0's reports (its names, percentages and nulls) as they are."""
    data = Path(__file__).parent / "data"
    done = build(pytester, str(data / "report-0.3.0.json"), str(data / "report-0.3.0-nights.json"), "-o", "old.html")
    assert done.returncode == 0 and done.stderr == "", done.stderr
    assert done.stdout == "wrote old.html (2 sessions)\n"
