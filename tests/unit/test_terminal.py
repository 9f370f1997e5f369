"""Unit tests of report_terminal.py: the table is rendered from a Summary, no terminal needed."""

from __future__ import annotations

import pytest

from pytest_probability.aggregate.cases import aggregate
from pytest_probability.model.case import CaseRef
from pytest_probability.model.run import RunRecord, Usage
from pytest_probability.protocols import Facet
from pytest_probability.report import terminal as report_terminal
from pytest_probability.report.terminal import money, percent, render, status_text
from pytest_probability.vocabulary import ERROR, FAIL, PASS, SKIP

_order = iter(range(10_000))


def make_case(label: str) -> CaseRef:
    benchmark, _, case_id = label.partition("::")
    key = f"bench_x.py::bench_{benchmark}" + (f"::{case_id}" if case_id else "")
    return CaseRef(key=key, benchmark=benchmark, case=case_id, label=label, order=next(_order), runs=0)


def runs(label: str, outcomes: str, usage=(), extra_cost: float = 0.0) -> list[RunRecord]:
    """One record per letter of ``outcomes`` (p f e s); usage and extra cost go on the first run."""
    ref = make_case(label)
    letters = {"p": PASS, "f": FAIL, "e": ERROR, "s": SKIP}
    return [
        RunRecord(
            case=ref,
            run=index,
            nodeid=f"{ref.key}[run{index}]",
            outcome=letters[letter],
            usage=tuple(usage) if index == 1 else (),
            extra_cost=extra_cost if index == 1 else 0.0,
        )
        for index, letter in enumerate(outcomes, start=1)
    ]


def texts(lines):
    return [text for text, _ in lines]


# -- the table of the issue, to the character ---------------------------------------

ISSUE_TABLE = """\
  classify::is_question            10/10  $0.0020
  classify::identify_pii            7/10  $0.0020  FLAKY
  classify::extract_amount          0/10  $0.0020  FAIL
  triage::refund-terse              8/10  $0.0010  FLAKY
  triage::refund-chain_of_thought  10/10  $0.0040

  Overall: 35/50 passed (70%)
  Cost:    $0.0110
  Tokens:  m-small  1,200 in / 80 out / 640 cached  $0.0010
           m-large  4,800 in / 900 out              $0.0040"""


def issue_summary():
    return aggregate(
        runs("classify::is_question", "p" * 10, extra_cost=0.002)
        + runs("classify::identify_pii", "pppfpfpppf", extra_cost=0.002)
        + runs("classify::extract_amount", "f" * 10, extra_cost=0.002)
        + runs("triage::refund-terse", "ppfppppfpp", usage=[Usage("m-small", 1200, 80, 640, 0.001)])
        + runs("triage::refund-chain_of_thought", "p" * 10, usage=[Usage("m-large", 4800, 900, 0, 0.004)])
    )


def test_render_matches_the_issue_example_exactly():
    assert "\n".join(texts(render(issue_summary()))) == ISSUE_TABLE


def test_render_markup_per_status_and_bold_overall():
    summary = aggregate(
        runs("pass", "pp")
        + runs("flaky", "pf")
        + runs("errored", "pe")
        + runs("fail", "ff")
        + runs("error", "ee")
        + runs("skip", "ss")
    )
    lines = render(summary)
    assert [markup for _, markup in lines[:6]] == [
        {},
        {"yellow": True},
        {"yellow": True},
        {"red": True},
        {"red": True},
        {"yellow": True},
    ]
    assert lines[6] == ("", {})
    assert lines[7] == ("  Overall: 4/10 passed (40%), 2 skipped", {"bold": True})


def test_render_every_status_text_aligned_without_cost_column():
    summary = aggregate(
        runs("all_pass", "ppp")
        + runs("flaky", "pfp")
        + runs("errored", "pepe")
        + runs("flaky_errored", "pfepe")
        + runs("fail", "fff")
        + runs("fail_errored", "ffe")
        + runs("error", "eee")
        + runs("skipped", "sss")
        + runs("some_skipped", "pspsf")
    )
    assert texts(render(summary)) == [
        "  all_pass       3/3",
        "  flaky          2/3  FLAKY",
        "  errored        2/4  2 ERRORED",
        "  flaky_errored  2/5  FLAKY (2 errored)",
        "  fail           0/3  FAIL",
        "  fail_errored   0/3  FAIL (1 errored)",
        "  error          0/3  ERROR",
        "  skipped        0/0  3 SKIPPED",
        "  some_skipped   2/3  FLAKY  (2 skipped)",
        "",
        "  Overall: 11/27 passed (41%), 5 skipped",
    ]


@pytest.mark.parametrize(
    ("outcomes", "expected"),
    [
        ("pp", ""),
        ("pps", "(1 skipped)"),
        ("pfss", "FLAKY  (2 skipped)"),
        ("pes", "1 ERRORED  (1 skipped)"),
        ("pfes", "FLAKY (1 errored)  (1 skipped)"),
        ("fs", "FAIL  (1 skipped)"),
        ("fees", "FAIL (2 errored)  (1 skipped)"),
        ("es", "ERROR  (1 skipped)"),
        ("s", "1 SKIPPED"),
    ],
)
def test_status_text(outcomes, expected):
    (row,) = aggregate(runs("x", outcomes)).rows
    assert status_text(row) == expected


def test_fraction_column_is_right_aligned_and_label_left_aligned():
    summary = aggregate(runs("a", "p" * 12) + runs("long_label", "p") + runs("b", "pf" * 50))
    assert texts(render(summary))[:3] == [
        "  a            12/12",
        "  long_label     1/1",
        "  b           50/100  FLAKY",
    ]


def test_cost_column_and_cost_line_only_when_cost_recorded():
    without = aggregate(runs("a", "pp") + runs("b", "pf"))
    lines = texts(render(without))
    assert not any("$" in line for line in lines)
    assert not any(line.strip().startswith("Cost:") for line in lines)

    with_cost = aggregate(runs("a", "pp") + runs("b", "pf", extra_cost=1234.5))
    assert texts(render(with_cost)) == [
        "  a  2/2      $0.0000",
        "  b  1/2  $1,234.5000  FLAKY",
        "",
        "  Overall: 3/4 passed (75%)",
        "  Cost:    $1,234.5000",
    ]


def test_token_only_usage_shows_tokens_but_no_cost_column():
    summary = aggregate(runs("a", "pp", usage=[Usage("m", 1_234_567, 89_012)]))
    assert texts(render(summary)) == [
        "  a  2/2",
        "",
        "  Overall: 2/2 passed (100%)",
        "  Tokens:  m  1,234,567 in / 89,012 out",
    ]


def test_cost_of_a_skipped_run_shows_the_cost_column():
    summary = aggregate(runs("a", "s", extra_cost=0.5) + runs("b", "p"))
    assert texts(render(summary)) == [
        "  a  0/0  $0.5000  1 SKIPPED",
        "  b  1/1  $0.0000",
        "",
        "  Overall: 1/1 passed (100%), 1 skipped",
        "  Cost:    $0.5000",
    ]


def test_token_lines_cached_only_when_non_zero_and_cost_per_model():
    summary = aggregate(
        runs("a", "p", usage=[Usage("gpt-long-name", 1000, 2000, 0, 0.0)])
        + runs("b", "p", usage=[Usage("m", 5, 6, 1_000_000, 1.5), Usage("gpt-long-name", 1, 1, 0, 0.25)])
        + runs("c", "p", usage=[Usage("zero", 0, 0, 0, 0.0)])
    )
    assert texts(render(summary))[-3:] == [
        "  Cost:    $1.7500",
        "  Tokens:  gpt-long-name  1,001 in / 2,001 out             $0.2500",
        "           m              5 in / 6 out / 1,000,000 cached  $1.5000",
    ]


def test_token_lines_without_any_cached_tokens():
    summary = aggregate(runs("a", "p", usage=[Usage("a", 10, 20), Usage("bb", 3000, 4)]))
    assert texts(render(summary))[-2:] == [
        "  Tokens:  a   10 in / 20 out",
        "           bb  3,000 in / 4 out",
    ]


def test_no_rows():
    assert render(aggregate([])) == [("  no benchmark runs were executed", {})]


class Cells(Facet):
    """A facet with one table column: the given cell per row label."""

    def __init__(self, cells):
        self.by_label = cells

    def cells(self, row):
        return (self.by_label.get(row.label, ""),)


def test_extra_columns_are_aligned_after_the_fraction():
    summary = aggregate(runs("a", "pp") + runs("bb", "pf", extra_cost=0.25))
    column = {"a": "[0.34, 1.00]", "bb": "[0, 1]"}
    assert texts(render(summary, [Cells(column)]))[:2] == [
        "  a   2/2  [0.34, 1.00]  $0.0000",
        "  bb  1/2        [0, 1]  $0.2500  FLAKY",
    ]


@pytest.mark.parametrize(
    ("part", "whole", "expected"),
    [
        (0, 0, "-"),
        (0, 5, "0%"),
        (5, 5, "100%"),
        (1, 2, "50%"),
        (35, 50, "70%"),
        (1, 3, "33%"),
        (2, 3, "67%"),
        (1, 201, "1%"),  # rounds to 0 but something passed
        (1, 1000, "1%"),
        (200, 201, "99%"),  # rounds to 100 but something did not pass
        (999, 1000, "99%"),
    ],
)
def test_percent(part, whole, expected):
    assert percent(part, whole) == expected


@pytest.mark.parametrize(
    ("amount", "expected"),
    [(0, "$0.0000"), (0.00005, "$0.0001"), (0.011, "$0.0110"), (1234567.891, "$1,234,567.8910")],
)
def test_money(amount, expected):
    assert money(amount) == expected


class FakeTerminalReporter:
    def __init__(self):
        self.calls = []

    def write_sep(self, sep, title, **markup):
        self.calls.append(("sep", sep, title, markup))

    def write_line(self, line, **markup):
        self.calls.append(("line", line, markup))


def test_write_sends_section_lines_and_notes_with_markup():
    reporter = FakeTerminalReporter()
    summary = aggregate(runs("a", "pf"))
    report_terminal.write(reporter, summary, notes=["could not export"])
    assert reporter.calls == [
        ("sep", "=", "probability", {}),
        ("line", "  a  1/2  FLAKY", {"yellow": True}),
        ("line", "", {}),
        ("line", "  Overall: 1/2 passed (50%)", {"bold": True}),
        ("line", "  could not export", {"yellow": True}),
    ]


def test_an_extra_column_empty_on_every_row_takes_no_space():
    summary = aggregate(runs("a", "pp") + runs("bb", "pf"))
    assert texts(render(summary, [Cells({})]))[:2] == [
        "  a   2/2",
        "  bb  1/2  FLAKY",
    ]
