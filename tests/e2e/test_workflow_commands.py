"""End to end: no line the plugin prints is a workflow command to GitHub's runner, whatever the text it was given
(issue 46, item 9).

The runner reads a command from any line of the job's log whose first non-blank characters are ``::``, and from
``##[name]`` anywhere in a line (``printed.runner_command``). A case label is the benchmark's name and the case
id, so ``bench_`` with the id ``warning::injected`` is the label ``::warning::injected``, which the table prints
at the start of its row; a model name starts a line of the table's token lines. Every line that carries such
text shows it inert (its first colon as ``\\x3a``, ``##[`` as ``##\\x5b``), while the plugin's own annotations
stay the only commands, escaped by the runner's rules.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys

import pytest
from printed import runner_command

BENCH = """
import pytest
from pytest_probability import record_usage

IDS = ["warning::injected", "add-mask::hunter2"]


@pytest.mark.probability(runs=2, min_rate=0.9)
@pytest.mark.parametrize("x", IDS, ids=IDS)
def bench_(x):
    record_usage(model="a-model", input_tokens=1)
    record_usage(model="::warning::model", input_tokens=2)
    record_usage(model="old ##[error]form", input_tokens=3)
    assert x == "ok"
"""

LABELS = {"::warning::injected", "::add-mask::hunter2"}
#: A workflow command as the plugin writes its annotations (tests/e2e/test_nightly.py checks the grammar).
ANNOTATION = re.compile(r"^::(?P<kind>error|warning) (?P<props>[^:]*)::(?P<message>.*)$")


def unescape(text: str) -> str:
    return text.replace("%0D", "\r").replace("%0A", "\n").replace("%3A", ":").replace("%2C", ",").replace("%25", "%")


def commands_in(lines: list[str]) -> list[str]:
    """The lines GitHub's runner would act on, leaving out those pytest writes about a run by its node id (its
    short summary, its sections' headers): the node id is the user's, and pytest's to print."""
    return [line for line in lines if runner_command(line) and "bench_x.py::" not in line and not line.startswith("_")]


@pytest.fixture
def github(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)
    monkeypatch.delenv("PYTEST_ADDOPTS", raising=False)


@pytest.mark.parametrize("mode", [[], ["-n", "2"]], ids=["serial", "xdist"])
def test_no_label_or_model_name_starts_a_workflow_command(
    pytester: pytest.Pytester, github: None, mode: list[str]
) -> None:
    pytester.makepyfile(bench_x=BENCH)
    result = pytester.runpytest_subprocess(*mode, "-p", "no:cacheprovider", "-o", "prob_gate_timeout=60", timeout=120)
    assert result.ret == 1
    lines = result.outlines
    commands = commands_in(lines)
    # the plugin's own annotations are the only commands: one per failed gate, its label escaped in the title
    assert all(ANNOTATION.match(line) for line in commands), commands
    titles = set()
    for line in commands:
        match = ANNOTATION.match(line)
        assert match is not None and match["kind"] == "error"
        props = dict(part.split("=", 1) for part in match["props"].split(","))
        assert ":" not in props["title"] and props["file"] == "bench_x.py"
        titles.add(unescape(props["title"]))
    assert titles == {f"failed gate: {label}" for label in LABELS}
    # what the table shows: the labels and the model names, readable, inert
    assert "  \\x3a:warning::injected  0/2  [ 0%,  84%]  FAIL" in lines
    assert "  \\x3a:add-mask::hunter2  0/2  [ 0%,  84%]  FAIL" in lines
    tokens = [line for line in lines if "in / 0 out" in line]
    assert len(tokens) == 3 and len({re.search(r"\d+ in / 0 out", line).start() for line in tokens}) == 1  # aligned
    assert any(line.lstrip().startswith("\\x3a:warning::model  ") for line in tokens)
    assert any("old ##\\x5berror]form  " in line for line in tokens)
    gates = [line for line in lines if line.endswith(">= 90%  FAIL")]  # the gates section: each starts with its label
    assert sorted(line.split()[0] for line in gates) == ["\\x3a:add-mask::hunter2", "\\x3a:warning::injected"]


def test_the_plan_the_diff_and_the_merge_print_no_workflow_command(pytester: pytest.Pytester, github: None) -> None:
    pytester.makepyfile(bench_x=BENCH)
    plan = pytester.runpytest_subprocess("-p", "no:cacheprovider", "--prob-plan", timeout=120)
    assert plan.ret == 0
    assert any(line.startswith("  \\x3a:warning::injected") for line in plan.outlines), plan.outlines
    assert commands_in(plan.outlines) == []
    for k in (1, 2):
        shard = pytester.runpytest_subprocess(
            "-p", "no:cacheprovider", f"--prob-shard={k}/2", f"--prob-json=s{k}.json", timeout=120
        )
        assert shard.ret in (0, 1), shard.outlines

    def command(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "pytest_probability", *args],
            cwd=pytester.path,
            capture_output=True,
            text=True,
            timeout=120,
        )

    merged = command("merge", "s1.json", "s2.json", "-o", "m.json", "--annotations=off", "--summary=off")
    assert merged.returncode == 1, merged.stderr
    assert any("\\x3a:warning::injected" in line for line in merged.stdout.splitlines()), merged.stdout
    assert commands_in(merged.stdout.splitlines()) == []
    report = json.loads((pytester.path / "m.json").read_text(encoding="utf-8"))
    assert {row["label"] for row in report["rows"]} == LABELS  # the reports keep the labels as they are
    diff = command("diff", "m.json", "m.json", "--format=text")
    assert diff.returncode == 0, diff.stderr
    assert sum(line.startswith("  \\x3a:") for line in diff.stdout.splitlines()) == 2, diff.stdout
    assert commands_in(diff.stdout.splitlines()) == []
