"""End to end, issue 45's matrix: every output shows every measure, for each verdict, serially, under ``-n 2``
and through the shards' merge.

One night of benchmarks makes every verdict of both measures at once (their
runs and scores are fixed by the run number, so every process makes the
same): a gate of the pass fraction and one of the score ``judge`` that pass,
fail and are undecided, and, against a baseline night, a benchmark whose
pass fraction drops, one whose score drops, ones that stay (PASS) and one
with too few inputs to decide (UNDECIDED). Each mode runs that night once
(module-scoped: the sessions are the cost), with every output on; each test
is one cell of the matrix, output x measure x verdict, and reads that
output:

=========== =====================================================================================
output      what a cell checks
=========== =====================================================================================
terminal    the gates section's line of the case (its measure's bar and estimate, the verdict);
            the comparisons' line of the benchmark (its measure's table)
json        ``rows[].gate`` / ``rows[].scores.judge.gate``; ``baseline.comparisons[]`` and
            their ``scores[]``, and the per-case inputs
html        the Gate column's entry and the gates section's row of the measure (``data-measure``);
            the comparisons' row of the measure
summary     the attention list's row of the gate or the drop (its measure's words)
annotations ``::error`` for a failed gate or a drop, ``::warning`` for an undecided gate
junit       the gate item's properties of its measure (n, mean or passes, low, high, bar, decision)
diff        the case's and the benchmark's entry of the measure; ``--fail-on-drop`` exits 1 on a
            drop of the measure alone
history     the case's trend of the measure, its baseline verdict marked
metrics     the gate verdict gauge of the measure, and the baseline verdict gauge
=========== =====================================================================================
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest

#: The night: SHIFT (shift.txt) 0 is the baseline night, 1 tonight (the drops happen).
BENCH = """
import pathlib
import pytest
from pytest_probability import record_score

TONIGHT = pathlib.Path("shift.txt").read_text().strip() == "1"
INPUTS = [f"q{i}" for i in range(10)]
FEW = ["r0", "r1", "r2"]


@pytest.mark.probability(runs=20, min_rate=0.5)
def bench_fraction_pass(n):
    pass


@pytest.mark.probability(runs=20, min_rate=0.5)
def bench_fraction_fail(n):
    assert n % 10 == 0


@pytest.mark.probability(runs=20, min_rate=0.5)
def bench_fraction_undecided(n):
    assert n % 5 < 3


@pytest.mark.probability(runs=20, min_score={"judge": 0.5})
def bench_score_pass(n):
    record_score(0.95, "judge")


@pytest.mark.probability(runs=20, min_score={"judge": 0.5})
def bench_score_fail(n):
    record_score(0.05, "judge")


@pytest.mark.probability(runs=20, min_score={"judge": 0.5})
def bench_score_undecided(n):
    record_score(0.4 if n % 2 else 0.6, "judge")


@pytest.mark.probability(runs=12)
@pytest.mark.parametrize("q", INPUTS)
def bench_fraction_drop(q, n):
    assert not TONIGHT or n % 6 == 0


@pytest.mark.probability(runs=12)
@pytest.mark.parametrize("q", INPUTS)
def bench_fraction_steady(q, n):
    pass


@pytest.mark.probability(runs=20)
@pytest.mark.parametrize("q", INPUTS)
def bench_score_drop(q, n):
    record_score((0.3 if TONIGHT else 0.9) + 0.01 * (n % 3), "judge")


@pytest.mark.probability(runs=20)
@pytest.mark.parametrize("q", INPUTS)
def bench_score_steady(q, n):
    record_score(0.7 + 0.01 * (n % 3), "judge")


@pytest.mark.probability(runs=8)
@pytest.mark.parametrize("q", FEW)
def bench_few(q, n):
    record_score(0.7 + 0.01 * (n % 3), "judge")
"""

CONFTEST = """
import pytest


@pytest.fixture
def n(request):
    return request.node.prob_run
"""

MEASURES = ("fraction", "score")
GATE_VERDICTS = ("pass", "fail", "undecided")
#: (measure, verdict) -> the benchmark whose comparison with the baseline has that verdict.
DROPS = {
    ("fraction", "fail"): "fraction_drop",
    ("fraction", "pass"): "fraction_steady",
    ("fraction", "undecided"): "few",
    ("score", "fail"): "score_drop",
    ("score", "pass"): "score_steady",
    ("score", "undecided"): "few",
}
MODES = ("serial", "xdist", "merged")
TRACE = "http://jaeger.test/trace/{trace_id}"


def measure_key(measure: str) -> str:
    return "pass" if measure == "fraction" else "score:judge"


def _run(folder: Path, *args: str, shift: int, check: bool = True) -> subprocess.CompletedProcess[str]:
    (folder / "shift.txt").write_text(str(shift), encoding="utf-8")
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("OTEL_", "GITHUB_", "PYTEST_XDIST", "PYTEST_ADDOPTS", "CI"))
    }
    done = subprocess.run(
        [sys.executable, *args], cwd=folder, env=env, capture_output=True, text=True, timeout=600, check=False
    )
    if check:
        assert done.returncode in (0, 1), done.stdout + done.stderr
    return done


class Night:
    """One mode's night, with every output written: the files in ``folder``, the terminal's text."""

    def __init__(self, folder: Path, mode: str) -> None:
        self.folder, self.mode = folder, mode
        self.terminal = ""
        self.annotations: list[str] = []

    def text(self, name: str) -> str:
        return (self.folder / name).read_text(encoding="utf-8")

    def json(self, name: str = "new.json") -> dict[str, Any]:
        return json.loads(self.text(name))


def pytest_session(folder: Path, *args: str, shift: int) -> subprocess.CompletedProcess[str]:
    return _run(folder, "-m", "pytest", "-p", "no:cacheprovider", "-p", "no:randomly", *args, shift=shift)


def command(folder: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    return _run(folder, "-m", "pytest_probability", *args, shift=1, check=check)


@pytest.fixture(scope="module", params=MODES)
def night(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Night:
    mode = request.param
    folder = tmp_path_factory.mktemp(f"every-measure-{mode}")
    (folder / "conftest.py").write_text(CONFTEST, encoding="utf-8")
    (folder / "bench_every.py").write_text(BENCH, encoding="utf-8")
    (folder / "pytest.ini").write_text("[pytest]\n", encoding="utf-8")
    pytest_session(folder, "--prob-json=base.json", shift=0)
    found = Night(folder, mode)
    outputs = ("--prob-baseline=base.json", "--prob-margin=0.05", "-o", f"prob_trace_url={TRACE}")
    if mode == "merged":
        for k in (1, 2):
            pytest_session(folder, *outputs, f"--prob-shard={k}/2", f"--prob-json=s{k}.json", shift=1)
        done = command(
            folder,
            "merge",
            "s1.json",
            "s2.json",
            "-o",
            "new.json",
            "--html=new.html",
            "--summary=summary.md",
            "--annotations=on",
            "--otel-file=otel.jsonl",
            "--prob-baseline=base.json",
            f"--trace-url={TRACE}",
        )
        assert done.returncode == 1, done.stdout + done.stderr
    else:
        extra = ("-n", "2") if mode == "xdist" else ()
        done = pytest_session(
            folder,
            *extra,
            *outputs,
            "--prob-otel-file=otel.jsonl",
            "--prob-json=new.json",
            "--prob-html=new.html",
            "--prob-summary=summary.md",
            "--prob-annotations=on",
            "--junitxml=junit.xml",
            shift=1,
        )
        assert done.returncode == 1, done.stdout + done.stderr
    found.terminal = done.stdout
    found.annotations = [line for line in done.stdout.splitlines() if line.startswith("::")]
    # the diff and the history page, of the same two reports
    diff = command(folder, "diff", "base.json", "new.json", "--format=json", "--prob-margin=0.05", check=False)
    assert diff.returncode == 0, diff.stderr
    (folder / "diff.json").write_text(diff.stdout, encoding="utf-8")
    command(folder, "report", "base.json", "new.json", "-o", "history.html")
    return found


# -- the gates: output x measure x verdict --------------------------------------------------------------


def gate_row(night: Night, measure: str, verdict: str) -> dict[str, Any]:
    label = f"{measure}_{verdict}"
    return next(row for row in night.json()["rows"] if row["label"] == label)


@pytest.mark.parametrize("verdict", GATE_VERDICTS)
@pytest.mark.parametrize("measure", MEASURES)
def test_json_gate(night: Night, measure: str, verdict: str) -> None:
    row = gate_row(night, measure, verdict)
    gate = row["gate"] if measure == "fraction" else row["scores"]["judge"]["gate"]
    assert gate["verdict"] == verdict and row["verdict"] == verdict
    assert gate["low"] <= gate["high"]
    if measure == "score":
        assert gate["min_score"] == 0.5 and gate["n"] == 20 and gate["mean"] is not None


@pytest.mark.parametrize("verdict", GATE_VERDICTS)
@pytest.mark.parametrize("measure", MEASURES)
def test_terminal_gate(night: Night, measure: str, verdict: str) -> None:
    label = f"{measure}_{verdict}"
    bar = ">= 50%" if measure == "fraction" else "judge >= 0.5"
    [line] = [line for line in night.terminal.splitlines() if re.match(rf"\s+{label}\s+\d+/\d+", line) and bar in line]
    assert line.rstrip().endswith(verdict.upper()), line
    if measure == "score":
        assert re.search(r"judge \d\.\d+ \[\d", line), line


@pytest.mark.parametrize("verdict", GATE_VERDICTS)
@pytest.mark.parametrize("measure", MEASURES)
def test_html_gate(night: Night, measure: str, verdict: str) -> None:
    page = night.text("new.html")
    label = f"{measure}_{verdict}"
    row = re.search(rf'<tr data-case="{label}">.*?</tr>', page)
    assert row is not None
    assert re.search(
        rf'<span class="gate" data-measure="{measure_key(measure)}">[^<]*<span class="status s-{verdict}">', row.group()
    ), row.group()
    listed = re.search(rf'<tr data-case="{label}" data-measure="{measure_key(measure)}">.*?</tr>', page)
    assert listed is not None and f'class="status s-{verdict}"' in listed.group()


@pytest.mark.parametrize("verdict", ["fail", "undecided"])
@pytest.mark.parametrize("measure", MEASURES)
def test_summary_and_annotations_of_a_gate(night: Night, measure: str, verdict: str) -> None:
    summary = night.text("summary.md")
    label = f"{measure}\\_{verdict}"  # as Markdown escapes it
    why = "failed gate" if verdict == "fail" else "undecided gate"
    words = ("gate >= 50%" if measure == "fraction" else "score gate judge >= 0.5") + ": " + verdict.upper()
    rows = [line for line in summary.splitlines() if f"| {label} |" in line]
    assert any(why in row and words in row.replace("\\", "") for row in rows), rows
    kind = "error" if verdict == "fail" else "warning"
    found = [line for line in night.annotations if f"title={why}%3A {measure}_{verdict}::" in line]
    assert len(found) == 1 and found[0].startswith(f"::{kind} "), night.annotations
    assert words in found[0].replace("%25", "%")


@pytest.mark.parametrize("verdict", GATE_VERDICTS)
@pytest.mark.parametrize("measure", MEASURES)
def test_junit_gate(night: Night, measure: str, verdict: str) -> None:
    if night.mode == "merged":
        pytest.skip("a shard's gate items are decided at the merge, which writes no JUnit XML")
    tree = ET.parse(night.folder / "junit.xml")
    label = f"{measure}_{verdict}"
    case = next(
        c
        for c in tree.iter("testcase")
        if c.get("name") == "gate" and c.get("classname", "").endswith(f"bench_{label}")
    )
    props = {p.get("name"): p.get("value") for p in case.iter("property")}
    assert props["probability_decision"] == verdict
    if measure == "fraction":
        assert props["probability_total"] == "20" and props["probability_bar"] == "0.5"
        assert float(props["probability_low"]) <= float(props["probability_high"])
    else:
        prefix = "probability_score_judge_"
        assert props[prefix + "n"] == "20" and props[prefix + "bar"] == "0.5" and props[prefix + "decision"] == verdict
        assert float(props[prefix + "low"]) <= float(props[prefix + "mean"]) <= float(props[prefix + "high"])


def _gauges(night: Night) -> dict[tuple[str, str, str], float]:
    from otlp_receiver import flatten_metrics

    from pytest_probability.otel import otlp_json

    points = flatten_metrics(list(otlp_json.read_file(night.folder / "otel.jsonl")))
    return {
        (p.name, p.attributes.get("probability.benchmark", ""), p.attributes.get("probability.score.name", "")): p.value
        for p in points
        if p.name.startswith("probability.case.")
    }


@pytest.mark.parametrize("verdict", GATE_VERDICTS)
@pytest.mark.parametrize("measure", MEASURES)
def test_metrics_gate(night: Night, measure: str, verdict: str) -> None:
    pytest.importorskip("opentelemetry.proto")
    gauges = _gauges(night)
    value = {"pass": 1, "undecided": 0, "fail": -1}[verdict]
    label = f"{measure}_{verdict}"
    if measure == "fraction":
        assert gauges[("probability.case.gate.verdict", label, "")] == value
        assert gauges[("probability.case.min_rate", label, "")] == 0.5
    else:
        assert gauges[("probability.case.score.gate.verdict", label, "judge")] == value
        assert gauges[("probability.case.score.min_score", label, "judge")] == 0.5


# -- the comparisons with the baseline: output x measure x verdict ------------------------------------------

DROP_CELLS = sorted(DROPS)


def benchmark_comparison(night: Night, measure: str, verdict: str) -> dict[str, Any]:
    function = DROPS[(measure, verdict)]
    [head] = [c for c in night.json()["baseline"]["comparisons"] if c["function"] == function]
    if measure == "fraction":
        return head
    [score] = [s for s in head["scores"] if s["name"] == "judge"]
    return score


@pytest.mark.parametrize("measure, verdict", DROP_CELLS)
def test_json_comparison(night: Night, measure: str, verdict: str) -> None:
    comparison = benchmark_comparison(night, measure, verdict)
    assert comparison["verdict"] == verdict
    if verdict == "fail":  # each case dropped too: the per-case verdicts the drop alerts read
        assert {entry["verdict"] for entry in comparison["inputs"]} == {"fail"}
    if verdict == "undecided":  # 3 inputs: each measure says so in its words
        assert comparison["suppressed"] in ("fewer than 10 paired cases", "fewer than 10 inputs")


@pytest.mark.parametrize("measure, verdict", DROP_CELLS)
def test_terminal_comparison(night: Night, measure: str, verdict: str) -> None:
    function = DROPS[(measure, verdict)]
    name = function if measure == "fraction" else f"{function} judge"
    lines = [line for line in night.terminal.splitlines() if re.match(rf"\s+{name}\s+\d+ cases", line)]
    assert len(lines) == 1 and verdict.upper() in lines[0], lines


@pytest.mark.parametrize("measure, verdict", DROP_CELLS)
def test_html_comparison(night: Night, measure: str, verdict: str) -> None:
    page = night.text("new.html")
    section = page[page.index('id="comparisons"') :]
    rows = re.findall(
        rf'<tr data-measure="{measure_key(measure)}"><td>{DROPS[(measure, verdict)]}</td>.*?</tr>', section
    )
    assert len(rows) == 1 and f'class="status s-{verdict}"' in rows[0], rows


@pytest.mark.parametrize("measure", MEASURES)
def test_summary_and_annotations_of_a_drop(night: Night, measure: str) -> None:
    function = DROPS[(measure, "fail")]
    summary = night.text("summary.md").replace("\\", "")
    words = "pp vs baseline" if measure == "fraction" else "mean judge"
    cases = [line for line in summary.splitlines() if "| dropped |" in line and f"{function}::" in line]
    assert len(cases) == 10 and all(words in line for line in cases), cases
    benchmark = [
        line for line in summary.splitlines() if "| failed verdict |" in line and f"| {function} [baseline] |" in line
    ]
    assert benchmark and "FAIL" in benchmark[0], summary
    # the benchmark's failed verdict is an error annotation (its cases' drops too, as far as the ten shown reach)
    errors = [
        line
        for line in night.annotations
        if line.startswith("::error ") and f"title=failed verdict%3A {function} [baseline]::" in line
    ]
    assert len(errors) == 1, night.annotations


@pytest.mark.parametrize("measure, verdict", DROP_CELLS)
def test_diff_comparison(night: Night, measure: str, verdict: str) -> None:
    diff = json.loads(night.text("diff.json"))
    function = DROPS[(measure, verdict)]
    [head] = [c for c in diff["baseline"]["comparisons"] if c["function"] == function]
    found = head if measure == "fraction" else next(s for s in head["scores"] if s["name"] == "judge")
    assert found["verdict"] == verdict
    assert diff["baseline"] == night.json()["baseline"]  # the diff is the session's comparison
    if verdict == "fail" and measure == "fraction":
        assert function in diff["benchmarks_failed"] and any(c.startswith(function) for c in diff["dropped"])
    if verdict == "fail" and measure == "score":
        assert {"function": function, "score": "judge"} in diff["score_benchmarks_failed"]
        assert sum(1 for c in diff["scores_dropped"] if c["case"].startswith(function)) == 10


@pytest.mark.parametrize("measure", MEASURES)
def test_diff_fails_on_a_drop_of_the_measure_alone(night: Night, measure: str) -> None:
    """``--fail-on-drop`` exits 1 on a drop of either measure alone, as the session does, and 0 without one."""
    if night.mode != "serial":
        pytest.skip("the reports of one mode suffice: the diff reads reports, not sessions")
    folder = night.folder
    keep = f"{measure}_drop or {measure}_steady"
    for name, shift in (("only-base.json", 0), ("only-new.json", 1)):
        pytest_session(folder, "-k", keep, f"--prob-json={name}", shift=shift)
    dropped = command(
        folder, "diff", "only-base.json", "only-new.json", "--fail-on-drop", "--prob-margin=0.05", check=False
    )
    assert dropped.returncode == 1, dropped.stdout + dropped.stderr
    same = command(folder, "diff", "only-base.json", "only-base.json", "--fail-on-drop", check=False)
    assert same.returncode == 0, same.stdout + same.stderr


@pytest.mark.parametrize("measure", MEASURES)
def test_history_shows_the_measure_and_its_drop(night: Night, measure: str) -> None:
    page = night.text("history.html")
    function = DROPS[(measure, "fail")]
    chart = "history" if measure == "fraction" else "history-score"
    figures = re.findall(
        rf'<figure data-case="{function}::q\d[^"]*"><svg class="chart" data-chart="{chart}".*?</figure>', page
    )
    assert len(figures) == 10, len(figures)
    assert all('data-verdict="fail"' in figure for figure in figures)


@pytest.mark.parametrize("measure", MEASURES)
def test_metrics_drop(night: Night, measure: str) -> None:
    pytest.importorskip("opentelemetry.proto")
    gauges = _gauges(night)
    function = DROPS[(measure, "fail")]
    name = "probability.case.baseline.verdict" if measure == "fraction" else "probability.case.baseline.score.verdict"
    score = "" if measure == "fraction" else "judge"
    assert gauges[(name, function, score)] == -1
