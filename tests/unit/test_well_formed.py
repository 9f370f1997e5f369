"""``text.well_formed``: what the plugin makes of text UTF-8 cannot encode (issue 46, item 1)."""

from __future__ import annotations

import json

import pytest

from pytest_probability.text import well_formed, well_formed_data

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
