"""End to end: case and run ids: pytest's composed ids exactly, the run suffix, and one-run cases keeping
their plain id (collection itself is in test_collection.py).

Every test runs a real pytest session with ``pytester`` and asserts real node
ids, outcomes and table lines. In-process unless process state matters.
"""

from __future__ import annotations

import re

import pytest
from printed import labels, node_ids, table
from sessions import report as read_json

# -- ids ------------------------------------------------------------------------

SAME_CASES = """
import enum
import pytest


class Color(enum.Enum):
    RED = 1


class Obj:
    pass


def fn():
    pass


VALUES = [
    pytest.param("my card was charged twice", id="refund"),
    Obj(),
    None,
    1.5,
    True,
    "ü",
    "日本",
    "a b",
    "dup",
    "dup",
    pytest.param("other", id="dup"),
    "",
    Color.RED,
    fn,
    Obj,
    b"\\x00bytes",
    3,
    3,
    "x/y",
    "a\\nb",
    "[br]",
    "a::b",
]


def by_callable(value):
    return f"cb{value}" if isinstance(value, int) else None


def pytest_generate_tests(metafunc):
    if "generated" in metafunc.fixturenames:
        metafunc.parametrize("generated", [{"k": 1}, "gen", "gen"], ids=None)


@pytest.mark.parametrize("prompt", ["terse", "chain_of_thought"])
@pytest.mark.parametrize("text", VALUES)
def test_stacked(text, prompt):
    pass


@pytest.mark.parametrize("prompt", ["terse", "chain_of_thought"])
@pytest.mark.parametrize("text", VALUES)
def bench_stacked(text, prompt):
    pass


@pytest.mark.parametrize("a,b", [(1, 2), (1, 2), (Obj(), "x"), pytest.param(0, 0, id="zero")])
@pytest.mark.parametrize("n", [1, 2, 3], ids=by_callable)
@pytest.mark.parametrize("w", ["p", "q"], ids=["first", "first"])
def test_multi(a, b, n, w, generated):
    pass


@pytest.mark.parametrize("a,b", [(1, 2), (1, 2), (Obj(), "x"), pytest.param(0, 0, id="zero")])
@pytest.mark.parametrize("n", [1, 2, 3], ids=by_callable)
@pytest.mark.parametrize("w", ["p", "q"], ids=["first", "first"])
def bench_multi(a, b, n, w, generated):
    pass
"""


def _case_ids(ids: list[str], prefix: str) -> list[str]:
    return [node[len(prefix) :] for node in ids if node.startswith(prefix)]


@pytest.mark.parametrize("xdist", [[], ["-n", "2"]], ids=["serial", "xdist"])
def test_a_parameter_whose_repr_raises_is_collected_as_plain_pytest_does(pytester: pytest.Pytester, xdist) -> None:
    pytester.makepyfile(
        bench_x="""
        import pytest

        class Opaque:
            def __repr__(self):
                raise ValueError("no repr for you")

        @pytest.mark.parametrize("value", [Opaque(), 3])
        def bench_opaque(value):
            pass

        @pytest.mark.parametrize("value", [Opaque()])
        def test_opaque(value):
            pass
        """
    )
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "--prob-json=report.json", "-v", *xdist)
    result.assert_outcomes(passed=3)
    assert result.ret == pytest.ExitCode.OK
    assert re.search(
        r"bench_x.py::bench_opaque::value0 PASSED|PASSED bench_x.py::bench_opaque::value0 *$", result.stdout.str(), re.M
    )
    rows = read_json(pytester)["rows"]
    assert [row["params"] for row in rows] == [{"value": "<Opaque object: repr() raised ValueError>"}, {"value": "3"}]


def test_case_ids_follow_pytest_exactly(pytester: pytest.Pytester) -> None:
    """The same parametrization on a test_ and a bench_ function gives the same ids."""
    pytester.makepyfile(bench_ids=SAME_CASES)
    result = pytester.runpytest("--collect-only", "-q")
    ids = node_ids(result)
    for name in ("stacked", "multi"):
        test_cases = [node[:-1] for node in _case_ids(ids, f"bench_ids.py::test_{name}[")]
        bench_cases = _case_ids(ids, f"bench_ids.py::bench_{name}::")  # one run: the plain case id
        assert len(test_cases) > 10
        assert bench_cases == test_cases
        assert len(set(bench_cases)) == len(bench_cases), "pytest de-duplicates ids"
    stacked = _case_ids(ids, "bench_ids.py::bench_stacked::")
    # Stacked decorators: ids join the closest decorator's id first; the outermost varies fastest.
    assert stacked[:4] == ["refund-terse", "refund-chain_of_thought", "text1-terse", "text1-chain_of_thought"]
    assert "\\xfc-terse" in stacked and "\\u65e5\\u672c-terse" in stacked
    assert stacked.count("refund-terse") == 1

    # The rows use the same ids, in the same order.
    result = pytester.runpytest("-k", "bench_stacked or bench_multi", "--prob-json=report.json")
    assert result.ret == 0
    report = read_json(pytester)
    assert [row["case_id"] for row in report["rows"]] == [
        *_case_ids(ids, "bench_ids.py::bench_stacked::"),
        *_case_ids(ids, "bench_ids.py::bench_multi::"),
    ]
    assert report["rows"][0]["label"] == "stacked::refund-terse"
    assert table(result)[0] == "stacked::refund-terse 1/1"


def test_every_run_id_is_what_parsing_its_string_gives(pytester: pytest.Pytester) -> None:
    """pytest >= 9.1 compares structured node ids (``--lf``); a run's, built from its benchmark's,
    must equal the parse of its string form, brackets and ``::`` in case ids included."""
    pytester.makeconftest(
        """
        import pytest

        def pytest_collection_finish(session):
            for item in session.items:
                structured = getattr(item, "_id", None)
                if structured is not None:
                    assert structured == type(structured).parse(item.nodeid), (structured, item.nodeid)
                    assert str(structured) == item.nodeid
                # The string is the run's name under its benchmark's id, whichever way the id was built.
                assert item.nodeid == f"{item.parent.nodeid}::{item.name}", (item.nodeid, item.parent.nodeid)
            print("checked", len(session.items))
        """
    )
    pytester.makepyfile(
        bench_odd="""
        import pytest

        @pytest.mark.parametrize("x", ["a[b]", "c::d", "e]", "[f", "plain"])
        def bench_odd(x):
            pass

        def bench_single():
            pass

        class BenchK:
            @pytest.mark.parametrize("y", [1, "z[1]"])
            def bench_m(self, y):
                pass
        """
    )
    result = pytester.runpytest("--prob-runs=2", "-s")
    assert result.ret == 0
    result.stdout.fnmatch_lines(["checked 16"])
    assert labels(result) == [
        "odd::a[b]",
        "odd::c::d",
        "odd::e]",
        "odd::[f",
        "odd::plain",
        "single",
        "BenchK.m::1",
        "BenchK.m::z[1]",
    ]


def test_generate_tests_in_module_and_conftest(pytester: pytest.Pytester) -> None:
    pytester.makeconftest(
        """
        def pytest_generate_tests(metafunc):
            if "model" in metafunc.fixturenames:
                metafunc.parametrize("model", ["m-small", "m-large"])
        """
    )
    pytester.makepyfile(
        bench_gen="""
        import pytest

        def pytest_generate_tests(metafunc):
            if "prompt" in metafunc.fixturenames:
                metafunc.parametrize("prompt", ["terse", "cot"], ids=["T", "C"])

        @pytest.mark.parametrize("text", ["refund"])
        def bench_triage(text, prompt, model):
            assert (prompt, model) != ("cot", "m-large")

        @pytest.mark.parametrize("text", ["refund"])
        def test_triage(text, prompt, model):
            pass

        def bench_only_conftest(model):
            assert model.startswith("m-")
        """
    )
    collected = pytester.runpytest("--collect-only", "-q")
    ids = node_ids(collected)
    assert ids[-2:] == ["bench_gen.py::bench_only_conftest::m-small", "bench_gen.py::bench_only_conftest::m-large"]
    triage = _case_ids(ids, "bench_gen.py::bench_triage::")
    assert triage == [node[:-1] for node in _case_ids(ids, "bench_gen.py::test_triage[")]
    assert len(triage) == 4
    assert {frozenset(case.split("-")) for case in triage} == {
        frozenset(("refund", prompt, *model.split("-"))) for prompt in ("T", "C") for model in ("m-small", "m-large")
    }

    result = pytester.runpytest("--prob-runs=2")
    result.assert_outcomes(passed=14, failed=2)
    rows = table(result)
    assert len(rows) == 6
    failing = [row for row in rows if row.rstrip().endswith("FAIL")]
    assert len(failing) == 1 and "C" in failing[0] and "m-large" in failing[0] and "0/2" in failing[0]


def test_indirect_parametrization(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        bench_ind="""
        import pytest

        SETUPS = []

        @pytest.fixture
        def client(request):
            SETUPS.append(request.param)
            return request.param.upper()

        @pytest.mark.parametrize("client", ["small", "large"], indirect=True)
        @pytest.mark.parametrize("prompt", ["p1"])
        def bench_call(client, prompt):
            assert client in ("SMALL", "LARGE")
            assert client == "SMALL"

        def test_setups():
            assert SETUPS == ["small"] * 3 + ["large"] * 3
        """
    )
    result = pytester.runpytest("--prob-runs=3")
    result.assert_outcomes(passed=4, failed=3)
    assert table(result) == ["call::p1-small 3/3", "call::p1-large 0/3 FAIL"]


def test_one_run_keeps_the_plain_case_id_and_more_runs_get_the_run_suffix(pytester: pytest.Pytester) -> None:
    """As in 0.3.0: a parametrized case with one run keeps pytest's plain id (CI systems key their
    test history by it); an unparametrized benchmark's runs are always run1..runN."""
    pytester.makepyfile(
        bench_x="""
        import pytest

        def bench_always():
            pass

        @pytest.mark.parametrize("p", ["only"])
        def bench_one_case(p):
            pass
        """
    )
    result = pytester.runpytest("--collect-only", "-q")
    assert node_ids(result) == ["bench_x.py::bench_always::run1", "bench_x.py::bench_one_case::only"]
    result = pytester.runpytest("--collect-only", "-q", "--prob-runs=3")
    assert node_ids(result) == [
        "bench_x.py::bench_always::run1",
        "bench_x.py::bench_always::run2",
        "bench_x.py::bench_always::run3",
        "bench_x.py::bench_one_case::only[run1]",
        "bench_x.py::bench_one_case::only[run2]",
        "bench_x.py::bench_one_case::only[run3]",
    ]
    result = pytester.runpytest("-v", "--prob-runs=3", "--prob-json=report.json")
    result.stdout.fnmatch_lines(
        ["bench_x.py::bench_always::run3 PASSED*", "bench_x.py::bench_one_case::only?run1? PASSED*"]
    )
    assert table(result) == ["always 3/3", "one_case::only 3/3"]
    report = read_json(pytester)
    assert [(row["case"], row["case_id"], row["nodeid"]) for row in report["rows"]] == [
        ("always", "", "bench_x.py::bench_always"),
        ("one_case::only", "only", "bench_x.py::bench_one_case::only"),
    ]
    assert [(r["nodeid"], r["run"]) for r in report["records"]][:3] == [
        (f"bench_x.py::bench_always::run{n}", n) for n in (1, 2, 3)
    ]


ONE_RUN = """
import os
import pytest


@pytest.mark.parametrize("c", ["alpha", "beta"])
def bench_one(c):
    assert c != "beta"


def bench_solo():
    pass


@pytest.mark.probability(runs=1)
@pytest.mark.parametrize("c", ["gamma"])
def bench_marked(c):
    pass


@pytest.mark.probability(min_passes=1)
@pytest.mark.parametrize("c", ["g"])
def bench_gated(c):
    pass


@pytest.mark.parametrize("c", ["boom"])
def bench_crash(c):
    if os.environ.get("CRASH") == "1":
        os._exit(3)
"""


def test_one_run_ids_under_the_ini_the_mark_and_the_command_line(pytester: pytest.Pytester) -> None:
    """The rule is the case's own run count: a mark's runs=1 keeps the plain id while the ini gives
    the other cases three runs; --prob-runs beats the mark, as for the run count itself."""
    pytester.makepyfile(bench_ids=ONE_RUN)
    pytester.makeini("[pytest]\nprob_runs = 3\n")
    ids = node_ids(pytester.runpytest("--collect-only", "-q", "-k", "not crash"))
    assert "bench_ids.py::bench_marked::gamma" in ids
    assert [i for i in ids if "bench_one" in i][:2] == [
        "bench_ids.py::bench_one::alpha[run1]",
        "bench_ids.py::bench_one::alpha[run2]",
    ]
    ids = node_ids(pytester.runpytest("--collect-only", "-q", "--prob-runs=2", "-k", "marked"))
    assert ids == ["bench_ids.py::bench_marked::gamma[run1]", "bench_ids.py::bench_marked::gamma[run2]"]


@pytest.mark.parametrize("xdist", [[], ["-n", "2"]], ids=["serial", "xdist"])
def test_one_run_cases_report_gate_and_rerun_by_their_plain_ids(pytester: pytest.Pytester, xdist: list[str]) -> None:
    pytester.makepyfile(bench_ids=ONE_RUN)
    result = pytester.runpytest_subprocess(*xdist, "-k", "not crash", "--prob-json=report.json", "-rf")
    assert result.ret == 1
    result.stdout.fnmatch_lines(["FAILED bench_ids.py::bench_one::beta - *assert 'beta' != 'beta'"])
    report = read_json(pytester)
    records = {(r["nodeid"], r["run"], r["outcome"]) for r in report["records"]}
    assert {
        ("bench_ids.py::bench_one::alpha", 1, "pass"),
        ("bench_ids.py::bench_one::beta", 1, "fail"),
        ("bench_ids.py::bench_gated::g", 1, "pass"),
        ("bench_ids.py::bench_solo::run1", 1, "pass"),
    } <= records
    gate = next(row for row in report["rows"] if row["case"] == "gated::g")
    assert gate["gate"]["verdict"] == "pass" and gate["runs_missing"] == 0  # its one run was expected and came
    rerun = pytester.runpytest_subprocess(*xdist, "--lf", "-k", "not crash", "-q")
    assert rerun.ret == 1
    assert "1 failed" in rerun.stdout.str() and "passed" not in rerun.stdout.str().splitlines()[-1]


def test_a_one_run_case_whose_worker_crashes_gets_an_errored_record(pytester: pytest.Pytester, monkeypatch) -> None:
    pytester.makepyfile(bench_ids=ONE_RUN)
    monkeypatch.setenv("CRASH", "1")
    result = pytester.runpytest_subprocess("-n", "2", "-k", "crash", "--prob-json=report.json")
    assert result.ret == 1
    (record,) = read_json(pytester)["records"]
    assert (record["nodeid"], record["run"], record["outcome"], record["error_type"]) == (
        "bench_ids.py::bench_crash::boom",
        1,
        "error",
        "WorkerCrashed",
    )
