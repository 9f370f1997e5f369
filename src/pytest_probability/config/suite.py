"""The suite's name when none is given (``--prob-suite``, ini ``prob_suite``): the same in every checkout.

What a user means by the same suite is the same project's benchmarks, wherever a runner checked it out:
``/home/runner/work/app/app``, Jenkins' ``workspace/app@2`` (a concurrent build), Azure Pipelines' ``s``,
another agent's home. So the name is the repository's, as its remote names it (``git@host:team/app.git``
and ``https://host/team/app`` are ``app``; ``origin``, else the first remote), followed by the rootdir's
path inside the repository when the rootdir is not its top (``app/benchmarks``): neither depends on where
the checkout is or on its folder's name. A repository without a remote is named by the folder that holds
its ``.git`` (so its worktrees are named alike), and a rootdir outside any repository by its own name (a source archive unpacked: give ``prob_suite`` in the ini
file there).

Read from the files git keeps, without running git (every process of a session reads it, xdist's workers
too): the ``.git`` folder (or a worktree's or submodule's ``.git`` file naming it, and its ``commondir``)
and its ``config``, searched upwards from the rootdir as git searches, stopping at
``GIT_CEILING_DIRECTORIES``. Anything unreadable counts as no repository.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from pathlib import Path

_SECTION = re.compile(r'^\[\s*remote\s+"(?P<name>[^"]*)"\s*\]')


def default_suite(rootdir: Path, environ: Mapping[str, str] | None = None) -> str:
    """The suite's name of a session whose rootdir is ``rootdir`` (module docstring)."""
    root = Path(os.path.realpath(rootdir))
    found = _repository(root, os.environ if environ is None else environ)
    if found is None:
        return rootdir.name
    top, common = found
    name = _remote_name(common / "config") or (common.parent.name if common.name == ".git" else _name_of(common.name))
    inside = root.relative_to(top).as_posix()
    return name if inside == "." else f"{name}/{inside}"


def _repository(start: Path, environ: Mapping[str, str]) -> tuple[Path, Path] | None:
    """The top folder of the checkout holding ``start``, and the repository's git folder (a worktree's common
    one: every worktree of a repository is named alike); None outside one."""
    ceilings = {
        os.path.realpath(entry) for entry in environ.get("GIT_CEILING_DIRECTORIES", "").split(os.pathsep) if entry
    }
    folder = start
    while True:
        marker = folder / ".git"
        try:
            if marker.is_dir():
                return folder, _common(marker)
            if marker.is_file():
                text = marker.read_text(encoding="utf-8", errors="replace").strip()
                if text.startswith("gitdir:"):
                    return folder, _common(folder / text[len("gitdir:") :].strip())
        except OSError:
            return None
        parent = folder.parent
        if parent == folder or str(folder) in ceilings:  # git looks in a ceiling folder, never above it
            return None
        folder = parent


def _common(gitdir: Path) -> Path:
    """A git folder's common folder: a worktree's is the one its ``commondir`` names, else itself."""
    common = gitdir / "commondir"
    if common.is_file():
        return Path(os.path.realpath(gitdir / common.read_text(encoding="utf-8", errors="replace").strip()))
    return Path(os.path.realpath(gitdir))


def _remote_name(config: Path) -> str | None:
    """The repository's name in its remote's URL: ``origin``'s, else the first remote's; None without one."""
    try:
        lines = config.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return None
    urls: dict[str, str] = {}
    remote = None
    for line in lines:
        text = line.strip()
        if text.startswith("["):
            match = _SECTION.match(text)
            remote = match.group("name") if match else None
        elif remote is not None and remote not in urls and "=" in text:
            key, value = text.split("=", 1)
            if key.strip().lower() == "url":
                urls[remote] = value.strip().strip('"')
    for url in ([urls["origin"]] if "origin" in urls else []) + list(urls.values()):
        name = _name_of(url)
        if name:
            return name
    return None


def _name_of(url: str) -> str:
    """``app`` of ``git@host:team/app.git``, ``https://host/team/app/``, ``/srv/git/app.git``."""
    text = url.rstrip("/\\")
    if text.endswith(".git"):
        text = text[: -len(".git")].rstrip("/\\")
    return re.split(r"[/:\\]", text)[-1]
