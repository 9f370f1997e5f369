"""The nightly where people look (issue 35), end to end in subprocess sessions, serial and under -n 2, and through
the merge: the job summary (rendered by a real CommonMark/GFM renderer), the annotations (the workflow-command
grammar), JUnit XML (parsed by junitparser), the diff (against --prob-baseline's own JSON), quarantine, and each
case's state across nights."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys

import pytest
import sessions
from junitparser import JUnitXml, Properties
from markdown_it import MarkdownIt

# Failing gate (3/10 vs 0.9), undecided gate (8/10 vs 0.7: interval [44%, 97%]), a flaky ungated case with
# punctuation in its id, and a passing one.
BENCH = """
import pytest


@pytest.mark.probability(runs=10, min_rate=0.9)
def bench_bad(request):
    assert request.node.prob_run <= 3


@pytest.mark.probability(runs=10, min_rate=0.7)
def bench_maybe(request):
    assert request.node.prob_run <= 8


@pytest.mark.probability(runs=6)
@pytest.mark.parametrize("text", ["a,b:c%|d", "fine"])
def bench_words(text, request):
    assert text == "fine" or request.node.prob_run % 2
"""
TRACE = "https://traces.example/t/{trace_id}"
MODES = [[], ["-n", "2"]]
MODE_IDS = ["serial", "xdist"]


def session(pytester: pytest.Pytester, *args: str, env: dict[str, str] | None = None) -> pytest.RunResult:
    for name in ("GITHUB_ACTIONS", "GITHUB_STEP_SUMMARY"):
        os.environ.pop(name, None)
    saved = dict(os.environ)
    os.environ.update(env or {})
    try:
        return sessions.session(pytester, *args, gate_timeout=60, timeout=120)
    finally:
        os.environ.clear()
        os.environ.update(saved)


def command(
    pytester: pytest.Pytester, *args: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    full = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path), **(env or {})}
    for name in ("GITHUB_ACTIONS", "GITHUB_STEP_SUMMARY"):
        if name not in (env or {}):
            full.pop(name, None)
    return subprocess.run(
        [sys.executable, "-m", "pytest_probability", *args],
        cwd=pytester.path,
        capture_output=True,
        text=True,
        timeout=120,
        env=full,
    )


def props_of(case: object) -> dict[str, str]:
    return {p.name: p.value for found in case.iterchildren(Properties) for p in found}  # type: ignore[attr-defined]


def html_of(markdown: str) -> str:
    return MarkdownIt("commonmark").enable("table").render(markdown)


def table_rows(html: str) -> list[list[str]]:
    body = html.split("<tbody>", 1)[1].split("</tbody>", 1)[0]
    return [re.findall(r"<td>(.*?)</td>", row, re.S) for row in re.findall(r"<tr>(.*?)</tr>", body, re.S)]


# -- the job summary -------------------------------------------------------------------------------------------


@pytest.mark.parametrize("mode", MODES, ids=MODE_IDS)
def test_the_summary_renders_as_a_table_worst_first_with_intervals_and_trace_links(
    pytester: pytest.Pytester, mode: list[str]
) -> None:
    pytester.makepyfile(bench_n=BENCH)
    result = session(
        pytester,
        *mode,
        "--prob-summary=summary.md",
        "--prob-json=r.json",
        "-o",
        f"prob_trace_url={TRACE}",
        "--prob-otel-file=o.jsonl",
    )
    assert result.ret == 1, result.stdout.str()
    text = (pytester.path / "summary.md").read_text(encoding="utf-8")
    html = html_of(text)
    assert "<h2>" in html and "exit status 1" in html
    rows = table_rows(html)
    whys = [row[1] for row in rows]
    assert whys[0] == "failed gate" and "undecided gate" in whys
    bad = rows[0]
    assert bad[2] == "bad" and bad[3] == "3/10" and "FAIL" in bad[5]
    report = json.loads((pytester.path / "r.json").read_text(encoding="utf-8"))
    gate = next(r["gate"] for r in report["rows"] if r["label"] == "bad")
    assert bad[4] == f"[{gate['low']:.1%}, {gate['high']:.1%}]"
    trace = re.search(r'<a href="([^"]+)">trace</a>', bad[6])
    failed = [r["trace_id"] for r in report["records"] if r["case"] == "bad" and r["outcome"] == "fail"]
    assert trace is not None and trace.group(1) == TRACE.format(trace_id=failed[0])
    # the label with Markdown and table punctuation stays one cell, shown as it is
    assert any(row[2] == "words::a,b:c%|d" for row in rows), rows


def test_the_step_summary_is_appended_to_and_capped_at_githubs_limit(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(bench_n=BENCH)
    step = pytester.path / "step.md"
    step.write_text("# an earlier step's summary\n", encoding="utf-8")
    result = session(pytester, env={"GITHUB_STEP_SUMMARY": str(step)})
    assert result.ret == 1
    text = step.read_text(encoding="utf-8")
    assert text.startswith("# an earlier step's summary\n") and "Needs attention" in text
    # nearly full: the summary is cut to what fits, and says what it left out
    from pytest_probability.features.ci_outputs.attention import Attention
    from pytest_probability.features.ci_outputs.summary import LIMIT, render

    items = [
        Attention(
            "failed gate",
            f"case-{i}" + "x" * 200,
            f"k{i}",
            1,
            10,
            0.0,
            0.4,
            "gate >= 90%: FAIL",
            None,
            "bench_n.py",
            1,
            0.0,
        )
        for i in range(8000)
    ]
    page = render({"exit_status": 1, "rows": []}, items=items)
    assert len(page.encode("utf-8")) <= LIMIT
    assert re.search(r"_\d+ more row\(s\) left out: GitHub refuses a step summary over 1024 KiB", page)
    shown = table_rows(html_of(page))
    assert 1000 < len(shown) < 8000


# -- annotations ------------------------------------------------------------------------------------------------

COMMAND = re.compile(r"^::(?P<kind>error|warning|notice)(?: (?P<props>[^:]*))?::(?P<message>.*)$")


def unescape(text: str) -> str:
    return text.replace("%0D", "\r").replace("%0A", "\n").replace("%3A", ":").replace("%2C", ",").replace("%25", "%")


def parse_command(line: str) -> tuple[str, dict[str, str], str]:
    """A workflow command by the runner's grammar: no raw ':' or ',' in a property value, no raw newline."""
    match = COMMAND.match(line)
    assert match is not None, line
    props = {}
    for part in (match.group("props") or "").split(","):
        name, _, value = part.partition("=")
        assert name and re.fullmatch(r"[A-Za-z]+", name) and ":" not in value, part
        props[name] = unescape(value)
    return match.group("kind"), props, unescape(match.group("message"))


MANY = """
import pytest


@pytest.mark.probability(runs=4, min_rate=0.9)
@pytest.mark.parametrize("i", [f"{n}:x,y%" for n in range(12)])
def bench_many(i, request):
    assert request.node.prob_run == 1


@pytest.mark.probability(runs=10, min_rate=0.7)
def bench_maybe(request):
    assert request.node.prob_run <= 8
"""


@pytest.mark.parametrize("mode", MODES, ids=MODE_IDS)
def test_annotations_at_most_ten_per_type_escaped_by_the_workflow_command_rules(
    pytester: pytest.Pytester, mode: list[str]
) -> None:
    pytester.makepyfile(bench_n=MANY)
    result = session(pytester, *mode, "--prob-summary=s.md", env={"GITHUB_ACTIONS": "true"})
    assert result.ret == 1
    commands = [parse_command(line) for line in result.outlines if line.startswith("::")]
    errors = [c for c in commands if c[0] == "error"]
    warnings = [c for c in commands if c[0] == "warning"]
    assert len(errors) == 10 and len(warnings) == 1
    kind, props, message = errors[0]
    assert props["file"] == "bench_n.py" and props["line"] == "4"  # the benchmark's definition
    assert props["title"].startswith("failed gate: many::") and ":x,y%" in props["title"]
    assert message.startswith("1/4 passed")
    assert "2 error(s)" in (pytester.path / "s.md").read_text(encoding="utf-8")
    quiet = session(pytester, *mode, "--prob-annotations=off", env={"GITHUB_ACTIONS": "true"})
    assert not [line for line in quiet.outlines if line.startswith("::")]


# -- JUnit XML ----------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("family", ["xunit1", "xunit2"])
@pytest.mark.parametrize("mode", MODES, ids=MODE_IDS)
def test_junit_properties_of_runs_gates_and_the_suite(pytester: pytest.Pytester, mode: list[str], family: str) -> None:
    pytester.makepyfile(bench_n=BENCH)
    result = session(
        pytester,
        *mode,
        "--junitxml=j.xml",
        "-o",
        f"junit_family={family}",
        "-o",
        f"prob_trace_url={TRACE}",
        "--prob-otel-file=o.jsonl",
    )
    assert result.ret == 1
    xml = JUnitXml.fromfile(str(pytester.path / "j.xml"))
    suite = next(iter(xml))
    totals = {p.name: p.value for p in suite.properties()}
    assert totals["probability_cases"] == "4" and totals["probability_runs"] == "32"
    assert totals["probability_gates_failed"] == "1" and totals["probability_gates_undecided"] == "1"
    cases = {case.name: case for case in suite}
    run = props_of(cases["run2"]) if "run2" in cases else None
    runs = [props_of(case) for case in suite if case.name.startswith("run") or "[run" in case.name]
    assert runs and all(
        {
            "probability_case",
            "probability_run",
            "probability_outcome",
            "probability_cost",
            "probability_tokens",
            "probability_trace_id",
        }
        <= set(r)
        for r in runs
    )
    assert any(r["probability_trace_url"] == TRACE.format(trace_id=r["probability_trace_id"]) for r in runs)
    assert run is None or run["probability_run"] == "2"
    gates = {case.classname: props_of(case) for case in suite if case.name == "gate"}
    bad = next(props for name, props in gates.items() if name.endswith("bench_bad"))
    assert bad["probability_decision"] == "fail" and bad["probability_passes"] == "3"
    assert bad["probability_total"] == "10" and bad["probability_bar"] == "0.9"
    assert float(bad["probability_low"]) < 0.3 < float(bad["probability_high"]) < 0.9
    assert bad["probability_verdict"].startswith("FAIL: 3/10")


# -- the diff ---------------------------------------------------------------------------------------------------

DIFF_BENCH = """
import os
import pytest

DROP = os.environ.get("DROP") == "1"


@pytest.mark.probability(runs=30)
@pytest.mark.parametrize("case", ["steady", "drops", "gone" if not DROP else "new"])
def bench_pr(case, request):
    if case == "drops" and DROP:
        assert request.node.prob_run % 3 == 0
"""


def test_the_diff_is_the_baseline_comparison_of_the_same_two_reports(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(bench_pr=DIFF_BENCH)
    assert session(pytester, "--prob-json=base.json").ret == 0
    result = session(pytester, "--prob-json=new.json", "--prob-baseline=base.json", env={"DROP": "1"})
    assert result.ret == 1
    found = command(pytester, "diff", "base.json", "new.json", "--format=json")
    assert found.returncode == 0, found.stderr
    diff = json.loads(found.stdout)
    session_baseline = json.loads((pytester.path / "new.json").read_text(encoding="utf-8"))["baseline"]
    assert diff["baseline"] == session_baseline
    assert diff["dropped"] == ["pr::drops"] and diff["new_cases"] == ["pr::new"] and diff["removed"] == ["pr::gone"]
    assert command(pytester, "diff", "base.json", "new.json", "--fail-on-drop").returncode == 1
    assert command(pytester, "diff", "base.json", "base.json", "--fail-on-drop").returncode == 0
    markdown = command(pytester, "diff", "base.json", "new.json").stdout
    rows = table_rows(html_of(markdown).split("</table>", 1)[1])
    assert rows[0][0] == "pr::drops" and rows[0][1] == "30/30" and rows[0][2] == "10/30" and rows[0][6] == "FAIL"
    assert command(pytester, "diff", "base.json", "missing.json").returncode == 2


# -- quarantine -------------------------------------------------------------------------------------------------

QUARANTINE = """
[[quarantine]]
pattern = "bench_n.py::bench_bad"
owner = "alice@example.org"
reason = "PROJ-123"
until = {until}

[[quarantine]]
pattern = "bench_n.py::bench_words::a*"
owner = "bob"
reason = ""
until = 2999-12-31
"""


@pytest.mark.parametrize("mode", MODES, ids=MODE_IDS)
def test_a_quarantined_case_runs_and_reports_but_fails_nothing(pytester: pytest.Pytester, mode: list[str]) -> None:
    pytester.makepyfile(bench_n=BENCH.replace("min_rate=0.7", "min_rate=0.4"))  # maybe passes: only bad fails
    pytester.path.joinpath("q.toml").write_text(QUARANTINE.format(until="2999-12-31"), encoding="utf-8")
    result = pytester.runpytest_subprocess(
        *mode, "--prob-quarantine=q.toml", "--prob-json=r.json", "-rxX", "-o", "prob_gate_timeout=60", timeout=120
    )
    assert result.ret == 0, result.stdout.str()
    result.stdout.fnmatch_lines(
        [
            "*Quarantine: 2 case(s) quarantined, 2 of them failing*",
            "XFAIL bench_n.py::bench_bad::gate - probability quarantine (alice@example.org, "
            "until 2999-12-31: PROJ-123): FAIL: 3/10*",
        ]
    )
    report = json.loads((pytester.path / "r.json").read_text(encoding="utf-8"))
    assert report["exit_status"] == 0
    rows = {r["label"]: r for r in report["rows"]}
    assert rows["bad"]["verdict"] == "fail" and rows["bad"]["quarantine"]["owner"] == "alice@example.org"
    assert rows["words::a,b:c%|d"]["quarantine"]["failing"] and rows["words::fine"]["quarantine"] is None
    assert report["quarantine"]["cases"] == 2 and report["quarantine"]["failing"] == 2
    lastfailed = pytester.path / ".pytest_cache" / "v" / "cache" / "lastfailed"
    assert not lastfailed.exists() or "bench_bad" not in lastfailed.read_text(encoding="utf-8")
    # its date passed: it gates again, with one warning naming the owner
    pytester.path.joinpath("q.toml").write_text(QUARANTINE.format(until="2001-01-01"), encoding="utf-8")
    again = pytester.runpytest_subprocess(*mode, "--prob-quarantine=q.toml", "-o", "prob_gate_timeout=60", timeout=120)
    assert again.ret == 1
    assert again.stdout.str().count("ProbabilityQuarantineWarning: ") == 1
    again.stdout.fnmatch_lines(["*entry 1 ('bench_n.py::bench_bad', owner alice@example.org) ended on 2001-01-01*"])
    assert "bench_bad" in lastfailed.read_text(encoding="utf-8")


def test_a_malformed_quarantine_file_is_a_usage_error_naming_the_entry(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(bench_n=BENCH)
    pytester.path.joinpath("q.toml").write_text(
        '[[quarantine]]\npattern = "x"\nowner = "al"\nreason = ""\nuntil = "soon"\n', encoding="utf-8"
    )
    result = session(pytester, "--prob-quarantine=q.toml")
    assert result.ret == 4
    result.stderr.fnmatch_lines(["*q.toml: entry 1 ('x'): until must be a date*got 'soon'*"])


def test_quarantine_through_the_merge(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(bench_n=BENCH.replace("min_rate=0.7", "min_rate=0.4"))
    pytester.path.joinpath("q.toml").write_text(QUARANTINE.format(until="2999-12-31"), encoding="utf-8")
    for k in (1, 2):
        assert session(pytester, f"--prob-shard={k}/2", f"--prob-json=s{k}.json", "--prob-quarantine=q.toml").ret == 0
    merged = command(pytester, "merge", "s1.json", "s2.json", "-o", "m.json", "--summary", "m.md")
    assert merged.returncode == 0, merged.stdout + merged.stderr
    report = json.loads((pytester.path / "m.json").read_text(encoding="utf-8"))
    assert report["exit_status"] == 0 and report["quarantine"]["failing"] == 2
    assert {r["label"]: r["verdict"] for r in report["rows"]}["bad"] == "fail"
    unquarantined = command(pytester, "merge", "s1.json", "s2.json", "-o", "m2.json")
    assert unquarantined.returncode == 0  # the shards' entries travel in their reports
    html = html_of((pytester.path / "m.md").read_text(encoding="utf-8"))
    assert "merged, 2 shards" in html and "quarantined" in html


# -- each case's state across nights ----------------------------------------------------------------------------

NIGHTS = """
from pathlib import Path
import pytest

MODE = Path(__file__).with_name("mode.txt").read_text().strip()


@pytest.mark.probability(runs=10)
@pytest.mark.parametrize("case", ["steady", "wobbly"])
def bench_night(case, request):
    if case == "wobbly" and MODE == "bad":
        assert request.node.prob_run % 2
"""


def night(pytester: pytest.Pytester, mode: str, *args: str) -> dict:
    pytester.path.joinpath("mode.txt").write_text(mode, encoding="utf-8")
    session(pytester, "--prob-history=hist", "--prob-json=r.json", *args)
    return json.loads((pytester.path / "r.json").read_text(encoding="utf-8"))


@pytest.mark.parametrize("mode", MODES, ids=MODE_IDS)
def test_states_across_nights_from_the_history_folder(pytester: pytest.Pytester, mode: list[str]) -> None:
    pytester.makepyfile(bench_s=NIGHTS)
    seen = []
    for tonight in ("good", "good", "good", "bad", "good", "good", "good"):
        report = night(pytester, tonight, *mode)
        seen.append({r["label"]: r["history"]["state"] for r in report["rows"]})
    assert [s["night::wobbly"] for s in seen] == ["new", "new", "passing", "flaky", "flaky", "flaky", "fixed"]
    assert {s["night::steady"] for s in seen[2:]} == {"passing"}
    wobbly = next(r["history"] for r in report["rows"] if r["label"] == "night::wobbly")
    assert wobbly["changed"] and wobbly["previous"] == "flaky" and wobbly["first_flaky"]
    assert report["states"]["changes"]["fixed"] == ["night::wobbly"]
    pytester.path.joinpath("mode.txt").write_text("bad", encoding="utf-8")
    result = session(pytester, *mode, "--prob-history=hist")
    result.stdout.fnmatch_lines(["*Nightly: 1 newly flaky*", "*1 newly flaky: night::wobbly*"])
    page = command(pytester, "report", "hist", "-o", "h.html")
    assert page.returncode == 0
    states = re.findall(r'data-state="(\w+)"', (pytester.path / "h.html").read_text(encoding="utf-8"))
    assert states.count("flaky") >= 4 and "fixed" in states


def test_states_through_the_merge(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(bench_s=NIGHTS)
    for _ in range(3):
        night(pytester, "good")
    pytester.path.joinpath("mode.txt").write_text("bad", encoding="utf-8")
    for k in (1, 2):
        session(pytester, f"--prob-shard={k}/2", f"--prob-json=s{k}.json")
    merged = command(pytester, "merge", "s1.json", "s2.json", "-o", "m.json", "--prob-history", "hist")
    assert merged.returncode == 1, merged.stdout + merged.stderr
    report = json.loads((pytester.path / "m.json").read_text(encoding="utf-8"))
    assert {r["label"]: r["history"]["state"] for r in report["rows"]} == {
        "night::steady": "passing",
        "night::wobbly": "flaky",
    }
    assert len(list((pytester.path / "hist").glob("prob-report-*.json"))) == 4  # the merged night joined it
