"""End to end: shards run in checkouts at different paths, in folders of different names, merge (issue 46,
item 2).

Nothing a shard hands the merge may depend on the absolute path or the name of its workspace. Two runners
check the same repository out, one at ``…/runnerA/suite``, the other at ``…/runnerB/suite@2`` (Jenkins'
folder for a concurrent build); each gives the same quarantine file, prices file and baseline, one by an
absolute path and the other by a relative one. The merge takes them, as one night, and so does a journal
moved from one checkout to the other. Settings that differ in what a file held are still refused.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from sessions import command, session

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="needs git (the checkouts are repositories)")

BENCH = """
import pytest
from pytest_probability import record_usage


@pytest.mark.probability(runs=4, min_rate=0.1)
@pytest.mark.parametrize("word", ["alpha", "beta"])
def bench_words(word, request):
    record_usage(model="m", input_tokens=10, output_tokens=2)
    assert word != "beta" or request.node.prob_run != 3
"""
QUARANTINE = """
[[quarantine]]
pattern = "bench_words.py::bench_words::beta"
owner = "alice@example.org"
reason = "flaky since the model update (PROJ-1)"
until = 2099-12-31
"""
PRICES = '["m"]\ninput = 1.0\noutput = 2.0\n'


def checkout(folder: Path, baseline: str) -> Path:
    """A clone of the suite's repository at ``folder``: its files and the remote it was cloned from."""
    folder.mkdir(parents=True)
    for name, text in {
        "bench_words.py": BENCH,
        "q.toml": QUARANTINE,
        "prices.toml": PRICES,
        "pytest.ini": "[pytest]\nasyncio_default_fixture_loop_scope = function\n",
        "base.json": baseline,
    }.items():
        (folder / name).write_text(text, encoding="utf-8")
    for args in (["init", "-q"], ["remote", "add", "origin", "https://git.example.invalid/team/suite.git"]):
        subprocess.run(["git", *args], cwd=folder, check=True, capture_output=True, timeout=60)
    return folder


def shard(pytester: pytest.Pytester, folder: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """A session in ``folder`` (its rootdir: the checkout), with the prices file given relative to it."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_ADDOPTS", "GITHUB_"))}
    env["PYTHONPATH"] = os.pathsep.join(sys.path)
    env["GIT_CEILING_DIRECTORIES"] = str(pytester.path)  # never the repository the tests run in
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "--prob-prices=prices.toml", *args],
        cwd=folder,
        capture_output=True,
        text=True,
        timeout=180,
        env=env,
    )


@pytest.fixture
def baseline(pytester: pytest.Pytester) -> str:
    """A night's report of the suite, the baseline every runner downloads."""
    pytester.makepyfile(bench_words=BENCH)
    pytester.makeini("[pytest]\nasyncio_default_fixture_loop_scope = function\n")
    session(pytester, "--prob-json=night.json", ret=0, timeout=120)
    return (pytester.path / "night.json").read_text(encoding="utf-8")


def test_shards_of_checkouts_at_other_paths_and_folder_names_merge(pytester: pytest.Pytester, baseline: str) -> None:
    one = checkout(pytester.path / "runnerA" / "suite", baseline)
    two = checkout(pytester.path / "runnerB" / "suite@2", baseline)
    first = shard(
        pytester, one, "--prob-shard=1/2", f"--prob-json={pytester.path / 's1.json'}",
        f"--prob-quarantine={one / 'q.toml'}", f"--prob-baseline={one / 'base.json'}",
    )  # fmt: skip
    second = shard(
        pytester, two, "--prob-shard=2/2", f"--prob-json={pytester.path / 's2.json'}", "-n", "2",
        "--prob-quarantine=q.toml", "--prob-baseline=base.json",
    )  # fmt: skip
    assert first.returncode == 0 == second.returncode, first.stdout + first.stderr + second.stdout + second.stderr
    reports = [json.loads((pytester.path / f"s{k}.json").read_text(encoding="utf-8")) for k in (1, 2)]
    assert [r["shard"]["suite"] for r in reports] == ["suite", "suite"]  # the repository's, not the folder's
    assert reports[0]["shard"]["quarantine"]["file"] != reports[1]["shard"]["quarantine"]["file"]
    digests = {r["shard"]["compare"]["baseline_digest"] for r in reports}
    assert len(digests) == 1 and digests != {None}
    merged = command(pytester, "merge", "s1.json", "s2.json", "-o", "merged.json", "--prob-baseline", "night.json")
    assert merged.returncode == 0, merged.stdout + merged.stderr
    report = json.loads((pytester.path / "merged.json").read_text(encoding="utf-8"))
    assert report["totals"]["count"] == 8
    assert {row["label"]: row["passes"] for row in report["rows"]} == {"words::alpha": 4, "words::beta": 3}
    assert [entry["pattern"] for entry in report["quarantine"]["entries"]] == ["bench_words.py::bench_words::beta"]
    assert report["quarantine"]["cases"] == 1
    assert report["baseline"]["reports"] == 1
    assert report["settings"]["prices_digest"] == reports[0]["settings"]["prices_digest"]


def test_a_journal_moves_between_checkouts_and_what_a_file_held_is_still_compared(
    pytester: pytest.Pytester, baseline: str
) -> None:
    one = checkout(pytester.path / "runnerA" / "suite", baseline)
    two = checkout(pytester.path / "runnerB" / "suite@2", baseline)
    journal = pytester.path / "night.jsonl"
    written = shard(pytester, one, f"--prob-journal={journal}")
    assert written.returncode == 0, written.stdout + written.stderr
    resumed = shard(pytester, two, f"--prob-journal={journal}")
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    assert "Journal: 8 run(s) resumed" in resumed.stdout
    # the same paths with other contents: a quarantine of other entries, another baseline
    (two / "q.toml").write_text(QUARANTINE.replace("beta", "alpha"), encoding="utf-8")
    (two / "base.json").write_text(baseline.replace('"passes": 4', '"passes": 3', 1), encoding="utf-8")
    for option, field in (
        ("--prob-quarantine=q.toml", "quarantine: entries"),
        ("--prob-baseline=base.json", "compare: baseline_digest"),
    ):
        for k, folder in ((1, one), (2, two)):
            result = shard(
                pytester, folder, f"--prob-shard={k}/2", f"--prob-json={pytester.path / f'o{k}.json'}", option
            )
            assert result.returncode == 0, result.stdout + result.stderr
        merged = command(pytester, "merge", "o1.json", "o2.json", "-o", "merged.json", "--prob-baseline", "night.json")
        assert merged.returncode == 2 and f"were run with different settings ({field}:" in merged.stderr, merged.stderr
