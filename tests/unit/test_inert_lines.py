"""``text.inert``: no line the plugin prints is a workflow command to GitHub's runner (issue 46, item 9). The
runner's grammar is ``printed.runner_command``; the end-to-end test is tests/e2e/test_workflow_commands.py."""

from __future__ import annotations

import pytest
from printed import runner_command

from pytest_probability.text import inert, label_text, printable, printable_line, printable_lines

HOSTILE = [
    "::warning::injected",
    "  ::add-mask::hunter2  0/2",
    "\u3000\u00a0::error file=x::boom",  # blanks .NET's TrimStart removes too
    "::ERROR::upper case",
    "row  ##[warning]legacy form anywhere",
    "##[add-mask]x",
    "::group::a ##[endgroup]",
]


@pytest.mark.parametrize("line", HOSTILE)
def test_a_line_the_runner_would_read_as_a_command_is_made_inert(line: str) -> None:
    assert runner_command(line) is not None  # the grammar reads it as given
    shown = inert(line)
    assert runner_command(shown) is None
    assert inert(shown) == shown  # once is enough: the table's cells and its lines both go through it


@pytest.mark.parametrize("line", ["  triage::refund  3/4", "a :: b", "  Tokens:  gpt-4o::mini", "# [x]", ":x"])
def test_ordinary_text_is_left_as_it_is(line: str) -> None:
    assert inert(line) == line


def test_the_escapes_read_as_printable_shows_control_characters() -> None:
    assert inert("  ::warning::x") == "  \\x3a:warning::x"
    assert inert("a ##[error]b") == "a ##\\x5berror]b"
    assert printable_line("::x\n::warning::y") == "\\x3a:x\\n::warning::y"  # one line: the break is escaped
    assert printable_lines("ok\n::warning::y") == "ok\n\\x3a:warning::y"  # each line of a message
    assert label_text("::warning::" + "x" * 200).startswith("\\x3a:warning::")


def test_every_printed_text_escapes_the_older_form_anywhere() -> None:
    """The texts pytest prints for the plugin (warnings, skip and xfail reasons) go through ``printable``: their
    lines start with pytest's own words, but ``##[`` is read anywhere in a line."""
    warning = printable("gate of x ##[error]injected cannot pass with 2 runs")
    assert warning == "gate of x ##\\x5berror]injected cannot pass with 2 runs"
    assert runner_command(f"  bench_x.py:7: InfeasibleGateWarning: {warning}") is None
    assert printable(warning) == warning
