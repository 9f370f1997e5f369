"""End to end: graded results. record_score(), each case's mean score with its interval, score gates.

Every score depends only on the run number (fixture ``n``), so a case's
scores, interval and verdict are the same whichever worker runs which run;
the interval is checked against ``maths.scores`` on the same values (the maths
itself is checked against scipy in tests/unit/test_scores.py).
"""

from __future__ import annotations

import pytest
from sessions import CONFTEST, report, section
from sessions import session as run

from pytest_probability.maths import scores as maths

XDIST = pytest.mark.parametrize("xdist", [[], ["-n", "2"]], ids=["serial", "xdist"])

#: good: 20 runs scoring 0.90-0.99, PASS against 0.6; poor: 20 runs of 0.10-0.19, FAIL; mixed: alternating 0.2
#: and 0.9, UNDECIDED; two: two names per run; free: scores, no gate.
GRADED = """
import pytest
from pytest_probability import record_score


def good_value(n):
    return 0.90 + (n % 10) / 100


@pytest.mark.probability(runs=20, min_score=0.6)
def bench_good(n):
    record_score(good_value(n), explanation=f"run {n}: correct")


@pytest.mark.probability(runs=20, min_score=0.6)
def bench_poor(n):
    record_score(0.10 + (n % 10) / 100)


@pytest.mark.probability(runs=20, min_score=0.5)
def bench_mixed(n):
    record_score(0.2 if n % 2 else 0.9)


@pytest.mark.probability(runs=10, min_score={"faithfulness": 0.3, "relevance": 0.3})
def bench_two(n):
    record_score(0.8, "faithfulness")
    record_score(0.5 + n / 100, "relevance")


@pytest.mark.probability(runs=6)
def bench_free(n):
    record_score(n / 10)
"""


def rows(data: dict) -> dict:
    return {row["benchmark"]: row for row in data["rows"]}


@XDIST
def test_each_cases_scores_interval_and_gate(pytester: pytest.Pytester, xdist: list[str]) -> None:
    pytester.makeconftest(CONFTEST)
    pytester.makepyfile(bench_graded=GRADED)
    result = run(pytester, *xdist, "--prob-json=report.json", ret=1)
    data = report(pytester)
    by = rows(data)
    values = [0.90 + (n % 10) / 100 for n in range(1, 21)]
    good = by["good"]["scores"]["score"]
    expected = maths.summarize(values, 0.95)
    assert good["n"] == 20 and good["mean"] == pytest.approx(expected.mean) and good["sd"] == pytest.approx(expected.sd)
    assert good["ci"] == {
        "low": pytest.approx(expected.ci.low),
        "high": pytest.approx(expected.ci.high),
        "method": "betting",
        "level": 0.95,
    }
    assert good["min_score"] == 0.6
    assert [by[b]["verdict"] for b in ("good", "poor", "mixed", "two", "free")] == [
        "pass",
        "fail",
        "undecided",
        "pass",
        None,
    ]
    assert set(by["two"]["scores"]) == {"faithfulness", "relevance"}
    assert by["free"]["scores"]["score"]["n"] == 6 and "min_score" not in by["free"]["scores"]["score"]
    assert data["gates"] == {"passed": 2, "failed": 1, "undecided": 1, "skipped": 0}
    # each record carries its scores, in the order recorded, with the grader's explanation
    record = next(r for r in data["records"] if r["nodeid"] == "bench_graded.py::bench_good::run3")
    assert record["scores"] == [
        {"name": "score", "value": pytest.approx(0.93), "threshold": None, "explanation": "run 3: correct"}
    ]
    assert all(len(r["scores"]) == 2 for r in data["records"] if "::bench_two::" in r["nodeid"])
    # the gate items decide the exit status: the poor and the mixed ones fail
    result.stdout.fnmatch_lines(
        [
            "*bench_poor.gate*",
            "gate of poor: FAIL: score 'score' mean 0.145 of 20*: FAIL",
            "*bench_mixed.gate*",
            "gate of mixed: UNDECIDED: *",
        ]
    )
    lines = "\n".join(section(result))
    assert "Scores: mean [95% interval]" in lines  # two names in the session: the block
    assert "good   score" in lines or "good  score" in lines
    assert "faithfulness >= 0.3, relevance >= 0.3" in lines  # the gates section's bars


def test_one_score_name_is_a_column_and_a_session_without_scores_is_unchanged(pytester: pytest.Pytester) -> None:
    pytester.makeconftest(CONFTEST)
    pytester.makepyfile(
        bench_one="""
from pytest_probability import record_score

def bench_graded(n):
    record_score(0.5 + n / 100)

def bench_plain(n):
    pass
"""
    )
    result = run(pytester, "--prob-runs=4", "--prob-json=report.json", ret=0)
    lines = section(result)
    assert any(line.split()[:2] == ["graded", "4/4"] and "score 0.525 [" in line for line in lines), lines
    assert not any("Scores" in line for line in lines)
    pytester.makepyfile(bench_one="def bench_plain(n):\n    pass\n")
    result = run(pytester, "--prob-runs=4", "--prob-json=plain.json", ret=0)
    assert not any("score" in line.lower() for line in section(result))
    data = report(pytester, "plain.json")
    assert [row["scores"] for row in data["rows"]] == [{}]
    assert data["score_aggregates"] == [] and all(r["scores"] == [] for r in data["records"])
    assert "score_range" not in data["stats_config"] and "min_score" not in data["stats_config"]


def test_a_threshold_fails_the_run_below_it_as_an_assert(pytester: pytest.Pytester) -> None:
    pytester.makeconftest(CONFTEST)
    pytester.makepyfile(
        bench_t="""
from pytest_probability import record_score

def bench_thresholded(n):
    record_score(0.3 if n == 2 else 0.8, "judge", threshold=0.5, explanation="too short" if n == 2 else "")
    record_score(0.1, "never reached when the first is below")
"""
    )
    result = run(pytester, "--prob-runs=3", "--prob-json=report.json", "-rf", ret=1)
    result.stdout.fnmatch_lines(["*AssertionError: score 'judge' = 0.3 is below its threshold 0.5*"])
    data = report(pytester)
    outcomes = {r["run"]: (r["outcome"], [s["name"] for s in r["scores"]]) for r in data["records"]}
    assert outcomes == {
        1: ("pass", ["judge", "never reached when the first is below"]),
        2: ("fail", ["judge"]),
        3: ("pass", ["judge", "never reached when the first is below"]),
    }
    judge = data["rows"][0]["scores"]["judge"]
    assert (judge["threshold"], judge["below"], judge["n"]) == (0.5, 1, 3)


@pytest.mark.parametrize(
    ("call", "says"),
    [
        ("record_score(float('nan'))", "score 'score' must be a finite number, got nan"),
        ("record_score(float('inf'), 'judge')", "score 'judge' must be a finite number, got inf"),
        ("record_score('0.5')", "score 'score' must be a number, got '0.5'"),
        ("record_score(True)", "score 'score' must be a number, got True"),
        ("record_score(1.5, 'judge')", "score 'judge' is 1.5, outside its score range [0, 1]"),
        (
            "record_score(0.5, 'judge', threshold=2)",
            "the threshold of score 'judge' is 2, outside its score range [0, 1]",
        ),
        ("record_score(0.5, '')", "name must be 1 to 100 printable characters"),
        ("record_score(0.5, explanation=3)", "the explanation of score 'score' must be text, got int"),
    ],
    ids=["nan", "inf", "text", "bool", "out-of-range", "threshold-out-of-range", "empty-name", "explanation"],
)
def test_a_bad_score_errors_its_run_naming_the_run_and_the_score(
    pytester: pytest.Pytester, call: str, says: str
) -> None:
    pytester.makepyfile(
        bench_bad=f"""
from pytest_probability import record_score

def bench_bad():
    {call}

def bench_fine():
    record_score(0.5)
"""
    )
    result = run(pytester, "--prob-runs=2", "--prob-json=report.json", ret=1)
    data = report(pytester)
    bad = [r for r in data["records"] if "::bench_bad::" in r["nodeid"]]
    assert {r["outcome"] for r in bad} == {"error"}, bad
    assert all(
        says in r["message"] and "record_score() in bench_bad.py::bench_bad::run" in r["message"] for r in bad
    ), bad
    assert rows(data)["fine"]["scores"]["score"]["n"] == 2  # nothing else of the session lost
    assert "Traceback" not in result.stdout.str().split("= probability =")[-1]


def test_the_range_comes_from_the_ini_key_or_the_mark(pytester: pytest.Pytester) -> None:
    pytester.makeini("[pytest]\nprob_score_range = 1,5\n")
    pytester.makeconftest(CONFTEST)
    pytester.makepyfile(
        bench_r="""
import pytest
from pytest_probability import record_score

@pytest.mark.probability(min_score=3)
def bench_stars(n):
    record_score(4 + (n % 2))

@pytest.mark.probability(score_range=(0, 100), min_score=50)
def bench_percent(n):
    record_score(90)
"""
    )
    run(pytester, "--prob-runs=10", "--prob-json=report.json", ret=0)
    data = report(pytester)
    stars = rows(data)["stars"]["scores"]["score"]
    assert stars["ci"]["low"] >= 1 and stars["ci"]["high"] <= 5 and stars["mean"] == 4.5
    expected = maths.summarize([4 + (n % 2) for n in range(1, 11)], 0.95, 1, 5)
    assert stars["ci"]["low"] == pytest.approx(expected.ci.low)
    assert data["stats_config"]["score_range"] == [1.0, 5.0]
    assert [row["verdict"] for row in data["rows"]] == ["pass", "pass"]


@pytest.mark.parametrize(
    ("args", "ini", "says"),
    [
        (["--prob-min-score=judge=x"], "", "--prob-min-score: 'judge=x' must be NAME=BAR"),
        (
            [],
            "prob_min_score = judge=1.5",
            "ini prob_min_score: the bar of 'judge', 1.5, is outside the score range [0, 1]",
        ),
        ([], "prob_score_range = 1", "ini prob_score_range: a score range is two numbers"),
        ([], "prob_score_range = 5,1", "the score range needs finite low < high"),
    ],
    ids=["option", "ini-bar-outside", "range-one-number", "range-reversed"],
)
def test_malformed_score_settings_are_a_usage_error(
    pytester: pytest.Pytester, args: list[str], ini: str, says: str
) -> None:
    if ini:
        pytester.makeini(f"[pytest]\n{ini}\n")
    pytester.makepyfile(bench_x="def bench_x():\n    pass\n")
    result = run(pytester, *args)
    assert result.ret == 4, result.stdout.str() + result.stderr.str()
    assert says in result.stderr.str()


def test_a_bar_outside_the_cases_range_is_a_collection_error(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        bench_x="""
import pytest

@pytest.mark.probability(min_score=7)
def bench_x():
    pass
"""
    )
    result = run(pytester)
    assert result.ret == 2
    result.stdout.fnmatch_lines(["*bar of score 'score', 7, is outside its score range [[]0, 1[]]*"])


@XDIST
def test_the_command_line_and_ini_gate_every_case_and_a_missing_score_is_undecided(
    pytester: pytest.Pytester, xdist: list[str]
) -> None:
    pytester.makeini("[pytest]\nprob_min_score = judge=0.5\n")
    pytester.makeconftest(CONFTEST)
    pytester.makepyfile(
        bench_x="""
from pytest_probability import record_score

def bench_judged(n):
    record_score(0.95, "judge")

def bench_typo(n):
    record_score(0.95, "jugde")
"""
    )
    result = run(pytester, *xdist, "--prob-runs=20", "--prob-json=report.json", "-W", "always", ret=1)
    by = rows(report(pytester))
    assert (by["judged"]["verdict"], by["typo"]["verdict"]) == ("pass", "undecided")
    judge = by["typo"]["scores"]["judge"]
    assert {k: v for k, v in judge.items() if k != "gate"} == {
        "n": 0,
        "mean": None,
        "sd": None,
        "ci": None,
        "min_score": 0.5,
    }
    assert judge["gate"] == {
        "min_score": 0.5,
        "confidence": 0.95,
        "method": "betting",
        "n": 0,
        "mean": None,
        "low": None,
        "high": None,
        "verdict": "undecided",
    }
    warned = [line for line in result.stdout.lines if "never recorded" in line]
    assert len(warned) == 1 and "min_score names score 'judge', which 1 case(s) never recorded: typo" in warned[0]
    # the command line wins over the ini key
    run(pytester, *xdist, "--prob-runs=20", "--prob-min-score=jugde=0.5", "--prob-json=cli.json", ret=1)
    by = rows(report(pytester, "cli.json"))
    assert (by["judged"]["verdict"], by["typo"]["verdict"]) == ("undecided", "pass")


@XDIST
def test_sequential_stopping_stops_a_decided_score_gate(pytester: pytest.Pytester, xdist: list[str]) -> None:
    pytester.makeconftest(CONFTEST)
    pytester.makepyfile(
        bench_s="""
import pytest
from pytest_probability import record_score

@pytest.mark.probability(runs=200, min_score=0.3)
def bench_clear(n):
    record_score(0.97)

@pytest.mark.probability(runs=40, min_score=0.5)
def bench_close(n):
    record_score(0.45 if n % 2 else 0.55)
"""
    )
    run(pytester, *xdist, "--prob-stop=sequential", "--prob-json=report.json", ret=1)
    by = rows(report(pytester))
    clear = by["clear"]
    assert clear["verdict"] == "pass"
    assert clear["stopped"] is not None and clear["stopped"]["cause"] == "decided"
    assert clear["stopped"]["runs_executed"] < 60  # decided long before its 200 runs
    assert "(sequential)" in clear["stopped"]["reason"]
    assert by["close"]["stopped"] is None and by["close"]["verdict"] == "undecided"  # never decided: every run ran


def test_last_failed_reruns_a_failed_score_gates_case_whole(pytester: pytest.Pytester) -> None:
    pytester.makeconftest(CONFTEST)
    pytester.makepyfile(
        bench_x="""
import pytest
from pytest_probability import record_score

@pytest.mark.probability(runs=10, min_score=0.6)
def bench_low(n):
    record_score(0.1)

@pytest.mark.probability(runs=10)
def bench_other(n):
    pass
"""
    )
    result = pytester.runpytest_subprocess(timeout=180)
    assert result.ret == 1
    again = pytester.runpytest_subprocess("--lf", "-q", timeout=180)
    assert again.ret == 1
    again.stdout.fnmatch_lines(["*10 passed*"])  # bench_low's 10 runs again (xfail-free: each passed), its gate failed
    assert "bench_other" not in again.stdout.str()


def test_a_late_score_is_charged_to_its_run(pytester: pytest.Pytester) -> None:
    pytester.makeconftest(CONFTEST)
    pytester.makepyfile(
        bench_late="""
import threading, time
from pytest_probability import record_score

started = []

def bench_late(n):
    if n == 1:
        def later():
            time.sleep(0.3)
            record_score(0.25, "judge")
        thread = threading.Thread(target=later)
        thread.start()
        started.append(thread)
    else:
        started[0].join(5)
"""
    )
    result = run(pytester, "--prob-runs=3", "--prob-json=report.json", "-W", "always", ret=0)
    data = report(pytester)
    scores = {r["run"]: r["scores"] for r in data["records"]}
    assert scores[1] == [{"name": "judge", "value": 0.25, "threshold": None, "explanation": None}]
    assert scores[2] == [] and scores[3] == []
    result.stdout.fnmatch_lines(["*record_score() was called after run bench_late.py::bench_late::run1 had ended*"])


def test_the_merged_shards_have_the_unsharded_sessions_scores(pytester: pytest.Pytester) -> None:
    pytester.makeconftest(CONFTEST)
    pytester.makepyfile(bench_graded=GRADED)
    run(pytester, "--prob-json=whole.json", ret=1)
    for k in (1, 2):
        run(pytester, f"--prob-shard={k}/2", f"--prob-json=s{k}.json", *(["-n", "2"] if k == 2 else []), ret=0)
    import subprocess
    import sys

    merged = subprocess.run(
        [sys.executable, "-m", "pytest_probability", "merge", "s1.json", "s2.json", "-o", "m.json"],
        cwd=pytester.path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert merged.returncode == 1, merged.stdout + merged.stderr
    whole, both = report(pytester, "whole.json"), report(pytester, "m.json")
    assert [r["scores"] for r in both["rows"]] == [r["scores"] for r in whole["rows"]]
    assert [r["verdict"] for r in both["rows"]] == [r["verdict"] for r in whole["rows"]]
    assert both["score_aggregates"] == whole["score_aggregates"]
    assert both["gates"] == whole["gates"]


def test_the_plan_and_collection_say_how_many_runs_a_score_gate_needs(pytester: pytest.Pytester) -> None:
    """--prob-plan's min runs of a score gate is the fewest runs whose interval reaches the bar with every score
    at the top of the range (maths.scores.fewest_runs); a case planned with fewer warns at collection."""
    pytester.makepyfile(
        bench_plan="""
import pytest
from pytest_probability import record_score


@pytest.mark.probability(runs=10, min_score=0.9)
def bench_few():
    record_score(1.0)


@pytest.mark.probability(runs=30, min_rate=0.8, min_score={"judge": 0.7})
def bench_both():
    record_score(1.0, "judge")


@pytest.mark.probability(runs=10, score_range=(1, 5), min_score=5)
def bench_top():
    record_score(5)
"""
    )
    few, judge = maths.fewest_runs(0.9), maths.fewest_runs(0.7)
    assert few == 47 and judge is not None and judge < 17  # min_rate=0.8 needs 17 runs, all passing
    result = run(pytester, "--prob-plan", ret=0)
    result.stdout.fnmatch_lines(
        [
            "*case *runs *min runs *runs for 80% *chance now*",
            f"*few  * 10 * {few} *\u2014 *\u2014 *",
            "*both  * 30 * 17 * *[*][*] * *[*][*] *",
            "*top  * 10 *>100,000 *\u2014 *\u2014 *",
            "*[*][*] *A score gate (min_score) also applies*",
        ]
    )
    result.stdout.fnmatch_lines(
        [
            f"*InfeasibleGateWarning: gate of few cannot pass with 10 runs: min_score score=0.9 at 0.95 confidence "
            f"(betting interval) needs at least {few} runs, even if every score is 1",
            "*InfeasibleGateWarning: gate of top cannot pass with 10 runs: min_score score=5 at 0.95 confidence "
            "(betting interval) is out of reach at any number of runs*",
        ]
    )
    assert "gate of both" not in result.stdout.str()
