"""``text``: what the plugin makes of the text it prints and writes.

``text.inert``: no line the plugin prints is a workflow command to GitHub's runner (issue 46, item 9). The
runner's grammar is ``printed.runner_command``; the end-to-end test is tests/e2e/test_workflow_commands.py.
``text.well_formed``: what the plugin makes of text UTF-8 cannot encode (issue 46, item 1)."""

from __future__ import annotations

import json

import pytest
from printed import runner_command

from pytest_probability.text import (
    inert,
    label_text,
    printable,
    printable_line,
    printable_lines,
    well_formed,
    well_formed_data,
)

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


# -- text.well_formed ------------------------------------------------------------------------------

LONE = json.loads('"fine \\ud83d"')


@pytest.mark.parametrize(
    ("given", "expected"),
    [
        (LONE, "fine \ufffd"),  # a lone high surrogate: U+FFFD
        ("\ude00 x", "\ufffd x"),  # a lone low one
        ("\ud83d\ude00!", "\U0001f600!"),  # a pair of code points: the character it encodes
        ("\ude00\ud83d", "\ufffd\ufffd"),  # in the wrong order: two lone ones
        ("bench_\udcff.py", "bench_\ufffd.py"),  # a file name's undecodable byte (surrogateescape)
    ],
)
def test_surrogates_become_the_text_a_utf8_decoder_would_make(given: str, expected: str) -> None:
    assert well_formed(given) == expected
    expected.encode("utf-8")  # encodable


@pytest.mark.parametrize("given", ["", "ascii", "é ünïcödé 😀 中文", "\ufffd"])
def test_well_formed_text_is_returned_as_it_is(given: str) -> None:
    assert well_formed(given) is given


def test_data_is_walked_and_left_alone_when_nothing_needs_it() -> None:
    clean = {"a": [1, "b", ("c", {"d": None})], "e": 2.5}
    assert well_formed_data(clean) is clean
    given = {"a": [1, "b", ("c", {LONE: LONE})], "e": 2.5, "f": "same"}
    fixed = well_formed_data(given)
    assert fixed == {"a": [1, "b", ("c", {"fine \ufffd": "fine \ufffd"})], "e": 2.5, "f": "same"}
    assert fixed["f"] is given["f"] and given["a"][2][1] == {LONE: LONE}  # the input is not changed
    json.dumps(fixed, ensure_ascii=False).encode("utf-8")
