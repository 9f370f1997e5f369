"""End to end: the merge's refusals name what they refuse (issue 46, items 13 and 15b).

Shards of two versions of a suite (one run before a commit that added cases and changed a mark, one after)
are refused since ``shard.collected`` exists; the refusal now names the cases one version has and the other
lacks, and those that changed, the first five of each and how many more. A shard report whose
``shard.collected`` is null (or missing) was merged without that check: it is refused, naming the file.
"""

from __future__ import annotations

import json

import pytest
from sessions import command, session

#: Version 1 of the suite; version 2 adds cases ``new0`` to ``new6`` and the benchmark ``bench_more``.
V1 = """
import pytest


@pytest.mark.parametrize("word", ["a", "b"])
def bench_words(word):
    pass
"""
V2 = """
import pytest


@pytest.mark.parametrize("word", ["a", "b", *[f"new{i}" for i in range(7)]])
def bench_words(word):
    pass


@pytest.mark.probability(runs=6)
def bench_more():
    pass
"""


def shard(pytester: pytest.Pytester, source: str, k: int, *args: str) -> None:
    pytester.makepyfile(bench_x=source)
    session(pytester, f"--prob-shard={k}/2", "--prob-runs=4", f"--prob-json=s{k}.json", *args, ret=0)


def test_shards_of_two_suite_versions_are_refused_naming_the_cases(pytester: pytest.Pytester) -> None:
    shard(pytester, V1, 1)
    shard(pytester, V2, 2)
    result = command(pytester, "merge", "s1.json", "s2.json", "-o", "merged.json")
    assert result.returncode == 2, result.stdout + result.stderr
    assert result.stderr == (
        "error: s2.json and s1.json are not shards of one suite: they collected different cases (2 cases, 8 runs "
        "in s1.json; 10 cases, 40 runs in s2.json); only in s2.json: bench_x.py::bench_words::new0, "
        "bench_x.py::bench_words::new1, bench_x.py::bench_words::new2, bench_x.py::bench_words::new3, "
        "bench_x.py::bench_words::new4 and 3 more; run every shard on the same checkout, files and selection "
        "(-k, -m)\n"
    )
    assert not (pytester.path / "merged.json").exists()


def test_a_case_whose_runs_changed_is_named(pytester: pytest.Pytester) -> None:
    shard(pytester, V1, 1)
    shard(
        pytester,
        V1.replace("@pytest.mark.parametrize", "@pytest.mark.probability(min_rate=0.5)\n@pytest.mark.parametrize"),
        2,
    )
    result = command(pytester, "merge", "s1.json", "s2.json", "-o", "merged.json")
    assert result.returncode == 2, result.stdout + result.stderr
    assert (
        "; with other runs or marks: bench_x.py::bench_words::a, bench_x.py::bench_words::b; run every shard"
        in result.stderr
    ), result.stderr


@pytest.mark.parametrize(
    ("edit", "says"),
    [
        (
            lambda shard: shard.update(collected=None),
            "error: s1.json: shard.collected is null: the shard's cases are not known (every xdist worker of it "
            "died before its end), so it cannot be checked to be a shard of this suite; run that shard again\n",
        ),
        (lambda shard: shard.pop("collected"), "error: s1.json: shard.collected is missing\n"),
    ],
    ids=["null", "missing"],
)
def test_a_shard_whose_collected_suite_is_not_known_is_refused(pytester: pytest.Pytester, edit, says: str) -> None:  # type: ignore[no-untyped-def]
    shard(pytester, V1, 1)
    shard(pytester, V1, 2)
    assert command(pytester, "merge", "s1.json", "s2.json", "-o", "merged.json").returncode == 0
    (pytester.path / "merged.json").unlink()
    report = json.loads((pytester.path / "s1.json").read_text(encoding="utf-8"))
    edit(report["shard"])
    (pytester.path / "s1.json").write_text(json.dumps(report), encoding="utf-8")
    result = command(pytester, "merge", "s1.json", "s2.json", "-o", "merged.json")
    assert (result.returncode, result.stderr) == (2, says)
    assert not (pytester.path / "merged.json").exists()
