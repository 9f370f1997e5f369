"""End to end: collection of benchmark files, case and run ids, fixtures, module setup.

Every test runs a real pytest session with ``pytester`` and asserts real node
ids, outcomes and table lines. In-process unless process state matters.
"""

from __future__ import annotations

import json
import os
import re
from collections import Counter

import pytest
from printed import labels, node_ids, table


def read_json(pytester: pytest.Pytester, name: str = "report.json") -> dict:
    return json.loads((pytester.path / name).read_text(encoding="utf-8"))


def events(pytester: pytest.Pytester) -> list[list[str]]:
    path = pytester.path / "events.log"
    if not path.exists():
        return []
    return [line.split(" ") for line in path.read_text(encoding="utf-8").splitlines()]


LOG_HELPER = """
import os
from pathlib import Path

def log(*words):
    with open(Path(__file__).with_name("events.log"), "a", encoding="utf-8") as handle:
        handle.write(" ".join(str(w) for w in (os.getpid(), *words)) + "\\n")
"""


# -- files and benchmarks -------------------------------------------------------


def test_bench_files_collected_alongside_normal_tests(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        bench_model="""
        import pytest

        @pytest.mark.parametrize("prompt", ["terse", "cot"])
        def bench_classify(prompt):
            assert prompt == "terse"

        def bench_always():
            pass

        def test_inside_bench_file():
            pass

        def helper_not_collected():
            raise AssertionError("never called")
        """,
        test_plain="""
        def test_one():
            pass

        def test_two():
            assert False

        def bench_in_test_file():
            raise AssertionError("not a benchmark: test_plain.py is not a benchmark file")
        """,
    )
    collected = pytester.runpytest("--collect-only", "-q")
    assert node_ids(collected) == [
        "bench_model.py::bench_classify::terse",
        "bench_model.py::bench_classify::cot",
        "bench_model.py::bench_always::run1",
        "bench_model.py::test_inside_bench_file",
        "test_plain.py::test_one",
        "test_plain.py::test_two",
    ]

    result = pytester.runpytest("--prob-runs=2", "-rA", "--prob-json=report.json")
    result.assert_outcomes(passed=6, failed=3)
    result.stdout.fnmatch_lines(
        [
            "PASSED test_plain.py::test_one",
            "FAILED test_plain.py::test_two*",
        ]
    )
    assert table(result) == [
        "classify::terse 2/2",
        "classify::cot 0/2 FAIL",
        "always 2/2",
    ]
    result.stdout.fnmatch_lines(["  Overall: 4/6 passed (67%)"])
    report = read_json(pytester)
    assert [row["case"] for row in report["rows"]] == ["classify::terse", "classify::cot", "always"]
    assert report["totals"]["count"] == 6
    assert all("test_" not in record["nodeid"] for record in report["records"])


def test_only_session_with_normal_tests_prints_no_table(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_plain="def test_one():\n    pass\n")
    result = pytester.runpytest()
    result.assert_outcomes(passed=1)
    assert not any(re.fullmatch(r"=+ probability =+", line) for line in result.outlines)


def test_imported_and_non_function_bench_names_are_not_benchmarks(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        helpers="""
        def bench_helper():
            raise AssertionError("imported, must not run")

        class BenchImported:
            def bench_method(self):
                raise AssertionError("imported class, must not run")
        """,
        bench_file="""
        from helpers import bench_helper, BenchImported
        import helpers

        bench_alias = helpers.bench_helper
        bench_data = [1, 2, 3]
        bench_lambda_like = len

        def bench_hidden():
            raise AssertionError("__test__ = False")
        bench_hidden.__test__ = False

        class BenchNotCollected:
            __test__ = False
            def bench_m(self):
                raise AssertionError("__test__ = False")

        def bench_own():
            pass
        """,
    )
    result = pytester.runpytest("--collect-only", "-q")
    assert node_ids(result) == ["bench_file.py::bench_own::run1"]
    result = pytester.runpytest()
    result.assert_outcomes(passed=1)
    assert labels(result) == ["own"]


def test_bench_class_methods_fresh_instance_per_run(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        bench_cls="""
        import pytest

        INSTANCES = []

        class BenchTriage:
            def setup_method(self, method):
                assert method.__name__ in ("bench_route", "bench_plain", "bench_static", "test_normal")
                self.ready = True
                self.used = False

            def teardown_method(self, method):
                self.ready = False

            @pytest.mark.parametrize("text", ["refund", "spam"])
            def bench_route(self, text):
                assert self.ready
                assert not self.used, "instance reused between runs"
                self.used = True
                INSTANCES.append(id(self))

            def bench_plain(self):
                assert self.ready

            @staticmethod
            def bench_static():
                pass

            def helper(self):
                raise AssertionError("not a benchmark")

            def test_normal(self):
                assert self.ready

        class NotBench:
            def bench_x(self):
                raise AssertionError("not a Bench* class")

        def test_instances_distinct():
            assert len(INSTANCES) == 6
        """
    )
    collected = pytester.runpytest("--collect-only", "-q", "--prob-runs=3")
    assert node_ids(collected) == [
        *(f"bench_cls.py::BenchTriage::bench_route::{case}[run{n}]" for case in ("refund", "spam") for n in (1, 2, 3)),
        *(f"bench_cls.py::BenchTriage::bench_plain::run{n}" for n in (1, 2, 3)),
        *(f"bench_cls.py::BenchTriage::bench_static::run{n}" for n in (1, 2, 3)),
        "bench_cls.py::BenchTriage::test_normal",
        "bench_cls.py::test_instances_distinct",
    ]
    result = pytester.runpytest("--prob-runs=3")
    result.assert_outcomes(passed=14)
    assert table(result) == [
        "BenchTriage.route::refund 3/3",
        "BenchTriage.route::spam 3/3",
        "BenchTriage.plain 3/3",
        "BenchTriage.static 3/3",
    ]


def test_nested_bench_classes_and_class_parametrization(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        bench_nested="""
        import pytest

        @pytest.mark.parametrize("c", ["C1", "C2"])
        class BenchOuter:
            def bench_x(self, c):
                pass

            class BenchInner:  # the outer class's marks apply here too, as in pytest
                def bench_n(self, c):
                    pass

            class NotBench:
                def bench_never(self):
                    raise AssertionError("not a Bench* class")
        """
    )
    result = pytester.runpytest("--collect-only", "-q", "--prob-runs=2")
    assert node_ids(result) == [
        "bench_nested.py::BenchOuter::bench_x::C1[run1]",
        "bench_nested.py::BenchOuter::bench_x::C1[run2]",
        "bench_nested.py::BenchOuter::bench_x::C2[run1]",
        "bench_nested.py::BenchOuter::bench_x::C2[run2]",
        "bench_nested.py::BenchOuter::BenchInner::bench_n::C1[run1]",
        "bench_nested.py::BenchOuter::BenchInner::bench_n::C1[run2]",
        "bench_nested.py::BenchOuter::BenchInner::bench_n::C2[run1]",
        "bench_nested.py::BenchOuter::BenchInner::bench_n::C2[run2]",
    ]
    result = pytester.runpytest("--prob-runs=2")
    result.assert_outcomes(passed=8)
    assert table(result) == [
        "BenchOuter.x::C1 2/2",
        "BenchOuter.x::C2 2/2",
        "BenchOuter.BenchInner.n::C1 2/2",
        "BenchOuter.BenchInner.n::C2 2/2",
    ]


def test_prob_pattern_ini_changes_the_glob(pytester: pytest.Pytester) -> None:
    pytester.makeini("[pytest]\nprob_pattern = eval_*.py check_*.py\n")
    pytester.makepyfile(
        eval_one="def bench_a():\n    pass\n",
        check_two="def bench_b():\n    pass\n",
        bench_three="def bench_c():\n    raise AssertionError('bench_*.py is no longer the pattern')\n",
    )
    result = pytester.runpytest("--collect-only", "-q")
    assert node_ids(result) == ["check_two.py::bench_b::run1", "eval_one.py::bench_a::run1"]
    result = pytester.runpytest()
    result.assert_outcomes(passed=2)
    assert labels(result) == ["b", "a"]


def test_explicit_bench_file_on_command_line_is_collected_once(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        bench_x="""
        import pytest

        @pytest.mark.parametrize("p", [1, 2])
        def bench_p(p):
            pass
        """,
        bench_other="def bench_o():\n    pass\n",
    )
    result = pytester.runpytest("bench_x.py", "--collect-only", "-q", "--prob-runs=2")
    assert node_ids(result) == [f"bench_x.py::bench_p::{p}[run{n}]" for p in (1, 2) for n in (1, 2)]
    result = pytester.runpytest("bench_x.py", "--prob-runs=2")
    result.assert_outcomes(passed=4)
    assert table(result) == ["p::1 2/2", "p::2 2/2"]
    # The file and its folder together: still once. (Whether pytest then also
    # collects the folder's other files differs between pytest 8 and 9.)
    result = pytester.runpytest(".", "bench_x.py", "--collect-only", "-q")
    ids = node_ids(result)
    assert len(ids) == len(set(ids))
    assert [node for node in ids if node.startswith("bench_x.py")] == [
        "bench_x.py::bench_p::1",
        "bench_x.py::bench_p::2",
    ]


def test_bench_file_also_matching_python_files_is_collected_once(pytester: pytest.Pytester) -> None:
    pytester.makeini("[pytest]\npython_files = test_*.py bench_*.py\n")
    pytester.makepyfile(
        bench_x="""
        def bench_a():
            pass

        def test_normal():
            pass
        """,
    )
    result = pytester.runpytest("--collect-only", "-q", "--prob-runs=2")
    assert node_ids(result) == ["bench_x.py::bench_a::run1", "bench_x.py::bench_a::run2", "bench_x.py::test_normal"]
    result = pytester.runpytest("--prob-runs=2")
    result.assert_outcomes(passed=3)
    assert table(result) == ["a 2/2"]


def test_bench_file_in_subfolder_with_conftest(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(**{"benchmarks/bench_deep": "def bench_d(model):\n    assert model == 'm-small'\n"})
    pytester.makeconftest("")
    (pytester.path / "benchmarks" / "conftest.py").write_text(
        "import pytest\n\n@pytest.fixture\ndef model():\n    return 'm-small'\n", encoding="utf-8"
    )
    result = pytester.runpytest("--collect-only", "-q")
    assert node_ids(result) == ["benchmarks/bench_deep.py::bench_d::run1"]
    result = pytester.runpytest("benchmarks", "--prob-runs=2")
    result.assert_outcomes(passed=2)
    assert table(result) == ["d 2/2"]


ASSERTING = "def bench_answer():\n    answer = 'no'\n    assert answer == 'yes'\n"


@pytest.mark.parametrize("xdist", [[], ["-n", "2"]], ids=["serial", "xdist"])
def test_asserts_are_rewritten_in_bench_files_collected_from_a_folder(
    pytester: pytest.Pytester, xdist, monkeypatch: pytest.MonkeyPatch
) -> None:
    """pytest's assertion introspection, as in a test file: in the terminal, the JSON message and the span."""
    from otlp_receiver import flatten_spans

    from pytest_probability.otel import otlp_json

    for name in list(os.environ):
        if name.startswith("OTEL_"):
            monkeypatch.delenv(name)
    pytester.makepyfile(**{"benchmarks/bench_rewrite": ASSERTING})
    result = pytester.runpytest_subprocess(
        "-p", "no:cacheprovider", "benchmarks", "--prob-json=report.json", "--prob-otel-file=otel.jsonl", *xdist
    )
    result.assert_outcomes(failed=1)
    assert "AssertionError: assert 'no' == 'yes'" in result.stdout.str()
    (record,) = read_json(pytester)["records"]
    assert record["message"] == "assert 'no' == 'yes'"
    assert record["error_text"].startswith("assert 'no' == 'yes'\n")
    (span,) = [
        s
        for s in flatten_spans(otlp_json.read_file(pytester.path / "otel.jsonl"))
        if s.name.startswith("probability.run ")
    ]
    assert span.status_message == "fail in call: assert 'no' == 'yes'"
    assert span.attributes["probability.assertion"].startswith("assert 'no' == 'yes'\n")
    ((_, event),) = [e for e in span.events if e[0] == "exception"]
    assert event["exception.message"].startswith("assert 'no' == 'yes'\n")


def test_assert_rewriting_follows_prob_pattern_and_leaves_python_files_alone(pytester: pytest.Pytester) -> None:
    pytester.makeini("[pytest]\nprob_pattern = eval_*.py\n")
    pytester.makepyfile(**{"evals/eval_rewrite": ASSERTING})
    pytester.makeconftest(
        "def pytest_configure(config):\n    config.probe_files = list(config.getini('python_files'))\n"
        "def pytest_report_header(config):\n    return 'python_files=' + ' '.join(config.probe_files)\n"
    )
    result = pytester.runpytest("-p", "no:cacheprovider", "evals")
    result.assert_outcomes(failed=1)
    assert "AssertionError: assert 'no' == 'yes'" in result.stdout.str()
    result.stdout.fnmatch_lines(["python_files=test_*.py *_test.py"])
    # --assert=plain still works: no rewriting, no error
    plain = pytester.runpytest("-p", "no:cacheprovider", "evals", "--assert=plain")
    plain.assert_outcomes(failed=1)
    assert "assert 'no' == 'yes'" not in plain.stdout.str()


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


# -- fixtures -----------------------------------------------------------------


def test_fixtures_of_every_scope(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(logutil=LOG_HELPER)
    pytester.makeconftest(
        """
        import pytest
        from logutil import log

        @pytest.fixture(scope="session")
        def session_fx():
            log("session")
            yield "s"
            log("session-end")

        @pytest.fixture(scope="module")
        def module_fx(request):
            log("module", request.module.__name__)
            return "m"

        @pytest.fixture
        def function_fx(request):
            log("function", request.node.nodeid)
            return []

        @pytest.fixture
        def used():
            log("used")

        @pytest.fixture(autouse=True)
        def auto(request):
            log("autouse", request.node.name)
        """
    )
    pytester.makepyfile(
        bench_one="""
        import os
        import pytest
        from logutil import log

        @pytest.mark.usefixtures("used")
        @pytest.mark.parametrize("p", ["a", "b"])
        def bench_f(p, session_fx, module_fx, function_fx, tmp_path, monkeypatch):
            assert function_fx == [], "function-scoped fixture reused"
            function_fx.append(p)
            assert os.environ.get("PROB_E2E_VAR") is None, "monkeypatch not undone between runs"
            monkeypatch.setenv("PROB_E2E_VAR", "1")
            assert list(tmp_path.iterdir()) == []
            (tmp_path / "out.txt").write_text(p)
            log("tmp", tmp_path)

        class BenchC:
            @pytest.fixture(scope="class")
            def class_fx(self):
                log("class")
                return "c"

            def bench_m(self, class_fx, module_fx, function_fx):
                assert class_fx == "c"
                function_fx.append(1)
        """,
        bench_two="""
        from logutil import log

        def bench_g(module_fx, session_fx):
            assert module_fx == "m"
        """,
    )
    result = pytester.runpytest("--prob-runs=3")
    result.assert_outcomes(passed=12)
    log = events(pytester)
    kinds = Counter(words[1] for words in log)
    assert kinds["session"] == 1 and kinds["session-end"] == 1
    assert sorted(words[2] for words in log if words[1] == "module") == ["bench_one", "bench_two"]
    assert kinds["class"] == 1
    function_runs = [words[2] for words in log if words[1] == "function"]
    assert len(function_runs) == 9 and len(set(function_runs)) == 9
    assert kinds["used"] == 6
    assert kinds["autouse"] == 12
    tmp_paths = [words[2] for words in log if words[1] == "tmp"]
    assert len(tmp_paths) == 6 and len(set(tmp_paths)) == 6
    assert table(result) == ["f::a 3/3", "f::b 3/3", "BenchC.m 3/3", "g 3/3"]


# -- module setup() / teardown() -------------------------------------------------

MODULE_HOOKS = """
import pytest
from logutil import log

def setup():
    log("setup", __name__)

def teardown():
    log("teardown", __name__)

def setup_module(module):
    log("setup_module", __name__)

def teardown_module(module):
    log("teardown_module", __name__)

@pytest.mark.parametrize("p", [1, 2, 3])
def bench_x(p):
    log("run", __name__)

def test_plain():
    log("test", __name__)
"""


def test_module_setup_and_teardown_once_per_file(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(logutil=LOG_HELPER, bench_m1=MODULE_HOOKS, bench_m2=MODULE_HOOKS)
    result = pytester.runpytest("--prob-runs=2")
    result.assert_outcomes(passed=14)
    log = [words[1:] for words in events(pytester)]
    for module in ("bench_m1", "bench_m2"):
        mine = [words[0] for words in log if words[1] == module]
        assert Counter(mine) == {
            "setup": 1,
            "teardown": 1,
            "setup_module": 1,
            "teardown_module": 1,
            "run": 6,
            "test": 1,
        }
        runs = [i for i, kind in enumerate(mine) if kind == "run"]
        assert mine.index("setup") < runs[0]
        assert mine.index("teardown") > runs[-1]
    # teardown() runs after every run of every file (at the session's end)
    kinds = [words[0] for words in log]
    last_run = max(i for i, kind in enumerate(kinds) if kind == "run")
    assert all(i > last_run for i, kind in enumerate(kinds) if kind == "teardown")


def test_module_setup_once_per_worker_under_xdist(pytester: pytest.Pytester) -> None:
    pytest.importorskip("xdist")
    pytester.makepyfile(logutil=LOG_HELPER, bench_m1=MODULE_HOOKS, bench_m2=MODULE_HOOKS)
    result = pytester.runpytest_subprocess("-n", "2", "--prob-runs=4")
    result.assert_outcomes(passed=26)
    log = events(pytester)
    pids = {words[0] for words in log}
    assert len(pids) <= 2
    per_process = Counter((words[0], words[1], words[2]) for words in log)
    for module in ("bench_m1", "bench_m2"):
        assert sum(n for (pid, kind, mod), n in per_process.items() if kind == "run" and mod == module) == 12
        for pid in pids:
            runs_here = per_process[(pid, "run", module)]
            assert per_process[(pid, "setup", module)] == (1 if runs_here else 0)
            assert per_process[(pid, "teardown", module)] == per_process[(pid, "setup", module)]
    assert table(result) == ["x::1 4/4", "x::2 4/4", "x::3 4/4", "x::1 4/4", "x::2 4/4", "x::3 4/4"]


# -- generators and coroutines ----------------------------------------------------


def test_generator_and_coroutine_benchmarks_are_error_runs(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        bench_bad="""
        def bench_gen():
            yield 1

        async def bench_co():
            pass

        def bench_ok():
            pass
        """
    )
    # No async plugin: anyio's comes with the test extras' openai (through httpx), and while it is active the
    # plugin leaves coroutines to it (the detection is issue 21's async work), so it is blocked here.
    result = pytester.runpytest("--prob-runs=2", "--prob-json=report.json", "-p", "no:anyio")
    assert table(result) == ["gen 0/2 ERROR", "co 0/2 ERROR", "ok 2/2"]
    report = read_json(pytester)
    messages = {r["case"]: r["message"] for r in report["records"] if r["outcome"] == "error"}
    assert "bench_gen" in messages["gen"] and "generator" in messages["gen"]
    assert "bench_co" in messages["co"] and "coroutine" in messages["co"] and "async" in messages["co"]
    assert result.ret == pytest.ExitCode.TESTS_FAILED


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
