"""Which of the plugin's modules a session imports: those of an option only when the option is on.

Each session runs in a subprocess (``sys.modules`` is process state); a
conftest writes the ``pytest_probability`` modules loaded at session end,
per process. Timing is measured in ``benchmarks/import_time.py``, never here.
"""

from __future__ import annotations

import json

import pytest
from sessions import session

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


def written(pytester: pytest.Pytester, role: str) -> list[dict]:
    """The module lists the last session's processes of ``role`` wrote (``main``, ``worker``)."""
    return [json.loads(path.read_text()) for path in sorted(pytester.path.glob(f"modules-{role}-*.json"))]


def loaded(pytester: pytest.Pytester, *args: str, role: str = "main", ret: int = 0) -> list[dict]:
    session(pytester, *args, ret=ret, timeout=120)
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
    assert not [m for m in found["modules"] if m.startswith("features.")], found["modules"]  # no feature is on
    assert "configure" in found["modules"]  # the composition root: control that the list is real
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
    "report.explain",
    "report.readings",
    "report.benchmark_lines",
    "roles.serial",
    "roles.controller",
    "maths.scores",
    "maths.interval",
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


# -- a session pays only for the features it uses (issue 44, item 8) ---------------------------------------

#: Everything of the plugin that a session using no feature imports (benchmarks collected with default
#: options), serially: its start-up. The composition root imports a feature's package only
#: when the feature is on (``configure.FEATURES``); a module added to this list is paid by every session
#: (benchmarks/import_time.py measures what each costs), so a change that needs one says why.
SERIAL_STARTUP = frozenset(
    {
        *("aggregate", "aggregate.benchmarks", "aggregate.cases"),
        *("collect", "collect.benchfiles", "collect.benchmark", "collect.items", "collect.nodeid"),
        *("collect.order", "collect.scratch"),
        *("compat", "compat.junitxml", "compat.otel_sdk", "compat.pytest", "compat.xdist"),
        *("config", "config.marker", "config.options", "config.otel", "config.settings", "config.spec"),
        *("config.values", "configure"),
        *("decide", "decide.analysis", "decide.book", "decide.gates", "decide.results", "decide.settle"),
        *("errors", "files", "groups", "maths", "maths.inputs", "maths.stats", "maths.stopping"),
        *("model", "model.case", "model.outputs", "model.rows", "model.run", "otel", "otel.usage", "plugin"),
        *("protocols", "record", "record.intake", "record.wire"),
        *("report", "report.benchmark_lines", "report.explain", "report.statistics", "report.readings"),
        *("report.terminal", "roles", "roles.interrupts", "roles.role", "roles.serial", "roles.wiring"),
        *("run", "run.announce", "run.context", "run.key", "run.modules", "run.outcome", "run.phases"),
        *("run.recording", "run.report", "session", "text", "vocabulary"),
        # issue 44: a marker may ask for concurrent runs (``collect.eligible`` warns for a benchmark that cannot
        # have them) and a process's figures may arrive (``record.concurrency_link``, ``report.concurrency_facet``: plain
        # classes, the model only with a figure); issue 46: the suite's default name, a settings field
        *("collect.eligible", "config.suite", "record.concurrency_link", "report.concurrency_facet"),
        # issue 44 item 8: the core's start-up classes are plain (``value_classes``: no dataclass code compiled
        # at start-up), and the two modules over their size split (``model.run_state``, ``config.from_pytest``)
        *("config.from_pytest", "model.run_state", "value_classes"),
        # issue 45: a score is a measure as the pass fraction is, so the core's statistics facet
        # (``report.statistics``) reads every summary's scores (``report.scored``, with ``maths.scores``), and
        # the gates of every measure share one interval type (``maths.interval``: ``decide.gates``,
        # ``decide.analysis``). About 12 ms of start-up (python -X importtime), paid by a session that records
        # no score too.
        *("maths.interval", "maths.scores", "report.scored"),
    }
)
#: The xdist controller's: it collects nothing, and opens the decisions channel.
CONTROLLER_STARTUP = (SERIAL_STARTUP - {"collect.benchmark", "collect.eligible"}) | {
    "roles.controller",
    "decide.channel",
}
#: An xdist worker's (every worker pays it): it executes runs and ships their records, and aggregates nothing.
WORKER_STARTUP = frozenset(
    {
        *("collect", "collect.benchfiles", "collect.benchmark", "collect.items", "collect.nodeid"),
        *("collect.order", "collect.scratch"),
        *("compat", "compat.junitxml", "compat.otel_sdk", "compat.pytest", "compat.xdist"),
        *("config", "config.marker", "config.options", "config.otel", "config.settings", "config.spec"),
        *("config.values", "configure", "decide", "decide.channel", "errors", "files", "groups"),
        *("maths", "maths.stats", "maths.stopping", "model", "model.case", "model.run", "otel", "otel.usage"),
        *("plugin", "protocols", "record", "record.intake", "record.wire"),
        *("roles", "roles.interrupts", "roles.role", "roles.wiring", "roles.worker"),
        *("run", "run.announce", "run.context", "run.key", "run.modules", "run.outcome", "run.phases"),
        *("run.recording", "run.report", "session", "text", "vocabulary"),
        *("collect.eligible", "config.suite", "record.concurrency_link"),
        *("config.from_pytest", "model.run_state", "value_classes"),
    }
)


#: Benchmarks with default options (no marker): a session that uses no feature.
DEFAULT_BENCH = """
def bench_one():
    pass


def bench_two():
    pass
"""


def over_budget(modules: list[str], budget: frozenset[str]) -> list[str]:
    return sorted(set(modules) - budget)


@pytest.mark.parametrize("xdist", [[], ["-n", "2"]], ids=["serial", "xdist"])
def test_a_session_that_uses_no_feature_imports_no_more_than_its_start_up(
    session_dir: pytest.Pytester, xdist: list[str]
) -> None:
    session_dir.makepyfile(bench_default=DEFAULT_BENCH)
    (main,) = loaded(session_dir, *xdist, ret=0)
    budget, role = (CONTROLLER_STARTUP, "roles.controller") if xdist else (SERIAL_STARTUP, "roles.serial")
    assert role in main["modules"] and "decide.analysis" in main["modules"]  # the control: the list is real
    assert not over_budget(main["modules"], budget), (
        f"a session that uses no feature now imports {over_budget(main['modules'], budget)} too: every session "
        "pays for them (docs/developer-guide.md, 'Lazy imports')"
    )
    workers = written(session_dir, "worker")
    assert len(workers) == (2 if xdist else 0)
    for worker in workers:
        assert "roles.worker" in worker["modules"] and "collect.benchmark" in worker["modules"]
        assert not over_budget(worker["modules"], WORKER_STARTUP), (
            f"an xdist worker of a session that uses no feature now imports "
            f"{over_budget(worker['modules'], WORKER_STARTUP)} too: every worker pays for them"
        )


#: Benchmarks that wake a feature asleep by a marker keyword (compare=, stop=), and benchmarks of scores, which
#: need none (scores are core: issue 45; ``None``), by a keyword (score_range=) or by a run that records one.
#: Each prints what only the feature (or the core's scores) prints, and exits as it decides.
WAKING = {
    "compare": (
        """
import pytest


@pytest.mark.probability(runs=2, compare="style", margin=0.1)
@pytest.mark.parametrize("q", [f"q{i}" for i in range(10)])
@pytest.mark.parametrize("style", ["short", "long"])
def bench_ab(style, q):
    assert style == "short"
""",
        "compare",
        1,
        [
            "*Comparisons (A/B)*",
            "*ab*[[]style[]] long vs short*FAIL*",
            "FAILED bench_wakes.py::bench_ab[[]compare:long[]]*",
        ],
    ),
    "spend": (
        """
import pytest


@pytest.mark.probability(runs=12, min_rate=0.5, stop="curtail")
def bench_stops():
    assert False
""",
        "spend",
        1,
        ["*Stopped: 1 case(s) decided early (by marker)*"],
    ),
    "scores": (
        """
import pytest

from pytest_probability import record_score


@pytest.mark.probability(runs=3, score_range=(0, 10))
def bench_graded():
    record_score(7)
""",
        None,
        0,
        ["*graded*3/3*score 7*"],
    ),
    "scores recorded": (
        """
from pytest_probability import record_score


def bench_graded():
    record_score(0.5)
""",
        None,
        0,
        ["*graded*1/1*score 0.5*"],
    ),
}


@pytest.mark.parametrize("xdist", [[], ["-n", "2"]], ids=["serial", "xdist"])
@pytest.mark.parametrize("case", list(WAKING))
def test_a_feature_asleep_wakes_where_the_session_needs_it(
    session_dir: pytest.Pytester, case: str, xdist: list[str]
) -> None:
    """compare= and stop= wake their feature at collection (every process that collects) and as the case's
    first record comes in (the aggregating process): the session prints and exits as with the feature on from
    the start. Scores wake nothing: a score gate is a core gate (``decide.settle``), so score_range= and a
    score recorded are shown and decided with no feature imported."""
    source, package, ret, lines = WAKING[case]
    session_dir.makepyfile(bench_wakes=source)
    result = session_dir.runpytest_subprocess("-p", "no:cacheprovider", *xdist, timeout=120)
    assert result.ret == ret, result.stdout.str()
    result.stdout.fnmatch_lines(lines)
    (main,) = written(session_dir, "main")
    if package is None:
        assert not [m for m in main["modules"] if m.startswith("features.")], main["modules"]
        return
    feature = f"features.{package}.feature"
    assert feature in main["modules"]
    for worker in written(session_dir, "worker"):
        # a worker wakes a feature on the marks it collects (stop= decides where records come in: not there)
        assert (feature in worker["modules"]) is (case == "compare"), worker["modules"]


@pytest.mark.parametrize("xdist", [[], ["-n", "2"]], ids=["serial", "xdist"])
def test_a_report_of_every_field_turns_on_the_features_it_shows_where_it_is_written(
    session_dir: pytest.Pytester, xdist: list[str]
) -> None:
    """--prob-json shows every feature's fields (rows[].stopped, comparisons, even empty; rows[].scores are the
    core's): the process that writes it has spend and comparisons on; an xdist worker writes nothing and keeps
    them asleep."""
    session_dir.makepyfile(bench_default=BENCH)
    (main,) = loaded(session_dir, *xdist, "--prob-json=report.json")
    assert {"features.spend.feature", "features.compare.feature"} <= set(main["modules"])
    report = json.loads((session_dir.path / "report.json").read_text())
    assert report["comparisons"] == [] and report["stopping"]["mode"] == "off"
    assert all(row["stopped"] is None and row["scores"] == {} for row in report["rows"])
    for worker in written(session_dir, "worker"):
        assert not [m for m in worker["modules"] if m.startswith("features.")], worker["modules"]
