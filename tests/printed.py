"""Reading what a pytester session printed: node ids and the probability table."""

from __future__ import annotations

import re

import pytest


def node_ids(result: pytest.RunResult) -> list[str]:
    """Node ids printed by ``--collect-only -q`` (or ``-q`` summaries), in order."""
    return [line.strip() for line in result.outlines if "::" in line and not line.startswith(("FAILED", "ERROR"))]


ROW = re.compile(r"^  (?P<label>\S.*?)\s{2,}(?P<fraction>\d+/\d+)(?P<rest>.*)$")


def table_lines(result: pytest.RunResult) -> list[str]:
    """The row lines of the probability table, exactly as printed."""
    lines = result.outlines
    starts = [i for i, line in enumerate(lines) if re.fullmatch(r"=+ probability =+", line)]
    assert len(starts) == 1, f"expected one probability table, found {len(starts)}"
    rows = []
    for line in lines[starts[0] + 1 :]:
        if not line.strip():
            break
        rows.append(line)
    return rows


def table(result: pytest.RunResult) -> list[str]:
    """Rows as ``label fraction [cost] [status]``, single-spaced.

    Interval columns (``[54%, 100%]``) are left out: they are another
    concern's, and these tests are about which runs were counted.
    """
    rows = []
    for line in table_lines(result):
        match = ROW.match(line)
        assert match, f"not a table row: {line!r}"
        rest = re.sub(r"\[[^\]]*\]", " ", match["rest"])
        rows.append(" ".join([match["label"], match["fraction"], *rest.split()]))
    return rows


def labels(result: pytest.RunResult) -> list[str]:
    return [ROW.match(line)["label"] for line in table_lines(result)]


#: The commands GitHub's runner acts on (actions/runner, src/Runner.Worker/*CommandExtension*; case-insensitive).
RUNNER_COMMANDS = frozenset(
    "warning error notice debug add-mask set-output save-state set-env add-path add-matcher remove-matcher group "
    "endgroup echo stop-commands".split()
)


def runner_command(line: str) -> tuple[str, str] | None:
    """(command, the rest) when GitHub's runner reads ``line`` as a workflow command, else None: as
    actions/runner's ``ActionCommand.TryParseV2`` (``::name props::data`` once leading blanks are trimmed),
    then its older ``TryParse`` (``##[name props]data`` anywhere in the line)."""
    trimmed = line.lstrip()
    if trimmed.startswith("::"):
        end = trimmed.find("::", 2)
        if end >= 0 and trimmed[2:end].split(" ", 1)[0].lower() in RUNNER_COMMANDS:
            return trimmed[2:end].split(" ", 1)[0], trimmed[2:]
    start = line.find("##[")
    if start >= 0:
        end = line.find("]", start)
        if end >= 0 and line[start + 3 : end].split(" ", 1)[0].lower() in RUNNER_COMMANDS:
            return line[start + 3 : end].split(" ", 1)[0], line[start + 3 :]
    return None
