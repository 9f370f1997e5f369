"""Two of a session's outputs on one file are refused before any run (``files.check_outputs``).

Before, only the journal against ``--prob-json``/``--prob-html`` was refused: ``--prob-json=r --prob-html=r``
kept only the HTML report, the OTLP file at the journal's path wrote its lines into the journal, and the
session exited 0 with a report missing.
"""

from __future__ import annotations

import os

import pytest

SIDE_EFFECT = """
from pathlib import Path

def bench_spends_money():
    with open(Path(__file__).with_name("ran.txt"), "a") as handle:
        handle.write("spent")
"""

#: (the earlier option, the later one): the message names the later first, in the core's order (reports,
#: the summary, JUnit XML), then the features' in the composition root's order (the journal, the export's files).
PAIRS = [
    ("--prob-json", "--prob-html"),
    ("--prob-json", "--prob-summary"),
    ("--prob-html", "--junitxml"),
    ("--prob-json", "--prob-otel-file"),
    ("--prob-otel-file", "--prob-otel-spill"),
    ("--prob-json", "--prob-journal"),
    ("--prob-journal", "--prob-otel-file"),
    ("--prob-journal", "--prob-otel-spill"),
]


@pytest.mark.parametrize("xdist", [[], ["-n", "2"]], ids=["serial", "xdist"])
@pytest.mark.parametrize(("first", "second"), PAIRS, ids=[f"{a[2:]}-{b[2:]}" for a, b in PAIRS])
def test_two_outputs_on_one_file_are_a_usage_error_before_any_run(
    pytester: pytest.Pytester, xdist: list[str], first: str, second: str
) -> None:
    pytester.makepyfile(bench_x=SIDE_EFFECT)
    target = pytester.path / "out.file"
    export = (
        ["--prob-otel-file=other.jsonl"] if "--prob-otel-file" not in (first, second) else []
    )  # the spill's export on
    result = pytester.runpytest_subprocess(*xdist, "--prob-runs=3", *export, f"{first}=out.file", f"{second}=out.file")
    assert result.ret == pytest.ExitCode.USAGE_ERROR, result.stdout.str() + result.stderr.str()
    result.stderr.fnmatch_lines(
        [
            f"ERROR: {second}: *out.file is also the {first} path ({target}): one output "
            "would replace the other; give each its own path"
        ]
    )
    assert not (pytester.path / "ran.txt").exists()
    assert not target.exists()


def test_a_clash_through_a_symlink_or_a_hard_link_is_refused(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(bench_x=SIDE_EFFECT)
    (pytester.path / "report.json").write_text("an earlier report", encoding="utf-8")
    (pytester.path / "link.html").symlink_to("report.json")
    os.link(pytester.path / "report.json", pytester.path / "hard.jsonl")
    for other in ("--prob-html=link.html", "--prob-otel-file=hard.jsonl"):
        result = pytester.runpytest_subprocess("--prob-runs=2", "--prob-json=report.json", other)
        assert result.ret == pytest.ExitCode.USAGE_ERROR, other
        result.stderr.fnmatch_lines([f"ERROR: {other.split('=')[0]}: * is also the --prob-json path *"])
    assert not (pytester.path / "ran.txt").exists()
    assert (pytester.path / "report.json").read_text(encoding="utf-8") == "an earlier report"


def test_outputs_of_their_own_and_streams_run(pytester: pytest.Pytester) -> None:
    """Distinct files pass, and a stream (``/dev/stdout``) clashes with nothing: it is written through."""
    pytester.makepyfile(bench_x=SIDE_EFFECT)
    result = pytester.runpytest_subprocess(
        "--prob-runs=2",
        "--prob-json=r.json",
        "--prob-html=r.html",
        "--junitxml=j.xml",
        "--prob-otel-file=o.jsonl",
        "--prob-journal=run.jsonl",
        "--prob-summary=/dev/stdout",
    )
    assert result.ret == 0, result.stdout.str() + result.stderr.str()
    for name in ("r.json", "r.html", "j.xml", "o.jsonl", "run.jsonl"):
        assert (pytester.path / name).stat().st_size > 0, name
    assert (pytester.path / "ran.txt").read_text() == "spent" * 2
