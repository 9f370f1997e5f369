"""End to end: a quarantined case's gate item in JUnit XML, and a quoted ``until`` date (issue 46, items 11, 12).

junitxml writes a testcase's properties from its teardown report, so ``probability_quarantine`` must be on the
gate item's teardown report, where the executing process (an xdist worker too) makes it; read back with
junitparser. ``until = "2026-12-31"``, as many TOML files write a date, is that date; anything else quoted is
still a usage error naming the entry.
"""

from __future__ import annotations

import json
from functools import partial

import pytest
import sessions
from junitparser import JUnitXml, Properties

BENCH = """
import pytest


@pytest.mark.probability(runs=10, min_rate=0.9)
def bench_bad(request):
    assert request.node.prob_run <= 3


@pytest.mark.probability(runs=10, min_rate=0.2)
def bench_good(request):
    pass
"""

ENTRY = """
[[quarantine]]
pattern = "bench_q.py::bench_bad"
owner = "alice@example.org"
reason = "PROJ-123"
until = {until}
"""


session = partial(sessions.session, gate_timeout=60, options=("--prob-quarantine=q.toml",))


def properties(case: object) -> dict[str, str]:
    return {p.name: p.value for found in case.iterchildren(Properties) for p in found}  # type: ignore[attr-defined]


@pytest.mark.parametrize("family", ["xunit1", "xunit2"])
@pytest.mark.parametrize("mode", [[], ["-n", "2"]], ids=["serial", "xdist"])
def test_the_gate_item_of_a_quarantined_case_carries_its_quarantine_in_junit(
    pytester: pytest.Pytester, mode: list[str], family: str
) -> None:
    pytester.makepyfile(bench_q=BENCH)
    pytester.path.joinpath("q.toml").write_text(ENTRY.format(until="2999-12-31"), encoding="utf-8")
    result = session(pytester, *mode, "--junitxml=j.xml", "-o", f"junit_family={family}")
    assert result.ret == 0, result.stdout.str()
    suite = next(iter(JUnitXml.fromfile(str(pytester.path / "j.xml"))))
    gates = {case.classname.rsplit(".", 1)[-1]: properties(case) for case in suite if case.name == "gate"}
    assert set(gates) == {"bench_bad", "bench_good"}
    bad, good = gates["bench_bad"], gates["bench_good"]
    assert bad["probability_quarantine"] == "probability quarantine (alice@example.org, until 2999-12-31: PROJ-123)"
    assert bad["probability_decision"] == "fail"  # the gate's own properties beside it
    assert "probability_quarantine" not in good
    runs = [properties(case) for case in suite if case.name != "gate"]
    assert len(runs) == 20 and not any("probability_quarantine" in run for run in runs)  # the gate item's only
    assert sum(list(properties(case)).count("probability_quarantine") for case in suite) == 1  # once


@pytest.mark.parametrize("mode", [[], ["-n", "2"]], ids=["serial", "xdist"])
def test_a_quoted_iso_date_is_that_date(pytester: pytest.Pytester, mode: list[str]) -> None:
    pytester.makepyfile(bench_q=BENCH)
    pytester.path.joinpath("q.toml").write_text(ENTRY.format(until='"2999-12-31"'), encoding="utf-8")
    result = session(pytester, *mode, "--prob-json=r.json", "-rx")
    assert result.ret == 0, result.stdout.str()
    result.stdout.fnmatch_lines(
        ["XFAIL bench_q.py::bench_bad::gate - probability quarantine (alice@example.org, until 2999-12-31: PROJ-123)*"]
    )
    report = json.loads((pytester.path / "r.json").read_text(encoding="utf-8"))
    assert report["quarantine"]["entries"][0]["until"] == "2999-12-31"
    # a quoted date that has passed is as expired as a TOML one: the case gates again, with the warning
    pytester.path.joinpath("q.toml").write_text(ENTRY.format(until='"2001-01-01"'), encoding="utf-8")
    expired = session(pytester, *mode)
    assert expired.ret == 1
    expired.stdout.fnmatch_lines(
        [
            "*ProbabilityQuarantineWarning*entry 1 ('bench_q.py::bench_bad', owner alice@example.org) ended on 2001-01-01*"
        ]
    )


@pytest.mark.parametrize(
    "until, words",
    [
        ('"soon"', "until must be a date (until = 2026-12-31, or \"2026-12-31\"), got 'soon'"),
        ('"2026-02-30"', "until '2026-02-30' is not a date: day is out of range for month"),
        ('"2026-12-31T12:00:00"', "until must be a date*got '2026-12-31T12:00:00'"),
        ('"20261231"', "until must be a date*got '20261231'"),  # Python 3.11's fromisoformat would read it
        ("2026-12-31T12:00:00", "until must be a date*got datetime.datetime(2026, 12, 31, 12, 0)"),
    ],
    ids=["text", "no-such-day", "date-time-text", "basic-form", "toml-date-time"],
)
def test_anything_else_is_still_a_usage_error_naming_the_entry(
    pytester: pytest.Pytester, until: str, words: str
) -> None:
    pytester.makepyfile(bench_q=BENCH)
    pytester.path.joinpath("q.toml").write_text(ENTRY.format(until=until), encoding="utf-8")
    result = session(pytester)
    assert result.ret == 4
    result.stderr.fnmatch_lines([f"*q.toml: entry 1 ('bench_q.py::bench_bad'): {words}*"])
