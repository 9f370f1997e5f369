"""``config.suite.default_suite``: the suite's name when none is given, the same in every checkout (issue 46,
item 2), read from what real git writes."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from pytest_probability.config.suite import default_suite

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="needs git")


def git(folder: Path, *args: str) -> None:
    base = ["git", "-c", "user.name=t", "-c", "user.email=t@example.invalid", "-c", "commit.gpgsign=false"]
    subprocess.run([*base, *args], cwd=folder, check=True, capture_output=True, timeout=60)


def repository(folder: Path, *remotes: tuple[str, str]) -> Path:
    folder.mkdir(parents=True)
    git(folder, "init", "-q")
    for name, url in remotes:
        git(folder, "remote", "add", name, url)
    return folder


@pytest.fixture
def ceiling(tmp_path: Path) -> dict[str, str]:
    """The environment: no repository above the test's folder counts."""
    return {"GIT_CEILING_DIRECTORIES": str(tmp_path)}


@pytest.mark.parametrize(
    "url",
    [
        "https://git.example.invalid/team/app.git",
        "https://git.example.invalid/team/app",
        "https://git.example.invalid/team/app/",
        "git@git.example.invalid:team/app.git",
        "ssh://git@git.example.invalid:2222/team/app.git",
        "/srv/git/app.git",
        "file:///srv/git/app/.git",
    ],
)
def test_the_name_is_the_repositorys_whatever_the_checkout_folder(
    tmp_path: Path, ceiling: dict[str, str], url: str
) -> None:
    for folder in ("runnerA/app", "runnerB/app@2", "agent/_work/1/s"):
        assert default_suite(repository(tmp_path / folder, ("origin", url)), ceiling) == "app"


def test_a_rootdir_inside_the_repository_adds_its_path(tmp_path: Path, ceiling: dict[str, str]) -> None:
    top = repository(tmp_path / "work" / "checkout", ("origin", "git@host:team/app.git"))
    inner = top / "benchmarks" / "llm"
    inner.mkdir(parents=True)
    assert default_suite(inner, ceiling) == "app/benchmarks/llm"
    assert default_suite(top / "benchmarks" / ".." / "benchmarks", ceiling) == "app/benchmarks"


def test_origin_first_then_the_first_remote_then_the_folder_holding_git(
    tmp_path: Path, ceiling: dict[str, str]
) -> None:
    both = repository(tmp_path / "a", ("upstream", "https://h/x/up.git"), ("origin", "https://h/x/mine.git"))
    assert default_suite(both, ceiling) == "mine"
    other = repository(tmp_path / "b", ("upstream", "https://h/x/up.git"))
    assert default_suite(other, ceiling) == "up"
    assert default_suite(repository(tmp_path / "local-only"), ceiling) == "local-only"


def test_a_worktree_is_named_as_its_repository(tmp_path: Path, ceiling: dict[str, str]) -> None:
    main = repository(tmp_path / "main")
    (main / "f").write_text("x")
    git(main, "add", "f")
    git(main, "commit", "-q", "-m", "x")
    git(main, "worktree", "add", "-q", str(tmp_path / "wt-feature"))
    assert default_suite(tmp_path / "wt-feature", ceiling) == "main"
    git(main, "remote", "add", "origin", "https://h/team/app.git")
    assert default_suite(tmp_path / "wt-feature", ceiling) == "app"


def test_outside_a_repository_the_rootdirs_name(tmp_path: Path, ceiling: dict[str, str]) -> None:
    plain = tmp_path / "unpacked" / "suite-1.2"
    plain.mkdir(parents=True)
    assert default_suite(plain, ceiling) == "suite-1.2"
    # a repository above the ceiling is not looked at, as git does not
    repository(tmp_path / "outer", ("origin", "https://h/team/outer.git"))
    inner = tmp_path / "outer" / "sub"
    inner.mkdir()
    assert default_suite(inner, {"GIT_CEILING_DIRECTORIES": str(tmp_path / "outer")}) == "outer/sub"
    assert default_suite(inner, {"GIT_CEILING_DIRECTORIES": str(inner)}) == "sub"
