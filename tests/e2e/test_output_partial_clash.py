"""End to end: the files an output writes beside its own path clash with the others too (issue 46, item 15c).

``--prob-otel-file=o.jsonl`` writes its lines to ``o.jsonl.partial`` until the session's end, then renames
that over ``o.jsonl``. A journal given ``o.jsonl.partial`` got the OTLP lines appended to it (the session
said only that "another session is writing" the OTLP file, and the next resume refused the journal for an
entry of kind ``resourceSpans``); a JSON report there was renamed over the OTLP file. Such a pair is the
usage error of any two outputs on one file (``files.check_outputs``), before any run, serially and under
``-n 2``; so is the merge's ``-o`` at the path whose ``.replayed`` its ``--otel-file`` removes.
"""

from __future__ import annotations

import pytest
from sessions import XDIST_ARGS, XDIST_IDS, command, session

XDIST = pytest.mark.parametrize("xdist", XDIST_ARGS, ids=XDIST_IDS)

SIDE_EFFECT = """
from pathlib import Path

def bench_spends_money():
    with open(Path(__file__).with_name("ran.txt"), "a") as handle:
        handle.write("spent")
"""


@XDIST
@pytest.mark.parametrize("option", ["--prob-journal", "--prob-json", "--prob-otel-spill"])
def test_an_output_at_the_otel_files_partial_file_is_a_usage_error_before_any_run(
    pytester: pytest.Pytester, xdist: tuple[str, ...], option: str
) -> None:
    pytester.makepyfile(bench_x=SIDE_EFFECT)
    data = pytester.mkdir("data")
    (pytester.path / "link.jsonl").symlink_to(data / "o.jsonl")  # the partial file is beside the link's target
    partial = data / "o.jsonl.partial"
    partial.write_text("the previous night's file\n", encoding="utf-8")
    result = session(pytester, *xdist, "--prob-runs=2", "--prob-otel-file=link.jsonl", f"{option}={partial}", ret=4)
    if option == "--prob-otel-spill":  # the features' order: the OTLP file's own files first
        says = f"ERROR: --prob-otel-spill: {partial} is also the --prob-otel-file's PATH.partial path ({partial})"
    else:
        says = f"ERROR: --prob-otel-file's PATH.partial: {partial} is also the {option} path ({partial})"
    assert says + ": one output would replace the other; give each its own path" in result.stderr.str()
    assert not (pytester.path / "ran.txt").exists()
    assert partial.read_text(encoding="utf-8") == "the previous night's file\n"
    assert not (data / "o.jsonl").exists()


def test_the_otel_file_and_its_neighbours_of_other_names_run(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(bench_x=SIDE_EFFECT)
    session(
        pytester,
        "--prob-runs=2",
        "--prob-otel-file=o.jsonl",
        "--prob-journal=o.jsonl.journal",
        "--prob-json=o.partial.json",
        ret=0,
    )
    assert (pytester.path / "o.jsonl").stat().st_size > 0 and not (pytester.path / "o.jsonl.partial").exists()
    assert '{"journal":"pytest-probability"' in (pytester.path / "o.jsonl.journal").read_text(encoding="utf-8")


def test_the_merges_report_at_the_metrics_files_replay_progress_is_refused(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(bench_x=SIDE_EFFECT)
    for k in (1, 2):
        session(pytester, f"--prob-shard={k}/2", "--prob-runs=2", f"--prob-json=s{k}.json", ret=0)
    result = command(pytester, "merge", "s1.json", "s2.json", "-o", "m.jsonl.replayed", "--otel-file", "m.jsonl")
    assert (result.returncode, result.stderr) == (
        2,
        "error: --otel-file's PATH.replayed m.jsonl.replayed is also -o m.jsonl.replayed: give the merged "
        "metrics file another path\n",
    )
    assert not (pytester.path / "m.jsonl.replayed").exists() and not (pytester.path / "m.jsonl").exists()
