"""End to end: collection of benchmark files, fixtures, module setup, generator and coroutine benchmarks.

Every test runs a real pytest session with ``pytester`` and asserts real node
ids, outcomes and table lines. In-process unless process state matters. Case
and run ids are in test_case_ids.py.
"""

from __future__ import annotations

import os
import re
from collections import Counter

import pytest
from printed import labels, node_ids, table
from sessions import report as read_json


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
