"""End to end: every text the plugin hands to pytest to print is escaped as the probability section is.

pytest prints some of the plugin's texts itself: a verdict item's failure (its section and the
short summary), a skipped verdict's and a stopped run's reason, a judged run's xfail reason, the
plugin's warnings, a collection error. Control characters in a case id (pytest keeps them when
``disable_test_id_escaping_and_forfeit_all_rights_to_community_support`` is set) or in an error
message must not reach the terminal raw there either (issue 23, item 9).
"""

from __future__ import annotations

import pytest

RAW = ("\x1b", "\x07", "\x00")

BENCH = """
import pytest

IDS = ["a\\x1b[31mred\\x07", "b\\x1b[2Jclear"]


@pytest.mark.probability(runs=4, min_rate=0.9)
@pytest.mark.parametrize("x", IDS, ids=IDS)
def bench_gated(x):
    if x.startswith("b"):
        raise RuntimeError("model said \\x1b[2J\\x07 boom")
    assert False, "wrong \\x1b[31m answer"
"""


def _lines(text: str, needle: str) -> list[str]:
    return [line for line in text.splitlines() if needle in line]


def _plugin_part(line: str, needle: str) -> str:
    """The part of a line from the plugin's text on (pytest writes the node id before it, raw under the forfeit option)."""
    return line[line.index(needle) :]


@pytest.mark.parametrize("xdist", [[], ["-n", "2"]], ids=["serial", "xdist"])
def test_texts_pytest_prints_for_the_plugin_are_escaped(pytester: pytest.Pytester, xdist: list[str]) -> None:
    pytester.makeini(
        "[pytest]\ndisable_test_id_escaping_and_forfeit_all_rights_to_community_support = true\nprob_errors = exclude\n"
    )
    pytester.makepyfile(bench_text=BENCH)
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "-rxsf", *xdist, timeout=120)
    assert result.ret == 1
    out = result.stdout.str()
    # The verdict item's failure text, in its section and in the short summary.
    failures = _lines(out, "gate of gated::a")
    assert failures, out
    for line in failures:
        part = _plugin_part(line, "gate of gated::a")
        assert part.startswith("gate of gated::a\\x1b[31mred\\x07"), line
        assert not any(c in part for c in RAW), repr(line)
    # The warning that the gate cannot pass with 4 runs.
    warned = _lines(out, "InfeasibleGateWarning: gate of gated::")
    assert len(warned) == 2, out
    assert not any(c in line for line in warned for c in RAW), warned
    # The xfail reasons of the judged runs: the assertion message, and the first line of an error
    # that prob_errors = exclude leaves out of the gate.
    reasons = _lines(out, " - probability gate")
    assert reasons, out
    for line in reasons:
        part = _plugin_part(line, " - probability gate")
        assert not any(c in part for c in RAW), repr(line)
    assert any("RuntimeError: model said \\x1b[2J\\x07 boom" in line for line in reasons), reasons
    assert any("wrong \\x1b[31m answer" in line for line in reasons), reasons
    # And the probability section, as before.
    section = out[out.index("= probability =") : out.index("short test summary info")]
    assert not any(c in section for c in RAW), repr(section)


def test_a_collection_error_naming_a_case_is_escaped(pytester: pytest.Pytester) -> None:
    pytester.makeini(
        "[pytest]\ndisable_test_id_escaping_and_forfeit_all_rights_to_community_support = true\nprob_max_runs = 3\n"
    )
    pytester.makepyfile(
        bench_text="""
import pytest

@pytest.mark.probability(runs=2)
@pytest.mark.parametrize("x", ["c\\x1b[2J", "d\\x07"], ids=["c\\x1b[2J", "d\\x07"])
def bench_many(x):
    pass
"""
    )
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", timeout=60)
    assert result.ret == pytest.ExitCode.INTERRUPTED
    errors = _lines(result.stdout.str(), "runs of bench_text.py::bench_many::d")
    assert errors, result.stdout.str()
    for line in errors:
        part = _plugin_part(line, "runs of bench_text.py::bench_many::d")
        assert part.startswith("runs of bench_text.py::bench_many::d\\x07 bring"), repr(line)
