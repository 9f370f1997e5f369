"""Which of the plugin's modules a session imports: those of an option only when the option is on.

Each session runs in a subprocess (``sys.modules`` is process state); a
conftest writes the ``pytest_probability`` modules loaded at session end,
per process. Timing is measured in ``benchmarks/import_time.py``, never here.
"""

from __future__ import annotations

import json

import pytest

#: Modules of options (baselines and A/B, budgets, retries, the JSON and HTML
#: reports, the history report) and of the export: absent unless their option is on.
OPTION_MODULES = {
    "features.compare.comparisons",
    "features.compare.judging",
    "features.compare.pairs",
    "features.compare.plan",
    "maths.twostats",
    "features.compare.baseline",
    "features.spend.budget",
    "config.retry",
    "run.retries",
    "report.writers",
    "report.json_report",
    "report.html_report",
    "report.history",
    "otel.spans",
    "otel.export_session",
    "otel.signal_guards",
    "otel.sdk_exporters",
    "otel.request_sender",
    "otel.metrics",
    "report.series",
    "config.price_file",
    "otel.usage_spans",
    "run.spanusage",
    "run.attributes",
    "report.unpriced",
    "features.journal.journal_file",
    "features.journal.writer",
    "features.journal.resume",
    "features.journal.facet",
    "features.shards.merge",
    "features.compare.history_folder",
    "features.compare.compare_config",
}

CONFTEST = """
import json, os, sys

import pytest


@pytest.hookimpl(trylast=True)
def pytest_sessionfinish(session):
    role = "worker" if hasattr(session.config, "workerinput") else "main"
    names = sorted(m[len("pytest_probability."):] for m in sys.modules if m.startswith("pytest_probability."))
    heavy = sorted(m for m in sys.modules if m.startswith(("opentelemetry", "grpc", "google.protobuf")))
    with open(f"modules-{role}-{os.getpid()}.json", "w") as handle:
        json.dump({"modules": names, "heavy": heavy, "pytest_asyncio": "pytest_asyncio" in sys.modules}, handle)
"""

BENCH = """
import pytest


@pytest.mark.probability(runs=8, min_rate=0.5)
def bench_marked():
    pass


def bench_plain():
    pass
"""

AB_BENCH = """
import pytest


@pytest.mark.probability(runs=4, compare="style")
@pytest.mark.parametrize("style", ["short", "long"])
def bench_ab(style):
    pass
"""


def loaded(pytester: pytest.Pytester, *args: str, role: str = "main", ret: int = 0) -> list[dict]:
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", *args, timeout=120)
    assert result.ret == ret, result.stdout.str()
    found = [json.loads(path.read_text()) for path in sorted(pytester.path.glob(f"modules-{role}-*.json"))]
    assert found, "the conftest wrote no module list"
    return found


@pytest.fixture
def session_dir(pytester: pytest.Pytester) -> pytest.Pytester:
    pytester.makeconftest(CONFTEST)
    pytester.makepyfile(test_plain="def test_plain():\n    pass\n")
    return pytester


def test_a_session_without_benchmarks_imports_no_option_module(session_dir: pytest.Pytester) -> None:
    (found,) = loaded(session_dir, "test_plain.py")
    assert not OPTION_MODULES & set(found["modules"]), found["modules"]
    assert "features.compare.comparing" in found["modules"]  # the wiring of comparisons: control that the list is real
    assert found["heavy"] == []


@pytest.mark.parametrize("xdist", [[], ["-n", "2"]], ids=["serial", "xdist"])
def test_default_benchmarks_import_no_option_module(session_dir: pytest.Pytester, xdist: list[str]) -> None:
    session_dir.makepyfile(bench_default=BENCH)
    found = loaded(session_dir, *xdist)
    if xdist:
        found += loaded(session_dir, *xdist, role="worker")
    for process in found:
        assert not OPTION_MODULES & set(process["modules"]), process["modules"]
        assert "decide.analysis" in process["modules"] or "collect.benchmark" in process["modules"]  # the control
        assert process["heavy"] == []


def test_the_async_module_is_imported_for_async_benchmarks_and_pytest_asyncio_only_when_active(
    session_dir: pytest.Pytester,
) -> None:
    session_dir.makepyfile(bench_default=BENCH)
    (found,) = loaded(session_dir)
    assert "collect.asyncplugins" not in found["modules"] and "collect.benchmark" in found["modules"]
    session_dir.makepyfile(bench_async="import pytest\n\n@pytest.mark.asyncio\nasync def bench_aio():\n    pass\n")
    # Without pytest-asyncio the benchmark's runs are errors (no plugin ran them): exit status 1.
    for args, asyncio, ret in ((["-p", "no:asyncio"], False, 1), ([], True, 0)):
        for path in session_dir.path.glob("modules-*.json"):
            path.unlink()
        (found,) = loaded(session_dir, *args, ret=ret)
        assert "collect.asyncplugins" in found["modules"]
        assert found["pytest_asyncio"] is asyncio  # pytest-asyncio, an optional plugin: imported by pytest when active


def test_option_modules_are_imported_when_their_option_is_on(session_dir: pytest.Pytester) -> None:
    session_dir.makepyfile(bench_default=BENCH)
    loaded(session_dir, "--prob-json=night1.json")
    for path in session_dir.path.glob("modules-*.json"):
        path.unlink()
    (session_dir.path / "prices.toml").write_text("[m]\ninput = 1\noutput = 2\n")
    (found,) = loaded(
        session_dir,
        "--prob-baseline=night1.json",
        "--prob-html=report.html",
        "--prob-max-cost=100",
        "--prob-retry=1",
        "--prob-retry-on=ValueError",
        "--prob-prices=prices.toml",
        ret=0,  # without --prob-margin the baseline only reports
    )
    assert {
        "features.compare.comparisons",
        "maths.twostats",
        "features.compare.baseline",
        "report.json_report",
        "report.html_report",
        "features.spend.budget",
        "config.retry",
        "config.price_file",
        "report.unpriced",
    } <= set(found["modules"])
    assert found["heavy"] == []


def test_a_compare_marker_alone_starts_the_comparisons(session_dir: pytest.Pytester) -> None:
    session_dir.makepyfile(bench_ab=AB_BENCH)
    result = session_dir.runpytest_subprocess("-p", "no:cacheprovider", "--prob-json=report.json", timeout=120)
    assert result.ret == 0, result.stdout.str()
    result.stdout.fnmatch_lines(["*Comparisons (A/B)*", "*ab*[[]style[]] long vs short*"])
    report = json.loads((session_dir.path / "report.json").read_text())
    assert [c["arm"] for c in report["comparisons"]] == ["long"]
    assert report["baseline"] is None
    (found,) = [json.loads(p.read_text()) for p in session_dir.path.glob("modules-main-*.json")]
    assert {"features.compare.comparisons", "maths.twostats"} <= set(found["modules"])
    assert "features.compare.baseline" not in found["modules"]


#: What only the aggregating process uses (decisions, results, the outputs): an xdist worker executes
#: runs and ships their records, so its start-up does not import them (issue 25, benchmarks/concurrency.py).
AGGREGATING_MODULES = {
    "decide.book",
    "decide.results",
    "decide.analysis",
    "decide.gates",
    "aggregate.cases",
    "aggregate.benchmarks",
    "maths.inputs",
    "report.statistics",
    "report.scored",
    "features.spend.facet",
    "features.spend.early_stop",
    "features.compare.facet",
    "features.compare.comparison_readings",
    "report.explain",
    "report.readings",
    "report.benchmark_lines",
    "roles.serial",
    "roles.controller",
    "maths.scores",
    "maths.interval",
    "measures.measure",
}


def test_an_xdist_worker_imports_none_of_the_aggregating_modules(session_dir: pytest.Pytester) -> None:
    session_dir.makepyfile(bench_default=BENCH)
    workers = loaded(session_dir, "-n", "2", role="worker")
    (controller,) = [json.loads(path.read_text()) for path in session_dir.path.glob("modules-main-*.json")]
    assert len(workers) == 2
    assert AGGREGATING_MODULES <= set(controller["modules"])  # the control: the list is real
    for worker in workers:
        assert not AGGREGATING_MODULES & set(worker["modules"]), worker["modules"]
        assert "decide.channel" in worker["modules"] and "collect.benchmark" in worker["modules"]
