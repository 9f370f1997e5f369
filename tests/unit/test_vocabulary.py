"""Node ids read at collection without a regex per item (issue 24): each fast path answers what its
regex, the specification, answers, for every string."""

from __future__ import annotations

import random
import types

import pytest

from pytest_probability.decide.book import DecisionBook
from pytest_probability.protocols import Registry
from pytest_probability.vocabulary import RUN_ID, benchmark_verdict_id, parse_run_id, verdict_item_id

#: The pieces node ids are made of, and the ones that trip a hand-written parser: brackets, colons,
#: digits that are not ASCII (``\d`` matches them), a newline (``$`` matches before a last one).
PIECES = [
    "[run",
    "::run",
    "]",
    "[",
    "::",
    ":",
    "run",
    "1",
    "12",
    "\u0663",
    "\u00b2",
    "\n",
    "a",
    "-",
    "[gate]",
    "::gate",
    "[run3]",
    "::run4",
    "[baseline]",
    "[compare:",
    "compare",
    "baseline",
    "[compare:arm]",
]


def by_regex(nodeid: str) -> tuple[str, int] | None:
    match = RUN_ID.match(nodeid)
    return None if match is None else (match.group("key"), int(match.group("a") or match.group("b")))


def node_ids(count: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    return ["".join(rng.choice(PIECES) for _ in range(rng.randint(0, 8))) for _ in range(count)]


@pytest.mark.parametrize(
    "nodeid",
    [
        "bench_x.py::bench_t[run3]",
        "bench_x.py::bench_t::run3",
        "bench_x.py::b::refund-terse[run12]",
        "a[b][run12]",
        "x[run]",
        "x[run3]y",
        "x[run-3]",
        "x[run\u0663]",
        "x[run\u00b2]",
        "a\nb[run3]",
        "a[run3]\n",
        "::run4\n",
        "",
        "[run3]",
        "bench_x.py::bench_t[gate]",
    ],
)
def test_a_run_id_parses_as_its_regex_says(nodeid: str) -> None:
    assert parse_run_id(nodeid) == by_regex(nodeid)


def test_parse_run_id_agrees_with_the_regex_on_generated_node_ids() -> None:
    ids = node_ids(50_000, seed=24)
    assert sum(by_regex(nodeid) is not None for nodeid in ids) > 1_000  # the runs are well represented
    assert [nodeid for nodeid in ids if parse_run_id(nodeid) != by_regex(nodeid)] == []


def test_the_books_expectations_are_the_regexes() -> None:
    """``DecisionBook.expect`` tests a substring before each verdict regex: the same verdict items,
    gated cases and expected runs as matching every node id against every regex."""
    ids = node_ids(20_000, seed=25) + [
        "b.py::bench_t[run1]",
        "b.py::bench_t[run2]",
        "b.py::bench_t[gate]",
        "b.py::bench_t[baseline]",
        "b.py::bench_t[compare:few_shot]",
    ]
    kinds = {"baseline": None, "compare": None}
    parts = Registry()
    for name in kinds:
        parts.add(verdict_kinds=types.SimpleNamespace(kind=name))
    book = DecisionBook(specs=None, parts=parts)  # type: ignore[arg-type]
    book.expect(ids)
    judged, scopes, gated, expected = {}, {}, set(), {}
    for nodeid in ids:
        kind = next((k for k in kinds if benchmark_verdict_id(k).match(nodeid)), None)
        if kind is not None:
            judged[nodeid] = kind
            scopes[nodeid] = benchmark_verdict_id(kind).match(nodeid).group("scope")  # type: ignore[union-attr]
            continue
        match = verdict_item_id("gate").match(nodeid)
        if match:
            gated.add(match.group("key"))
            continue
        run = by_regex(nodeid)
        key = run[0] if run is not None else nodeid
        expected[key] = expected.get(key, 0) + 1
    assert book.judged == judged and book.scopes == scopes
    assert book.gated == gated and book.expected == expected
    assert book.expected["b.py::bench_t"] == 2 and "b.py::bench_t" in book.gated
